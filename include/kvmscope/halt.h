/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * halt.h - halt polling seen from a recording (kvmscope stat --event halt).
 *
 * KVM polls a halted vCPU for up to its poll window (halt_poll_ns) before
 * it sleeps.  At the end of every halt it traces kvm_vcpu_wakeup (ns: the
 * whole halt, polling included; waited: it slept; valid: a real wake-up
 * reason), and, in the same halt just before, kvm_halt_poll_ns whenever the
 * window changes (grow or shrink, old and new value; virt/kvm/kvm_main.c
 * kvm_vcpu_halt()).  This engine counts per VM and vCPU:
 *
 *   halts          kvm_vcpu_wakeup events
 *   polled         waited == 0: the halt ended while polling; its ns is the
 *                  CPU time the successful poll took
 *   waited         waited == 1: the poll window ran out (it was polled for
 *                  the whole window, the kvm_halt_poll_ns `old` of this
 *                  halt, else 0: a window that does not change while halts
 *                  sleep is 0 or polling is off), then it slept: wasted poll
 *                  CPU is min(window, ns)
 *   latency        log-linear histograms (32 buckets an octave) of ns for
 *                  polled and for waited halts
 *   window         grows, shrinks, first/last/min/max, and the changes
 *                  (the first KS_HALT_MAX_CHANGES of the recording)
 *
 * and per VM the recommended window (ks_halt_recommend): the model is in
 * kvmscope-stat(1).  Memory: a fixed size per VM and vCPU.
 *
 *	struct ks_halt *h = ks_halt_new(src, &err);
 *	while (ks_source_next(src, &rec, &err) > 0) ks_halt_add(h, &rec);
 *	ks_halt_print(stdout, h, &opts);
 */
#ifndef KVMSCOPE_HALT_H
#define KVMSCOPE_HALT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "record.h"

struct ks_source;
struct ks_halt;

/* Histogram buckets: values below 64 ns exactly, then 32 an octave up to
 * 2^40 ns (larger values count in the last bucket). */
#define KS_HALT_BUCKETS 1216
#define KS_HALT_MAX_CHANGES 4096

/* Bucket of NS, and the largest value the bucket holds. */
unsigned ks_halt_bucket(uint64_t ns);
uint64_t ks_halt_bucket_max(unsigned b);

struct ks_halt_vcpu {
	int32_t vm, vcpu;
	uint64_t halts, polled, waited, invalid;
	uint64_t poll_ok_ns;     /* CPU in successful polls */
	uint64_t poll_wasted_ns; /* CPU in polls that ran out */
	uint64_t grows, shrinks;
	bool window_known;
	uint32_t window_first, window_last, window_min, window_max;
	uint64_t lat_polled[KS_HALT_BUCKETS], lat_waited[KS_HALT_BUCKETS];
};

struct ks_halt_change {
	uint64_t ts;
	int32_t vm, vcpu;
	uint32_t old_ns, new_ns;
	bool grow;
};

/* The window for one VM that polls as many of the recorded valid halts as
 * possible while polling costs at most BUDGET_PCT % of the VM's vCPU time
 * over the recording. */
struct ks_halt_advice {
	int32_t vm;
	int nvcpus;
	uint64_t span_ns, budget_ns;
	uint64_t halts;            /* valid halts of the model */
	uint64_t window_ns;        /* the recommendation */
	uint64_t wins, cost_ns;    /* polled halts and poll CPU with it */
	uint64_t cost_ok_ns, cost_wasted_ns;
	uint64_t rec_wins, rec_cost_ns; /* as recorded */
};

struct ks_halt *ks_halt_new(const struct ks_source *src, struct ks_error *err);
void ks_halt_free(struct ks_halt *h);
void ks_halt_add(struct ks_halt *h, const struct ks_record *rec);
int ks_halt_error(const struct ks_halt *h, struct ks_error *err);

/* The vCPUs, sorted by VM and vCPU (valid while H lives). */
size_t ks_halt_vcpus(struct ks_halt *h, const struct ks_halt_vcpu *const **out);
size_t ks_halt_changes(const struct ks_halt *h, const struct ks_halt_change **out,
		       uint64_t *dropped);
/* The VMs (sorted); then the advice for one of them. */
size_t ks_halt_vms(struct ks_halt *h, const int32_t **vms);
int ks_halt_recommend(const struct ks_halt *h, int32_t vm, double budget_pct,
		      struct ks_halt_advice *out);
const char *ks_halt_vm_name(const struct ks_halt *h, int32_t vm);
/* Events of vCPUs past the engine's 4096 (not counted, said in the output). */
uint64_t ks_halt_dropped_vcpus(const struct ks_halt *h);
/* Latency quantile Q (0..1) of a histogram: the bucket's largest value. */
uint64_t ks_halt_quantile(const uint64_t *hist, double q);

/* Output (src/output/halt_report.c): text table or JSON. */
struct ks_halt_print_opts {
	const char *input;
	bool json;
	double budget_pct;
};
int ks_halt_print(FILE *out, struct ks_halt *h, const struct ks_halt_print_opts *o);

#endif
