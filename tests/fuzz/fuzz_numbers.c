/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_numbers.c - libFuzzer target for the checked number parsers of
 * kvmscope/limits.h (ks_parse_u64/_i64/_double/_seconds/_count/_u64_prefix).
 *
 * Each parser reads the bytes; what one accepts must agree with another
 * (abort otherwise): a prefix's digits parse whole to the same number; a
 * whole number that ks_parse_u64 takes in base 10, ks_parse_i64 takes too
 * when it fits; an accepted double is finite and its text held no space.
 *
 *	clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc \
 *	      tests/fuzz/fuzz_numbers.c src/util/{error,limits}.c -lm -o fuzz_numbers
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	static const int bases[] = { 0, 10, 16 };
	uint64_t u, w;
	int64_t i;
	double d;
	size_t b, n, k;

	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		(void)ks_parse_u64(s, size, bases[b], &u);
	(void)ks_parse_count(s, size, true, &u);
	(void)ks_parse_seconds(s, size, &d);
	if (ks_parse_u64(s, size, 10, &u) == 0 && u <= INT64_MAX &&
	    (ks_parse_i64(s, size, 10, &i) < 0 || (uint64_t)i != u))
		abort();
	if (ks_parse_double(s, size, &d) == 0) {
		if (!isfinite(d))
			abort();
		for (k = 0; k < size; k++)
			if (s[k] == ' ' || s[k] == '\t' || s[k] == 'x' || s[k] == 'X')
				abort();
	}
	for (b = 1; b < sizeof(bases) / sizeof(bases[0]); b++) {
		n = ks_parse_u64_prefix(s, size, bases[b], &u);
		if (n > size || (n && (ks_parse_u64(s, n, bases[b], &w) < 0 || w != u)))
			abort();
	}
	return 0;
}
