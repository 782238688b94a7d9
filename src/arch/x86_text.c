/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_text.c - x86's KVM events for inputs that carry no event formats
 * (ftrace text): their formats, written from the TRACE_EVENT definitions
 * of Linux 6.1 (arch/x86/kvm/trace.h), x86_64 layout, with kvm_exit's
 * print fmt built from the exit reason tables of x86_exit_reasons.c; and
 * their text layouts (text_layout.h): how the kernel's lines, and those
 * of trace-cmd's kvm plugin, read back into those formats' fields.
 *
 * The ftrace text reader takes them from struct ks_arch (formats,
 * text_layouts; x86_kvm.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "arch.h"
#include "text_layout.h"
#include "x86.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

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

const struct ks_event_format ks_x86_formats[] = {
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

/* The keys that pick a layout, one string each: the layout's WHEN and
 * the row of that key are then the same, and the reader looks once. */
static const char info_key[] = "info ";
static const char reason_colon_key[] = "reason: ";
static const char vmcs_key[] = "vmcs: ";

#define EXIT_ROW(f, k, s) \
	{ .field = f, .kind = KS_TEXT_EXIT, .key = k, .stop = s, .exit = &x86_text_exit }
#define SEL_ROW { .field = "isa", .kind = KS_TEXT_EXIT_SEL }
#define OPT_ROW(f, k) { .field = f, .key = k, .flags = KS_TEXT_OPTIONAL }
#define HEX_ROW(f, k) { .field = f, .key = k, .base = 16 }
#define NEXT_HEX_ROW(f) { .field = f, .base = 16, .flags = KS_TEXT_FOLLOWS }

/* "vcpu %u reason %s rip 0x%lx info1 0x%016llx info2 0x%016llx intr_info
 * 0x%08x error_code 0x%08x"; the plugin's "reason %s rip 0x%lx info %llx
 * %llx" (INFO1, INFO2: how each text says them) */
#define EXIT_TEXT(info1, info2) \
	EXIT_ROW("exit_reason", "reason ", " rip "), \
	{ .field = "guest_rip", .key = "rip " }, \
	SEL_ROW, \
	info1, \
	info2, \
	OPT_ROW("intr_info", "intr_info "), \
	OPT_ROW("error_code", "error_code "), \
	{ .field = "vcpu_id", .key = "vcpu ", .base = 10, .flags = KS_TEXT_VCPU_GET }, \
	{ .field = NULL }

static const struct ks_text_field kvm_exit_plugin_text[] = {
	EXIT_TEXT(HEX_ROW("info1", info_key), NEXT_HEX_ROW("info2")),
};

static const struct ks_text_field kvm_exit_text[] = {
	EXIT_TEXT(OPT_ROW("info1", "info1 "), OPT_ROW("info2", "info2 ")),
};

/* "reason: %s ext_inf1: 0x%016llx ext_inf2: 0x%016llx ext_int: 0x%08x
 * ext_int_err: 0x%08x"; the plugin's "reason %s info1 %llx info2 %llx
 * int_info %llx int_info_err %llx" (the keys of each text) */
#define INJECT_TEXT(reason, stop, info1, info2, intr, err) \
	EXIT_ROW("exit_code", reason, stop), \
	HEX_ROW("exit_info1", info1), \
	HEX_ROW("exit_info2", info2), \
	HEX_ROW("exit_int_info", intr), \
	HEX_ROW("exit_int_info_err", err), \
	SEL_ROW, \
	{ .field = NULL }

static const struct ks_text_field kvm_nested_vmexit_inject_text[] = {
	INJECT_TEXT(reason_colon_key, " ext_inf1", "ext_inf1: ", "ext_inf2: ", "ext_int: ",
		    "ext_int_err: "),
};

static const struct ks_text_field kvm_nested_vmexit_inject_plugin_text[] = {
	INJECT_TEXT("reason ", " info1 ", "info1 ", "info2 ", "int_info ", "int_info_err "),
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
	VMENTER_TEXT(vmcs_key, "nested_ept=", KS_ISA_VMX),
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

const struct ks_text_layout ks_x86_text_layouts[] = {
	{ .system = "kvm", .name = "kvm_exit", .when = info_key, .fields = kvm_exit_plugin_text },
	{ .system = "kvm", .name = "kvm_exit", .fields = kvm_exit_text },
	{ .system = "kvm", .name = "kvm_entry", .fields = kvm_entry_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit", .when = info_key,
	  .fields = kvm_exit_plugin_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit", .fields = kvm_exit_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit_inject", .when = reason_colon_key,
	  .fields = kvm_nested_vmexit_inject_text },
	{ .system = "kvm", .name = "kvm_nested_vmexit_inject",
	  .fields = kvm_nested_vmexit_inject_plugin_text },
	{ .system = "kvm", .name = "kvm_nested_vmenter", .when = vmcs_key,
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
#undef NEXT_HEX_ROW
#undef VMENTER_TEXT
#undef EXIT_TEXT
#undef INJECT_TEXT

