/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arm64_kvm.c - arm64 KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/arm64/kvm/trace_arm.h): kvm_entry(vcpu_pc) and
 * kvm_exit(ret, esr_ec, vcpu_pc).  `ret` is the exception type (IRQ, SERROR,
 * TRAP, ILLEGAL, HYP_GONE); the kernel fills esr_ec (ESR_ELx bits 31:26)
 * only for TRAP exits, so a key is the EC for traps and the exception type
 * otherwise: an IRQ exit shows as "IRQ", never as EC 0 (UNKNOWN).
 *
 *   vmexit: kvm_exit -> kvm_entry (handling); perf measures kvm_entry ->
 *           kvm_exit (run), which --measure run and --format perf give.
 *   trap:   kvm_trap_enter(esr_ec) -> kvm_trap_exit when the kernel has
 *           them, else kvm_exit of TRAP type (keyed by EC) -> kvm_entry.
 *
 * Neither event names the vCPU: threads are mapped to vCPUs by the
 * attribution rules (vcpu_load/put, thread names...), see attribution.h.
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "arch.h"
#include "kvmscope/limits.h"

#define ARM_EXCEPTION_IRQ 0
#define ARM_EXCEPTION_EL1_SERROR 1
#define ARM_EXCEPTION_TRAP 2
#define ARM_EXCEPTION_IL 3
#define ARM_EXCEPTION_HYP_GONE 0xbadca11

enum { TABLE_TYPE = 0, TABLE_EC = 1 };

static const struct ks_code_name exception_types[] = {
	{ ARM_EXCEPTION_IRQ, "IRQ" },
	{ ARM_EXCEPTION_EL1_SERROR, "SERROR" },
	{ ARM_EXCEPTION_TRAP, "TRAP" },
	{ ARM_EXCEPTION_IL, "ILLEGAL" },
	{ ARM_EXCEPTION_HYP_GONE, "HYP_GONE" },
};

/* ESR_ELx exception classes (Arm ARM D24.2.40; arch/arm64/include/asm/esr.h).
 * PERF = perf 6.1's table has it (the others print "UNKNOWN" there). */
struct ec_name {
	uint32_t ec;
	const char *name;
	bool perf;
};

static const struct ec_name exception_classes[] = {
	{ 0x00, "UNKNOWN", true },     { 0x01, "WFx", true },
	{ 0x03, "CP15_32", true },     { 0x04, "CP15_64", true },
	{ 0x05, "CP14_MR", true },     { 0x06, "CP14_LS", true },
	{ 0x07, "FP_ASIMD", true },    { 0x08, "CP10_ID", true },
	{ 0x09, "PAC", true },         { 0x0a, "OTHER", false },
	{ 0x0c, "CP14_64", true },     { 0x0d, "BTI", false },
	{ 0x0e, "ILL", false },        { 0x11, "SVC32", false },
	{ 0x12, "HVC32", false },      { 0x13, "SMC32", false },
	{ 0x14, "SYS128", false },     { 0x15, "SVC64", true },
	{ 0x16, "HVC64", true },       { 0x17, "SMC64", true },
	{ 0x18, "SYS64", true },       { 0x19, "SVE", true },
	{ 0x1a, "ERET", false },       { 0x1c, "FPAC", false },
	{ 0x1d, "SME", false },        { 0x1f, "IMP_DEF", true },
	{ 0x20, "IABT_LOW", true },    { 0x21, "IABT_CUR", true },
	{ 0x22, "PC_ALIGN", true },    { 0x24, "DABT_LOW", true },
	{ 0x25, "DABT_CUR", true },    { 0x26, "SP_ALIGN", true },
	{ 0x27, "MOPS", false },       { 0x28, "FP_EXC32", true },
	{ 0x2c, "FP_EXC64", true },    { 0x2d, "GCS", false },
	{ 0x2f, "SERROR", true },      { 0x30, "BREAKPT_LOW", true },
	{ 0x31, "BREAKPT_CUR", true }, { 0x32, "SOFTSTP_LOW", true },
	{ 0x33, "SOFTSTP_CUR", true }, { 0x34, "WATCHPT_LOW", true },
	{ 0x35, "WATCHPT_CUR", true }, { 0x38, "BKPT32", true },
	{ 0x3a, "VECTOR32", true },    { 0x3c, "BRK64", true },
};

static const struct ec_name *ec_lookup(uint64_t ec)
{
	size_t i;

	for (i = 0; i < sizeof(exception_classes) / sizeof(exception_classes[0]); i++)
		if (exception_classes[i].ec == ec)
			return &exception_classes[i];
	return NULL;
}

/* kvm_exit: TRAP exits by EC, the others by exception type (as perf). */
static void exit_compose(uint64_t *key, uint64_t esr_ec, int32_t *table)
{
	if (*table == TABLE_EC)
		return; /* already an EC (trap class) */
	if ((uint32_t)*key == ARM_EXCEPTION_TRAP) {
		*key = esr_ec;
		*table = TABLE_EC;
	} else {
		*key = (uint32_t)*key;
		*table = TABLE_TYPE;
	}
}

static void arm64_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			   bool perf_style, char *buf, size_t len)
{
	const char *name = NULL;

	(void)info;
	if (ctx->table == TABLE_EC) {
		const struct ec_name *e = ec_lookup(key);

		if (e && (e->perf || !perf_style))
			name = e->name;
	} else {
		name = ks_code_lookup(exception_types, sizeof(exception_types) /
				      sizeof(exception_types[0]), key);
	}
	if (name)
		snprintf(buf, len, "%s", name);
	else if (perf_style)
		snprintf(buf, len, "UNKNOWN");
	else if (ctx->table == TABLE_EC)
		snprintf(buf, len, "EC_0x%02llx", (unsigned long long)key);
	else
		snprintf(buf, len, "TYPE(0x%llx)", (unsigned long long)key);
}

static bool arm64_key_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	if (ctx->table == TABLE_EC)
		return ec_lookup(key) != NULL;
	return ks_code_lookup(exception_types, sizeof(exception_types) /
			      sizeof(exception_types[0]), key) != NULL;
}

static const struct ks_event_class arm64_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "ret",
			     .key2_field = "esr_ec", .table = TABLE_TYPE } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.key_name = arm64_key_name,
		.key_known = arm64_key_known,
		.compose = exit_compose,
		.run_ok = true,
	},
	{
		.name = "trap", .title = "TRAP-EVENT",
		.begin = { { .system = "kvm", .name = "kvm_trap_enter", .key_field = "esr_ec",
			     .table = TABLE_EC },
			   { .system = "kvm", .name = "kvm_exit", .cond_field = "ret",
			     .cond_value = ARM_EXCEPTION_TRAP, .key_field = "esr_ec",
			     .fallback = true, .table = TABLE_EC } },
		.end = { { .system = "kvm", .name = "kvm_trap_exit" },
			 { .system = "kvm", .name = "kvm_entry", .fallback = true } },
		.key_name = arm64_key_name,
		.key_known = arm64_key_known,
		.preferred_system = "kvm",
		.preferred_name = "kvm_trap_enter",
		.variant_preferred = "kvm_trap_enter -> kvm_trap_exit",
		.variant_fallback = "kvm_exit (TRAP, keyed by EC) -> kvm_entry",
	},
	{ .name = NULL },
};

static bool arm64_detect(struct tep_handle *tep)
{
	return ks_arch_event_has_field(tep, "kvm", "kvm_exit", "esr_ec");
}

static const char *const arm64_machines[] = { "aarch64", "arm64", "armv8", NULL };

/* "EC_0xNN": report's name of an exit by its raw esr_ec. */
static bool arm64_exit_code(const char *name, int32_t *sel, uint64_t *code)
{
	if (strncmp(name, "EC_", 3) || ks_parse_u64(name + 3, strlen(name + 3), 0, code) < 0 ||
	    *code > UINT32_MAX)
		return false;
	*sel = 0;
	return true;
}

/* WFI/WFE traps: ESR_ELx_EC_WFx 0x01 (arch/arm64/include/asm/esr.h). */
static bool arm64_exit_halts(const struct ks_key_ctx *ctx, uint64_t key)
{
	return ctx->table == TABLE_EC && key == 0x01;
}

/* The formats of the events (tests/fixtures/arm64/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
/* the trap and vcpu_load/put pairs share their layouts */
#define EC_EVENT F("unsigned int esr_ec", 8, 4, 0) "\nprint fmt: \"esr_ec=%u\", REC->esr_ec\n"
#define VCPU_EVENT F("int vcpu_id", 8, 4, 1) "\nprint fmt: \"vcpu_id=%d\", REC->vcpu_id\n"
static const struct ks_event_format arm64_formats[] = {
	{ "kvm", "kvm_entry",
	  F("unsigned long vcpu_pc", 8, 8, 0)
	  "\nprint fmt: \"vcpu_pc=%lx\", REC->vcpu_pc\n", NULL },
	{ "kvm", "kvm_exit",
	  F("int ret", 8, 4, 1)
	  F("unsigned int esr_ec", 12, 4, 0)
	  F("unsigned long vcpu_pc", 16, 8, 0)
	  "\nprint fmt: \"ret=%d esr_ec=%u vcpu_pc=%lx\", REC->ret, REC->esr_ec, REC->vcpu_pc\n", NULL },
	{ "kvm", "kvm_trap_enter", EC_EVENT, NULL },
	{ "kvm", "kvm_trap_exit", EC_EVENT, NULL },
	{ "kvm", "vcpu_load", VCPU_EVENT, NULL },
	{ "kvm", "vcpu_put", VCPU_EVENT, NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef VCPU_EVENT
#undef EC_EVENT
#undef F

const struct ks_arch ks_arch_arm64 = {
	.name = "arm64",
	.entry_system = "kvm",
	.entry_name = "kvm_entry",
	.entry_vcpu_field = NULL,
	.exit_vcpu_field = NULL,
	.classes = arm64_classes,
	.perf = {
		.vcpu_field = "id",
		.measure = KS_ARCH_MEASURE_RUN,
		.decode_len = 20,
		.name_width = 20,
	},
	.isa_name = "arm64",
	.machines = arm64_machines,
	.detect = arm64_detect,
	.guest_ip_field = "vcpu_pc",
	.exit_halts = arm64_exit_halts,
	.exit_code = arm64_exit_code,
	.report = {
		.by_key2 = true,
		.key2_format = "EC_0x%llx",
	},
	.halt_system = "kvm",
	.halt_name = "kvm_wfx_arm64",
	.formats = arm64_formats,
};
