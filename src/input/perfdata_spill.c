/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_spill.c - the ordering queue's spilled runs.  A round whose
 * records are not sorted in long per-CPU stretches (those become segments,
 * perfdata_frame.c) is queued as {time, key} entries; when the queue would
 * grow past the memory budget, its pending entries are sorted (stably, as
 * the flush sorts them) and written as a run to a temporary file
 * (util/spill.h: $TMPDIR, unlinked at once), and the queue starts empty.
 * A flush delivers the runs' entries up to its time merged with the
 * queue's and the segments' by (time, file offset), which is the order of
 * perf's stable sort of the entries as they were pushed: a run holds every
 * entry pushed before it and none pushed after.  The records stay in the
 * file (the mapping) and are decoded from there; only the entries spill.
 */
#include <stdlib.h>

#include "perfdata_impl.h"

/* Whether run A's next entry comes before B's (offsets are unique). */
static inline bool run_before(const struct pd_run *a, const struct pd_run *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->key < b->key);
}

static void run_down(struct pd_source *s, uint32_t i)
{
	struct pd_run **h = s->run, *x = h[i];
	uint32_t n = s->nrun, c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && run_before(h[c + 1], h[c]))
			c++;
		if (!run_before(h[c], x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void run_up(struct pd_source *s, uint32_t i)
{
	struct pd_run **h = s->run, *x = h[i];

	while (i && run_before(x, h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/* The run's next entry into U->ts, U->key; false at its end (or on a read
 * error: s->spill.err). */
static bool run_next(struct pd_run *u)
{
	const struct pd_entry *e = ks_rlog_cur_next(&u->cur);

	if (!e)
		return false;
	u->ts = e->ts;
	u->key = e->key;
	return true;
}

static void run_free(struct pd_run *u)
{
	ks_rlog_cur_free(&u->cur);
	ks_rlog_free(&u->log);
	free(u);
}

/* The spill file's failure (or WHAT) as the error at OFF, naming the input
 * file: "FILE: offset N: spilling a round past the memory budget: cannot
 * write a temporary file in DIR: REASON". */
int pd_spill_error(struct pd_source *s, uint64_t off, const char *what, struct ks_error *err)
{
	struct ks_error e = { .msg = "" };

	if (!ks_spill_error(&s->spill, &e))
		ks_error_set(&e, "%s", what);
	if (e.code == KS_E_NOMEM)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	return ks_error_at(err, s->base.path, off, "spilling a round past the memory budget: %s",
			   e.msg);
}

/* Room for one more run in the heap, within the budget. */
static int run_heap_reserve(struct pd_source *s, struct ks_error *err)
{
	uint32_t cap = s->run_cap ? 2 * s->run_cap : 16;
	struct pd_run **h;

	if (s->nrun < s->run_cap)
		return 0;
	h = realloc(s->run, cap * sizeof(*h));
	if (!h)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	if (!s->run_cap)
		ks_spill_init(&s->spill, 0); /* every chunk to the file */
	s->run = h;
	s->run_cap = cap;
	return 0;
}

/* The sorted A[0, NA) and B[0, NB) merged by (time, file offset) into the
 * run U's log; false if it cannot be written. */
static bool run_write(struct pd_run *u, const struct pd_entry *a, uint64_t na,
		      const struct pd_entry *b, uint64_t nb)
{
	uint64_t i = 0, j = 0;

	u->low = UINT64_MAX;
	while (i < na || j < nb) {
		struct pd_entry *p = ks_rlog_push(&u->log);
		bool from_a = j == nb || (i < na && (a[i].ts < b[j].ts ||
						    (a[i].ts == b[j].ts && a[i].key < b[j].key)));

		if (!p)
			return false;
		*p = from_a ? a[i++] : b[j++];
		if ((p->key >> 16) < u->low)
			u->low = p->key >> 16;
	}
	return ks_rlog_seal(&u->log) == 0;
}

/* Write the queue's sorted entries A[0, NA) and the skipped samples' B[0,
 * NB) (NA + NB > 0) to the spill file as a run, merged by (time, offset),
 * and add it to the heap of pending runs. */
int pd_spill_run(struct pd_source *s, const struct pd_entry *a, uint64_t na,
		 const struct pd_entry *b, uint64_t nb, struct ks_error *err)
{
	struct pd_run *u;

	if (run_heap_reserve(s, err) < 0)
		return -1;
	u = calloc(1, sizeof(*u));
	if (!u)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	ks_rlog_init(&u->log, &s->spill, sizeof(*a), RUN_CHUNK);
	ks_rlog_cur_init(&u->cur, &u->log);
	if (!run_write(u, a, na, b, nb) || !run_next(u)) {
		run_free(u);
		return pd_spill_error(s, s->pos, "a run reads back empty", err);
	}
	s->run[s->nrun++] = u;
	run_up(s, s->nrun - 1);
	return 0;
}

/* The first run's entry delivered: move it on, drop the run at its end,
 * restore the heap order.  A read error stops the delivery (run_bad). */
void pd_run_advance(struct pd_source *s)
{
	struct pd_run *u = s->run[0];

	if (!run_next(u)) {
		if (s->spill.err)
			s->run_bad = true;
		run_free(u);
		s->run[0] = s->run[--s->nrun];
	}
	if (s->nrun > 1)
		run_down(s, 0);
}

/* The lowest file offset of the runs' records (a bound: the entries
 * already delivered count too). */
uint64_t pd_runs_low(const struct pd_source *s)
{
	uint64_t low = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < s->nrun; i++)
		if (s->run[i]->low < low)
			low = s->run[i]->low;
	return low;
}

void pd_runs_free(struct pd_source *s)
{
	uint32_t i;

	for (i = 0; i < s->nrun; i++)
		run_free(s->run[i]);
	free(s->run);
	if (s->run_cap)
		ks_spill_free(&s->spill);
	s->run = NULL;
	s->nrun = s->run_cap = 0;
}
