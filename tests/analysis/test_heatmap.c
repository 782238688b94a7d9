/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_heatmap.c - the heatmap's fixed memory (kvmscope/heatmap.h): over
 * spans from a microsecond to days, with occurrences added out of time
 * order, the bins stay at most KS_HEATMAP_BINS (and more than half of them
 * once the span needs merging), no occurrence is lost, and every cell
 * holds exactly the occurrences that the final bin width puts there,
 * counted here independently from the kept list of additions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/heatmap.h"

#define N 200000

struct occ {
	uint64_t ts, ns;
	int series;
};

/* xorshift: the same numbers on every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_span(uint64_t t0, uint64_t span, uint64_t seed)
{
	static struct occ o[N];
	static const char series[3] = { 'a', 'b', 'c' };
	struct ks_heatmap *hm = ks_heatmap_new();
	uint64_t s = seed, *want, start, width, total = 0;
	unsigned nb, j, b;
	size_t i, k, ns;

	KT_REQUIRE(hm);
	for (i = 0; i < N; i++) {
		/* mostly in order, one in 50 up to 5% of the span earlier, and
		 * the first a tenth into the span: bins move up as well */
		uint64_t back = rnd(&s) % (span / 20 + 1);

		o[i].ts = i ? t0 + span / N * i : t0 + span / 10;
		if (i % 50 == 7)
			o[i].ts -= back < o[i].ts - t0 ? back : o[i].ts - t0;
		o[i].ns = rnd(&s) >> (rnd(&s) % 64);
		o[i].series = (int)(rnd(&s) % 3);
		KT_REQUIRE(ks_heatmap_add(hm, &series[o[i].series], o[i].ts, o[i].ns) == 0);
	}
	nb = ks_heatmap_nbins(hm);
	start = ks_heatmap_start_ns(hm);
	width = ks_heatmap_bin_ns(hm);
	KT_EXPECT(nb >= 1 && nb <= KS_HEATMAP_BINS);
	if (width > KS_HEATMAP_FIRST_BIN_NS)
		KT_EXPECT(nb > KS_HEATMAP_BINS / 2 - 1);
	ns = ks_heatmap_nseries(hm);
	KT_EQ_U64(ns, 3);
	want = calloc((size_t)3 * nb * KS_HEATMAP_BUCKETS, sizeof(*want));
	KT_REQUIRE(want);
	for (i = 0; i < N; i++) {
		KT_REQUIRE(o[i].ts >= start && (o[i].ts - start) / width < nb);
		want[((size_t)o[i].series * nb + (o[i].ts - start) / width) * KS_HEATMAP_BUCKETS +
		     ks_heatmap_bucket(o[i].ns)]++;
	}
	for (k = 0; k < ns; k++) {
		int si = (int)((const char *)ks_heatmap_series(hm, k) - series);

		total += ks_heatmap_series_count(hm, k);
		for (j = 0; j < nb; j++)
			for (b = 0; b < KS_HEATMAP_BUCKETS; b++)
				if (ks_heatmap_cell(hm, k, j, b) !=
				    want[((size_t)si * nb + j) * KS_HEATMAP_BUCKETS + b]) {
					kt_fail(__FILE__, __LINE__, "span %llu: series %d bin %u "
						"bucket %u: %llu, expected %llu",
						(unsigned long long)span, si, j, b,
						(unsigned long long)ks_heatmap_cell(hm, k, j, b),
						(unsigned long long)want[((size_t)si * nb + j) *
									 KS_HEATMAP_BUCKETS + b]);
					goto out;
				}
	}
	KT_EQ_U64(total, N);
out:
	free(want);
	ks_heatmap_free(hm);
}

static void t_spans(void)
{
	check_span(1000, 1000, 1);                       /* a microsecond */
	check_span(123456789, 3000000000ULL, 2);         /* seconds */
	check_span(303280081900681ULL, 86400ULL * 1000000000ULL * 3, 3); /* days */
	check_span(0, 5000000, 4);                       /* from time 0 */
}

static void t_buckets(void)
{
	uint64_t lo, hi;
	unsigned b;

	KT_EQ_U64(ks_heatmap_bucket(0), 0);
	KT_EQ_U64(ks_heatmap_bucket(1), 0);
	KT_EQ_U64(ks_heatmap_bucket(2), 1);
	KT_EQ_U64(ks_heatmap_bucket(1023), 9);
	KT_EQ_U64(ks_heatmap_bucket(1024), 10);
	KT_EQ_U64(ks_heatmap_bucket(UINT64_MAX), KS_HEATMAP_BUCKETS - 1);
	for (b = 1; b < KS_HEATMAP_BUCKETS; b++) {
		ks_heatmap_bucket_range(b, &lo, &hi);
		KT_EQ_U64(ks_heatmap_bucket(lo), b);
		KT_EQ_U64(ks_heatmap_bucket(lo - 1), b - 1);
		if (hi != UINT64_MAX)
			KT_EQ_U64(ks_heatmap_bucket(hi), b);
	}
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_spans), KT_CASE(t_buckets), { 0 } };

	return kt_main(cases);
}
