/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_kvm.c - x86 (Intel VMX, AMD SVM) event classes for kvmscope stat.
 *
 * The begin/end rules are perf's (tools/perf/arch/x86/util/kvm-stat.c):
 *   vmexit: kvm_exit (key exit_reason) -> kvm_entry
 *   mmio:   write: kvm_mmio(type=W) -> kvm_entry; read: kvm_exit -> kvm_mmio(type=R)
 *   ioport: kvm_pio (key port, rw) -> kvm_entry
 *   msr:    kvm_msr (key ecx, write) -> kvm_entry
 * Exit reason names come from the kernel's tables in x86_exit_reasons.c;
 * MSR rows carry the MSR's name (x86_msr.c) on top of perf's "%#x:R|W".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "text_layout.h"
#include "x86.h"
#include "x86_msr.h"

#define KVM_TRACE_MMIO_READ 1
#define KVM_TRACE_MMIO_WRITE 2
#define VMX_EXIT_REASON_MASK 0xffffULL
#define VMX_FAILED_VMENTRY 0x80000000ULL

/* perf 6.1 knows fewer reasons than newer kernels print, and looks the whole
 * exit_reason up (so VMX flag bits make a code unknown). */
static const char *perf61_exit_name(int isa, uint64_t code)
{
	static const uint64_t newer_vmx[] = { 77, 84, 85 };      /* TDCALL, MSR_*_IMM */
	static const uint64_t newer_svm[] = { 0xa5, 0xa6, 0xffffffff }; /* buslock, idle-halt, err */
	const uint64_t *newer = isa == KS_ISA_VMX ? newer_vmx : newer_svm;
	size_t i, n = 3; /* both lists */

	if (isa == KS_ISA_VMX && code > VMX_EXIT_REASON_MASK)
		return NULL;
	for (i = 0; i < n; i++)
		if (newer[i] == code)
			return NULL;
	return ks_x86_exit_name(isa, code);
}

static void exit_reason_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			     bool perf_style, char *buf, size_t len)
{
	const char *name;

	(void)info;
	if (perf_style) {
		name = perf61_exit_name(ctx->isa, key);
		snprintf(buf, len, "%s", name ? name : "UNKNOWN");
		return;
	}
	if (ctx->isa == KS_ISA_VMX && (key & ~VMX_EXIT_REASON_MASK)) {
		name = ks_x86_exit_name(ctx->isa, key & VMX_EXIT_REASON_MASK);
		if (name && (key & ~VMX_EXIT_REASON_MASK) == VMX_FAILED_VMENTRY) {
			snprintf(buf, len, "%s|FAILED_VMENTRY", name);
			return;
		}
		name = NULL;
	} else {
		name = ks_x86_exit_name(ctx->isa, key);
	}
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "UNKNOWN(0x%llx)", (unsigned long long)key);
}

static bool exit_reason_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	return ks_x86_exit_name(ctx->isa, key) != NULL;
}

static void mmio_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			  bool perf_style, char *buf, size_t len)
{
	(void)ctx;
	(void)perf_style;
	snprintf(buf, len, "%#lx:%s", (unsigned long)key, info == KVM_TRACE_MMIO_WRITE ? "W" : "R");
}

static void ioport_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			    bool perf_style, char *buf, size_t len)
{
	(void)ctx;
	(void)perf_style;
	snprintf(buf, len, "%#llx:%s", (unsigned long long)key, info ? "POUT" : "PIN");
}

static void msr_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			 bool perf_style, char *buf, size_t len)
{
	char nbuf[KS_MSR_NAME_MAX];
	const char *name = perf_style ? NULL : ks_x86_msr_name((uint32_t)key, nbuf, sizeof(nbuf));

	(void)ctx;
	if (name)
		snprintf(buf, len, "%#llx:%s %s", (unsigned long long)key, info ? "W" : "R", name);
	else
		snprintf(buf, len, "%#llx:%s", (unsigned long long)key, info ? "W" : "R");
}

/* ---- nested virtualization (--event nested) ----
 * An exit of L0's guest is either L1's own (L1 runs in L0's guest, no
 * nested event follows its kvm_exit) or an exit of L1's guest L2: KVM then
 * traces kvm_nested_vmexit right after kvm_exit (vmx nested_vmx_reflect_vmexit,
 * svm handle_exit while is_guest_mode), and kvm_nested_vmexit_inject when the
 * exit is reflected to L1 (nested_vmx_vmexit, nested_svm_vmexit: an emulated
 * VM exit into L1, also the one an interrupt for L1 causes).  Those two events
 * are child rules: they re-key the pending exit into the level's name table. */
enum { NESTED_L1 = 0, NESTED_L2_L0 = 1, NESTED_L2_L1 = 2 };

static const char *const nested_paths[] = {
	[NESTED_L1] = "L1 %s",
	[NESTED_L2_L0] = "L2 %s in L0",
	[NESTED_L2_L1] = "L2 %s to L1",
};

static void nested_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			    bool perf_style, char *buf, size_t len)
{
	char reason[64];
	int32_t t = ctx->table >= 0 && ctx->table <= NESTED_L2_L1 ? ctx->table : NESTED_L1;

	exit_reason_name(ctx, key, info, false, reason, sizeof(reason));
	(void)perf_style;
	snprintf(buf, len, nested_paths[t], reason);
}

/* ---- confidential guests (--event vmgexit) ----
 * An SEV-ES/SNP guest's state is encrypted: its exits that need the host go
 * through VMGEXIT (SVM_EXIT_VMGEXIT 0x403) with a software exit code in the
 * GHCB, which KVM traces as kvm_vmgexit_enter (exit_reason, info1, info2),
 * or, before a GHCB is registered, the GHCB MSR protocol's request
 * (kvm_vmgexit_msr_protocol_enter, GHCBInfo in the low 12 bits of
 * ghcb_gpa).  Both are child rules re-keying the pending kvm_exit.
 * The software exit codes are SVM_VMGEXIT_* of arch/x86/include/uapi/asm/
 * svm.h; the other GHCB exit codes are regular SVM exit codes (cpuid, msr,
 * io, npf...).  Linux 6.1 has no TDX support, hence no TDVMCALL events. */
enum { VMG_EXIT = 0, VMG_GHCB = 1, VMG_MSR = 2 };

static const struct ks_code_name ghcb_sw_exits[] = {
	{ 0x80000001, "vmgexit_mmio_read" },          /* SVM_VMGEXIT_MMIO_READ */
	{ 0x80000002, "vmgexit_mmio_write" },         /* SVM_VMGEXIT_MMIO_WRITE */
	{ 0x80000003, "vmgexit_nmi_complete" },       /* SVM_VMGEXIT_NMI_COMPLETE */
	{ 0x80000004, "vmgexit_ap_hlt_loop" },        /* SVM_VMGEXIT_AP_HLT_LOOP */
	{ 0x80000005, "vmgexit_ap_jump_table" },      /* SVM_VMGEXIT_AP_JUMP_TABLE */
	{ 0x80000010, "vmgexit_page_state_change" },  /* SVM_VMGEXIT_PSC */
	{ 0x80000011, "vmgexit_guest_request" },      /* SVM_VMGEXIT_GUEST_REQUEST */
	{ 0x80000012, "vmgexit_ext_guest_request" },  /* SVM_VMGEXIT_EXT_GUEST_REQUEST */
	{ 0x80000013, "vmgexit_ap_creation" },        /* SVM_VMGEXIT_AP_CREATION */
	{ 0x8000fffd, "vmgexit_hypervisor_feature" }, /* SVM_VMGEXIT_HV_FEATURES */
	{ 0x8000fffe, "vmgexit_term_request" },       /* SVM_VMGEXIT_TERM_REQUEST */
	{ 0x8000ffff, "vmgexit_unsupported_event" },  /* SVM_VMGEXIT_UNSUPPORTED_EVENT */
};

/* GHCB MSR protocol requests (GHCB_MSR_*_REQ, arch/x86/include/asm/sev-common.h). */
static const struct ks_code_name ghcb_msr_requests[] = {
	{ 0x002, "sev_info_req" },
	{ 0x004, "cpuid_req" },
	{ 0x006, "ap_reset_hold_req" },
	{ 0x012, "reg_gpa_req" },
	{ 0x014, "psc_req" },
	{ 0x080, "hv_ft_req" },
	{ 0x100, "term_req" },
};

#define GHCB_MSR_INFO_MASK 0xfffULL
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void vmgexit_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	if (*table == VMG_MSR)
		*key &= GHCB_MSR_INFO_MASK;
}

static void vmgexit_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			     bool perf_style, char *buf, size_t len)
{
	const char *name;

	switch (ctx->table) {
	case VMG_GHCB:
		name = ks_code_lookup(ghcb_sw_exits, N_OF(ghcb_sw_exits), key);
		if (name) {
			snprintf(buf, len, "%s", name);
			return;
		}
		name = key < 0x80000000ULL ? ks_x86_exit_name(KS_ISA_SVM, key) : NULL;
		if (name)
			snprintf(buf, len, "vmgexit:%s", name);
		else
			snprintf(buf, len, "vmgexit:UNKNOWN(0x%llx)", (unsigned long long)key);
		return;
	case VMG_MSR:
		name = ks_code_lookup(ghcb_msr_requests, N_OF(ghcb_msr_requests), key);
		if (name)
			snprintf(buf, len, "vmgexit_msr:%s", name);
		else
			snprintf(buf, len, "vmgexit_msr:UNKNOWN(0x%llx)", (unsigned long long)key);
		return;
	default: /* the kvm_exit's own reason (VMX or SVM table) */
		exit_reason_name(ctx, key, info, perf_style, buf, len);
	}
}

static const struct ks_event_class x86_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "exit_reason" } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.key_name = exit_reason_name,
		.key_known = exit_reason_known,
		.run_ok = true,
	},
	{
		.name = "mmio", .title = "MMIO Access",
		.begin = { { .system = "kvm", .name = "kvm_exit" },
			   { .system = "kvm", .name = "kvm_mmio", .cond_field = "type",
			     .cond_value = KVM_TRACE_MMIO_WRITE, .key_field = "gpa",
			     .info_field = "type" } },
		.end = { { .system = "kvm", .name = "kvm_entry" },
			 { .system = "kvm", .name = "kvm_mmio", .cond_field = "type",
			   .cond_value = KVM_TRACE_MMIO_READ, .key_field = "gpa",
			   .info_field = "type" } },
		.key_name = mmio_key_name,
	},
	{
		.name = "ioport", .title = "IO Port Access",
		.begin = { { .system = "kvm", .name = "kvm_pio", .key_field = "port",
			     .info_field = "rw" } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.key_name = ioport_key_name,
	},
	{
		.name = "msr", .title = "MSR Access",
		.begin = { { .system = "kvm", .name = "kvm_msr", .key_field = "ecx",
			     .info_field = "write" } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.key_name = msr_key_name,
	},
	{
		.name = "nested", .title = "NESTED-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "exit_reason",
			     .table = NESTED_L1 } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.child = { { .system = "kvm", .name = "kvm_nested_vmexit",
			     .key_field = "exit_reason", .table = NESTED_L2_L0 },
			   { .system = "kvm", .name = "kvm_nested_vmexit_inject",
			     .key_field = "exit_code", .table = NESTED_L2_L1 } },
		.key_name = nested_key_name,
	},
	{
		/* L1's handling of a reflected L2 exit, as L0 sees it: from the
		 * emulated VM exit into L1 (kvm_nested_vmexit_inject) to L1's
		 * next VM entry into L2 (kvm_nested_vmenter), L1's own exits
		 * and L0's work for them included; stat --event nested
		 * prints it beside the nested table */
		.name = "nested-l1", .title = "REFLECTED-EXIT-IN-L1",
		.begin = { { .system = "kvm", .name = "kvm_nested_vmexit_inject",
			     .key_field = "exit_code", .table = NESTED_L2_L1 } },
		.end = { { .system = "kvm", .name = "kvm_nested_vmenter" } },
		.key_name = nested_key_name,
	},
	{
		.name = "vmgexit", .title = "VMGEXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "exit_reason",
			     .table = VMG_EXIT } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.child = { { .system = "kvm", .name = "kvm_vmgexit_enter",
			     .key_field = "exit_reason", .table = VMG_GHCB },
			   { .system = "kvm", .name = "kvm_vmgexit_msr_protocol_enter",
			     .key_field = "ghcb_gpa", .table = VMG_MSR } },
		.compose = vmgexit_compose,
		.key_name = vmgexit_key_name,
		.state_protected = true,
	},
	{ .name = NULL },
};

static bool x86_detect(struct tep_handle *tep)
{
	return ks_arch_event_has_field(tep, "kvm", "kvm_exit", "exit_reason");
}

static const char *const x86_machines[] = { "x86_64", "i386", "i686", "x86", NULL };
/* as ks_x86_isa_from_cpuid() reads them */
static const char *const x86_cpuid_words[] = { "Intel", "AMD", "Hygon", NULL };

/* HLT: EXIT_REASON_HLT 12 (arch/x86/include/uapi/asm/vmx.h), SVM_EXIT_HLT
 * 0x078 (arch/x86/include/uapi/asm/svm.h). */
static bool x86_exit_halts(const struct ks_key_ctx *ctx, uint64_t key)
{
	if (ctx->isa == KS_ISA_SVM)
		return key == 0x078;
	return (key & VMX_EXIT_REASON_MASK) == 12;
}

/* SVM_EXIT_VMGEXIT 0x403 (arch/x86/include/uapi/asm/svm.h): SEV-ES/SNP only. */
static bool x86_exit_protected(const struct ks_key_ctx *ctx, uint64_t key)
{
	return ctx->isa == KS_ISA_SVM && key == 0x403;
}

static bool x86_exit_code(const char *name, int32_t *sel, uint64_t *code)
{
	int isa;

	if (ks_x86_exit_code(name, &isa, code) < 0)
		return false;
	*sel = isa;
	return true;
}

/* ---- event formats (the ftrace text reader's) ----
 * Written from the TRACE_EVENT definitions of Linux 6.1 (arch/x86/kvm/
 * trace.h), x86_64 layout; kvm_exit's print fmt is built from the exit
 * reason tables of x86_exit_reasons.c. */

#define F KS_FORMAT_FIELD

static void print_symbols(FILE *f, const struct ks_x86_exit_reason *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, ", { 0x%llx, \"%s\" }", (unsigned long long)t[i].code, t[i].name);
}

/* kvm_exit (and kvm_nested_vmexit, the same TRACE_EVENT) or, INJECT,
 * kvm_nested_vmexit_inject: an isa-dependent __print_symbolic of the exit
 * code. */
static char *exit_format(bool inject)
{
	const char *c = inject ? "REC->exit_code" : "REC->exit_reason";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (inject)
		fputs(F("__u32 exit_code", 8, 4, 0)
		      F("__u64 exit_info1", 16, 8, 0)
		      F("__u64 exit_info2", 24, 8, 0)
		      F("__u32 exit_int_info", 32, 4, 0)
		      F("__u32 exit_int_info_err", 36, 4, 0)
		      F("__u32 isa", 40, 4, 0)
		      "\nprint fmt: \"reason: %s%s%s ext_inf1: 0x%016llx ext_inf2: 0x%016llx "
		      "ext_int: 0x%08x ext_int_err: 0x%08x\", ", f);
	else
		fputs(F("unsigned int exit_reason", 8, 4, 0)
		      F("unsigned long guest_rip", 16, 8, 0)
		      F("u32 isa", 24, 4, 0)
		      F("u64 info1", 32, 8, 0)
		      F("u64 info2", 40, 8, 0)
		      F("u32 intr_info", 48, 4, 0)
		      F("u32 error_code", 52, 4, 0)
		      F("unsigned int vcpu_id", 56, 4, 0)
		      "\nprint fmt: \"vcpu %u reason %s%s%s rip 0x%lx info1 0x%016llx info2 0x%016llx "
		      "intr_info 0x%08x error_code 0x%08x\", REC->vcpu_id, ", f);
	fprintf(f, "(REC->isa == 1) ? __print_symbolic(%s & 0xffff", c);
	print_symbols(f, ks_x86_vmx_exit_reasons, ks_x86_vmx_exit_reasons_count);
	fprintf(f, ") : __print_symbolic(%s", c);
	print_symbols(f, ks_x86_svm_exit_reasons, ks_x86_svm_exit_reasons_count);
	fprintf(f, "), (REC->isa == 1 && %s & ~0xffff) ? \" \" : \"\", (REC->isa == 1) ? "
		"__print_flags(%s & ~0xffff, \" \", { 0x80000000, \"FAILED_VMENTRY\" }) : \"\", ",
		c, c);
	fputs(inject ? "REC->exit_info1, REC->exit_info2, REC->exit_int_info, "
		       "REC->exit_int_info_err\n" :
		       "REC->guest_rip, REC->info1, REC->info2, REC->intr_info, REC->error_code\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static char *kvm_exit_format(void)
{
	return exit_format(false);
}

static char *kvm_nested_vmexit_inject_format(void)
{
	return exit_format(true);
}

/* kvm_vmgexit_enter and kvm_vmgexit_exit */
#define VMGEXIT_FORMAT \
	F("unsigned int vcpu_id", 8, 4, 0) \
	F("u64 exit_reason", 16, 8, 0) \
	F("u64 info1", 24, 8, 0) \
	F("u64 info2", 32, 8, 0) \
	"\nprint fmt: \"vcpu %u, exit_reason %llx, exit_info1 %llx, exit_info2 %llx\", " \
	"REC->vcpu_id, REC->exit_reason, REC->info1, REC->info2\n"

static const struct ks_event_format x86_formats[] = {
	{ "kvm", "kvm_exit", NULL, kvm_exit_format },
	{ "kvm", "kvm_entry",
	  F("unsigned int vcpu_id", 8, 4, 0)
	  F("unsigned long rip", 16, 8, 0)
	  F("bool immediate_exit", 24, 1, 0)
	  "\nprint fmt: \"vcpu %u, rip 0x%lx%s\", REC->vcpu_id, REC->rip, "
	  "REC->immediate_exit ? \"[immediate exit]\" : \"\"\n", NULL },
	{ "kvm", "kvm_pio",
	  F("unsigned int rw", 8, 4, 0)
	  F("unsigned int port", 12, 4, 0)
	  F("unsigned int size", 16, 4, 0)
	  F("unsigned int count", 20, 4, 0)
	  F("unsigned int val", 24, 4, 0)
	  "\nprint fmt: \"pio_%s at 0x%x size %d count %d val 0x%x %s\", REC->rw ? \"write\" : "
	  "\"read\", REC->port, REC->size, REC->count, REC->val, "
	  "REC->count > 1 ? \"(...)\" : \"\"\n", NULL },
	{ "kvm", "kvm_msr",
	  F("unsigned write", 8, 4, 0)
	  F("u32 ecx", 12, 4, 0)
	  F("u64 data", 16, 8, 0)
	  F("u8 exception", 24, 1, 0)
	  "\nprint fmt: \"msr_%s %x = 0x%llx%s\", REC->write ? \"write\" : \"read\", REC->ecx, "
	  "REC->data, REC->exception ? \" (#GP)\" : \"\"\n", NULL },
	/* nested virtualization (L0's view of an L1 hypervisor's L2) */
	{ "kvm", "kvm_nested_vmexit", NULL, kvm_exit_format },
	{ "kvm", "kvm_nested_vmexit_inject", NULL, kvm_nested_vmexit_inject_format },
	{ "kvm", "kvm_nested_vmenter",
	  F("__u64 rip", 8, 8, 0)
	  F("__u64 vmcb", 16, 8, 0)
	  F("__u64 nested_rip", 24, 8, 0)
	  F("__u32 int_ctl", 32, 4, 0)
	  F("__u32 event_inj", 36, 4, 0)
	  F("bool tdp_enabled", 40, 1, 0)
	  F("__u64 guest_pgd", 48, 8, 0)
	  F("__u32 isa", 56, 4, 0)
	  "\nprint fmt: \"rip: 0x%016llx %s: 0x%016llx nested_rip: 0x%016llx int_ctl: 0x%08x "
	  "event_inj: 0x%08x nested_%s=%s %s: 0x%016llx\", REC->rip, REC->isa == 1 ? \"vmcs\" : "
	  "\"vmcb\", REC->vmcb, REC->nested_rip, REC->int_ctl, REC->event_inj, REC->isa == 1 ? "
	  "\"ept\" : \"npt\", REC->tdp_enabled ? \"y\" : \"n\", !REC->tdp_enabled ? \"guest_cr3\" : "
	  "REC->isa == 1 ? \"nested_eptp\" : \"nested_cr3\", REC->guest_pgd\n", NULL },
	{ "kvm", "kvm_nested_intr_vmexit",
	  F("__u64 rip", 8, 8, 0)
	  "\nprint fmt: \"rip: 0x%016llx\", REC->rip\n", NULL },
	/* SEV-ES/SNP guests' exits */
	{ "kvm", "kvm_vmgexit_enter", VMGEXIT_FORMAT, NULL },
	{ "kvm", "kvm_vmgexit_exit", VMGEXIT_FORMAT, NULL },
	{ "kvm", "kvm_vmgexit_msr_protocol_enter",
	  F("unsigned int vcpu_id", 8, 4, 0)
	  F("u64 ghcb_gpa", 16, 8, 0)
	  "\nprint fmt: \"vcpu %u, ghcb_gpa %016llx\", REC->vcpu_id, REC->ghcb_gpa\n", NULL },
	{ "kvm", "kvm_write_tsc_offset",
	  F("unsigned int vcpu_id", 8, 4, 0)
	  F("__u64 previous_tsc_offset", 16, 8, 0)
	  F("__u64 next_tsc_offset", 24, 8, 0)
	  "\nprint fmt: \"vcpu=%u prev=%llu next=%llu\", REC->vcpu_id, REC->previous_tsc_offset, "
	  "REC->next_tsc_offset\n", NULL },
	{ NULL, NULL, NULL, NULL },
};

#undef F

/* ---- text layouts (the ftrace text reader's) ----
 * How the kernel's text, and trace-cmd's kvm plugin's (which prints
 * kvm_exit without a vCPU and its info as "info %llx %llx"), read back into
 * the fields of x86_formats.  Exit reasons are named by both ISAs' tables
 * (x86_exit_code); an unnamed one is a number, which is SVM's above VMX's
 * basic reasons (below 0x100: VMGEXIT 0x403, NPF 0x400). */

static const struct ks_code_name x86_exit_suffixes[] = {
	{ KS_X86_VMX_FAILED_VMENTRY, " FAILED_VMENTRY" },
};

static const struct ks_text_sel x86_unnamed_exits[] = {
	{ .min = 0x100, .sel = KS_ISA_SVM },
	{ .min = 0, .sel = KS_ISA_VMX },
};

static const struct ks_text_exit x86_text_exit = {
	.suffixes = x86_exit_suffixes,
	.nsuffixes = N_OF(x86_exit_suffixes),
	.unnamed = x86_unnamed_exits,
};

#define EXIT_ROW(f, k, s) \
	{ .field = f, .kind = KS_TEXT_EXIT, .key = k, .stop = s, .exit = &x86_text_exit }
#define SEL_ROW { .field = "isa", .kind = KS_TEXT_EXIT_SEL }
#define OPT_ROW(f, k) { .field = f, .key = k, .flags = KS_TEXT_OPTIONAL }
#define HEX_ROW(f, k) { .field = f, .key = k, .base = 16 }

/* "vcpu %u reason %s rip 0x%lx info1 0x%016llx info2 0x%016llx intr_info
 * 0x%08x error_code 0x%08x"; the plugin's "reason %s rip 0x%lx info %llx
 * %llx" */
static const struct ks_text_field kvm_exit_plugin_text[] = {
	EXIT_ROW("exit_reason", "reason ", " rip "),
	{ .field = "guest_rip", .key = "rip " },
	SEL_ROW,
	HEX_ROW("info1", "info "),
	{ .field = "info2", .base = 16, .flags = KS_TEXT_FOLLOWS },
	OPT_ROW("intr_info", "intr_info "),
	OPT_ROW("error_code", "error_code "),
	{ .field = "vcpu_id", .key = "vcpu ", .base = 10, .flags = KS_TEXT_VCPU_GET },
	{ .field = NULL },
};

static const struct ks_text_field kvm_exit_text[] = {
	EXIT_ROW("exit_reason", "reason ", " rip "),
	{ .field = "guest_rip", .key = "rip " },
	SEL_ROW,
	OPT_ROW("info1", "info1 "),
	OPT_ROW("info2", "info2 "),
	OPT_ROW("intr_info", "intr_info "),
	OPT_ROW("error_code", "error_code "),
	{ .field = "vcpu_id", .key = "vcpu ", .base = 10, .flags = KS_TEXT_VCPU_GET },
	{ .field = NULL },
};

/* "reason: %s ext_inf1: 0x%016llx ext_inf2: 0x%016llx ext_int: 0x%08x
 * ext_int_err: 0x%08x"; the plugin's "reason %s info1 %llx info2 %llx
 * int_info %llx int_info_err %llx" */
static const struct ks_text_field kvm_nested_vmexit_inject_text[] = {
	EXIT_ROW("exit_code", "reason: ", " ext_inf1"),
	HEX_ROW("exit_info1", "ext_inf1: "),
	HEX_ROW("exit_info2", "ext_inf2: "),
	HEX_ROW("exit_int_info", "ext_int: "),
	HEX_ROW("exit_int_info_err", "ext_int_err: "),
	SEL_ROW,
	{ .field = NULL },
};

static const struct ks_text_field kvm_nested_vmexit_inject_plugin_text[] = {
	EXIT_ROW("exit_code", "reason ", " info1 "),
	HEX_ROW("exit_info1", "info1 "),
	HEX_ROW("exit_info2", "info2 "),
	HEX_ROW("exit_int_info", "int_info "),
	HEX_ROW("exit_int_info_err", "int_info_err "),
	SEL_ROW,
	{ .field = NULL },
};

/* "rip: 0x.. vmcs|vmcb: 0x.. nested_rip: 0x.. int_ctl: 0x.. event_inj: 0x..
 * nested_ept|nested_npt=y|n LABEL: 0x.." (the label of the last, which
 * libtraceevent gets wrong, is not read) */
static const char *const yes_words[] = { "n", "y", NULL };
#define VMENTER_TEXT(vmc, tdp, isa) \
	HEX_ROW("rip", "rip: "), \
	HEX_ROW("vmcb", vmc), \
	HEX_ROW("nested_rip", "nested_rip: "), \
	HEX_ROW("int_ctl", "int_ctl: "), \
	HEX_ROW("event_inj", "event_inj: "), \
	{ .field = "tdp_enabled", .kind = KS_TEXT_WORD, .key = tdp, .words = yes_words }, \
	{ .field = "guest_pgd", .key = ":", .base = 16, .flags = KS_TEXT_LAST }, \
	{ .field = "isa", .kind = KS_TEXT_CONST, .value = isa }, \
	{ .field = NULL }

static const struct ks_text_field kvm_nested_vmenter_vmx_text[] = {
	VMENTER_TEXT("vmcs: ", "nested_ept=", KS_ISA_VMX),
};

static const struct ks_text_field kvm_nested_vmenter_svm_text[] = {
	VMENTER_TEXT("vmcb: ", "nested_npt=", KS_ISA_SVM),
};

/* "vcpu 0, rip 0x...[immediate exit]" or the plugin's "vcpu 0 rip 0x..." */
static const struct ks_text_field kvm_entry_text[] = {
	{ .field = "vcpu_id", .key = "vcpu ", .base = 10, .flags = KS_TEXT_VCPU_SET },
	{ .field = "rip", .key = "rip " },
	{ .field = "immediate_exit", .kind = KS_TEXT_FLAG, .key = "[immediate exit]" },
	{ .field = NULL },
};

/* "pio_read|pio_write at 0x%x size %d count %d val 0x%x" */
static const char *const pio_words[] = { "pio_read ", "pio_write ", NULL };
static const struct ks_text_field kvm_pio_text[] = {
	{ .field = "rw", .kind = KS_TEXT_WORD, .words = pio_words },
	{ .field = "port", .key = "at " },
	{ .field = "size", .key = "size ", .base = 10 },
	{ .field = "count", .key = "count ", .base = 10 },
	OPT_ROW("val", "val "),
	{ .field = NULL },
};

/* "msr_write 6e0 = 0x2aa2a8403b1c[ (#GP)]" */
static const char *const msr_words[] = { "msr_read ", "msr_write ", NULL };
static const struct ks_text_field kvm_msr_text[] = {
	{ .field = "write", .kind = KS_TEXT_WORD, .words = msr_words },
	{ .field = "ecx", .base = 16, .flags = KS_TEXT_FOLLOWS },
	{ .field = "data", .key = " = ", .flags = KS_TEXT_FOLLOWS },
	{ .field = "exception", .kind = KS_TEXT_FLAG, .key = "(#GP)" },
	{ .field = NULL },
};

/* "vcpu=%u prev=%llu next=%llu" */
static const struct ks_text_field kvm_write_tsc_offset_text[] = {
	{ .field = "vcpu_id", .key = "vcpu=", .base = 10 },
	{ .field = "previous_tsc_offset", .key = "prev=", .base = 10 },
	{ .field = "next_tsc_offset", .key = "next=", .base = 10 },
	{ .field = NULL },
};

static const struct ks_text_layout x86_text_layouts[] = {
	{ .system = "kvm", .name = "kvm_exit", .when = "info ", .fields = kvm_exit_plugin_text },
	{ .system = "kvm", .name = "kvm_exit", .fields = kvm_exit_text },
	{ .system = "kvm", .name = "kvm_entry", .fields = kvm_entry_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit", .when = "info ",
	  .fields = kvm_exit_plugin_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit", .fields = kvm_exit_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit_inject", .when = "reason: ",
	  .fields = kvm_nested_vmexit_inject_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit_inject",
	  .fields = kvm_nested_vmexit_inject_plugin_text },
	{ .system = "kvm", .name = "kvm_nested_vmenter", .when = "vmcs: ",
	  .fields = kvm_nested_vmenter_vmx_text },
	{ .system = "kvm", .name = "kvm_nested_vmenter", .fields = kvm_nested_vmenter_svm_text },
	{ .system = "kvm", .name = "kvm_pio", .fields = kvm_pio_text },
	{ .system = "kvm", .name = "kvm_msr", .fields = kvm_msr_text },
	{ .system = "kvm", .name = "kvm_write_tsc_offset", .fields = kvm_write_tsc_offset_text },
	{ .name = NULL },
};

#undef EXIT_ROW
#undef SEL_ROW
#undef OPT_ROW
#undef HEX_ROW
#undef VMENTER_TEXT

/* Guest TSC offsets, for the time sync of guest traces. */
static const char *const x86_extra_events[] = { "kvm:kvm_write_tsc_offset", NULL };

const struct ks_arch ks_arch_x86 = {
	.name = "x86",
	.entry_system = "kvm",
	.entry_name = "kvm_entry",
	.entry_vcpu_field = "vcpu_id",
	.exit_vcpu_field = "vcpu_id",
	.classes = x86_classes,
	.perf = {
		.vcpu_field = "vcpu_id",
		.measure = KS_ARCH_MEASURE_HANDLING,
		.decode_len = 20,
		.name_width = 20,
	},
	.isa_name = NULL, /* VMX or SVM, from the CPUID or kvm_exit.isa */
	.machines = x86_machines,
	.cpuid_words = x86_cpuid_words,
	.detect = x86_detect,
	.isa_field = "isa",
	.guest_ip_field = "guest_rip",
	.exit_halts = x86_exit_halts,
	.exit_protected = x86_exit_protected,
	.exit_code = x86_exit_code,
	.tep_kvm_plugin = true,
	.formats = x86_formats,
	.text_layouts = x86_text_layouts,
	.live = {
		.extra_events = x86_extra_events,
		.trace_clock = "x86-tsc",
	},
};

int ks_x86_isa_from_cpuid(const char *cpuid)
{
	if (!cpuid)
		return KS_ISA_UNKNOWN;
	if (strstr(cpuid, "Intel"))
		return KS_ISA_VMX;
	if (strstr(cpuid, "AMD") || strstr(cpuid, "Hygon"))
		return KS_ISA_SVM;
	return KS_ISA_UNKNOWN;
}

const char *ks_x86_isa_name(int isa)
{
	return isa == KS_ISA_VMX ? "VMX" : isa == KS_ISA_SVM ? "SVM" : "unknown";
}
