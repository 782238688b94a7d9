/*
 * source.h - open any supported input and pull decoded records from it.
 *
 *	struct ks_source *src;
 *	struct ks_record rec;
 *	struct ks_error err;
 *	if (ks_source_open(&src, path, &err) < 0) die(err.msg);
 *	while ((r = ks_source_next(src, &rec, &err)) > 0) use(&rec);
 *	if (r < 0) die(err.msg);
 *	ks_source_close(src);
 *
 * The input type is detected from the content (perf.data magic "PERFILE2",
 * trace.dat magic "\x17\x08\x44tracing", otherwise ftrace text), never from
 * the file name.  Records come out in timestamp order.
 */
#ifndef KVMSCOPE_SOURCE_H
#define KVMSCOPE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "record.h"

struct ks_source;
struct tep_handle;

/* What the input says about the machine it was recorded on. */
struct ks_source_info {
	const char *format;   /* "perf.data", "trace.dat v7 (zlib)", "ftrace text", ... */
	char cpuid[128];      /* perf HEADER_CPUID, e.g. "GenuineIntel,6,85,7"; "" if unknown */
	char arch[32];        /* "x86_64", "aarch64", "ppc64le", "s390x"...; "" if unknown */
	char hostname[128];
	char osrelease[128];
	char clock[32];       /* trace clock ("x86-tsc", "local", "perf"...); "" if unknown */
	int nr_cpus;          /* 0 if unknown */
	bool big_endian;      /* the data was written by a big-endian machine */
};

/* Counters of things a reader met and could not deliver as-is.  Every
 * report prints the non-zero ones in its footer. */
struct ks_source_stats {
	uint64_t records;        /* records delivered */
	uint64_t lost_events;    /* events the kernel reported lost */
	uint64_t lost_records;   /* LOST records / missed-events markers seen */
	uint64_t out_of_order;   /* records that arrived after later ones were delivered */
	uint64_t unknown_events; /* payloads whose format is not in the input */
	uint64_t skipped;        /* records of kinds the reader does not decode */
	uint64_t filtered;       /* samples of events not selected */
	uint64_t outside_window; /* events before the time window (ks_source_set_window) */
};

int ks_source_open(struct ks_source **out, const char *path, struct ks_error *err);

/* Flags of ks_source_open_flags(). */
enum {
	KS_OPEN_NO_SYMBOLS = 1, /* do not load kallsyms into the tep (faster open;
				 * for callers that resolve no kernel symbols) */
};
int ks_source_open_flags(struct ks_source **out, const char *path, unsigned flags,
			 struct ks_error *err);
/* The same with the run's budgets (NULL: the defaults, see limits.h). */
struct ks_limits;
int ks_source_open_limits(struct ks_source **out, const char *path, unsigned flags,
			  const struct ks_limits *lim, struct ks_error *err);
/* Returns 1 with *rec filled, 0 at the end, or a negative value with err set. */
int ks_source_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err);
/* Up to MAX (>= 1) records into RECS[0, n): returns n >= 1, 0 at the end,
 * or a negative value with err set.  All n records stay valid until the next
 * call on the source.  A reader hands over what it has decoded cheaply
 * (perf.data: the ordered records of a round), so n is often below MAX. */
int ks_source_next_batch(struct ks_source *src, struct ks_record *recs, int max,
			 struct ks_error *err);
/* For a consumer that reads a few tracepoint events only (kvmscope stat):
 * the reader asks WANT(CTX, event) once for each event it has samples of,
 * and delivers the samples of the events wanted only.  The others are still
 * read and ordered, so lost and out-of-order counts do not change, but not
 * decoded or delivered (stats.filtered counts them); records that are not
 * samples come as usual.  Call before the first ks_source_next().  Returns
 * 0, or -1 when the reader cannot select (it then delivers all). */
int ks_source_select(struct ks_source *src, bool (*want)(void *ctx, struct tep_event *ev),
		     void *ctx);
/* Deliver only the events whose timestamp lies in [START_NS, END_NS] (the
 * source's clock, as ks_record.ts); task records (comm, fork, exit) and
 * lost markers still come, so names and losses stay known.  Reading ends at
 * the first event after END_NS (records come in time order).  Call before
 * the first ks_source_next(). */
void ks_source_set_window(struct ks_source *src, uint64_t start_ns, uint64_t end_ns);
void ks_source_close(struct ks_source *src);

const char *ks_source_path(const struct ks_source *src);
/* The run's budgets the source was opened with (never NULL). */
const struct ks_limits *ks_source_limits(const struct ks_source *src);
struct tep_handle *ks_source_tep(const struct ks_source *src);
const struct ks_source_info *ks_source_info(const struct ks_source *src);
const struct ks_source_stats *ks_source_stats(const struct ks_source *src);

#endif
