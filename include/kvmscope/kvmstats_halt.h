/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_halt.h - halt polling from KVM's own statistics (QMP
 * query-stats, libvirt, debugfs): no tracing needed.
 *
 * KVM counts per vCPU (virt/kvm/kvm_main.c, kvm_vcpu_halt() and
 * update_halt_poll_stats()):
 *   halt_exits            halt exits (x86's HLT; absent elsewhere)
 *   halt_successful_poll  halts that ended while polling (the vCPU was
 *                         never scheduled out): wake-ups "polled"
 *   halt_wakeup           wake-ups of a vCPU that slept (kvm_vcpu_wake_up):
 *                         wake-ups "slept"
 *   halt_attempted_poll   halts that polled (successfully or not)
 *   halt_poll_invalid     successful polls woken for no valid reason
 *   halt_poll_success_ns  CPU time of the successful polls
 *   halt_poll_fail_ns     CPU time of the polls that ran out: wasted
 *   halt_wait_ns          time slept after the poll
 * and log2 histograms of the same times (halt_poll_success_hist,
 * halt_poll_fail_hist, halt_wait_hist: bucket 0 holds 0 ns, bucket i the
 * values of i bits, 2^(i-1) .. 2^i - 1 ns, the last one everything
 * larger; kvm_stats_log_hist_update()).  libvirt passes no histograms;
 * debugfs has the VM's sums only (a histogram's file there shows its
 * first bucket: not used).
 *
 *	struct ks_khalt *h; size_t n;
 *	ks_khalt_of(&stats, &h, &n);      // h[0] the VM, then each vCPU
 *	ks_khalt_interval(&now[i], &prev[i], secs, &rates);
 *	free(h);
 */
#ifndef KVMSCOPE_KVMSTATS_HALT_H
#define KVMSCOPE_KVMSTATS_HALT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmstats.h"

enum ks_khalt_hist { KS_KHALT_POLL_OK, KS_KHALT_POLL_FAIL, KS_KHALT_WAIT, KS_KHALT_NHIST };
#define KS_KHALT_MAX_BUCKETS 64

/* Which counters a source gave (bits of ks_khalt.have). */
enum {
	KS_KHALT_HAVE_EXITS = 1u << 0,
	KS_KHALT_HAVE_POLLED = 1u << 1,
	KS_KHALT_HAVE_WAKEUPS = 1u << 2,
	KS_KHALT_HAVE_ATTEMPTED = 1u << 3,
	KS_KHALT_HAVE_INVALID = 1u << 4,
	KS_KHALT_HAVE_POLL_OK_NS = 1u << 5,
	KS_KHALT_HAVE_POLL_FAIL_NS = 1u << 6,
	KS_KHALT_HAVE_WAIT_NS = 1u << 7,
};

struct ks_khalt {
	int32_t vcpu;              /* -1: the VM (its own or its vCPUs' sum) */
	unsigned have;             /* KS_KHALT_HAVE_* */
	uint64_t exits, polled, wakeups, attempted, invalid;
	uint64_t poll_ok_ns, poll_fail_ns, wait_ns;
	/* the log2 histograms; nbuckets 0: not given */
	uint32_t nbuckets[KS_KHALT_NHIST];
	uint64_t buckets[KS_KHALT_NHIST][KS_KHALT_MAX_BUCKETS];
	uint64_t hist_count[KS_KHALT_NHIST];
};

/* The halt statistics of S: *OUT (malloc'd) holds the VM's first (the
 * sum of its vCPUs' where the source gives them per vCPU), then one per
 * vCPU by number.  *N is 0 when S has no halt statistic.  Returns 0,
 * or -1 out of memory. */
int ks_khalt_of(const struct ks_kstats *s, struct ks_khalt **out, size_t *n);

/* The entry of VCPU (-1: the VM) in H of N entries as ks_khalt_of()
 * makes them; NULL if none.  Logarithmic time. */
const struct ks_khalt *ks_khalt_find(const struct ks_khalt *h, size_t n, int32_t vcpu);

/* The largest value, in ns, of bucket B of a KVM log2 histogram of N
 * buckets; UINT64_MAX for the last one (+Inf). */
uint64_t ks_khalt_bucket_max_ns(uint32_t b, uint32_t n);

/* Over an interval of SECS seconds between PREV and NOW (NULL: since the
 * start of the VM, SECS ignored for the totals): */
struct ks_khalt_rates {
	uint64_t halts;            /* halt_exits; without it polled + slept */
	double halts_per_s;
	/* the share of wake-ups that came while polling, in %; < 0 when no
	 * wake-up came */
	double polled_pct;
	double poll_cpu_pct;       /* CPU time polling, % of one CPU */
	double wasted_cpu_pct;     /* of it in polls that ran out */
	bool have_cpu;             /* the poll times were given */
};
void ks_khalt_interval(const struct ks_khalt *now, const struct ks_khalt *prev, double secs,
		       struct ks_khalt_rates *r);

#endif
