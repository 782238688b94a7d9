/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat.c - trace-cmd trace.dat reader (file versions 6 and 7).
 *
 * ks_tracedat_open() parses the metadata (header page, event formats,
 * kallsyms, printk formats, saved cmdlines, options) into the source's tep,
 * then ks_source_next() delivers the flyrecord events of every buffer (the
 * top-level one and the instances of trace-cmd record -B) in time order: one
 * cursor per CPU of every buffer reads one page (or one compressed chunk) at
 * a time and a small heap merges them, ties going to the top buffer, then to
 * the instances in option order, then to the lower CPU, like trace-cmd
 * report.  ks_tracedat_record_buffer() maps a record back to its buffer by
 * its file offset.  A latency file (the text of the trace instead of pages)
 * is handed to the ftrace text reader through ks_ftrace_text_open_mem().  Timestamps are converted like
 * `trace-cmd report`: guest TimeShift samples, then TSC2NSEC, then OFFSET.
 *
 * The parsing of the metadata is in tracedat_io.c, tracedat_meta.c and
 * tracedat_layout.c (tracedat_impl.h says which does what).
 *
 * Layout references: trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5).
 */
#include "tracedat_impl.h"

static const struct ks_source_ops tracedat_ops;

/* ------------------------------------------------------------------ */
/* timestamps */

static uint64_t mul_u64_u32_shr(uint64_t a, uint32_t mul, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)a * mul) >> shift);
}

static uint64_t tsync_calc(const struct ks_tracedat_meta *m, uint64_t ts,
			   const struct ks_tracedat_tsync_sample *lo,
			   const struct ks_tracedat_tsync_sample *hi)
{
	int64_t cor = lo->offset;

	if ((m->tsync_flags & TSYNC_INTERPOLATE) && hi && hi->time != lo->time) {
		int64_t delta = (int64_t)(hi->time - lo->time);
		int64_t num = ((int64_t)ts - (int64_t)lo->time) * (hi->offset - lo->offset);
		cor = lo->offset + (num + delta / 2) / delta;
	}
	/* 64-bit product, wrapping like trace-cmd does */
	if (lo->fraction < 64)
		ts = (ts * lo->scaling) >> lo->fraction;
	return ts + (uint64_t)cor;
}

/* Guest time -> host time with the TimeShift samples of CPU. */
static uint64_t tsync_ts(const struct ks_tracedat_meta *m, uint32_t cpu, uint64_t ts)
{
	const struct ks_tracedat_tsync_cpu *tc;
	const struct ks_tracedat_tsync_sample *s;
	uint32_t lo, hi, n;

	if (cpu >= m->tsync_nr_cpus)
		return ts;
	tc = &m->tsync_cpus[cpu];
	s = tc->samples;
	n = tc->nr_samples;
	if (n == 0)
		return ts;
	if (n == 1)
		return ts + (uint64_t)s[0].offset;
	if (ts <= s[0].time)
		return tsync_calc(m, ts, &s[0], &s[1]);
	if (ts >= s[n - 1].time)
		return tsync_calc(m, ts, &s[n - 2], &s[n - 1]);
	/* the last sample whose time is <= ts */
	lo = 0;
	hi = n - 1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s[mid].time <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return tsync_calc(m, ts, &s[lo], &s[lo + 1]);
}

static uint64_t convert_ts(const struct tracedat *td, uint32_t cpu, uint64_t ts)
{
	const struct ks_tracedat_meta *m = &td->meta;

	if (m->tsync_applied)
		ts = tsync_ts(m, cpu, ts);
	if (m->has_tsc2nsec && m->tsc_mult)
		ts = mul_u64_u32_shr(ts, m->tsc_mult, m->tsc_shift);
	return ts + (uint64_t)m->ts_offset;
}

/* ------------------------------------------------------------------ */
/* per-CPU cursors */

static int cursor_init(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	enum kbuffer_long_size ls;
	int hps = tep_get_header_page_size(td->src.tep);

	if (hps != 4 && hps != 8)
		hps = (int)td->meta.long_size;
	ls = hps == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4;
	c->kbuf = kbuffer_alloc(ls, td->meta.big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	if (!c->kbuf)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, c->start, "out of memory");
	c->next = c->start;
	if (c->compressed && c->end > c->start) {
		uint8_t b[4];
		if (c->end - c->start < 4)
			return ks_error_at(err, td->src.path, c->start,
					   "compressed data of CPU %u is truncated", c->cpu);
		if (td_pread_at(td, b, 4, c->start, "chunk count", err) < 0)
			return -1;
		c->chunks_left = td_get32(td, b);
		c->next = c->start + 4;
		/* trace-cmd's size may leave out the 4-byte chunk count */
		c->zend = c->end + 4 <= td->file_size ? c->end + 4 : td->file_size;
	}
	return 0;
}

/* Load the next block of pages; returns 0 at the end of the CPU's data. */
static int cursor_fill(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	uint32_t ps = c->page_size;

	/* every CPU of every buffer holds at most two blocks (the current
	 * one and the retired one); all of them count against one budget */
	free(c->retired);
	td_mem_give(td, c->retired_charge);
	c->retired = c->buf; /* the record delivered last may point into it */
	c->retired_charge = c->buf_charge;
	c->buf = NULL;
	c->buf_charge = 0;
	c->buf_len = c->page_pos = 0;
	if (c->compressed) {
		uint32_t len;
		uint64_t next;
		if (!c->chunks_left)
			return 0;
		if (td_load_compressed(td, c->next, c->zend, MAX_CHUNK, &c->buf, &len, &next, err) < 0)
			return -1;
		c->buf_charge = (size_t)len + 1;
		c->buf_off = c->next;
		c->buf_len = len;
		c->next = next;
		c->chunks_left--;
		return 1;
	} else {
		uint64_t left = c->end - c->next, n = (uint64_t)ps * READ_PAGES, alloc;
		if (!left)
			return 0;
		if (n > READ_BLOCK_MAX)
			n = ps > READ_BLOCK_MAX ? ps : READ_BLOCK_MAX / ps * ps;
		if (n > left)
			n = left;
		/* a short last page is padded with zeroes */
		alloc = (n + ps - 1) / ps * ps;
		if (td_mem_take(td, alloc, c->next, err) < 0)
			return -1;
		c->buf_charge = (size_t)alloc;
		c->buf = calloc(1, alloc);
		if (!c->buf)
			return ks_error_code_at(err, KS_E_NOMEM, td->src.path, c->next, "out of memory");
		if (td_pread_at(td, c->buf, n, c->next, "CPU data", err) < 0)
			return -1;
		c->buf_off = c->next;
		c->buf_len = (n + ps - 1) / ps * ps;
		c->next += n;
		return 1;
	}
}

static uint64_t page_file_offset(const struct tracedat *td, const struct cpu_cursor *c)
{
	/* compressed data has no file offset per page: report the chunk */
	(void)td;
	return c->compressed ? c->buf_off : c->buf_off + c->page_pos;
}

/* Check the page header's commit before libtraceevent walks the page. */
static int check_page(struct tracedat *td, struct cpu_cursor *c, const uint8_t *page,
		      uint32_t *events, struct ks_error *err)
{
	int hps = tep_get_header_page_size(td->src.tep);
	uint64_t commit;
	long bad;

	if (hps != 4 && hps != 8)
		hps = (int)td->meta.long_size;
	commit = hps == 8 ? td_get64(td, page + 8) : td_get32(td, page + 8);
	commit &= (1u << 27) - 1; /* the top bits are missed-events flags */
	if (commit > c->page_size - 8 - (uint64_t)hps)
		return ks_error_at(err, td->src.path, page_file_offset(td, c),
				   "CPU %u: ring buffer page with bad commit size %llu (page size %u)",
				   c->cpu, (unsigned long long)commit, c->page_size);
	bad = ks_ringpage_count(page + 8 + hps, (uint32_t)commit, c->page_size - 8 - (uint32_t)hps,
				td->meta.big_endian, td->swap, events);
	if (bad >= 0)
		return ks_error_at(err, td->src.path, page_file_offset(td, c),
				   "CPU %u: ring buffer page with a bad event header at byte %ld "
				   "(its length does not move forward)", c->cpu, bad + 8 + hps);
	return 0;
}

/* Advance C to its next event (c->has = false at the end). */
static int cursor_advance(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	unsigned long long ts;
	void *data = NULL;

	c->has = false;
	if (c->done)
		return 0;
	if (c->page_loaded)
		data = kbuffer_next_event(c->kbuf, &ts);
	while (!data) {
		int r;
		if (c->page_loaded)
			c->page_pos += c->page_size;
		c->page_loaded = false;
		if (!c->buf || c->page_pos + c->page_size > c->buf_len) {
			if (c->buf && c->page_pos < c->buf_len)
				return ks_error_at(err, td->src.path, c->buf_off,
						   "CPU %u: data chunk of %zu bytes is not a whole number of %u-byte pages",
						   c->cpu, c->buf_len, c->page_size);
			r = cursor_fill(td, c, err);
			if (r <= 0) {
				c->done = r == 0;
				return r;
			}
			continue;
		}
		if (check_page(td, c, c->buf + c->page_pos, &(uint32_t){ 0 }, err) < 0)
			return -1;
		kbuffer_load_subbuffer(c->kbuf, c->buf + c->page_pos);
		c->page_loaded = true;
		c->missed = kbuffer_missed_events(c->kbuf);
		data = kbuffer_read_event(c->kbuf, &ts);
		if (data && c->missed)
			c->lost_pending = true;
	}
	{
		int esize = kbuffer_event_size(c->kbuf);
		uint8_t *page = c->buf + c->page_pos;
		if (esize < 0 || (uint8_t *)data < page ||
		    (uint8_t *)data + esize > page + c->page_size)
			return ks_error_at(err, td->src.path, page_file_offset(td, c),
					   "CPU %u: event of %d bytes runs past its page", c->cpu, esize);
		c->data = data;
		c->size = (uint32_t)esize;
		c->offset = page_file_offset(td, c) +
			    (c->compressed ? 0 : (uint64_t)((uint8_t *)data - page));
	}
	c->raw_ts = ts;
	c->ts = convert_ts(td, c->cpu, ts);
	c->has = true;
	return 0;
}

/* heap of cursors with an event, ordered by (ts, cpu) */

static bool cur_less(const struct tracedat *td, uint32_t a, uint32_t b)
{
	const struct cpu_cursor *x = &td->cpus[a], *y = &td->cpus[b];

	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->order != y->order)
		return x->order < y->order;
	return x->cpu < y->cpu;
}

static void heap_down(struct tracedat *td, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
		if (l < td->heap_len && cur_less(td, td->heap[l], td->heap[m]))
			m = l;
		if (r < td->heap_len && cur_less(td, td->heap[r], td->heap[m]))
			m = r;
		if (m == i)
			return;
		t = td->heap[i];
		td->heap[i] = td->heap[m];
		td->heap[m] = t;
		i = m;
	}
}

static int start_cursors(struct tracedat *td, struct ks_error *err)
{
	uint32_t i;

	td->started = true;
	td->heap = calloc(td->nr_cpus ? td->nr_cpus : 1, sizeof(*td->heap));
	if (!td->heap)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, 0, "out of memory");
	for (i = 0; i < td->nr_cpus; i++) {
		if (cursor_init(td, &td->cpus[i], err) < 0 ||
		    cursor_advance(td, &td->cpus[i], err) < 0)
			return -1;
		if (td->cpus[i].has)
			td->heap[td->heap_len++] = i;
	}
	for (i = td->heap_len; i-- > 0;)
		heap_down(td, i);
	return 0;
}

/* Ids past it are looked up without the table: the formats' ids are not
 * checked until they are parsed, and a damaged one may be huge. */
#define EVENT_CACHE_MAX (1 << 20)

/* The event of record type TYPE, from a table sized by the formats' ids
 * (allocated at the first record: a reader opened for its header only
 * never pays for it). */
static struct tep_event *find_event(struct tracedat *td, int type)
{
	struct tep_event *ev;

	if (!td->event_cache) {
		td->event_id_end = ks_lazy_id_end(td->src.lazy, td->src.tep);
		td->event_cache_len = td->event_id_end < EVENT_CACHE_MAX ? td->event_id_end :
					EVENT_CACHE_MAX;
		td->event_cache = calloc(td->event_cache_len ? td->event_cache_len : 1,
					 sizeof(*td->event_cache));
		if (!td->event_cache)
			return ks_source_event_by_id(&td->src, type);
	}
	if (type < 0 || type >= td->event_id_end)
		return NULL;
	if (type >= td->event_cache_len)
		return ks_source_event_by_id(&td->src, type);
	ev = td->event_cache[type];
	if (!ev) {
		ev = ks_source_event_by_id(&td->src, type);
		td->event_cache[type] = ev ? ev : EV_NONE;
	}
	return ev == EV_NONE ? NULL : ev;
}

static void fill_event(struct tracedat *td, struct cpu_cursor *c, struct ks_record *rec)
{
	struct tep_record tr;
	int type;

	memset(&tr, 0, sizeof(tr));
	tr.data = c->data;
	tr.size = (int)c->size;
	tr.cpu = (int)c->cpu;
	rec->type = KS_REC_EVENT;
	rec->data = c->data;
	rec->size = c->size;
	rec->tid = -1;
	rec->event = NULL;
	if (c->size >= 8) {
		type = tep_data_type(td->src.tep, &tr);
		rec->event = find_event(td, type);
		rec->tid = tep_data_pid(td->src.tep, &tr);
		/* the process, where kvmscope record's task map says */
		rec->pid = ks_vmident_tgid(&td->vmident, rec->tid);
	}
	if (!rec->event)
		td->src.stats.unknown_events++;
}

/* Latency layout: the text reader's records, with file offsets. */
static int latency_next(struct tracedat *td, struct ks_record *rec, struct ks_error *err)
{
	const struct ks_source_stats *in;
	int r = ks_source_next(td->text_src, rec, err);

	if (r > 0)
		rec->offset = td->latency_offset + (td->latency_chunks ? 0 : rec->offset);
	in = ks_source_stats(td->text_src);
	td->src.stats.lost_events = in->lost_events;
	td->src.stats.lost_records = in->lost_records;
	td->src.stats.out_of_order = in->out_of_order;
	td->src.stats.unknown_events = in->unknown_events;
	td->src.stats.skipped = in->skipped;
	return r;
}

static int tracedat_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	struct tracedat *td = (struct tracedat *)src;
	struct cpu_cursor *c;

	if (td->text_src)
		return latency_next(td, rec, err);
	if (!td->started && start_cursors(td, err) < 0)
		return -1;
	if (!td->heap_len)
		return 0;
	c = &td->cpus[td->heap[0]];
	memset(rec, 0, sizeof(*rec));
	rec->ts = c->ts;
	rec->raw_ts = c->raw_ts;
	rec->cpu = (int32_t)c->cpu;
	rec->pid = -1;
	rec->offset = c->offset;
	if (c->lost_pending) {
		c->lost_pending = false;
		rec->type = KS_REC_LOST;
		rec->tid = -1;
		rec->lost = c->missed > 0 ? (uint64_t)c->missed : 0;
		src->stats.lost_records++;
		src->stats.lost_events += rec->lost;
		return 1;
	}
	fill_event(td, c, rec);
	/* The data stays valid until the next call: the cursor keeps its
	 * buffer until it moves past the page, which happens only now. */
	if (cursor_advance(td, c, err) < 0)
		return -1;
	if (!c->has)
		td->heap[0] = td->heap[--td->heap_len];
	heap_down(td, 0);
	return 1;
}

/* Drop a cursor's blocks and their charge against the budget. */
static void cursor_release(struct tracedat *td, struct cpu_cursor *c)
{
	free(c->buf);
	free(c->retired);
	td_mem_give(td, c->buf_charge + c->retired_charge);
	c->buf = c->retired = NULL;
	c->buf_charge = c->retired_charge = 0;
	c->buf_len = c->page_pos = 0;
	c->done = true;
}

/* Every page of cursor C to FN, block after block. */
static int cursor_pages(struct tracedat *td, struct cpu_cursor *c, ks_tracedat_page_fn fn,
			void *arg, struct ks_error *err)
{
	int r;

	if (cursor_init(td, c, err) < 0)
		return -1;
	while ((r = cursor_fill(td, c, err)) > 0) {
		if (c->buf_len % c->page_size)
			return ks_error_at(err, td->src.path, c->buf_off,
					   "CPU %u: data chunk of %zu bytes is not a whole number of %u-byte pages",
					   c->cpu, c->buf_len, c->page_size);
		for (c->page_pos = 0; c->page_pos < c->buf_len; c->page_pos += c->page_size) {
			uint32_t events = 0;
			const uint8_t *page = c->buf + c->page_pos;

			if (check_page(td, c, page, &events, err) < 0 ||
			    fn(arg, c->cpu, page, c->page_size, events, err) < 0)
				return -1;
		}
	}
	return r;
}

int ks_tracedat_pages(struct ks_source *src, ks_tracedat_page_fn fn, void *arg,
		      struct ks_error *err)
{
	struct tracedat *td = (struct tracedat *)src;
	uint32_t i;
	int r = 0;

	if (!src || src->ops != &tracedat_ops || td->started || td->text_src || td->swap ||
	    td->nr_buffers > 1 || td->src.windowed)
		return 1;
	if (!fn)
		return 0;
	if (ks_source_late_error(src, err) < 0) /* as for records */
		return -1;
	td->started = true; /* the records are consumed here: next() delivers none */
	for (i = 0; !r && i < td->nr_cpus; i++) {
		r = cursor_pages(td, &td->cpus[i], fn, arg, err);
		cursor_release(td, &td->cpus[i]);
	}
	return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* open / close */

static void free_meta(struct ks_tracedat_meta *m)
{
	uint32_t i;

	for (i = 0; i < m->nr_guests; i++) {
		free(m->guests[i].name);
		free(m->guests[i].vcpus);
	}
	free(m->guests);
	for (i = 0; i < m->tsync_nr_cpus; i++)
		free(m->tsync_cpus[i].samples);
	free(m->tsync_cpus);
	for (i = 0; i < m->nr_buffers; i++)
		free(m->buffer_names[i]);
	free(m->buffer_names);
	free(m->uname);
	free(m->version_string);
	free(m->clock);
}

static void tracedat_close(struct ks_source *src)
{
	struct tracedat *td = (struct tracedat *)src;
	uint32_t i;

	/* the deferred formats are the meta's texts */
	ks_lazy_detach(td->src.lazy);
	ks_lazy_detach(td->file_lazy);
	ks_source_meta_free(&src->meta);
	ks_vmident_free(&td->vmident);
	free(td->ra);
	for (i = 0; i < td->nr_cpus; i++) {
		free(td->cpus[i].buf);
		free(td->cpus[i].retired);
		if (td->cpus[i].kbuf)
			kbuffer_free(td->cpus[i].kbuf);
	}
	free(td->cpus);
	free(td->heap);
	free(td->event_cache);
	ks_hmap_free(&td->sections);
	for (i = 0; i < td->nr_buffers; i++)
		free(td->buffers[i].name);
	free(td->buffers);
	free(td->by_start);
	free_meta(&td->meta);
	if (td->text_src) { /* src.tep belongs to the text reader */
		ks_ctx_tep_put(td->src.ctx, td->file_tep);
		ks_source_close(td->text_src);
	} else {
		ks_ctx_tep_put(td->src.ctx, td->src.tep);
	}
	free(td->latency_text);
	if (td->fd >= 0)
		close(td->fd);
	free(td->src.path);
	free(td);
}

/* Progress: what each CPU's cursor has read of its data region (they are
 * read side by side, in time order). */
static void tracedat_position(const struct ks_source *src, uint64_t *done, uint64_t *total)
{
	const struct tracedat *td = (const struct tracedat *)src;
	uint32_t i;

	*done = *total = 0;
	if (td->text_src) {
		ks_source_position(td->text_src, done, total);
		return;
	}
	for (i = 0; i < td->nr_cpus; i++) {
		const struct cpu_cursor *c = &td->cpus[i];
		uint64_t len = c->end > c->start ? c->end - c->start : 0;

		*total += len;
		if (c->done || c->next >= c->end)
			*done += len;
		else if (c->next > c->start)
			*done += c->next - c->start;
	}
}

static const struct ks_source_ops tracedat_ops = {
	.name = "trace.dat",
	.next = tracedat_next,
	.close = tracedat_close,
	.position = tracedat_position,
};

const struct ks_vmident *ks_tracedat_vmident(const struct ks_source *src)
{
	const struct tracedat *td = (const struct tracedat *)src;

	if (!src || src->ops != &tracedat_ops)
		return NULL;
	return td->vmident.ntasks || td->vmident.nprocs ? &td->vmident : NULL;
}

const struct ks_tracedat_meta *ks_tracedat_meta(const struct ks_source *src)
{
	if (!src || src->ops != &tracedat_ops)
		return NULL;
	return &((const struct tracedat *)src)->meta;
}

/* The instance a record came from, found by the record's file offset:
 * every CPU of every buffer has its own data region. */
const char *ks_tracedat_record_buffer(const struct ks_source *src, const struct ks_record *rec)
{
	const struct tracedat *td;
	uint32_t lo = 0, hi;
	const struct cpu_cursor *c;

	if (!src || !rec || src->ops != &tracedat_ops)
		return NULL;
	td = (const struct tracedat *)src;
	if (!td->nr_by_start)
		return NULL;
	hi = td->nr_by_start;
	while (hi - lo > 1) { /* the last region starting at or before the offset */
		uint32_t mid = lo + (hi - lo) / 2;
		if (td->cpus[td->by_start[mid]].start <= rec->offset)
			lo = mid;
		else
			hi = mid;
	}
	c = &td->cpus[td->by_start[lo]];
	if (c->start > rec->offset)
		return NULL;
	return td->buffers[c->buffer].name[0] ? td->buffers[c->buffer].name : NULL;
}

const char *ks_tracedat_latency_text(const struct ks_source *src, size_t *len)
{
	const struct tracedat *td;

	if (!src || src->ops != &tracedat_ops)
		return NULL;
	td = (const struct tracedat *)src;
	if (!td->text_src)
		return NULL;
	if (len)
		*len = td->latency_len;
	return td->latency_text;
}

static int cmp_start(const void *a, const void *b, void *cursors)
{
	const struct cpu_cursor *x = (const struct cpu_cursor *)cursors + *(const uint32_t *)a;
	const struct cpu_cursor *y = (const struct cpu_cursor *)cursors + *(const uint32_t *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The data regions of all CPUs of all buffers sorted by offset: no two may
 * overlap (a file naming one region for many CPUs would make the reader
 * decompress it once per CPU).  With instances, it is the index
 * ks_tracedat_record_buffer() searches. */
static int index_regions(struct tracedat *td, struct ks_error *err)
{
	uint32_t i;

	td->by_start = calloc(td->nr_cpus ? td->nr_cpus : 1, sizeof(*td->by_start));
	if (!td->by_start)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, 0, "out of memory");
	for (i = 0; i < td->nr_cpus; i++)
		if (td->cpus[i].end > td->cpus[i].start)
			td->by_start[td->nr_by_start++] = i;
	qsort_r(td->by_start, td->nr_by_start, sizeof(*td->by_start), cmp_start, td->cpus);
	for (i = 1; i < td->nr_by_start; i++) {
		const struct cpu_cursor *a = &td->cpus[td->by_start[i - 1]];
		const struct cpu_cursor *b = &td->cpus[td->by_start[i]];

		if (b->start < a->end)
			return ks_error_at(err, td->src.path, b->start,
					   "data of CPU %u of buffer \"%s\" overlaps the data of CPU %u "
					   "of buffer \"%s\" (at %llu, %llu bytes)", b->cpu,
					   td->buffers[b->buffer].name, a->cpu, td->buffers[a->buffer].name,
					   (unsigned long long)a->start,
					   (unsigned long long)(a->end - a->start));
	}
	if (td->nr_buffers < 2) {
		free(td->by_start);
		td->by_start = NULL;
		td->nr_by_start = 0;
	}
	return 0;
}

/* v7: a buffer's own page size and its flyrecord section, which tells
 * whether its data is compressed. */
static int check_flyrecord_v7(struct tracedat *td, struct tdbuffer *b, bool *compressed,
			      struct ks_error *err)
{
	uint8_t hdr[16];
	uint32_t i;

	if (!b->page_size)
		b->page_size = td->page_size;
	if (b->page_size < 64 || b->page_size > (1u << 24) || (b->page_size & (b->page_size - 1)))
		return ks_error_at(err, td->src.path, b->offset, "buffer \"%s\": bad page size %u",
				   b->name, b->page_size);
	if (!b->nr_cpus)
		return 0;
	if (td_pread_at(td, hdr, 16, b->offset, "flyrecord section header", err) < 0)
		return -1;
	if (td_get64(td, hdr + 8) > td->file_size - b->offset - 16)
		return ks_error_at(err, td->src.path, b->offset,
				   "truncated: buffer \"%s\": flyrecord section of %llu bytes runs past "
				   "the end of the file (%llu bytes)", b->name,
				   (unsigned long long)td_get64(td, hdr + 8), (unsigned long long)td->file_size);
	*compressed = (td_get16(td, hdr + 2) & SEC_FL_COMPRESS) != 0;
	if (*compressed && td->comp == COMP_NONE)
		return ks_error_at(err, td->src.path, b->offset,
				   "compressed flyrecord section in a file without compression");
	for (i = b->first; i < b->first + b->nr_cpus; i++)
		if (td->cpus[i].start < b->offset + 16 && td->cpus[i].end > td->cpus[i].start)
			return ks_error_at(err, td->src.path, b->offset,
					   "data of CPU %u starts before its flyrecord section", td->cpus[i].cpu);
	return 0;
}

/* Give every cursor its buffer's page size and compression. */
static int setup_buffers(struct tracedat *td, struct ks_error *err)
{
	uint32_t i, j;

	for (i = 0; i < td->nr_buffers; i++) {
		struct tdbuffer *b = &td->buffers[i];
		bool compressed = false;

		if (td->meta.version < 7)
			b->page_size = td->page_size;
		else if (check_flyrecord_v7(td, b, &compressed, err) < 0)
			return -1;
		for (j = b->first; j < b->first + b->nr_cpus; j++) {
			td->cpus[j].page_size = b->page_size;
			td->cpus[j].compressed = compressed;
		}
	}
	if (td->have_top) /* what the file reports as its page size */
		td->page_size = td->buffers[td_top_buffer(td)].page_size;
	return index_regions(td, err);
}

/* ------------------------------------------------------------------ */
/* latency layout: the text of the trace, read by the ftrace text reader */

/* v7: the latency section's payload, in compressed chunks if flagged. */
static int load_latency_v7(struct tracedat *td, struct ks_error *err)
{
	uint8_t hdr[16], b4[4];
	uint64_t off = td->latency_offset, size, end, pos;
	uint32_t count, i;

	if (td_pread_at(td, hdr, 16, off, "latency section header", err) < 0)
		return -1;
	size = td_get64(td, hdr + 8);
	if (size > td->file_size - off - 16)
		return ks_error_at(err, td->src.path, off,
				   "truncated: latency section of %llu bytes runs past the end of the file",
				   (unsigned long long)size);
	end = off + 16 + size;
	if (!(td_get16(td, hdr + 2) & SEC_FL_COMPRESS)) {
		struct rd r = { .td = td, .pos = off + 16, .end = end, .what = "latency text" };
		td->latency_offset = off + 16;
		if (td_rd_alloc(&r, size, &td->latency_text, err) < 0)
			return -1;
		td->latency_len = size;
		return 0;
	}
	if (td->comp == COMP_NONE)
		return ks_error_at(err, td->src.path, off,
				   "compressed latency section in a file without compression");
	td->latency_chunks = true;
	if (size < 4)
		return ks_error_at(err, td->src.path, off, "latency section is truncated");
	if (td_pread_at(td, b4, 4, off + 16, "latency chunk count", err) < 0)
		return -1;
	count = td_get32(td, b4);
	pos = off + 20;
	for (i = 0; i < count; i++) {
		uint8_t *chunk;
		uint32_t len;
		char *grown;

		if (td_load_compressed(td, pos, end, MAX_CHUNK, &chunk, &len, &pos, err) < 0)
			return -1;
		if (td->latency_len + len > MAX_SECTION) {
			free(chunk);
			return ks_error_at(err, td->src.path, off, "latency text is too large");
		}
		/* the text is kept: its bytes stay counted */
		if (td_mem_take(td, len, pos, err) < 0) {
			free(chunk);
			return -1;
		}
		grown = realloc(td->latency_text, td->latency_len + len + 1);
		if (!grown) {
			free(chunk);
			return ks_error_code_at(err, KS_E_NOMEM, td->src.path, off, "out of memory");
		}
		td->latency_text = grown;
		memcpy(grown + td->latency_len, chunk, len);
		td->latency_len += len;
		grown[td->latency_len] = '\0';
		free(chunk);
		td_mem_give(td, (uint64_t)len + 1);
	}
	if (!td->latency_text && !(td->latency_text = calloc(1, 1)))
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, off, "out of memory");
	return 0;
}

static int load_latency(struct tracedat *td, struct ks_error *err)
{
	struct rd r = { .td = td, .pos = td->latency_offset, .end = td->file_size,
			.what = "latency text" };
	struct ks_source *text;

	if (td->meta.version >= 7) {
		if (td->latency_offset > td->file_size || td->file_size - td->latency_offset < 16)
			return ks_error_at(err, td->src.path, td->latency_offset,
					   "truncated: latency section lies outside the file");
		if (load_latency_v7(td, err) < 0)
			return -1;
	} else {
		if (td_rd_alloc(&r, td->file_size - td->latency_offset, &td->latency_text, err) < 0)
			return -1;
		td->latency_len = td->file_size - td->latency_offset;
	}
	if (ks_ftrace_text_open_mem(&text, td->src.path, td->latency_text, td->latency_len,
				    td->src.ctx, err) < 0)
		return -1;
	td->text_src = text;
	/* records come with the text reader's formats: its tep is the source's */
	td->file_tep = td->src.tep;
	td->file_lazy = td->src.lazy;
	td->src.lazy = NULL;
	td->src.tep = ks_source_tep(text);
	return 0;
}

/* The event formats and kallsyms into the tep, deferred: each format is
 * parsed when its events are first needed, the symbols on the first
 * lookup.  The tep is the source's own (it grows as it is used). */
static void load_formats(struct tracedat *td)
{
	tep_set_cpus(td->src.tep, (int)td->src.info.nr_cpus);
	td->src.lazy = ks_source_lazy_attach(td->src.ctx, td->src.tep, td->src.meta.formats,
				      td->src.meta.nr_formats, &td->src.meta,
				      !(td->open_flags & KS_OPEN_EVENTS_BY_RECORD), false);
}

static int tracedat_parse(struct tracedat *td, struct ks_error *err)
{
	struct rd r = { .td = td, .end = td->file_size };

	if (td_parse_file_header(td, &r, err) < 0)
		return -1;
	tep_set_file_bigendian(td->src.tep, td->meta.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(td->src.tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(td->src.tep, (int)td->meta.long_size);
	tep_set_page_size(td->src.tep, (int)td->page_size);
	if (td->meta.version == 6 ? td_parse_v6(td, &r, err) < 0 : td_parse_v7(td, &r, err) < 0)
		return -1;
	if (setup_buffers(td, err) < 0)
		return -1;
	if (!td->latency && tep_get_header_timestamp_size(td->src.tep) != 8 && td->nr_cpus)
		return ks_error_at(err, td->src.path, 0, "missing or unusable header_page format");
	td_fill_info(td);
	if (td_fill_source_meta(td) < 0)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", td->src.path);
	load_formats(td);
	if (td->latency && load_latency(td, err) < 0)
		return -1;
	return 0;
}

int ks_tracedat_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err)
{
	struct tracedat *td;
	struct stat st;

	*out = NULL;
	td = calloc(1, sizeof(*td));
	if (!td)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	td->open_flags = o ? o->flags : 0;
	ks_source_apply_opts(&td->src, o);
	td->fd = -1;
	td->src.ops = &tracedat_ops;
	ks_hmap_init(&td->sections, 0);
	td->src.path = strdup(path);
	td->src.tep = tep_alloc();
	if (!td->src.path || !td->src.tep) {
		tracedat_close(&td->src);
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	}
	td->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (td->fd < 0 || fstat(td->fd, &st) < 0) {
		ks_error_code(err, KS_E_IO, "%s: cannot open: %s", path, strerror(errno));
		tracedat_close(&td->src);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		ks_source_check_regular(path, td->fd, err);
		tracedat_close(&td->src);
		return -1;
	}
	td->file_size = (uint64_t)st.st_size;
	if (tracedat_parse(td, err) < 0) {
		tracedat_close(&td->src);
		return -1;
	}
	*out = &td->src;
	return 0;
}

