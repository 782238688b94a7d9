/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * s390_kvm.c - s390 KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/s390/kvm/trace.h, system kvm), all with the vCPU in `id`:
 *   vmexit: kvm_s390_sie_exit (key icptcode: the SIE intercept code) ->
 *           kvm_s390_sie_enter.  A following intercept event refines the key
 *           as perf does: kvm_s390_intercept_instruction (the opcode of
 *           `instruction`), kvm_s390_handle_sigp (order_code),
 *           kvm_s390_handle_diag (code), kvm_s390_intercept_prog (code).
 * The names are those of the kernel's uapi asm/sie.h (which perf uses).
 */
#include <stdio.h>

#include "arch.h"

enum { TABLE_ICPT = 0, TABLE_INSN, TABLE_SIGP, TABLE_DIAG, TABLE_PROG };

static const struct ks_code_name s390_icpt[] = {
	{ 0x0, "Host interruption" },
	{ 0x4, "Instruction" },
	{ 0x8, "Program interruption" },
	{ 0xc, "Instruction and program interruption" },
	{ 0x10, "External request" },
	{ 0x14, "External interruption" },
	{ 0x18, "I/O request" },
	{ 0x1c, "Wait state" },
	{ 0x20, "Validity" },
	{ 0x28, "Stop request" },
	{ 0x2c, "Operation exception" },
	{ 0x38, "Partial-execution" },
	{ 0x3c, "I/O interruption" },
	{ 0x40, "I/O instruction" },
	{ 0x48, "Timing subset" },
};
static const struct ks_code_name s390_diag[] = {
	{ 0x10, "DIAG (0x10) release pages" },
	{ 0x44, "DIAG (0x44) time slice end" },
	{ 0x9c, "DIAG (0x9c) time slice end directed" },
	{ 0x204, "DIAG (0x204) logical-cpu utilization" },
	{ 0x258, "DIAG (0x258) page-reference services" },
	{ 0x288, "DIAG (0x288) watchdog functions" },
	{ 0x308, "DIAG (0x308) ipl functions" },
	{ 0x500, "DIAG (0x500) KVM virtio functions" },
	{ 0x501, "DIAG (0x501) KVM breakpoint" },
};
static const struct ks_code_name s390_sigp[] = {
	{ 0x1, "SIGP sense" },
	{ 0x2, "SIGP external call" },
	{ 0x3, "SIGP emergency signal" },
	{ 0x4, "SIGP start" },
	{ 0x5, "SIGP stop" },
	{ 0x6, "SIGP restart" },
	{ 0x9, "SIGP stop and store status" },
	{ 0xb, "SIGP initial cpu reset" },
	{ 0xc, "SIGP cpu reset" },
	{ 0xd, "SIGP set prefix" },
	{ 0xe, "SIGP store status at address" },
	{ 0x12, "SIGP set architecture" },
	{ 0x13, "SIGP conditional emergency signal" },
	{ 0x15, "SIGP sense running" },
	{ 0x16, "SIGP set multithreading" },
	{ 0x17, "SIGP store additional status at address" },
};
static const struct ks_code_name s390_prog[] = {
	{ 0x1, "Prog Operation" },
	{ 0x2, "Prog Privileged Operation" },
	{ 0x3, "Prog Execute" },
	{ 0x4, "Prog Protection" },
	{ 0x5, "Prog Addressing" },
	{ 0x6, "Prog Specification" },
	{ 0x7, "Prog Data" },
	{ 0x8, "Prog Fixedpoint overflow" },
	{ 0x9, "Prog Fixedpoint divide" },
	{ 0xa, "Prog Decimal overflow" },
	{ 0xb, "Prog Decimal divide" },
	{ 0xc, "Prog HFP exponent overflow" },
	{ 0xd, "Prog HFP exponent underflow" },
	{ 0xe, "Prog HFP significance" },
	{ 0xf, "Prog HFP divide" },
	{ 0x10, "Prog Segment translation" },
	{ 0x11, "Prog Page translation" },
	{ 0x12, "Prog Translation specification" },
	{ 0x13, "Prog Special operation" },
	{ 0x15, "Prog Operand" },
	{ 0x16, "Prog Trace table" },
	{ 0x17, "Prog ASNtranslation specification" },
	{ 0x1c, "Prog Spaceswitch event" },
	{ 0x1d, "Prog HFP square root" },
	{ 0x1f, "Prog PCtranslation specification" },
	{ 0x20, "Prog AFX translation" },
	{ 0x21, "Prog ASX translation" },
	{ 0x22, "Prog LX translation" },
	{ 0x23, "Prog EX translation" },
	{ 0x24, "Prog Primary authority" },
	{ 0x25, "Prog Secondary authority" },
	{ 0x26, "Prog LFXtranslation exception" },
	{ 0x27, "Prog LSXtranslation exception" },
	{ 0x28, "Prog ALET specification" },
	{ 0x29, "Prog ALEN translation" },
	{ 0x2a, "Prog ALE sequence" },
	{ 0x2b, "Prog ASTE validity" },
	{ 0x2c, "Prog ASTE sequence" },
	{ 0x2d, "Prog Extended authority" },
	{ 0x2e, "Prog LSTE sequence" },
	{ 0x2f, "Prog ASTE instance" },
	{ 0x30, "Prog Stack full" },
	{ 0x31, "Prog Stack empty" },
	{ 0x32, "Prog Stack specification" },
	{ 0x33, "Prog Stack type" },
	{ 0x34, "Prog Stack operation" },
	{ 0x39, "Prog Region first translation" },
	{ 0x3a, "Prog Region second translation" },
	{ 0x3b, "Prog Region third translation" },
	{ 0x40, "Prog Monitor event" },
	{ 0x80, "Prog PER event" },
	{ 0x119, "Prog Crypto operation" },
};
static const struct ks_code_name s390_insns[] = {
	{ 0xa, "SVC" },
	{ 0x80, "SSM" },
	{ 0x82, "LPSW" },
	{ 0x83, "DIAG" },
	{ 0xac, "STNSM" },
	{ 0xad, "STOSM" },
	{ 0xae, "SIGP" },
	{ 0xb1, "LRA" },
	{ 0xb6, "STCTL" },
	{ 0xb7, "LCTL" },
	{ 0xee, "PLO" },
	{ 0x101, "0x01 PR" },
	{ 0x104, "0x01 PTFF" },
	{ 0x107, "0x01 SCKPF" },
	{ 0xaa00, "0xAA RINEXT" },
	{ 0xaa01, "0xAA RION" },
	{ 0xaa02, "0xAA TRIC" },
	{ 0xaa03, "0xAA RIOFF" },
	{ 0xaa04, "0xAA RIEMIT" },
	{ 0xb202, "0xB2 STIDP" },
	{ 0xb204, "0xB2 SCK" },
	{ 0xb205, "0xB2 STCK" },
	{ 0xb206, "0xB2 SCKC" },
	{ 0xb207, "0xB2 STCKC" },
	{ 0xb208, "0xB2 SPT" },
	{ 0xb209, "0xB2 STPT" },
	{ 0xb20d, "0xB2 PTLB" },
	{ 0xb210, "0xB2 SPX" },
	{ 0xb211, "0xB2 STPX" },
	{ 0xb212, "0xB2 STAP" },
	{ 0xb214, "0xB2 SIE" },
	{ 0xb216, "0xB2 SETR" },
	{ 0xb217, "0xB2 STETR" },
	{ 0xb218, "0xB2 PC" },
	{ 0xb220, "0xB2 SERVC" },
	{ 0xb221, "0xB2 IPTE" },
	{ 0xb228, "0xB2 PT" },
	{ 0xb229, "0xB2 ISKE" },
	{ 0xb22a, "0xB2 RRBE" },
	{ 0xb22b, "0xB2 SSKE" },
	{ 0xb22c, "0xB2 TB" },
	{ 0xb22e, "0xB2 PGIN" },
	{ 0xb22f, "0xB2 PGOUT" },
	{ 0xb230, "0xB2 CSCH" },
	{ 0xb231, "0xB2 HSCH" },
	{ 0xb232, "0xB2 MSCH" },
	{ 0xb233, "0xB2 SSCH" },
	{ 0xb234, "0xB2 STSCH" },
	{ 0xb235, "0xB2 TSCH" },
	{ 0xb236, "0xB2 TPI" },
	{ 0xb237, "0xB2 SAL" },
	{ 0xb238, "0xB2 RSCH" },
	{ 0xb239, "0xB2 STCRW" },
	{ 0xb23a, "0xB2 STCPS" },
	{ 0xb23b, "0xB2 RCHP" },
	{ 0xb23c, "0xB2 SCHM" },
	{ 0xb240, "0xB2 BAKR" },
	{ 0xb248, "0xB2 PALB" },
	{ 0xb24c, "0xB2 TAR" },
	{ 0xb250, "0xB2 CSP" },
	{ 0xb254, "0xB2 MVPG" },
	{ 0xb256, "0xB2 STHYI" },
	{ 0xb258, "0xB2 BSG" },
	{ 0xb25a, "0xB2 BSA" },
	{ 0xb25f, "0xB2 CHSC" },
	{ 0xb274, "0xB2 SIGA" },
	{ 0xb276, "0xB2 XSCH" },
	{ 0xb278, "0xB2 STCKE" },
	{ 0xb27c, "0xB2 STCKF" },
	{ 0xb27d, "0xB2 STSI" },
	{ 0xb2b0, "0xB2 STFLE" },
	{ 0xb2b1, "0xB2 STFL" },
	{ 0xb2b2, "0xB2 LPSWE" },
	{ 0xb2f8, "0xB2 TEND" },
	{ 0xb2fc, "0xB2 TABORT" },
	{ 0xb91e, "0xB9 KMAC" },
	{ 0xb928, "0xB9 PCKMO" },
	{ 0xb92a, "0xB9 KMF" },
	{ 0xb92b, "0xB9 KMO" },
	{ 0xb92d, "0xB9 KMCTR" },
	{ 0xb92e, "0xB9 KM" },
	{ 0xb92f, "0xB9 KMC" },
	{ 0xb93e, "0xB9 KIMD" },
	{ 0xb93f, "0xB9 KLMD" },
	{ 0xb98a, "0xB9 CSPG" },
	{ 0xb98d, "0xB9 EPSW" },
	{ 0xb98e, "0xB9 IDTE" },
	{ 0xb98f, "0xB9 CRDTE" },
	{ 0xb99c, "0xB9 EQBS" },
	{ 0xb9a2, "0xB9 PTF" },
	{ 0xb9ab, "0xB9 ESSA" },
	{ 0xb9ae, "0xB9 RRBM" },
	{ 0xb9af, "0xB9 PFMF" },
	{ 0xc801, "0xC8 ECTG" },
	{ 0xe303, "0xE3 LRAG" },
	{ 0xe313, "0xE3 LRAY" },
	{ 0xe325, "0xE3 NTSTG" },
	{ 0xe500, "0xE5 LASP" },
	{ 0xe501, "0xE5 TPROT" },
	{ 0xe560, "0xE5 TBEGIN" },
	{ 0xe561, "0xE5 TBEGINC" },
	{ 0xeb25, "0xEB STCTG" },
	{ 0xeb2f, "0xEB LCTLG" },
	{ 0xeb60, "0xEB LRIC" },
	{ 0xeb61, "0xEB STRIC" },
	{ 0xeb62, "0xEB MRIC" },
	{ 0xeb8a, "0xEB SQBS" },
};

#define N(t) (sizeof(t) / sizeof(t[0]))

struct s390_table {
	const struct ks_code_name *codes;
	size_t n;
	const char *kind;
};

static const struct s390_table tables[] = {
	[TABLE_ICPT] = { s390_icpt, N(s390_icpt), "ICPT" },
	[TABLE_INSN] = { s390_insns, N(s390_insns), "INSN" },
	[TABLE_SIGP] = { s390_sigp, N(s390_sigp), "SIGP" },
	[TABLE_DIAG] = { s390_diag, N(s390_diag), "DIAG" },
	[TABLE_PROG] = { s390_prog, N(s390_prog), "PROG" },
};

static const struct s390_table *table_of(int32_t t)
{
	return t >= 0 && t < (int32_t)N(tables) ? &tables[t] : &tables[TABLE_ICPT];
}

/* The key of an intercepted instruction: its first opcode byte, or for
 * opcodes with a second opcode field (0x01, 0xaa, 0xb2, 0xb9, 0xe3, 0xe5,
 * 0xeb, 0xc8) both, as (first << 8 | second). */
static uint64_t insn_key(uint64_t insn)
{
	static const struct { uint8_t ipa0; uint8_t shift; uint8_t mask; } two[] = {
		{ 0x01, 48, 0xff }, { 0xaa, 48, 0x0f }, { 0xb2, 48, 0xff }, { 0xb9, 48, 0xff },
		{ 0xe3, 48, 0xff }, { 0xe5, 48, 0xff }, { 0xeb, 16, 0xff }, { 0xc8, 48, 0x0f },
	};
	uint64_t op = insn >> 56;
	size_t i;

	for (i = 0; i < N(two); i++)
		if (op == two[i].ipa0)
			return (op << 8) | ((insn >> two[i].shift) & two[i].mask);
	return op;
}

static void s390_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	if (*table == TABLE_INSN)
		*key = insn_key(*key);
}

static void s390_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			  bool perf_style, char *buf, size_t len)
{
	const struct s390_table *t = table_of(ctx->table);
	const char *name = ks_code_lookup(t->codes, t->n, key);

	(void)info;
	if (name)
		snprintf(buf, len, "%s", name);
	else if (perf_style)
		snprintf(buf, len, "UNKNOWN");
	else
		snprintf(buf, len, "%s(0x%llx)", t->kind, (unsigned long long)key);
}

static bool s390_key_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	const struct s390_table *t = table_of(ctx->table);

	return ks_code_lookup(t->codes, t->n, key) != NULL;
}

static const struct ks_event_class s390_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_s390_sie_exit", .key_field = "icptcode",
			     .table = TABLE_ICPT } },
		.end = { { .system = "kvm", .name = "kvm_s390_sie_enter" } },
		.child = {
			{ .system = "kvm", .name = "kvm_s390_intercept_instruction",
			  .key_field = "instruction", .table = TABLE_INSN },
			{ .system = "kvm", .name = "kvm_s390_handle_sigp",
			  .key_field = "order_code", .table = TABLE_SIGP },
			{ .system = "kvm", .name = "kvm_s390_handle_diag", .key_field = "code",
			  .table = TABLE_DIAG },
			{ .system = "kvm", .name = "kvm_s390_intercept_prog", .key_field = "code",
			  .table = TABLE_PROG },
		},
		.key_name = s390_key_name,
		.key_known = s390_key_known,
		.compose = s390_compose,
		.run_ok = true,
	},
	{ .name = NULL },
};

static bool s390_detect(struct tep_handle *tep)
{
	return ks_arch_has_event(tep, "kvm", "kvm_s390_sie_exit");
}

static const char *const s390_machines[] = { "s390", NULL };
static const char *const s390_cpuid_words[] = { "IBM", NULL };

/* ICPT_WAIT 0x1c (arch/s390/kvm/kvm-s390.h): the guest loaded a wait PSW. */
static bool s390_exit_halts(const struct ks_key_ctx *ctx, uint64_t key)
{
	return ctx->table == TABLE_ICPT && key == 0x1c;
}

/* The formats of the events (tests/fixtures/s390/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
/* The fields and text every s390 event begins with (VCPU_TP_STRUCT_COMMON) */
#define COMMON F("int id", 8, 4, 1) F("unsigned long pswmask", 16, 8, 0) \
	F("unsigned long pswaddr", 24, 8, 0)
#define COMMON_FMT "\nprint fmt: \"id=%d pswmask=%lx pswaddr=%lx "
#define COMMON_ARGS "REC->id, REC->pswmask, REC->pswaddr, "
static const struct ks_event_format s390_formats[] = {
	{ "kvm", "kvm_s390_handle_diag", COMMON
	  F("__u16 code", 32, 2, 0)
	  COMMON_FMT "code=%u\", " COMMON_ARGS "REC->code\n", NULL },
	{ "kvm", "kvm_s390_handle_sigp", COMMON
	  F("__u8 order_code", 32, 1, 0)
	  F("__u16 cpu_addr", 34, 2, 0)
	  F("__u32 parameter", 36, 4, 0)
	  COMMON_FMT "order_code=%u cpu_addr=%u parameter=%u\", "
	  COMMON_ARGS "REC->order_code, REC->cpu_addr, REC->parameter\n", NULL },
	{ "kvm", "kvm_s390_intercept_instruction", COMMON
	  F("__u64 instruction", 32, 8, 0)
	  COMMON_FMT "instruction=%lx\", " COMMON_ARGS "REC->instruction\n", NULL },
	{ "kvm", "kvm_s390_intercept_prog", COMMON
	  F("__u16 code", 32, 2, 0)
	  COMMON_FMT "code=%u\", " COMMON_ARGS "REC->code\n", NULL },
	{ "kvm", "kvm_s390_sie_enter", COMMON
	  F("int cpuflags", 32, 4, 1)
	  COMMON_FMT "cpuflags=%d\", " COMMON_ARGS "REC->cpuflags\n", NULL },
	{ "kvm", "kvm_s390_sie_exit", COMMON
	  F("u8 icptcode", 32, 1, 0)
	  COMMON_FMT "icptcode=%u\", " COMMON_ARGS "REC->icptcode\n", NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef COMMON_ARGS
#undef COMMON_FMT
#undef COMMON
#undef F

const struct ks_arch ks_arch_s390 = {
	.name = "s390",
	.entry_system = "kvm",
	.entry_name = "kvm_s390_sie_enter",
	.entry_vcpu_field = "id",
	.exit_vcpu_field = "id",
	.classes = s390_classes,
	.perf = {
		.vcpu_field = "id",
		.measure = KS_ARCH_MEASURE_HANDLING,
		.decode_len = 40,
		.name_width = 40,
	},
	.isa_name = "SIE",
	.machines = s390_machines,
	.cpuid_words = s390_cpuid_words,
	.detect = s390_detect,
	.guest_ip_field = "pswaddr",
	/* PSW_MASK_PSTATE (arch/s390/include/asm/ptrace.h): problem state */
	.mode_field = "pswmask",
	.mode_user_mask = 0x0001000000000000ull,
	.mode_user_value = 0x0001000000000000ull,
	.exit_halts = s390_exit_halts,
	.formats = s390_formats,
};
