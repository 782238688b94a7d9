/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine.h - live exit accounting behind one interface: the BPF engine
 * (pairing and histograms in the kernel) and the tracefs engine (events
 * streamed through a tracefs instance and paired here, by the stat
 * engine), so that `top`, `exporter` and `stat --live` read the same
 * numbers whichever engine runs.
 *
 * An engine pairs each vCPU thread's exit with its next entry, as the stat
 * engine pairs kvm_exit -> kvm_entry (stat.h, vmexit class), and keeps
 * cumulative series keyed by (process, thread, vCPU, ISA, level, reason):
 * count, total, min, max and a histogram with the exporter's buckets
 * (ks_metrics_bucket_ns, metrics.h: bucket[i] counts handling times
 * <= bound i and > bound i-1; the last one the rest).  With
 * cfg.tracepoints it also counts every kvm:* event per process (kvm_stat's
 * tracepoint view).  What does not fit the configured sizes is counted in
 * the overflow fields, never dropped silently.
 *
 *	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;   // .kind = AUTO
 *	struct ks_engine *e;
 *	char why[256];
 *	if (ks_engine_open(&e, &cfg, why, sizeof why, &err) < 0) die(err.msg);
 *	if (why[0]) warn("%s", why);         // AUTO fell back to tracefs: why
 *	while (!stop) {
 *		ks_engine_wait(e, STDIN_FILENO, 100, &key);   // drains, sleeps
 *		if (interval over) ks_engine_read(e, &snap, &err);   // cumulative
 *	}
 *	ks_engine_snapshot_free(&snap); ks_engine_close(e);
 */
#ifndef KVMSCOPE_ENGINE_H
#define KVMSCOPE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "metrics.h"

struct ks_engine;
struct ks_host;
struct ks_live;

enum ks_engine_kind {
	KS_ENGINE_AUTO = 0,     /* BPF where it loads, else tracefs (why says why) */
	KS_ENGINE_BPF,
	KS_ENGINE_TRACEFS,
};

struct ks_engine_config {
	enum ks_engine_kind kind;
	uint32_t max_threads;   /* pending exits (vCPU threads); 0 = 16384 */
	uint32_t max_series;    /* exit series; 0 = 65536 */
	uint32_t max_procs;     /* processes in the tracepoint counts; 0 = 1024 */
	bool exits;             /* pair exits (top, exporter, stat --live) */
	bool tracepoints;       /* count every kvm:* event per process */
	int32_t pid;            /* only this process (0 = all) */
	/* tracefs engine: the caller's host model, fed every record (NULL:
	 * the engine keeps its own); its instance hooks (ks_live_opts.track,
	 * live.h: the caller removes the instance on the exits it sees). */
	struct ks_host *host;
	int (*track)(void *ctx, struct ks_live *l, const char *dir, bool add);
	void *track_ctx;
	uint32_t buffer_kb;     /* tracefs per-CPU ring buffer; 0 = 4096 */
};

#define KS_ENGINE_CONFIG_INIT { .kind = KS_ENGINE_AUTO, .exits = true }

struct ks_engine_exit {
	int32_t pid, tid;       /* process (VM) and thread */
	int32_t vcpu;           /* vCPU id (the event's vcpu_id, or the host model's); -1 unknown */
	uint16_t isa;           /* x86: the exit's table, KS_ISA_VMX / KS_ISA_SVM
				 * (arch.h); other architectures: the vmexit
				 * class's name table of the reason (arm64: 0
				 * exception type, 1 EC) */
	uint8_t level;          /* 1: the VM's own exit; 2: an exit of its nested (L2) guest */
	uint64_t reason;        /* exit code as the stat engine keys it */
	uint64_t count, sum_ns, min_ns, max_ns;
	uint64_t bucket[KS_METRICS_NBUCKETS + 1];
};

struct ks_engine_tp {
	int32_t pid;            /* process */
	char name[64];          /* event name in system kvm: "kvm_exit" */
	uint64_t count;
};

struct ks_engine_snapshot {
	char engine[16];            /* "bpf" or "tracefs" */
	char arch[16], isa[16];     /* "x86", "SVM" ("" while unknown) */
	struct ks_engine_exit *exits;
	size_t nexits, cap_exits;
	struct ks_engine_tp *tps;
	size_t ntps, cap_tps;
	uint64_t overflow_threads;  /* exits not kept: the pending map was full */
	uint64_t overflow_series;   /* exits not counted: the series map was full */
	uint64_t overflow_procs;    /* events not counted: the process map was full */
	uint64_t lost;              /* events the kernel dropped (tracefs); 0 for bpf */
	uint64_t unpaired;          /* entries without a pending exit */
	uint64_t ts_ns;             /* CLOCK_MONOTONIC of the read */
};

/* Open the engine cfg->kind names.  AUTO tries BPF and, where it cannot
 * load, opens tracefs and writes into WHY one line a user can act on
 * ("BPF engine unavailable: not root; using tracefs"); else WHY is "".
 * -1 with err set when no engine can run. */
int ks_engine_open(struct ks_engine **out, const struct ks_engine_config *cfg, char *why,
		   size_t whylen, struct ks_error *err);
/* "bpf" or "tracefs". */
const char *ks_engine_name(const struct ks_engine *e);
/* Wait up to TIMEOUT_MS for data (or EXTRA_FD readable: *extra_ready),
 * consuming what arrived (the tracefs engine pairs it).  Returns at once
 * on a signal. */
void ks_engine_wait(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready);
/* Cumulative counts since open.  SNAP is zeroed the first time; its
 * buffers are reused.  0 or -1 with err set. */
int ks_engine_read(struct ks_engine *e, struct ks_engine_snapshot *snap, struct ks_error *err);
void ks_engine_snapshot_free(struct ks_engine_snapshot *snap);
void ks_engine_close(struct ks_engine *e);

/* The name of an exit series' reason as the architecture's tables name it
 * (ARCH: the snapshot's arch; "" when unknown: x86), and whether it
 * halts the vCPU (HALTS may be NULL). */
void ks_engine_reason_name(const char *arch, const struct ks_engine_exit *x, char *buf,
			   size_t len, bool *halts);
/* The bucket of a handling time NS: the first bound of
 * ks_metrics_bucket_ns >= NS, or KS_METRICS_NBUCKETS (the +Inf one). */
unsigned ks_engine_bucket_of(uint64_t ns);

/* What happened between two cumulative snapshots (PREV NULL: since the
 * start): the series and counts that grew, by how much (min and max stay
 * CUR's, over the whole run), and the growth of the overflow, lost and
 * unpaired counters.  OUT's buffers are reused.  0 or -1 with err set. */
int ks_engine_delta(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
		    struct ks_engine_snapshot *out, struct ks_error *err);

/* Every exit series of SNAP added to ST's rows (stat.h,
 * ks_stat_add_aggregate): `stat --live` prints the engine's answer with
 * the stat report.  ST's filters (vCPU, pids) apply. */
struct ks_stat;
void ks_engine_to_stat(const struct ks_engine_snapshot *snap, struct ks_stat *st);

/* The backends (ks_engine_open calls them). */
int ks_engine_bpf_open(struct ks_engine **out, const struct ks_engine_config *cfg,
		       struct ks_error *err);
int ks_engine_tracefs_open(struct ks_engine **out, const struct ks_engine_config *cfg,
			   struct ks_error *err);

#endif
