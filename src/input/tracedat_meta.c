/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_meta.c - the trace.dat reader's metadata blocks, the same in v6
 * and in v7 sections: header info, event formats, kallsyms (left in the file
 * until asked for), printk formats, saved cmdlines, and the options
 * (buffers, clocks, guests, time shifts) (tracedat_impl.h).
 */
#include "tracedat_impl.h"

/* ------------------------------------------------------------------ */
/* metadata blocks (same layout in v6 and in v7 sections) */

/* Keep BUF (SIZE bytes from td_rd_alloc(), still counted against the memory
 * budget) as the source's text ID. */
static int keep_text(struct rd *r, enum ks_source_text_id id, char *buf, uint64_t size,
		     struct ks_error *err)
{
	if (ks_source_meta_set_text(&r->td->src.meta, id, buf, size, true) < 0)
		return ks_error_code_at(err, KS_E_NOMEM, r->td->src.path, td_rd_errpos(r), "out of memory");
	return 0;
}

int td_parse_header_info(struct rd *r, struct ks_error *err)
{
	uint64_t size;
	char *buf;
	int ret;

	r->what = "header_page";
	if (td_rd_expect(r, "header_page", 12, err) < 0 || td_rd_u64(r, &size, err) < 0 ||
	    td_rd_alloc(r, size, &buf, err) < 0)
		return -1;
	ret = tep_parse_header_page(r->td->src.tep, buf, size, (int)r->td->meta.long_size);
	if (ret < 0) {
		td_rd_free(r, buf, size);
		return ks_error_at(err, r->td->src.path, td_rd_errpos(r), "cannot parse header_page");
	}
	/* kept as stored (its bytes stay counted) */
	if (keep_text(r, KS_TEXT_HEADER_PAGE, buf, size, err) < 0)
		return -1;
	r->what = "header_event";
	if (td_rd_expect(r, "header_event", 13, err) < 0 || td_rd_u64(r, &size, err) < 0 ||
	    td_rd_alloc(r, size, &buf, err) < 0)
		return -1;
	return keep_text(r, KS_TEXT_HEADER_EVENT, buf, size, err);
}

static int parse_formats(struct rd *r, const char *sys, uint32_t count, struct ks_error *err)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		uint64_t size, at, fields, lim = r->td->src.limits.memory;
		char *buf;

		if (td_obj_take(r->td, 1, td_rd_errpos(r), "an event format", err) < 0 ||
		    td_rd_u64(r, &size, err) < 0)
			return -1;
		at = td_rd_errpos(r);
		if (td_rd_alloc(r, size, &buf, err) < 0)
			return -1;
		/* what libtraceevent will keep of it, from the text, before
		 * anything parses it (format_guard.h) */
		if (ks_guard_format_budget(buf, size, lim > r->td->mem_held ?
					   (lim - r->td->mem_held) / KS_FORMAT_FIELD_COST : 0,
					   lim, r->td->src.path, at, &fields, err) < 0 ||
		    td_mem_take(r->td, fields * KS_FORMAT_FIELD_COST, at, err) < 0) {
			td_rd_free(r, buf, size);
			return -1;
		}
		/* the source keeps the text as stored (ks_source_formats()) and
		 * parses it when its events are first needed (lazy_events.h); a
		 * format libtraceevent cannot parse is skipped, like trace-cmd
		 * does: its events then come out with event == NULL.  Its bytes
		 * stay counted. */
		if (ks_source_meta_add_format(&r->td->src.meta, sys, buf, size, true) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", r->td->src.path);
	}
	return 0;
}

int td_parse_ftrace_formats(struct rd *r, struct ks_error *err)
{
	uint32_t count;

	r->what = "ftrace event formats";
	if (td_rd_u32(r, &count, err) < 0)
		return -1;
	return parse_formats(r, "ftrace", count, err);
}

int td_parse_event_formats(struct rd *r, struct ks_error *err)
{
	uint32_t nsys, i, count;
	char sys[256];

	r->what = "event formats";
	if (td_rd_u32(r, &nsys, err) < 0)
		return -1;
	for (i = 0; i < nsys; i++) {
		if (td_rd_string(r, sys, sizeof(sys), err) < 0 || td_rd_u32(r, &count, err) < 0 ||
		    parse_formats(r, sys, count, err) < 0)
			return -1;
	}
	return 0;
}

static uint64_t count_lines(const char *s, uint64_t len)
{
	const char *end = s + len, *p = s;
	uint64_t n = 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		n++;
		p++;
	}
	return n + (len && s[len - 1] != '\n');
}

/* A text block preceded by its size (4 or 8 bytes), handed to PARSE. */
static int parse_text(struct rd *r, const char *what, int size_bytes, enum ks_source_text_id id,
		      int (*parse)(struct tep_handle *, const char *), struct ks_error *err)
{
	uint64_t size;
	uint32_t s32;
	char *buf;

	r->what = what;
	if (size_bytes == 4) {
		if (td_rd_u32(r, &s32, err) < 0)
			return -1;
		size = s32;
	} else if (td_rd_u64(r, &size, err) < 0) {
		return -1;
	}
	if (td_rd_alloc(r, size, &buf, err) < 0)
		return -1;
	/* every line becomes an object of the tep (a symbol, a format, a
	 * command name) about as large as its text: the lines count as
	 * objects and the bytes stay counted as memory */
	if (td_obj_take(r->td, count_lines(buf, size), td_rd_errpos(r), what, err) < 0) {
		td_rd_free(r, buf, size);
		return -1;
	}
	if (size)
		parse(r->td->src.tep, buf);
	/* the text as stored stays with the source (ks_source_text()) */
	return keep_text(r, id, buf, size, err);
}

/* ---- kallsyms, left in the file ----
 *
 * A recording's kallsyms are some 15 MB of text (2 MB compressed): reading
 * and decompressing them was most of the cost of opening a file, and most
 * runs print no symbol.  Opening checks where they are (the section and
 * block headers, the sizes, the budgets) and leaves the text in the file;
 * it is read on the first ks_source_text() or symbol lookup.  What only
 * reading can find (a corrupt block, a size past the block's end, too many
 * lines) is then the source's error (its next read returns it). */

/* ks_source_text_loader: read the kallsyms that opening left in the file. */
static int load_kallsyms(void *arg, enum ks_source_text_id id, char **text, size_t *lenp,
			 struct ks_error *err)
{
	struct tracedat *td = arg;
	uint64_t at = td->kallsyms.at;
	uint64_t n = td->kallsyms.compressed ? td->kallsyms.ulen : td->kallsyms.len;
	char *buf = malloc(n + 1);
	uint8_t *in = NULL;
	uint32_t size;

	(void)id;
	if (!buf)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	if (td->kallsyms.compressed) {
		if (!(in = malloc(td->kallsyms.len ? td->kallsyms.len : 1))) {
			free(buf);
			return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
		}
		if (td_pread_at(td, in, td->kallsyms.len, td->kallsyms.off, "compressed block", err) < 0 ||
		    td_decompress(td, in, (uint32_t)td->kallsyms.len, buf, td->kallsyms.ulen, at + 16,
			       err) < 0)
			goto fail;
		free(in);
		in = NULL;
		size = td_get32(td, buf); /* the section: "u32 size, text" */
		if (size > n - 4) {
			ks_error_at(err, td->src.path, at,
				    "kallsyms: a block of %u bytes runs past its end (%llu bytes left)",
				    size, (unsigned long long)(n - 4));
			goto fail;
		}
		memmove(buf, buf + 4, size);
		n = size;
	} else if (td_pread_at(td, buf, n, td->kallsyms.off, "kallsyms", err) < 0) {
		goto fail;
	}
	buf[n] = '\0';
	/* every line would be a symbol: counted as parse_text counts */
	if (td_obj_take(td, count_lines(buf, n), at, "kallsyms", err) < 0)
		goto fail;
	*text = buf;
	*lenp = n;
	return 0;
fail:
	free(in);
	free(buf);
	return -1;
}

/* Leave the kallsyms in the file (not kept at all with
 * KS_OPEN_NO_SYMBOLS); an empty text is kept as it is. */
static int defer_kallsyms_text(struct tracedat *td, struct ks_error *err)
{
	char empty[1] = "";

	if ((td->open_flags & KS_OPEN_NO_SYMBOLS) ||
	    (!td->kallsyms.compressed && td->kallsyms.len == 0)) {
		if (!(td->open_flags & KS_OPEN_NO_SYMBOLS) &&
		    ks_source_meta_set_text(&td->src.meta, KS_TEXT_KALLSYMS, empty, 0, false) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", td->src.path);
		return 0;
	}
	if (ks_source_meta_defer_text(&td->src.meta, KS_TEXT_KALLSYMS, load_kallsyms, td) < 0)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", td->src.path);
	return 0;
}

/* v6: "u32 size, text" at R, in the file (v7 sections:
 * defer_kallsyms_section). */
int td_parse_kallsyms(struct rd *r, struct ks_error *err)
{
	struct tracedat *td = r->td;
	bool skip = td->open_flags & KS_OPEN_NO_SYMBOLS;
	uint32_t size;

	r->what = "kallsyms";
	if (td_rd_u32(r, &size, err) < 0)
		return -1;
	if (size > r->end - r->pos)
		return ks_error_at(err, td->src.path, r->pos,
				   "truncated: kallsyms: a block of %u bytes runs past its end "
				   "(%llu bytes left)", size,
				   (unsigned long long)(r->end - r->pos));
	if (!skip && td_mem_take(td, (uint64_t)size + 1, r->pos, err) < 0)
		return -1;
	td->kallsyms.off = r->pos;
	td->kallsyms.len = size;
	td->kallsyms.compressed = false;
	r->pos += size;
	td->kallsyms.at = r->pos;
	return defer_kallsyms_text(td, err);
}

/* v7: the kallsyms section at OFF, its headers checked and
 * counted as td_load_section and parse_text count them. */
static int defer_kallsyms_section(struct tracedat *td, uint64_t off, struct ks_error *err)
{
	bool skip = td->open_flags & KS_OPEN_NO_SYMBOLS;
	uint8_t *none = NULL, b[4];
	uint32_t csize, usize, size;
	uint16_t id, flags;
	uint64_t len;

	if (td_section_header(td, off, "option", &id, &flags, &len, err) < 0)
		return -1;
	if (id != OPT_KALLSYMS)
		return ks_error_at(err, td->src.path, off, "section id %u where %u was expected", id,
				   OPT_KALLSYMS);
	td->kallsyms.at = off;
	if (flags & SEC_FL_COMPRESS) {
		if (td_compressed_header(td, off + 16, off + 16 + len, MAX_SECTION, &csize, &usize,
				      err) < 0 ||
		    td_mem_take(td, (uint64_t)usize + csize + 2, off + 16, err) < 0)
			return -1;
		td_mem_give(td, (uint64_t)csize + 1);
		/* the decompressed section stays counted as the text */
		if (td_count_section_bytes(td, off, &none, usize, err) < 0)
			return -1;
		if (usize < 4)
			return ks_error_at(err, td->src.path, off,
					   "kallsyms is truncated (needs 4 more bytes, %u left)", usize);
		if (skip)
			td_mem_give(td, (uint64_t)usize + 1);
		td->kallsyms.off = off + 16 + 8;
		td->kallsyms.len = csize;
		td->kallsyms.ulen = usize;
		td->kallsyms.compressed = true;
		return defer_kallsyms_text(td, err);
	}
	if (len > MAX_SECTION)
		return ks_error_at(err, td->src.path, off, "section of %llu bytes is too large",
				   (unsigned long long)len);
	if (len < 4)
		return ks_error_at(err, td->src.path, off,
				   "kallsyms is truncated (needs 4 more bytes, %llu left)",
				   (unsigned long long)len);
	if (td_pread_at(td, b, 4, off + 16, "section", err) < 0)
		return -1;
	size = td_get32(td, b);
	if (size > len - 4)
		return ks_error_at(err, td->src.path, off,
				   "kallsyms: a block of %u bytes runs past its end (%llu bytes left)",
				   size, (unsigned long long)(len - 4));
	td->section_bytes += len;
	if (td->section_bytes > MAX_SECTION)
		return ks_error_at(err, td->src.path, off,
				   "the metadata sections hold more than %u MB in all", MAX_SECTION >> 20);
	if (!skip && td_mem_take(td, (uint64_t)size + 1, off, err) < 0)
		return -1;
	td->kallsyms.off = off + 16 + 4;
	td->kallsyms.len = size;
	td->kallsyms.compressed = false;
	return defer_kallsyms_text(td, err);
}

int td_parse_printk(struct rd *r, struct ks_error *err)
{
	return parse_text(r, "printk formats", 4, KS_TEXT_PRINTK, ks_guard_parse_printk, err);
}

int td_parse_cmdlines(struct rd *r, struct ks_error *err)
{
	return parse_text(r, "saved cmdlines", 8, KS_TEXT_CMDLINES, tep_parse_saved_cmdlines, err);
}

/* ------------------------------------------------------------------ */
/* options */

static char *opt_string(const uint8_t *data, uint32_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static void set_string(char **dst, const uint8_t *data, uint32_t size)
{
	free(*dst);
	*dst = opt_string(data, size);
}

static int opt_guest(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
		     struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	struct ks_tracedat_guest *g;
	const uint8_t *nul = memchr(d, 0, size);
	uint32_t pos, n, i;

	if (!nul || (uint32_t)(nul - d) + 1 + 12 > size)
		return ks_error_at(err, td->src.path, at, "GUEST option is truncated");
	pos = (uint32_t)(nul - d) + 1;
	n = td_get32(td, d + pos + 8);
	if ((uint64_t)n * 8 > size - pos - 12)
		return ks_error_at(err, td->src.path, at, "GUEST option: %u vCPUs do not fit", n);
	if (td_obj_take(td, 1 + (uint64_t)n, at, "a GUEST option", err) < 0 ||
	    td_mem_take(td, pos + (n ? n : 1) * sizeof(*g->vcpus), at, err) < 0 ||
	    td_grow(td, (void **)&m->guests, &td->guests_cap, m->nr_guests, sizeof(*m->guests), at,
		 err) < 0)
		return -1;
	g = &m->guests[m->nr_guests];
	memset(g, 0, sizeof(*g));
	g->name = strdup((const char *)d);
	g->trace_id = td_get64(td, d + pos);
	g->vcpus = calloc(n ? n : 1, sizeof(*g->vcpus));
	if (!g->name || !g->vcpus) {
		free(g->name);
		free(g->vcpus);
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	}
	g->nr_vcpus = n;
	for (i = 0; i < n; i++) {
		g->vcpus[i].vcpu = td_get32(td, d + pos + 12 + i * 8);
		g->vcpus[i].host_tid = td_get32(td, d + pos + 16 + i * 8);
	}
	m->nr_guests++;
	return 0;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct ks_tracedat_tsync_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int opt_time_shift(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
			  struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	uint32_t ncpu, c, i, pos = 16;

	if (size < 16 || m->has_time_shift)
		return size < 16 ? ks_error_at(err, td->src.path, at, "TimeShift option is truncated") : 0;
	m->tsync_peer_id = td_get64(td, d);
	m->tsync_flags = td_get32(td, d + 8);
	ncpu = td_get32(td, d + 12);
	if (ncpu > size / 4)
		return ks_error_at(err, td->src.path, at, "TimeShift option: %u CPUs do not fit", ncpu);
	/* at most a sample per 24 bytes of the option, each one of 32 */
	if (td_obj_take(td, ncpu, at, "a TimeShift option", err) < 0 ||
	    td_mem_take(td, (uint64_t)ncpu * sizeof(*m->tsync_cpus) + size / 24 * 32, at, err) < 0)
		return -1;
	m->tsync_cpus = calloc(ncpu ? ncpu : 1, sizeof(*m->tsync_cpus));
	if (!m->tsync_cpus)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	m->tsync_nr_cpus = ncpu;
	m->has_time_shift = true;
	for (c = 0; c < ncpu; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		uint32_t n;

		if (size - pos < 4)
			return ks_error_at(err, td->src.path, at, "TimeShift option is truncated");
		n = td_get32(td, d + pos);
		pos += 4;
		if ((uint64_t)n * 24 > size - pos)
			return ks_error_at(err, td->src.path, at,
					   "TimeShift option: %u samples of CPU %u do not fit", n, c);
		tc->samples = calloc(n ? n : 1, sizeof(*tc->samples));
		if (!tc->samples)
			return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
		tc->nr_samples = n;
		for (i = 0; i < n; i++) {
			tc->samples[i].time = td_get64(td, d + pos + i * 8);
			tc->samples[i].offset = (int64_t)td_get64(td, d + pos + (n + i) * 8);
			tc->samples[i].scaling = td_get64(td, d + pos + (2 * n + i) * 8);
		}
		pos += n * 24;
	}
	/* Optional second part: the fraction bits of every sample. */
	for (c = 0; c < ncpu && size > pos; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		if ((uint64_t)tc->nr_samples * 8 > size - pos)
			return ks_error_at(err, td->src.path, at, "TimeShift fraction bits are truncated");
		for (i = 0; i < tc->nr_samples; i++)
			tc->samples[i].fraction = td_get64(td, d + pos + i * 8);
		pos += tc->nr_samples * 8;
	}
	for (c = 0; c < ncpu; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		uint32_t j = 0;
		qsort(tc->samples, tc->nr_samples, sizeof(*tc->samples), sample_cmp);
		for (i = 0; i < tc->nr_samples; i++)
			if (i == 0 || tc->samples[i].time != tc->samples[i - 1].time)
				tc->samples[j++] = tc->samples[i];
		tc->nr_samples = j;
	}
	return 0;
}

static int add_buffer_name(struct tracedat *td, const char *name, uint64_t at, struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	char **names;

	if (td_obj_take(td, 1, at, "a BUFFER option", err) < 0 ||
	    td_mem_take(td, strlen(name) + 1, at, err) < 0 ||
	    td_grow(td, (void **)&m->buffer_names, &td->names_cap, m->nr_buffers, sizeof(*names), at,
		 err) < 0)
		return -1;
	names = m->buffer_names;
	names[m->nr_buffers] = strdup(name);
	if (!names[m->nr_buffers])
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	m->nr_buffers++;
	return 0;
}

/* A new flyrecord buffer NAME whose data is described at OFFSET. */
struct tdbuffer *td_add_tdbuffer(struct tracedat *td, const char *name, uint64_t offset,
				     uint64_t at, struct ks_error *err)
{
	struct tdbuffer *b;
	bool top = *name == '\0';

	if (top && td->have_top) {
		ks_error_at(err, td->src.path, at, "more than one top-level BUFFER option");
		return NULL;
	}
	if (td_obj_take(td, 1, at, "a buffer", err) < 0 || td_mem_take(td, strlen(name) + 1, at, err) < 0 ||
	    td_grow(td, (void **)&td->buffers, &td->buffers_cap, td->nr_buffers, sizeof(*b), at, err) < 0)
		return NULL;
	b = &td->buffers[td->nr_buffers];
	memset(b, 0, sizeof(*b));
	b->name = strdup(name);
	if (!b->name) {
		ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
		return NULL;
	}
	b->offset = offset;
	b->first = td->nr_cpus;
	b->order = top ? 0 : 1 + td->instances;
	td->instances += !top;
	td->nr_buffers++;
	td->have_top |= top;
	return b;
}

/* Append NCPU cursors for buffer B (the last one added). */
int td_add_cursors(struct tracedat *td, struct tdbuffer *b, uint32_t ncpu, uint64_t at,
		       struct ks_error *err)
{
	if (ncpu > (1u << 16) || td->nr_cpus + ncpu > (1u << 20))
		return ks_error_at(err, td->src.path, at, "implausible CPU count %u in buffer \"%s\"",
				   ncpu, b->name);
	/* each cursor: its entry here, its index in the heap and in by_start */
	if (td_obj_take(td, ncpu, at, "CPU regions", err) < 0 ||
	    td_mem_take(td, (uint64_t)ncpu * 8, at, err) < 0 ||
	    td_grow(td, (void **)&td->cpus, &td->cpus_cap, td->nr_cpus + ncpu, sizeof(*td->cpus), at,
		 err) < 0)
		return -1;
	memset(td->cpus + td->nr_cpus, 0, ncpu * sizeof(*td->cpus));
	b->first = td->nr_cpus;
	b->nr_cpus = ncpu;
	td->nr_cpus += ncpu;
	return 0;
}

/* Check one CPU's data location and fill in its cursor. */
int td_set_cursor(struct tracedat *td, struct tdbuffer *b, uint32_t i, uint32_t cpu,
		      uint64_t off, uint64_t size, uint64_t at, struct ks_error *err)
{
	struct cpu_cursor *c = &td->cpus[b->first + i];

	if (cpu >= (1u << 16))
		return ks_error_at(err, td->src.path, at, "buffer \"%s\": implausible CPU number %u",
				   b->name, cpu);
	/* past the end: a file cut short, unless the numbers are absurd */
	if ((off > td->file_size || size > td->file_size - off) && off < PLAUSIBLE && size < PLAUSIBLE)
		return ks_error_at(err, td->src.path, at,
				   "truncated: buffer \"%s\": data of CPU %u (offset %llu, %llu bytes) "
				   "runs past the end of the file (%llu bytes)", b->name, cpu,
				   (unsigned long long)off, (unsigned long long)size,
				   (unsigned long long)td->file_size);
	if (off > td->file_size || size > td->file_size - off)
		return ks_error_at(err, td->src.path, at,
				   "buffer \"%s\": data of CPU %u (offset %llu, %llu bytes) lies outside the file",
				   b->name, cpu, (unsigned long long)off, (unsigned long long)size);
	c->cpu = cpu;
	c->buffer = (uint32_t)(b - td->buffers);
	c->order = b->order;
	c->start = off;
	c->end = off + size;
	return 0;
}

/* v7 BUFFER: offset, name, clock, page size, CPU count, per CPU (id, offset, size). */
static int opt_buffer_v7(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
			 struct ks_error *err)
{
	const uint8_t *name = d + 8, *clock, *p, *end = d + size;
	struct tdbuffer *b;
	uint32_t ncpu, i;

	clock = name + strlen((const char *)name) + 1;
	if (clock >= end || !memchr(clock, 0, (size_t)(end - clock)))
		return ks_error_at(err, td->src.path, at, "BUFFER option: clock is truncated");
	p = clock + strlen((const char *)clock) + 1;
	if (end - p < 8)
		return ks_error_at(err, td->src.path, at, "BUFFER option is truncated");
	if (*clock && !*name) /* the top buffer's clock wins over TRACECLOCK */
		set_string(&td->meta.clock, clock, (uint32_t)strlen((const char *)clock));
	ncpu = td_get32(td, p + 4);
	if ((uint64_t)ncpu * 20 > (uint64_t)(end - p - 8))
		return ks_error_at(err, td->src.path, at, "BUFFER option: %u CPUs do not fit", ncpu);
	b = td_add_tdbuffer(td, (const char *)name, td_get64(td, d), at, err);
	if (!b)
		return -1;
	b->page_size = td_get32(td, p);
	if (td_add_cursors(td, b, ncpu, at, err) < 0)
		return -1;
	for (i = 0, p += 8; i < ncpu; i++, p += 20)
		if (td_set_cursor(td, b, i, td_get32(td, p), td_get64(td, p + 4), td_get64(td, p + 12), at, err) < 0)
			return -1;
	return 0;
}

/* BUFFER / BUFFER_TEXT.  v6: offset + name (the CPU table is at the offset).
 * v7: see opt_buffer_v7; BUFFER_TEXT: offset, name, clock of a latency section. */
static int opt_buffer(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
		      uint64_t at, struct ks_error *err)
{
	const char *name;

	if (size < 9 || !memchr(d + 8, 0, size - 8))
		return ks_error_at(err, td->src.path, at, "BUFFER option is truncated");
	name = (const char *)d + 8;
	td->have_buffer_option = true;
	if (add_buffer_name(td, name, at, err) < 0)
		return -1;
	if (id == OPT_BUFFER_TEXT) {
		if (td->latency)
			return ks_error_at(err, td->src.path, at, "more than one latency buffer");
		td->meta.has_latency = true;
		td->latency = true;
		td->latency_offset = td_get64(td, d);
		return 0;
	}
	if (td->meta.version >= 7)
		return opt_buffer_v7(td, d, size, at, err);
	if (!*name)
		return ks_error_at(err, td->src.path, at, "v6 BUFFER option without a name");
	return td_add_tdbuffer(td, name, td_get64(td, d), at, err) ? 0 : -1;
}

static int opt_section_ref(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			   uint64_t at, struct ks_error *err);

/* TRACECLOCK is the tracefs trace_clock file: "local [x86-tsc] ...", the
 * clock in brackets is the one in use. */
static void set_selected_clock(struct ks_tracedat_meta *m, const uint8_t *d, uint32_t size)
{
	char *s = opt_string(d, size), *open, *close;

	if (!s)
		return;
	open = strchr(s, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		*close = '\0';
		memmove(s, open + 1, strlen(open + 1) + 1);
	} else {
		s[strcspn(s, " \n")] = '\0';
	}
	free(m->clock);
	m->clock = s;
}

static int handle_option(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			 uint64_t at, struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;

	switch (id) {
	case OPT_BUFFER:
	case OPT_BUFFER_TEXT:
		return opt_buffer(td, id, d, size, at, err);
	case OPT_TRACECLOCK:
		if (!m->clock)
			set_selected_clock(m, d, size);
		return 0;
	case OPT_UNAME:
		set_string(&m->uname, d, size);
		return 0;
	case OPT_VERSION:
		set_string(&m->version_string, d, size);
		return 0;
	case OPT_OFFSET: {
		/* trace-cmd writes it "%lld" and reads it with base 0 */
		char *s = opt_string(d, size);
		int64_t v;
		int bad = s && ks_parse_i64(s, strlen(s), 0, &v) < 0;

		if (s && !bad)
			m->ts_offset += v;
		free(s);
		if (bad)
			return ks_error_at(err, td->src.path, at,
					   "the OFFSET option is not a whole number");
		return 0;
	}
	case OPT_CPUCOUNT:
		if (size >= 4)
			m->cpu_count = td_get32(td, d);
		if (m->cpu_count > (1u << 16))
			return ks_error_at(err, td->src.path, at, "implausible CPU count %u",
					   m->cpu_count);
		return 0;
	case OPT_TRACEID:
		if (size >= 8) {
			m->trace_id = td_get64(td, d);
			m->has_trace_id = true;
		}
		return 0;
	case OPT_TIME_SHIFT:
		return opt_time_shift(td, d, size, at, err);
	case OPT_GUEST:
		return opt_guest(td, d, size, at, err);
	case OPT_TSC2NSEC:
		if (size >= 16) {
			m->has_tsc2nsec = true;
			m->tsc_mult = td_get32(td, d);
			m->tsc_shift = td_get32(td, d + 4);
			m->tsc_offset = td_get64(td, d + 8);
		}
		return 0;
	case OPT_HEADER_INFO:
	case OPT_FTRACE_EVENTS:
	case OPT_EVENT_FORMATS:
	case OPT_KALLSYMS:
	case OPT_PRINTK:
	case OPT_CMDLINES:
		return opt_section_ref(td, id, d, size, at, err);
	case KS_VMIDENT_OPTION:
		/* one per file; its tables hold ~2x its text */
		if (td->vmident.ntasks || td->vmident.nprocs)
			return ks_error_at(err, td->src.path, at, "more than one task map option");
		if (td_mem_take(td, 2 * (uint64_t)size, at, err) < 0)
			return -1;
		return ks_vmident_parse(&td->vmident, td->src.path, at, (const char *)d, size, err);
	default:
		return 0; /* DATE, CPUSTAT, HOOK, PROCMAPS, STRINGS...: not needed */
	}
}

/* v7: an option pointing at a metadata section; load and parse it. */
static int opt_section_ref(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			   uint64_t at, struct ks_error *err)
{
	struct rd r = { .td = td };
	uint16_t sec_id;
	uint8_t *data;
	uint64_t len, off;
	int ret;

	if (td->meta.version < 7)
		return 0;
	if (size < 8)
		return ks_error_at(err, td->src.path, at, "option %u is truncated", id);
	off = td_get64(td, d);
	if (id == OPT_KALLSYMS)
		return defer_kallsyms_section(td, off, err);
	if (td_load_section(td, off, "option", &sec_id, &data, &len, err) < 0)
		return -1;
	if (sec_id != id) {
		td_section_free(td, data, len);
		return ks_error_at(err, td->src.path, off, "section id %u where %u was expected",
				   sec_id, id);
	}
	r.mem = data;
	r.end = len;
	r.base = off;
	switch (id) {
	case OPT_HEADER_INFO: ret = td_parse_header_info(&r, err); break;
	case OPT_FTRACE_EVENTS: ret = td_parse_ftrace_formats(&r, err); break;
	case OPT_EVENT_FORMATS: ret = td_parse_event_formats(&r, err); break;
	case OPT_PRINTK: ret = td_parse_printk(&r, err); break;
	default: ret = td_parse_cmdlines(&r, err); break;
	}
	td_section_free(td, data, len);
	return ret;
}

/* Walk options "u16 id, u32 size, data" in R.  v6 ends at id 0; v7 ends at
 * DONE whose data is the offset of the next options section (*NEXT). */
int td_parse_options(struct tracedat *td, struct rd *r, uint64_t *next, struct ks_error *err)
{
	*next = 0;
	r->what = "options";
	for (;;) {
		uint16_t id;
		uint32_t size;
		uint64_t at = td_rd_errpos(r);
		char *data;
		int ret;

		if (td_rd_u16(r, &id, err) < 0)
			return -1;
		if (id == OPT_DONE && td->meta.version < 7)
			return 0;
		if (td_obj_take(td, 1, at, "an option", err) < 0 || td_rd_u32(r, &size, err) < 0 ||
		    td_rd_alloc(r, size, &data, err) < 0)
			return -1;
		if (id == OPT_DONE) {
			if (size >= 8)
				*next = td_get64(td, data);
			td_rd_free(r, data, size);
			return 0;
		}
		ret = handle_option(td, id, (const uint8_t *)data, size, at, err);
		td_rd_free(r, data, size);
		if (ret < 0)
			return -1;
		r->what = "options";
	}
}

