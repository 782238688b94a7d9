/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_frame.c - framing in the prefetch thread: a chunk's records as
 * the main thread would queue them ({time, key} entries, markers for the
 * records it reads itself and for FINISHED_ROUND), each stretch between
 * markers sorted by time into a run, and in long rounds the stretches
 * already in time order sent as segments (cursors) instead of entries.
 */
#include <stdlib.h>

#include "perfdata_impl.h"

/* N bytes of the record at POS for a job: in the main thread's window, in
 * the chunk just read, or assembled from both when it starts before the
 * chunk and ends in it.  NULL when they are not all there. */
static __attribute__((noinline)) const uint8_t *job_bytes_slow(struct pd_prefetch *pf,
								uint64_t pos, uint64_t n)
{
	uint64_t start = pf->off, end = pf->off + pf->len;

	if (pos > end || n > end - pos)
		return NULL;
	if (pos >= start)
		return pf->dst + (pos - start);
	if (pos < pf->win_off)
		return NULL;
	if (n <= start - pos)
		return pf->win_buf + (pos - pf->win_off);
	if (n > STRADDLE_MAX)
		return NULL;
	memcpy(pf->straddle, pf->win_buf + (pos - pf->win_off), start - pos);
	memcpy(pf->straddle + (start - pos), pf->dst, pos + n - start);
	return pf->straddle;
}

static inline const uint8_t *job_bytes(struct pd_prefetch *pf, uint64_t pos, uint64_t n)
{
	if (pos >= pf->off && pos - pf->off <= pf->len && n <= pf->len - (pos - pf->off))
		return pf->dst + (pos - pf->off);
	return job_bytes_slow(pf, pos, n);
}

/* The first record from walk_from on that does not end before the chunk
 * (the main thread frames those); UINT64_MAX if a header on the way is
 * damaged (the main thread then reports it). */
static uint64_t job_first(const struct pd_source *s, const struct pd_prefetch *pf)
{
	uint64_t pos = pf->walk_from, start = pf->off;

	if (pos < pf->win_off)
		return UINT64_MAX;
	while (pos < start && start - pos >= 8) {
		const uint8_t *rec = pf->win_buf + (pos - pf->win_off);
		uint32_t type = rd32(s, rec), size = rd16(s, rec + 6);
		uint64_t extra;

		if (size < 8 || size > s->data_end - pos)
			return UINT64_MAX;
		if (size > start - pos)
			break;
		extra = type >= R_USER_START ? user_payload(s, type, rec, size) : 0;
		if (extra > s->data_end - pos - size)
			return UINT64_MAX;
		pos += size + extra;
	}
	return pos;
}

static int frames_grow(struct pd_prefetch *pf)
{
	size_t cap = pf->frames_cap ? 2 * pf->frames_cap : 16384;
	struct pd_entry *f = realloc(pf->frames, cap * sizeof(*f));

	if (!f)
		return -1;
	pf->frames = f;
	pf->frames_cap = cap;
	return 0;
}

/* SRC[0, LEN) into DST, the samples of events not selected (NSKIP of
 * them) after the others, each part in its order; branch-free, as which
 * part an entry goes to is unpredictable. */
static void split_copy(const struct pd_entry *src, size_t len, size_t nskip,
		       struct pd_entry *dst)
{
	struct pd_entry *keep = dst, *skip = dst + len - nskip;
	size_t i;

	for (i = 0; i < len; i++) {
		uintptr_t to_skip = !!(src[i].key & KEY_SKIP), pick = -to_skip;
		uintptr_t to = (uintptr_t)keep ^ (((uintptr_t)keep ^ (uintptr_t)skip) & pick);

		*(struct pd_entry *)to = src[i];
		skip += to_skip;
		keep += to_skip ^ 1;
	}
}

/* pd_merge() of A[0, NA) and B[0, NB) whose result goes through split_copy():
 * one pass. */
static void merge_split(const struct pd_entry *a, size_t na, const struct pd_entry *b, size_t nb,
			size_t nskip, struct pd_entry *out)
{
	const struct pd_entry *ea = a + na, *eb = b + nb;
	struct pd_entry *keep = out, *skip = out + na + nb - nskip;

	while (a < ea || b < eb) {
		/* from B when A is done or B's head is earlier (ties: A first) */
		uintptr_t from_b = a == ea || (b < eb && b->ts < a->ts), pick = -from_b;
		const struct pd_entry *e =
			(const struct pd_entry *)((uintptr_t)a ^ (((uintptr_t)a ^ (uintptr_t)b) & pick));
		uintptr_t to_skip = !!(e->key & KEY_SKIP), spick = -to_skip;
		uintptr_t to = (uintptr_t)keep ^ (((uintptr_t)keep ^ (uintptr_t)skip) & spick);

		*(struct pd_entry *)to = *e;
		b += from_b;
		a += from_b ^ 1;
		skip += to_skip;
		keep += to_skip ^ 1;
	}
}

/* The entries F[i, j) as one run behind a MARK_RUN head at OUT[o] (see
 * runs_build); returns the frames' end in OUT. */
static size_t run_emit(struct pd_entry *f, size_t i, size_t j, struct pd_entry *out, size_t o)
{
	struct pd_entry *sorted;
	size_t k, first_drop = 0, drops = 0, nskip = !!(f[i].key & KEY_SKIP), len = j - i;

	/* where its time first goes back: a round's records are a sorted
	 * stretch per CPU */
	for (k = i + 1; k < j; k++) {
		bool drop = f[k].ts < f[k - 1].ts;

		if (drop && !drops)
			first_drop = k;
		drops += drop;
		nskip += !!(f[k].key & KEY_SKIP);
	}
	out[o] = (struct pd_entry){ (uint64_t)nskip << 32 | (uint64_t)len << 2 | MARK_RUN,
				    f[i].key & ~0xffffull };
	if (!nskip) {
		if (!drops) {
			memcpy(out + o + 1, f + i, len * sizeof(*f));
		} else if (drops == 1) {
			pd_merge(f + i, first_drop - i, f + first_drop, j - first_drop, out + o + 1);
		} else {
			sorted = pd_sort_entries(f + i, out + o + 1, len);
			if (sorted != out + o + 1)
				memcpy(out + o + 1, sorted, len * sizeof(*sorted));
		}
	} else if (!drops) {
		split_copy(f + i, len, nskip, out + o + 1);
	} else if (drops == 1) {
		merge_split(f + i, first_drop - i, f + first_drop, j - first_drop, nskip,
			    out + o + 1);
	} else {
		/* sorted in one of the two, split into the other */
		sorted = pd_sort_entries(f + i, out + o + 1, len);
		if (sorted == f + i) {
			split_copy(f + i, len, nskip, out + o + 1);
		} else {
			split_copy(out + o + 1, len, nskip, f + i);
			memcpy(out + o + 1, f + i, len * sizeof(*f));
		}
	}
	return o + 1 + len;
}

/* The frames F[0, N) in runs: each run of queue entries between markers
 * sorted by time, stably, behind a MARK_RUN head, into pf->frames_tmp,
 * which then becomes pf->frames.  The queue gets a round as one sorted
 * run, which its flush merges with what is left of the round before in
 * one pass, and the flush's result does not change: a stable sort of the
 * entries pushed gives the same result whatever their order was, and the
 * counts of out-of-order entries and the queue's maximum time do not
 * depend on it (pd_queue_run).  A run is a round's stretches of one CPU's
 * records each in time order: the scan that finds its end counts where
 * time goes back, so that a run of one or two stretches (one CPU or two)
 * is copied or merged at once, without pd_sort_entries()' scans.  In a round
 * past SEG_ROUND chunks (from the last FINISHED_ROUND this thread framed),
 * a stretch in time order of SEG_MIN entries or more goes as a segment
 * (MARK_SEG) instead: the main thread merges it from the file, so that a
 * long round's records need no memory of their own.  The runs go to
 * pf->frames_tmp from O on (a job's chunks one after the other; see
 * pd_frames_publish).  END: the file offset after the last frame's record.
 * Returns where the frames end in pf->frames_tmp, SIZE_MAX when memory for
 * them could not be had (the main thread then frames the chunk). */
static size_t runs_build(struct pd_prefetch *pf, size_t n, uint64_t end, size_t o)
{
	struct pd_entry *f = pf->frames, *out;
	size_t i, j, k, e, piece, cap = o + 2 * n + 1;
	uint64_t big = SEG_ROUND * (pf->mapped ? pf->src->map_chunk : READ_SIZE);

	if (big > pf->src->base.limits.memory / 8) /* a lowered budget */
		big = pf->src->base.limits.memory / 8;

	if (cap > pf->tmp_cap) { /* the frames and a head per run: a run per marker, one more */
		out = realloc(pf->frames_tmp, cap * sizeof(*out));
		if (!out)
			return SIZE_MAX;
		pf->frames_tmp = out;
		pf->tmp_cap = cap;
	}
	out = pf->frames_tmp;
	for (i = 0; i < n; i = j) {
		if (!(f[i].key & KEY_ATTR)) {
			if (MARK_KIND(f[i]) == MARK_FLUSH) {
				pf->round_off = f[i].key >> 16;
				pf->flushes++;
			}
			out[o++] = f[i];
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < n && j - i < RUN_MAX && (f[j].key & KEY_ATTR); j++)
			;
		if ((f[i].key >> 16) - pf->round_off < big) { /* a round still small */
			o = run_emit(f, i, j, out, o);
			continue;
		}
		/* the run's stretches in time order: the long ones are
		 * segments, the short ones between them runs */
		for (piece = k = i; k < j; k = e) {
			for (e = k + 1; e < j && f[e].ts >= f[e - 1].ts; e++)
				;
			if (e - k < SEG_MIN)
				continue;
			if (piece < k)
				o = run_emit(f, piece, k, out, o);
			out[o++] = (struct pd_entry){ (uint64_t)(e - k) << 2 | MARK_SEG,
						      f[k].key & ~0xffffull };
			out[o++] = (struct pd_entry){ f[k].ts,
						      (e < n ? f[e].key >> 16 : end) << 16 |
						      (f[k].key & 0xffff) };
			out[o++] = (struct pd_entry){ f[e - 1].ts, 0 };
			piece = e;
		}
		if (piece < j)
			o = run_emit(f, piece, j, out, o);
	}
	return o;
}

/* The frames a job built (pf->frames_tmp) become pf->frames, as
 * pd_frames_take() takes them; the raw frames' array is the next job's
 * pf->frames_tmp. */
void pd_frames_publish(struct pd_prefetch *pf)
{
	struct pd_entry *t = pf->frames;
	size_t c = pf->tmp_cap;

	pf->frames = pf->frames_tmp;
	pf->frames_tmp = t;
	pf->tmp_cap = pf->frames_cap;
	pf->frames_cap = c;
	pf->nframes = pf->nbuilt;
}

/* The frame of the record REC (SIZE bytes) at POS; *LEN its length with
 * any payload after it.  False when it cannot be framed: the frames end. */
HOT bool frame_record(const struct pd_source *s, struct pd_prefetch *pf, const uint8_t *rec,
		      uint32_t size, uint64_t pos, struct pd_entry *f, uint64_t *len, bool swap)
{
	uint32_t type = ld32(rec, swap);
	struct ks_error scratch;
	uint64_t ts;
	int attr;

	*f = (struct pd_entry){ MARK_MAIN, pos << 16 };
	*len = size;
	if (type >= R_USER_START) {
		uint64_t extra = user_payload(s, type, rec, size);

		if (extra > s->data_end - pos - size)
			return false;
		*len += extra;
		if (type == R_FINISHED_ROUND)
			f->ts = MARK_FLUSH;
		return true;
	}
	attr = record_attr(s, pf->idc, type, rec, size, swap);
	if (attr < 0 || record_ts(s, &s->attrs[attr], type, rec, size, pos, &ts, &scratch, swap) < 0 ||
	    !ts || ts == UINT64_MAX)
		return true;
	*f = (struct pd_entry){ ts, queue_key(s, pos, type, attr) };
	return true;
}

/* The samples with a time from POS on that lie wholly in the chunk framed
 * in one loop (*NP frames so far); returns where it stopped. */
HOT uint64_t frame_samples(const struct pd_source *s, struct pd_prefetch *pf, uint64_t pos,
			   size_t *np, bool swap)
{
	uint64_t end = pf->off + pf->len;
	size_t n = *np;

	while (pos >= pf->off && end - pos >= 8 && n < pf->frames_cap) {
		const uint8_t *rec = pf->dst + (pos - pf->off);
		uint32_t size = ld16(rec + 6, swap);

		__builtin_prefetch(rec + FRAME_PREFETCH);
		if (size > end - pos || !sample_entry(s, pf->idc, rec, size, pos, &pf->frames[n], swap))
			break;
		n++;
		pos += size;
	}
	*np = n;
	return pos;
}

/* Frame the records from POS on up to the first that does not end in the
 * job's bytes (or cannot be framed), their runs after the job's frames so
 * far (pf->nbuilt); false when memory for them could not be had. */
HOT bool frame_from(const struct pd_source *s, struct pd_prefetch *pf, uint64_t pos, bool swap)
{
	uint64_t len;
	size_t n = 0, o;

	for (;;) {
		const uint8_t *rec;
		uint32_t size;

		pos = frame_samples(s, pf, pos, &n, swap);
		rec = job_bytes(pf, pos, 8);
		if (!rec)
			break;
		size = ld16(rec + 6, swap);
		if (size < 8 || size > s->data_end - pos)
			break;
		rec = job_bytes(pf, pos, size);
		if (!rec || (n == pf->frames_cap && frames_grow(pf) < 0) ||
		    !frame_record(s, pf, rec, size, pos, &pf->frames[n], &len, swap))
			break;
		n++;
		pos += len;
	}
	o = runs_build(pf, n, pos, pf->nbuilt);
	if (o == SIZE_MAX)
		return false;
	pf->nbuilt = o;
	pf->frames_end = pos;
	return true;
}

/* Frame the records from the first that does not end before the chunk up
 * to the first that does not end in it (or cannot be framed). */
void pd_frame_job_any(struct pd_prefetch *pf)
{
	uint64_t pos = job_first(pf->src, pf);

	pf->nbuilt = 0;
	pf->flushes = 0;
	if (pos == UINT64_MAX)
		return;
	pf->frames_from = pf->frames_end = pos;
	pf->framed = pf->src->swap ? frame_from(pf->src, pf, pos, true) :
				     frame_from(pf->src, pf, pos, false);
}

/* The job's bytes made longer (pf->len): frame on from where its frames
 * end.  False when memory for them could not be had (the frames then end
 * where they did; the main thread frames the rest). */
bool pd_frame_more_any(struct pd_prefetch *pf)
{
	return pf->src->swap ? frame_from(pf->src, pf, pf->frames_end, true) :
			       frame_from(pf->src, pf, pf->frames_end, false);
}
