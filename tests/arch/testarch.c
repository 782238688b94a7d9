/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testarch.c - a test-only architecture, "testarch", and the list of
 * architectures with it: linked into build/tests/arch/kvmscope-testarch (the
 * kvmscope CLI with this list instead of src/arch/arch_list.c).
 *
 * Its events are made up (the .format files of tests/fixtures/testarch/testkvm):
 * testkvm:guest_enter(cpu_no) and testkvm:guest_exit(cpu_no, why, where).
 * Exit codes: 1 TICK (periodic), 2 IO, 3 NAP (the vCPU halts), 4 CALL.  The
 * file is all an architecture needs: tests/arch/testarch_test.sh checks that
 * stat, report, timeline and pmu take their events, names, vCPU field,
 * halted state and periodic samples from it.
 */
#include <stdio.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"

static const struct ks_code_name why_names[] = {
	{ 1, "TICK" }, { 2, "IO" }, { 3, "NAP" }, { 4, "CALL" },
};

#define NWHY (sizeof(why_names) / sizeof(why_names[0]))

static void why_name(const struct ks_key_ctx *ctx, uint64_t key, int32_t info, bool perf_style,
		     char *buf, size_t len)
{
	const char *name = ks_code_lookup(why_names, NWHY, key);

	(void)ctx;
	(void)info;
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, perf_style ? "UNKNOWN" : "WHY(%llu)", (unsigned long long)key);
}

static bool why_known(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return ks_code_lookup(why_names, NWHY, key) != NULL;
}

static bool testarch_halts(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return key == 3;
}

static bool testarch_periodic(const struct ks_key_ctx *ctx, uint64_t key)
{
	(void)ctx;
	return key == 1;
}

static const struct ks_event_class testarch_classes[] = {
	{
		.name = "vmexit", .title = "VM-EXIT",
		.begin = { { .system = "testkvm", .name = "guest_exit", .key_field = "why" } },
		.end = { { .system = "testkvm", .name = "guest_enter" } },
		.key_name = why_name,
		.key_known = why_known,
		.run_ok = true,
		.names = why_names,
		.nnames = NWHY,
	},
	{ .name = NULL },
};

static bool testarch_detect(struct tep_handle *tep)
{
	return ks_arch_has_event(tep, "testkvm", "guest_exit");
}

static const char *const testarch_machines[] = { "testarch", NULL };

/* The formats of the events (tests/fixtures/testarch/), for the ftrace text
 * reader. */
#define F KS_FORMAT_FIELD
static const struct ks_event_format testarch_formats[] = {
	{ "testkvm", "guest_enter",
	  F("unsigned int cpu_no", 8, 4, 0)
	  "\nprint fmt: \"cpu %u\", REC->cpu_no\n", NULL },
	{ "testkvm", "guest_exit",
	  F("unsigned int cpu_no", 8, 4, 0)
	  F("unsigned int why", 12, 4, 0)
	  F("unsigned long where", 16, 8, 0)
	  "\nprint fmt: \"cpu %u why %u where 0x%lx\", REC->cpu_no, REC->why, REC->where\n", NULL },
	{ NULL, NULL, NULL, NULL },
};
#undef F

static const struct ks_arch ks_arch_testarch = {
	.name = "testarch",
	.entry_system = "testkvm",
	.entry_name = "guest_enter",
	.entry_vcpu_field = "cpu_no",
	.exit_vcpu_field = "cpu_no",
	.classes = testarch_classes,
	.perf = {
		.vcpu_field = "cpu_no",
		.measure = KS_ARCH_MEASURE_HANDLING,
		.decode_len = 20,
		.name_width = 20,
	},
	.isa_name = "TEST",
	.machines = testarch_machines,
	.detect = testarch_detect,
	.guest_ip_field = "where",
	.exit_halts = testarch_halts,
	.exit_periodic = testarch_periodic,
	.formats = testarch_formats,
};

/* The six architectures of src/arch/arch_list.c and this one. */
const struct ks_arch *const ks_arches[] = {
	&ks_arch_x86, &ks_arch_arm64, &ks_arch_powerpc, &ks_arch_s390,
	&ks_arch_riscv, &ks_arch_loongarch, &ks_arch_testarch, NULL,
};
