/*
 * loongarch_kvm.c - LoongArch KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/loongarch/kvm/trace.h, Linux 6.7+, system kvm):
 * kvm_enter / kvm_reenter / kvm_out (vcpu_id, pc), kvm_exit (pc, reason:
 * the ESTAT exception code), kvm_exit_gspr (inst_word: the instruction
 * that raised a guest privileged error).
 *
 *   vmexit: kvm_exit (key reason) -> kvm_enter or kvm_reenter; a following
 *           kvm_exit_gspr refines the key to the instruction kind (CPUCFG,
 *           CSR, IOCSR, IDLE, cache...), as perf does.
 * kvm_enter names the vCPU (vcpu_id).
 */
#include <stdio.h>

#include "arch.h"

/* Pseudo codes for the kinds of privileged instructions (above EXCCODE). */
#define EXC_CPUCFG 100
#define EXC_CSR 101
#define EXC_IOCSR 102
#define EXC_IDLE 103
#define EXC_OTHERS 104

enum { TABLE_EXC = 0, TABLE_GSPR = 1 };

static const struct ks_code_name exceptions[] = {
	{ 0, "Interrupt" },        { 1, "Mem Read" },          { 2, "Mem Store" },
	{ 3, "Inst Fetch" },       { 4, "Mem Modify" },        { 5, "Page Not Readable" },
	{ 6, "Page Not Executable" }, { 7, "Page Privilege" }, { 8, "Address Error" },
	{ 9, "Alignment" },        { 10, "Bound Check" },      { 11, "Syscall" },
	{ 12, "Breakpoint" },      { 13, "Inst Not Exist" },   { 14, "Inst Privilege" },
	{ 15, "FPU Disabled" },    { 16, "LSX Disabled" },     { 17, "LASX Disabled" },
	{ 18, "FPE" },             { 19, "Watch" },            { 20, "BT Disabled" },
	{ 21, "BT Exception" },    { 22, "Guest Privileged Error" }, { 23, "Hypercall" },
	{ 24, "Guest CSR modified" },
	{ EXC_CPUCFG, "CPUCFG" },  { EXC_CSR, "CSR" },         { EXC_IOCSR, "IOCSR" },
	{ EXC_IDLE, "Idle" },      { EXC_OTHERS, "Others" },
};

#define N(t) (sizeof(t) / sizeof(t[0]))

/* The kind of a GSPR instruction word (LoongArch opcode layout). */
static uint64_t gspr_key(uint32_t insn)
{
	switch (insn >> 24) {
	case 0x00: /* cpucfg: 0000 0000 0000 0000 0110 11.. */
		return (insn >> 10) == 0x1b ? EXC_CPUCFG : EXC_OTHERS;
	case 0x04: /* csrrd / csrwr / csrxchg */
		return EXC_CSR;
	case 0x06: /* iocsr*, idle, cacop... */
		if ((insn >> 15) == 0xc91)
			return EXC_IDLE;
		if ((insn >> 22) == 0x18)
			return EXC_OTHERS; /* cacop */
		return EXC_IOCSR;
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
	const char *name = ks_code_lookup(exceptions, N(exceptions), key);

	(void)ctx;
	(void)info;
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
	return ks_code_lookup(exceptions, N(exceptions), key) != NULL;
}

static const struct ks_event_class loongarch_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { "kvm", "kvm_exit", NULL, 0, "reason", NULL, NULL, false, TABLE_EXC } },
		.end = { { "kvm", "kvm_enter", NULL, 0, NULL, NULL, NULL, false, 0 },
			 { "kvm", "kvm_reenter", NULL, 0, NULL, NULL, NULL, false, 0 } },
		.child = { { "kvm", "kvm_exit_gspr", NULL, 0, "inst_word", NULL, NULL, false,
			     TABLE_GSPR } },
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

const struct ks_arch ks_arch_loongarch = {
	.name = "loongarch",
	.entry_system = "kvm",
	.entry_name = "kvm_enter",
	.entry2_name = "kvm_reenter",
	.entry_vcpu_field = "vcpu_id",
	.exit_vcpu_field = "vcpu_id",
	.classes = loongarch_classes,
	.perf_vcpu_field = "vcpu_id",
	.perf_measure = KS_ARCH_MEASURE_HANDLING,
	.perf_decode_len = 40,
	.isa_name = "loongarch",
	.machines = loongarch_machines,
	.detect = loongarch_detect,
};
