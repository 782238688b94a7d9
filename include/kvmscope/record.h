/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record.h - the one decoded record type every input reader produces.
 *
 * Readers (perf.data, trace.dat, ftrace text, live tracefs) turn their input
 * into a stream of struct ks_record in timestamp order.  Analyses see only
 * this type, never the file format.
 *
 * Byte order: every numeric member of struct ks_record is in host order.
 * The tracepoint payload (data/size) stays in the source's byte order; read
 * its fields with struct ks_field (field.h), which swaps when needed.
 *
 * Lifetime: pointers in a record (data, comm, callchain) stay valid until the
 * next call of ks_source_next() on the same source.
 */
#ifndef KVMSCOPE_RECORD_H
#define KVMSCOPE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

struct tep_event;

enum ks_record_type {
	KS_REC_EVENT = 1, /* a tracepoint event, or a perf sample */
	KS_REC_COMM,      /* a task's name: tid, pid, comm */
	KS_REC_FORK,      /* a new task: tid, pid, ptid, ppid */
	KS_REC_EXIT,      /* a task exited: tid, pid */
	KS_REC_LOST,      /* events were lost: lost = how many (0 if unknown) */
};

struct ks_record {
	enum ks_record_type type;
	uint64_t ts;       /* nanoseconds on the source's clock; 0 = none */
	uint64_t raw_ts;   /* the timestamp as stored in the input */
	int32_t cpu;       /* -1 = unknown */
	int32_t tid;       /* host thread (common_pid of a tracepoint); -1 = unknown */
	int32_t pid;       /* host process (tgid); -1 = unknown */

	/* KS_REC_EVENT: tracepoint format (NULL for non-tracepoint samples)
	 * and raw payload, which begins with the common_* fields. */
	struct tep_event *event;
	const void *data;
	uint32_t size;

	/* KS_REC_EVENT from perf.data: sample fields (0 where absent). */
	uint64_t ip;
	uint64_t period;
	uint64_t id;            /* sample id, selects the perf attr */
	uint16_t misc;          /* perf_event_header.misc (cpumode bits) */
	uint32_t nr_callchain;
	const uint64_t *callchain; /* host order */

	/* KS_REC_COMM */
	const char *comm;
	/* KS_REC_FORK / KS_REC_EXIT */
	int32_t ppid, ptid;
	/* KS_REC_LOST */
	uint64_t lost;

	uint64_t offset;   /* byte offset of the record in the input file */
};

#endif
