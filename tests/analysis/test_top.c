/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_top.c - the running totals of the exits view's engine
 * (kvmscope/top.h), on a real recording cut in intervals as `kvmscope top`
 * cuts it: after every interval each row's total is the sum of its counts
 * since the start or the last ks_top_reset(), every row with such a sum is
 * listed, and a reset leaves the interval's rows with exits, at total 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/host.h"
#include "kvmscope/source.h"
#include "kvmscope/top.h"

#define MAX_KEYS 4096

/* A row's identity and its exits since the start or the reset. */
struct sum {
	int level;
	int32_t vm, vcpu;
	uint64_t key;
	uint64_t exits, listed;
};

struct sums {
	struct sum v[MAX_KEYS];
	size_t n;
	bool full;
};

static struct sum *sum_of(struct sums *s, int level, const struct ks_top_row *r)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].level == level && s->v[i].vm == r->vm && s->v[i].vcpu == r->vcpu &&
		    s->v[i].key == r->key)
			return &s->v[i];
	if (s->n == MAX_KEYS) {
		s->full = true;
		return NULL;
	}
	s->v[s->n] = (struct sum){ .level = level, .vm = r->vm, .vcpu = r->vcpu, .key = r->key };
	return &s->v[s->n++];
}

/* Add the last interval's counts to S, then compare the rows' totals. */
static void check_interval(const struct ks_top *top, struct sums *s, long interval)
{
	const struct ks_top_row *rows;
	size_t n, i;
	int lv;

	for (i = 0; i < s->n; i++)
		s->v[i].listed = 0;
	for (lv = 0; lv < KS_TOP_LEVELS; lv++) {
		n = ks_top_rows(top, (enum ks_top_level)lv, &rows);
		for (i = 0; i < n; i++) {
			struct sum *x = sum_of(s, lv, &rows[i]);

			if (!x)
				return;
			x->exits += rows[i].count;
			x->listed += rows[i].total; /* rows of one key add up */
			/* (a row whose only exit spans the interval has its time) */
			if (!rows[i].count && !rows[i].total && !rows[i].time_ns)
				kt_fail(__FILE__, __LINE__, "interval %ld: level %d vm %d vcpu %d key %llu "
					"listed with neither exits, a total nor time", interval, lv, rows[i].vm,
					rows[i].vcpu, (unsigned long long)rows[i].key);
		}
	}
	for (i = 0; i < s->n; i++)
		if (s->v[i].listed != s->v[i].exits) {
			kt_fail(__FILE__, __LINE__, "interval %ld: level %d vm %d vcpu %d key %llu: "
				"total %llu, exits so far %llu", interval, s->v[i].level, s->v[i].vm,
				s->v[i].vcpu, (unsigned long long)s->v[i].key,
				(unsigned long long)s->v[i].listed, (unsigned long long)s->v[i].exits);
			return;
		}
}

/* After a reset: only the rows with exits in the interval, at total 0. */
static void check_reset(const struct ks_top *top, struct sums *s)
{
	const struct ks_top_row *rows;
	size_t n, i, all = 0;
	int lv;

	for (lv = 0; lv < KS_TOP_LEVELS; lv++) {
		n = ks_top_rows(top, (enum ks_top_level)lv, &rows);
		all += n;
		for (i = 0; i < n; i++)
			if (rows[i].total || !rows[i].count)
				kt_fail(__FILE__, __LINE__, "after the reset, level %d vm %d vcpu %d: "
					"exits %llu, total %llu", lv, rows[i].vm, rows[i].vcpu,
					(unsigned long long)rows[i].count, (unsigned long long)rows[i].total);
	}
	KT_EXPECT(all > 0);
	s->n = 0; /* counting from the next interval */
}

static void t_totals_and_reset(void)
{
	const char *path = kt_shared("data/hip24/host-2vcpu-22k.trace.dat");
	const uint64_t period = 500000000; /* 0.5 s, as the CLI test */
	struct sums *s = calloc(1, sizeof(*s));
	uint64_t start = 0, boundary = 0;
	struct ks_source *src;
	struct ks_host *host;
	struct ks_top *top;
	struct ks_record rec;
	struct ks_error err;
	long interval = 0, zero_rows = 0;
	bool reset = false, busy;
	int r;

	KT_REQUIRE(s);
	if (!path) {
		kt_skip("data/hip24/host-2vcpu-22k.trace.dat is absent");
		free(s);
		return;
	}
	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	host = ks_host_new(NULL, src, &err);
	KT_REQUIRE(host);
	top = ks_top_new(src, host, &err);
	KT_REQUIRE(top);
	while ((r = ks_source_next(src, &rec, &err)) > 0 && !kt_failed()) {
		if (!start && rec.ts) {
			start = rec.ts;
			boundary = start + period;
		}
		while (rec.ts && rec.ts >= boundary && !kt_failed()) {
			const struct ks_top_row *rows;
			size_t n, i;

			KT_REQUIRE(ks_top_interval(top, boundary, &err) == 0);
			interval++;
			boundary += period;
			check_interval(top, s, interval);
			n = ks_top_rows(top, KS_TOP_VCPU_REASON, &rows);
			for (i = 0, busy = false; i < n; i++) {
				zero_rows += !rows[i].count;
				busy |= rows[i].count > 0;
			}
			/* a reset in the middle of the run, in an interval with exits */
			if (interval >= 100 && busy && !reset) {
				ks_top_reset(top);
				check_reset(top, s);
				reset = true;
			}
		}
		ks_host_observe(host, &rec);
		ks_top_add(top, &rec);
	}
	KT_EQ_INT(r, 0);
	KT_EXPECT(!s->full);
	KT_EXPECT(reset);
	/* rows listed for their total alone were seen */
	KT_EXPECT(zero_rows > 0);
	ks_top_free(top);
	ks_host_free(host);
	ks_source_close(src);
	free(s);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_totals_and_reset), { 0 },
	};

	return kt_main(cases);
}
