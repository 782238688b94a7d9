/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hex.h - one hexadecimal digit's value, for the text parsers (kallsyms,
 * the gdb remote protocol, /proc maps lines).
 */
#ifndef KVMSCOPE_UTIL_HEX_H
#define KVMSCOPE_UTIL_HEX_H

/* The value of hex digit C (either case), or -1. */
static inline int ks_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
