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
 * The writer's files (tracedat_writer_impl.h): this one keeps the metadata
 * and options; tracedat_writer_format.c, _events.c and _file.c do the rest.
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
#include "tracedat_writer_impl.h"

/* ------------------------------------------------------------------ */
/* buffers */

static int buf_set(struct ks_buf *b, const char *text, size_t len)
{
	b->len = 0;
	return ks_buf_add(b, text, len);
}

/* ------------------------------------------------------------------ */
/* errors */

int tdw_fail(struct ks_tdw *w, struct ks_error *err, const char *what)
{
	if (w)
		w->failed = true;
	return ks_error_set(err, "%s: %s", w ? w->path : "trace.dat writer", what);
}

int tdw_fail_errno(struct ks_tdw *w, struct ks_error *err, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(errno));
	return tdw_fail(w, err, msg);
}

int tdw_check_usable(struct ks_tdw *w, struct ks_error *err)
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
	if (tdw_check_usable(w, err) < 0)
		return -1;
	if (w->streaming)
		return tdw_fail(w, err, "metadata after the first page of a streamed file");
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
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", w->path);
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
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", w->path);
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
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
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

static int set_text(struct ks_tdw *w, struct ks_buf *b, const char *text, size_t len,
		    struct ks_error *err)
{
	if (check_meta(w, err) < 0)
		return -1;
	if (buf_set(b, text, len) < 0)
		return tdw_fail(w, err, "out of memory");
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
	if (ks_buf_add(&w->cmdlines, line, (size_t)n) < 0)
		return tdw_fail(w, err, "out of memory");
	return 0;
}

int ks_tdw_add_ftrace_format(struct ks_tdw *w, const char *text, size_t len, struct ks_error *err)
{
	struct ks_buf *n;

	if (check_meta(w, err) < 0)
		return -1;
	n = realloc(w->ftrace, (w->nr_ftrace + 1) * sizeof(*n));
	if (!n)
		return tdw_fail(w, err, "out of memory");
	w->ftrace = n;
	memset(&n[w->nr_ftrace], 0, sizeof(*n));
	if (ks_buf_add(&n[w->nr_ftrace], text, len) < 0)
		return tdw_fail(w, err, "out of memory");
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
		return tdw_fail(w, err, "out of memory");
	w->events = n;
	n += w->nr_events;
	memset(n, 0, sizeof(*n));
	n->system = strdup(system && *system ? system : "unknown");
	w->nr_events++;
	if (!n->system || ks_buf_add(&n->text, text, len) < 0)
		return tdw_fail(w, err, "out of memory");
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
	    ks_buf_add(&w->options, data, size) < 0)
		return tdw_fail(w, err, "out of memory");
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
		return tdw_fail(w, err, "out of memory");
	w->inst = n;
	memset(&n[w->nr_inst], 0, sizeof(*n));
	n[w->nr_inst].name = strdup(name);
	if (!n[w->nr_inst].name)
		return tdw_fail(w, err, "out of memory");
	*inst = ++w->nr_inst;
	return 0;
}

/* Exchange the top-level streams with instance I's (1-based), so the code
 * written for one buffer works on any; calling it again swaps back. */
void tdw_swap_instance(struct ks_tdw *w, uint32_t i)
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
	tdw_swap_instance(w, inst);
	r = ks_tdw_add_event(w, cpu, ts, payload, size, err);
	tdw_swap_instance(w, inst);
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
int tdw_default_headers(struct ks_tdw *w, struct ks_error *err)
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

