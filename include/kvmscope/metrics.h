/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics.h - cumulative exit metrics for an exporter (kvmscope exporter).
 *
 * Records go in one at a time (a live tracefs source or a replayed file);
 * the pairing of exits and entries, and the VM / vCPU of each host thread,
 * are the stat engine's (stat.h, vmexit class, exit -> entry handling time):
 * this engine only adds each measured exit to
 *   - a counter series per (VM, vCPU, reason): exits and time in them,
 *   - a histogram per (VM, reason) with fixed log-spaced buckets from
 *     250 ns to 10 s (KS_METRICS_BUCKET_NS),
 * so that the totals of a whole file equal `kvmscope stat --by vm,vcpu,reason`.
 *
 * Memory is bounded: at most max_vms VMs, max_series counter series and
 * max_histograms histograms.  What does not fit is folded into one series
 * with domain, vCPU and reason "other" (folded_exits counts those exits).
 *
 *	struct ks_metrics_config cfg = KS_METRICS_CONFIG_INIT;
 *	struct ks_metrics *m = ks_metrics_new(&cfg, src, &err);
 *	while (ks_source_next(src, &rec, &err) > 0) ks_metrics_add(m, &rec);
 *	ks_metrics_snapshot(m, &snap, &err);  ... ks_metrics_snapshot_free(&snap);
 *	ks_metrics_free(m);
 *
 * The engine has no locking: a caller that reads snapshots from another
 * thread serialises ks_metrics_add() and ks_metrics_snapshot() itself (a
 * snapshot is a few memcpy()s; formatting it can then run unlocked).
 */
#ifndef KVMSCOPE_METRICS_H
#define KVMSCOPE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "latency.h"
#include "record.h"

struct ks_source;
struct ks_metrics;


struct ks_metrics_config {
	uint32_t max_vms;        /* 0 = 1024 */
	uint32_t max_series;     /* (VM, vCPU, reason) counter series; 0 = 65536 */
	uint32_t max_histograms; /* (VM, reason) histograms; 0 = 16384 */
	/* The name of VM (host process) PID into BUF (e.g. QEMU's -name);
	 * false when it has none.  NULL: the input's guest name, if any.
	 * Without a name, the domain is the pid in decimal. */
	bool (*vm_name)(void *ctx, int32_t pid, char *buf, size_t len);
	void *vm_name_ctx;
	/* Whether the VM (host process) PID still runs (ctx: vm_name_ctx);
	 * NULL: VMs are never dropped.  At each renewal, VMs that are gone
	 * and had no exit since the last one are dropped with their series. */
	bool (*vm_alive)(void *ctx, int32_t pid);
	/* Renew the stat engine's per-thread state every this many records
	 * (0: never; a live exporter sets it so memory does not grow with
	 * every thread that ever ran).  Exits pending then are not lost. */
	uint64_t rotate_records;
};

#define KS_METRICS_CONFIG_INIT { 0 }

struct ks_metrics_vm {
	int32_t pid;             /* -1: "unknown" or "other" */
	char domain[64];
};

struct ks_metrics_series {
	uint32_t vm, reason;     /* indexes into the snapshot's vms, reasons */
	int32_t vcpu;            /* -1: unknown; -2: other */
	uint64_t count, total_ns;
};

struct ks_metrics_hist {
	uint32_t vm, reason;
	bool halt;               /* a reason the architecture's table says halts
				  * (x86 HLT, arm64 WFx, s390 wait state, loongarch IDLE) */
	uint64_t count, sum_ns;
	uint64_t bucket[KS_LAT_NBUCKETS + 1]; /* per bucket, not cumulative */
};

struct ks_metrics_snapshot {
	char arch[16], isa[16];  /* "x86", "VMX" ("" while unknown) */
	struct ks_metrics_vm *vms;
	size_t nvms;
	char (*reasons)[48];
	size_t nreasons;
	struct ks_metrics_series *series;
	size_t nseries;
	struct ks_metrics_hist *hists;
	size_t nhists;
	uint64_t records;        /* records given to ks_metrics_add() */
	uint64_t lost_events;    /* events the input says were lost */
	uint64_t folded_exits;   /* exits counted under "other" (caps) */
	uint64_t end_without_begin, begin_replaced, end_before_begin;
	uint64_t last_ts;        /* trace time of the last record */
	/* capacities, so that a reused snapshot does not reallocate */
	size_t cap_vms, cap_reasons, cap_series, cap_hists;
};

struct ks_metrics *ks_metrics_new(const struct ks_metrics_config *cfg, struct ks_source *src,
				  struct ks_error *err);
void ks_metrics_add(struct ks_metrics *m, const struct ks_record *rec);
/* A new input (e.g. the next round of a looped replay): pairing state
 * starts afresh for SRC, the metrics go on.  0 or -1 with err set. */
int ks_metrics_restart(struct ks_metrics *m, struct ks_source *src, struct ks_error *err);
/* Renew the stat engine now (see rotate_records).  0 or -1 with err set. */
int ks_metrics_rotate(struct ks_metrics *m, struct ks_error *err);
/* Set every count to zero; the series stay (a replay that announces its
 * series before it counts them: a scraper's first sample is then 0). */
void ks_metrics_zero(struct ks_metrics *m);
/* Copy the current metrics into SNAP (zeroed the first time; reused
 * buffers grow only when needed).  0 or -1 with err set. */
int ks_metrics_snapshot(const struct ks_metrics *m, struct ks_metrics_snapshot *snap,
			struct ks_error *err);
void ks_metrics_snapshot_free(struct ks_metrics_snapshot *snap);
void ks_metrics_free(struct ks_metrics *m);

/* Metrics fed by a live engine (engine.h) instead of records: each
 * ks_metrics_add_engine() adds what the engine counted since the last
 * call (ks_engine_delta()) and EVENTS to the records count; VMs, series,
 * histograms, caps and folding as above; every 240 calls the VMs that
 * are gone (vm_alive) and had no exit since are dropped, as at a
 * rotation.  ks_metrics_add() and the rotation do not apply. */
struct ks_engine_snapshot;
struct ks_metrics *ks_metrics_new_engine(const struct ks_metrics_config *cfg,
					 struct ks_error *err);
void ks_metrics_add_engine(struct ks_metrics *m, const struct ks_engine_snapshot *delta,
			   uint64_t events);


#endif
