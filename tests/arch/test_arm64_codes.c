/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_arm64_codes.c - arm64's exit reasons by name (arm64_kvm.c's
 * exit_code hook, "EC_0xNN" as report names an exit by its raw esr_ec):
 * the codes written out by hand; what strtoull() took silently (a sign
 * wrapping to 2^64-1, space, a code wider than 32 bits cut to 32) names
 * no exit.
 */
#include "../lib/ktest.h"
#include "arch/arch.h"

static void t_codes(void)
{
	int32_t sel = -1;
	uint64_t code = 0;

	KT_EXPECT(ks_arch_exit_code(&ks_arch_arm64, "EC_0x16", &sel, &code));
	KT_EQ_U64(code, 0x16);
	KT_EQ_INT(sel, 0);
	KT_EXPECT(ks_arch_exit_code(&ks_arch_arm64, "EC_24", &sel, &code));
	KT_EQ_U64(code, 24);
	KT_EXPECT(ks_arch_exit_code(&ks_arch_arm64, "EC_0xffffffff", &sel, &code));
	KT_EQ_U64(code, 0xffffffff);
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_", &sel, &code));
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_0x16x", &sel, &code));
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_-1", &sel, &code));
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_ 0x16", &sel, &code));
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_0x100000016", &sel, &code));
	KT_EXPECT(!ks_arch_exit_code(&ks_arch_arm64, "EC_99999999999999999999", &sel, &code));
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_codes),
		{ 0 },
	};
	return kt_main(cases);
}
