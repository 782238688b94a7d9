/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_msr.h - names and kinds of x86 model-specific registers, for the MSR
 * rows of `kvmscope stat --event msr` and the vPMU analysis (`kvmscope pmu`).
 *
 *	char buf[KS_MSR_NAME_MAX];
 *	ks_x86_msr_name(0x6e0, buf, sizeof(buf)) -> "IA32_TSC_DEADLINE"
 *	ks_x86_msr_name(0x186, buf, sizeof(buf)) -> "IA32_PERFEVTSEL0"
 *	ks_x86_msr_kind(0x186) -> KS_MSR_PMU_EVTSEL
 */
#ifndef KVMSCOPE_ARCH_X86_MSR_H
#define KVMSCOPE_ARCH_X86_MSR_H

#include <stddef.h>
#include <stdint.h>

enum ks_msr_kind {
	KS_MSR_OTHER = 0,
	KS_MSR_PMU_EVTSEL,      /* IA32_PERFEVTSELx, AMD PERF_CTLx */
	KS_MSR_PMU_COUNTER,     /* IA32_PMCx / A_PMCx, AMD PERF_CTRx */
	KS_MSR_PMU_FIXED,       /* IA32_FIXED_CTRx */
	KS_MSR_PMU_GLOBAL,      /* FIXED_CTR_CTRL, PERF_GLOBAL_CTRL/STATUS/OVF_CTRL... */
	KS_MSR_LBR,             /* DEBUGCTL, LBR_SELECT, LBR_TOS, LBR FROM/TO/INFO */
};

/* The MSR's architectural name (with its index for numbered families,
 * "IA32_PMC3"), or NULL if unknown: a constant string, or BUF (LEN bytes,
 * KS_MSR_NAME_MAX hold every name) where the name is built. */
#define KS_MSR_NAME_MAX 40
const char *ks_x86_msr_name(uint32_t msr, char *buf, size_t len);
enum ks_msr_kind ks_x86_msr_kind(uint32_t msr);

/* What a kvm_exit of ISA (KS_ISA_*; unknown: VMX) and EXIT_REASON (as the
 * event holds it: VMX flags in the high bits) does to the vPMU's MSRs. */
enum ks_msr_exit {
	KS_MSR_EXIT_OTHER = 0,
	KS_MSR_EXIT_ACCESS,     /* RDMSR / WRMSR (VMX 31, 32; SVM 0x7c) */
	KS_MSR_EXIT_RDPMC,      /* RDPMC (VMX 15; SVM 0x6f) */
};
enum ks_msr_exit ks_x86_msr_exit(int isa, uint64_t exit_reason);

#endif
