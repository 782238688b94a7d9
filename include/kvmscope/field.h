/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * field.h - fast access to tracepoint fields in raw payloads.
 *
 * Resolve a field once per event format with ks_field_resolve(), then read it
 * in the hot loop with ks_field_u64(): no string lookups, byte order and
 * bounds handled here.  A field that does not exist in the format is
 * "absent" (present == false) and reads as 0.
 */
#ifndef KVMSCOPE_FIELD_H
#define KVMSCOPE_FIELD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "record.h"

struct tep_event;

struct ks_field {
	int32_t offset;
	int32_t size;      /* 1, 2, 4 or 8 */
	bool is_signed;
	bool swap;         /* payload byte order differs from host order */
	bool present;
};

/* Look NAME up in EV (NULL EV allowed).  Returns 0, or -1 when the event
 * has no such scalar field (f->present is then false). */
int ks_field_resolve(struct ks_field *f, struct tep_event *ev, const char *name);

/* Read the field from a payload.  Signed fields are sign-extended.  Returns
 * 0 (and *ok = false when ok is non-NULL) if the payload is too short. */
static inline uint64_t ks_field_read(const struct ks_field *f, const void *data,
				     uint32_t size, bool *ok)
{
	const unsigned char *p;
	uint64_t v = 0;

	/* checked before P is formed: DATA is NULL for a sample without RAW */
	if (!f->present || f->offset < 0 || (uint64_t)f->offset + (uint64_t)f->size > size) {
		if (ok)
			*ok = false;
		return 0;
	}
	p = (const unsigned char *)data + f->offset;
	if (ok)
		*ok = true;
	switch (f->size) {
	case 1:
		return f->is_signed ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
	case 2: {
		uint16_t x;
		memcpy(&x, p, 2);
		if (f->swap)
			x = __builtin_bswap16(x);
		return f->is_signed ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p, 4);
		if (f->swap)
			x = __builtin_bswap32(x);
		return f->is_signed ? (uint64_t)(int64_t)(int32_t)x : x;
	}
	case 8:
		memcpy(&v, p, 8);
		return f->swap ? __builtin_bswap64(v) : v;
	default:
		return 0;
	}
}

static inline uint64_t ks_field_u64(const struct ks_field *f, const struct ks_record *r)
{
	return ks_field_read(f, r->data, r->size, (bool *)0);
}

#endif
