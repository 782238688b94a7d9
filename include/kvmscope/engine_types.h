/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_types.h - what both sides of the live engine interface (engine.h)
 * share: the configuration, the cumulative snapshot an engine hands out,
 * and the functions on snapshots.  The BPF backend (src/input) and the
 * tracefs backend and dispatcher (src/analysis) build on it; it is defined
 * below both (src/input/engine_types.c), so that arrows point down.
 */
#ifndef KVMSCOPE_ENGINE_TYPES_H
#define KVMSCOPE_ENGINE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "latency.h"

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
	uint64_t bucket[KS_LAT_NBUCKETS + 1];
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

/* Free the buffers of SNAP (a snapshot filled by ks_engine_read()). */
void ks_engine_snapshot_free(struct ks_engine_snapshot *snap);

/* The events SNAP's engine could not count: its three overflow counters. */
uint64_t ks_engine_snapshot_overflow(const struct ks_engine_snapshot *snap);

/* The name of an exit series' reason as the architecture's tables name it
 * (ARCH: the snapshot's arch; "" when unknown: x86), and whether it
 * halts the vCPU (HALTS may be NULL). */
void ks_engine_reason_name(const char *arch, const struct ks_engine_exit *x, char *buf,
			   size_t len, bool *halts);

/* What happened between two cumulative snapshots (PREV NULL: since the
 * start): the series and counts that grew, by how much (min and max stay
 * CUR's, over the whole run), and the growth of the overflow, lost and
 * unpaired counters.  OUT's buffers are reused.  0 or -1 with err set. */
int ks_engine_delta(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
		    struct ks_engine_snapshot *out, struct ks_error *err);

#endif
