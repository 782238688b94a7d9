/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_atom.c - ks_atom_value() (src/event/atom.c) reads a print fmt's
 * number as libtraceevent does, with strtoull(atom, NULL, 0): the C
 * library itself is the oracle, on the atoms real formats hold, on the
 * edges of each base and on random text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "event/atom.h"

static void check(const char *atom)
{
	unsigned long long want = strtoull(atom, NULL, 0);
	uint64_t got = ks_atom_value(atom);

	if (got != want)
		kt_fail(__FILE__, __LINE__, "\"%s\": %llu, strtoull says %llu", atom,
			(unsigned long long)got, want);
}

static void t_atoms_of_formats(void)
{
	static const char *const atoms[] = {
		"0", "1", "8", "1000L", "1000UL", "0x10", "0X1f", "0xffffffffffffffff", "010",
		"08", "09", "0x", "0xg", "0x0", "-1", "+7", " 12", "\t0x20", "-0x1",
		"18446744073709551615", "18446744073709551616", "99999999999999999999999",
		"0x10000000000000000", "01777777777777777777777", "02000000000000000000000",
		"2_c2", "2 zd22aza", "lh6rh", "", "-", "+", "REC", "1e3", "0b101", "00000000000",
		"-18446744073709551615", "-18446744073709551616",
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000007",
		"0x00000000000000000000000000000000000000000000000000000000000000000000000000000001",
	};

	for (size_t i = 0; i < sizeof(atoms) / sizeof(atoms[0]); i++)
		check(atoms[i]);
}

static void t_random_text(void)
{
	static const char alphabet[] = "0123456789abcdefxXlLuU-+ \t.";
	char buf[32];
	unsigned seed = 38;

	for (int i = 0; i < 200000; i++) {
		int n = (int)(rand_r(&seed) % (sizeof(buf) - 1));

		for (int j = 0; j < n; j++)
			buf[j] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		buf[n] = 0;
		check(buf);
		if (kt_failed())
			return;
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_atoms_of_formats), KT_CASE(t_random_text), { 0 },
	};

	return kt_main(cases);
}
