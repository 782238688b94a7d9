/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ringpage.c - see ringpage.h.  The event header layout is the kernel's
 * (kernel/trace/ring_buffer.c): a u32 with a 5-bit type_len and a 27-bit
 * time delta, then for type_len 0 a u32 length that includes itself, for
 * padding (29) a u32 length, for time extend / time stamp (30, 31) a u32
 * of time; type_len 1..28 means 4 * type_len bytes of payload.
 */
#include <string.h>

#include "util/byteorder.h"
#include "ringpage.h"

#define TYPE_PADDING 29
#define TYPE_TIME_EXTEND 30
#define TYPE_TIME_STAMP 31

static uint32_t rd32(const uint8_t *p, bool swap)
{
	return ks_load32(p, swap);
}

long ks_ringpage_count(const uint8_t *data, uint32_t commit, uint32_t data_size, bool big,
		       bool swap, uint32_t *events)
{
	uint32_t pos = 0, n = 0;

	while (pos < commit) {
		uint32_t hdr, type_len, idx, len, next;

		if ((uint64_t)pos + 8 > data_size)
			return pos; /* the header and its length word must be readable */
		hdr = rd32(data + pos, swap);
		type_len = big ? hdr >> 27 : hdr & 0x1f;
		idx = pos + 4;
		switch (type_len) {
		case TYPE_PADDING:
			len = rd32(data + idx, swap);
			break;
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP:
			idx += 4;
			len = 0;
			break;
		case 0:
			len = rd32(data + idx, swap);
			if (len < 4)
				return pos;
			len = (len - 4 + 3) & ~3u;
			idx += 4;
			break;
		default:
			len = type_len * 4;
			break;
		}
		n += type_len < TYPE_PADDING;
		next = idx + len; /* 32-bit, as kbuffer computes it */
		if (next <= pos)
			return pos;
		pos = next;
	}
	*events = n;
	return -1;
}

long ks_ringpage_check(const uint8_t *data, uint32_t commit, uint32_t data_size, bool big,
		       bool swap)
{
	uint32_t n;

	return ks_ringpage_count(data, commit, data_size, big, swap, &n);
}
