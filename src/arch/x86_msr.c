/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_msr.c - names and kinds of x86 MSRs (see x86_msr.h).
 *
 * Numbers are the architectural ones of the Intel SDM vol. 4 / AMD APM vol. 2
 * (as also listed in the kernel's arch/x86/include/asm/msr-index.h and
 * perf_event.h).  Numbered families (PERFEVTSELx, PMCx, LBR FROM/TO...) are
 * ranges with a printf pattern; single MSRs are a sorted table searched with
 * bsearch.  x2APIC MSRs 0x800-0x8ff are named after the xAPIC register at
 * offset (msr - 0x800) << 4, with the kernel's APIC_* register names
 * (0x838 -> "X2APIC_TMICT"), so they read like kvm_apic's output.
 *
 * Used by `kvmscope pmu` (src/analysis/pmu_trace.c) and meant for the MSR
 * rows of `kvmscope stat --event msr`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "arch.h"
#include "x86_msr.h"

struct msr_range {
	uint32_t first, count, step; /* first, first+step, ... (count MSRs) */
	const char *fmt;             /* "IA32_PMC%u": gets the index */
	enum ks_msr_kind kind;
};

/* Families.  Overlaps are resolved by order: first match wins. */
static const struct msr_range ranges[] = {
	{ 0x0c1, 8, 1, "IA32_PMC%u", KS_MSR_PMU_COUNTER },
	{ 0x186, 8, 1, "IA32_PERFEVTSEL%u", KS_MSR_PMU_EVTSEL },
	{ 0x309, 4, 1, "IA32_FIXED_CTR%u", KS_MSR_PMU_FIXED },
	{ 0x4c1, 8, 1, "IA32_A_PMC%u", KS_MSR_PMU_COUNTER },
	{ 0x040, 8, 1, "MSR_LASTBRANCH_%u_FROM_IP", KS_MSR_LBR },
	{ 0x060, 8, 1, "MSR_LASTBRANCH_%u_TO_IP", KS_MSR_LBR },
	{ 0x680, 32, 1, "MSR_LASTBRANCH_%u_FROM_IP", KS_MSR_LBR },
	{ 0x6c0, 32, 1, "MSR_LASTBRANCH_%u_TO_IP", KS_MSR_LBR },
	{ 0xdc0, 32, 1, "MSR_LBR_INFO_%u", KS_MSR_LBR },
	{ 0x1200, 32, 1, "IA32_LBR_%u_INFO", KS_MSR_LBR },
	{ 0x1500, 32, 1, "IA32_LBR_%u_FROM_IP", KS_MSR_LBR },
	{ 0x1600, 32, 1, "IA32_LBR_%u_TO_IP", KS_MSR_LBR },
	{ 0x14c1, 8, 1, "MSR_RELOAD_PMC%u", KS_MSR_PMU_COUNTER },
	{ 0x1309, 4, 1, "MSR_RELOAD_FIXED_CTR%u", KS_MSR_PMU_FIXED },
	{ 0xc0010000, 4, 1, "MSR_K7_EVNTSEL%u", KS_MSR_PMU_EVTSEL },
	{ 0xc0010004, 4, 1, "MSR_K7_PERFCTR%u", KS_MSR_PMU_COUNTER },
	{ 0xc0010200, 6, 2, "AMD_PERF_CTL%u", KS_MSR_PMU_EVTSEL },
	{ 0xc0010201, 6, 2, "AMD_PERF_CTR%u", KS_MSR_PMU_COUNTER },
	{ 0xc0010240, 4, 2, "AMD_NB_PERF_CTL%u", KS_MSR_OTHER },
	{ 0xc0010241, 4, 2, "AMD_NB_PERF_CTR%u", KS_MSR_OTHER },
	{ 0xc0010300, 16, 2, "AMD_SAMP_BR_FROM%u", KS_MSR_LBR },
	{ 0xc0010301, 16, 2, "AMD_SAMP_BR_TO%u", KS_MSR_LBR },
	{ 0x200, 10, 2, "IA32_MTRR_PHYSBASE%u", KS_MSR_OTHER },
	{ 0x201, 10, 2, "IA32_MTRR_PHYSMASK%u", KS_MSR_OTHER },
	{ 0x400, 32, 4, "IA32_MC%u_CTL", KS_MSR_OTHER },
	{ 0x401, 32, 4, "IA32_MC%u_STATUS", KS_MSR_OTHER },
	{ 0x402, 32, 4, "IA32_MC%u_ADDR", KS_MSR_OTHER },
	{ 0x403, 32, 4, "IA32_MC%u_MISC", KS_MSR_OTHER },
	{ 0x280, 32, 1, "IA32_MC%u_CTL2", KS_MSR_OTHER },
};

struct msr_name {
	uint32_t msr;
	const char *name;
	enum ks_msr_kind kind;
};

/* Single MSRs, sorted by number. */
static const struct msr_name singles[] = {
	{ 0x00000010, "IA32_TSC", KS_MSR_OTHER },
	{ 0x00000011, "MSR_KVM_WALL_CLOCK", KS_MSR_OTHER },
	{ 0x00000012, "MSR_KVM_SYSTEM_TIME", KS_MSR_OTHER },
	{ 0x00000017, "IA32_PLATFORM_ID", KS_MSR_OTHER },
	{ 0x0000001b, "IA32_APIC_BASE", KS_MSR_OTHER },
	{ 0x00000034, "MSR_SMI_COUNT", KS_MSR_OTHER },
	{ 0x0000003a, "IA32_FEATURE_CONTROL", KS_MSR_OTHER },
	{ 0x0000003b, "IA32_TSC_ADJUST", KS_MSR_OTHER },
	{ 0x00000048, "IA32_SPEC_CTRL", KS_MSR_OTHER },
	{ 0x00000049, "IA32_PRED_CMD", KS_MSR_OTHER },
	{ 0x00000079, "IA32_BIOS_UPDT_TRIG", KS_MSR_OTHER },
	{ 0x0000008b, "IA32_BIOS_SIGN_ID", KS_MSR_OTHER },
	{ 0x000000ce, "MSR_PLATFORM_INFO", KS_MSR_OTHER },
	{ 0x000000e1, "IA32_UMWAIT_CONTROL", KS_MSR_OTHER },
	{ 0x000000e7, "IA32_MPERF", KS_MSR_OTHER },
	{ 0x000000e8, "IA32_APERF", KS_MSR_OTHER },
	{ 0x000000fe, "IA32_MTRRCAP", KS_MSR_OTHER },
	{ 0x0000010a, "IA32_ARCH_CAPABILITIES", KS_MSR_OTHER },
	{ 0x0000010b, "IA32_FLUSH_CMD", KS_MSR_OTHER },
	{ 0x00000122, "IA32_TSX_CTRL", KS_MSR_OTHER },
	{ 0x00000140, "MSR_MISC_FEATURES_ENABLES", KS_MSR_OTHER },
	{ 0x00000174, "IA32_SYSENTER_CS", KS_MSR_OTHER },
	{ 0x00000175, "IA32_SYSENTER_ESP", KS_MSR_OTHER },
	{ 0x00000176, "IA32_SYSENTER_EIP", KS_MSR_OTHER },
	{ 0x00000179, "IA32_MCG_CAP", KS_MSR_OTHER },
	{ 0x0000017a, "IA32_MCG_STATUS", KS_MSR_OTHER },
	{ 0x0000017b, "IA32_MCG_CTL", KS_MSR_OTHER },
	{ 0x00000198, "IA32_PERF_STATUS", KS_MSR_OTHER },
	{ 0x00000199, "IA32_PERF_CTL", KS_MSR_OTHER },
	{ 0x0000019a, "IA32_CLOCK_MODULATION", KS_MSR_OTHER },
	{ 0x0000019b, "IA32_THERM_INTERRUPT", KS_MSR_OTHER },
	{ 0x0000019c, "IA32_THERM_STATUS", KS_MSR_OTHER },
	{ 0x000001a0, "IA32_MISC_ENABLE", KS_MSR_OTHER },
	{ 0x000001a2, "MSR_TEMPERATURE_TARGET", KS_MSR_OTHER },
	{ 0x000001a4, "MSR_MISC_FEATURE_CONTROL", KS_MSR_OTHER },
	{ 0x000001b0, "IA32_ENERGY_PERF_BIAS", KS_MSR_OTHER },
	{ 0x000001c4, "IA32_XFD", KS_MSR_OTHER },
	{ 0x000001c5, "IA32_XFD_ERR", KS_MSR_OTHER },
	{ 0x000001c8, "MSR_LBR_SELECT", KS_MSR_LBR },
	{ 0x000001c9, "MSR_LBR_TOS", KS_MSR_LBR },
	{ 0x000001d9, "IA32_DEBUGCTL", KS_MSR_LBR },
	{ 0x00000277, "IA32_PAT", KS_MSR_OTHER },
	{ 0x000002ff, "IA32_MTRR_DEF_TYPE", KS_MSR_OTHER },
	{ 0x00000345, "IA32_PERF_CAPABILITIES", KS_MSR_PMU_GLOBAL },
	{ 0x0000038d, "IA32_FIXED_CTR_CTRL", KS_MSR_PMU_GLOBAL },
	{ 0x0000038e, "IA32_PERF_GLOBAL_STATUS", KS_MSR_PMU_GLOBAL },
	{ 0x0000038f, "IA32_PERF_GLOBAL_CTRL", KS_MSR_PMU_GLOBAL },
	{ 0x00000390, "IA32_PERF_GLOBAL_OVF_CTRL", KS_MSR_PMU_GLOBAL },
	{ 0x00000391, "IA32_PERF_GLOBAL_STATUS_SET", KS_MSR_PMU_GLOBAL },
	{ 0x00000392, "IA32_PERF_GLOBAL_INUSE", KS_MSR_PMU_GLOBAL },
	{ 0x000003f1, "IA32_PEBS_ENABLE", KS_MSR_PMU_GLOBAL },
	{ 0x000003f2, "MSR_PEBS_DATA_CFG", KS_MSR_PMU_GLOBAL },
	{ 0x000003f6, "MSR_PEBS_LD_LAT", KS_MSR_PMU_GLOBAL },
	{ 0x000003f7, "MSR_PEBS_FRONTEND", KS_MSR_PMU_GLOBAL },
	{ 0x000004d0, "IA32_MCG_EXT_CTL", KS_MSR_OTHER },
	{ 0x00000600, "IA32_DS_AREA", KS_MSR_PMU_GLOBAL },
	{ 0x000006a0, "IA32_U_CET", KS_MSR_OTHER },
	{ 0x000006a2, "IA32_S_CET", KS_MSR_OTHER },
	{ 0x000006a4, "IA32_PL0_SSP", KS_MSR_OTHER },
	{ 0x000006a5, "IA32_PL1_SSP", KS_MSR_OTHER },
	{ 0x000006a6, "IA32_PL2_SSP", KS_MSR_OTHER },
	{ 0x000006a7, "IA32_PL3_SSP", KS_MSR_OTHER },
	{ 0x000006a8, "IA32_INTERRUPT_SSP_TABLE_ADDR", KS_MSR_OTHER },
	{ 0x000006e0, "IA32_TSC_DEADLINE", KS_MSR_OTHER },
	{ 0x00000d90, "IA32_BNDCFGS", KS_MSR_OTHER },
	{ 0x00000da0, "IA32_XSS", KS_MSR_OTHER },
	{ 0x000014ce, "IA32_LBR_CTL", KS_MSR_LBR },
	{ 0x000014cf, "IA32_LBR_DEPTH", KS_MSR_LBR },
	{ 0x4b564d00, "MSR_KVM_WALL_CLOCK_NEW", KS_MSR_OTHER },
	{ 0x4b564d01, "MSR_KVM_SYSTEM_TIME_NEW", KS_MSR_OTHER },
	{ 0x4b564d02, "MSR_KVM_ASYNC_PF_EN", KS_MSR_OTHER },
	{ 0x4b564d03, "MSR_KVM_STEAL_TIME", KS_MSR_OTHER },
	{ 0x4b564d04, "MSR_KVM_PV_EOI_EN", KS_MSR_OTHER },
	{ 0x4b564d05, "MSR_KVM_POLL_CONTROL", KS_MSR_OTHER },
	{ 0x4b564d06, "MSR_KVM_ASYNC_PF_INT", KS_MSR_OTHER },
	{ 0x4b564d07, "MSR_KVM_ASYNC_PF_ACK", KS_MSR_OTHER },
	{ 0x4b564d08, "MSR_KVM_MIGRATION_CONTROL", KS_MSR_OTHER },
	{ 0xc0000080, "IA32_EFER", KS_MSR_OTHER },
	{ 0xc0000081, "IA32_STAR", KS_MSR_OTHER },
	{ 0xc0000082, "IA32_LSTAR", KS_MSR_OTHER },
	{ 0xc0000083, "IA32_CSTAR", KS_MSR_OTHER },
	{ 0xc0000084, "IA32_FMASK", KS_MSR_OTHER },
	{ 0xc00000e9, "AMD_IRPERF", KS_MSR_OTHER },
	{ 0xc0000100, "IA32_FS_BASE", KS_MSR_OTHER },
	{ 0xc0000101, "IA32_GS_BASE", KS_MSR_OTHER },
	{ 0xc0000102, "IA32_KERNEL_GS_BASE", KS_MSR_OTHER },
	{ 0xc0000103, "IA32_TSC_AUX", KS_MSR_OTHER },
	{ 0xc000010e, "AMD_LBR_SELECT", KS_MSR_LBR },
	{ 0xc000010f, "AMD_DBG_EXTN_CFG", KS_MSR_LBR },
	{ 0xc0000300, "AMD_PERF_CNTR_GLOBAL_STATUS", KS_MSR_PMU_GLOBAL },
	{ 0xc0000301, "AMD_PERF_CNTR_GLOBAL_CTL", KS_MSR_PMU_GLOBAL },
	{ 0xc0000302, "AMD_PERF_CNTR_GLOBAL_STATUS_CLR", KS_MSR_PMU_GLOBAL },
	{ 0xc0010015, "AMD_HWCR", KS_MSR_OTHER },
	{ 0xc0010114, "AMD_VM_CR", KS_MSR_OTHER },
	{ 0xc0010117, "AMD_VM_HSAVE_PA", KS_MSR_OTHER },
	{ 0xc001011f, "AMD_VIRT_SPEC_CTRL", KS_MSR_OTHER },
};

/* xAPIC register names by offset >> 4 (the kernel's apicdef.h names). */
static const char *const x2apic_regs[0x40] = {
	[0x02] = "ID", [0x03] = "LVR", [0x08] = "TASKPRI", [0x09] = "ARBPRI",
	[0x0a] = "PROCPRI", [0x0b] = "EOI", [0x0c] = "RRR", [0x0d] = "LDR",
	[0x0e] = "DFR", [0x0f] = "SPIV", [0x28] = "ESR", [0x2f] = "LVTCMCI",
	[0x30] = "ICR", [0x31] = "ICR2", [0x32] = "LVTT", [0x33] = "LVTTHMR",
	[0x34] = "LVTPC", [0x35] = "LVT0", [0x36] = "LVT1", [0x37] = "LVTERR",
	[0x38] = "TMICT", [0x39] = "TMCCT", [0x3e] = "TDCR", [0x3f] = "SELF_IPI",
};

static int cmp_msr(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, m = ((const struct msr_name *)elem)->msr;

	return k < m ? -1 : k > m;
}

static const struct msr_name *find_single(uint32_t msr)
{
	return bsearch(&msr, singles, sizeof(singles) / sizeof(singles[0]), sizeof(singles[0]),
		       cmp_msr);
}

/* The range holding MSR and the index in it, or NULL. */
static const struct msr_range *find_range(uint32_t msr, uint32_t *index)
{
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct msr_range *r = &ranges[i];
		uint32_t off = msr - r->first;

		if (msr >= r->first && off % r->step == 0 && off / r->step < r->count) {
			*index = off / r->step;
			return r;
		}
	}
	return NULL;
}

static const char *x2apic_name(uint32_t msr, char *buf, size_t len)
{
	uint32_t reg = msr - 0x800;

	if (reg >= 0x10 && reg < 0x28) {
		static const char *const arr[3] = { "ISR", "TMR", "IRR" };

		snprintf(buf, len, "X2APIC_%s%u", arr[(reg - 0x10) / 8], (reg - 0x10) % 8);
		return buf;
	}
	if (reg >= 0x40 || !x2apic_regs[reg])
		return NULL;
	snprintf(buf, len, "X2APIC_%s", x2apic_regs[reg]);
	return buf;
}

const char *ks_x86_msr_name(uint32_t msr, char *buf, size_t len)
{
	const struct msr_name *s = find_single(msr);
	const struct msr_range *r;
	uint32_t index;

	if (s)
		return s->name;
	if (msr >= 0x800 && msr <= 0x8ff)
		return x2apic_name(msr, buf, len);
	r = find_range(msr, &index);
	if (!r)
		return NULL;
	snprintf(buf, len, r->fmt, index);
	return buf;
}

enum ks_msr_kind ks_x86_msr_kind(uint32_t msr)
{
	const struct msr_name *s = find_single(msr);
	const struct msr_range *r;
	uint32_t index;

	if (s)
		return s->kind;
	r = find_range(msr, &index);
	return r ? r->kind : KS_MSR_OTHER;
}

/* The exit reasons of vmx.h and svm.h (arch/x86/include/uapi/asm/). */
#define VMX_RDPMC 15
#define VMX_MSR_READ 31
#define VMX_MSR_WRITE 32
#define SVM_RDPMC 0x6f
#define SVM_MSR 0x7c

enum ks_msr_exit ks_x86_msr_exit(int isa, uint64_t exit_reason)
{
	if (isa == KS_ISA_SVM)
		return exit_reason == SVM_MSR ? KS_MSR_EXIT_ACCESS :
		       exit_reason == SVM_RDPMC ? KS_MSR_EXIT_RDPMC : KS_MSR_EXIT_OTHER;
	exit_reason &= 0xffff; /* the basic reason, without VMX's flags */
	return exit_reason == VMX_MSR_READ || exit_reason == VMX_MSR_WRITE ? KS_MSR_EXIT_ACCESS :
	       exit_reason == VMX_RDPMC ? KS_MSR_EXIT_RDPMC : KS_MSR_EXIT_OTHER;
}
