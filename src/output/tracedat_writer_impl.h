/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer_impl.h - what the trace.dat writer's files share: the
 * writer's state (struct ks_tdw, its per-CPU streams and instances) and the
 * functions one file gives the others.  The writer is four rooms:
 *   tracedat_writer.c         growable buffers, errors, options, metadata
 *   tracedat_writer_format.c  an event's format text from libtraceevent
 *   tracedat_writer_events.c  events and pages into per-CPU spools
 *   tracedat_writer_file.c    the file itself: v6 and v7 layouts, sections,
 *                             compression, streaming, close
 */
#ifndef KVMSCOPE_TRACEDAT_WRITER_IMPL_H
#define KVMSCOPE_TRACEDAT_WRITER_IMPL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <zlib.h>
#include <zstd.h>

#include "util/buf.h"
#include "kvmscope/outfile.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat_writer.h"

#define MAGIC "\x17\x08\x44tracing"
#define MAGIC_LEN 10

/* Option / section ids (trace-cmd.dat.v7(5)). */
enum {
	OPT_DONE = 0, OPT_BUFFER = 3, OPT_TRACECLOCK = 4, OPT_UNAME = 5, OPT_CPUCOUNT = 8,
	OPT_TRACEID = 11, OPT_TSC2NSEC = 14, OPT_STRINGS = 15, OPT_HEADER_INFO = 16,
	OPT_FTRACE_EVENTS = 17, OPT_EVENT_FORMATS = 18, OPT_KALLSYMS = 19, OPT_PRINTK = 20,
	OPT_CMDLINES = 21, OPT_BUFFER_TEXT = 22,
};
#define SEC_FL_COMPRESS 1

/* Ring-buffer entry types (events/header_event). */
#define RB_TYPE_TIME_EXTEND 30
#define RB_MAX_SMALL_DATA (28 * 4)
#define RB_DELTA_BITS 27
#define RB_DELTA_MAX ((1ull << RB_DELTA_BITS) - 1)

enum compression { COMP_NONE, COMP_ZLIB, COMP_ZSTD };

struct event_format {
	char *system;
	struct ks_buf text;
};

#define OUT_BUF (1u << 20)    /* stdio buffer of the output */
#define SPOOL_BUF (256u << 10) /* ... and of each spool file */

struct cpu_stream {
	FILE *spool;
	char *spool_buf;      /* its stdio buffer */
	uint8_t *page;        /* the page being filled; NULL until the first event */
	uint32_t used;        /* data bytes used in page */
	bool open;            /* page holds events */
	uint64_t last_ts;
	uint64_t nr_pages;    /* pages in the spool */
	uint64_t file_off, file_size; /* where the data went in the output */
};

/* A buffer instance (trace-cmd record -B NAME): its own page streams. */
struct instance {
	char *name;
	struct cpu_stream *cpus;
	uint32_t nr_streams;
	uint64_t opt_pos;     /* v6: where its BUFFER option's offset is in the file */
};

struct ks_tdw {
	char *path;
	struct ks_outfile *of;     /* the output: a temporary file until committed */
	FILE *out;                 /* its stream */
	char *out_buf;             /* the stream's buffer */
	int version;
	enum compression comp;
	char comp_name[8], comp_version[32];
	uint32_t page_size, long_size, klong_size, hdr_size, chunk_pages;
	uint32_t nr_cpus;
	char *clock, *uname, *tmpdir;
	bool has_tsc2nsec, has_trace_id;
	uint32_t tsc_mult, tsc_shift;
	uint64_t tsc_offset, trace_id;

	struct ks_buf header_page, header_event, kallsyms, printk, cmdlines, options, strings;
	bool have_header_page, have_header_event;
	struct ks_buf *ftrace;
	size_t nr_ftrace;
	struct event_format *events;
	size_t nr_events;

	struct cpu_stream *cpus;   /* the buffer being written: the top-level one, or an
				    * instance's while swap_instance() has put it here */
	uint32_t nr_streams;
	struct instance *inst;
	uint32_t nr_inst;
	struct ks_buf latency;        /* latency layout: the text stored instead of pages */
	bool has_latency;
	struct ks_tdw_stats stats;
	ZSTD_CCtx *zctx;
	bool failed;

	/* streaming (opts.stream): where the file's parts are to patch at close */
	bool stream, streaming;    /* asked for; the head is written */
	uint32_t stream_cpu;       /* the CPU being written */
	uint64_t head_at;          /* v6: the CPU table; v7: the DONE option's next offset */
	uint64_t fly_at;           /* v7: the flyrecord section */
	uint64_t count_at;         /* v7 compressed: the CPU's chunk count */
	uint32_t chunks;           /* ... and its chunks so far */
	struct ks_buf chunk;          /* v7 compressed: pages not yet compressed */
};

/* ---- tracedat_writer.c ---- */
static inline int buf_u16(struct ks_buf *b, uint16_t v) { return ks_buf_add(b, &v, 2); }
static inline int buf_u32(struct ks_buf *b, uint32_t v) { return ks_buf_add(b, &v, 4); }
static inline int buf_u64(struct ks_buf *b, uint64_t v) { return ks_buf_add(b, &v, 8); }
static inline int buf_str(struct ks_buf *b, const char *s) { return ks_buf_add(b, s, strlen(s) + 1); }
int tdw_check_usable(struct ks_tdw *w, struct ks_error *err);
int tdw_default_headers(struct ks_tdw *w, struct ks_error *err);
int tdw_fail(struct ks_tdw *w, struct ks_error *err, const char *what);
int tdw_fail_errno(struct ks_tdw *w, struct ks_error *err, const char *what);
void tdw_swap_instance(struct ks_tdw *w, uint32_t i);

/* ---- tracedat_writer_events.c ---- */
int tdw_flush_page(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err);
int tdw_grow_streams(struct ks_tdw *w, uint32_t cpu, struct ks_error *err);

/* ---- tracedat_writer_file.c ---- */
int tdw_out(struct ks_tdw *w, const void *p, size_t n, struct ks_error *err);
int tdw_out_buf(struct ks_tdw *w, const struct ks_buf *b, struct ks_error *err);
int tdw_stream_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		    struct ks_error *err);

#endif
