/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * latency.c - the latency buckets (include/kvmscope/latency.h).
 */
#include "kvmscope/latency.h"

const uint64_t ks_lat_bucket_ns[KS_LAT_NBUCKETS] = {
	250, 500, 1000,
	2500, 5000, 10000,
	25000, 50000, 100000,
	250000, 500000, 1000000,
	2500000, 5000000, 10000000,
	25000000, 50000000, 100000000,
	250000000, 500000000, 1000000000,
	2500000000ull, 5000000000ull, 10000000000ull,
};

unsigned ks_lat_bucket_of(uint64_t ns)
{
	unsigned lo = 0, hi = KS_LAT_NBUCKETS; /* first bound >= ns, or NBUCKETS */

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (ks_lat_bucket_ns[mid] >= ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}
