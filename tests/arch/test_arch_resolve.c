/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_arch_resolve.c - one answer to "which architecture, and why" for
 * every engine (ks_arch_resolve).
 *
 * Oracle: the order written in the stat engine's header and in perf kvm:
 * the --arch option, else the input's header (perf ARCH / uname machine,
 * then its CPUID string), else the KVM events of its formats (arm64's
 * kvm_exit has esr_ec: tests/fixtures/arm64, a real kernel's tracefs),
 * else x86, perf kvm's own default.  The exit-reason table of x86 follows
 * the same idea: the CPUID's, else the event's, else VMX.
 */
#include <stdlib.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "arch/arch.h"

static void t_order(void)
{
	struct tep_handle *tep = tep_alloc();
	const char *why = NULL;

	KT_REQUIRE(tep);
	KT_REQUIRE(kt_fixture_event(tep, "arm64/kvm", "kvm", "kvm_exit"));
	/* the option wins over all, even over the events */
	KT_EXPECT(ks_arch_resolve("s390", "aarch64", "", false, tep, &why) == &ks_arch_s390);
	KT_EQ_STR(why, "option");
	KT_EXPECT(ks_arch_resolve("sparc", "aarch64", "", false, tep, &why) == NULL);
	KT_EQ_STR(why, "option");
	/* the header next: its machine, then its CPUID */
	KT_EXPECT(ks_arch_resolve(NULL, "ppc64le", "", false, tep, &why) == &ks_arch_powerpc);
	KT_EQ_STR(why, "header");
	KT_EXPECT(ks_arch_resolve(NULL, "", "IBM,3906", false, tep, &why) == &ks_arch_s390);
	KT_EQ_STR(why, "header");
	KT_EXPECT(ks_arch_resolve(NULL, "", "GenuineIntel,6,85,7", false, tep, &why) ==
		  &ks_arch_x86);
	/* a machine the reader itself read from the events (ftrace text) */
	KT_EXPECT(ks_arch_resolve(NULL, "riscv64", "", true, tep, &why) == &ks_arch_riscv);
	KT_EQ_STR(why, "events");
	/* then the events: arm64's kvm_exit */
	KT_EXPECT(ks_arch_resolve(NULL, "", "", false, tep, &why) == &ks_arch_arm64);
	KT_EQ_STR(why, "events");
	KT_EXPECT(ks_arch_resolve(NULL, NULL, NULL, false, tep, NULL) == &ks_arch_arm64);
	tep_free(tep);
	/* nothing says: x86, as perf kvm assumes */
	KT_EXPECT(ks_arch_resolve(NULL, "", "", false, NULL, &why) == &ks_arch_x86);
	KT_EQ_STR(why, "default");
}

static void t_isa_default(void)
{
	KT_EQ_INT(ks_x86_isa_or_default(ks_x86_isa_from_cpuid("AuthenticAMD,25,1,1")), KS_ISA_SVM);
	KT_EQ_INT(ks_x86_isa_or_default(ks_x86_isa_from_cpuid("")), KS_ISA_VMX);
	KT_EQ_INT(ks_x86_isa_or_default(KS_ISA_SVM), KS_ISA_SVM);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_order), KT_CASE(t_isa_default), { 0 },
	};

	return kt_main(cases);
}
