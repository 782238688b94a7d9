/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * heatmap.h - latency over time: counts per series (an exit reason, or a
 * VM/vCPU/reason row), time bin and log2 latency bucket.
 *
 *	struct ks_heatmap *hm = ks_heatmap_new();
 *	ks_heatmap_add(hm, series, begin_ts, ns);   // once per occurrence
 *	... ks_heatmap_nbins(hm), ks_heatmap_cell(hm, i, bin, bucket) ...
 *	ks_heatmap_free(hm);
 *
 * Memory is bounded whatever the input's size: at most KS_HEATMAP_BINS time
 * bins of a width that doubles (adjacent bins merged) whenever a timestamp
 * falls past the last one, so no first pass over the input is needed and
 * the bins end up between half and all of KS_HEATMAP_BINS; at most
 * KS_HEATMAP_MAX_SERIES series.  Every occurrence added is in exactly one
 * cell, so a series' cells add up to its count.
 */
#ifndef KVMSCOPE_HEATMAP_H
#define KVMSCOPE_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#define KS_HEATMAP_BINS 100         /* time bins, at most */
#define KS_HEATMAP_BUCKETS 40       /* latency buckets: [2^b, 2^(b+1)) ns; b = 0
				     * holds 0 and 1 ns, the last all above */
#define KS_HEATMAP_MAX_SERIES 1024
#define KS_HEATMAP_FIRST_BIN_NS 1000 /* the width the bins start with */

struct ks_heatmap;

struct ks_heatmap *ks_heatmap_new(void);
void ks_heatmap_free(struct ks_heatmap *hm);
/* One occurrence of SERIES (any pointer that names it; the caller's rows)
 * that began at TS (ns) and took NS.  Returns 0, or -1 when out of memory
 * or past KS_HEATMAP_MAX_SERIES (nothing is counted then). */
int ks_heatmap_add(struct ks_heatmap *hm, const void *series, uint64_t ts, uint64_t ns);

/* The series in the order they were first added, and their counts. */
size_t ks_heatmap_nseries(const struct ks_heatmap *hm);
const void *ks_heatmap_series(const struct ks_heatmap *hm, size_t i);
uint64_t ks_heatmap_series_count(const struct ks_heatmap *hm, size_t i);
/* The time bins: bin j covers [start + j * width, start + (j + 1) * width)
 * ns; 0 bins when nothing was added. */
unsigned ks_heatmap_nbins(const struct ks_heatmap *hm);
uint64_t ks_heatmap_start_ns(const struct ks_heatmap *hm);
uint64_t ks_heatmap_bin_ns(const struct ks_heatmap *hm);
/* Occurrences of series I in time bin J and latency bucket B. */
uint64_t ks_heatmap_cell(const struct ks_heatmap *hm, size_t i, unsigned j, unsigned b);
/* The latency bucket of NS, and bucket B's range [*lo, *hi] in ns (the
 * last bucket's hi is UINT64_MAX). */
unsigned ks_heatmap_bucket(uint64_t ns);
void ks_heatmap_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
