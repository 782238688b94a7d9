/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * heatmap.c - latency over time in fixed memory (see include/kvmscope/heatmap.h).
 *
 * Time bins are numbered absolutely (ts / width) and kept from BASE, the
 * bin of the earliest occurrence, on: an occurrence past the last kept bin
 * doubles the width (absolute bin a becomes a / 2, so two neighbours merge
 * and BASE stays the earliest), and one before BASE (occurrences are added
 * as they end, so a long one may have begun before a short one added
 * earlier) moves the bins up when they fit, else merges too.  No
 * occurrence is ever dropped or counted twice.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/heatmap.h"
#include "util/hashmap.h"

#define CELLS (KS_HEATMAP_BINS * KS_HEATMAP_BUCKETS)

struct series {
	const void *id;
	uint64_t count;
	uint64_t *cells;  /* [bin][bucket] */
};

struct ks_heatmap {
	struct ks_hmap index;  /* series id -> size_t index in s */
	struct series *s;
	size_t n, cap;
	uint64_t width;        /* ns per bin */
	uint64_t base;         /* absolute bin (ts / width) of cell 0 */
	unsigned used;         /* bins used: 0 .. used - 1 */
};

struct ks_heatmap *ks_heatmap_new(void)
{
	struct ks_heatmap *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return NULL;
	ks_hmap_init(&hm->index, sizeof(size_t));
	hm->width = KS_HEATMAP_FIRST_BIN_NS;
	return hm;
}

void ks_heatmap_free(struct ks_heatmap *hm)
{
	size_t i;

	if (!hm)
		return;
	for (i = 0; i < hm->n; i++)
		free(hm->s[i].cells);
	free(hm->s);
	ks_hmap_free(&hm->index);
	free(hm);
}

unsigned ks_heatmap_bucket(uint64_t ns)
{
	unsigned b = ns < 2 ? 0 : 63 - (unsigned)__builtin_clzll(ns);

	return b < KS_HEATMAP_BUCKETS ? b : KS_HEATMAP_BUCKETS - 1;
}

void ks_heatmap_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	*lo = b ? 1ULL << b : 0;
	*hi = b + 1 >= KS_HEATMAP_BUCKETS ? UINT64_MAX : (2ULL << b) - 1;
}

/* Double the width: absolute bin a goes to a / 2. */
static void merge_bins(struct ks_heatmap *hm)
{
	uint64_t nbase = hm->base / 2;
	unsigned j, to, b;
	size_t i;

	for (i = 0; i < hm->n; i++) {
		uint64_t *c = hm->s[i].cells;

		for (j = 0; j < hm->used; j++) {
			to = (unsigned)((hm->base + j) / 2 - nbase);
			if (to == j)
				continue;
			for (b = 0; b < KS_HEATMAP_BUCKETS; b++) {
				c[to * KS_HEATMAP_BUCKETS + b] += c[j * KS_HEATMAP_BUCKETS + b];
				c[j * KS_HEATMAP_BUCKETS + b] = 0;
			}
		}
	}
	if (hm->used)
		hm->used = (unsigned)((hm->base + hm->used - 1) / 2 - nbase + 1);
	hm->base = nbase;
	hm->width *= 2;
}

/* Move the bins K up (BASE down by K); the caller checked that they fit. */
static void shift_bins(struct ks_heatmap *hm, unsigned k)
{
	size_t i;

	for (i = 0; i < hm->n; i++) {
		uint64_t *c = hm->s[i].cells;

		memmove(c + (size_t)k * KS_HEATMAP_BUCKETS, c,
			(size_t)hm->used * KS_HEATMAP_BUCKETS * sizeof(*c));
		memset(c, 0, (size_t)k * KS_HEATMAP_BUCKETS * sizeof(*c));
	}
	hm->base -= k;
	hm->used += k;
}

/* The cell index of TS, after merging or moving the bins as needed. */
static unsigned bin_of(struct ks_heatmap *hm, uint64_t ts)
{
	uint64_t a;

	if (!hm->used) {
		hm->base = ts / hm->width;
		hm->used = 1;
		return 0;
	}
	for (;;) {
		a = ts / hm->width;
		if (a >= hm->base && a - hm->base < KS_HEATMAP_BINS)
			break;
		if (a < hm->base && hm->base - a + hm->used <= KS_HEATMAP_BINS) {
			shift_bins(hm, (unsigned)(hm->base - a));
			break;
		}
		merge_bins(hm);
	}
	if (a - hm->base >= hm->used)
		hm->used = (unsigned)(a - hm->base + 1);
	return (unsigned)(a - hm->base);
}

int ks_heatmap_add(struct ks_heatmap *hm, const void *id, uint64_t ts, uint64_t ns)
{
	struct series *s;
	bool created;
	size_t *v;
	unsigned j;

	v = ks_hmap_put(&hm->index, (uintptr_t)id, &created);
	if (!v)
		return -1;
	if (created) {
		if (hm->n == KS_HEATMAP_MAX_SERIES)
			goto refuse;
		if (hm->n == hm->cap) {
			size_t cap = hm->cap ? hm->cap * 2 : 16;
			struct series *grown = realloc(hm->s, cap * sizeof(*grown));

			if (!grown)
				goto refuse;
			hm->s = grown;
			hm->cap = cap;
		}
		s = &hm->s[hm->n];
		s->id = id;
		s->count = 0;
		s->cells = calloc(CELLS, sizeof(*s->cells));
		if (!s->cells)
			goto refuse;
		*v = hm->n++;
	}
	s = &hm->s[*v];
	j = bin_of(hm, ts);
	s->cells[j * KS_HEATMAP_BUCKETS + ks_heatmap_bucket(ns)]++;
	s->count++;
	return 0;
refuse:
	ks_hmap_del(&hm->index, (uintptr_t)id);
	return -1;
}

size_t ks_heatmap_nseries(const struct ks_heatmap *hm)
{
	return hm->n;
}

const void *ks_heatmap_series(const struct ks_heatmap *hm, size_t i)
{
	return i < hm->n ? hm->s[i].id : NULL;
}

uint64_t ks_heatmap_series_count(const struct ks_heatmap *hm, size_t i)
{
	return i < hm->n ? hm->s[i].count : 0;
}

unsigned ks_heatmap_nbins(const struct ks_heatmap *hm)
{
	return hm->used;
}

uint64_t ks_heatmap_start_ns(const struct ks_heatmap *hm)
{
	return hm->base * hm->width;
}

uint64_t ks_heatmap_bin_ns(const struct ks_heatmap *hm)
{
	return hm->width;
}

uint64_t ks_heatmap_cell(const struct ks_heatmap *hm, size_t i, unsigned j, unsigned b)
{
	if (i >= hm->n || j >= hm->used || b >= KS_HEATMAP_BUCKETS)
		return 0;
	return hm->s[i].cells[j * KS_HEATMAP_BUCKETS + b];
}
