/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * powerpc_kvm.c - powerpc book3s HV KVM event classes for kvmscope stat.
 *
 * Tracepoints (arch/powerpc/kvm/trace_hv.h, system kvm_hv):
 *   vmexit: kvm_guest_exit (key trap: the interrupt vector, e.g.
 *           HV_DECREMENTER 0x980) -> kvm_guest_enter
 *   hcall:  kvm_hcall_enter (key req: the hcall number) -> kvm_hcall_exit
 * Both events carry vcpu_id.  The names are the ones the kernel's trace
 * headers print (kvm_trace_symbol_exit, kvm_trace_symbol_hcall), which perf
 * also uses.
 */
#include <stdio.h>

#include "arch.h"

static const struct ks_code_name ppc_traps[] = {
	{ 0x0, "RETURN_TO_HOST" },
	{ 0x100, "SYSTEM_RESET" },
	{ 0x200, "MACHINE_CHECK" },
	{ 0x300, "DATA_STORAGE" },
	{ 0x380, "DATA_SEGMENT" },
	{ 0x400, "INST_STORAGE" },
	{ 0x480, "INST_SEGMENT" },
	{ 0x500, "EXTERNAL" },
	{ 0x502, "EXTERNAL_HV" },
	{ 0x600, "ALIGNMENT" },
	{ 0x700, "PROGRAM" },
	{ 0x800, "FP_UNAVAIL" },
	{ 0x900, "DECREMENTER" },
	{ 0x980, "HV_DECREMENTER" },
	{ 0xc00, "SYSCALL" },
	{ 0xd00, "TRACE" },
	{ 0xe00, "H_DATA_STORAGE" },
	{ 0xe20, "H_INST_STORAGE" },
	{ 0xe40, "H_EMUL_ASSIST" },
	{ 0xf00, "PERFMON" },
	{ 0xf20, "ALTIVEC" },
	{ 0xf40, "VSX" },
};
static const struct ks_code_name ppc_hcalls[] = {
	{ 0x4, "H_REMOVE" },
	{ 0x8, "H_ENTER" },
	{ 0xc, "H_READ" },
	{ 0x10, "H_CLEAR_MOD" },
	{ 0x14, "H_CLEAR_REF" },
	{ 0x18, "H_PROTECT" },
	{ 0x1c, "H_GET_TCE" },
	{ 0x20, "H_PUT_TCE" },
	{ 0x24, "H_SET_SPRG0" },
	{ 0x28, "H_SET_DABR" },
	{ 0x2c, "H_PAGE_INIT" },
	{ 0x30, "H_SET_ASR" },
	{ 0x34, "H_ASR_ON" },
	{ 0x38, "H_ASR_OFF" },
	{ 0x3c, "H_LOGICAL_CI_LOAD" },
	{ 0x40, "H_LOGICAL_CI_STORE" },
	{ 0x44, "H_LOGICAL_CACHE_LOAD" },
	{ 0x48, "H_LOGICAL_CACHE_STORE" },
	{ 0x4c, "H_LOGICAL_ICBI" },
	{ 0x50, "H_LOGICAL_DCBF" },
	{ 0x54, "H_GET_TERM_CHAR" },
	{ 0x58, "H_PUT_TERM_CHAR" },
	{ 0x5c, "H_REAL_TO_LOGICAL" },
	{ 0x60, "H_HYPERVISOR_DATA" },
	{ 0x64, "H_EOI" },
	{ 0x68, "H_CPPR" },
	{ 0x6c, "H_IPI" },
	{ 0x70, "H_IPOLL" },
	{ 0x74, "H_XIRR" },
	{ 0x78, "H_MIGRATE_DMA" },
	{ 0x7c, "H_PERFMON" },
	{ 0xdc, "H_REGISTER_VPA" },
	{ 0xe0, "H_CEDE" },
	{ 0xe4, "H_CONFER" },
	{ 0xe8, "H_PROD" },
	{ 0xec, "H_GET_PPP" },
	{ 0xf0, "H_SET_PPP" },
	{ 0xf4, "H_PURR" },
	{ 0xf8, "H_PIC" },
	{ 0xfc, "H_REG_CRQ" },
	{ 0x100, "H_FREE_CRQ" },
	{ 0x104, "H_VIO_SIGNAL" },
	{ 0x108, "H_SEND_CRQ" },
	{ 0x110, "H_COPY_RDMA" },
	{ 0x114, "H_REGISTER_LOGICAL_LAN" },
	{ 0x118, "H_FREE_LOGICAL_LAN" },
	{ 0x11c, "H_ADD_LOGICAL_LAN_BUFFER" },
	{ 0x120, "H_SEND_LOGICAL_LAN" },
	{ 0x124, "H_BULK_REMOVE" },
	{ 0x130, "H_MULTICAST_CTRL" },
	{ 0x134, "H_SET_XDABR" },
	{ 0x138, "H_STUFF_TCE" },
	{ 0x13c, "H_PUT_TCE_INDIRECT" },
	{ 0x14c, "H_CHANGE_LOGICAL_LAN_MAC" },
	{ 0x150, "H_VTERM_PARTNER_INFO" },
	{ 0x154, "H_REGISTER_VTERM" },
	{ 0x158, "H_FREE_VTERM" },
	{ 0x15c, "H_RESET_EVENTS" },
	{ 0x160, "H_ALLOC_RESOURCE" },
	{ 0x164, "H_FREE_RESOURCE" },
	{ 0x168, "H_MODIFY_QP" },
	{ 0x16c, "H_QUERY_QP" },
	{ 0x170, "H_REREGISTER_PMR" },
	{ 0x174, "H_REGISTER_SMR" },
	{ 0x178, "H_QUERY_MR" },
	{ 0x17c, "H_QUERY_MW" },
	{ 0x180, "H_QUERY_HCA" },
	{ 0x184, "H_QUERY_PORT" },
	{ 0x188, "H_MODIFY_PORT" },
	{ 0x18c, "H_DEFINE_AQP1" },
	{ 0x190, "H_GET_TRACE_BUFFER" },
	{ 0x194, "H_DEFINE_AQP0" },
	{ 0x198, "H_RESIZE_MR" },
	{ 0x19c, "H_ATTACH_MCQP" },
	{ 0x1a0, "H_DETACH_MCQP" },
	{ 0x1a4, "H_CREATE_RPT" },
	{ 0x1a8, "H_REMOVE_RPT" },
	{ 0x1ac, "H_REGISTER_RPAGES" },
	{ 0x1b0, "H_DISABLE_AND_GET" },
	{ 0x1b4, "H_ERROR_DATA" },
	{ 0x1b8, "H_GET_HCA_INFO" },
	{ 0x1bc, "H_GET_PERF_COUNT" },
	{ 0x1c0, "H_MANAGE_TRACE" },
	{ 0x1d4, "H_FREE_LOGICAL_LAN_BUFFER" },
	{ 0x1d8, "H_POLL_PENDING" },
	{ 0x1e4, "H_QUERY_INT_STATE" },
	{ 0x244, "H_ILLAN_ATTRIBUTES" },
	{ 0x250, "H_MODIFY_HEA_QP" },
	{ 0x254, "H_QUERY_HEA_QP" },
	{ 0x258, "H_QUERY_HEA" },
	{ 0x25c, "H_QUERY_HEA_PORT" },
	{ 0x260, "H_MODIFY_HEA_PORT" },
	{ 0x264, "H_REG_BCMC" },
	{ 0x268, "H_DEREG_BCMC" },
	{ 0x26c, "H_REGISTER_HEA_RPAGES" },
	{ 0x270, "H_DISABLE_AND_GET_HEA" },
	{ 0x274, "H_GET_HEA_INFO" },
	{ 0x278, "H_ALLOC_HEA_RESOURCE" },
	{ 0x284, "H_ADD_CONN" },
	{ 0x288, "H_DEL_CONN" },
	{ 0x298, "H_JOIN" },
	{ 0x2a4, "H_VASI_STATE" },
	{ 0x2b0, "H_ENABLE_CRQ" },
	{ 0x2b8, "H_GET_EM_PARMS" },
	{ 0x2d0, "H_SET_MPP" },
	{ 0x2d4, "H_GET_MPP" },
	{ 0x2ec, "H_HOME_NODE_ASSOCIATIVITY" },
	{ 0x2f4, "H_BEST_ENERGY" },
	{ 0x2fc, "H_XIRR_X" },
	{ 0x300, "H_RANDOM" },
	{ 0x304, "H_COP" },
	{ 0x314, "H_GET_MPP_X" },
	{ 0x31c, "H_SET_MODE" },
	{ 0xf000, "H_RTAS" },
};

#define NTRAPS (sizeof(ppc_traps) / sizeof(ppc_traps[0]))
#define NHCALLS (sizeof(ppc_hcalls) / sizeof(ppc_hcalls[0]))

static void print_name(const char *name, const char *kind, uint64_t key, bool perf_style,
		       char *buf, size_t len)
{
	if (name)
		snprintf(buf, len, "%s", name);
	else if (perf_style)
		snprintf(buf, len, "UNKNOWN");
	else
		snprintf(buf, len, "%s(0x%llx)", kind, (unsigned long long)key);
}

static void trap_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info, bool perf_style,
		      char *buf, size_t len)
{
	(void)ctx;
	(void)info;
	print_name(ks_code_lookup(ppc_traps, NTRAPS, key), "TRAP", key, perf_style, buf, len);
}

static bool trap_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return ks_code_lookup(ppc_traps, NTRAPS, key) != NULL;
}

static void hcall_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info, bool perf_style,
		       char *buf, size_t len)
{
	(void)ctx;
	(void)info;
	print_name(ks_code_lookup(ppc_hcalls, NHCALLS, key), "HCALL", key, perf_style, buf, len);
}

static bool hcall_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return ks_code_lookup(ppc_hcalls, NHCALLS, key) != NULL;
}

/* trap is an int: keep its 32 bits (a sign-extended value would miss). */
static void trap_compose(uint64_t *key, uint64_t key2, int32_t *table)
{
	(void)key2;
	(void)table;
	*key = (uint32_t)*key;
}

static const struct ks_event_class powerpc_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "kvm_hv", .name = "kvm_guest_exit", .key_field = "trap" } },
		.end = { { .system = "kvm_hv", .name = "kvm_guest_enter" } },
		.key_name = trap_name,
		.names = ppc_traps,
		.nnames = NTRAPS,
		.key_known = trap_known,
		.compose = trap_compose,
		.run_ok = true,
	},
	{
		.name = "hcall", .title = "HCALL-EVENT",
		.begin = { { .system = "kvm_hv", .name = "kvm_hcall_enter", .key_field = "req" } },
		.end = { { .system = "kvm_hv", .name = "kvm_hcall_exit" } },
		.key_name = hcall_name,
		.key_known = hcall_known,
	},
	{ .name = NULL },
};

static bool powerpc_detect(struct tep_handle *tep)
{
	return ks_arch_has_event(tep, "kvm_hv", "kvm_guest_exit");
}

static const char *const powerpc_machines[] = { "ppc", "powerpc", NULL };

/* BOOK3S_INTERRUPT_HV_DECREMENTER 0x980 (arch/powerpc/include/asm/
 * kvm_asm.h): the hypervisor timer, a periodic sample of the guest's pc.
 * A ceding vCPU (H_CEDE) exits as a SYSCALL 0xc00 like every hcall, so no
 * exit code alone means halted here. */
static bool powerpc_exit_periodic(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return key == 0x980;
}

/* The formats of the events (tests/fixtures/powerpc/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
static const struct ks_event_format powerpc_formats[] = {
	{ "kvm_hv", "kvm_guest_enter",
	  F("int vcpu_id", 8, 4, 1)
	  F("unsigned long pc", 16, 8, 0)
	  F("unsigned long pending_exceptions", 24, 8, 0)
	  F("u8 ceded", 32, 1, 0)
	  "\nprint fmt: \"vcpu_id=%d pc=%lx pending_exceptions=%lx ceded=%u\", REC->vcpu_id, REC->pc, "
	  "REC->pending_exceptions, REC->ceded\n", NULL },
	{ "kvm_hv", "kvm_guest_exit",
	  F("int vcpu_id", 8, 4, 1)
	  F("int trap", 12, 4, 1)
	  F("unsigned long pc", 16, 8, 0)
	  F("unsigned long msr", 24, 8, 0)
	  F("u8 ceded", 32, 1, 0)
	  "\nprint fmt: \"vcpu_id=%d trap=%d pc=%lx msr=%lx ceded=%u\", REC->vcpu_id, REC->trap, "
	  "REC->pc, REC->msr, REC->ceded\n", NULL },
	{ "kvm_hv", "kvm_hcall_enter",
	  F("int vcpu_id", 8, 4, 1)
	  F("unsigned long req", 16, 8, 0)
	  F("unsigned long gpr4", 24, 8, 0)
	  F("unsigned long gpr5", 32, 8, 0)
	  F("unsigned long gpr6", 40, 8, 0)
	  F("unsigned long gpr7", 48, 8, 0)
	  "\nprint fmt: \"vcpu_id=%d req=%lx gpr4=%lx gpr5=%lx gpr6=%lx gpr7=%lx\", REC->vcpu_id, "
	  "REC->req, REC->gpr4, REC->gpr5, REC->gpr6, REC->gpr7\n", NULL },
	{ "kvm_hv", "kvm_hcall_exit",
	  F("int vcpu_id", 8, 4, 1)
	  F("unsigned long ret", 16, 8, 0)
	  F("unsigned long hcall_rc", 24, 8, 0)
	  "\nprint fmt: \"vcpu_id=%d ret=%lx hcall_rc=%lx\", REC->vcpu_id, REC->ret, "
	  "REC->hcall_rc\n", NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef F

const struct ks_arch ks_arch_powerpc = {
	.name = "powerpc",
	.entry_system = "kvm_hv",
	.entry_name = "kvm_guest_enter",
	.entry_vcpu_field = "vcpu_id",
	.exit_vcpu_field = "vcpu_id",
	.classes = powerpc_classes,
	.perf = {
		.vcpu_field = "vcpu_id",
		.measure = KS_ARCH_MEASURE_HANDLING,
		.decode_len = 40,
		.name_width = 40,
	},
	.isa_name = "HV",
	.machines = powerpc_machines,
	.detect = powerpc_detect,
	.guest_ip_field = "pc",
	/* guest user: MSR_HV (bit 63-3) clear and MSR_PR (bit 63-49) set */
	.mode_field = "msr",
	.mode_user_mask = (1ull << 60) | (1ull << 14),
	.mode_user_value = 1ull << 14,
	.exit_periodic = powerpc_exit_periodic,
	.formats = powerpc_formats,
};
