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
 * The formats of x86's events and how their text reads back, for inputs
 * that carry no formats (ftrace text), are in x86_text.c.
 */
#include <stdio.h>
#include <string.h>

#include "arch.h"
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
	.formats = ks_x86_formats,
	.text_layouts = ks_x86_text_layouts,
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
