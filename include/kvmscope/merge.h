/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * merge.h - one host trace and its guests' traces as one stream in host time.
 *
 *	struct ks_merge *m;
 *	struct ks_merge_rec r;
 *	if (ks_merge_open(&m, specs, n, &opts, &err) < 0) die(err.msg);
 *	while ((rc = ks_merge_next(m, &r, &err)) > 0)
 *		use(&r);                              // ks_merge_print (merge_print.h)
 *	ks_merge_quality(m, &q);                      // sync sanity figures
 *	ks_merge_close(m);
 *
 * Input 0 is the host; the others are guests, given as "PATH" or
 * "PATH@NAME".  Each guest's timestamps are moved to host time with its
 * TimeShift option when it has one, otherwise with the host's
 * kvm_write_tsc_offset events or the fixed offsets of the options (see
 * timesync.h).  Records come out by host time; ties go to the input given
 * first, as in `trace-cmd report -i HOST -i GUEST`.
 *
 * A guest's vCPUs are tied to host threads by the host's GUEST option (the
 * guest's trace id, else its NAME).  With that tie, every guest event is
 * checked against the host: it should happen while its vCPU thread is in
 * the guest (between a kvm_entry and the next kvm_exit).
 *
 * The merge builds the host model (host.h) of the host input from its
 * records as they go out, as every command does from its input: each
 * record comes with its host thread's VM and vCPU (ks_merge_rec.thread),
 * and ks_merge_host() gives the model (its "threads", VM names).
 */
#ifndef KVMSCOPE_MERGE_H
#define KVMSCOPE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "record.h"
#include "timesync.h"

struct ks_attr_thread;
struct ks_host;
struct ks_ctx;
struct ks_source;
struct ks_merge;

struct ks_merge_offset {
	uint32_t vcpu;
	uint64_t offset;   /* guest TSC = host TSC + offset */
};

struct ks_limits;
struct ks_merge_opts {
	bool nsec;                              /* nanosecond timestamps (for the printer) */
	bool no_sync;                           /* keep guest timestamps as they are */
	const struct ks_merge_offset *offsets;  /* --tsc-offset, for guests without TimeShift */
	uint32_t nr_offsets;
	struct ks_ctx *ctx;                     /* the inputs are opened with it (ctx.h);
						 * it must outlive the merge.  NULL: none */
	const struct ks_limits *limits;         /* the run's budgets; NULL: the defaults */
};

struct ks_merge_rec {
	int input;               /* 0 = host */
	struct ks_record *rec;   /* rec->ts is host time; valid until the next call */
	int32_t vcpu;            /* guest records: the vCPU (= guest CPU) */
	int32_t host_tid;        /* guest records: its vCPU's host thread, -1 if unknown */
	/* The host model's attribution of the record's host thread: a host
	 * event's thread (the event counted), a guest record's vCPU thread
	 * (host_tid) as far as the host records so far tell; NULL when the
	 * model knows no such thread (or for other records). */
	const struct ks_attr_thread *thread;
};

/* Sync quality: guest events outside their vCPU's guest-mode windows. */
struct ks_merge_quality {
	uint64_t checked;        /* guest events with a known vCPU thread */
	uint64_t before_host;    /* of which before the host trace's first event */
	uint64_t outside;        /* of which outside every entry..exit window */
	uint64_t worst_ns;       /* largest distance of those to the nearest window */
	uint64_t worst_ts;       /* host time of that event */
	int worst_input;
};

int ks_merge_open(struct ks_merge **out, const char *const *specs, int n,
		  const struct ks_merge_opts *opts, struct ks_error *err);
/* 1 with *r filled, 0 at the end, negative with err set (also when the host
 * model ran out of its threads budget, limits.threads: "FILE: offset N:
 * ..." as stat says it). */
int ks_merge_next(struct ks_merge *m, struct ks_merge_rec *r, struct ks_error *err);
void ks_merge_close(struct ks_merge *m);

int ks_merge_nr_inputs(const struct ks_merge *m);
struct ks_source *ks_merge_source(const struct ks_merge *m, int input);
/* Base name of the file, or NAME of PATH@NAME. */
const char *ks_merge_name(const struct ks_merge *m, int input);
/* The host model of input 0, built from the records gone out so far. */
struct ks_host *ks_merge_host(const struct ks_merge *m);
/* How input's time was synced (KS_TSYNC_NONE for the host), and with what
 * (NULL for the host). */
enum ks_timesync_kind ks_merge_sync_kind(const struct ks_merge *m, int input);
const struct ks_timesync *ks_merge_timesync(const struct ks_merge *m, int input);
/* The host thread of a guest's vCPU, or -1. */
int32_t ks_merge_vcpu_tid(const struct ks_merge *m, int input, uint32_t vcpu);
/* Number of vCPUs known for a guest (GUEST option, else the guest's CPUs). */
uint32_t ks_merge_nr_vcpus(const struct ks_merge *m, int input);

/* The guest function at guest address ADDR for a record of host thread
 * HOST_TID (a guest's vCPU thread), from that guest's kallsyms through
 * libtraceevent, or NULL; *START (may be NULL) receives its address.  For
 * the kvm plugin's symbol hook (trace-cmd prints kvm_entry / kvm_exit rips
 * of merged guests as "rip 0xADDR func+0xOFF"). */
const char *ks_merge_guest_function(const struct ks_merge *m, int32_t host_tid, uint64_t addr,
				    uint64_t *start);

/* Finalises the pending checks (call after the end of the stream). */
void ks_merge_quality(struct ks_merge *m, struct ks_merge_quality *q);

#endif
