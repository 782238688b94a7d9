/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_parse_number.c - ks_parse_u64 (kvmscope/limits.h), the checked
 * parser the readers take every number of a text line with: its answers
 * (a value, or -1) equal those of strtoull() on a NUL-terminated copy of
 * the token with the whole token consumed and no overflow, for the bases
 * the readers use (0, 8, 10, 16) and others, on written cases and on
 * random tokens of digits, prefixes, signs and spaces.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/limits.h"

/* The oracle: C's own parser on a copy of the token. */
static int oracle_u64(const char *s, size_t len, int base, uint64_t *out)
{
	char buf[128], *end;
	unsigned long long v;

	if (len == 0 || len >= 72 || !((s[0] >= '0' && s[0] <= '9') ||
					 (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, base);
	if (*end || errno || end == buf)
		return -1;
	*out = v;
	return 0;
}

static void check(const char *s, size_t len, int base)
{
	uint64_t got = 12345, want = 67890;
	int r = ks_parse_u64(s, len, base, &got), w = oracle_u64(s, len, base, &want);

	if (r != w || (r == 0 && got != want)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "'%.*s' base %d: %d %llu, strtoull %d %llu", (int)len, s,
			 base, r, (unsigned long long)got, w, (unsigned long long)want);
		KT_EQ_STR(msg, "the same answer");
	}
}

static const int bases[] = { 0, 8, 10, 16, 2, 36 };

static void t_cases(void)
{
	static const char *const cases[] = {
		"0", "7", "10", "0x", "0X", "0x0", "0xg", "0x1f", "0X1F", "0x0x1", "08", "017",
		"0777", "1e3", "ff", "FF", "00", "18446744073709551615", "18446744073709551616",
		"0xffffffffffffffff", "0x10000000000000000", "01777777777777777777777",
		"02000000000000000000000", "-1", "+1", " 1", "1 ", "", "z", "0b1",
		"000000000000000000000000000000000000000000000000000000000000000000000001",
		"00000000000000000000000000000000000000000000000000000000000000000000001",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
			check(cases[i], strlen(cases[i]), bases[b]);
	/* the length bounds the token: "12" of "123" */
	uint64_t v = 0;
	KT_EQ_INT(ks_parse_u64("123", 2, 10, &v), 0);
	KT_EQ_U64(v, 12);
}

static void t_random(void)
{
	static const char alphabet[] = "0000111789abcdefABCxX-+ gz";
	unsigned seed = 38;
	char tok[80];

	for (int n = 0; n < 200000; n++) {
		size_t len = (size_t)(rand_r(&seed) % 24);

		if (n % 50 == 0)
			len = 68 + (size_t)(rand_r(&seed) % 8);
		for (size_t i = 0; i < len; i++)
			tok[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		check(tok, len, bases[rand_r(&seed) % (sizeof(bases) / sizeof(bases[0]))]);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_cases),
		KT_CASE(t_random),
		{ 0 },
	};
	return kt_main(cases);
}
