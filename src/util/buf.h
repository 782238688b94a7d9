/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buf.h - the one growable byte buffer and the one way to grow an array.
 *
 * A struct ks_buf holds LEN bytes at P with room for CAP; whenever text is
 * added it stays NUL-terminated (P[LEN] == 0), so it can be used as a C
 * string.  Sizes are checked for overflow; a failed call leaves the buffer
 * as it was.
 *
 *	struct ks_buf b = KS_BUF_INIT;
 *	if (ks_buf_addf(&b, "%s: %d\n", name, n) < 0) ... out of memory
 *	use(b.p, b.len); ks_buf_free(&b);
 *
 *	if (ks_grow((void **)&rows, &cap, n + 1, sizeof(*rows)) < 0) ...
 *	rows[n++] = row;
 */
#ifndef KVMSCOPE_UTIL_BUF_H
#define KVMSCOPE_UTIL_BUF_H

#include <stddef.h>
#include <string.h>

struct ks_buf {
	char *p;
	size_t len, cap;
};

#define KS_BUF_INIT { NULL, 0, 0 }

/* Room for MORE bytes after LEN and a NUL.  0, or -1 (out of memory). */
int ks_buf_reserve(struct ks_buf *b, size_t more);
/* Append N bytes (NUL-terminated after).  0 or -1. */
int ks_buf_add(struct ks_buf *b, const void *data, size_t n);
static inline int ks_buf_adds(struct ks_buf *b, const char *s)
{
	return ks_buf_add(b, s, strlen(s));
}
int ks_buf_addf(struct ks_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty it, keeping its memory. */
static inline void ks_buf_reset(struct ks_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}
void ks_buf_free(struct ks_buf *b);

/* Make the array at *P (CAP elements of ELEM bytes) hold NEED elements at
 * least, doubling; new elements are not initialised.  0, or -1 (out of
 * memory or overflow) with *P and *CAP unchanged. */
int ks_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
