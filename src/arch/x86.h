/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86.h - x86 KVM exit reasons: VMX (Intel) and SVM (AMD) code <-> name.
 *
 * The names are exactly what the kernel's kvm_exit tracepoint prints through
 * __print_symbolic (VMX_EXIT_REASONS in arch/x86/include/uapi/asm/vmx.h,
 * SVM_EXIT_REASONS in svm.h, plus the reasons newer kernels added), so a
 * name read from ftrace text maps back to the code a binary trace holds.
 *
 *	const char *n = ks_x86_exit_name(KS_ISA_VMX, 12);   -> "HLT"
 *	ks_x86_exit_code("npf", &isa, &code);                  -> isa 2, code 0x400
 *
 * Used by the ftrace text reader and by the exit statistics.
 */
#ifndef KVMSCOPE_ARCH_X86_H
#define KVMSCOPE_ARCH_X86_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h" /* KS_ISA_VMX, KS_ISA_SVM: kvm_exit's isa values */
#include "text_layout.h"

/* VMX exit_reason bit 31: the VM entry failed (printed as a flag). */
#define KS_X86_VMX_FAILED_VMENTRY 0x80000000u
/* VMX: the basic exit reason is the low 16 bits of exit_reason. */
#define KS_X86_VMX_BASIC_MASK 0xffffu

struct ks_x86_exit_reason {
	uint64_t code;
	const char *name;
};

/* The tables, in ascending code order. */
extern const struct ks_x86_exit_reason ks_x86_vmx_exit_reasons[];
extern const size_t ks_x86_vmx_exit_reasons_count;
extern const struct ks_x86_exit_reason ks_x86_svm_exit_reasons[];
extern const size_t ks_x86_svm_exit_reasons_count;

/* Name of CODE for ISA (KS_ISA_VMX, KS_ISA_SVM); NULL if unknown.  The whole value is
 * looked up: mask a VMX exit_reason with KS_X86_VMX_BASIC_MASK first to get
 * the basic reason the kernel prints (flags such as FAILED_VMENTRY make the
 * unmasked value unknown, as in perf). */
const char *ks_x86_exit_name(int isa, uint64_t code);

/* Name -> ISA and code (exact, case-sensitive: VMX names are upper case,
 * SVM names lower case).  Returns 0, or -1 if the name is unknown. */
int ks_x86_exit_code(const char *name, int *isa, uint64_t *code);

/* x86's event formats and their text layouts (x86_text.c), for struct
 * ks_arch's formats and text_layouts. */
extern const struct ks_event_format ks_x86_formats[];
extern const struct ks_text_layout ks_x86_text_layouts[];

#endif
