/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_spill.c - record logs within a memory budget (src/util/spill.c):
 * what is pushed is read back in order, record for record, whatever part
 * of it went to the temporary file; the memory held stays within the
 * budget and one chunk per log; a sealed log holds nothing in memory past
 * the budget; logs of one pool interleave in the file and read back apart;
 * a $TMPDIR that cannot be written ends the pushes with an error naming
 * it; and a log read twice (two cursors at once) gives the same records.
 * The reference is the record's own number, computed again.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "util/spill.h"

struct rec {
	uint64_t a, b;
	uint32_t c;
};

static struct rec make(uint64_t i, uint64_t salt)
{
	return (struct rec){ i * 0x9e3779b97f4a7c15ull + salt, ~i, (uint32_t)(i ^ salt) };
}

static bool same(const struct rec *r, uint64_t i, uint64_t salt)
{
	struct rec w = make(i, salt);

	return r->a == w.a && r->b == w.b && r->c == w.c;
}

/* N records through a log of a pool of BUDGET bytes, chunks of CHUNK. */
static void roundtrip(uint64_t budget, size_t chunk, uint64_t n)
{
	struct ks_spill sp;
	struct ks_rlog l;
	struct ks_rlog_cur c1, c2;
	const struct rec *r;
	uint64_t i, bad = 0;

	ks_spill_init(&sp, budget);
	ks_rlog_init(&l, &sp, sizeof(struct rec), chunk);
	for (i = 0; i < n; i++) {
		struct rec *p = ks_rlog_push(&l);

		KT_REQUIRE(p);
		*p = make(i, budget);
		/* held: what the budget keeps, one chunk more being filled */
		if (sp.held > budget + 2 * (uint64_t)l.chunk_recs * sizeof(struct rec))
			bad++;
	}
	KT_EQ_U64(bad, 0);
	KT_EQ_U64(l.n, n);
	ks_rlog_cur_init(&c1, &l);
	ks_rlog_cur_init(&c2, &l);
	for (i = 0; (r = ks_rlog_cur_next(&c1)); i++) {
		const struct rec *r2 = ks_rlog_cur_next(&c2);

		if (!same(r, i, budget) || !r2 || !same(r2, i, budget))
			bad++;
	}
	KT_EQ_U64(i, n);
	KT_EQ_U64(bad, 0);
	KT_EXPECT(ks_rlog_cur_next(&c2) == NULL);
	ks_rlog_cur_free(&c1);
	ks_rlog_cur_free(&c2);
	KT_EQ_INT(ks_spill_error(&sp, NULL), 0);
	if (budget < n * sizeof(struct rec))
		KT_EXPECT(sp.size > 0);
	ks_rlog_free(&l);
	KT_EQ_U64(sp.held, 0);
	ks_spill_free(&sp);
}

static void t_in_memory(void)
{
	roundtrip(64u << 20, 4096, 100000);
}

static void t_spilled(void)
{
	roundtrip(64u << 10, 4096, 300000);
}

static void t_all_to_file(void)
{
	roundtrip(0, 1000, 50001);
}

static void t_odd_sizes(void)
{
	roundtrip(5000, 7, 10000);     /* a record per chunk */
	roundtrip(100000, 3333, 0);    /* empty log */
	roundtrip(100000, 3333, 1);
}

/* Two logs of one pool written in turns, and one sealed. */
static void t_two_logs_seal(void)
{
	struct ks_spill sp;
	struct ks_rlog a, b;
	struct ks_rlog_cur c;
	const struct rec *r;
	uint64_t i, bad = 0;

	ks_spill_init(&sp, 8192);
	ks_rlog_init(&a, &sp, sizeof(struct rec), 1024);
	ks_rlog_init(&b, &sp, sizeof(struct rec), 2048);
	for (i = 0; i < 20000; i++) {
		struct rec *p = ks_rlog_push(i % 3 ? &a : &b);

		KT_REQUIRE(p);
		*p = make(i, 1);
	}
	KT_EQ_INT(ks_rlog_seal(&a), 0);
	KT_EXPECT(a.cur == NULL);
	ks_rlog_cur_init(&c, &a);
	for (i = 0; i < 20000; i++)
		if (i % 3 && (!(r = ks_rlog_cur_next(&c)) || !same(r, i, 1)))
			bad++;
	KT_EXPECT(ks_rlog_cur_next(&c) == NULL);
	ks_rlog_cur_free(&c);
	ks_rlog_cur_init(&c, &b);
	for (i = 0; i < 20000; i += 3)
		if (!(r = ks_rlog_cur_next(&c)) || !same(r, i, 1))
			bad++;
	KT_EXPECT(ks_rlog_cur_next(&c) == NULL);
	ks_rlog_cur_free(&c);
	KT_EQ_U64(bad, 0);
	ks_rlog_free(&a);
	ks_rlog_free(&b);
	KT_EQ_U64(sp.held, 0);
	ks_spill_free(&sp);
}

static void t_tmpdir_unwritable(void)
{
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	struct ks_spill sp;
	struct ks_rlog l;
	struct ks_error err;
	uint64_t i;
	void *p = NULL;

	setenv("TMPDIR", "/nonexistent/kvmscope-spill-test", 1);
	ks_spill_init(&sp, 0);
	ks_rlog_init(&l, &sp, sizeof(struct rec), 4096);
	for (i = 0; i < 10000; i++)
		if (!(p = ks_rlog_push(&l)))
			break;
	KT_EXPECT(p == NULL);
	KT_EXPECT(ks_spill_error(&sp, &err) < 0);
	KT_EXPECT(strstr(err.msg, "cannot write a temporary file in "
			 "/nonexistent/kvmscope-spill-test") != NULL);
	ks_rlog_free(&l);
	ks_spill_free(&sp);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_in_memory),
		KT_CASE(t_spilled),
		KT_CASE(t_all_to_file),
		KT_CASE(t_odd_sizes),
		KT_CASE(t_two_logs_seal),
		KT_CASE(t_tmpdir_unwritable),
		{ 0 },
	};
	return kt_main(cases);
}
