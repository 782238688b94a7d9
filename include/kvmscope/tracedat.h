/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat.h - what a trace-cmd trace.dat file says besides its events.
 *
 * ks_source_open() reads trace.dat files (versions 6 and 7, compressed with
 * zlib or zstd or not at all).  The options of the file (guests and their
 * vCPU threads, time synchronisation samples, trace ids, the clock and its
 * conversion to nanoseconds...) are kept here:
 *
 *	const struct ks_tracedat_meta *m = ks_tracedat_meta(src);
 *	if (m) for (i = 0; i < m->nr_guests; i++) use(&m->guests[i]);
 *
 * Every number is in host order.  The struct lives as long as the source.
 *
 * Buffer instances (trace-cmd record -B NAME): the events of every buffer
 * are delivered, merged in time order; ks_tracedat_record_buffer() tells
 * which instance a record came from.  Latency files (a latency tracer's
 * text instead of ring-buffer pages): the records are what the ftrace text
 * reader makes of the text, and ks_tracedat_latency_text() returns it.
 */
#ifndef KVMSCOPE_TRACEDAT_H
#define KVMSCOPE_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ks_source;
struct ks_record;
struct ks_error;

/* One GUEST option: a traced guest and the host threads running its vCPUs. */
struct ks_tracedat_vcpu {
	uint32_t vcpu;
	uint32_t host_tid;
};

struct ks_tracedat_guest {
	char *name;
	uint64_t trace_id;
	uint32_t nr_vcpus;
	struct ks_tracedat_vcpu *vcpus;
};

/* One TimeShift sample: guest time TIME maps to host time
 * ((TIME * scaling) >> fraction) + offset. */
struct ks_tracedat_tsync_sample {
	uint64_t time;
	int64_t offset;
	uint64_t scaling;
	uint64_t fraction;
};

/* Samples of one guest vCPU, sorted by time, equal times removed. */
struct ks_tracedat_tsync_cpu {
	uint32_t nr_samples;
	struct ks_tracedat_tsync_sample *samples;
};

struct ks_tracedat_meta {
	int version;                 /* 6 or 7 */
	char compression[32];        /* "none", "zlib", "zstd" */
	char compression_version[32];
	bool big_endian;
	uint32_t long_size;          /* user space long size of the recorder */
	uint32_t page_size;          /* ring buffer page size */

	bool has_trace_id;           /* TRACEID */
	uint64_t trace_id;
	uint32_t cpu_count;          /* CPUCOUNT; 0 if absent */
	char *uname;                 /* UNAME; NULL if absent */
	char *version_string;        /* VERSION (of trace-cmd); NULL if absent */
	char *clock;                 /* trace clock (BUFFER or TRACECLOCK); NULL if unknown */

	bool has_tsc2nsec;           /* TSC2NSEC */
	uint32_t tsc_mult;
	uint32_t tsc_shift;
	uint64_t tsc_offset;
	int64_t ts_offset;           /* sum of the OFFSET options (ns) */
	bool ts_in_ns;               /* record ts are nanoseconds (not raw counters) */

	uint32_t nr_guests;          /* GUEST options */
	struct ks_tracedat_guest *guests;

	bool has_time_shift;         /* TimeShift option (in guest files) */
	uint64_t tsync_peer_id;      /* trace id of the peer (the host) */
	uint32_t tsync_flags;        /* 1 = interpolate between samples */
	uint32_t tsync_nr_cpus;
	struct ks_tracedat_tsync_cpu *tsync_cpus;
	bool tsync_applied;          /* record ts are already moved to host time */

	uint32_t nr_buffers;         /* BUFFER / BUFFER_TEXT options; "" is the top-level buffer */
	char **buffer_names;
	bool has_latency;            /* the data is a latency (text) trace */
};

/* The metadata of a trace.dat source, or NULL for other inputs. */
const struct ks_tracedat_meta *ks_tracedat_meta(const struct ks_source *src);
/* The task map of the file's kvmscope-vmident option (kvmscope/vmident.h),
 * or NULL when it has none (or SRC is no trace.dat). */
struct ks_vmident;
const struct ks_vmident *ks_tracedat_vmident(const struct ks_source *src);

/* The name of the buffer instance REC (delivered by SRC) came from, or NULL
 * for the top-level buffer, latency files and other inputs.  Found from
 * rec->offset; valid as long as the source. */
const char *ks_tracedat_record_buffer(const struct ks_source *src, const struct ks_record *rec);

/* Latency layout: the stored text of the trace and its length; NULL for
 * flyrecord files and other inputs.  Valid as long as the source. */
const char *ks_tracedat_latency_text(const struct ks_source *src, size_t *len);

/* The ring-buffer pages of a trace.dat as the file stores them (after
 * decompression), for copying a recording without decoding its events:
 * FN gets each page of each CPU of the top-level buffer, CPU after CPU in
 * the file's order, each checked as for reading (its commit size and event
 * headers; EVENTS = the data events in it).  It takes the place of
 * ks_source_next(): the source delivers no record afterwards.  Returns 0,
 * -1 with err set (also when FN returns < 0, or when a text the reader
 * left in the file failed to load, as ks_source_next() does), or 1
 * without doing anything when the file's records cannot be copied as
 * pages: another input type,
 * records already read, a latency trace, buffer instances, a byte order
 * other than this machine's, or a time window.  FN NULL only asks: 0 or 1,
 * and nothing is consumed. */
typedef int (*ks_tracedat_page_fn)(void *arg, uint32_t cpu, const void *page, uint32_t size,
				   uint32_t events, struct ks_error *err);
int ks_tracedat_pages(struct ks_source *src, ks_tracedat_page_fn fn, void *arg,
		      struct ks_error *err);

#endif
