/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_window.c - the data window: the file bytes from the oldest
 * queued record to the read position, in a heap buffer refilled with
 * large reads (or from the prefetch thread's spare buffer), or in the
 * mapping of the data section for large ones, whose pages behind the
 * read position are given back.  Refills happen only before the next
 * record is decoded: a delivered record's pointers stay valid until then.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "perfdata_impl.h"

/* The mapped bytes pd_map_trim() keeps before the read position: TRIM_HOLD,
 * less under a memory budget below 64 MB (an eighth of it, 4 MB at least). */
static uint64_t trim_hold(const struct pd_source *s)
{
	uint64_t h = (s->base.limits.memory / 8) & ~(TRIM_STEP - 1);

	return h > TRIM_HOLD ? TRIM_HOLD : h < 2 * TRIM_STEP ? 2 * TRIM_STEP : h;
}

/* The window's bytes held in memory: a mapped window's pages are given
 * back behind the read position (pd_map_trim) and the prefetch thread
 * populates a chunk or two ahead. */
uint64_t pd_window_held(const struct pd_source *s)
{
	return s->map ? trim_hold(s) + 2 * s->map_chunk : s->win_len;
}

/* The lowest file offset still needed: OFF or a queued record's.  The
 * queue's lowest is scanned for only after a flush has delivered entries
 * (a round's queue is scanned once, not at each refill: 5% of the main
 * thread in rounds of 100k records); entries queued since then lower it
 * as they come (s->q_low). */
static uint64_t pending_low(struct pd_source *s, uint64_t off)
{
	uint64_t low = off, i, o;

	if (!s->q_low_ok) {
		s->q_low = UINT64_MAX;
		for (i = s->q_head; i < s->q_n; i++) {
			o = s->q[i].key >> 16;
			if (o < s->q_low)
				s->q_low = o;
		}
		s->q_low_ok = true;
	}
	if (s->q_low < low)
		low = s->q_low;
	for (i = 0; i < s->nseg; i++)
		if (s->seg[i].off < low)
			low = s->seg[i].off;
	if (s->nrun && pd_runs_low(s) < low)
		low = pd_runs_low(s);
	return low;
}

/* Drop the window bytes below LOW: move the rest to the allocation start. */
static void window_compact(struct pd_source *s, uint64_t low)
{
	uint64_t end = s->win_off + s->win_len;

	if (low >= end) {
		s->win_off = low;
		s->win_len = 0;
	} else if (low > s->win_off || s->buf != s->mem) {
		memmove(s->mem, s->buf + (low - s->win_off), end - low);
		s->win_len = end - low;
		s->win_off = low;
	}
	s->buf = s->mem;
}

/* A read buffer of SIZE bytes on transparent huge pages where the kernel
 * offers them: faulting in 4 KB pages costs more than the reads themselves
 * on some virtual machines (12 MB: 33 ms vs 1 ms, measured on this VM). */
static void buffer_hint_huge(void *p, size_t size)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure is harmless */
}

uint8_t *pd_buffer_alloc(size_t size)
{
	void *p;

	if (posix_memalign(&p, HUGE_PAGE, size))
		return NULL;
	buffer_hint_huge(p, size);
	return p;
}

/* Make room for at least NEED window bytes plus a large read (the window
 * starts at the allocation). */
static int window_reserve(struct pd_source *s, uint64_t need, struct ks_error *err)
{
	uint64_t want = s->win_len + READ_MIN, left = s->data_end - s->win_off, cap;
	uint8_t *b;

	if (want < 2 * s->win_len) /* keep memmove cost amortized */
		want = 2 * s->win_len;
	if (want > left)
		want = left;
	if (want < need)
		want = need;
	if (want <= s->mem_cap)
		return 0;
	if (pd_ordering_budget(s, s->q_cap, need, s->win_off + need, err) < 0)
		return -1;
	if (need > MAX_WINDOW)
		return ks_error_at(err, s->base.path, s->win_off,
				   "a round of more than %llu MB without FINISHED_ROUND; "
				   "the records cannot be ordered in bounded memory",
				   (unsigned long long)(MAX_WINDOW >> 20));
	cap = s->mem_cap ? s->mem_cap : WINDOW_INIT;
	while (cap < want)
		cap *= 2;
	if (cap > MAX_WINDOW)
		cap = MAX_WINDOW;
	if (cap > left)
		cap = left;
	b = realloc(s->mem, cap);
	if (!b)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory (%llu MB window)", s->base.path,
				    (unsigned long long)(cap >> 20));
	s->mem = s->buf = b;
	s->mem_cap = cap;
	return 0;
}

/* Data sections larger than s->map_min are mapped, and the prefetch thread
 * populates and frames them s->map_chunk bytes at a time (set at open from
 * the context, ks_ctx_perfdata_tune). */
_Static_assert(PF_BUF == KS_PD_MAP_MIN, "the first window and the mapping threshold");

/* Whether the page cache maps the data section in 2 MB pieces: a 2 MB
 * piece from its middle is mapped and populated, which takes one fault
 * where the kernel maps a large folio at once (a file read back through
 * readahead on kernel 6.18's ext4) and 32 or more where it maps 4 KB pages
 * (a file as its writer left it in the cache).  Mapping a 511 MB data
 * section costs 4 ms of kernel time then, and 35 ms else, against 19-25
 * ms for reading it into the buffers: the data section is mapped only in
 * the first case (or when the context's tuning asks for it). */
bool pd_map_cheap(const struct pd_source *s)
{
	uint64_t lo = ((s->data_off + s->data_end) / 2) & ~(HUGE_PAGE - 1);
	struct rusage before, after;
	bool cheap = false;
	void *m;

	if (s->map_min != KS_PD_MAP_MIN)
		return true;
	if (lo < s->data_off || s->data_end - lo < HUGE_PAGE)
		return false;
	m = mmap(NULL, HUGE_PAGE, PROT_READ, MAP_SHARED, s->fd, (off_t)lo);
	if (m == MAP_FAILED)
		return false;
	if (!getrusage(RUSAGE_THREAD, &before) && !madvise(m, HUGE_PAGE, MADV_POPULATE_READ) &&
	    !getrusage(RUSAGE_THREAD, &after))
		cheap = after.ru_minflt + after.ru_majflt - before.ru_minflt - before.ru_majflt <= 2;
	munmap(m, HUGE_PAGE);
	return cheap;
}

/* Map the data section (read-only, shared with the page cache: no copy);
 * the window then is the mapping from data_off on, up to what has been
 * populated.  False where the file cannot be mapped. */
bool pd_map_data(struct pd_source *s)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t off = s->data_off & ~(page - 1), len = s->data_end - off;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, (off_t)off);

	if (m == MAP_FAILED)
		return false;
	free(s->mem);
	s->mem = NULL;
	s->mem_cap = 0;
	s->map = m;
	s->map_off = s->released = off;
	s->map_len = len;
	s->win_off = s->data_off;
	s->win_len = 0;
	s->buf = s->map + (s->data_off - off);
	return true;
}

#define RELEASE_STEP (8ull << 20)

/* Give back the mapping's pages below LOW (no record from there on is
 * needed), in steps: peak memory stays a few chunks. */
static void map_release(struct pd_source *s, uint64_t low)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), to = low & ~(page - 1);
	uint8_t *from = s->map + (s->released - s->map_off);

	if (to < s->released + RELEASE_STEP || s->pf.give_back_len)
		return;
	if (s->pf.running) { /* the next job does it */
		s->pf.give_back = from;
		s->pf.give_back_len = to - s->released;
	} else {
		madvise(from, to - s->released, MADV_DONTNEED);
	}
	s->released = to;
}

/* Give back the mapped pages of the file bytes [FROM, TO) (page-aligned
 * inward): a pending record there faults its page in again from the page
 * cache when it is decoded, so that the pages of pending rounds do not
 * stay in memory (a round can be far larger than the budget). */
void pd_map_trim(struct pd_source *s, uint64_t from, uint64_t to)
{
	uint64_t lo = (from + s->page - 1) & ~(s->page - 1), hi = to & ~(s->page - 1);

	if (lo < s->map_off)
		lo = s->map_off;
	if (hi > lo)
		madvise(s->map + (lo - s->map_off), hi - lo, MADV_DONTNEED);
}

/* The window of a mapped data section up to NEED_END at least: the chunk
 * the thread populated (and framed), or further by itself.  LOW: the lowest
 * file offset still needed. */
static int map_fill(struct pd_source *s, uint64_t low, uint64_t need_end, struct ks_error *err)
{
	struct pd_prefetch *pf = &s->pf;
	uint64_t end = s->win_off + s->win_len;
	int result;

	if (pf->posted) {
		result = pd_prefetch_finish(pf, true);
		if (result)
			return pd_read_error(s, result, pf->fail_off, err);
		if (pf->off == end) {
			s->win_len += pf->len;
			pd_frames_take(s);
		}
	}
	end = s->win_off + s->win_len;
	if (need_end > end) {
		end = s->data_end - need_end > s->map_chunk ? need_end + s->map_chunk : s->data_end;
		s->win_len = end - s->win_off;
	}
	map_release(s, low);
	/* the pending records far behind (long rounds, in segments) are read
	 * again when merged: their pages need not stay */
	if (s->trimmed < low)
		s->trimmed = low;
	if (need_end > s->trimmed + trim_hold(s) + TRIM_STEP) {
		uint64_t to = (need_end - trim_hold(s)) & ~(TRIM_STEP - 1);

		pd_map_trim(s, s->trimmed, to);
		s->trimmed = to;
	}
	pd_prefetch_next(s);
	return 0;
}

/* Switch a read data section (one pd_map_cheap() found dearer to map) to
 * the mapping: the window would have to hold more than a prefetch's tail
 * (a round of more than TAIL_MAX bytes, whose reads would be copied and
 * moved ever more), while the mapping holds any round, and pd_map_trim()
 * keeps its pages few.  False if it cannot be mapped. */
static bool map_switch(struct pd_source *s)
{
	uint64_t end = s->win_off + s->win_len;

	if (s->pf.posted)
		pd_prefetch_finish(&s->pf, false);
	if (!pd_map_data(s))
		return false;
	s->win_len = end - s->win_off;
	s->pf.mapped = true;
	free(s->pf.spare);
	s->pf.spare = NULL;
	s->pf.spare_cap = 0;
	return true;
}

/* Refill so the window covers [OFF, OFF + N) (inside the data section),
 * keeping every queued record: from the prefetched region when it fits,
 * else by compacting and reading synchronously.  Only called before the
 * next record is decoded: it moves and may reallocate the window. */
int pd_window_fill(struct pd_source *s, uint64_t off, uint64_t n, struct ks_error *err)
{
	uint64_t low = pending_low(s, off), end, len;
	int ret;

	s->fi = s->nframes = 0; /* they end before OFF */
	if (!s->pf.tried)
		pd_prefetch_start(s);
	if (s->map)
		return map_fill(s, low, off + n, err);
	ret = pd_prefetch_take(s, low, off + n, err);
	if (ret)
		return ret < 0 ? -1 : 0;
	if (s->pf.running && off + n - low > TAIL_MAX &&
	    s->data_end - s->data_off > s->map_min && map_switch(s))
		return map_fill(s, low, off + n, err);
	window_compact(s, low);
	if (window_reserve(s, off + n - s->win_off, err) < 0)
		return -1;
	end = s->win_off + s->win_len;
	len = s->mem_cap - s->win_len;
	if (len > s->data_end - end)
		len = s->data_end - end;
	if (pd_pread_full(s, end, s->buf + s->win_len, len, err) < 0)
		return -1;
	s->win_len += len;
	pd_prefetch_next(s);
	return 0;
}
