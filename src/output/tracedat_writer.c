/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer.c - write trace-cmd trace.dat files (v6 and v7).
 *
 * Used by `kvmscope convert` (any input -> trace.dat) and by the live
 * recorder (raw trace_pipe_raw pages -> trace.dat); API in
 * include/kvmscope/tracedat_writer.h.  Layout references: the man pages
 * trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5); the ring-buffer page layout is
 * the one the kernel describes in events/header_page and header_event.
 *
 * Flow: metadata texts are kept in memory; every CPU has one open page that
 * events are encoded into and a spool file (unlinked temporary file) that
 * full pages go to.  ks_tdw_close() writes the file in one pass:
 *   v6: initial header, metadata, CPU count, options, "flyrecord" CPU table,
 *       page-aligned CPU data copied from the spools;
 *   v7: initial header, metadata sections, options section, flyrecord
 *       section (per-CPU data, page-aligned, compressed in chunks of pages if
 *       asked), a second options section with the BUFFER option, and the
 *       strings section holding the section descriptions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <zlib.h>
#include <zstd.h>

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

struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct event_format {
	char *system;
	struct buf text;
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

	struct buf header_page, header_event, kallsyms, printk, cmdlines, options, strings;
	bool have_header_page, have_header_event;
	struct buf *ftrace;
	size_t nr_ftrace;
	struct event_format *events;
	size_t nr_events;

	struct cpu_stream *cpus;   /* the buffer being written: the top-level one, or an
				    * instance's while swap_instance() has put it here */
	uint32_t nr_streams;
	struct instance *inst;
	uint32_t nr_inst;
	struct buf latency;        /* latency layout: the text stored instead of pages */
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
	struct buf chunk;          /* v7 compressed: pages not yet compressed */
};

/* ------------------------------------------------------------------ */
/* growable buffers */

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int buf_add(struct buf *b, const void *data, size_t len)
{
	if (buf_reserve(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static int buf_u16(struct buf *b, uint16_t v) { return buf_add(b, &v, 2); }
static int buf_u32(struct buf *b, uint32_t v) { return buf_add(b, &v, 4); }
static int buf_u64(struct buf *b, uint64_t v) { return buf_add(b, &v, 8); }
static int buf_str(struct buf *b, const char *s) { return buf_add(b, s, strlen(s) + 1); }

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static int buf_set(struct buf *b, const char *text, size_t len)
{
	b->len = 0;
	return buf_add(b, text, len);
}

/* ------------------------------------------------------------------ */
/* errors */

static int fail(struct ks_tdw *w, struct ks_error *err, const char *what)
{
	if (w)
		w->failed = true;
	return ks_error_set(err, "%s: %s", w ? w->path : "trace.dat writer", what);
}

static int fail_errno(struct ks_tdw *w, struct ks_error *err, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(errno));
	return fail(w, err, msg);
}

static int check_usable(struct ks_tdw *w, struct ks_error *err)
{
	if (!w)
		return ks_error_set(err, "trace.dat writer: no handle");
	if (w->failed)
		return ks_error_set(err, "%s: the writer already failed", w->path);
	return 0;
}

/* Metadata cannot change once streaming has written it. */
static int check_meta(struct ks_tdw *w, struct ks_error *err)
{
	if (check_usable(w, err) < 0)
		return -1;
	if (w->streaming)
		return fail(w, err, "metadata after the first page of a streamed file");
	return 0;
}

/* ------------------------------------------------------------------ */
/* creation and options */

static int set_compression(struct ks_tdw *w, const char *name, struct ks_error *err)
{
	if (!name || !strcmp(name, "none")) {
		w->comp = COMP_NONE;
		return 0;
	}
	if (w->version < 7)
		return ks_error_set(err, "%s: compression needs file version 7", w->path);
	if (!strcmp(name, "zstd")) {
		w->comp = COMP_ZSTD;
		snprintf(w->comp_version, sizeof(w->comp_version), "%s", ZSTD_versionString());
		w->zctx = ZSTD_createCCtx();
		if (!w->zctx)
			return ks_error_set(err, "%s: out of memory", w->path);
	} else if (!strcmp(name, "zlib")) {
		w->comp = COMP_ZLIB;
		snprintf(w->comp_version, sizeof(w->comp_version), "%s", zlibVersion());
	} else {
		return ks_error_set(err, "%s: unknown compression \"%s\" (none, zstd, zlib)",
				    w->path, name);
	}
	snprintf(w->comp_name, sizeof(w->comp_name), "%s", name);
	return 0;
}

static int check_opts(const char *path, const struct ks_tdw_opts *o, struct ks_error *err)
{
	uint32_t ps = o->page_size ? o->page_size : 4096;

	if (o->file_version && o->file_version != 6 && o->file_version != 7)
		return ks_error_set(err, "%s: file version %d is not 6 or 7", path, o->file_version);
	if (ps < 256 || ps > (1u << 24) || (ps & (ps - 1)))
		return ks_error_set(err, "%s: bad page size %u", path, ps);
	if (o->long_size && o->long_size != 4 && o->long_size != 8)
		return ks_error_set(err, "%s: bad long size %u", path, o->long_size);
	if (o->kernel_long_size && o->kernel_long_size != 4 && o->kernel_long_size != 8)
		return ks_error_set(err, "%s: bad kernel long size %u", path, o->kernel_long_size);
	if (o->nr_cpus > 65536)
		return ks_error_set(err, "%s: cannot write %u CPUs (at most 65536): the input's CPU count is implausible", path, o->nr_cpus);
	return 0;
}

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

static int copy_opts(struct ks_tdw *w, const struct ks_tdw_opts *o, struct ks_error *err)
{
	const char *tmp = getenv("TMPDIR");

	w->version = o->file_version ? o->file_version : 7;
	w->page_size = o->page_size ? o->page_size : 4096;
	w->long_size = o->long_size ? o->long_size : 8;
	w->klong_size = o->kernel_long_size ? o->kernel_long_size : 8;
	w->hdr_size = 8 + w->klong_size;
	w->chunk_pages = o->chunk_pages ? o->chunk_pages : 10;
	w->nr_cpus = o->nr_cpus ? o->nr_cpus : 1;
	w->has_tsc2nsec = o->has_tsc2nsec;
	w->tsc_mult = o->tsc_mult;
	w->tsc_shift = o->tsc_shift;
	w->tsc_offset = o->tsc_offset;
	w->has_trace_id = o->has_trace_id;
	w->trace_id = o->trace_id;
	snprintf(w->comp_name, sizeof(w->comp_name), "none");
	w->clock = dup_or(o->clock, "local");
	w->tmpdir = dup_or(o->tmpdir ? o->tmpdir : (tmp && *tmp ? tmp : NULL), "/tmp");
	w->uname = o->uname ? strdup(o->uname) : NULL;
	w->stream = o->stream;
	if (!w->clock || !w->tmpdir || (o->uname && !w->uname))
		return ks_error_set(err, "%s: out of memory", w->path);
	return set_compression(w, o->compression, err);
}

struct ks_tdw *ks_tdw_create_out(struct ks_outfile *of, const struct ks_tdw_opts *o,
				 struct ks_error *err)
{
	const char *path = ks_outfile_path(of);
	struct ks_tdw *w;

	if (check_opts(path, o, err) < 0) {
		ks_outfile_abort(of);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		ks_error_set(err, "%s: out of memory", path);
		ks_outfile_abort(of);
		return NULL;
	}
	w->of = of;
	w->out = ks_outfile_stream(of);
	if (copy_opts(w, o, err) < 0) {
		ks_tdw_abort(w);
		return NULL;
	}
	/* writes of a megabyte (glibc takes a size only with a buffer) */
	w->out_buf = malloc(OUT_BUF);
	if (w->out_buf)
		setvbuf(w->out, w->out_buf, _IOFBF, OUT_BUF);
	return w;
}

struct ks_tdw *ks_tdw_create(const char *path, const struct ks_tdw_opts *o, struct ks_error *err)
{
	struct ks_outfile *of;

	if (ks_outfile_open(&of, path, NULL, KS_OUTFILE_NO_STDOUT, err) < 0)
		return NULL;
	return ks_tdw_create_out(of, o, err);
}

/* ------------------------------------------------------------------ */
/* metadata */

static int set_text(struct ks_tdw *w, struct buf *b, const char *text, size_t len,
		    struct ks_error *err)
{
	if (check_meta(w, err) < 0)
		return -1;
	if (buf_set(b, text, len) < 0)
		return fail(w, err, "out of memory");
	return 0;
}

int ks_tdw_set_header_page(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	if (set_text(w, &w->header_page, text, len, err) < 0)
		return -1;
	w->have_header_page = true;
	return 0;
}

int ks_tdw_set_header_event(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	if (set_text(w, &w->header_event, text, len, err) < 0)
		return -1;
	w->have_header_event = true;
	return 0;
}

int ks_tdw_set_kallsyms(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	return set_text(w, &w->kallsyms, text, len, err);
}

int ks_tdw_set_printk_formats(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	return set_text(w, &w->printk, text, len, err);
}

int ks_tdw_set_cmdlines(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	return set_text(w, &w->cmdlines, text, len, err);
}

int ks_tdw_add_cmdline(struct ks_tdw *w, int32_t pid, const char *comm, struct ks_error *err)
{
	char line[64];
	int n;

	if (check_meta(w, err) < 0)
		return -1;
	n = snprintf(line, sizeof(line), "%d %.31s\n", pid, comm ? comm : "<...>");
	if (buf_add(&w->cmdlines, line, (size_t)n) < 0)
		return fail(w, err, "out of memory");
	return 0;
}

int ks_tdw_add_ftrace_format(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	struct buf *n;

	if (check_meta(w, err) < 0)
		return -1;
	n = realloc(w->ftrace, (w->nr_ftrace + 1) * sizeof(*n));
	if (!n)
		return fail(w, err, "out of memory");
	w->ftrace = n;
	memset(&n[w->nr_ftrace], 0, sizeof(*n));
	if (buf_add(&n[w->nr_ftrace], text, len) < 0)
		return fail(w, err, "out of memory");
	w->nr_ftrace++;
	return 0;
}

int ks_tdw_add_event_format(struct ks_tdw *w, const char *system, const char *text, size_t len,
			    struct ks_error *err)
{
	struct event_format *n;

	if (check_meta(w, err) < 0)
		return -1;
	if (system && !strcmp(system, "ftrace"))
		return ks_tdw_add_ftrace_format(w, text, len, err);
	n = realloc(w->events, (w->nr_events + 1) * sizeof(*n));
	if (!n)
		return fail(w, err, "out of memory");
	w->events = n;
	n += w->nr_events;
	memset(n, 0, sizeof(*n));
	n->system = strdup(system && *system ? system : "unknown");
	w->nr_events++;
	if (!n->system || buf_add(&n->text, text, len) < 0)
		return fail(w, err, "out of memory");
	return 0;
}

int ks_tdw_add_option(struct ks_tdw *w, uint16_t id, const void *data, uint32_t size,
		      struct ks_error *err)
{
	if (check_meta(w, err) < 0)
		return -1;
	if (id == OPT_DONE || (w->version >= 7 && id >= OPT_STRINGS && id <= OPT_CMDLINES) ||
	    id == OPT_BUFFER)
		return ks_error_set(err, "%s: option %u is written by the writer itself", w->path, id);
	if (buf_u16(&w->options, id) < 0 || buf_u32(&w->options, size) < 0 ||
	    buf_add(&w->options, data, size) < 0)
		return fail(w, err, "out of memory");
	return 0;
}

int ks_tdw_add_instance(struct ks_tdw *w, const char *name, uint32_t *inst, struct ks_error *err)
{
	struct instance *n;

	if (check_meta(w, err) < 0)
		return -1;
	if (!name || !*name || strlen(name) > 255)
		return ks_error_set(err, "%s: an instance needs a name (1 to 255 bytes)", w->path);
	n = realloc(w->inst, (w->nr_inst + 1) * sizeof(*n));
	if (!n)
		return fail(w, err, "out of memory");
	w->inst = n;
	memset(&n[w->nr_inst], 0, sizeof(*n));
	n[w->nr_inst].name = strdup(name);
	if (!n[w->nr_inst].name)
		return fail(w, err, "out of memory");
	*inst = ++w->nr_inst;
	return 0;
}

/* Exchange the top-level streams with instance I's (1-based), so the code
 * written for one buffer works on any; calling it again swaps back. */
static void swap_instance(struct ks_tdw *w, uint32_t i)
{
	struct instance *in = &w->inst[i - 1];
	struct cpu_stream *c = w->cpus;
	uint32_t n = w->nr_streams;

	w->cpus = in->cpus;
	w->nr_streams = in->nr_streams;
	in->cpus = c;
	in->nr_streams = n;
}

int ks_tdw_add_instance_event(struct ks_tdw *w, uint32_t inst, uint32_t cpu, uint64_t ts,
			      const void *payload, uint32_t size, struct ks_error *err)
{
	int r;

	if (inst == 0)
		return ks_tdw_add_event(w, cpu, ts, payload, size, err);
	if (inst > w->nr_inst)
		return ks_error_set(err, "%s: no instance %u", w->path, inst);
	swap_instance(w, inst);
	r = ks_tdw_add_event(w, cpu, ts, payload, size, err);
	swap_instance(w, inst);
	return r;
}

int ks_tdw_set_latency_text(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	if (check_meta(w, err) < 0)
		return -1;
	w->has_latency = true;
	return set_text(w, &w->latency, text, len, err);
}

/* The kernel's description of its ring-buffer page and entry headers. */
static int default_headers(struct ks_tdw *w, struct ks_error *err)
{
	char text[512];
	int n;

	if (!w->have_header_page) {
		n = snprintf(text, sizeof(text),
			     "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			     "\tfield: local_t commit;\toffset:8;\tsize:%u;\tsigned:1;\n"
			     "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			     "\tfield: char data;\toffset:%u;\tsize:%u;\tsigned:0;\n",
			     w->klong_size, w->hdr_size, w->page_size - w->hdr_size);
		if (ks_tdw_set_header_page(w, text, (size_t)n, err) < 0)
			return -1;
	}
	if (!w->have_header_event) {
		n = snprintf(text, sizeof(text),
			     "# compressed entry header\n"
			     "\ttype_len    :    5 bits\n"
			     "\ttime_delta  :   27 bits\n"
			     "\tarray       :   32 bits\n"
			     "\n"
			     "\tpadding     : type == 29\n"
			     "\ttime_extend : type == 30\n"
			     "\ttime_stamp : type == 31\n"
			     "\tdata max type_len  == 28\n");
		if (ks_tdw_set_header_event(w, text, (size_t)n, err) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* format text regenerated from libtraceevent's parse */

static bool is_number(const char *s)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	(void)strtoull(s, &end, 0);
	return *end == '\0' && !errno;
}

/* libtraceevent keeps string tokens as written (escapes included), so they
 * go back between quotes unchanged. */
static void put_quoted(FILE *f, const char *s)
{
	fprintf(f, "\"%s\"", s);
}

static int put_arg(FILE *f, const struct tep_print_arg *a);

static void put_syms(FILE *f, const struct tep_print_flag_sym *s)
{
	for (; s; s = s->next) {
		fprintf(f, ", { %s, ", s->value);
		put_quoted(f, s->str);
		fputs(" }", f);
	}
}

static int put_args3(FILE *f, const char *fn, const struct tep_print_arg *a,
		     const struct tep_print_arg *b, const struct tep_print_arg *c)
{
	int r;

	fprintf(f, "%s(", fn);
	r = put_arg(f, a);
	if (b) {
		fputs(", ", f);
		r |= put_arg(f, b);
	}
	if (c) {
		fputs(", ", f);
		r |= put_arg(f, c);
	}
	fputc(')', f);
	return r;
}

static int put_op(FILE *f, const struct tep_print_arg_op *op)
{
	int r = 0;
	bool unary = !op->left || op->left->type == TEP_PRINT_NULL;

	if (!strcmp(op->op, "[")) {
		r |= put_arg(f, op->left);
		fputc('[', f);
		r |= put_arg(f, op->right);
		fputc(']', f);
		return r;
	}
	fputc('(', f);
	if (!strcmp(op->op, "?") && op->right && op->right->type == TEP_PRINT_OP &&
	    !strcmp(op->right->op.op, ":")) {
		r |= put_arg(f, op->left);
		fputs(" ? ", f);
		r |= put_arg(f, op->right->op.left);
		fputs(" : ", f);
		r |= put_arg(f, op->right->op.right);
	} else if (unary) {
		fputs(op->op, f);
		r |= put_arg(f, op->right);
	} else {
		r |= put_arg(f, op->left);
		fprintf(f, " %s ", op->op);
		r |= put_arg(f, op->right);
	}
	fputc(')', f);
	return r;
}

static const char *field_name(const struct tep_format_field *fl)
{
	return fl && fl->name ? fl->name : "";
}

/* Writes A in C syntax; returns -1 for what cannot be written back. */
static int put_arg(FILE *f, const struct tep_print_arg *a)
{
	if (!a)
		return -1;
	switch (a->type) {
	case TEP_PRINT_NULL:
		return 0;
	case TEP_PRINT_ATOM:
		if (is_number(a->atom.atom))
			fputs(a->atom.atom, f);
		else
			put_quoted(f, a->atom.atom);
		return 0;
	case TEP_PRINT_FIELD:
		fprintf(f, "REC->%s", a->field.name);
		return 0;
	case TEP_PRINT_FLAGS:
		fputs("__print_flags(", f);
		if (put_arg(f, a->flags.field) < 0)
			return -1;
		fputs(", ", f);
		put_quoted(f, a->flags.delim ? a->flags.delim : "");
		put_syms(f, a->flags.flags);
		fputc(')', f);
		return 0;
	case TEP_PRINT_SYMBOL:
		fputs("__print_symbolic(", f);
		if (put_arg(f, a->symbol.field) < 0)
			return -1;
		put_syms(f, a->symbol.symbols);
		fputc(')', f);
		return 0;
	case TEP_PRINT_HEX:
		return put_args3(f, "__print_hex", a->hex.field, a->hex.size, NULL);
	case TEP_PRINT_HEX_STR:
		return put_args3(f, "__print_hex_str", a->hex.field, a->hex.size, NULL);
	case TEP_PRINT_INT_ARRAY:
		return put_args3(f, "__print_array", a->int_array.field, a->int_array.count,
				 a->int_array.el_size);
	case TEP_PRINT_TYPE:
		fprintf(f, "((%s)", a->typecast.type);
		if (put_arg(f, a->typecast.item) < 0)
			return -1;
		fputc(')', f);
		return 0;
	case TEP_PRINT_STRING:
		fprintf(f, "__get_str(%s)", a->string.field ? field_name(a->string.field)
							    : a->string.string);
		return 0;
	case TEP_PRINT_BSTRING:
		put_quoted(f, a->string.string ? a->string.string : "");
		return 0;
	case TEP_PRINT_BITMASK:
		fprintf(f, "__get_bitmask(%s)", a->bitmask.field ? field_name(a->bitmask.field)
								 : a->bitmask.bitmask);
		return 0;
	case TEP_PRINT_CPUMASK:
		fprintf(f, "__get_cpumask(%s)", a->bitmask.field ? field_name(a->bitmask.field)
								 : a->bitmask.bitmask);
		return 0;
	case TEP_PRINT_DYNAMIC_ARRAY:
		fprintf(f, "__get_dynamic_array(%s)", field_name(a->dynarray.field));
		return 0;
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		fprintf(f, "__get_dynamic_array_len(%s)", field_name(a->dynarray.field));
		return 0;
	case TEP_PRINT_OP:
		return put_op(f, &a->op);
	default: /* TEP_PRINT_FUNC: the handler's name is not public */
		return -1;
	}
}

static void put_field(FILE *f, const struct tep_format_field *fl)
{
	const char *type = fl->type ? fl->type : "int";
	const char *br = strchr(type, '[');
	bool dyn = !strncmp(type, "__data_loc", 10) || !strncmp(type, "__rel_loc", 9);

	if (br && !dyn)
		fprintf(f, "\tfield:%.*s %s%s;", (int)(br - type), type, fl->name, br);
	else
		fprintf(f, "\tfield:%s %s;", type, fl->name);
	fprintf(f, "\toffset:%d;\tsize:%d;\tsigned:%d;\n", fl->offset, fl->size,
		(fl->flags & TEP_FIELD_IS_SIGNED) ? 1 : 0);
}

char *ks_tdw_format_text(const struct tep_event *ev)
{
	const struct tep_format_field *fl;
	const struct tep_print_arg *a;
	char *text = NULL;
	size_t len = 0;
	int bad = 0;
	FILE *f;

	if (!ev || !ev->name)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "name: %s\nID: %d\nformat:\n", ev->name, ev->id);
	for (fl = ev->format.common_fields; fl; fl = fl->next)
		put_field(f, fl);
	fputc('\n', f);
	for (fl = ev->format.fields; fl; fl = fl->next)
		put_field(f, fl);
	fputs("\nprint fmt: ", f);
	put_quoted(f, ev->print_fmt.format ? ev->print_fmt.format : "");
	for (a = ev->print_fmt.args; a; a = a->next) {
		fputs(", ", f);
		if (put_arg(f, a) < 0)
			bad = 1;
	}
	fputc('\n', f);
	if (fclose(f) != 0 || bad) {
		free(text);
		return NULL;
	}
	return text;
}

int ks_tdw_add_tep_formats(struct ks_tdw *w, struct tep_handle *tep, struct ks_error *err)
{
	struct tep_event **evs;
	size_t i;

	if (check_usable(w, err) < 0)
		return -1;
	evs = tep ? tep_list_events(tep, TEP_EVENT_SORT_ID) : NULL;
	for (i = 0; evs && evs[i]; i++) {
		char *text = ks_tdw_format_text(evs[i]);
		int r;
		if (!text)
			continue; /* not representable: the event stays unknown */
		r = ks_tdw_add_event_format(w, evs[i]->system, text, strlen(text), err);
		free(text);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* per-CPU page streams */

static int grow_streams(struct ks_tdw *w, uint32_t cpu, struct ks_error *err)
{
	struct cpu_stream *n;
	uint32_t count = cpu + 1;

	if (cpu >= 65536)
		return fail(w, err, "CPU number too large");
	if (count <= w->nr_streams)
		return 0;
	n = realloc(w->cpus, count * sizeof(*n));
	if (!n)
		return fail(w, err, "out of memory");
	memset(n + w->nr_streams, 0, (count - w->nr_streams) * sizeof(*n));
	w->cpus = n;
	w->nr_streams = count;
	if (count > w->nr_cpus)
		w->nr_cpus = count;
	return 0;
}

static int open_spool(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
{
	char tmpl[4096];
	int fd;

	snprintf(tmpl, sizeof(tmpl), "%s/kvmscope-tdw-XXXXXX", w->tmpdir);
	fd = mkstemp(tmpl);
	if (fd < 0)
		return fail_errno(w, err, "cannot create a spool file");
	unlink(tmpl);
	c->spool = fdopen(fd, "w+b");
	if (!c->spool) {
		close(fd);
		return fail_errno(w, err, "cannot open a spool file");
	}
	c->spool_buf = malloc(SPOOL_BUF);
	if (c->spool_buf)
		setvbuf(c->spool, c->spool_buf, _IOFBF, SPOOL_BUF);
	return 0;
}

static int stream_get(struct ks_tdw *w, uint32_t cpu, struct cpu_stream **out,
		      struct ks_error *err)
{
	struct cpu_stream *c;

	if (grow_streams(w, cpu, err) < 0)
		return -1;
	c = &w->cpus[cpu];
	if (!c->page) {
		c->page = calloc(1, w->page_size);
		if (!c->page)
			return fail(w, err, "out of memory");
	}
	if (!c->spool && open_spool(w, c, err) < 0)
		return -1;
	*out = c;
	return 0;
}

static int spool_page(struct ks_tdw *w, struct cpu_stream *c, const void *page,
		      struct ks_error *err)
{
	if (fwrite(page, w->page_size, 1, c->spool) != 1)
		return fail_errno(w, err, "cannot write a spool file");
	c->nr_pages++;
	w->stats.pages++;
	return 0;
}

/* Write the commit size and put the page into the spool. */
static int flush_page(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
{
	uint64_t commit = c->used;

	if (!c->open)
		return 0;
	if (w->klong_size == 8)
		memcpy(c->page + 8, &commit, 8);
	else
		memcpy(c->page + 8, &(uint32_t){ (uint32_t)commit }, 4);
	memset(c->page + w->hdr_size + c->used, 0, w->page_size - w->hdr_size - c->used);
	c->open = false;
	return spool_page(w, c, c->page, err);
}

static void start_page(struct ks_tdw *w, struct cpu_stream *c, uint64_t ts)
{
	memcpy(c->page, &ts, 8);
	c->used = 0;
	c->open = true;
	c->last_ts = ts;
	(void)w;
}

static void put_word(struct ks_tdw *w, struct cpu_stream *c, uint32_t v)
{
	memcpy(c->page + w->hdr_size + c->used, &v, 4);
	c->used += 4;
}

/* Bytes an event of SIZE payload bytes takes (entry header included). */
static uint32_t entry_size(uint32_t size, uint32_t *type_len)
{
	uint32_t len = size ? size : 1, aligned = (len + 3) & ~3u;

	if (len > RB_MAX_SMALL_DATA) {
		*type_len = 0;
		return 8 + aligned;
	}
	*type_len = aligned / 4;
	return 4 + aligned;
}

int ks_tdw_add_event(struct ks_tdw *w, uint32_t cpu, uint64_t ts, const void *payload,
		     uint32_t size, struct ks_error *err)
{
	uint32_t cap, type_len, need, esize;
	uint64_t delta = 0;
	struct cpu_stream *c;

	if (check_usable(w, err) < 0)
		return -1;
	if (w->stream)
		return fail(w, err, "an event added to a streamed file (pages only)");
	if (stream_get(w, cpu, &c, err) < 0)
		return -1;
	cap = w->page_size - w->hdr_size;
	esize = entry_size(size, &type_len);
	if (size > cap || esize > cap)
		return ks_error_set(err, "%s: an event of %u bytes does not fit in a %u-byte page",
				    w->path, size, w->page_size);
	if (c->open && ts < c->last_ts) {
		w->stats.backwards++;
		if (flush_page(w, c, err) < 0)
			return -1;
	}
	if (c->open)
		delta = ts - c->last_ts;
	need = esize + (delta > RB_DELTA_MAX ? 8 : 0);
	if (c->open && (c->used + need > cap || (delta >> 59))) {
		if (flush_page(w, c, err) < 0)
			return -1;
	}
	if (!c->open) {
		start_page(w, c, ts);
		delta = 0;
	}
	if (delta > RB_DELTA_MAX) {
		put_word(w, c, RB_TYPE_TIME_EXTEND | (uint32_t)((delta & RB_DELTA_MAX) << 5));
		put_word(w, c, (uint32_t)(delta >> RB_DELTA_BITS));
		w->stats.time_extends++;
		delta = 0;
	}
	put_word(w, c, type_len | (uint32_t)(delta << 5));
	if (type_len == 0)
		put_word(w, c, esize - 4); /* length word: data plus itself */
	memcpy(c->page + w->hdr_size + c->used, payload, size);
	memset(c->page + w->hdr_size + c->used + size, 0, esize - (type_len ? 4 : 8) - size);
	c->used += esize - (type_len ? 4 : 8);
	c->last_ts = ts;
	w->stats.events++;
	return 0;
}

static int stream_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		       struct ks_error *err);

int ks_tdw_add_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		    struct ks_error *err)
{
	struct cpu_stream *c;

	if (check_usable(w, err) < 0)
		return -1;
	if (size > w->page_size)
		return ks_error_set(err, "%s: a page of %u bytes is larger than the page size %u",
				    w->path, size, w->page_size);
	if (w->stream)
		return stream_page(w, cpu, page, size, err);
	if (stream_get(w, cpu, &c, err) < 0)
		return -1;
	if (flush_page(w, c, err) < 0)
		return -1;
	memcpy(c->page, page, size);
	memset(c->page + size, 0, w->page_size - size);
	return spool_page(w, c, c->page, err);
}

const struct ks_tdw_stats *ks_tdw_stats(const struct ks_tdw *w)
{
	return &w->stats;
}

/* ------------------------------------------------------------------ */
/* output helpers */

static int out(struct ks_tdw *w, const void *p, size_t n, struct ks_error *err)
{
	if (n && fwrite(p, n, 1, w->out) != 1)
		return fail_errno(w, err, "cannot write");
	return 0;
}

static int out_buf(struct ks_tdw *w, const struct buf *b, struct ks_error *err)
{
	return out(w, b->p, b->len, err);
}

static int out_u16(struct ks_tdw *w, uint16_t v, struct ks_error *err) { return out(w, &v, 2, err); }
static int out_u32(struct ks_tdw *w, uint32_t v, struct ks_error *err) { return out(w, &v, 4, err); }
static int out_u64(struct ks_tdw *w, uint64_t v, struct ks_error *err) { return out(w, &v, 8, err); }

static int out_tell(struct ks_tdw *w, uint64_t *pos, struct ks_error *err)
{
	off_t o = ftello(w->out);

	if (o < 0)
		return fail_errno(w, err, "cannot tell the output position");
	*pos = (uint64_t)o;
	return 0;
}

/* Overwrite N bytes at POS, then go back to the end. */
static int out_patch(struct ks_tdw *w, uint64_t pos, const void *v, size_t n, struct ks_error *err)
{
	if (fseeko(w->out, (off_t)pos, SEEK_SET) < 0 || out(w, v, n, err) < 0 ||
	    fseeko(w->out, 0, SEEK_END) < 0)
		return fail_errno(w, err, "cannot seek in the output");
	return 0;
}

static int out_patch64(struct ks_tdw *w, uint64_t pos, uint64_t v, struct ks_error *err)
{
	return out_patch(w, pos, &v, 8, err);
}

/* N zero bytes. */
static int out_zeros(struct ks_tdw *w, uint64_t n, struct ks_error *err)
{
	static const uint8_t zero[4096];

	while (n) {
		size_t k = n > sizeof(zero) ? sizeof(zero) : (size_t)n;

		if (out(w, zero, k, err) < 0)
			return -1;
		n -= k;
	}
	return 0;
}

static int out_align(struct ks_tdw *w, uint32_t align, struct ks_error *err)
{
	uint64_t pos = 0;

	if (out_tell(w, &pos, err) < 0)
		return -1;
	return out_zeros(w, (align - pos % align) % align, err);
}

/* ------------------------------------------------------------------ */
/* compression */

static int compress_block(struct ks_tdw *w, const uint8_t *in, size_t len, struct buf *dst,
			  struct ks_error *err)
{
	size_t bound = w->comp == COMP_ZSTD ? ZSTD_compressBound(len) : compressBound(len);

	dst->len = 0;
	if (buf_reserve(dst, bound) < 0)
		return fail(w, err, "out of memory");
	if (w->comp == COMP_ZSTD) {
		size_t r = ZSTD_compressCCtx(w->zctx, dst->p, bound, in, len, 3);
		if (ZSTD_isError(r))
			return fail(w, err, ZSTD_getErrorName(r));
		dst->len = r;
	} else {
		uLongf n = (uLongf)bound;
		if (compress2(dst->p, &n, in, (uLong)len, Z_DEFAULT_COMPRESSION) != Z_OK)
			return fail(w, err, "zlib compression failed");
		dst->len = n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* metadata blocks (same bytes in v6 and in v7 sections) */

static int block_headers(struct ks_tdw *w, struct buf *b)
{
	return buf_str(b, "header_page") | buf_u64(b, w->header_page.len) |
	       buf_add(b, w->header_page.p, w->header_page.len) | buf_str(b, "header_event") |
	       buf_u64(b, w->header_event.len) | buf_add(b, w->header_event.p, w->header_event.len);
}

static int block_ftrace(struct ks_tdw *w, struct buf *b)
{
	int r = buf_u32(b, (uint32_t)w->nr_ftrace);
	size_t i;

	for (i = 0; i < w->nr_ftrace; i++)
		r |= buf_u64(b, w->ftrace[i].len) | buf_add(b, w->ftrace[i].p, w->ftrace[i].len);
	return r;
}

/* Systems in the order they were first seen, each with its events. */
static int block_events(struct ks_tdw *w, struct buf *b)
{
	uint32_t nsys = 0;
	size_t i, j;
	int r = 0;

	for (i = 0; i < w->nr_events; i++) {
		for (j = 0; j < i && strcmp(w->events[j].system, w->events[i].system); j++)
			;
		nsys += j == i;
	}
	r |= buf_u32(b, nsys);
	for (i = 0; i < w->nr_events; i++) {
		uint32_t count = 0;
		for (j = 0; j < i && strcmp(w->events[j].system, w->events[i].system); j++)
			;
		if (j < i)
			continue; /* system already written */
		for (j = i; j < w->nr_events; j++)
			count += !strcmp(w->events[j].system, w->events[i].system);
		r |= buf_str(b, w->events[i].system) | buf_u32(b, count);
		for (j = i; j < w->nr_events; j++)
			if (!strcmp(w->events[j].system, w->events[i].system))
				r |= buf_u64(b, w->events[j].text.len) |
				     buf_add(b, w->events[j].text.p, w->events[j].text.len);
	}
	return r;
}

static int block_text32(const struct buf *t, struct buf *b)
{
	return buf_u32(b, (uint32_t)t->len) | buf_add(b, t->p, t->len);
}

static int block_cmdlines(struct ks_tdw *w, struct buf *b)
{
	return buf_u64(b, w->cmdlines.len) | buf_add(b, w->cmdlines.p, w->cmdlines.len);
}

static int make_block(struct ks_tdw *w, int id, struct buf *b)
{
	b->len = 0;
	switch (id) {
	case OPT_HEADER_INFO: return block_headers(w, b);
	case OPT_FTRACE_EVENTS: return block_ftrace(w, b);
	case OPT_EVENT_FORMATS: return block_events(w, b);
	case OPT_KALLSYMS: return block_text32(&w->kallsyms, b);
	case OPT_PRINTK: return block_text32(&w->printk, b);
	default: return block_cmdlines(w, b);
	}
}

/* Common options of both versions (not BUFFER, not the v7 section offsets). */
static int common_options(struct ks_tdw *w, struct buf *o)
{
	char clock[80];
	int r = 0, n = snprintf(clock, sizeof(clock), "[%s]\n", w->clock);

	r |= buf_u16(o, OPT_TRACECLOCK) | buf_u32(o, (uint32_t)n + 1) | buf_add(o, clock, (size_t)n + 1);
	if (w->uname)
		r |= buf_u16(o, OPT_UNAME) | buf_u32(o, (uint32_t)strlen(w->uname) + 1) |
		     buf_str(o, w->uname);
	if (w->has_trace_id)
		r |= buf_u16(o, OPT_TRACEID) | buf_u32(o, 8) | buf_u64(o, w->trace_id);
	if (w->has_tsc2nsec)
		r |= buf_u16(o, OPT_TSC2NSEC) | buf_u32(o, 16) | buf_u32(o, w->tsc_mult) |
		     buf_u32(o, w->tsc_shift) | buf_u64(o, w->tsc_offset);
	r |= buf_add(o, w->options.p, w->options.len);
	r |= buf_u16(o, OPT_CPUCOUNT) | buf_u32(o, 4) | buf_u32(o, w->nr_cpus);
	return r;
}

static int write_initial(struct ks_tdw *w, struct ks_error *err)
{
	uint8_t hdr[4] = { 0, (uint8_t)w->long_size };
	const char *ver = w->version == 6 ? "6" : "7";

	hdr[0] = 0; /* little endian */
	if (out(w, MAGIC, MAGIC_LEN, err) < 0 || out(w, ver, 2, err) < 0 || out(w, hdr, 2, err) < 0 ||
	    out_u32(w, w->page_size, err) < 0)
		return -1;
	if (w->version == 6)
		return 0;
	return out(w, w->comp_name, strlen(w->comp_name) + 1, err) |
	       out(w, w->comp_version, strlen(w->comp_version) + 1, err);
}

/* Copy N pages of a CPU's spool to the output, uncompressed. */
static int copy_spool(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
{
	uint8_t *tmp;
	uint64_t left = c->nr_pages * w->page_size;

	if (!c->spool)
		return 0;
	if (fflush(c->spool) != 0 || fseeko(c->spool, 0, SEEK_SET) < 0)
		return fail_errno(w, err, "cannot rewind a spool file");
	tmp = malloc(1 << 20);
	if (!tmp)
		return fail(w, err, "out of memory");
	while (left) {
		size_t n = left > (1 << 20) ? (1 << 20) : (size_t)left;
		if (fread(tmp, n, 1, c->spool) != 1) {
			free(tmp);
			return fail_errno(w, err, "cannot read a spool file");
		}
		if (out(w, tmp, n, err) < 0) {
			free(tmp);
			return -1;
		}
		left -= n;
	}
	free(tmp);
	return 0;
}

/* A CPU's pages as v7 compressed chunks: u32 count, then per chunk u32
 * compressed size, u32 uncompressed size, data. */
static int compress_spool(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
{
	uint64_t left = c->nr_pages;
	uint32_t count = (uint32_t)((c->nr_pages + w->chunk_pages - 1) / w->chunk_pages);
	size_t chunk = (size_t)w->chunk_pages * w->page_size;
	struct buf z = { 0 };
	uint8_t *tmp;
	int r = 0;

	if (fflush(c->spool) != 0 || fseeko(c->spool, 0, SEEK_SET) < 0)
		return fail_errno(w, err, "cannot rewind a spool file");
	tmp = malloc(chunk);
	if (!tmp)
		return fail(w, err, "out of memory");
	r = out_u32(w, count, err);
	while (!r && left) {
		uint64_t pages = left > w->chunk_pages ? w->chunk_pages : left;
		size_t n = (size_t)pages * w->page_size;
		if (fread(tmp, n, 1, c->spool) != 1)
			r = fail_errno(w, err, "cannot read a spool file");
		else if (!(r = compress_block(w, tmp, n, &z, err)))
			r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)n, err) |
			    out_buf(w, &z, err);
		left -= pages;
	}
	free(tmp);
	buf_free(&z);
	return r ? -1 : 0;
}

static int flush_buffer_pages(struct ks_tdw *w, struct ks_error *err)
{
	uint32_t i;

	for (i = 0; i < w->nr_streams; i++)
		if (w->cpus[i].page && flush_page(w, &w->cpus[i], err) < 0)
			return -1;
	return 0;
}

static int flush_all_pages(struct ks_tdw *w, struct ks_error *err)
{
	uint32_t i;
	int r = flush_buffer_pages(w, err);

	for (i = 1; !r && i <= w->nr_inst; i++) {
		swap_instance(w, i);
		r = flush_buffer_pages(w, err);
		swap_instance(w, i);
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* version 6 */

static int write_v6_buffer(struct ks_tdw *w, struct ks_error *err);

/* Everything before the CPU table: the blocks, the options and "flyrecord"
 * (or the latency text). */
static int write_v6_head(struct ks_tdw *w, struct ks_error *err)
{
	static const int ids[] = { OPT_HEADER_INFO, OPT_FTRACE_EVENTS, OPT_EVENT_FORMATS,
				   OPT_KALLSYMS, OPT_PRINTK, OPT_CMDLINES };
	struct buf b = { 0 };
	uint64_t pos = 0;
	uint32_t i;
	int r = 0;

	for (i = 0; !r && i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (make_block(w, ids[i], &b))
			r = fail(w, err, "out of memory");
		else
			r = out_buf(w, &b, err);
	}
	b.len = 0;
	if (!r && common_options(w, &b))
		r = fail(w, err, "out of memory");
	for (i = 0; !r && i < w->nr_inst; i++) { /* offsets patched when known */
		w->inst[i].opt_pos = b.len + 6;
		if (buf_u16(&b, OPT_BUFFER) | buf_u32(&b, 8 + (uint32_t)strlen(w->inst[i].name) + 1) |
		    buf_u64(&b, 0) | buf_str(&b, w->inst[i].name))
			r = fail(w, err, "out of memory");
	}
	if (!r && buf_u16(&b, OPT_DONE))
		r = fail(w, err, "out of memory");
	if (!r)
		r = out_u32(w, w->nr_cpus, err) | out(w, "options  ", 10, err) | out_tell(w, &pos, err);
	for (i = 0; !r && i < w->nr_inst; i++)
		w->inst[i].opt_pos += pos;
	if (!r && w->has_latency)
		r = out_buf(w, &b, err) | out(w, "latency  ", 10, err) | out_buf(w, &w->latency, err);
	else if (!r)
		r = out_buf(w, &b, err) | out(w, "flyrecord", 10, err);
	buf_free(&b);
	return r ? -1 : 0;
}

static int write_v6(struct ks_tdw *w, struct ks_error *err)
{
	uint64_t pos = 0;
	uint32_t i;
	int r;

	if (write_v6_head(w, err) < 0)
		return -1;
	if (w->has_latency)
		return 0;
	if (write_v6_buffer(w, err) < 0)
		return -1;
	for (i = 1; i <= w->nr_inst; i++) {
		swap_instance(w, i);
		r = out_align(w, 8, err) | out_tell(w, &pos, err) | out(w, "flyrecord", 10, err);
		r = r ? r : out_patch64(w, w->inst[i - 1].opt_pos, pos, err);
		r = r ? r : write_v6_buffer(w, err);
		swap_instance(w, i);
		if (r)
			return -1;
	}
	return 0;
}

/* The CPU table after "flyrecord", then the data from the next page boundary. */
static int write_v6_buffer(struct ks_tdw *w, struct ks_error *err)
{
	uint64_t pos = 0, data;
	uint32_t i;

	if (out_tell(w, &pos, err) < 0)
		return -1;
	data = (pos + 16ull * w->nr_cpus + w->page_size - 1) / w->page_size * w->page_size;
	for (i = 0; i < w->nr_cpus; i++) {
		uint64_t size = i < w->nr_streams ? w->cpus[i].nr_pages * w->page_size : 0;
		if (out_u64(w, data, err) < 0 || out_u64(w, size, err) < 0)
			return -1;
		data += size;
	}
	if (out_align(w, w->page_size, err) < 0)
		return -1;
	for (i = 0; i < w->nr_streams; i++) {
		if (copy_spool(w, &w->cpus[i], err) < 0)
			return -1;
		w->stats.data_bytes += w->cpus[i].nr_pages * w->page_size;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* version 7 */

static uint32_t add_string(struct ks_tdw *w, const char *s)
{
	uint32_t id = (uint32_t)w->strings.len;

	if (buf_str(&w->strings, s) < 0)
		w->failed = true;
	return id;
}

static int section_header_id(struct ks_tdw *w, uint16_t id, bool compressed, uint32_t desc,
			     uint64_t size, struct ks_error *err)
{
	return out_u16(w, id, err) | out_u16(w, compressed ? SEC_FL_COMPRESS : 0, err) |
	       out_u32(w, desc, err) | out_u64(w, size, err);
}

static int section_header(struct ks_tdw *w, uint16_t id, bool compressed, const char *desc,
			  uint64_t size, struct ks_error *err)
{
	return section_header_id(w, id, compressed, add_string(w, desc), size, err);
}

/* One metadata section: header (description string DESC), then the block,
 * compressed if the file is. */
static int write_section(struct ks_tdw *w, uint16_t id, uint32_t desc, const struct buf *b,
			 uint64_t *at, struct ks_error *err)
{
	struct buf z = { 0 };
	int r;

	if (out_tell(w, at, err) < 0)
		return -1;
	if (w->comp == COMP_NONE)
		return section_header_id(w, id, false, desc, b->len, err) | out_buf(w, b, err);
	if (compress_block(w, b->p, b->len, &z, err) < 0)
		return -1;
	r = section_header_id(w, id, true, desc, 8 + z.len, err) |
	    out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)b->len, err) |
	    out_buf(w, &z, err);
	buf_free(&z);
	return r;
}

static int write_meta_sections(struct ks_tdw *w, struct buf *opts, struct ks_error *err)
{
	static const struct { int id; const char *desc; } secs[] = {
		{ OPT_HEADER_INFO, "headers" }, { OPT_FTRACE_EVENTS, "ftrace events" },
		{ OPT_EVENT_FORMATS, "events format" }, { OPT_KALLSYMS, "kallsyms" },
		{ OPT_PRINTK, "printk" }, { OPT_CMDLINES, "command lines" },
	};
	struct buf b = { 0 };
	uint64_t at;
	size_t i;
	int r = 0;

	for (i = 0; !r && i < sizeof(secs) / sizeof(secs[0]); i++) {
		if (make_block(w, secs[i].id, &b))
			r = fail(w, err, "out of memory");
		else if (!(r = write_section(w, (uint16_t)secs[i].id, add_string(w, secs[i].desc),
					     &b, &at, err)) &&
			 (buf_u16(opts, (uint16_t)secs[i].id) | buf_u32(opts, 8) | buf_u64(opts, at)))
			r = fail(w, err, "out of memory");
	}
	buf_free(&b);
	return r ? -1 : 0;
}

/* An options section; *done_at receives where the DONE option's next offset is. */
static int write_options_section(struct ks_tdw *w, const struct buf *opts, uint64_t *at,
				 uint64_t *done_at, struct ks_error *err)
{
	if (out_tell(w, at, err) < 0 ||
	    section_header(w, 0, false, "options", opts->len + 14, err) < 0 ||
	    out_buf(w, opts, err) < 0 || out_u16(w, OPT_DONE, err) < 0 || out_u32(w, 8, err) < 0 ||
	    out_tell(w, done_at, err) < 0)
		return -1;
	return out_u64(w, 0, err);
}

/* The flyrecord section: header, then each CPU's data from a page boundary. */
static int write_flyrecord(struct ks_tdw *w, uint64_t *at, struct ks_error *err)
{
	uint64_t start, end = 0;
	uint32_t i;

	if (out_tell(w, at, err) < 0 ||
	    section_header(w, OPT_BUFFER, w->comp != COMP_NONE, "buffer flyrecord ", 0, err) < 0)
		return -1;
	for (i = 0; i < w->nr_streams; i++) {
		struct cpu_stream *c = &w->cpus[i];
		if (!c->nr_pages)
			continue;
		if (out_align(w, w->page_size, err) < 0 || out_tell(w, &c->file_off, err) < 0)
			return -1;
		if ((w->comp == COMP_NONE ? copy_spool(w, c, err) : compress_spool(w, c, err)) < 0)
			return -1;
		if (out_tell(w, &end, err) < 0)
			return -1;
		c->file_size = end - c->file_off;
		w->stats.data_bytes += c->file_size;
	}
	if (out_tell(w, &end, err) < 0)
		return -1;
	start = *at + 16;
	return out_patch64(w, *at + 8, end - start, err);
}

static int buffer_option(struct ks_tdw *w, const char *name, uint64_t fly_at, struct buf *o)
{
	uint32_t i, ncpu = 0, size;
	int r = 0;

	for (i = 0; i < w->nr_streams; i++)
		ncpu += w->cpus[i].nr_pages > 0;
	size = 8 + (uint32_t)strlen(name) + 1 + (uint32_t)strlen(w->clock) + 1 + 8 + 20 * ncpu;
	r |= buf_u16(o, OPT_BUFFER) | buf_u32(o, size) | buf_u64(o, fly_at) | buf_str(o, name) |
	     buf_str(o, w->clock) | buf_u32(o, w->page_size) | buf_u32(o, ncpu);
	for (i = 0; i < w->nr_streams; i++)
		if (w->cpus[i].nr_pages)
			r |= buf_u32(o, i) | buf_u64(o, w->cpus[i].file_off) |
			     buf_u64(o, w->cpus[i].file_size);
	return r;
}

/* Each instance's flyrecord section and its BUFFER option. */
static int write_instances_v7(struct ks_tdw *w, struct buf *opts, struct ks_error *err)
{
	uint32_t i;
	uint64_t at = 0;
	int r = 0;

	for (i = 1; !r && i <= w->nr_inst; i++) {
		swap_instance(w, i);
		r = write_flyrecord(w, &at, err);
		if (!r && buffer_option(w, w->inst[i - 1].name, at, opts))
			r = fail(w, err, "out of memory");
		swap_instance(w, i);
	}
	return r ? -1 : 0;
}

/* The latency section: the text, in compressed chunks if the file is. */
static int write_latency_v7(struct ks_tdw *w, uint64_t *at, struct ks_error *err)
{
	size_t chunk = (size_t)w->chunk_pages * w->page_size, pos;
	uint32_t count = (uint32_t)((w->latency.len + chunk - 1) / chunk);
	uint64_t end = 0;
	struct buf z = { 0 };
	int r;

	if (out_tell(w, at, err) < 0)
		return -1;
	if (w->comp == COMP_NONE)
		return section_header(w, OPT_BUFFER_TEXT, false, "buffer latency", w->latency.len, err) |
		       out_buf(w, &w->latency, err);
	r = section_header(w, OPT_BUFFER_TEXT, true, "buffer latency", 0, err) | out_u32(w, count, err);
	for (pos = 0; !r && pos < w->latency.len; pos += chunk) {
		size_t n = w->latency.len - pos < chunk ? w->latency.len - pos : chunk;
		if (!(r = compress_block(w, w->latency.p + pos, n, &z, err)))
			r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)n, err) |
			    out_buf(w, &z, err);
	}
	buf_free(&z);
	if (r || out_tell(w, &end, err) < 0)
		return -1;
	return out_patch64(w, *at + 8, end - *at - 16, err);
}

/* BUFFER_TEXT: offset of the latency section (patched later), name "", clock. */
static int latency_option(struct ks_tdw *w, struct buf *o, size_t *offset_pos)
{
	*offset_pos = o->len + 6;
	return buf_u16(o, OPT_BUFFER_TEXT) | buf_u32(o, 8 + 1 + (uint32_t)strlen(w->clock) + 1) |
	       buf_u64(o, 0) | buf_str(o, "") | buf_str(o, w->clock);
}

/* The metadata sections and the first options section; *DONE_AT receives
 * where its DONE option's next offset is. */
static int write_v7_head(struct ks_tdw *w, uint64_t *done_at, struct ks_error *err)
{
	struct buf opts = { 0 };
	uint64_t first_at = 0, opts_at = 0;
	int r = -1;

	if (out_tell(w, &first_at, err) < 0 || out_u64(w, 0, err) < 0 ||
	    write_meta_sections(w, &opts, err) < 0)
		goto out;
	if (common_options(w, &opts)) {
		fail(w, err, "out of memory");
		goto out;
	}
	if (write_options_section(w, &opts, &opts_at, done_at, err) < 0 ||
	    out_patch64(w, first_at, opts_at, err) < 0)
		goto out;
	r = 0;
out:
	buf_free(&opts);
	return r;
}

/* What follows the top-level flyrecord section at FLY_AT: the instances'
 * sections, the second options section (linked from DONE_AT), the strings
 * and the latency text. */
static int write_v7_tail(struct ks_tdw *w, uint64_t done_at, uint64_t fly_at,
			 struct ks_error *err)
{
	struct buf opts = { 0 }, strs = { 0 };
	uint64_t opts2_at = 0, done2_at = 0, str_at, lat_at = 0;
	size_t lat_pos = 0;
	uint32_t desc;
	int r;

	if (w->has_latency ? latency_option(w, &opts, &lat_pos) : buffer_option(w, "", fly_at, &opts)) {
		fail(w, err, "out of memory");
		goto fail;
	}
	if (!w->has_latency && write_instances_v7(w, &opts, err) < 0)
		goto fail;
	if (write_options_section(w, &opts, &opts2_at, &done2_at, err) < 0 ||
	    out_patch64(w, done_at, opts2_at, err) < 0)
		goto fail;
	/* the strings section describes itself too */
	desc = add_string(w, "strings");
	if (w->has_latency)
		add_string(w, "buffer latency");
	strs = w->strings;
	memset(&w->strings, 0, sizeof(w->strings));
	r = write_section(w, OPT_STRINGS, desc, &strs, &str_at, err);
	/* trace-cmd reads uncompressed latency text up to the end of the file:
	 * the section goes last */
	if (!r && w->has_latency)
		r = write_latency_v7(w, &lat_at, err) |
		    out_patch64(w, opts2_at + 16 + lat_pos, lat_at, err);
	(void)done2_at;
	buf_free(&strs);
	buf_free(&opts);
	return r ? -1 : 0;
fail:
	buf_free(&opts);
	return -1;
}

static int write_v7(struct ks_tdw *w, struct ks_error *err)
{
	uint64_t done_at = 0, fly_at = 0;

	if (write_v7_head(w, &done_at, err) < 0 ||
	    (!w->has_latency && write_flyrecord(w, &fly_at, err) < 0))
		return -1;
	return write_v7_tail(w, done_at, fly_at, err);
}

/* ------------------------------------------------------------------ */
/* streaming: pages straight to the file */

/* The file up to the first CPU's data. */
static int stream_head(struct ks_tdw *w, struct ks_error *err)
{
	if (w->nr_inst || w->has_latency || w->nr_streams)
		return fail(w, err, "a streamed file has pages only");
	if (default_headers(w, err) < 0 || write_initial(w, err) < 0)
		return -1;
	w->streaming = true;
	if (w->version == 6) {
		/* the CPU table, filled at close */
		if (write_v6_head(w, err) < 0 || out_tell(w, &w->head_at, err) < 0 ||
		    out_zeros(w, 16ull * w->nr_cpus, err) < 0)
			return -1;
		return out_align(w, w->page_size, err);
	}
	if (write_v7_head(w, &w->head_at, err) < 0 || out_tell(w, &w->fly_at, err) < 0)
		return -1;
	return section_header(w, OPT_BUFFER, w->comp != COMP_NONE, "buffer flyrecord ", 0, err);
}

/* Compress the pages held for the CPU being written into one chunk. */
static int stream_chunk(struct ks_tdw *w, struct ks_error *err)
{
	struct buf z = { 0 };
	int r;

	if (!w->chunk.len)
		return 0;
	if (compress_block(w, w->chunk.p, w->chunk.len, &z, err) < 0)
		return -1;
	r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)w->chunk.len, err) |
	    out_buf(w, &z, err);
	buf_free(&z);
	w->chunks++;
	w->chunk.len = 0;
	return r ? -1 : 0;
}

/* The CPU being written is complete: its last chunk, count and size. */
static int stream_end_cpu(struct ks_tdw *w, struct ks_error *err)
{
	struct cpu_stream *c = &w->cpus[w->stream_cpu];
	uint64_t end = 0;

	if (w->comp != COMP_NONE &&
	    (stream_chunk(w, err) < 0 || out_patch(w, w->count_at, &w->chunks, 4, err) < 0))
		return -1;
	if (out_tell(w, &end, err) < 0)
		return -1;
	c->file_size = end - c->file_off;
	w->stats.data_bytes += c->file_size;
	return 0;
}

static int stream_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		       struct ks_error *err)
{
	struct cpu_stream *c;
	uint32_t left = w->page_size - size;

	if (cpu >= w->nr_cpus)
		return fail(w, err, "a page of a CPU past the CPU count in a streamed file");
	if (!w->streaming && stream_head(w, err) < 0)
		return -1;
	if (w->nr_streams && cpu < w->stream_cpu)
		return fail(w, err, "a CPU's pages after a later CPU's in a streamed file");
	if (!w->nr_streams || cpu != w->stream_cpu) {
		if ((w->nr_streams && stream_end_cpu(w, err) < 0) || grow_streams(w, cpu, err) < 0)
			return -1;
		w->stream_cpu = cpu;
		c = &w->cpus[cpu];
		if ((w->version == 7 && out_align(w, w->page_size, err) < 0) ||
		    out_tell(w, &c->file_off, err) < 0)
			return -1;
		w->chunks = 0;
		if (w->comp != COMP_NONE &&
		    (out_tell(w, &w->count_at, err) < 0 || out_u32(w, 0, err) < 0))
			return -1;
	}
	c = &w->cpus[cpu];
	c->nr_pages++;
	w->stats.pages++;
	if (w->comp == COMP_NONE)
		return out(w, page, size, err) < 0 ? -1 : out_zeros(w, left, err);
	if (buf_add(&w->chunk, page, size) < 0 || buf_reserve(&w->chunk, left) < 0)
		return fail(w, err, "out of memory");
	memset(w->chunk.p + w->chunk.len, 0, left);
	w->chunk.len += left;
	return c->nr_pages % w->chunk_pages ? 0 : stream_chunk(w, err);
}

/* The rest of a streamed file: v6 the CPU table, v7 the flyrecord
 * section's size and what follows it. */
static int stream_close(struct ks_tdw *w, struct ks_error *err)
{
	uint64_t end = 0, data = 0;
	uint32_t i;

	if (stream_end_cpu(w, err) < 0 || out_tell(w, &end, err) < 0)
		return -1;
	if (w->version == 7)
		return out_patch64(w, w->fly_at + 8, end - w->fly_at - 16, err) < 0 ? -1 :
		       write_v7_tail(w, w->head_at, w->fly_at, err);
	data = (w->head_at + 16ull * w->nr_cpus + w->page_size - 1) / w->page_size * w->page_size;
	for (i = 0; i < w->nr_cpus; i++) {
		const struct cpu_stream *c = i < w->nr_streams ? &w->cpus[i] : NULL;
		uint64_t at[2] = { c && c->nr_pages ? c->file_off : data, c ? c->file_size : 0 };

		if (out_patch(w, w->head_at + 16ull * i, at, 16, err) < 0)
			return -1;
		data = at[0] + at[1];
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* close */

static void free_all(struct ks_tdw *w)
{
	size_t i;

	for (i = 0; i < w->nr_streams; i++) {
		if (w->cpus[i].spool)
			fclose(w->cpus[i].spool);
		free(w->cpus[i].spool_buf);
		free(w->cpus[i].page);
	}
	free(w->cpus);
	for (i = 0; i < w->nr_inst; i++) {
		uint32_t j;
		for (j = 0; j < w->inst[i].nr_streams; j++) {
			if (w->inst[i].cpus[j].spool)
				fclose(w->inst[i].cpus[j].spool);
			free(w->inst[i].cpus[j].spool_buf);
			free(w->inst[i].cpus[j].page);
		}
		free(w->inst[i].cpus);
		free(w->inst[i].name);
	}
	free(w->inst);
	buf_free(&w->latency);
	for (i = 0; i < w->nr_ftrace; i++)
		buf_free(&w->ftrace[i]);
	free(w->ftrace);
	for (i = 0; i < w->nr_events; i++) {
		free(w->events[i].system);
		buf_free(&w->events[i].text);
	}
	free(w->events);
	buf_free(&w->header_page);
	buf_free(&w->header_event);
	buf_free(&w->kallsyms);
	buf_free(&w->printk);
	buf_free(&w->cmdlines);
	buf_free(&w->options);
	buf_free(&w->strings);
	buf_free(&w->chunk);
	ZSTD_freeCCtx(w->zctx);
	free(w->clock);
	free(w->uname);
	free(w->tmpdir);
	free(w->path);
	free(w->out_buf); /* its stream is closed by now */
	free(w);
}

void ks_tdw_abort(struct ks_tdw *w)
{
	if (!w)
		return;
	/* only the temporary file goes; the final name was never touched */
	ks_outfile_abort(w->of);
	free_all(w);
}

int ks_tdw_close(struct ks_tdw *w, struct ks_error *err)
{
	int r;

	if (check_usable(w, err) < 0) {
		ks_tdw_abort(w);
		return -1;
	}
	if (w->streaming) {
		r = stream_close(w, err);
		goto done;
	}
	r = default_headers(w, err);
	if (!r)
		r = flush_all_pages(w, err);
	if (!r)
		r = write_initial(w, err);
	if (!r)
		r = w->version == 6 ? write_v6(w, err) : write_v7(w, err);
done:
	if (!r && w->failed)
		r = fail(w, err, "out of memory");
	if (r < 0) {
		ks_tdw_abort(w);
		return -1;
	}
	/* flush, fsync and rename: the file appears under its name complete */
	r = ks_outfile_commit(w->of, err);
	free_all(w);
	return r < 0 ? -1 : 0;
}
