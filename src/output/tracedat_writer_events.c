/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer_events.c - events encoded into ring-buffer pages, and
 * whole pages, spooled per CPU until the file is written
 * (tracedat_writer_impl.h).
 */
#include "tracedat_writer_impl.h"

/* ------------------------------------------------------------------ */
/* per-CPU page streams */

int tdw_grow_streams(struct ks_tdw *w, uint32_t cpu, struct ks_error *err)
{
	struct cpu_stream *n;
	uint32_t count = cpu + 1;

	if (cpu >= 65536)
		return tdw_fail(w, err, "CPU number too large");
	if (count <= w->nr_streams)
		return 0;
	n = realloc(w->cpus, count * sizeof(*n));
	if (!n)
		return tdw_fail(w, err, "out of memory");
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
		return tdw_fail_errno(w, err, "cannot create a spool file");
	unlink(tmpl);
	c->spool = fdopen(fd, "w+b");
	if (!c->spool) {
		close(fd);
		return tdw_fail_errno(w, err, "cannot open a spool file");
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

	if (tdw_grow_streams(w, cpu, err) < 0)
		return -1;
	c = &w->cpus[cpu];
	if (!c->page) {
		c->page = calloc(1, w->page_size);
		if (!c->page)
			return tdw_fail(w, err, "out of memory");
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
		return tdw_fail_errno(w, err, "cannot write a spool file");
	c->nr_pages++;
	w->stats.pages++;
	return 0;
}

/* Write the commit size and put the page into the spool. */
int tdw_flush_page(struct ks_tdw *w, struct cpu_stream *c, struct ks_error *err)
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

	if (tdw_check_usable(w, err) < 0)
		return -1;
	if (w->stream)
		return tdw_fail(w, err, "an event added to a streamed file (pages only)");
	if (stream_get(w, cpu, &c, err) < 0)
		return -1;
	cap = w->page_size - w->hdr_size;
	esize = entry_size(size, &type_len);
	if (size > cap || esize > cap)
		return ks_error_set(err, "%s: an event of %u bytes does not fit in a %u-byte page",
				    w->path, size, w->page_size);
	if (c->open && ts < c->last_ts) {
		w->stats.backwards++;
		if (tdw_flush_page(w, c, err) < 0)
			return -1;
	}
	if (c->open)
		delta = ts - c->last_ts;
	need = esize + (delta > RB_DELTA_MAX ? 8 : 0);
	if (c->open && (c->used + need > cap || (delta >> 59))) {
		if (tdw_flush_page(w, c, err) < 0)
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


int ks_tdw_add_page(struct ks_tdw *w, uint32_t cpu, const void *page, uint32_t size,
		    struct ks_error *err)
{
	struct cpu_stream *c;

	if (tdw_check_usable(w, err) < 0)
		return -1;
	if (size > w->page_size)
		return ks_error_set(err, "%s: a page of %u bytes is larger than the page size %u",
				    w->path, size, w->page_size);
	if (w->stream)
		return tdw_stream_page(w, cpu, page, size, err);
	if (stream_get(w, cpu, &c, err) < 0)
		return -1;
	if (tdw_flush_page(w, c, err) < 0)
		return -1;
	memcpy(c->page, page, size);
	memset(c->page + size, 0, w->page_size - size);
	return spool_page(w, c, c->page, err);
}

const struct ks_tdw_stats *ks_tdw_stats(const struct ks_tdw *w)
{
	return &w->stats;
}

