/* SPDX-License-Identifier: GPL-2.0-only */
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
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event_format.h"
#include "record.h"

struct ks_source;
struct tep_handle;

/* What the input says about the machine it was recorded on. */
struct ks_source_info {
	const char *format;   /* "perf.data", "trace.dat v7 (zlib)", "ftrace text", ... */
	char cpuid[128];      /* perf HEADER_CPUID, e.g. "GenuineIntel,6,85,7"; "" if unknown */
	char arch[32];        /* "x86_64", "aarch64", "ppc64le", "s390x"...; "" if unknown */
	bool arch_from_events; /* arch is what the events showed (ftrace text has
				* no header), not what a header says */
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
	uint64_t not_counted;    /* events a live engine could not count: its maps were full */
};

/* Open PATH with the defaults: no flags, the default budgets, no library
 * context (no format probe, nothing shared with other inputs). */
int ks_source_open(struct ks_source **out, const char *path, struct ks_error *err);

/* Flags of struct ks_source_opts. */
enum {
	KS_OPEN_NO_SYMBOLS = 1, /* do not load kallsyms into the tep (faster open;
				 * for callers that resolve no kernel symbols) */
	KS_OPEN_EVENTS_BY_RECORD = 2, /* the caller meets events only in records
				 * and through ks_source_event*(), never by name
				 * in the tep (ks_arch_*() and the analyses that
				 * detect the architecture do): the formats of the
				 * architecture's systems (kvm...) are parsed when
				 * first needed, like all others (faster open of a
				 * trace.dat; dump) */
	KS_OPEN_COMMS_WHEN_ASKED = 4, /* the caller asks the tep for comms only
				 * through ks_source_tep_comms(): a recording's
				 * saved cmdlines (thousands of lines) are parsed
				 * on its first call, not at open (stat) */
};
/* How to open an input; zero (or a NULL pointer to it) is the defaults. */
struct ks_ctx;
struct ks_limits;
struct ks_source_opts {
	unsigned flags;                 /* KS_OPEN_* */
	const struct ks_limits *limits; /* the run's budgets; NULL: the defaults (limits.h) */
	struct ks_ctx *ctx;             /* the library context (ctx.h): the format probe
					 * and what inputs share; it must outlive the
					 * source.  NULL: none */
	const char *arch;               /* for a caller that knows the recording's
					 * architecture (kvmscope stat --arch), a name
					 * as --arch takes it: picks the event formats
					 * of inputs that carry none (ftrace text, which
					 * otherwise takes them from the architecture its
					 * KVM events show); inputs with formats of their
					 * own ignore it.  NULL: none */
};
int ks_source_open_opts(struct ks_source **out, const char *path, const struct ks_source_opts *o,
			struct ks_error *err);
/* Whether an input whose first bytes are the LEN at HEAD could open: the
 * check ks_source_open() makes of a file's head (perf.data or trace.dat
 * magic, else ftrace text), for a stream that has to be checked before it
 * is saved to a file.  HEAD holds the first ks_source_head_size() bytes,
 * or all of a shorter input (MORE false).  0, or -1 with ERR "NAME:
 * offset N: ...". */
int ks_source_check_head(const char *name, const void *head, size_t len, bool more,
			 struct ks_error *err);
size_t ks_source_head_size(void);
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
/* The same handle with the recording's saved cmdlines registered (a
 * source opened with KS_OPEN_COMMS_WHEN_ASKED parses a perf.data's or
 * trace.dat v6's on this first call; others did at open): what a consumer
 * of the handle's comms (tep_data_comm_from_pid(), tep_is_pid_registered(),
 * TEP_PRINT_COMM, tep_register_comm()...) asks for. */
struct tep_handle *ks_source_tep_comms(const struct ks_source *src);
const struct ks_source_info *ks_source_info(const struct ks_source *src);
const struct ks_source_stats *ks_source_stats(const struct ks_source *src);
/* How far reading has come, for a progress line: *DONE of *TOTAL bytes
 * (TOTAL 0: unknown).  A reader that reads several regions at once (a
 * trace.dat's per-CPU data) counts what it has read of each; others the
 * furthest record delivered. */
void ks_source_position(const struct ks_source *src, uint64_t *done, uint64_t *total);

/*
 * Events by name or id.  A trace.dat or perf.data source parses an event's
 * format the first time a record of it is read or a consumer asks for it
 * here (its tep holds the formats parsed so far), so consumers look events
 * up through these, never with tep_find_event*() on the handle.
 */
/* The event SYSTEM:NAME (SYSTEM NULL: of any system) of SRC's formats,
 * parsed now if it was not yet; NULL when SRC has none or it does not
 * parse. */
struct tep_event *ks_source_event(struct ks_source *src, const char *system, const char *name);
/* The event of id ID, the same way. */
struct tep_event *ks_source_event_by_id(struct ks_source *src, int id);
/* SYSTEM:NAME on a handle alone (tep_event->tep), for consumers that have
 * no source: the events the architecture tables name (their systems: kvm,
 * kvm_hv...) are parsed at open, so these lookups find every one of them
 * the recording has (unless it was opened with KS_OPEN_EVENTS_BY_RECORD);
 * other events only once a record or a lookup through the source parsed
 * them. */
struct tep_event *ks_tep_event(struct tep_handle *tep, const char *system, const char *name);
/* Parse every format of SRC now (for a consumer that lists all events). */
void ks_source_parse_all(struct ks_source *src);
/* For tests: how many of SRC's formats were parsed so far. */
size_t ks_source_formats_parsed(const struct ks_source *src);

/*
 * Metadata as the input stores it.  A trace.dat, and the tracing data of a
 * perf.data, carry the texts the recording machine's tracefs gave: event
 * formats, header_page / header_event, kallsyms, printk formats and saved
 * cmdlines.  Readers keep them byte for byte (libtraceevent's parse loses
 * symbol types, spacing and unparsable lines), so that a copy (kvmscope
 * convert) holds exactly what the original held.  Every pointer stays valid
 * as long as the source; texts are NUL-terminated after LEN bytes.
 */
/* struct ks_source_format, the text of one format: event_format.h */

enum ks_source_text_id {
	KS_TEXT_HEADER_PAGE,
	KS_TEXT_HEADER_EVENT,
	KS_TEXT_KALLSYMS,        /* not kept when opened with KS_OPEN_NO_SYMBOLS */
	KS_TEXT_PRINTK,
	KS_TEXT_CMDLINES,
	KS_TEXT_UNAME,           /* the recording machine's uname (trace.dat UNAME) */
	KS_TEXT_NR
};

/* The event formats in the input's order; returns how many (0 for inputs
 * without stored formats, e.g. ftrace text). */
size_t ks_source_formats(const struct ks_source *src, const struct ks_source_format **fmts);
/* The text ID as stored (*LEN bytes), or NULL when the input has none.
 * A reader may leave a large text in the file until it is first asked for
 * (a trace.dat's kallsyms): when reading it then fails, this returns NULL
 * and the source's next ks_source_next*() returns the error. */
const char *ks_source_text(const struct ks_source *src, enum ks_source_text_id id, size_t *len);
/* The same, but a text that could not be read is an error: returns 0 with
 * *TEXT (NULL when the input has none), or -1 with ERR set. */
int ks_source_text_get(const struct ks_source *src, enum ks_source_text_id id, const char **text,
		       size_t *len, struct ks_error *err);

/* The recording's clock and identity, as far as the input says. */
struct ks_source_clock {
	const char *name;        /* trace clock ("x86-tsc", "local"...); NULL if unknown */
	bool raw_counter;        /* ks_record.raw_ts are the clock's own units, kept as
				  * stored (ts converted from them) */
	bool ts_ticks;           /* ks_record.ts are counter ticks, not ns (a counter
				  * clock without TSC2NSEC) */
	bool has_tsc2nsec;       /* a TSC2NSEC option: mult, shift, offset as stored
				  * (ns = (raw * mult) >> shift, see timesync.h) */
	uint32_t tsc_mult, tsc_shift;
	uint64_t tsc_offset;
	int64_t ts_offset;       /* ns added to every ts (trace.dat OFFSET options) */
	bool moved;              /* ts were moved to another machine's time (guest
				  * TimeShift): raw_ts no longer match them */
	bool has_trace_id;       /* this recording's trace id (trace.dat TRACEID) */
	uint64_t trace_id;
};
/* Never NULL (all zero for inputs that say nothing). */
const struct ks_source_clock *ks_source_clock(const struct ks_source *src);

/* The guests a host recording names (trace.dat GUEST options): the guest's
 * name and trace id, and the host thread running each vCPU. */
struct ks_source_vcpu {
	uint32_t vcpu;
	uint32_t host_tid;
};
struct ks_source_guest {
	const char *name;
	uint64_t trace_id;
	uint32_t nr_vcpus;
	const struct ks_source_vcpu *vcpus;
};
/* Returns how many; *GUESTS valid as long as the source. */
size_t ks_source_guests(const struct ks_source *src, const struct ks_source_guest **guests);

/* The processes a recording names (kvmscope record's task map,
 * kvmscope/vmident.h): COMM, and NAME the VM name live views show (QEMU's
 * -name; "" for other VMMs, which are then named by COMM). */
struct ks_source_proc {
	int32_t tgid;
	const char *comm;
	const char *name;
};
/* Returns how many; *PROCS valid as long as the source. */
size_t ks_source_procs(const struct ks_source *src, const struct ks_source_proc **procs);

/* A guest recording's TimeShift (trace.dat option): per guest CPU, samples
 * by which guest time TIME maps to host time ((TIME * scaling) >> fraction)
 * + offset, sorted by time. */
struct ks_source_tsync_sample {
	uint64_t time;
	int64_t offset;
	uint64_t scaling;
	uint64_t fraction;
};
struct ks_source_tsync_cpu {
	uint32_t nr_samples;
	const struct ks_source_tsync_sample *samples;
};
struct ks_source_timeshift {
	uint64_t peer_id;        /* trace id of the peer (the host) */
	uint32_t flags;          /* 1 = interpolate between samples */
	uint32_t nr_cpus;
	const struct ks_source_tsync_cpu *cpus;
};
/* NULL when the input has no TimeShift with samples. */
const struct ks_source_timeshift *ks_source_timeshift(const struct ks_source *src);

/* The ring-buffer instances of the recording in the file's order (trace-cmd
 * record -B NAME; "" is the top-level buffer).  Returns how many (0 for
 * inputs without buffers); *NAMES valid as long as the source. */
size_t ks_source_buffers(const struct ks_source *src, const char *const **names);

#endif
