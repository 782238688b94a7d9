/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_rows.c - the stat engine's tables of rows: a view's rows by their
 * identity (key, VM, vCPU, thread, info, name table), created in perf's
 * order, listed in perf's iteration order, and what their histograms
 * tell (quantiles, log2 buckets, deviation).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stat_impl.h"

/* A view over DIMS; one by key alone gets its direct index. */
int stat_view_init(struct ks_stat *st, struct view *v, unsigned dims)
{
	v->dims = dims;
	ks_hmap_init_wide(&v->rows, ROW_ID_WORDS, sizeof(struct ks_stat_row *));
	if (dims == KS_DIM_KEY && !(v->direct = stat_calloc(st, DIRECT_KEYS, sizeof(*v->direct))))
		return -1;
	return 0;
}

/* The new row of identity ID in V; TABLE is the key's name table (the
 * row keeps it where the identity leaves it out: perf_compat).  The
 * identity comes as its words' values, so that the lookup's copy of it
 * can stay in registers. */
struct ks_stat_row *stat_row_create(struct ks_stat *st, struct view *v, uint64_t key,
				    uint64_t vm_vcpu, uint64_t thread_info, uint64_t id_table,
				    int32_t table)
{
	const uint64_t id[ROW_ID_WORDS] = { key, vm_vcpu, thread_info, id_table };
	struct ks_stat_row **slot, *r;
	bool created;

	slot = ks_hmap_put_wide(&v->rows, id, &created);
	if (!slot) {
		stat_fail(st, NULL, "%s", "out of memory");
		return &st->spare_row;
	}
	r = stat_calloc(st, 1, sizeof(*r));
	if (!r) {
		ks_hmap_del_wide(&v->rows, id);
		return &st->spare_row;
	}
	r->key = key;
	r->vm = hi32(vm_vcpu);
	r->vcpu = lo32(vm_vcpu);
	r->thread = hi32(thread_info);
	r->info = lo32(thread_info);
	r->table = (v->dims & KS_DIM_KEY) ? table : 0;
	r->seq = st->next_seq++;
	r->min_ns = UINT64_MAX;
	*slot = r;
	return r;
}

static void hist_bucket_range(unsigned chunk, unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e;

	if (chunk == 0) {
		*lo = *hi = idx;
		return;
	}
	e = chunk + 6;
	*lo = ((uint64_t)(128 + idx)) << (e - 7);
	*hi = *lo + ((1ULL << (e - 7)) - 1);
}

double ks_stat_row_stddev_pct(const struct ks_stat_row *row)
{
	double variance, stddev;

	if (row->n < 2)
		return 0.0;
	variance = row->m2 / (row->n - 1);
	stddev = sqrt(variance / row->n);
	return row->mean ? 100.0 * stddev / row->mean : 0.0;
}

uint64_t ks_stat_row_quantile(const struct ks_stat_row *row, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;
	unsigned c, i;

	if (!row->count)
		return 0;
	rank = (uint64_t)ceil(q * (double)row->count);
	if (rank < 1)
		rank = 1;
	if (rank > row->count)
		rank = row->count;
	for (c = 0; c < 64; c++) {
		if (!row->hist[c])
			continue;
		for (i = 0; i < 128; i++) {
			seen += row->hist[c][i];
			if (seen < rank)
				continue;
			hist_bucket_range(c, i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			if (mid < row->min_ns)
				mid = row->min_ns;
			if (mid > row->max_ns)
				mid = row->max_ns;
			return mid;
		}
	}
	return row->max_ns;
}

void ks_stat_row_log2_hist(const struct ks_stat_row *row, uint64_t out[64])
{
	unsigned c, i;

	memset(out, 0, 64 * sizeof(out[0]));
	for (c = 0; c < 64; c++) {
		if (!row->hist[c])
			continue;
		for (i = 0; i < 128; i++) {
			uint64_t lo, hi;

			if (!row->hist[c][i])
				continue;
			hist_bucket_range(c, i, &lo, &hi);
			out[lo ? 63 - __builtin_clzll(lo) : 0] += row->hist[c][i];
		}
	}
}

/* perf walks a 4096-bucket hash (key & 4095) in bucket order, newest row
 * first within a bucket.  The sort keys then apply stably on top. */
static int perf_iteration_cmp(const void *a, const void *b)
{
	const struct ks_stat_row *x = *(struct ks_stat_row *const *)a;
	const struct ks_stat_row *y = *(struct ks_stat_row *const *)b;
	uint64_t bx = x->key & 4095, by = y->key & 4095;

	if (bx != by)
		return bx < by ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq ? 1 : 0;
}

size_t ks_stat_rows(const struct ks_stat *cst, int vi, struct ks_stat_row ***rows)
{
	struct ks_stat *st = (struct ks_stat *)cst;
	struct ks_stat_row **r;
	const uint64_t *id;
	struct view *v;
	size_t pos = 0;

	*rows = NULL;
	if (vi < KS_STAT_BEGINS || vi >= st->nviews)
		return 0;
	v = vi == KS_STAT_BEGINS ? &st->begins : &st->views[vi];
	if (!v->sorted) {
		v->sorted = stat_calloc((struct ks_stat *)st, ks_hmap_len(&v->rows) + 1,
				      sizeof(*v->sorted));
		if (!v->sorted) /* ks_stat_error() says so */
			return 0;
		while ((r = ks_hmap_next_wide(&v->rows, &pos, &id)))
			if ((*r)->count)
				v->sorted[v->nsorted++] = *r;
		qsort(v->sorted, v->nsorted, sizeof(*v->sorted), perf_iteration_cmp);
	}
	*rows = v->sorted;
	return v->nsorted;
}

int ks_stat_nviews(const struct ks_stat *st)
{
	return st->nviews;
}

unsigned ks_stat_view_dims(const struct ks_stat *st, int vi)
{
	return vi >= 0 && vi < st->nviews ? st->views[vi].dims : 0;
}
