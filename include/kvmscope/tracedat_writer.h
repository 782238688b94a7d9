/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer.h - write trace-cmd trace.dat files (versions 6 and 7).
 *
 * The writer produces files that trace-cmd report, KernelShark and kvmscope's
 * own reader open: the initial header, header_page / header_event, ftrace and
 * event formats, kallsyms, printk formats, saved cmdlines, options and the
 * per-CPU flyrecord data (v7: sections, optionally compressed with zstd or
 * zlib in chunks of pages, and a strings section).
 *
 *	struct ks_tdw_opts o = { .file_version = 7, .compression = "zstd", .nr_cpus = 4 };
 *	struct ks_tdw *w = ks_tdw_create("out.dat", &o, &err);
 *	ks_tdw_add_event_format(w, "kvm", text, len, &err);     // per event
 *	ks_tdw_add_cmdline(w, 1234, "qemu-system-x86", &err);
 *	ks_tdw_add_event(w, cpu, ts, payload, size, &err);     // ts ascending per CPU
 *	ks_tdw_add_page(w, cpu, page, page_size, &err);        // or raw ring-buffer pages
 *	if (ks_tdw_close(w, &err) < 0) fail;                   // always frees w
 *
 * Events are encoded into kernel ring-buffer pages (page header: u64
 * timestamp, commit; entries with a 5-bit type_len and a 27-bit time delta,
 * TIME_EXTEND entries for larger deltas), one stream per CPU.  Page streams
 * are spooled to unlinked temporary files, so memory use does not grow with
 * the number of events; ks_tdw_close() lays the file out.
 *
 * Files are written in host byte order (little-endian hosts are what trace-cmd
 * and this writer are tested on).  Every function returns 0 or a negative
 * value with err set; after an error the handle can only be closed.
 */
#ifndef KVMSCOPE_TRACEDAT_WRITER_H
#define KVMSCOPE_TRACEDAT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ks_tdw;
struct tep_handle;
struct tep_event;

struct ks_tdw_opts {
	int file_version;         /* 6 or 7 (0 = 7) */
	const char *compression;  /* "none" (or NULL), "zstd", "zlib"; v7 only */
	uint32_t nr_cpus;         /* CPUs of the traced machine (CPUCOUNT); >= 1 */
	uint32_t page_size;       /* ring-buffer page size (0 = 4096) */
	uint32_t long_size;       /* user-space long size, 4 or 8 (0 = 8) */
	uint32_t kernel_long_size;/* size of the page header's commit field (0 = 8) */
	const char *clock;        /* trace clock (NULL = "local") */
	bool has_tsc2nsec;        /* write a TSC2NSEC option (x86-tsc timestamps) */
	uint32_t tsc_mult, tsc_shift;
	uint64_t tsc_offset;
	const char *uname;        /* UNAME option; NULL = none */
	bool has_trace_id;        /* TRACEID option */
	uint64_t trace_id;
	uint32_t chunk_pages;     /* v7 compressed: pages per chunk (0 = 10) */
	const char *tmpdir;       /* where page streams are spooled (NULL = $TMPDIR or /tmp) */
	bool stream;              /* pages go straight to the file, see below */
};

/* Counters of what was written (for reports and tests). */
struct ks_tdw_stats {
	uint64_t events;          /* ks_tdw_add_event() calls */
	uint64_t pages;           /* pages in all CPU streams */
	uint64_t time_extends;    /* TIME_EXTEND entries written */
	uint64_t backwards;       /* events older than their CPU's previous one (new page) */
	uint64_t data_bytes;      /* flyrecord bytes in the file (compressed if so) */
};

/* The file is written to a temporary file next to PATH (outfile.h) and
 * renamed to PATH by ks_tdw_close() once complete: a failed or killed run
 * leaves whatever PATH was.  ks_tdw_create_out() writes to OF (opened with
 * ks_outfile_open(), not standard output) and takes it over in every case:
 * ks_tdw_close() commits it, an error or ks_tdw_abort() removes its
 * temporary file. */
struct ks_outfile;
struct ks_tdw *ks_tdw_create(const char *path, const struct ks_tdw_opts *o,
			     struct ks_error *err);
struct ks_tdw *ks_tdw_create_out(struct ks_outfile *of, const struct ks_tdw_opts *o,
				 struct ks_error *err);

/* Metadata.  Texts are copied.  header_page / header_event default to the
 * kernel's layout for the configured kernel long size; ftrace formats go to
 * the "ftrace" section, every other system to the event formats. */
int ks_tdw_set_header_page(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
int ks_tdw_set_header_event(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
int ks_tdw_add_ftrace_format(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
int ks_tdw_add_event_format(struct ks_tdw *w, const char *system, const char *text, size_t len,
			    struct ks_error *err);
int ks_tdw_set_kallsyms(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
int ks_tdw_set_printk_formats(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
/* Saved cmdlines ("PID COMM" lines): a whole text, or one task at a time. */
int ks_tdw_set_cmdlines(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);
int ks_tdw_add_cmdline(struct ks_tdw *w, int32_t pid, const char *comm, struct ks_error *err);
/* Any other option (e.g. GUEST = 13, TIME_SHIFT = 12), written as given. */
int ks_tdw_add_option(struct ks_tdw *w, uint16_t id, const void *data, uint32_t size,
		      struct ks_error *err);

/* Format text of a parsed event, regenerated from libtraceevent's fields and
 * print arguments (for inputs that did not keep the original text).  The
 * result parses back to the same event.  Returns a malloc'ed string or NULL. */
char *ks_tdw_format_text(const struct tep_event *ev);
/* Add the formats of every event of TEP (regenerated as above): those it
 * holds (a source that parses its formats when first needed parses them
 * all first: ks_source_parse_all()). */
int ks_tdw_add_tep_formats(struct ks_tdw *w, struct tep_handle *tep, struct ks_error *err);

/* Data.  ts is in the clock's units and must not go backwards within a CPU
 * (an older event starts a new page, counted in stats.backwards). */
int ks_tdw_add_event(struct ks_tdw *w, uint32_t cpu, uint64_t ts, const void *payload,
		     uint32_t size, struct ks_error *err);
/* A raw ring-buffer page (as read from trace_pipe_raw); SIZE <= page size,
 * the rest is zero-filled.  Flushes the CPU's partly filled page first. */
int ks_tdw_add_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		    struct ks_error *err);

/* Streaming (opts.stream): for copying a recording page by page.  The
 * metadata (formats, texts, cmdlines, options) is complete before the first
 * page; the data comes only through ks_tdw_add_page(), each CPU's pages
 * together, CPUs in increasing order and below opts.nr_cpus.  Nothing is
 * spooled: the file is written as the pages come (compressed chunk by
 * chunk), and ks_tdw_close() adds what follows the data.  Anything else
 * (events, instances, latency text, metadata after the first page, a CPU
 * out of order) is an error. */

/* Buffer instances (trace-cmd record -B NAME): *INST receives the new
 * instance's number (1, 2, ...; 0 is the top-level buffer), to give to
 * ks_tdw_add_instance_event().  Each instance gets its own BUFFER option and
 * data (v6: "flyrecord" CPU table at the option's offset; v7: its own
 * flyrecord section). */
int ks_tdw_add_instance(struct ks_tdw *w, const char *name, uint32_t *inst, struct ks_error *err);
int ks_tdw_add_instance_event(struct ks_tdw *w, uint32_t inst, uint32_t cpu, uint64_t ts,
			      const void *payload, uint32_t size, struct ks_error *err);

/* Latency layout (what trace-cmd record writes for a latency tracer): TEXT
 * (the tracefs "trace" file) is stored instead of any ring-buffer data;
 * events and instances are then not written.  v6: "latency" and the text to
 * the end of the file; v7: a BUFFER_TEXT option and a latency section (in
 * compressed chunks if the file is compressed), last in the file. */
int ks_tdw_set_latency_text(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err);

const struct ks_tdw_stats *ks_tdw_stats(const struct ks_tdw *w);

/* Write the file, give it its name and free W (also on error, which
 * removes the temporary file only). */
int ks_tdw_close(struct ks_tdw *w, struct ks_error *err);
/* Free W and remove the temporary file; the final name is untouched. */
void ks_tdw_abort(struct ks_tdw *w);

#endif
