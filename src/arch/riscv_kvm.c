/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * riscv_kvm.c - RISC-V KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/riscv/kvm/trace.h, Linux 6.10+, system kvm):
 * kvm_entry(pc) and kvm_exit(sepc, scause, stval, htval, htinst).  The key
 * is scause: bit XLEN-1 set means an interrupt (shown as IRQ_*), otherwise
 * the exception code (arch/riscv/include/asm/csr.h EXC_* / IRQ_* names).
 *
 *   vmexit: kvm_exit -> kvm_entry (handling); perf measures kvm_entry ->
 *           kvm_exit (run): --format perf does too.
 * --format perf follows perf 6.12 (Debian trixie): exceptions named without
 * the EXC_ prefix, interrupts and unknown codes all in one "UNKNOWN" row
 * (see scause_perf_compose); our own names keep the two tables apart, one
 * row per code, the interrupt bit dropped.  Neither event names the vCPU (perf's vcpu_id_str "id" is absent:
 * it reads 0); see attribution.h.
 */
#include <stdio.h>

#include "arch.h"

#define CAUSE_IRQ_FLAG (1ULL << 63)

enum { TABLE_EXC = 0, TABLE_IRQ = 1 };

static const struct ks_code_name exceptions[] = {
	{ 0, "INST_MISALIGNED" },   { 1, "INST_ACCESS" },        { 2, "INST_ILLEGAL" },
	{ 3, "BREAKPOINT" },        { 4, "LOAD_MISALIGNED" },    { 5, "LOAD_ACCESS" },
	{ 6, "STORE_MISALIGNED" },  { 7, "STORE_ACCESS" },       { 8, "SYSCALL" },
	{ 9, "HYPERVISOR_SYSCALL" }, { 10, "SUPERVISOR_SYSCALL" }, { 12, "INST_PAGE_FAULT" },
	{ 13, "LOAD_PAGE_FAULT" },  { 15, "STORE_PAGE_FAULT" },  { 20, "INST_GUEST_PAGE_FAULT" },
	{ 21, "LOAD_GUEST_PAGE_FAULT" }, { 22, "VIRTUAL_INST_FAULT" },
	{ 23, "STORE_GUEST_PAGE_FAULT" },
};

static const struct ks_code_name interrupts[] = {
	{ 1, "IRQ_S_SOFT" },  { 2, "IRQ_VS_SOFT" },  { 3, "IRQ_M_SOFT" },
	{ 5, "IRQ_S_TIMER" }, { 6, "IRQ_VS_TIMER" }, { 7, "IRQ_M_TIMER" },
	{ 9, "IRQ_S_EXT" },   { 10, "IRQ_VS_EXT" },  { 11, "IRQ_M_EXT" },
	{ 12, "IRQ_S_GEXT" }, { 13, "IRQ_PMU_OVF" },
};

#define N(t) (sizeof(t) / sizeof(t[0]))

static void scause_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	*table = (*key & CAUSE_IRQ_FLAG) ? TABLE_IRQ : TABLE_EXC;
	*key &= ~CAUSE_IRQ_FLAG;
}

/* perf 6.12 (tools/perf/arch/riscv/util/kvm-stat.c, riscv_exception_types.h)
 * reads the raw scause, interrupt bit included, and names it from its
 * exception table alone, without the EXC_ prefix; its rows are hist entries
 * keyed by that name, so every interrupt and every exception code it lacks
 * fall into one "UNKNOWN" row.  Later perf (riscv_trap_types.h) masks the
 * bit and lists IRQ_* first; the Debian perf --format perf is checked
 * against is 6.12. */
#define PERF_UNKNOWN UINT64_MAX

static void scause_perf_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	*table = TABLE_EXC;
	if ((*key & CAUSE_IRQ_FLAG) || !ks_code_lookup(exceptions, N(exceptions), *key))
		*key = PERF_UNKNOWN;
}

static void riscv_key_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			   bool perf_style, char *buf, size_t len)
{
	bool irq = ctx->table == TABLE_IRQ;
	const char *name;

	(void)info;
	if (perf_style) {
		name = key == PERF_UNKNOWN ? NULL : ks_code_lookup(exceptions, N(exceptions), key);
		snprintf(buf, len, "%s", name ? name : "UNKNOWN");
		return;
	}
	name = irq ? ks_code_lookup(interrupts, N(interrupts), key)
		   : ks_code_lookup(exceptions, N(exceptions), key);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s(%llu)", irq ? "IRQ" : "EXC", (unsigned long long)key);
}

static bool riscv_key_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	if (ctx->table == TABLE_IRQ)
		return ks_code_lookup(interrupts, N(interrupts), key) != NULL;
	return ks_code_lookup(exceptions, N(exceptions), key) != NULL;
}

static const struct ks_event_class riscv_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm", .name = "kvm_exit", .key_field = "scause",
			     .table = TABLE_EXC } },
		.end = { { .system = "kvm", .name = "kvm_entry" } },
		.key_name = riscv_key_name,
		.key_known = riscv_key_known,
		.compose = scause_compose,
		.perf_compose = scause_perf_compose,
		.run_ok = true,
	},
	{ .name = NULL },
};

static bool riscv_detect(struct tep_handle *tep)
{
	return ks_arch_event_has_field(tep, "kvm", "kvm_exit", "scause");
}

static const char *const riscv_machines[] = { "riscv", NULL };

/* The formats of the events (tests/fixtures/riscv/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
static const struct ks_event_format riscv_formats[] = {
	{ "kvm", "kvm_entry",
	  F("unsigned long pc", 8, 8, 0)
	  "\nprint fmt: \"PC: 0x%016lx\", REC->pc\n", NULL },
	{ "kvm", "kvm_exit",
	  F("unsigned long sepc", 8, 8, 0)
	  F("unsigned long scause", 16, 8, 0)
	  F("unsigned long stval", 24, 8, 0)
	  F("unsigned long htval", 32, 8, 0)
	  F("unsigned long htinst", 40, 8, 0)
	  "\nprint fmt: \"SEPC:0x%lx, SCAUSE:0x%lx, STVAL:0x%lx, HTVAL:0x%lx, HTINST:0x%lx\", "
	  "REC->sepc, REC->scause, REC->stval, REC->htval, REC->htinst\n", NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef F

const struct ks_arch ks_arch_riscv = {
	.name = "riscv",
	.entry_system = "kvm",
	.entry_name = "kvm_entry",
	.classes = riscv_classes,
	.perf = {
		.vcpu_field = "id",
		.measure = KS_ARCH_MEASURE_RUN,
		.decode_len = 40,
		.name_width = 40,
		.hists = true,
	},
	.isa_name = "riscv64",       /* perf: exit_reasons_isa */
	.machines = riscv_machines,
	.detect = riscv_detect,
	/* WFI traps as a virtual instruction exception (22) like other
	 * instructions: no exit code alone means halted */
	.guest_ip_field = "sepc",
	.formats = riscv_formats,
};
