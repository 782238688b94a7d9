/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live.h - live tracing of this host through tracefs (libtracefs).
 *
 * A struct ks_live is a private tracefs instance ("kvmscope-PID") with a set
 * of events enabled, a trace clock, optional pid / filter settings, and one
 * non-blocking trace_pipe_raw reader per CPU.  `kvmscope record` copies its
 * raw ring-buffer pages into a trace.dat; `kvmscope top` wraps it in a
 * struct ks_source (ks_live_source_open) that decodes the same pages with
 * kbuffer into struct ks_record, exactly like the trace.dat reader does, so
 * live data and a replayed file go through one event path.
 *
 *	struct ks_live_opts o = KS_LIVE_OPTS_INIT;          // arch's KVM events
 *	struct ks_live *l;
 *	if (ks_live_create(&l, &o, &err) < 0) die(...);
 *	ks_live_start(l);
 *	while (!stop_requested) {                            // the caller's own flag
 *		ks_live_wait(l, -1, 100, NULL);
 *		for (cpu...) while ((n = ks_live_read_page(l, cpu, buf, &err)) > 0) use(buf, n);
 *	}
 *	ks_live_destroy(l);                                  // removes the instance
 *
 * The instance is removed by ks_live_destroy().  The library installs no
 * exit or signal handler: a program that may exit without destroying it
 * (die(), signals) passes a track hook in the options and removes what is
 * left itself (kvmscope's command line does, in src/cli/live_signals.c).
 */
#ifndef KVMSCOPE_LIVE_H
#define KVMSCOPE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ks_ctx;
struct ks_live;
struct ks_source;
struct tep_handle;
struct tracefs_instance;

struct ks_live_opts {
	const char *const *events;  /* "system:event" (globs allowed); NULL = KVM set */
	size_t nevents;
	const char *clock;          /* trace clock; NULL = "x86-tsc" on x86 else "local" */
	const char *filter;         /* applied to every event that accepts it */
	const int32_t *pids;        /* set_event_pid; npids == 0 = all */
	size_t npids;
	uint32_t buffer_kb;         /* per-CPU ring buffer; 0 = the kernel's default */
	const char *tracing_dir;    /* NULL = libtracefs finds it */
	/* Optional: called with ADD once the instance exists (DIR: its
	 * directory) and without ADD (DIR NULL) when ks_live_destroy() removes
	 * it, so that the caller can remove it on exit paths the library does
	 * not see (die(), signals).  A negative return when ADD makes
	 * ks_live_create() fail. */
	int (*track)(void *ctx, struct ks_live *l, const char *dir, bool add);
	void *track_ctx;
	/* The library context (ctx.h): its format probe is asked about the
	 * events' formats while ks_live_create() parses them (not kept
	 * afterwards).  NULL: none. */
	struct ks_ctx *ctx;
};

#define KS_LIVE_OPTS_INIT { 0 }

/* One enabled event. */
struct ks_live_event {
	char *system, *name;
	char *format;               /* the format file's text */
	size_t format_len;
};

int ks_live_create(struct ks_live **out, const struct ks_live_opts *o, struct ks_error *err);
/* tracing_on = 1 / 0 in the instance. */
int ks_live_start(struct ks_live *l, struct ks_error *err);
void ks_live_stop(struct ks_live *l);
/* Disable, close the readers and remove the instance; frees L (NULL ok). */
void ks_live_destroy(struct ks_live *l);

int ks_live_nr_cpus(const struct ks_live *l);   /* highest CPU + 1 */
bool ks_live_cpu_online(const struct ks_live *l, int cpu);
uint32_t ks_live_page_size(const struct ks_live *l);
const char *ks_live_clock(const struct ks_live *l);
const char *ks_live_instance_name(const struct ks_live *l);
struct tracefs_instance *ks_live_instance(const struct ks_live *l);
size_t ks_live_events(const struct ks_live *l, const struct ks_live_event **evs);
/* A tep with the header page and the formats of the enabled events (owned by L). */
struct tep_handle *ks_live_tep(const struct ks_live *l);

/* x86-tsc: cycles -> ns as ns = (cycles * mult) >> shift, from the perf
 * mmap page of a software event (cap_user_time_zero).  Returns 0 or -1. */
int ks_live_tsc2nsec(uint32_t *mult, uint32_t *shift);
bool ks_live_has_tsc2nsec(const struct ks_live *l, uint32_t *mult, uint32_t *shift);

/* Read one page of CPU (non-blocking) into BUF (page size bytes).  Returns
 * the bytes read, 0 when nothing is there now, or -1 with err set. */
int ks_live_read_page(struct ks_live *l, int cpu, void *buf, struct ks_error *err);
/* Wait up to TIMEOUT_MS for data or for EXTRA_FD (>= 0) to be readable;
 * *extra_ready tells which.  Returns early on a signal. */
void ks_live_wait(struct ks_live *l, int extra_fd, int timeout_ms, bool *extra_ready);
/* Events the kernel lost (overrun + dropped of every CPU's stats file). */
uint64_t ks_live_kernel_lost(const struct ks_live *l);


/* The KVM event set of an architecture, as "system:event" names; the
 * caller's storage (nothing is kept in the library between calls). */
#define KS_LIVE_DEFAULT_MAX 64
struct ks_live_event_set {
	const char *names[KS_LIVE_DEFAULT_MAX + 1]; /* NULL-terminated, into store */
	char store[KS_LIVE_DEFAULT_MAX][64];
};
/* The set for MACHINE (uname -m; NULL = this host) filled into *SET:
 * returns SET->names with *N names, or NULL when none is known. */
const char *const *ks_live_default_events(const char *machine, struct ks_live_event_set *set,
					  size_t *n);

/* A source over L's pages (L stays owned by the caller and must outlive it).
 * ks_source_next() returns 0 when no page is ready now: wait and call again. */
int ks_live_source_open(struct ks_source **out, struct ks_live *l, struct ks_error *err);
/* Decode one raw page (as read from trace_pipe_raw) of CPU: calls FN for
 * each event with the same record a source would deliver.  Returns the
 * number of events, or -1 if the page is malformed. */
struct ks_record;
int ks_live_decode_page(struct tep_handle *tep, int cpu, const void *page, uint32_t size,
			void (*fn)(void *ctx, const struct ks_record *rec), void *ctx,
			uint64_t *missed);

#endif
