/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata.c - perf.data reader (file mode, both byte orders): opening
 * and closing a source, and reading the file.
 *
 * ks_perfdata_open() reads (pread) the header, the attrs with their id
 * arrays and the feature sections into heap buffers (tracing data goes into
 * the source's tep_handle through tracing_data.c), then ks_source_next()
 * walks the data section through a sliding window: a heap buffer holding
 * the file bytes [win_off, win_off + win_len), refilled with large reads.
 * Records are ordered exactly like perf 6.1's ordered_events: records with a
 * timestamp are queued as {ts, offset|attr} pairs (no copy: the payload
 * stays in the window), records without one are delivered when read, and
 * each PERF_RECORD_FINISHED_ROUND delivers the queued records up to the
 * previous round's maximum timestamp.  Records are decoded only when
 * delivered.  The window always holds every byte from the oldest queued
 * record to the read position; a refill first moves that tail to the start
 * of the buffer, so memory stays flat with file size (the buffer only grows
 * for a round bigger than it, up to MAX_WINDOW).  For data sections larger
 * than one window, a prefetch thread reads the next region into a spare
 * buffer while the records of the current one are parsed; a refill then
 * copies the tail in front of it and swaps the buffers (perfdata_prefetch.c;
 * big tails, jumps and a failed thread start fall back to a plain read).
 * A refill happens only before the next record is decoded, so the pointers
 * of a delivered record stay valid until the next ks_source_next() call.
 * Long rounds: a round's records are, per CPU, already in time order in
 * the file; in a round larger than SEG_ROUND chunks, the prefetch thread
 * sends such a stretch of SEG_MIN records or more as a segment, which the
 * main thread keeps as a cursor into the file instead of queuing its
 * records, and a flush merges the segments' records
 * (a heap by time, then offset) with the queue's.  A round larger than a
 * prefetch's tail switches a read data section to the mapping, whose pages
 * behind the read position and behind each cursor are given back and
 * fault in again when merged: memory does not grow with a round's size.
 * A round sorted only in short stretches (CPUs interleaved, records
 * shuffled) is all queue entries: when they would pass the memory budget
 * they are sorted and spilled to a temporary file as a run, and a flush
 * merges the runs in with the queue and the segments (perfdata_spill.c).
 *
 * Every header, record and sample field is read in the file's byte order
 * and converted to host order; tracepoint payloads are left as they are
 * (ks_field swaps them, tep knows the file's endianness).
 *
 * The reader's rooms, one job each, are listed in perfdata_impl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "ctx_impl.h"
#include "event/lazy_events.h"
#include "perfdata_impl.h"

/* Read LEN bytes at file offset OFF of FD into DST (any thread).  Returns
 * 0, an errno, or -1 if the file ends early; *FAIL_OFF is where it failed. */
int pd_read_full(int fd, uint64_t off, uint8_t *dst, uint64_t len, uint64_t *fail_off)
{
	while (len) {
		ssize_t n = pread(fd, dst, len > (1u << 30) ? (1u << 30) : len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*fail_off = off;
			return n < 0 ? errno : -1;
		}
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* The error of a failed pd_read_full(). */
int pd_read_error(struct pd_source *s, int result, uint64_t off, struct ks_error *err)
{
	if (result > 0)
		return ks_error_at(err, s->base.path, off, "cannot read: %s", strerror(result));
	return ks_error_at(err, s->base.path, off,
			   "the file ends early (it was truncated while being read)");
}

/* Read LEN bytes at file offset OFF into DST.  The caller has checked the
 * range against the file size; a short read means the file shrank. */
int pd_pread_full(struct pd_source *s, uint64_t off, void *dst, uint64_t len,
		      struct ks_error *err)
{
	uint64_t fail_off = off;
	int ret = pd_read_full(s->fd, off, dst, len, &fail_off);

	return ret ? pd_read_error(s, ret, fail_off, err) : 0;
}

/* LEN bytes at OFF in a new heap buffer (plus one zero byte), or NULL. */
uint8_t *pd_pread_alloc(struct pd_source *s, uint64_t off, uint64_t len,
			    struct ks_error *err)
{
	uint8_t *p = malloc(len + 1);

	if (!p) {
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
		return NULL;
	}
	p[len] = 0;
	if (pd_pread_full(s, off, p, len, err) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static int pd_next(struct ks_source *base, struct ks_record *r, struct ks_error *err)
{
	return pd_next_batch(base, r, 1, err);
}

uint64_t ks_perfdata_framed_ahead(const struct ks_source *base)
{
	return ((const struct pd_source *)base)->framed_ahead;
}

/* Skip the samples of every attr whose event is not wanted (or unknown). */
static int pd_select(struct ks_source *base, bool (*want)(void *ctx, struct tep_event *ev),
		     void *ctx)
{
	struct pd_source *s = (struct pd_source *)base;
	uint32_t i;

	for (i = 0; i < s->nr_attrs; i++)
		s->attrs[i].skip = !s->attrs[i].event || !want(ctx, s->attrs[i].event);
	return 0;
}

static void pd_close(struct ks_source *base)
{
	struct pd_source *s = (struct pd_source *)base;

	ks_lazy_detach(base->lazy); /* before the texts it parses from */
	ks_source_meta_free(&base->meta);
	pd_prefetch_stop(&s->pf);
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	ks_ctx_tep_put(base->ctx, base->tep);
	free(s->attrs);
	ks_hmap_free(&s->ids);
	free(s->q);
	free(s->tmp);
	free(s->ph);
	free(s->ph_tmp);
	free(s->seg);
	pd_runs_free(s);
	free(s->chain);
	free(s->mem);
	free(s->hdr);
	free(s->frames);
	free(base->path);
	free(s);
}

static const struct ks_source_ops pd_ops = {
	.name = "perf.data",
	.next = pd_next,
	.next_batch = pd_next_batch,
	.close = pd_close,
	.select = pd_select,
};

static int open_file(struct pd_source *s, struct ks_error *err)
{
	struct stat st;

	s->fd = open(s->base.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (s->fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", s->base.path, strerror(errno));
	if (fstat(s->fd, &st) < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot stat: %s", s->base.path, strerror(errno));
	if (!S_ISREG(st.st_mode)) /* perf's pipe format is not read: it needs a file */
		return ks_source_check_regular(s->base.path, s->fd, err);
	if (st.st_size < 8)
		return ks_error_at(err, s->base.path, 0, "not a perf.data file (too short)");
	if ((uint64_t)st.st_size >= MAX_FILE)
		return ks_error_at(err, s->base.path, 0, "file too large");
	s->file_size = (uint64_t)st.st_size;
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

int ks_perfdata_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err)
{
	struct pd_source *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	ks_source_apply_opts(&s->base, o);
	ks_ctx_perfdata_windows(s->base.ctx, &s->map_min, &s->map_chunk);
	if (!s->map_chunk)
		s->map_chunk = READ_SIZE;
	s->fd = -1;
	ks_hmap_init(&s->ids, sizeof(uint16_t));
	s->page = (uint64_t)sysconf(_SC_PAGESIZE);
	s->base.ops = &pd_ops;
	s->base.path = strdup(path);
	s->base.tep = tep_alloc();
	if (!s->base.path || !s->base.tep) {
		pd_close(&s->base);
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	}
	if (open_file(s, err) < 0 || pd_read_header(s, err) < 0) {
		pd_close(&s->base);
		return -1;
	}
	pd_id_positions(s);
	pd_lookup_events(s);
	s->base.info.format = "perf.data";
	snprintf(s->base.info.clock, sizeof(s->base.info.clock), "perf");
	s->base.info.big_endian = s->big_endian;
	*out = &s->base;
	return 0;
}
