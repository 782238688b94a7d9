/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_field.c - ks_field_read(): values in and out of a payload, and no
 * pointer formed from a missing one (a sample without RAW has data NULL:
 * fuzz_pmu finding; clang's UBSan flags NULL + offset, gcc's does not, so
 * the fuzz target's regression input under tests/fuzz/regress/fuzz_pmu/ is
 * what CI's clang run checks).
 */
#include <stdbool.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/field.h"

static void t_no_payload(void)
{
	struct ks_field f = { .offset = 12, .size = 4, .present = true };
	bool ok = true;

	KT_EQ_U64(ks_field_read(&f, NULL, 0, &ok), 0);
	KT_EXPECT(!ok);
}

static void t_outside_payload(void)
{
	const unsigned char data[14] = { 0 };
	struct ks_field f = { .offset = 12, .size = 4, .present = true };
	bool ok = true;

	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), 0);
	KT_EXPECT(!ok);
	f.offset = -1;
	f.size = 1;
	ok = true;
	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), 0);
	KT_EXPECT(!ok);
}

static void t_values(void)
{
	unsigned char data[16];
	struct ks_field f = { .offset = 4, .size = 4, .is_signed = true, .present = true };
	uint32_t v = 0xfffffffe; /* -2 */
	bool ok = false;

	memset(data, 0, sizeof(data));
	memcpy(data + 4, &v, 4);
	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), (uint64_t)-2);
	KT_EXPECT(ok);
	f.is_signed = false;
	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), 0xfffffffe);
	f.swap = true;
	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), 0xfeffffff);
	f.present = false;
	KT_EQ_U64(ks_field_read(&f, data, sizeof(data), &ok), 0);
	KT_EXPECT(!ok);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_no_payload),
		KT_CASE(t_outside_payload),
		KT_CASE(t_values),
		{ 0 },
	};

	return kt_main(cases);
}
