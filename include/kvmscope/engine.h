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
 * (ks_lat_bucket_ns, metrics.h: bucket[i] counts handling times
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

#include "engine_types.h"
#include "error.h"

struct ks_engine;
struct ks_host;
struct ks_live;

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
void ks_engine_close(struct ks_engine *e);

/* Every exit series of SNAP added to ST's rows (stat.h,
 * ks_stat_add_aggregate): `stat --live` prints the engine's answer with
 * the stat report.  ST's filters (vCPU, pids) apply. */
struct ks_stat;
void ks_engine_to_stat(const struct ks_engine_snapshot *snap, struct ks_stat *st);

#endif
