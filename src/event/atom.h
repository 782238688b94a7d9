/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * atom.h - a number in a parsed print fmt, read as libtraceevent reads it.
 *
 * libtraceevent keeps the numbers of a print fmt as text (an "atom":
 * "8", "0x10", "1000L") and evaluates each with strtoull(atom, NULL, 0):
 * the longest number at its start, in C's bases, the rest ignored.  The
 * format guard and the print plans must read an atom to the same value,
 * through the checked parser of src/util.
 *
 *	uint64_t v = ks_atom_value(arg->atom.atom);
 */
#ifndef KVMSCOPE_ATOM_H
#define KVMSCOPE_ATOM_H

#include <stdint.h>

/* What strtoull(ATOM, NULL, 0) returns: after blanks and a sign, the
 * number at the start of ATOM (0x: hex, a leading 0: octal, else decimal;
 * no digits: 0), negated by a '-', UINT64_MAX when it does not fit. */
uint64_t ks_atom_value(const char *atom);

#endif
