/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_next.c - reading the data section and delivering its records in
 * perf's order: the records are taken from the prefetch thread's frames or
 * read here, queued (perfdata_order.c), and on a flush decoded in place
 * from the window into struct ks_record, in batches (pd_next_batch()),
 * merged with the pending segments' records where there are any.  The
 * record path is compiled once per byte order (HOT, perfdata_impl.h).
 */

#include "perfdata_impl.h"

/* The fixed slots, IDENTIFIER .. PERIOD, of the sample body at P (size
 * already checked), each from its offset: no walk, so no chain of
 * dependent adds.  Returns the end of the slots. */
HOT const uint8_t *sample_fixed(const struct pd_attr *a, const uint8_t *p, struct ks_record *r,
			       bool swap)
{
	if (a->identifier_at >= 0)
		r->id = ld64(p + a->identifier_at, swap);
	if (a->ip_at >= 0)
		r->ip = ld64(p + a->ip_at, swap);
	if (a->tid_at >= 0) {
		r->pid = (int32_t)ld32(p + a->tid_at, swap);
		r->tid = (int32_t)ld32(p + a->tid_at + 4, swap);
	}
	if (a->sample_type & S_TIME)
		r->ts = r->raw_ts = ld64(p + a->time_pos, swap);
	if (a->id_at >= 0)
		r->id = ld64(p + a->id_at, swap);
	if (a->cpu_at >= 0)
		r->cpu = (int32_t)ld32(p + a->cpu_at, swap);
	if (a->period_at >= 0)
		r->period = ld64(p + a->period_at, swap);
	return p + a->fixed_size;
}

/* A sample of a fixed layout (see pd_attr) in one bounds check.  Returns
 * false when the sample is too short: the general walk then names what is
 * missing. */
HOT bool fixed_sample(const struct pd_attr *a, const uint8_t *rec, uint32_t size,
		     struct ks_record *r, bool swap)
{
	uint32_t body = size - 8, raw = 0, left;
	const uint8_t *p = rec + 8;

	if (!(a->sample_type & S_RAW)) {
		if (body < a->fixed_size + a->after_raw)
			return false;
	} else {
		if (body < a->fixed_size + 4)
			return false;
		raw = ld32(p + a->fixed_size, swap);
		left = body - a->fixed_size - 4;
		if (raw > left || left - raw < a->after_raw)
			return false;
		r->data = p + a->fixed_size + 4;
		r->size = raw;
	}
	sample_fixed(a, p, r, swap);
	return true;
}

HOT int decode_sample(struct pd_source *s, const struct pd_attr *a, const uint8_t *rec,
		      uint32_t size, uint64_t off, struct ks_record *r, struct ks_error *err,
		      bool swap)
{
	const uint8_t *p = rec + 8, *end = rec + size;

	if (!a->fixed_layout || !fixed_sample(a, rec, size, r, swap)) {
		NEED(a->fixed_size, "the fixed fields");
		p = sample_fixed(a, p, r, swap);
		if (pd_sample_variable(s, a, p, end, off, r, err) < 0)
			return -1;
	}
	r->type = KS_REC_EVENT;
	r->event = a->event;
	if (a->type == TYPE_TRACEPOINT && !a->event)
		s->base.stats.unknown_events++;
	return 1;
}

/* Zero R, then cpu/tid/pid = -1 (unknown).  Done per record, so in
 * constant-size pieces the compiler turns into vector stores rather than one
 * "rep stos" with its large start-up cost. */
static inline void record_clear(struct ks_record *r)
{
	char *p = (char *)r;

	_Static_assert(sizeof(*r) > 128 && sizeof(*r) <= 192, "adjust record_clear()");
	memset(p, 0, 64);
	memset(p + 64, 0, 64);
	memset(p + 128, 0, sizeof(*r) - 128);
	r->cpu = r->tid = r->pid = -1;
}

/* Decode the kernel record at OFF (of attr A, or NULL) into R.  Returns
 * 1 if it is delivered, 0 if it is a kind the reader skips. */
HOT int decode_record(struct pd_source *s, uint64_t off, const struct pd_attr *a,
		      struct ks_record *r, struct ks_error *err, bool swap)
{
	const uint8_t *rec = s->buf + (off - s->win_off);
	uint32_t type = ld32(rec, swap);
	uint32_t size = ld16(rec + 6, swap);
	const uint8_t *end = rec + size;
	uint32_t body_min;

	record_clear(r);
	r->offset = off;
	r->misc = ld16(rec + 4, swap);
	if (type == R_SAMPLE)
		return decode_sample(s, a, rec, size, off, r, err, swap);
	if (a && a->sample_id_all && a->trailer_size <= size - 8) {
		pd_parse_trailer(s, a, end, r);
		end -= a->trailer_size;
	}
	body_min = type == R_COMM ? 16 : type == R_FORK || type == R_EXIT ? 32 :
		   type == R_LOST ? 24 : type == R_LOST_SAMPLES ? 16 : 8;
	if ((uint64_t)(end - rec) < body_min)
		return ks_error_at(err, s->base.path, off, "record of type %u is too short (%u bytes)",
				   type, size);
	switch (type) {
	case R_COMM:
		pd_decode_comm(s, rec, end, r);
		return 1;
	case R_FORK:
	case R_EXIT:
		pd_decode_task(s, type, rec, r);
		return 1;
	case R_LOST:
		pd_decode_lost(s, rd64(s, rec + 16), r);
		return 1;
	case R_LOST_SAMPLES:
		pd_decode_lost(s, rd64(s, rec + 8), r);
		return 1;
	default:
		s->base.stats.skipped++;
		return 0;
	}
}

/* PERF_RECORD_ID_INDEX: {id, idx, cpu, tid} entries.  As in perf, idx is
 * the mmap index, not the attr: the entries only refine ids that the attr id
 * arrays already map, so they are checked but do not change the map. */
static int id_index(struct pd_source *s, const uint8_t *rec, uint32_t size, uint64_t off,
		    struct ks_error *err)
{
	uint64_t nr;

	if (size < 16)
		return ks_error_at(err, s->base.path, off, "ID_INDEX record too short");
	nr = rd64(s, rec + 8);
	if (nr > (size - 16) / 32)
		return ks_error_at(err, s->base.path, off, "ID_INDEX holds %llu entries, "
				   "more than its size allows", (unsigned long long)nr);
	return 0;
}

/* Handle a user record (type >= 64); *len may grow (AUXTRACE payload). */
static int user_record(struct pd_source *s, uint32_t type, const uint8_t *rec, uint32_t size,
		       uint64_t off, uint64_t *len, struct ks_error *err)
{
	uint64_t extra = user_payload(s, type, rec, size);

	if (type == R_FINISHED_ROUND) {
		s->rounds++;
		pd_flush_queue(s, false);
		return 0;
	}
	if (type == R_ID_INDEX)
		return id_index(s, rec, size, off, err);
	if (extra > s->data_end - off - size)
		return ks_error_at(err, s->base.path, off,
				   "record payload of %llu bytes runs past the data section",
				   (unsigned long long)extra);
	*len += extra;
	s->base.stats.skipped++;
	return 0;
}

HOT int queue_push(struct pd_source *s, uint64_t ts, uint64_t key, struct ks_error *err)
{
	bool empty = queue_idle(s);

	if (ts < s->last_flush)
		s->base.stats.out_of_order++;
	if (s->q_n == s->q_cap && pd_queue_reserve(s, 1, err) < 0)
		return -1;
	s->q[s->q_n++] = (struct pd_entry){ ts, key };
	s->q_sorted = false;
	if ((key >> 16) < s->q_low)
		s->q_low = key >> 16;
	/* perf sets max_timestamp only when the event goes to the queue's tail. */
	if (empty || ts >= s->q_max) {
		s->max_timestamp = ts;
		s->q_max = ts;
	}
	return 0;
}

/* The queue's tail, in locals while a loop queues entries (stores to the
 * entries would make the compiler reload the source's fields). */
struct qtail {
	struct pd_entry *q;
	uint64_t n, cap, q_max, last_flush, max_ts, out_of_order;
	bool empty;
};

static inline struct qtail qtail_load(const struct pd_source *s)
{
	return (struct qtail){ s->q, s->q_n, s->q_cap, s->q_max, s->last_flush,
			       s->max_timestamp, 0, queue_idle(s) };
}

/* queue_push() with room checked by the caller (t->n < t->cap). */
static inline void qtail_push(struct qtail *t, struct pd_entry e)
{
	t->out_of_order += e.ts < t->last_flush;
	t->q[t->n++] = e;
	/* perf sets max_timestamp only when the event goes to the queue's tail */
	if (t->empty || e.ts >= t->q_max) {
		t->max_ts = e.ts;
		t->q_max = e.ts;
	}
	t->empty = false;
}

static inline void qtail_store(const struct qtail *t, struct pd_source *s)
{
	if (t->n != s->q_n) {
		s->q_sorted = false;
		/* queued in file order: the first is the lowest */
		if ((s->q[s->q_n].key >> 16) < s->q_low)
			s->q_low = s->q[s->q_n].key >> 16;
	}
	s->q_n = t->n;
	s->q_max = t->q_max;
	s->max_timestamp = t->max_ts;
	s->base.stats.out_of_order += t->out_of_order;
}

/* The samples with a time that follow s->pos and lie wholly in the window
 * (nearly every record of a recording) queued in one loop.  Stops before
 * the first record that needs more (another type, no time, an unknown id,
 * a full queue, a damaged header): read_records() takes that one. */
HOT void queue_samples(struct pd_source *s, bool swap)
{
	uint64_t off = s->pos, win_end = s->win_off + s->win_len;
	struct qtail t = qtail_load(s);

	while (win_end - off >= 8 && t.n < t.cap) {
		const uint8_t *rec = s->buf + (off - s->win_off);
		uint32_t size = ld16(rec + 6, swap);
		struct pd_entry e;

		if (size > win_end - off || !sample_entry(s, s->idc, rec, size, off, &e, swap))
			break;
		qtail_push(&t, e);
		off += size;
	}
	s->pos = off;
	qtail_store(&t, s);
}

/* Take the frames from s->pos on until one read_records() must read
 * itself, or a FINISHED_ROUND made records ready.  A marker before s->pos
 * is of a record read_records() read; any other frame not at s->pos (which
 * cannot happen) drops the frames, and read_records() frames them. */
HOT int take_frames(struct pd_source *s, struct ks_error *err)
{
	while (s->fi < s->nframes && !queue_ready(s)) {
		const struct pd_entry *f = &s->frames[s->fi];
		uint64_t off = f->key >> 16;

		if (off < s->pos && MARK_KIND(*f) != MARK_RUN && MARK_KIND(*f) != MARK_SEG) {
			s->fi++;
			continue;
		}
		if (off != s->pos) {
			s->fi = s->nframes = 0;
			break;
		}
		if (MARK_KIND(*f) == MARK_RUN) {
			if (pd_queue_run(s, err) < 0)
				return -1;
		} else if (MARK_KIND(*f) == MARK_SEG) {
			if (pd_queue_seg(s, err) < 0)
				return -1;
		} else if (MARK_KIND(*f) == MARK_FLUSH) {
			s->pos = frames_pos(s, ++s->fi);
			s->rounds++;
			pd_flush_queue(s, false);
		} else {
			break;
		}
	}
	return 0;
}

/* Read records until something can be delivered.  Returns 1 with R filled
 * (a record delivered at once), 0 (queue ready or end), <0 on error. */
HOT int read_records(struct pd_source *s, struct ks_record *r, struct ks_error *err, bool swap)
{
	s->seg_limit = 0; /* the last flush is delivered */
	while (!queue_ready(s)) {
		uint64_t off = s->pos, len, ts;
		const uint8_t *rec;
		uint32_t type, size;
		int attr, ret;

		if (s->fi < s->nframes) {
			if (take_frames(s, err) < 0)
				return -1;
			if (queue_ready(s))
				break;
		}
		queue_samples(s, swap);
		off = s->pos;
		if (s->data_end - off < 8) {
			if (s->data_end != off)
				return ks_error_at(err, s->base.path, off,
						   "truncated record header at the end of the data");
			pd_flush_queue(s, true);
			s->finished = true;
			return 0;
		}
		/* a refill may bring frames from here on: take them first */
		if (off + 8 > s->win_off + s->win_len) {
			if (pd_window_fill(s, off, 8, err) < 0)
				return -1;
			continue;
		}
		rec = s->buf + (off - s->win_off);
		type = ld32(rec, swap);
		size = ld16(rec + 6, swap);
		if (size < 8 || size > s->data_end - off)
			return ks_error_at(err, s->base.path, off,
					   "record of type %u has size %u: %s", type, size,
					   size < 8 ? "smaller than its header" :
					   "runs past the data section");
		if (off + size > s->win_off + s->win_len) {
			if (pd_window_fill(s, off, size, err) < 0)
				return -1;
			continue;
		}
		len = size;
		if (type >= R_USER_START) {
			if (user_record(s, type, rec, size, off, &len, err) < 0)
				return -1;
			s->pos += len;
			continue;
		}
		s->pos += len;
		attr = record_attr(s, s->idc, type, rec, size, swap);
		if (attr < 0) {
			s->base.stats.skipped++;
			continue;
		}
		if (record_ts(s, &s->attrs[attr], type, rec, size, off, &ts, err, swap) < 0)
			return -1;
		if (ts && ts != UINT64_MAX) {
			if (queue_push(s, ts, queue_key(s, off, type, attr), err) < 0)
				return -1;
			continue;
		}
		ret = decode_record(s, off, &s->attrs[attr], r, err, swap);
		if (ret)
			return ret;
	}
	return 0;
}

/* A sample of an event not selected: counted, not decoded. */
static inline void filter_sample(struct pd_source *s, const struct pd_attr *a)
{
	s->base.stats.filtered++;
	if (a->type == TYPE_TRACEPOINT && !a->event)
		s->base.stats.unknown_events++;
}

/* A record decoded into a buffer of the source (a COMM name without its
 * NUL, a callchain) ends a batch: the next one would overwrite it. */
static inline bool ends_batch(const struct ks_record *r)
{
	return r->type != KS_REC_EVENT || r->nr_callchain;
}

/* The records are decoded in time order, which jumps between the CPUs'
 * chunks of the file: the first two cache lines of the one PREFETCH_AHEAD
 * places on are asked for early (a record is about 120 bytes; 16 places
 * took 10% off the wall time of `kvmscope stat` on the 2,000,000-pair
 * benchmark file, against the next record only, median of 16 interleaved
 * rounds). */
#define PREFETCH_AHEAD 16

/* HOT, not just inline: a function that only prefetches has no effect the
 * compiler must keep, and GCC 12 dropped its calls when it did not inline
 * it early. */
HOT void prefetch_record(const struct pd_source *s, uint64_t off)
{
	const uint8_t *p = s->buf + (off - s->win_off);

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
}

/* A long round's queued records far behind the read position are decoded
 * from pages given back when they were read (map_fill), which fault in
 * again and would stay until the round is done (a round's first
 * SEG_ROUND chunks are entries, not segments: 16 MB more at rounds of a
 * million records; spilled runs far more).  While segments or spilled
 * runs are merged, or a flush has made more than RETRIM_QUEUE entries
 * ready (a long round queued whole: 69 MB peak RSS -> 37 MB on 3 rounds
 * of 160k records under a 32 MB budget), those pages are given back again
 * every RETRIM_MERGES batches (about 16k records); a pending record there
 * faults its page in once more.  Called before a batch is decoded: the
 * records of the last one may be let go. */
#define RETRIM_MERGES 256
#define RETRIM_QUEUE (64u << 10)

static __attribute__((noinline)) void retrim_pending(struct pd_source *s)
{
	s->merges = 0;
	if (s->trimmed > s->released)
		pd_map_trim(s, s->released, s->trimmed);
}

/* Where the next record of a merged delivery comes from. */
enum { FROM_NONE, FROM_Q, FROM_SEG, FROM_RUN };

/* Whether the entry (TS, OFF) comes before E: by time, then file offset. */
static inline bool entry_before(uint64_t ts, uint64_t off, const struct pd_entry *e)
{
	return ts < e->ts || (ts == e->ts && off < (e->key >> 16));
}

/* The next record of a merged delivery into *E: the queue's first ready
 * entry, the first segment's or the first spilled run's record up to
 * s->seg_limit, whichever comes first by (time, offset). */
HOT int merged_pick(const struct pd_source *s, struct pd_entry *e)
{
	int from = FROM_NONE;

	if (s->q_head < s->q_ready) {
		*e = s->q[s->q_head];
		from = FROM_Q;
	}
	if (s->nseg && s->seg[0].ts <= s->seg_limit &&
	    (from == FROM_NONE || entry_before(s->seg[0].ts, s->seg[0].off, e))) {
		*e = (struct pd_entry){ s->seg[0].ts, s->seg[0].key };
		from = FROM_SEG;
	}
	if (s->nrun && s->run[0]->ts <= s->seg_limit &&
	    (from == FROM_NONE || entry_before(s->run[0]->ts, s->run[0]->key >> 16, e))) {
		*e = (struct pd_entry){ s->run[0]->ts, s->run[0]->key };
		from = FROM_RUN;
	}
	return from;
}

/* A delivery stopped by a segment's record that changed under us or a
 * spilled run that cannot be read back. */
static __attribute__((noinline)) int merged_error(struct pd_source *s, struct ks_error *err)
{
	if (s->seg_bad)
		return ks_error_at(err, s->base.path, s->seg_bad, "record changed while being read");
	return pd_spill_error(s, s->pos, "a run cannot be read back", err);
}

/* Up to MAX records into RECS.  The queue's ready records are decoded in
 * place from the window, which moves only when more of the file is read:
 * that happens only before the first record of a batch.  A record that
 * fails to decode is left queued, so the batch before it is delivered and
 * the next call reports the error. */
/* next_batch() while segments or spilled runs are pending: the queue's
 * ready entries and their records up to s->seg_limit merged by (time,
 * offset).  Returns the records in RECS[0, *NP) on, or <0 on an error. */
HOT int next_merged(struct pd_source *s, struct ks_record *recs, int max, int *np,
		    struct ks_error *err, bool swap)
{
	int n = *np, ret = 0;

	if (s->map && ++s->merges >= RETRIM_MERGES)
		retrim_pending(s);

	while (n < max) {
		const struct pd_attr *a;
		struct pd_entry e = { 0, 0 };
		int from;

		if (s->seg_bad || s->run_bad) {
			ret = merged_error(s, err);
			break;
		}
		from = merged_pick(s, &e);
		if (from == FROM_NONE)
			break;
		if (from == FROM_Q) {
			s->q_head++;
		} else {
			if (!s->flush_any || e.ts > s->last_flush)
				s->last_flush = e.ts;
			s->flush_any = true;
		}
		a = (e.key & KEY_ATTR) ? &s->attrs[(e.key & KEY_ATTR) - 1] : NULL;
		if (e.key & KEY_SKIP) {
			filter_sample(s, a);
			ret = 0;
		} else {
			if (from == FROM_SEG)
				__builtin_prefetch(s->buf + (s->seg[0].off - s->win_off) + FRAME_PREFETCH);
			else if (from == FROM_Q && s->q_head + PREFETCH_AHEAD < s->q_ready)
				prefetch_record(s, s->q[s->q_head + PREFETCH_AHEAD].key >> 16);
			ret = decode_record(s, e.key >> 16, a, &recs[n], err, swap);
			if (ret < 0) {
				if (from == FROM_Q)
					s->q_head--;
				break;
			}
		}
		if (from == FROM_SEG)
			seg_advance(s, swap);
		else if (from == FROM_RUN)
			pd_run_advance(s);
		if (ret && ends_batch(&recs[n++])) {
			ret = 0;
			break;
		}
		ret = 0;
	}
	*np = n;
	return ret < 0 && !n ? ret : 0;
}

HOT int next_batch(struct pd_source *s, struct ks_record *recs, int max, struct ks_error *err,
		   bool swap)
{
	int n = 0, ret;

	if (s->map && s->q_ready - s->q_head > RETRIM_QUEUE && ++s->merges >= RETRIM_MERGES)
		retrim_pending(s);
	for (;;) {
		if (s->nseg | s->nrun) {
			if (next_merged(s, recs, max, &n, err, swap) < 0)
				return -1;
			if (n)
				return n;
		}
		while (!(s->nseg | s->nrun) && s->q_head < s->q_ready && n < max) {
			struct pd_entry e = s->q[s->q_head++];
			uint64_t attr_bits = e.key & KEY_ATTR;
			const struct pd_attr *a = attr_bits ? &s->attrs[attr_bits - 1] : NULL;

			if (e.key & KEY_SKIP) {
				filter_sample(s, a);
				continue;
			}
			if (s->q_head + PREFETCH_AHEAD < s->q_ready)
				prefetch_record(s, s->q[s->q_head + PREFETCH_AHEAD].key >> 16);
			ret = decode_record(s, e.key >> 16, a, &recs[n], err, swap);
			if (ret < 0) {
				if (!n)
					return ret;
				s->q_head--;
				return n;
			}
			if (ret && ends_batch(&recs[n++]))
				return n;
		}
		if (n || s->finished)
			return n;
		ret = read_records(s, recs, err, swap);
		if (ret)
			return ret;
	}
}

int pd_next_batch(struct ks_source *base, struct ks_record *recs, int max,
			 struct ks_error *err)
{
	struct pd_source *s = (struct pd_source *)base;

	return s->swap ? next_batch(s, recs, max, err, true) : next_batch(s, recs, max, err, false);
}
