/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buf.c - growable buffers and arrays (buf.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"

int ks_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -1;
	q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

int ks_buf_reserve(struct ks_buf *b, size_t more)
{
	size_t cap = b->cap;

	if (more > SIZE_MAX - b->len - 1)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	if (!cap)
		cap = 256;
	while (cap < b->len + more + 1) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	return ks_grow((void **)&b->p, &b->cap, cap, 1);
}

int ks_buf_add(struct ks_buf *b, const void *data, size_t n)
{
	if (ks_buf_reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

int ks_buf_addf(struct ks_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || ks_buf_reserve(b, (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void ks_buf_free(struct ks_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
