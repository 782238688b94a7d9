/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_buf.c - util/buf.h: text stays NUL-terminated through adds, printf
 * adds of every length around the growth points equal snprintf's text,
 * arrays grow to what is needed, and sizes that overflow fail without
 * touching the buffer or array.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "util/buf.h"

static void t_text(void)
{
	struct ks_buf b = KS_BUF_INIT;
	char want[4096], piece[64];
	size_t n = 0;
	int i;

	for (i = 0; i < 300; i++) {
		snprintf(piece, sizeof(piece), "%d:%.*s;", i, i % 17, "abcdefghijklmnopq");
		KT_EQ_INT(i % 2 ? ks_buf_adds(&b, piece) : ks_buf_addf(&b, "%d:%.*s;", i, i % 17,
									"abcdefghijklmnopq"), 0);
		n += (size_t)snprintf(want + n, n < 3900 ? sizeof(want) - n : 0, "%s", piece);
		if (n >= 3900)
			break;
	}
	KT_EQ_U64(b.len, strlen(b.p));
	KT_EQ_STR(b.p, want);
	KT_EXPECT(b.cap > b.len);
	ks_buf_reset(&b);
	KT_EQ_U64(b.len, 0);
	KT_EQ_STR(b.p, "");
	KT_EQ_INT(ks_buf_add(&b, "x\0y", 3), 0);   /* bytes, NULs included */
	KT_EQ_U64(b.len, 3);
	KT_EXPECT(!memcmp(b.p, "x\0y", 4));
	ks_buf_free(&b);
	KT_EXPECT(b.p == NULL && b.len == 0 && b.cap == 0);
}

static void t_overflow(void)
{
	struct ks_buf b = KS_BUF_INIT;
	int *a = NULL;
	size_t cap = 0;

	KT_EQ_INT(ks_buf_adds(&b, "keep"), 0);
	KT_EQ_INT(ks_buf_reserve(&b, SIZE_MAX - 2), -1);
	KT_EQ_STR(b.p, "keep");
	KT_EQ_INT(ks_grow((void **)&a, &cap, 1000, sizeof(*a)), 0);
	KT_EXPECT(cap >= 1000 && cap < 2048);
	a[999] = 7;
	KT_EQ_INT(ks_grow((void **)&a, &cap, SIZE_MAX / 2, sizeof(*a)), -1);
	KT_EXPECT(cap >= 1000 && cap < 2048 && a[999] == 7);
	KT_EQ_INT(ks_grow((void **)&a, &cap, 10, sizeof(*a)), 0); /* already enough */
	KT_EXPECT(cap >= 1000);
	free(a);
	ks_buf_free(&b);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_text),
		KT_CASE(t_overflow),
		{ 0 },
	};
	return kt_main(cases);
}
