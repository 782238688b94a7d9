/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * byteorder.h - the one way kvmscope loads a number from a file's bytes:
 * unaligned, in the file's byte order (SWAP: the file's order is not this
 * machine's).  Inline and branch-light, for the record paths; a caller
 * that instantiates a loop per byte order (perfdata.c) passes a constant.
 *
 *	uint32_t size = ks_load32(p, swap);
 *	uint64_t v = ks_load_n(p, field_size, swap);   // 1, 2, 4 or 8 bytes
 */
#ifndef KVMSCOPE_UTIL_BYTEORDER_H
#define KVMSCOPE_UTIL_BYTEORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline __attribute__((always_inline)) uint16_t ks_load16(const void *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

static inline __attribute__((always_inline)) uint32_t ks_load32(const void *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static inline __attribute__((always_inline)) uint64_t ks_load64(const void *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

/* SIZE bytes (1, 2, 4 or 8; else 0), as tep_read_number() reads a field. */
static inline uint64_t ks_load_n(const void *p, int size, bool swap)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		return ks_load16(p, swap);
	case 4:
		return ks_load32(p, swap);
	case 8:
		return ks_load64(p, swap);
	default:
		return 0;
	}
}

/* Whether a file in big-endian order (BIG) needs swapping on this machine. */
static inline bool ks_swap_for(bool big)
{
	return big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

#endif
