/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top.h - per-interval exit accounting for `kvmscope top`.
 *
 * Records go in one at a time (from a live tracefs source or a replayed
 * file: the same struct ks_record stream); every interval is closed with
 * ks_top_interval(), which yields rows per VM, per vCPU, per exit reason
 * of a VM and per exit reason of a vCPU:
 * exits, exits/s, time in exits (% of the vCPUs' time) and p99 latency,
 * and each row's total of exits since the start or the last ks_top_reset()
 * (kvm_stat's Total column).
 *
 *	struct ks_top *t = ks_top_new(src, host, &err);
 *	while (...) { ks_host_observe(host, &rec); ks_top_add(t, &rec); if (interval over) {
 *		ks_top_interval(t, end_ns, &err);
 *		n = ks_top_rows(t, KS_TOP_VM, &rows); ... } }
 *	ks_top_free(t);
 *
 * The accounting is the stat engine's (stat.h, vmexit class, exit -> entry
 * handling time): each interval runs a fresh struct ks_stat, primed with
 * every thread's last entry event and the events after it, so an exit that
 * is pending at the boundary is counted once, in the interval where it
 * ends; the intervals of a whole file add up to `kvmscope stat`.  Its
 * time, though, is split across the intervals it spans (time_ns,
 * time_pct): a vCPU is at most 100% of an interval in exits.
 *
 * Threads are attributed to VMs and vCPUs by the host model (host.h) the
 * caller owns and feeds every record before ks_top_add(): one model for
 * the whole run, so a thread named or bound to its vCPU (COMM, vcpu_load)
 * in an earlier interval keeps its VM and vCPU in the later ones.
 *
 * A row (VM, vCPU, reason) keeps its total across the intervals: the rows
 * of an interval are those with exits in it, then those without whose
 * total is not zero (count 0), as kvm_stat lists an event while its total
 * or its current count is not zero.  Over a whole file, the last
 * interval's totals are what `kvmscope stat` counts.
 */
#ifndef KVMSCOPE_TOP_H
#define KVMSCOPE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"

struct ks_host;
struct ks_source;
struct ks_top;

enum ks_top_level {
	KS_TOP_VM = 0,     /* one row per VM (host process) */
	KS_TOP_VCPU = 1,   /* per VM and vCPU */
	KS_TOP_REASON = 2, /* per VM and exit reason */
	KS_TOP_VCPU_REASON = 3, /* per VM, vCPU and exit reason */
	KS_TOP_LEVELS = 4,
};

struct ks_top_row {
	int32_t vm;          /* host process (or thread group) id; -1 unknown */
	int32_t vcpu;        /* KS_TOP_VCPU and KS_TOP_VCPU_REASON rows; else -1 */
	uint64_t key;        /* KS_TOP_REASON, KS_TOP_VCPU_REASON rows: the exit code */
	char name[64];       /* reason rows: reason name; KS_TOP_VM, KS_TOP_VCPU: the model's VM name or "" */
	uint64_t count;      /* exits that ended in the interval */
	uint64_t total_ns;   /* time in them */
	uint64_t time_ns;    /* time in exits inside the interval: an exit that spans
			      * intervals counts in each for its part there */
	uint64_t p99_ns;
	uint32_t nr_vcpus;   /* vCPUs of the VM active in the interval */
	double rate;         /* exits per second */
	double time_pct;     /* time_ns / (interval * vCPUs) * 100; per vCPU row: of one */
	uint64_t total;      /* exits since the start or the last ks_top_reset(), this
			      * interval's included */
};

/* HOST: the run's host model (kept by the caller, fed every record first);
 * NULL: each interval's engine attributes threads by itself. */
struct ks_top *ks_top_new(struct ks_source *src, const struct ks_host *host,
			  struct ks_error *err);
void ks_top_add(struct ks_top *t, const struct ks_record *rec);
/* Close the interval that ends at END_NS (trace time; it started at the
 * previous end, or at the first record).  Returns 0 or -1 with err set. */
int ks_top_interval(struct ks_top *t, uint64_t end_ns, struct ks_error *err);
/* Rows of the last closed interval at LEVEL (array owned by t). */
size_t ks_top_rows(const struct ks_top *t, enum ks_top_level level,
		   const struct ks_top_row **rows);
/* Zero the totals (kvm_stat's r key): the last interval's rows keep their
 * counts with total 0, those listed for their total alone go; the next
 * intervals add to 0. */
void ks_top_reset(struct ks_top *t);
/* Length of the last interval in ns, records and LOST events seen in it. */
uint64_t ks_top_interval_ns(const struct ks_top *t);
uint64_t ks_top_interval_records(const struct ks_top *t);
uint64_t ks_top_interval_lost(const struct ks_top *t);
/* Trace time of the first record (0 = none yet). */
uint64_t ks_top_first_ts(const struct ks_top *t);
/* "x86"... and the exit table ("VMX") of the accounting. */
const char *ks_top_arch(const struct ks_top *t);

/* Sort ROWS by "exits" (count), "time" (total_ns), "p99" or "name"; ties
 * by count, then total. */
void ks_top_sort(struct ks_top_row *rows, size_t n, const char *column);

/* Call FN(CTX, ST, OCC) for every exit of MIN_NS or more, as it ends
 * (the stat engine's cfg.observe; ST, the interval's engine, names its key
 * and VM: ks_stat_occurrence_key()...).  Call before the first
 * ks_top_add().  Returns 0, or -1 with err set. */
struct ks_stat;
struct ks_stat_occurrence;
typedef void (*ks_top_observe_fn)(void *ctx, const struct ks_stat *st,
				  const struct ks_stat_occurrence *occ);
int ks_top_observe(struct ks_top *t, ks_top_observe_fn fn, void *ctx, uint64_t min_ns,
		   struct ks_error *err);

/* A top fed by a live engine (engine.h) instead of records: each interval
 * is closed with ks_top_engine_interval(), given what the engine counted
 * in it (ks_engine_delta()), its end (CLOCK_MONOTONIC), length and the
 * events it saw; the rows,
 * totals and ks_top_* getters are then those of a record-fed top, except
 * that an exit's time counts whole in the interval where it ends (the
 * engines keep no open exits' start), and p99 is the upper bound of the
 * engine's histogram bucket (ks_lat_bucket_ns). */
struct ks_engine_snapshot;
struct ks_top *ks_top_new_engine(const struct ks_host *host, struct ks_error *err);
int ks_top_engine_interval(struct ks_top *t, const struct ks_engine_snapshot *delta,
			   uint64_t end_ns, uint64_t interval_ns, uint64_t events,
			   struct ks_error *err);

void ks_top_free(struct ks_top *t);

#endif
