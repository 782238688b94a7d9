/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_order.c - perf 6.1's ordered_events: the queue of {time, key}
 * entries (records stay in the window), its growth within the memory
 * budget, the stable sorts and merges, a FINISHED_ROUND's flush up to the
 * previous round's maximum time, the queueing of a run of frames from the
 * prefetch thread, and the pending segments (cursors into the file, kept
 * in a heap by time, then offset; see perfdata_frame.c).  A round's queue
 * that would pass the budget is sorted and spilled (perfdata_spill.c).
 */
#include <stdlib.h>

#include "perfdata_impl.h"

static int queue_grow(struct pd_source *s)
{
	uint64_t cap = s->q_cap ? s->q_cap * 2 : 4096;
	struct pd_entry *q = realloc(s->q, cap * sizeof(*q));
	struct pd_entry *t;

	if (!q)
		return -1;
	s->q = q;
	t = realloc(s->tmp, cap * sizeof(*t));
	if (!t)
		return -1;
	s->tmp = t;
	s->q_cap = cap;
	return 0;
}

/* The bytes held for ordering with a queue of QCAP entries and a window of
 * WIN bytes: both arrays of the queue and of the skipped samples, the
 * window, the read buffers of the spilled runs. */
static uint64_t ordering_held(const struct pd_source *s, uint64_t qcap, uint64_t win)
{
	return (qcap + s->ph_cap) * 2 * sizeof(struct pd_entry) + win +
	       (uint64_t)s->nrun * RUN_CHUNK;
}

/* Whether holding a queue of QCAP entries and a window of WIN bytes for
 * ordering stays within limits.memory; else the error, at offset OFF.
 * perf queues every record until a FINISHED_ROUND (or the end): a file
 * without them (valid, but not written by perf record) is held whole. */
int pd_ordering_budget(struct pd_source *s, uint64_t qcap, uint64_t win, uint64_t off,
			   struct ks_error *err)
{
	uint64_t held = ordering_held(s, qcap, win);
	uint64_t lim = s->base.limits.memory;
	char hint[96];

	if (held <= lim)
		return 0;
	ks_limit_hint(hint, sizeof(hint), "memory", lim);
	if (!s->rounds)
		return ks_error_code_at(err, KS_E_LIMIT, s->base.path, off,
				   "no FINISHED_ROUND records: ordering the records by time "
				   "would hold more than the memory budget %s", hint);
	return ks_error_code_at(err, KS_E_LIMIT, s->base.path, off,
			   "a round between FINISHED_ROUND records holds more than the "
			   "memory budget %s", hint);
}

/* The queue (and its scratch array) grown to CAP entries at least. */
static int queue_grow_to(struct pd_source *s, uint64_t cap, struct ks_error *err)
{
	while (s->q_cap < cap) {
		if (pd_ordering_budget(s, s->q_cap ? s->q_cap * 2 : 4096, pd_window_held(s), s->pos, err) < 0)
			return -1;
		if (queue_grow(s) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	}
	return 0;
}

static void sort_queue(struct pd_source *s);
static void sort_skipped(struct pd_source *s);

/* Whether the queue's arrays grown to QCAP entries and the skipped
 * samples' to PHCAP would pass the budget, when N more entries are to be
 * queued: then a round's pending entries (none ready) go to a spilled run
 * (not fewer than SPILL_MIN: a run's read buffer would cost as much). */
#define SPILL_MIN (16 * RUN_CHUNK / sizeof(struct pd_entry))
static bool queue_spills(const struct pd_source *s, uint64_t qcap, uint64_t phcap)
{
	uint64_t pending = s->q_n - s->q_head + s->ph_n - s->ph_head;
	uint64_t held = (qcap + phcap) * 2 * sizeof(struct pd_entry) + pd_window_held(s) +
			((uint64_t)s->nrun + 1) * RUN_CHUNK;

	return s->q_ready == s->q_head && pending >= SPILL_MIN && held > s->base.limits.memory;
}

/* The queue's arrays (empty) cut to half while they pass the budget with
 * one more run's buffer: the next run is then smaller. */
static void queue_shrink(struct pd_source *s)
{
	uint64_t lim = s->base.limits.memory, win = pd_window_held(s);
	struct pd_entry *q, *t;

	while (s->q_cap > SPILL_MIN && ordering_held(s, s->q_cap, win) + RUN_CHUNK > lim) {
		q = realloc(s->q, s->q_cap / 2 * sizeof(*q));
		if (!q)
			break;
		s->q = q;
		s->q_cap /= 2; /* the scratch array, cut or not, holds as many */
		t = realloc(s->tmp, s->q_cap * sizeof(*t));
		if (t)
			s->tmp = t;
	}
}

/* The pending entries and skipped samples sorted (stably, as the flush
 * would) and written to a spilled run; both are empty again. */
static int queue_spill(struct pd_source *s, struct ks_error *err)
{
	sort_queue(s);
	sort_skipped(s);
	if (pd_spill_run(s, s->q + s->q_head, s->q_n - s->q_head, s->ph + s->ph_head,
			 s->ph_n - s->ph_head, err) < 0)
		return -1;
	s->q_n = s->q_head = s->q_ready = 0;
	s->ph_n = s->ph_head = 0;
	s->q_low = UINT64_MAX;
	s->q_low_ok = true;
	s->q_sorted = s->ph_sorted = true;
	queue_shrink(s);
	return 0;
}

/* The capacity, doubled from CAP (4096 at first), that holds N entries. */
static uint64_t cap_for(uint64_t cap, uint64_t n)
{
	for (cap = cap ? cap : 4096; cap < n; cap *= 2)
		;
	return cap;
}

/* Room for N more entries: drop the delivered ones if needed, spill the
 * pending ones past the budget, then grow. */
__attribute__((noinline)) int pd_queue_reserve(struct pd_source *s, uint64_t n,
						   struct ks_error *err)
{
	if (s->q_head && s->q_cap - s->q_n < n) {
		memmove(s->q, s->q + s->q_head, (s->q_n - s->q_head) * sizeof(*s->q));
		s->q_n -= s->q_head;
		s->q_ready -= s->q_head;
		s->q_head = 0;
	}
	if (s->q_cap - s->q_n < n && queue_spills(s, cap_for(s->q_cap, s->q_n + n), s->ph_cap) &&
	    queue_spill(s, err) < 0)
		return -1;
	return queue_grow_to(s, s->q_n + n, err);
}

/* Room for N more samples of events not selected (and as much scratch). */
static __attribute__((noinline)) int skipped_reserve(struct pd_source *s, uint64_t n,
						     struct ks_error *err)
{
	uint64_t cap;
	struct pd_entry *p;

	if (s->ph_head && s->ph_cap - s->ph_n < n) {
		memmove(s->ph, s->ph + s->ph_head, (s->ph_n - s->ph_head) * sizeof(*s->ph));
		s->ph_n -= s->ph_head;
		s->ph_head = 0;
	}
	cap = cap_for(s->ph_cap, s->ph_n + n);
	if (cap == s->ph_cap)
		return 0;
	if (queue_spills(s, s->q_cap, cap)) {
		if (queue_spill(s, err) < 0)
			return -1;
		if (cap_for(s->ph_cap, n) == s->ph_cap)
			return 0;
		cap = cap_for(s->ph_cap, n);
	}
	if (pd_ordering_budget(s, s->q_cap + cap - s->ph_cap, pd_window_held(s), s->pos, err) < 0)
		return -1;
	p = realloc(s->ph, cap * sizeof(*p));
	if (!p)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	s->ph = p;
	p = realloc(s->ph_tmp, cap * sizeof(*p));
	if (!p)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	s->ph_tmp = p;
	s->ph_cap = cap;
	return 0;
}

/* End of the non-decreasing run starting at I. */
static uint64_t run_end(const struct pd_entry *a, uint64_t i, uint64_t n)
{
	for (i++; i < n && a[i - 1].ts <= a[i].ts; i++)
		;
	return i;
}

/* First index in a[lo, hi) whose ts is > TS (STRICT) or >= TS. */
static uint64_t bound(const struct pd_entry *a, uint64_t lo, uint64_t hi, uint64_t ts,
		      bool strict)
{
	while (lo < hi) {
		uint64_t m = lo + (hi - lo) / 2;

		if (strict ? a[m].ts <= ts : a[m].ts < ts)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* Stable merge of the sorted runs A[0, NA) and B[0, NB) into OUT (ties:
 * A first).  A's head up to B[0] and B's tail from A's last on are copied
 * as they are; only the overlapping middle is merged.  Runs from
 * consecutive rounds rarely overlap much. */
void pd_merge(const struct pd_entry *a, uint64_t na, const struct pd_entry *b, uint64_t nb,
		  struct pd_entry *out)
{
	const struct pd_entry *pa, *pb;
	struct pd_entry *po;
	uint64_t first, last;

	if (!na || !nb || a[na - 1].ts <= b[0].ts) {
		memcpy(out, a, na * sizeof(*a));
		memcpy(out + na, b, nb * sizeof(*b));
		return;
	}
	first = bound(a, 0, na, b[0].ts, true);
	last = bound(b, 0, nb, a[na - 1].ts, false);
	memcpy(out, a, first * sizeof(*a));
	pa = a + first;
	pb = b;
	po = out + first;
	while (pa < a + na && pb < b + last) {
		/* branch-free (the order is unpredictable): the source's
		 * address picked by a mask, which compilers do not turn back
		 * into a branch as they do a conditional expression */
		uintptr_t from_b = pb->ts < pa->ts, pick = -from_b;
		uintptr_t src = (uintptr_t)pa ^ (((uintptr_t)pa ^ (uintptr_t)pb) & pick);

		*po++ = *(const struct pd_entry *)src;
		pb += from_b;
		pa += from_b ^ 1;
	}
	memcpy(po, pa, (size_t)(a + na - pa) * sizeof(*a));
	po += a + na - pa;
	memcpy(po, pb, (size_t)(b + nb - pb) * sizeof(*b));
}

/* Stable merge of the sorted A[0, NA) and B[0, NB) into A[0, NA + NB) (A
 * has room for NB more), from the back: A's entries up to B's first time
 * are not touched, the later ones move behind as B's come between them
 * (ties: A first, as merge()).  A run of a round merged into the queue
 * moves only what it overlaps, without a copy of it. */
static void merge_back(struct pd_entry *a, uint64_t na, const struct pd_entry *b, uint64_t nb)
{
	struct pd_entry *pa = a + na, *po = a + na + nb;
	const struct pd_entry *pb = b + nb;

	while (pa > a && pb > b) {
		/* branch-free as merge(): from A when its last is later */
		uintptr_t from_a = pa[-1].ts > pb[-1].ts, pick = -from_a;
		uintptr_t src = (uintptr_t)(pb - 1) ^
				(((uintptr_t)(pb - 1) ^ (uintptr_t)(pa - 1)) & pick);

		*--po = *(const struct pd_entry *)src;
		pa -= from_a;
		pb -= from_a ^ 1;
	}
	memcpy(a, b, (size_t)(pb - b) * sizeof(*b));
}

/* One pass of a natural merge sort: merge the pairs of sorted runs of
 * src[0, n) into dst[0, n).  Returns how many runs src had. */
static uint64_t merge_pass(const struct pd_entry *src, uint64_t n, struct pd_entry *dst)
{
	uint64_t i = 0, runs = 0;

	while (i < n) {
		uint64_t mid = run_end(src, i, n), hi;

		runs++;
		if (mid == n) {
			memcpy(dst + i, src + i, (n - i) * sizeof(*src));
			break;
		}
		hi = run_end(src, mid, n);
		runs++;
		pd_merge(src + i, mid - i, src + mid, hi - mid, dst + i);
		i = hi;
	}
	return runs;
}

/* Stable sort of A[0, N) (N > 0) with B, as large, for scratch; returns
 * the one that holds the result.  A sorted A costs one scan; a pass over
 * at most two runs leaves one, so no pass is needed just to find out that
 * the result is sorted. */
struct pd_entry *pd_sort_entries(struct pd_entry *a, struct pd_entry *b, uint64_t n)
{
	struct pd_entry *t;
	uint64_t runs;

	if (run_end(a, 0, n) == n)
		return a;
	do {
		runs = merge_pass(a, n, b);
		t = a;
		a = b;
		b = t;
	} while (runs > 2);
	return a;
}

/* The entries *A[HEAD, N) sorted where they are (*A and its scratch array
 * *TMP swap when the result is in the scratch array: outside the pending
 * entries neither holds anything); *SORTED says they are. */
static void sort_pending(struct pd_entry **a, struct pd_entry **tmp, uint64_t head, uint64_t n,
			 bool *sorted)
{
	struct pd_entry *t = *a;

	if (!*sorted && n > head && pd_sort_entries(*a + head, *tmp + head, n - head) != *a + head) {
		*a = *tmp;
		*tmp = t;
	}
	*sorted = true;
}

/* The pending entries, and the pending skipped samples, sorted. */
static void sort_queue(struct pd_source *s)
{
	sort_pending(&s->q, &s->tmp, s->q_head, s->q_n, &s->q_sorted);
}

static void sort_skipped(struct pd_source *s)
{
	sort_pending(&s->ph, &s->ph_tmp, s->ph_head, s->ph_n, &s->ph_sorted);
}

/* The skipped samples up to LIMIT leave the queue as if delivered:
 * counted, not decoded.  Returns the time of the last of them, 0 if none. */
static uint64_t flush_skipped(struct pd_source *s, uint64_t limit)
{
	uint64_t h = s->ph_head, hi, last = 0, unknown = 0, i;

	if (s->ph_n == h)
		return 0;
	sort_skipped(s);
	hi = limit ? bound(s->ph, h, s->ph_n, limit, true) : h;
	for (i = h; i < hi; i++) {
		const struct pd_attr *a = &s->attrs[(s->ph[i].key & KEY_ATTR) - 1];

		unknown += a->type == TYPE_TRACEPOINT && !a->event;
	}
	if (hi > h)
		last = s->ph[hi - 1].ts;
	s->base.stats.filtered += hi - h;
	s->base.stats.unknown_events += unknown;
	s->ph_head = hi;
	return last;
}

/* perf's ordered_events__flush(ROUND or FINAL). */
void pd_flush_queue(struct pd_source *s, bool final)
{
	uint64_t limit, hi, skipped_last;

	if (queue_idle(s))
		return;
	sort_queue(s);
	limit = final ? UINT64_MAX : s->next_flush;
	hi = limit ? bound(s->q, s->q_head, s->q_n, limit, true) : s->q_head;
	s->q_ready = hi;
	if (hi > s->q_head) /* delivered next: the lowest offset may go */
		s->q_low_ok = false;
	/* the last record delivered: the later of the two parts' last */
	skipped_last = flush_skipped(s, limit);
	if (hi > s->q_head)
		s->last_flush = s->q[hi - 1].ts;
	if (skipped_last && (hi == s->q_head || skipped_last > s->last_flush))
		s->last_flush = skipped_last;
	/* the segments' records up to LIMIT are merged in as delivered
	 * (next_batch), which moves last_flush on */
	s->seg_limit = limit;
	s->flush_any = hi > s->q_head || skipped_last;
	if (!final)
		s->next_flush = s->max_timestamp;
}

/* How many of the sorted entries F[0, N) come before time T. */
static inline uint64_t count_before(const struct pd_entry *f, uint64_t n, uint64_t t)
{
	uint64_t i = 0;

	while (i < n && f[i].ts < t)
		i++;
	return i;
}

/* The lowest file offset of a run's queued entries F[0, N) into s->q_low:
 * HEAD, its first record's (a run's records are in file order), unless
 * samples of events not selected (NSKIP of them, gone to s->ph) were
 * among them. */
static void run_low(struct pd_source *s, const struct pd_entry *f, uint64_t n, uint64_t nskip,
		    uint64_t head)
{
	uint64_t low = head, i;

	if (nskip && s->q_low_ok)
		for (low = UINT64_MAX, i = 0; i < n; i++)
			if ((f[i].key >> 16) < low)
				low = f[i].key >> 16;
	if (low < s->q_low)
		s->q_low = low;
}

/* Queue the run whose MARK_RUN head is at s->fi, as queue_push() one by
 * one would: each of its parts is sorted, so their last entries are their
 * latest, and the entries before the last flush's time are at their
 * starts.  Where the queue's entries are in time order, the run's first
 * part is merged with them at once (a stable merge: the queue's entries
 * first among equal times, as the flush's stable sort would order them),
 * so the flush need not sort; its second part, the samples of events not
 * selected, goes to s->ph, out of the delivery loop's way. */
int pd_queue_run(struct pd_source *s, struct ks_error *err)
{
	const struct pd_entry *f = &s->frames[s->fi + 1];
	uint64_t n = MARK_RUN_LEN(s->frames[s->fi]), nskip = MARK_RUN_SKIP(s->frames[s->fi]);
	uint64_t nk = n - nskip, run_max, pending, held;
	const struct pd_entry *fs = f + nk;
	bool idle = queue_idle(s), sorted;

	/* first: room may be made by spilling the pending entries */
	if (nskip && s->ph_cap - s->ph_n < nskip && skipped_reserve(s, nskip, err) < 0)
		return -1;
	if (nk && pd_queue_reserve(s, nk, err) < 0)
		return -1;
	pending = s->q_n - s->q_head;
	sorted = s->q_sorted || !pending;
	if (!nk) {
		/* only samples of events not selected: the queue is as it was */
	} else if (sorted && pending && s->q[s->q_n - 1].ts > f[0].ts) {
		/* in place (no entry is ready: the frames are taken only
		 * then) */
		merge_back(s->q + s->q_head, pending, f, nk);
		s->q_ready = s->q_head;
		s->q_sorted = true;
	} else {
		memcpy(s->q + s->q_n, f, nk * sizeof(*f));
		s->q_sorted = sorted;
	}
	if (nskip) {
		held = s->ph_n - s->ph_head;
		if (!held)
			s->ph_sorted = true;
		if (s->ph_sorted && held && s->ph[s->ph_n - 1].ts > fs[0].ts) {
			/* in place, as the queue's part: the flush need not sort */
			merge_back(s->ph + s->ph_head, held, fs, nskip);
		} else {
			memcpy(s->ph + s->ph_n, fs, nskip * sizeof(*fs));
		}
		s->ph_n += nskip;
	}
	s->base.stats.out_of_order += count_before(f, nk, s->last_flush) +
				      count_before(fs, nskip, s->last_flush);
	/* the run's latest: the later of its two parts' last */
	run_max = nk ? f[nk - 1].ts : 0;
	if (nskip && fs[nskip - 1].ts > run_max)
		run_max = fs[nskip - 1].ts;
	if (n && (idle || run_max >= s->q_max)) {
		s->q_max = run_max;
		s->max_timestamp = run_max;
	}
	if (nk)
		run_low(s, f, nk, nskip, s->frames[s->fi].key >> 16);
	s->q_n += nk;
	s->framed_ahead += n;
	s->fi += 1 + n;
	s->pos = frames_pos(s, s->fi);
	return 0;
}

static void seg_up(struct pd_source *s, uint32_t i)
{
	struct pd_seg *h = s->seg, x = h[i];

	while (i && seg_before(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/* Segment G's records before time T (at its start: it is sorted). */
static uint64_t seg_count_before(struct pd_source *s, struct pd_seg g, uint64_t t, bool swap)
{
	uint64_t n = 0;

	while (g.off < g.end && seg_load(s, &g, swap) && g.ts < t) {
		n++;
		g.off += ld16(s->buf + (g.off - s->win_off) + 6, swap);
	}
	return n;
}

/* Queue the segment whose MARK_SEG head is at s->fi, as queue_push() one
 * by one would its entries (see pd_queue_run): a cursor at its first record,
 * or, when it continues the stretch of a pending one (cut where a chunk
 * ended), that one made longer. */
HOT int queue_seg(struct pd_source *s, struct ks_error *err, bool swap)
{
	const struct pd_entry *f = &s->frames[s->fi];
	uint64_t n = MARK_RUN_LEN(f[0]), first = f[1].ts, last = f[2].ts;
	struct pd_seg g = { .ts = first, .off = f[0].key >> 16, .end = f[1].key >> 16,
			    .last = last };
	bool idle = queue_idle(s);
	struct pd_seg *h;
	uint32_t i;

	g.rel = g.off;
	g.key = g.off << 16 | (f[1].key & 0xffff);
	if (s->fi + 3 > s->nframes)
		return ks_error_at(err, s->base.path, g.off, "record changed while being read");
	if (first < s->last_flush)
		s->base.stats.out_of_order += seg_count_before(s, g, s->last_flush, swap);
	for (i = 0; i < s->nseg && s->seg[i].end != g.off; i++)
		;
	if (i < s->nseg && s->seg[i].last <= first) {
		s->seg[i].end = g.end;
		s->seg[i].last = last;
	} else {
		if (s->nseg == s->seg_cap) {
			uint32_t cap = s->seg_cap ? 2 * s->seg_cap : 16;

			if (pd_ordering_budget(s, s->q_cap + cap * sizeof(*h) / sizeof(struct pd_entry),
					    pd_window_held(s), g.off, err) < 0)
				return -1;
			h = realloc(s->seg, cap * sizeof(*h));
			if (!h)
				return ks_error_set(err, "%s: out of memory", s->base.path);
			s->seg = h;
			s->seg_cap = cap;
		}
		s->seg[s->nseg++] = g;
		seg_up(s, s->nseg - 1);
	}
	if (idle || last >= s->q_max) {
		s->q_max = last;
		s->max_timestamp = last;
	}
	s->framed_ahead += n;
	s->fi += 3;
	s->pos = frames_pos(s, s->fi);
	return 0;
}

/* queue_seg() in the file's byte order: one call per segment. */
int pd_queue_seg(struct pd_source *s, struct ks_error *err)
{
	return s->swap ? queue_seg(s, err, true) : queue_seg(s, err, false);
}
