/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * atom.c - numbers of a parsed print fmt (see atom.h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "kvmscope/limits.h"
#include "atom.h"

static bool is_digit_of(char c, int base)
{
	if (base == 16)
		return isxdigit((unsigned char)c);
	return c >= '0' && c < '0' + base;
}

uint64_t ks_atom_value(const char *atom)
{
	const char *p = atom;
	bool neg = false;
	uint64_t v = 0;
	size_t n;
	int base = 10;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	/* "0x" counts as hex only with a hex digit after it (else "0") */
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	for (n = 0; is_digit_of(p[n], base); n++)
		;
	if (!n)
		return 0;
	while (n > 1 && *p == '0') { /* leading zeros: no value, but length */
		p++;
		n--;
	}
	/* only digits of BASE: it fails only when the number does not fit,
	 * where strtoull saturates (and ignores the sign) */
	if (ks_parse_u64(p, n, base, &v) < 0)
		return UINT64_MAX;
	return neg ? -v : v;
}
