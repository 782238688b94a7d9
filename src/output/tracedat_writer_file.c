/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer_file.c - the trace.dat file itself: output primitives,
 * compression, the metadata blocks, the v6 and v7 layouts, streaming
 * output and ks_tdw_close() (tracedat_writer_impl.h).
 */
#include "tracedat_writer_impl.h"

/* ------------------------------------------------------------------ */
/* output helpers */

int tdw_out(struct ks_tdw *w, const void *p, size_t n, struct ks_error *err)
{
	if (n && fwrite(p, n, 1, w->out) != 1)
		return tdw_fail_errno(w, err, "cannot write");
	return 0;
}

int tdw_out_buf(struct ks_tdw *w, const struct ks_buf *b, struct ks_error *err)
{
	return tdw_out(w, b->p, b->len, err);
}

static int out_u16(struct ks_tdw *w, uint16_t v, struct ks_error *err) { return tdw_out(w, &v, 2, err); }
static int out_u32(struct ks_tdw *w, uint32_t v, struct ks_error *err) { return tdw_out(w, &v, 4, err); }
static int out_u64(struct ks_tdw *w, uint64_t v, struct ks_error *err) { return tdw_out(w, &v, 8, err); }

static int out_tell(struct ks_tdw *w, uint64_t *pos, struct ks_error *err)
{
	off_t o = ftello(w->out);

	if (o < 0)
		return tdw_fail_errno(w, err, "cannot tell the output position");
	*pos = (uint64_t)o;
	return 0;
}

/* Overwrite N bytes at POS, then go back to the end. */
static int out_patch(struct ks_tdw *w, uint64_t pos, const void *v, size_t n, struct ks_error *err)
{
	if (fseeko(w->out, (off_t)pos, SEEK_SET) < 0 || tdw_out(w, v, n, err) < 0 ||
	    fseeko(w->out, 0, SEEK_END) < 0)
		return tdw_fail_errno(w, err, "cannot seek in the output");
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

		if (tdw_out(w, zero, k, err) < 0)
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

static int compress_block(struct ks_tdw *w, const void *in, size_t len, struct ks_buf *dst,
			  struct ks_error *err)
{
	size_t bound = w->comp == COMP_ZSTD ? ZSTD_compressBound(len) : compressBound(len);

	dst->len = 0;
	if (ks_buf_reserve(dst, bound) < 0)
		return tdw_fail(w, err, "out of memory");
	if (w->comp == COMP_ZSTD) {
		size_t r = ZSTD_compressCCtx(w->zctx, dst->p, bound, in, len, 3);
		if (ZSTD_isError(r))
			return tdw_fail(w, err, ZSTD_getErrorName(r));
		dst->len = r;
	} else {
		uLongf n = (uLongf)bound;
		if (compress2((Bytef *)dst->p, &n, in, (uLong)len, Z_DEFAULT_COMPRESSION) != Z_OK)
			return tdw_fail(w, err, "zlib compression failed");
		dst->len = n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* metadata blocks (same bytes in v6 and in v7 sections) */

static int block_headers(struct ks_tdw *w, struct ks_buf *b)
{
	return buf_str(b, "header_page") | buf_u64(b, w->header_page.len) |
	       ks_buf_add(b, w->header_page.p, w->header_page.len) | buf_str(b, "header_event") |
	       buf_u64(b, w->header_event.len) | ks_buf_add(b, w->header_event.p, w->header_event.len);
}

static int block_ftrace(struct ks_tdw *w, struct ks_buf *b)
{
	int r = buf_u32(b, (uint32_t)w->nr_ftrace);
	size_t i;

	for (i = 0; i < w->nr_ftrace; i++)
		r |= buf_u64(b, w->ftrace[i].len) | ks_buf_add(b, w->ftrace[i].p, w->ftrace[i].len);
	return r;
}

/* Systems in the order they were first seen, each with its events. */
static int block_events(struct ks_tdw *w, struct ks_buf *b)
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
				     ks_buf_add(b, w->events[j].text.p, w->events[j].text.len);
	}
	return r;
}

static int block_text32(const struct ks_buf *t, struct ks_buf *b)
{
	return buf_u32(b, (uint32_t)t->len) | ks_buf_add(b, t->p, t->len);
}

static int block_cmdlines(struct ks_tdw *w, struct ks_buf *b)
{
	return buf_u64(b, w->cmdlines.len) | ks_buf_add(b, w->cmdlines.p, w->cmdlines.len);
}

static int make_block(struct ks_tdw *w, int id, struct ks_buf *b)
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
static int common_options(struct ks_tdw *w, struct ks_buf *o)
{
	char clock[80];
	int r = 0, n = snprintf(clock, sizeof(clock), "[%s]\n", w->clock);

	r |= buf_u16(o, OPT_TRACECLOCK) | buf_u32(o, (uint32_t)n + 1) | ks_buf_add(o, clock, (size_t)n + 1);
	if (w->uname)
		r |= buf_u16(o, OPT_UNAME) | buf_u32(o, (uint32_t)strlen(w->uname) + 1) |
		     buf_str(o, w->uname);
	if (w->has_trace_id)
		r |= buf_u16(o, OPT_TRACEID) | buf_u32(o, 8) | buf_u64(o, w->trace_id);
	if (w->has_tsc2nsec)
		r |= buf_u16(o, OPT_TSC2NSEC) | buf_u32(o, 16) | buf_u32(o, w->tsc_mult) |
		     buf_u32(o, w->tsc_shift) | buf_u64(o, w->tsc_offset);
	r |= ks_buf_add(o, w->options.p, w->options.len);
	r |= buf_u16(o, OPT_CPUCOUNT) | buf_u32(o, 4) | buf_u32(o, w->nr_cpus);
	return r;
}

static int write_initial(struct ks_tdw *w, struct ks_error *err)
{
	uint8_t hdr[4] = { 0, (uint8_t)w->long_size };
	const char *ver = w->version == 6 ? "6" : "7";

	hdr[0] = 0; /* little endian */
	if (tdw_out(w, MAGIC, MAGIC_LEN, err) < 0 || tdw_out(w, ver, 2, err) < 0 || tdw_out(w, hdr, 2, err) < 0 ||
	    out_u32(w, w->page_size, err) < 0)
		return -1;
	if (w->version == 6)
		return 0;
	return tdw_out(w, w->comp_name, strlen(w->comp_name) + 1, err) |
	       tdw_out(w, w->comp_version, strlen(w->comp_version) + 1, err);
}

/* Copy N pages of a CPU's spool to the output, uncompressed. */
static int copy_spool(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
{
	uint8_t *tmp;
	uint64_t left = c->nr_pages * w->page_size;

	if (!c->spool)
		return 0;
	if (fflush(c->spool) != 0 || fseeko(c->spool, 0, SEEK_SET) < 0)
		return tdw_fail_errno(w, err, "cannot rewind a spool file");
	tmp = malloc(1 << 20);
	if (!tmp)
		return tdw_fail(w, err, "out of memory");
	while (left) {
		size_t n = left > (1 << 20) ? (1 << 20) : (size_t)left;
		if (fread(tmp, n, 1, c->spool) != 1) {
			free(tmp);
			return tdw_fail_errno(w, err, "cannot read a spool file");
		}
		if (tdw_out(w, tmp, n, err) < 0) {
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
	struct ks_buf z = { 0 };
	uint8_t *tmp;
	int r = 0;

	if (fflush(c->spool) != 0 || fseeko(c->spool, 0, SEEK_SET) < 0)
		return tdw_fail_errno(w, err, "cannot rewind a spool file");
	tmp = malloc(chunk);
	if (!tmp)
		return tdw_fail(w, err, "out of memory");
	r = out_u32(w, count, err);
	while (!r && left) {
		uint64_t pages = left > w->chunk_pages ? w->chunk_pages : left;
		size_t n = (size_t)pages * w->page_size;
		if (fread(tmp, n, 1, c->spool) != 1)
			r = tdw_fail_errno(w, err, "cannot read a spool file");
		else if (!(r = compress_block(w, tmp, n, &z, err)))
			r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)n, err) |
			    tdw_out_buf(w, &z, err);
		left -= pages;
	}
	free(tmp);
	ks_buf_free(&z);
	return r ? -1 : 0;
}

static int flush_buffer_pages(struct ks_tdw *w, struct ks_error *err)
{
	uint32_t i;

	for (i = 0; i < w->nr_streams; i++)
		if (w->cpus[i].page && tdw_flush_page(w, &w->cpus[i], err) < 0)
			return -1;
	return 0;
}

static int flush_all_pages(struct ks_tdw *w, struct ks_error *err)
{
	uint32_t i;
	int r = flush_buffer_pages(w, err);

	for (i = 1; !r && i <= w->nr_inst; i++) {
		tdw_swap_instance(w, i);
		r = flush_buffer_pages(w, err);
		tdw_swap_instance(w, i);
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
	struct ks_buf b = { 0 };
	uint64_t pos = 0;
	uint32_t i;
	int r = 0;

	for (i = 0; !r && i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (make_block(w, ids[i], &b))
			r = tdw_fail(w, err, "out of memory");
		else
			r = tdw_out_buf(w, &b, err);
	}
	b.len = 0;
	if (!r && common_options(w, &b))
		r = tdw_fail(w, err, "out of memory");
	for (i = 0; !r && i < w->nr_inst; i++) { /* offsets patched when known */
		w->inst[i].opt_pos = b.len + 6;
		if (buf_u16(&b, OPT_BUFFER) | buf_u32(&b, 8 + (uint32_t)strlen(w->inst[i].name) + 1) |
		    buf_u64(&b, 0) | buf_str(&b, w->inst[i].name))
			r = tdw_fail(w, err, "out of memory");
	}
	if (!r && buf_u16(&b, OPT_DONE))
		r = tdw_fail(w, err, "out of memory");
	if (!r)
		r = out_u32(w, w->nr_cpus, err) | tdw_out(w, "options  ", 10, err) | out_tell(w, &pos, err);
	for (i = 0; !r && i < w->nr_inst; i++)
		w->inst[i].opt_pos += pos;
	if (!r && w->has_latency)
		r = tdw_out_buf(w, &b, err) | tdw_out(w, "latency  ", 10, err) | tdw_out_buf(w, &w->latency, err);
	else if (!r)
		r = tdw_out_buf(w, &b, err) | tdw_out(w, "flyrecord", 10, err);
	ks_buf_free(&b);
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
		tdw_swap_instance(w, i);
		r = out_align(w, 8, err) | out_tell(w, &pos, err) | tdw_out(w, "flyrecord", 10, err);
		r = r ? r : out_patch64(w, w->inst[i - 1].opt_pos, pos, err);
		r = r ? r : write_v6_buffer(w, err);
		tdw_swap_instance(w, i);
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
static int write_section(struct ks_tdw *w, uint16_t id, uint32_t desc, const struct ks_buf *b,
			 uint64_t *at, struct ks_error *err)
{
	struct ks_buf z = { 0 };
	int r;

	if (out_tell(w, at, err) < 0)
		return -1;
	if (w->comp == COMP_NONE)
		return section_header_id(w, id, false, desc, b->len, err) | tdw_out_buf(w, b, err);
	if (compress_block(w, b->p, b->len, &z, err) < 0)
		return -1;
	r = section_header_id(w, id, true, desc, 8 + z.len, err) |
	    out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)b->len, err) |
	    tdw_out_buf(w, &z, err);
	ks_buf_free(&z);
	return r;
}

static int write_meta_sections(struct ks_tdw *w, struct ks_buf *opts, struct ks_error *err)
{
	static const struct { int id; const char *desc; } secs[] = {
		{ OPT_HEADER_INFO, "headers" }, { OPT_FTRACE_EVENTS, "ftrace events" },
		{ OPT_EVENT_FORMATS, "events format" }, { OPT_KALLSYMS, "kallsyms" },
		{ OPT_PRINTK, "printk" }, { OPT_CMDLINES, "command lines" },
	};
	struct ks_buf b = { 0 };
	uint64_t at;
	size_t i;
	int r = 0;

	for (i = 0; !r && i < sizeof(secs) / sizeof(secs[0]); i++) {
		if (make_block(w, secs[i].id, &b))
			r = tdw_fail(w, err, "out of memory");
		else if (!(r = write_section(w, (uint16_t)secs[i].id, add_string(w, secs[i].desc),
					     &b, &at, err)) &&
			 (buf_u16(opts, (uint16_t)secs[i].id) | buf_u32(opts, 8) | buf_u64(opts, at)))
			r = tdw_fail(w, err, "out of memory");
	}
	ks_buf_free(&b);
	return r ? -1 : 0;
}

/* An options section; *done_at receives where the DONE option's next offset is. */
static int write_options_section(struct ks_tdw *w, const struct ks_buf *opts, uint64_t *at,
				 uint64_t *done_at, struct ks_error *err)
{
	if (out_tell(w, at, err) < 0 ||
	    section_header(w, 0, false, "options", opts->len + 14, err) < 0 ||
	    tdw_out_buf(w, opts, err) < 0 || out_u16(w, OPT_DONE, err) < 0 || out_u32(w, 8, err) < 0 ||
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

static int buffer_option(struct ks_tdw *w, const char *name, uint64_t fly_at, struct ks_buf *o)
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
static int write_instances_v7(struct ks_tdw *w, struct ks_buf *opts, struct ks_error *err)
{
	uint32_t i;
	uint64_t at = 0;
	int r = 0;

	for (i = 1; !r && i <= w->nr_inst; i++) {
		tdw_swap_instance(w, i);
		r = write_flyrecord(w, &at, err);
		if (!r && buffer_option(w, w->inst[i - 1].name, at, opts))
			r = tdw_fail(w, err, "out of memory");
		tdw_swap_instance(w, i);
	}
	return r ? -1 : 0;
}

/* The latency section: the text, in compressed chunks if the file is. */
static int write_latency_v7(struct ks_tdw *w, uint64_t *at, struct ks_error *err)
{
	size_t chunk = (size_t)w->chunk_pages * w->page_size, pos;
	uint32_t count = (uint32_t)((w->latency.len + chunk - 1) / chunk);
	uint64_t end = 0;
	struct ks_buf z = { 0 };
	int r;

	if (out_tell(w, at, err) < 0)
		return -1;
	if (w->comp == COMP_NONE)
		return section_header(w, OPT_BUFFER_TEXT, false, "buffer latency", w->latency.len, err) |
		       tdw_out_buf(w, &w->latency, err);
	r = section_header(w, OPT_BUFFER_TEXT, true, "buffer latency", 0, err) | out_u32(w, count, err);
	for (pos = 0; !r && pos < w->latency.len; pos += chunk) {
		size_t n = w->latency.len - pos < chunk ? w->latency.len - pos : chunk;
		if (!(r = compress_block(w, w->latency.p + pos, n, &z, err)))
			r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)n, err) |
			    tdw_out_buf(w, &z, err);
	}
	ks_buf_free(&z);
	if (r || out_tell(w, &end, err) < 0)
		return -1;
	return out_patch64(w, *at + 8, end - *at - 16, err);
}

/* BUFFER_TEXT: offset of the latency section (patched later), name "", clock. */
static int latency_option(struct ks_tdw *w, struct ks_buf *o, size_t *offset_pos)
{
	*offset_pos = o->len + 6;
	return buf_u16(o, OPT_BUFFER_TEXT) | buf_u32(o, 8 + 1 + (uint32_t)strlen(w->clock) + 1) |
	       buf_u64(o, 0) | buf_str(o, "") | buf_str(o, w->clock);
}

/* The metadata sections and the first options section; *DONE_AT receives
 * where its DONE option's next offset is. */
static int write_v7_head(struct ks_tdw *w, uint64_t *done_at, struct ks_error *err)
{
	struct ks_buf opts = { 0 };
	uint64_t first_at = 0, opts_at = 0;
	int r = -1;

	if (out_tell(w, &first_at, err) < 0 || out_u64(w, 0, err) < 0 ||
	    write_meta_sections(w, &opts, err) < 0)
		goto out;
	if (common_options(w, &opts)) {
		tdw_fail(w, err, "out of memory");
		goto out;
	}
	if (write_options_section(w, &opts, &opts_at, done_at, err) < 0 ||
	    out_patch64(w, first_at, opts_at, err) < 0)
		goto out;
	r = 0;
out:
	ks_buf_free(&opts);
	return r;
}

/* What follows the top-level flyrecord section at FLY_AT: the instances'
 * sections, the second options section (linked from DONE_AT), the strings
 * and the latency text. */
static int write_v7_tail(struct ks_tdw *w, uint64_t done_at, uint64_t fly_at,
			 struct ks_error *err)
{
	struct ks_buf opts = { 0 }, strs = { 0 };
	uint64_t opts2_at = 0, done2_at = 0, str_at, lat_at = 0;
	size_t lat_pos = 0;
	uint32_t desc;
	int r;

	if (w->has_latency ? latency_option(w, &opts, &lat_pos) : buffer_option(w, "", fly_at, &opts)) {
		tdw_fail(w, err, "out of memory");
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
	ks_buf_free(&strs);
	ks_buf_free(&opts);
	return r ? -1 : 0;
fail:
	ks_buf_free(&opts);
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
		return tdw_fail(w, err, "a streamed file has pages only");
	if (tdw_default_headers(w, err) < 0 || write_initial(w, err) < 0)
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
	struct ks_buf z = { 0 };
	int r;

	if (!w->chunk.len)
		return 0;
	if (compress_block(w, w->chunk.p, w->chunk.len, &z, err) < 0)
		return -1;
	r = out_u32(w, (uint32_t)z.len, err) | out_u32(w, (uint32_t)w->chunk.len, err) |
	    tdw_out_buf(w, &z, err);
	ks_buf_free(&z);
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

int tdw_stream_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		       struct ks_error *err)
{
	struct cpu_stream *c;
	uint32_t left = w->page_size - size;

	if (cpu >= w->nr_cpus)
		return tdw_fail(w, err, "a page of a CPU past the CPU count in a streamed file");
	if (!w->streaming && stream_head(w, err) < 0)
		return -1;
	if (w->nr_streams && cpu < w->stream_cpu)
		return tdw_fail(w, err, "a CPU's pages after a later CPU's in a streamed file");
	if (!w->nr_streams || cpu != w->stream_cpu) {
		if ((w->nr_streams && stream_end_cpu(w, err) < 0) || tdw_grow_streams(w, cpu, err) < 0)
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
		return tdw_out(w, page, size, err) < 0 ? -1 : out_zeros(w, left, err);
	if (ks_buf_add(&w->chunk, page, size) < 0 || ks_buf_reserve(&w->chunk, left) < 0)
		return tdw_fail(w, err, "out of memory");
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
	ks_buf_free(&w->latency);
	for (i = 0; i < w->nr_ftrace; i++)
		ks_buf_free(&w->ftrace[i]);
	free(w->ftrace);
	for (i = 0; i < w->nr_events; i++) {
		free(w->events[i].system);
		ks_buf_free(&w->events[i].text);
	}
	free(w->events);
	ks_buf_free(&w->header_page);
	ks_buf_free(&w->header_event);
	ks_buf_free(&w->kallsyms);
	ks_buf_free(&w->printk);
	ks_buf_free(&w->cmdlines);
	ks_buf_free(&w->options);
	ks_buf_free(&w->strings);
	ks_buf_free(&w->chunk);
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

	if (tdw_check_usable(w, err) < 0) {
		ks_tdw_abort(w);
		return -1;
	}
	if (w->streaming) {
		r = stream_close(w, err);
		goto done;
	}
	r = tdw_default_headers(w, err);
	if (!r)
		r = flush_all_pages(w, err);
	if (!r)
		r = write_initial(w, err);
	if (!r)
		r = w->version == 6 ? write_v6(w, err) : write_v7(w, err);
done:
	if (!r && w->failed)
		r = tdw_fail(w, err, "out of memory");
	if (r < 0) {
		ks_tdw_abort(w);
		return -1;
	}
	/* flush, fsync and rename: the file appears under its name complete */
	r = ks_outfile_commit(w->of, err);
	free_all(w);
	return r < 0 ? -1 : 0;
}

