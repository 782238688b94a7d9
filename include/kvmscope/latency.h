/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * latency.h - the one set of latency buckets: the exporter's histograms,
 * the live engines' (BPF and tracefs) and top's p99 all count an exit's
 * handling time into them, so their numbers agree by construction.
 *
 * Upper bounds (ns): 1, 2.5, 5 per decade from 250 ns to 10 s; bucket i
 * counts times <= bound i and > bound i-1, a last bucket (KS_LAT_NBUCKETS,
 * "+Inf") the rest.
 *
 *	uint64_t hist[KS_LAT_NBUCKETS + 1];
 *	hist[ks_lat_bucket_of(ns)]++;
 */
#ifndef KVMSCOPE_LATENCY_H
#define KVMSCOPE_LATENCY_H

#include <stdint.h>

#define KS_LAT_NBUCKETS 24
extern const uint64_t ks_lat_bucket_ns[KS_LAT_NBUCKETS];

/* The bucket of NS: the first bound >= NS, or KS_LAT_NBUCKETS. */
unsigned ks_lat_bucket_of(uint64_t ns);

#endif
