/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tpcount.h - every tracepoint counted per VM, for `kvmscope top --view
 * tracepoints` (kvm_stat's tracepoint view).
 *
 * Each event record is counted under (VM, event name), the VM of its host
 * thread in the host model (host.h) that the exits view uses too (the
 * caller feeds it every record before ks_tpcount_add()); the
 * architecture's exit events (x86 kvm_exit, arm64 kvm_exit...) also count
 * under a child row "kvm_exit(REASON)" of their VM, with the reason named
 * by the architecture's table.  Counts are kept for the current interval
 * and since the start (or the last reset).
 *
 *	struct ks_tpcount *c = ks_tpcount_new(src, host, &err);
 *	ks_host_observe(host, &rec); ks_tpcount_add(c, &rec); ...
 *	ks_tpcount_interval(c);                  // close the interval
 *	n = ks_tpcount_rows(c, &rows);           // its rows
 */
#ifndef KVMSCOPE_TPCOUNT_H
#define KVMSCOPE_TPCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"

struct ks_host;
struct ks_source;
struct ks_tpcount;

struct ks_tpcount_row {
	int32_t vm;          /* the thread's VM in the host model; else its process or tid */
	bool child;          /* a kvm_exit(REASON) row under event row PARENT */
	uint32_t parent;     /* index of the event row (child rows) */
	char name[64];       /* "kvm_exit", "kvm_exit(HLT)"; "sys:name" outside kvm */
	uint64_t count;      /* in the last closed interval */
	uint64_t total;      /* since the start or the last reset */
};

/* HOST: the model rows take VMs from (NULL: a record's process, else its thread). */
struct ks_tpcount *ks_tpcount_new(struct ks_source *src, const struct ks_host *host,
				  struct ks_error *err);
void ks_tpcount_add(struct ks_tpcount *c, const struct ks_record *rec);
/* Counts of a live engine (engine.h) added to the open interval: DELTA is
 * what it counted since the last call (ks_engine_delta()), per process
 * and event; the kvm_exit(REASON) children are its paired exits.  For a
 * C made with no source (ks_tpcount_new(NULL, NULL, ...)). */
struct ks_engine_snapshot;
void ks_tpcount_add_engine(struct ks_tpcount *c, const struct ks_engine_snapshot *delta);
/* Close the interval: its counts become the rows' count. */
void ks_tpcount_interval(struct ks_tpcount *c);
/* The rows (owned by C; event rows before their children are not
 * guaranteed: use parent).  Rows with total 0 after a reset stay. */
size_t ks_tpcount_rows(const struct ks_tpcount *c, const struct ks_tpcount_row **rows);
/* Zero the totals (kvm_stat's r key). */
void ks_tpcount_reset(struct ks_tpcount *c);
void ks_tpcount_free(struct ks_tpcount *c);

#endif
