/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * loongarch_kvm.c - LoongArch KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/loongarch/kvm/trace.h, Linux 6.7+, system kvm):
 * kvm_enter / kvm_reenter / kvm_out (pc only), kvm_exit (pc, reason: the
 * ESTAT.Ecode of the exit, 0 = interrupt), kvm_exit_idle / kvm_exit_cache
 * (same layout, reason 64 / 65) and kvm_exit_gspr (inst_word: the
 * instruction that raised a guest privileged error).
 *
 *   vmexit: kvm_exit (key reason) -> kvm_enter or kvm_reenter; a following
 *           kvm_exit_gspr refines the key to the instruction kind (CPUCFG,
 *           CSR, IOCSR, Idle, Others), decoded as perf does
 *           (tools/perf/util/kvm-stat-arch/kvm-stat-loongarch.c).
 * No event names the vCPU: perf's vcpu_id_str "vcpu_id" is absent (it reads
 * 0), attribution uses thread names etc. (attribution.h).
 * Names: perf's where perf's table has the code, else the kernel's EXCCODE_*
 * suffix (arch/loongarch/include/asm/loongarch.h); --format perf prints
 * "UNKNOWN" for the latter, as perf does.
 */
#include <stdio.h>

#include "arch.h"

/* perf's pseudo codes for the kinds of privileged instructions. */
#define EXC_CPUCFG 100
#define EXC_CSR 101
#define EXC_IOCSR 102
#define EXC_IDLE 103
#define EXC_OTHERS 104

enum { TABLE_EXC = 0, TABLE_GSPR = 1 };

/* perf's loongarch_exception_type. */
static const struct ks_code_name perf_names[] = {
	{ 0, "Interrupt" },  { 1, "Mem Read" },   { 2, "Mem Store" },  { 3, "Inst Fetch" },
	{ 4, "Mem Modify" }, { 15, "FPU" },       { 16, "LSX" },       { 17, "LASX" },
	{ 22, "Privilege Error" }, { 23, "Hypercall" },
	{ EXC_CPUCFG, "CPUCFG" },  { EXC_CSR, "CSR" },  { EXC_IOCSR, "IOCSR" },
	{ EXC_IDLE, "Idle" },      { EXC_OTHERS, "Others" },
};

/* The other ESTAT exception codes (EXCCODE_* of the kernel). */
static const struct ks_code_name kernel_names[] = {
	{ 5, "TLBNR" },  { 6, "TLBNX" },  { 7, "TLBPE" },  { 8, "ADE" },    { 9, "ALE" },
	{ 10, "BCE" },   { 11, "SYS" },   { 12, "BP" },    { 13, "INE" },   { 14, "IPE" },
	{ 18, "FPE" },   { 19, "WATCH" }, { 20, "BTDIS" }, { 21, "BTE" },   { 24, "GCM" },
	{ 25, "SE" },
};

#define N(t) (sizeof(t) / sizeof(t[0]))

/* The kind of a GSPR instruction word, as perf's event_gspr_get_key(). */
static uint64_t gspr_key(uint32_t insn)
{
	switch (insn >> 24) {
	case 0x00: /* cpucfg */
		return (insn >> 10) == 0x1b ? EXC_CPUCFG : EXC_OTHERS;
	case 0x04: /* csrrd / csrwr / csrxchg */
		return EXC_CSR;
	case 0x06: /* iocsr* or idle; cacop and the rest are "others" */
		if ((insn >> 15) == 0xc90)
			return EXC_IOCSR;
		if ((insn >> 15) == 0xc91)
			return EXC_IDLE;
		return EXC_OTHERS;
	default:
		return EXC_OTHERS;
	}
}

static void loongarch_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	if (*table == TABLE_GSPR) {
		*key = gspr_key((uint32_t)*key);
		*table = TABLE_EXC;
	} else {
		*key = (uint32_t)*key;
	}
}

static void loongarch_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			       bool perf_style, char *buf, size_t len)
{
	const char *name = ks_code_lookup(perf_names, N(perf_names), key);

	(void)ctx;
	(void)info;
	if (!name && !perf_style)
		name = ks_code_lookup(kernel_names, N(kernel_names), key);
	if (name)
		snprintf(buf, len, "%s", name);
	else if (perf_style)
		snprintf(buf, len, "UNKNOWN");
	else
		snprintf(buf, len, "EXCCODE(%llu)", (unsigned long long)key);
}

static bool loongarch_key_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return ks_code_lookup(perf_names, N(perf_names), key) ||
	       ks_code_lookup(kernel_names, N(kernel_names), key);
}

static const struct ks_event_class loongarch_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "reason",
			     .table = TABLE_EXC } },
		.end = { { .system = "kvm", .name = "kvm_enter" },
			 { .system = "kvm", .name = "kvm_reenter" } },
		.child = { { .system = "kvm", .name = "kvm_exit_gspr", .key_field = "inst_word",
			     .table = TABLE_GSPR } },
		.key_name = loongarch_key_name,
		.key_known = loongarch_key_known,
		.compose = loongarch_compose,
		.run_ok = true,
	},
	{ .name = NULL },
};

static bool loongarch_detect(struct tep_handle *tep)
{
	return ks_arch_has_event(tep, "kvm", "kvm_reenter");
}

static const char *const loongarch_machines[] = { "loongarch", NULL };

/* The IDLE instruction (perf's "Idle" kind of GSPR exits); the kernel also
 * traces it as kvm_exit_idle (arch/loongarch/kvm/exit.c). */
static bool loongarch_exit_halts(const struct ks_key_ctx *ctx, uint64_t key)
{
	return ctx->table == TABLE_EXC && key == EXC_IDLE;
}

/* The formats of the events (tests/fixtures/loongarch/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
/* kvm_transition and kvm_exit classes (arch/loongarch/kvm/trace.h) */
#define PC_EVENT F("unsigned long pc", 8, 8, 0) \
	"\nprint fmt: \"PC: 0x%08lx\", REC->pc\n"
#define EXIT_EVENT F("unsigned long pc", 8, 8, 0) F("unsigned int reason", 16, 4, 0) \
	"\nprint fmt: \"[%s]PC: 0x%08lx\", __print_symbolic(REC->reason, { 64, \"IDLE\" }, { 65, " \
	"\"CACHE\" }), REC->pc\n"
static const struct ks_event_format loongarch_formats[] = {
	{ "kvm", "kvm_enter", PC_EVENT, NULL },
	{ "kvm", "kvm_exit", EXIT_EVENT, NULL },
	{ "kvm", "kvm_exit_cache", EXIT_EVENT, NULL },
	{ "kvm", "kvm_exit_gspr",
	  F("unsigned int inst_word", 8, 4, 0)
	  "\nprint fmt: \"Inst word: 0x%08x\", REC->inst_word\n", NULL },
	{ "kvm", "kvm_exit_idle", EXIT_EVENT, NULL },
	{ "kvm", "kvm_out", PC_EVENT, NULL },
	{ "kvm", "kvm_reenter", PC_EVENT, NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef EXIT_EVENT
#undef PC_EVENT
#undef F

const struct ks_arch ks_arch_loongarch = {
	.name = "loongarch",
	.entry_system = "kvm",
	.entry_name = "kvm_enter",
	.entry2_name = "kvm_reenter",
	.classes = loongarch_classes,
	.perf = {
		.vcpu_field = "vcpu_id",   /* absent from the events: perf reads 0 */
		.measure = KS_ARCH_MEASURE_HANDLING,
		.decode_len = 40,
		.name_width = 40,
	},
	.isa_name = "loongarch64",
	.machines = loongarch_machines,
	.detect = loongarch_detect,
	.guest_ip_field = "pc",
	.exit_halts = loongarch_exit_halts,
	.halt_system = "kvm",
	.halt_name = "kvm_exit_idle",
	.formats = loongarch_formats,
};
