/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_engine.c - what the live engines' consumers do with a snapshot
 * (kvmscope/engine.h), against sums computed here: the bucket rule at
 * and around every bound, the deltas between two cumulative snapshots,
 * a snapshot turned into the stat engine's rows (counts, totals, min,
 * max, p99 from the buckets, the vCPU filter), and top's rows and
 * running totals over two intervals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/engine.h"
#include "kvmscope/metrics.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/top.h"
#include "kvmscope/tpcount.h"

/* The bucket of NS by the rule's words: the number of bounds below NS. */
static unsigned bucket_by_hand(uint64_t ns)
{
	unsigned i, n = 0;

	for (i = 0; i < KS_LAT_NBUCKETS; i++)
		n += ks_lat_bucket_ns[i] < ns;
	return n;
}

static void t_bucket_rule(void)
{
	uint64_t probes[] = { 0, 1, 249, 250, 251, 999, 1000, 1001, 10000000000ull,
			      10000000001ull, UINT64_MAX };
	unsigned i;

	for (i = 0; i < KS_LAT_NBUCKETS; i++) {
		uint64_t b = ks_lat_bucket_ns[i];

		KT_EQ_INT(ks_lat_bucket_of(b), i);       /* <= bound i */
		KT_EQ_INT(ks_lat_bucket_of(b - 1), bucket_by_hand(b - 1));
		KT_EQ_INT(ks_lat_bucket_of(b + 1), i + 1); /* the next one */
	}
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		KT_EQ_INT(ks_lat_bucket_of(probes[i]), bucket_by_hand(probes[i]));
	KT_EQ_INT(ks_lat_bucket_of(UINT64_MAX), KS_LAT_NBUCKETS);
}

/* One series of COUNT exits of NS each. */
static struct ks_engine_exit series(int32_t pid, int32_t tid, int32_t vcpu, uint64_t reason,
				    uint64_t count, uint64_t ns)
{
	struct ks_engine_exit x = { .pid = pid, .tid = tid, .vcpu = vcpu, .isa = 1, .level = 1,
				    .reason = reason, .count = count, .sum_ns = count * ns,
				    .min_ns = ns, .max_ns = ns };

	x.bucket[ks_lat_bucket_of(ns)] = count;
	return x;
}

static void snap_set(struct ks_engine_snapshot *s, struct ks_engine_exit *x, size_t n,
		     struct ks_engine_tp *tp, size_t ntp)
{
	memset(s, 0, sizeof(*s));
	s->exits = x;
	s->nexits = n;
	s->tps = tp;
	s->ntps = ntp;
	snprintf(s->engine, sizeof(s->engine), "test");
	snprintf(s->arch, sizeof(s->arch), "x86");
	snprintf(s->isa, sizeof(s->isa), "VMX");
}

static void t_delta(void)
{
	struct ks_engine_exit px[2] = { series(10, 11, 0, 30, 5, 1000), series(10, 12, 1, 12, 2, 300) };
	struct ks_engine_exit cx[4] = { series(10, 11, 0, 30, 8, 1000), series(10, 12, 1, 12, 2, 300),
					series(20, 21, 0, 30, 4, 20000),
					series(10, 13, 2, 30, 1, 5000) };
	struct ks_engine_tp ptp[1] = { { .pid = 10, .name = "kvm_pio", .count = 7 } };
	struct ks_engine_tp ctp[2] = { { .pid = 10, .name = "kvm_pio", .count = 9 },
				       { .pid = 20, .name = "kvm_pio", .count = 3 } };
	struct ks_engine_snapshot prev, cur, d = { 0 };
	struct ks_error err;
	size_t i;

	/* the last series restarted (a renewed map): lower than before */
	px[1].count = 2;
	snap_set(&prev, px, 2, ptp, 1);
	snap_set(&cur, cx, 4, ctp, 2);
	prev.lost = 4;
	cur.lost = 6;
	cur.overflow_series = 1;
	KT_REQUIRE(ks_engine_delta(&prev, &cur, &d, &err) == 0);
	/* grown: (10,11) by 3; new: (20,21) 4 and (10,13) 1; unchanged (10,12) left out */
	KT_EQ_U64(d.nexits, 3);
	for (i = 0; i < d.nexits; i++) {
		const struct ks_engine_exit *x = &d.exits[i];

		if (x->tid == 11) {
			KT_EQ_U64(x->count, 3);
			KT_EQ_U64(x->sum_ns, 3000);
			KT_EQ_U64(x->bucket[ks_lat_bucket_of(1000)], 3);
		} else if (x->tid == 21) {
			KT_EQ_U64(x->count, 4);
		} else {
			KT_EQ_INT(x->tid, 13);
			KT_EQ_U64(x->count, 1);
		}
	}
	KT_EQ_U64(d.ntps, 2);
	for (i = 0; i < d.ntps; i++)
		KT_EQ_U64(d.tps[i].count, d.tps[i].pid == 10 ? 2 : 3);
	KT_EQ_U64(d.lost, 2);
	KT_EQ_U64(d.overflow_series, 1);
	/* from nothing: everything */
	KT_REQUIRE(ks_engine_delta(NULL, &cur, &d, &err) == 0);
	KT_EQ_U64(d.nexits, 4);
	KT_EQ_U64(d.lost, 6);
	ks_engine_snapshot_free(&d);
}

static struct ks_stat_row *row_of(struct ks_stat *st, int view, int32_t vm, int32_t vcpu,
				  uint64_t key)
{
	struct ks_stat_row **rows;
	size_t n = ks_stat_rows(st, view, &rows), i;

	for (i = 0; i < n; i++)
		if (rows[i]->vm == vm && rows[i]->vcpu == vcpu && rows[i]->key == key)
			return rows[i];
	return NULL;
}

static void t_to_stat(void)
{
	/* 99 exits at 600 ns and one of 20 us (VM 10, vCPU 0, reason 30);
	 * VM 20 vCPU 1: 4 of 3 us */
	struct ks_engine_exit x[3] = { series(10, 11, 0, 30, 99, 600), series(10, 11, 0, 30, 0, 0),
				       series(20, 21, 1, 30, 4, 3000) };
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info = { .format = "test" };
	struct ks_engine_snapshot s;
	struct ks_stat_row *r;
	struct ks_error err;
	struct ks_stat *st;
	uint64_t p99;

	x[0].count = 100;
	x[0].sum_ns = 99 * 600 + 20000;
	x[0].max_ns = 20000;
	x[0].bucket[ks_lat_bucket_of(20000)] = 1;
	x[1] = x[0]; /* another thread of the same vCPU: the rows add both */
	x[1].tid = 12;
	snap_set(&s, x, 3, NULL, 0);
	cfg.arch = "x86";
	cfg.no_begin_counts = true;
	cfg.views[0] = KS_DIM_KEY;
	cfg.views[1] = KS_DIM_VM | KS_DIM_VCPU | KS_DIM_KEY;
	st = ks_stat_new(&cfg, &info, &err);
	KT_REQUIRE(st);
	ks_engine_to_stat(&s, st);
	KT_REQUIRE(ks_stat_error(st, &err) == 0);
	r = row_of(st, 0, -1, -1, 30);
	KT_REQUIRE(r);
	KT_EQ_U64(r->count, 204);
	KT_EQ_U64(r->total_ns, 2 * (99 * 600 + 20000) + 4 * 3000);
	KT_EQ_U64(r->min_ns, 600);
	KT_EQ_U64(r->max_ns, 20000);
	r = row_of(st, 1, 10, 0, 30);
	KT_REQUIRE(r);
	KT_EQ_U64(r->count, 200);
	/* rank 198 of 200 is in the bucket <= 1000 ns: p99 is its bound */
	p99 = ks_stat_row_quantile(r, 0.99);
	KT_EXPECT(p99 >= 992 && p99 <= 1008);
	r = row_of(st, 1, 20, 1, 30);
	KT_REQUIRE(r);
	KT_EQ_U64(r->count, 4);
	KT_EQ_U64(ks_stat_row_quantile(r, 0.99), 3000); /* min == max: within them */
	ks_stat_free(st);
	/* --vcpu 1 keeps VM 20's exits only */
	cfg.vcpu = 1;
	st = ks_stat_new(&cfg, &info, &err);
	KT_REQUIRE(st);
	ks_engine_to_stat(&s, st);
	r = row_of(st, 0, -1, -1, 30);
	KT_REQUIRE(r);
	KT_EQ_U64(r->count, 4);
	ks_stat_free(st);
}

static void t_top_intervals(void)
{
	struct ks_engine_exit x1[1] = { series(10, 11, 0, 30, 5, 1000) };
	struct ks_engine_exit x2[2] = { series(10, 11, 0, 30, 3, 1000), series(10, 12, 1, 12, 2, 400) };
	struct ks_engine_tp tp[1] = { { .pid = 10, .name = "kvm_pio", .count = 6 } };
	const struct ks_top_row *rows;
	const struct ks_tpcount_row *trows;
	struct ks_engine_snapshot d;
	struct ks_error err;
	struct ks_top *t = ks_top_new_engine(NULL, &err);
	struct ks_tpcount *c = ks_tpcount_new(NULL, NULL, &err);
	size_t n, i;
	bool io = false;

	KT_REQUIRE(t && c);
	snap_set(&d, x1, 1, tp, 1);
	KT_REQUIRE(ks_top_engine_interval(t, &d, 2000000000ull, 1000000000ull, 5, &err) == 0);
	ks_tpcount_add_engine(c, &d);
	ks_tpcount_interval(c);
	snap_set(&d, x2, 2, tp, 1);
	KT_REQUIRE(ks_top_engine_interval(t, &d, 4000000000ull, 2000000000ull, 5, &err) == 0);
	ks_tpcount_add_engine(c, &d);
	ks_tpcount_interval(c);
	n = ks_top_rows(t, KS_TOP_VM, &rows);
	KT_EQ_U64(n, 1);
	KT_EQ_U64(rows[0].count, 5);
	KT_EQ_U64(rows[0].total, 10);
	KT_EQ_U64(rows[0].total_ns, 3 * 1000 + 2 * 400);
	KT_EXPECT(rows[0].rate > 2.49 && rows[0].rate < 2.51); /* 5 in 2 s */
	KT_EQ_U64(rows[0].nr_vcpus, 2);
	n = ks_top_rows(t, KS_TOP_REASON, &rows);
	KT_EQ_U64(n, 2);
	for (i = 0; i < n; i++)
		if (rows[i].key == 30) {
			io = true;
			KT_EQ_STR(rows[i].name, "IO_INSTRUCTION");
			KT_EQ_U64(rows[i].total, 8);
		}
	KT_EXPECT(io);
	KT_EQ_U64(ks_top_interval_ns(t), 2000000000ull);
	KT_EQ_U64(ks_top_first_ts(t), 1000000000ull);
	/* tracepoints: kvm_pio 6 in each interval, kvm_exit(REASON) children
	 * of the exits */
	n = ks_tpcount_rows(c, &trows);
	io = false;
	for (i = 0; i < n; i++) {
		if (!strcmp(trows[i].name, "kvm_pio")) {
			KT_EQ_U64(trows[i].count, 6);
			KT_EQ_U64(trows[i].total, 12);
		}
		if (!strcmp(trows[i].name, "kvm_exit(IO_INSTRUCTION)")) {
			io = true;
			KT_EXPECT(trows[i].child);
			KT_EQ_U64(trows[i].total, 8);
		}
	}
	KT_EXPECT(io);
	ks_tpcount_free(c);
	ks_top_free(t);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_bucket_rule),
		KT_CASE(t_delta),
		KT_CASE(t_to_stat),
		KT_CASE(t_top_intervals),
		{ 0 },
	};
	return kt_main(cases);
}
