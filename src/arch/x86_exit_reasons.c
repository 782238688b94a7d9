/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_exit_reasons.c - the VMX and SVM exit reason tables (see x86.h).
 *
 * Names as printed by the kernel's kvm_exit tracepoint: VMX_EXIT_REASONS and
 * SVM_EXIT_REASONS of Linux 6.1, plus the reasons later kernels print
 * (TDCALL, MSR_*_IMM, buslock, idle-halt).  Codes the kernel has no name for
 * are printed by it as numbers and are absent here too.
 */
#include <string.h>

#include "arch/x86.h"

const struct ks_x86_exit_reason ks_x86_vmx_exit_reasons[] = {
	{ 0, "EXCEPTION_NMI" },
	{ 1, "EXTERNAL_INTERRUPT" },
	{ 2, "TRIPLE_FAULT" },
	{ 3, "INIT_SIGNAL" },
	{ 4, "SIPI_SIGNAL" },
	{ 7, "INTERRUPT_WINDOW" },
	{ 8, "NMI_WINDOW" },
	{ 9, "TASK_SWITCH" },
	{ 10, "CPUID" },
	{ 12, "HLT" },
	{ 13, "INVD" },
	{ 14, "INVLPG" },
	{ 15, "RDPMC" },
	{ 16, "RDTSC" },
	{ 18, "VMCALL" },
	{ 19, "VMCLEAR" },
	{ 20, "VMLAUNCH" },
	{ 21, "VMPTRLD" },
	{ 22, "VMPTRST" },
	{ 23, "VMREAD" },
	{ 24, "VMRESUME" },
	{ 25, "VMWRITE" },
	{ 26, "VMOFF" },
	{ 27, "VMON" },
	{ 28, "CR_ACCESS" },
	{ 29, "DR_ACCESS" },
	{ 30, "IO_INSTRUCTION" },
	{ 31, "MSR_READ" },
	{ 32, "MSR_WRITE" },
	{ 33, "INVALID_STATE" },
	{ 34, "MSR_LOAD_FAIL" },
	{ 36, "MWAIT_INSTRUCTION" },
	{ 37, "MONITOR_TRAP_FLAG" },
	{ 39, "MONITOR_INSTRUCTION" },
	{ 40, "PAUSE_INSTRUCTION" },
	{ 41, "MCE_DURING_VMENTRY" },
	{ 43, "TPR_BELOW_THRESHOLD" },
	{ 44, "APIC_ACCESS" },
	{ 45, "EOI_INDUCED" },
	{ 46, "GDTR_IDTR" },
	{ 47, "LDTR_TR" },
	{ 48, "EPT_VIOLATION" },
	{ 49, "EPT_MISCONFIG" },
	{ 50, "INVEPT" },
	{ 51, "RDTSCP" },
	{ 52, "PREEMPTION_TIMER" },
	{ 53, "INVVPID" },
	{ 54, "WBINVD" },
	{ 55, "XSETBV" },
	{ 56, "APIC_WRITE" },
	{ 57, "RDRAND" },
	{ 58, "INVPCID" },
	{ 59, "VMFUNC" },
	{ 60, "ENCLS" },
	{ 61, "RDSEED" },
	{ 62, "PML_FULL" },
	{ 63, "XSAVES" },
	{ 64, "XRSTORS" },
	{ 67, "UMWAIT" },
	{ 68, "TPAUSE" },
	{ 74, "BUS_LOCK" },
	{ 75, "NOTIFY" },
	{ 77, "TDCALL" },
	{ 84, "MSR_READ_IMM" },
	{ 85, "MSR_WRITE_IMM" },
};
const size_t ks_x86_vmx_exit_reasons_count =
	sizeof(ks_x86_vmx_exit_reasons) / sizeof(ks_x86_vmx_exit_reasons[0]);

const struct ks_x86_exit_reason ks_x86_svm_exit_reasons[] = {
	{ 0x000, "read_cr0" },
	{ 0x002, "read_cr2" },
	{ 0x003, "read_cr3" },
	{ 0x004, "read_cr4" },
	{ 0x008, "read_cr8" },
	{ 0x010, "write_cr0" },
	{ 0x012, "write_cr2" },
	{ 0x013, "write_cr3" },
	{ 0x014, "write_cr4" },
	{ 0x018, "write_cr8" },
	{ 0x020, "read_dr0" },
	{ 0x021, "read_dr1" },
	{ 0x022, "read_dr2" },
	{ 0x023, "read_dr3" },
	{ 0x024, "read_dr4" },
	{ 0x025, "read_dr5" },
	{ 0x026, "read_dr6" },
	{ 0x027, "read_dr7" },
	{ 0x030, "write_dr0" },
	{ 0x031, "write_dr1" },
	{ 0x032, "write_dr2" },
	{ 0x033, "write_dr3" },
	{ 0x034, "write_dr4" },
	{ 0x035, "write_dr5" },
	{ 0x036, "write_dr6" },
	{ 0x037, "write_dr7" },
	/* SVM_EXIT_EXCP_BASE (0x40) + exception vector */
	{ 0x040 + 0, "DE excp" },
	{ 0x040 + 1, "DB excp" },
	{ 0x040 + 3, "BP excp" },
	{ 0x040 + 4, "OF excp" },
	{ 0x040 + 5, "BR excp" },
	{ 0x040 + 6, "UD excp" },
	{ 0x040 + 7, "NM excp" },
	{ 0x040 + 8, "DF excp" },
	{ 0x040 + 10, "TS excp" },
	{ 0x040 + 11, "NP excp" },
	{ 0x040 + 12, "SS excp" },
	{ 0x040 + 13, "GP excp" },
	{ 0x040 + 14, "PF excp" },
	{ 0x040 + 16, "MF excp" },
	{ 0x040 + 17, "AC excp" },
	{ 0x040 + 18, "MC excp" },
	{ 0x040 + 19, "XF excp" },
	{ 0x060, "interrupt" },
	{ 0x061, "nmi" },
	{ 0x062, "smi" },
	{ 0x063, "init" },
	{ 0x064, "vintr" },
	{ 0x065, "cr0_sel_write" },
	{ 0x066, "read_idtr" },
	{ 0x067, "read_gdtr" },
	{ 0x068, "read_ldtr" },
	{ 0x069, "read_rt" },
	{ 0x06a, "write_idtr" },
	{ 0x06b, "write_gdtr" },
	{ 0x06c, "write_ldtr" },
	{ 0x06d, "write_rt" },
	{ 0x06e, "rdtsc" },
	{ 0x06f, "rdpmc" },
	{ 0x070, "pushf" },
	{ 0x071, "popf" },
	{ 0x072, "cpuid" },
	{ 0x073, "rsm" },
	{ 0x074, "iret" },
	{ 0x075, "swint" },
	{ 0x076, "invd" },
	{ 0x077, "pause" },
	{ 0x078, "hlt" },
	{ 0x079, "invlpg" },
	{ 0x07a, "invlpga" },
	{ 0x07b, "io" },
	{ 0x07c, "msr" },
	{ 0x07d, "task_switch" },
	{ 0x07e, "ferr_freeze" },
	{ 0x07f, "shutdown" },
	{ 0x080, "vmrun" },
	{ 0x081, "hypercall" },
	{ 0x082, "vmload" },
	{ 0x083, "vmsave" },
	{ 0x084, "stgi" },
	{ 0x085, "clgi" },
	{ 0x086, "skinit" },
	{ 0x087, "rdtscp" },
	{ 0x088, "icebp" },
	{ 0x089, "wbinvd" },
	{ 0x08a, "monitor" },
	{ 0x08b, "mwait" },
	{ 0x08d, "xsetbv" },
	{ 0x08f, "write_efer_trap" },
	{ 0x090, "write_cr0_trap" },
	{ 0x094, "write_cr4_trap" },
	{ 0x098, "write_cr8_trap" },
	{ 0x0a2, "invpcid" },
	{ 0x0a5, "buslock" },
	{ 0x0a6, "idle-halt" },
	{ 0x400, "npf" },
	{ 0x401, "avic_incomplete_ipi" },
	{ 0x402, "avic_unaccelerated_access" },
	{ 0x403, "vmgexit" },
	{ 0x80000001, "vmgexit_mmio_read" },
	{ 0x80000002, "vmgexit_mmio_write" },
	{ 0x80000003, "vmgexit_nmi_complete" },
	{ 0x80000004, "vmgexit_ap_hlt_loop" },
	{ 0x80000005, "vmgexit_ap_jump_table" },
	{ 0x80000010, "vmgexit_page_state_change" },
	{ 0x80000011, "vmgexit_guest_request" },
	{ 0x80000012, "vmgexit_ext_guest_request" },
	{ 0x80000013, "vmgexit_ap_creation" },
	{ 0x8000fffd, "vmgexit_hypervisor_feature" },
	/* SVM_EXIT_ERR (-1) as the u32 exit_reason holds it */
	{ 0xffffffff, "invalid_guest_state" },
};
const size_t ks_x86_svm_exit_reasons_count =
	sizeof(ks_x86_svm_exit_reasons) / sizeof(ks_x86_svm_exit_reasons[0]);

static const char *lookup_code(const struct ks_x86_exit_reason *t, size_t n, uint64_t code)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].code == code)
			return t[mid].name;
		if (t[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *ks_x86_exit_name(int isa, uint64_t code)
{
	if (isa == KS_ISA_VMX)
		return lookup_code(ks_x86_vmx_exit_reasons, ks_x86_vmx_exit_reasons_count, code);
	if (isa == KS_ISA_SVM)
		return lookup_code(ks_x86_svm_exit_reasons, ks_x86_svm_exit_reasons_count, code);
	return NULL;
}

static int lookup_name(const struct ks_x86_exit_reason *t, size_t n, const char *name,
		       uint64_t *code)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(t[i].name, name) == 0) {
			*code = t[i].code;
			return 0;
		}
	}
	return -1;
}

/* The names trace-cmd report prints where they differ from the kernel's:
 * the tables of libtraceevent's kvm plugin (plugin_kvm.c, 1.7), whose
 * handler prints kvm_exit and kvm_nested_vmexit_inject.  Learnt from the
 * plugin itself: every code printed through its handler. */
static const struct ks_x86_exit_reason plugin_vmx_names[] = {
	{ 7, "PENDING_INTERRUPT" },
};

static const struct ks_x86_exit_reason plugin_svm_names[] = {
	{ 0x0, "EXIT_READ_CR0" },
	{ 0x3, "EXIT_READ_CR3" },
	{ 0x4, "EXIT_READ_CR4" },
	{ 0x8, "EXIT_READ_CR8" },
	{ 0x10, "EXIT_WRITE_CR0" },
	{ 0x13, "EXIT_WRITE_CR3" },
	{ 0x14, "EXIT_WRITE_CR4" },
	{ 0x18, "EXIT_WRITE_CR8" },
	{ 0x20, "EXIT_READ_DR0" },
	{ 0x21, "EXIT_READ_DR1" },
	{ 0x22, "EXIT_READ_DR2" },
	{ 0x23, "EXIT_READ_DR3" },
	{ 0x24, "EXIT_READ_DR4" },
	{ 0x25, "EXIT_READ_DR5" },
	{ 0x26, "EXIT_READ_DR6" },
	{ 0x27, "EXIT_READ_DR7" },
	{ 0x30, "EXIT_WRITE_DR0" },
	{ 0x31, "EXIT_WRITE_DR1" },
	{ 0x32, "EXIT_WRITE_DR2" },
	{ 0x33, "EXIT_WRITE_DR3" },
	{ 0x34, "EXIT_WRITE_DR4" },
	{ 0x35, "EXIT_WRITE_DR5" },
	{ 0x36, "EXIT_WRITE_DR6" },
	{ 0x37, "EXIT_WRITE_DR7" },
	{ 0x40, "EXIT_EXCP_DE" },
	{ 0x41, "EXIT_EXCP_DB" },
	{ 0x43, "EXIT_EXCP_BP" },
	{ 0x44, "EXIT_EXCP_OF" },
	{ 0x45, "EXIT_EXCP_BR" },
	{ 0x46, "EXIT_EXCP_UD" },
	{ 0x47, "EXIT_EXCP_NM" },
	{ 0x48, "EXIT_EXCP_DF" },
	{ 0x4a, "EXIT_EXCP_TS" },
	{ 0x4b, "EXIT_EXCP_NP" },
	{ 0x4c, "EXIT_EXCP_SS" },
	{ 0x4d, "EXIT_EXCP_GP" },
	{ 0x4e, "EXIT_EXCP_PF" },
	{ 0x50, "EXIT_EXCP_MF" },
	{ 0x51, "EXIT_EXCP_AC" },
	{ 0x52, "EXIT_EXCP_MC" },
	{ 0x53, "EXIT_EXCP_XF" },
	{ 0x60, "EXIT_INTR" },
	{ 0x61, "EXIT_NMI" },
	{ 0x62, "EXIT_SMI" },
	{ 0x63, "EXIT_INIT" },
	{ 0x64, "EXIT_VINTR" },
	{ 0x65, "EXIT_CR0_SEL_WRITE" },
	{ 0x66, "EXIT_IDTR_READ" },
	{ 0x67, "EXIT_GDTR_READ" },
	{ 0x68, "EXIT_LDTR_READ" },
	{ 0x69, "EXIT_TR_READ" },
	{ 0x6a, "EXIT_IDTR_WRITE" },
	{ 0x6b, "EXIT_GDTR_WRITE" },
	{ 0x6c, "EXIT_LDTR_WRITE" },
	{ 0x6d, "EXIT_TR_WRITE" },
	{ 0x6e, "EXIT_RDTSC" },
	{ 0x6f, "EXIT_RDPMC" },
	{ 0x70, "EXIT_PUSHF" },
	{ 0x71, "EXIT_POPF" },
	{ 0x72, "EXIT_CPUID" },
	{ 0x73, "EXIT_RSM" },
	{ 0x74, "EXIT_IRET" },
	{ 0x75, "EXIT_SWINT" },
	{ 0x76, "EXIT_INVD" },
	{ 0x77, "EXIT_PAUSE" },
	{ 0x78, "EXIT_HLT" },
	{ 0x79, "EXIT_INVLPG" },
	{ 0x7a, "EXIT_INVLPGA" },
	{ 0x7b, "EXIT_IOIO" },
	{ 0x7c, "EXIT_MSR" },
	{ 0x7d, "EXIT_TASK_SWITCH" },
	{ 0x7e, "EXIT_FERR_FREEZE" },
	{ 0x7f, "EXIT_SHUTDOWN" },
	{ 0x80, "EXIT_VMRUN" },
	{ 0x81, "EXIT_VMMCALL" },
	{ 0x82, "EXIT_VMLOAD" },
	{ 0x83, "EXIT_VMSAVE" },
	{ 0x84, "EXIT_STGI" },
	{ 0x85, "EXIT_CLGI" },
	{ 0x86, "EXIT_SKINIT" },
	{ 0x87, "EXIT_RDTSCP" },
	{ 0x88, "EXIT_ICEBP" },
	{ 0x89, "EXIT_WBINVD" },
	{ 0x8a, "EXIT_MONITOR" },
	{ 0x8b, "EXIT_MWAIT" },
	{ 0x8c, "EXIT_MWAIT_COND" },
	{ 0x8d, "EXIT_XSETBV" },
	{ 0x400, "EXIT_NPF" },
	{ 0x401, "EXIT_AVIC_INCOMPLETE_IPI" },
	{ 0x402, "EXIT_AVIC_UNACCELERATED_ACCESS" },
};

#define NR(t) (sizeof(t) / sizeof((t)[0]))

int ks_x86_exit_code(const char *name, int *isa, uint64_t *code)
{
	if (lookup_name(ks_x86_vmx_exit_reasons, ks_x86_vmx_exit_reasons_count, name, code) == 0 ||
	    lookup_name(plugin_vmx_names, NR(plugin_vmx_names), name, code) == 0) {
		*isa = KS_ISA_VMX;
		return 0;
	}
	if (lookup_name(ks_x86_svm_exit_reasons, ks_x86_svm_exit_reasons_count, name, code) == 0 ||
	    lookup_name(plugin_svm_names, NR(plugin_svm_names), name, code) == 0) {
		*isa = KS_ISA_SVM;
		return 0;
	}
	return -1;
}
