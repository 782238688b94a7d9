/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top.c - per-interval exit accounting behind `kvmscope top` (see top.h).
 *
 * Each interval is one struct ks_stat (the stat engine, unchanged) with the
 * views VM, VM+vCPU and VM+reason.  Between intervals, the engine's pending
 * state (which exit each thread is in, which vCPU it runs) must survive, so
 * this file remembers, per host thread, a copy of its last entry event and
 * of the KVM events after it, and feeds them to the next interval's engine
 * first: an exit pending at the boundary is then counted once, where it
 * ends, and the sum of all intervals equals one run over the whole input.
 * Which VM and vCPU a thread's rows belong to is the host model's (the
 * engines' cfg.host), which outlives the intervals.
 *
 * The totals outlive them too: per level, a table of every row seen since
 * the start (its identity as the stat engine keys it, its last name and its
 * exits since the start or the last ks_top_reset()), to which each closed
 * interval adds its counts; a row of the table that has no exits in the
 * interval is listed with a zero count while its total is not zero.
 *
 * Time in exits is split at the boundaries: an exit still open when an
 * interval closes counts there from its start to the boundary (its part
 * is carried, by row identity, to the next interval), and the interval
 * where it ends takes its whole duration minus what was carried.  So a
 * vCPU's time_pct stays within 100, and the intervals' time still adds up
 * to the engine's, plus the exits open at the very end and those another
 * exit replaced (their entry was not traced: the engine does not measure
 * them, but the vCPU was in them, as far as the trace tells, until then).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "kvmscope/engine.h"
#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/top.h"
#include "util/hashmap.h"
#include "vcpu_ctx.h"

/* A row's running total (one per row identity and level). */
struct total_entry {
	struct ks_top_row row;        /* its identity and name, as last listed */
	uint64_t total;               /* exits since the start or the last reset */
	uint64_t seen;                /* the interval (1...) that last had exits in it */
	uint64_t key[4];              /* its identity (total_key) */
};

struct totals {
	struct ks_hmap index;         /* identity (4 words) -> uint32_t index in v */
	struct total_entry *v;
	size_t n, cap;
};

/* The time of a row identity's exits open at a boundary, before it. */
struct span {
	uint64_t ns;
	bool used;                    /* matched to a listed row */
	struct ks_top_row row;        /* its identity and name */
};

struct ks_top {
	struct ks_source *src;
	const struct ks_host *host;   /* the run's attribution (the caller's) */
	struct ks_stat *cur;
	struct ks_vcpu_ctx vctx;      /* each vCPU's events since its entry */
	struct ks_top_row *rows[KS_TOP_LEVELS];
	size_t nrows[KS_TOP_LEVELS];
	struct totals totals[KS_TOP_LEVELS];
	/* identity (4 words) -> struct span: the open exits' time before the
	 * last boundary (carry) and before the one being closed (open) */
	struct ks_hmap carry[KS_TOP_LEVELS], open[KS_TOP_LEVELS];
	struct ks_hmap replaced[KS_TOP_LEVELS]; /* exits replaced in the interval */
	uint64_t end_ns;              /* the boundary being closed */
	uint64_t nintervals;          /* intervals closed */
	uint64_t start_ns, last_ns, first_ts;
	uint64_t interval_ns, records, lost, cur_records, cur_lost;
	char arch_name[32];
	bool engine;                  /* fed by a live engine (ks_top_new_engine) */
	bool failed;
	struct ks_error error;
	/* ks_top_observe(): the caller's observer of slow exits */
	ks_top_observe_fn observe;
	void *observe_ctx;
	uint64_t observe_min_ns;
};

/* The stat engine's observer: the caller's, with the engine that names
 * the occurrence's key and VM (each interval has its own). */
static void observe_trampoline(void *ctx, const struct ks_stat_occurrence *occ)
{
	struct ks_top *t = ctx;

	t->observe(t->observe_ctx, t->cur, occ);
}

static const unsigned top_views[KS_TOP_LEVELS] = {
	KS_DIM_VM, KS_DIM_VM | KS_DIM_VCPU, KS_DIM_VM | KS_DIM_KEY,
	KS_DIM_VM | KS_DIM_VCPU | KS_DIM_KEY,
};

/* "x86 VMX": the exit table is known once kvm_exit events were seen. */
static void set_arch_name(struct ks_top *t)
{
	const char *isa = ks_stat_isa_name(t->cur);

	if (!isa || !strcmp(isa, "unknown"))
		isa = "";
	if (t->arch_name[0] && !isa[0])
		return;
	snprintf(t->arch_name, sizeof(t->arch_name), "%s%s%s", ks_stat_arch_name(t->cur),
		 isa[0] ? " " : "", isa);
}

static void fill_row(struct ks_top *t, enum ks_top_level lv, const struct ks_stat_row *r,
		     struct ks_top_row *o);
static void total_key(const struct ks_stat_row *r, uint64_t key[4]);

/* NS more for the identity of R (a row of level LV) in MAP. */
static int add_span(struct ks_top *t, struct ks_hmap *map, enum ks_top_level lv,
		    const struct ks_stat_row *r, uint64_t ns)
{
	struct span *sp;
	uint64_t key[4];
	bool created;

	total_key(r, key);
	sp = ks_hmap_put_wide(map, key, &created);
	if (!sp)
		return -1;
	if (created) {
		memset(sp, 0, sizeof(*sp));
		fill_row(t, lv, r, &sp->row);
		sp->row.count = sp->row.total_ns = sp->row.p99_ns = 0;
	}
	sp->ns += ns;
	return 0;
}

/* The engine's on_replaced: an exit replaced by the next one counts, for
 * the time in exits, until then. */
static void note_replaced(void *arg, struct ks_stat_row *const *rows, uint64_t begin,
			  uint64_t ts)
{
	struct ks_top *t = arg;
	int lv;

	for (lv = 0; lv < KS_TOP_LEVELS; lv++)
		if (rows[lv] && add_span(t, &t->replaced[lv], (enum ks_top_level)lv, rows[lv],
					 ts > begin ? ts - begin : 0) < 0 && !t->failed) {
			ks_error_code(&t->error, KS_E_NOMEM, "out of memory");
			t->failed = true;
		}
}

static struct ks_stat *new_stat(struct ks_top *t, struct ks_error *err)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	int i;

	cfg.host = t->host;
	if (t->observe) {
		cfg.observe = observe_trampoline;
		cfg.observe_ctx = t;
		cfg.observe_min_ns = t->observe_min_ns;
	}
	cfg.on_replaced = note_replaced;
	cfg.on_occurrence_ctx = t;
	for (i = 0; i < KS_TOP_LEVELS; i++)
		cfg.views[i] = top_views[i];
	if (KS_TOP_LEVELS < KS_STAT_MAX_VIEWS)
		cfg.views[KS_TOP_LEVELS % KS_STAT_MAX_VIEWS] = 0;
	return ks_stat_new_source(&cfg, t->src, err);
}

/* ------------------------------------------------------------------ */
/* per-thread context, kept for the next interval's engine */

static void ctx_note(struct ks_top *t, const struct ks_record *rec)
{
	char hint[96];

	/* the stat engine counts the same threads: the budget only matters
	 * across intervals, when it starts afresh */
	if (ks_vcpu_ctx_note(&t->vctx, rec) == KS_VCTX_BUDGET && !t->failed) {
		ks_error_code_at(&t->error, KS_E_LIMIT, ks_source_path(t->src), rec->offset,
			    "more distinct threads than the budget allows %s",
			    ks_limit_hint(hint, sizeof(hint), "threads", t->vctx.max_threads));
		t->failed = true;
	}
}

/* ------------------------------------------------------------------ */

struct ks_top *ks_top_new(struct ks_source *src, const struct ks_host *host,
			  struct ks_error *err)
{
	struct ks_top *t = calloc(1, sizeof(*t));
	int i;

	if (!t) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	t->src = src;
	t->host = host;
	ks_vcpu_ctx_init(&t->vctx, NULL, ks_source_limits(src)->threads);
	for (i = 0; i < KS_TOP_LEVELS; i++) {
		ks_hmap_init_wide(&t->totals[i].index, 4, sizeof(uint32_t));
		ks_hmap_init_wide(&t->carry[i], 4, sizeof(struct span));
		ks_hmap_init_wide(&t->open[i], 4, sizeof(struct span));
		ks_hmap_init_wide(&t->replaced[i], 4, sizeof(struct span));
	}
	t->cur = new_stat(t, err);
	if (!t->cur) {
		ks_top_free(t);
		return NULL;
	}
	t->vctx.arch = ks_arch_by_name(ks_stat_arch_name(t->cur));
	set_arch_name(t);
	return t;
}

/* ------------------------------------------------------------------ */
/* fed by a live engine (engine.h): each interval's stat engine takes the
 * engine's exits of the interval as aggregates (ks_engine_to_stat), and
 * the rows, totals and time shares are collected as for records; an exit
 * counts in the interval where it ends, all its time there. */

struct ks_top *ks_top_new_engine(const struct ks_host *host, struct ks_error *err)
{
	struct ks_top *t = calloc(1, sizeof(*t));
	int i;

	if (!t) {
		ks_error_set(err, "out of memory");
		return NULL;
	}
	t->host = host;
	t->engine = true;
	ks_vcpu_ctx_init(&t->vctx, NULL, 0);
	for (i = 0; i < KS_TOP_LEVELS; i++) {
		ks_hmap_init_wide(&t->totals[i].index, 4, sizeof(uint32_t));
		ks_hmap_init_wide(&t->carry[i], 4, sizeof(struct span));
		ks_hmap_init_wide(&t->open[i], 4, sizeof(struct span));
		ks_hmap_init_wide(&t->replaced[i], 4, sizeof(struct span));
	}
	return t;
}

static int collect(struct ks_top *t, struct ks_error *err);

int ks_top_engine_interval(struct ks_top *t, const struct ks_engine_snapshot *delta,
			   uint64_t end_ns, uint64_t interval_ns, uint64_t events,
			   struct ks_error *err)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info = { .format = "live" };
	struct ks_stat *st;
	int i;

	cfg.host = t->host;
	cfg.no_begin_counts = true;
	cfg.arch = ks_arch_named_or_default(delta->arch)->name;
	for (i = 0; i < KS_TOP_LEVELS; i++)
		cfg.views[i] = top_views[i];
	if (KS_TOP_LEVELS < KS_STAT_MAX_VIEWS)
		cfg.views[KS_TOP_LEVELS % KS_STAT_MAX_VIEWS] = 0;
	st = ks_stat_new(&cfg, &info, err);
	if (!st)
		return -1;
	ks_engine_to_stat(delta, st);
	if (ks_stat_error(st, err) < 0) {
		ks_stat_free(st);
		return -1;
	}
	/* the last interval's engine names its rows until the next one */
	ks_stat_free(t->cur);
	t->cur = st;
	t->interval_ns = interval_ns;
	t->records = events;
	t->lost = delta->lost;
	t->end_ns = end_ns;
	if (!t->first_ts)
		t->first_ts = end_ns - interval_ns;
	if (collect(t, err) < 0)
		return -1;
	if (delta->isa[0])
		snprintf(t->arch_name, sizeof(t->arch_name), "%s %s", cfg.arch, delta->isa);
	else if (!t->arch_name[0])
		snprintf(t->arch_name, sizeof(t->arch_name), "%s", cfg.arch);
	return 0;
}

void ks_top_add(struct ks_top *t, const struct ks_record *rec)
{
	if (rec->ts) {
		if (!t->first_ts)
			t->first_ts = rec->ts;
		if (!t->start_ns)
			t->start_ns = rec->ts;
		if (rec->ts > t->last_ns)
			t->last_ns = rec->ts;
	}
	t->cur_records++;
	if (rec->type == KS_REC_LOST)
		t->cur_lost += rec->lost ? rec->lost : 1;
	ks_stat_add(t->cur, rec);
	ctx_note(t, rec);
}

/* vCPUs of VM with exits in the interval (the VCPU level is collected first). */
static uint32_t vm_vcpus(const struct ks_top *t, int32_t vm)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < t->nrows[KS_TOP_VCPU]; i++)
		if (t->rows[KS_TOP_VCPU][i].vm == vm &&
		    (t->rows[KS_TOP_VCPU][i].count || t->rows[KS_TOP_VCPU][i].time_ns))
			n++;
	return n ? n : 1;
}

static const char *vm_name_of(const struct ks_top *t, int32_t vm)
{
	return t->host ? ks_host_vm_name(t->host, vm) : ks_stat_vm_name(t->cur, vm);
}

static void fill_row(struct ks_top *t, enum ks_top_level lv, const struct ks_stat_row *r,
		     struct ks_top_row *o)
{
	const char *vmname;

	memset(o, 0, sizeof(*o));
	o->vm = r->vm;
	o->vcpu = lv == KS_TOP_VCPU || lv == KS_TOP_VCPU_REASON ? r->vcpu : -1;
	o->key = r->key;
	o->count = r->count;
	o->total_ns = r->total_ns;
	o->p99_ns = ks_stat_row_quantile(r, 0.99);
	if (lv == KS_TOP_REASON || lv == KS_TOP_VCPU_REASON)
		ks_stat_key_name(t->cur, r, false, o->name, sizeof(o->name));
	else if ((lv == KS_TOP_VM || lv == KS_TOP_VCPU) && (vmname = vm_name_of(t, r->vm)))
		snprintf(o->name, sizeof(o->name), "%s", vmname);
}

/* A stat row's identity, as the engine keys its rows: VM, vCPU (or the
 * thread of an unknown vCPU), the key and its table and flag. */
static void total_key(const struct ks_stat_row *r, uint64_t key[4])
{
	key[0] = (uint64_t)(uint32_t)r->vm << 32 | (uint32_t)r->vcpu;
	key[1] = (uint64_t)(uint32_t)r->thread << 32 | (uint32_t)r->table;
	key[2] = r->key;
	key[3] = (uint32_t)r->info;
}

/* The running total of stat row R, created at 0 when new; NULL when out
 * of memory. */
static struct total_entry *total_of(struct totals *tt, const struct ks_stat_row *r)
{
	uint64_t key[4];
	uint32_t *ix;
	bool created;

	total_key(r, key);
	ix = ks_hmap_get_wide(&tt->index, key);
	if (ix)
		return &tt->v[*ix];
	if (tt->n == tt->cap) {
		size_t ncap = tt->cap ? tt->cap * 2 : 64;
		struct total_entry *nv = realloc(tt->v, ncap * sizeof(*nv));

		if (!nv || ncap > UINT32_MAX)
			return NULL;
		tt->v = nv;
		tt->cap = ncap;
	}
	ix = ks_hmap_put_wide(&tt->index, key, &created);
	if (!ix)
		return NULL;
	*ix = (uint32_t)tt->n;
	memset(&tt->v[tt->n], 0, sizeof(tt->v[0]));
	memcpy(tt->v[tt->n].key, key, sizeof(key));
	return &tt->v[tt->n++];
}

struct open_ctx {
	struct ks_top *t;
	enum ks_top_level lv;
	bool failed;
};

/* ks_stat_open()'s callback: an exit open at the boundary adds its time
 * before it to its row identity's span. */
static void note_open(void *arg, const struct ks_stat_row *r, uint64_t begin_ns)
{
	struct open_ctx *c = arg;

	if (add_span(c->t, &c->t->open[c->lv], c->lv, r,
		     begin_ns < c->t->end_ns ? c->t->end_ns - begin_ns : 0) < 0)
		c->failed = true;
}

/* The span of identity KEY in MAP (marked used), 0 when none. */
static uint64_t span_take(struct ks_hmap *map, const uint64_t key[4])
{
	struct span *sp = ks_hmap_get_wide(map, key);

	if (!sp)
		return 0;
	sp->used = true;
	return sp->ns;
}

/* The time inside the interval of the exits of identity KEY that ended in
 * it (DONE ns in all): minus their part before it, plus the part of those
 * still open at its end. */
static uint64_t time_inside(struct ks_top *t, enum ks_top_level lv, const uint64_t key[4],
			    uint64_t done)
{
	uint64_t before = span_take(&t->carry[lv], key), after = span_take(&t->open[lv], key);

	done += span_take(&t->replaced[lv], key);
	return done + after > before ? done + after - before : 0;
}

static void set_time(struct ks_top *t, struct ks_top_row *o)
{
	o->time_pct = t->interval_ns ? 100.0 * (double)o->time_ns /
				       ((double)t->interval_ns * o->nr_vcpus) : 0;
}

/* A row's vCPUs: one at the vCPU levels, else its VM's. */
static uint32_t row_vcpus(const struct ks_top *t, enum ks_top_level lv, int32_t vm)
{
	return lv == KS_TOP_VCPU || lv == KS_TOP_VCPU_REASON ? 1 : vm_vcpus(t, vm);
}

/* The exits of level LV open at the boundary being closed, into
 * t->open[LV] (their time before it). */
static int note_open_spans(struct ks_top *t, enum ks_top_level lv, struct ks_error *err)
{
	struct open_ctx oc = { .t = t, .lv = lv };

	ks_hmap_free(&t->open[lv]);
	ks_hmap_init_wide(&t->open[lv], 4, sizeof(struct span));
	ks_stat_open(t->cur, (int)lv, note_open, &oc);
	return oc.failed ? ks_error_code(err, KS_E_NOMEM, "out of memory") : 0;
}

/* The interval's N ROWS added to their totals (and marked seen). */
static int add_totals(struct ks_top *t, struct totals *tt, struct ks_stat_row **rows, size_t n,
		      struct ks_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct total_entry *e = total_of(tt, rows[i]);

		if (!e)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		e->total += rows[i]->count;
		e->seen = t->nintervals;
	}
	return 0;
}

/* At most how many rows level LV lists besides the interval's N: the
 * totals without exits in it, and the spans not listed otherwise. */
static size_t rows_bound(struct ks_top *t, enum ks_top_level lv, size_t n)
{
	const struct totals *tt = &t->totals[lv];
	const uint64_t *id;
	size_t m = n, j, pos = 0;

	for (j = 0; j < tt->n; j++)
		if (tt->v[j].seen != t->nintervals && tt->v[j].total)
			m++;
	while (ks_hmap_next_wide(&t->open[lv], &pos, &id))
		m++;
	pos = 0;
	while (ks_hmap_next_wide(&t->replaced[lv], &pos, &id))
		m++;
	return m;
}

/* The interval's N ROWS of level LV as listed rows, with their totals. */
static void list_interval_rows(struct ks_top *t, enum ks_top_level lv,
			       struct ks_stat_row **rows, size_t n)
{
	double secs = (double)t->interval_ns / 1e9;
	uint64_t key[4];
	size_t i;

	for (i = 0; i < n; i++) {
		struct ks_top_row *o = &t->rows[lv][i];
		struct total_entry *e = total_of(&t->totals[lv], rows[i]);

		fill_row(t, lv, rows[i], o);
		o->nr_vcpus = row_vcpus(t, lv, o->vm);
		o->rate = secs > 0 ? (double)o->count / secs : 0;
		total_key(rows[i], key);
		o->time_ns = time_inside(t, lv, key, o->total_ns);
		set_time(t, o);
		o->total = e->total;
		e->row = *o;
	}
}

/* The rows of level LV without exits in the interval whose total is not
 * zero, listed from row I on; the next free row. */
static size_t list_idle_totals(struct ks_top *t, enum ks_top_level lv, size_t i)
{
	const struct totals *tt = &t->totals[lv];
	size_t j;

	for (j = 0; j < tt->n; j++) {
		const struct total_entry *e = &tt->v[j];
		struct ks_top_row *o;
		const char *vmname;

		if (e->seen == t->nintervals || !e->total)
			continue;
		o = &t->rows[lv][i++];
		memset(o, 0, sizeof(*o));
		o->vm = e->row.vm;
		o->vcpu = e->row.vcpu;
		o->key = e->row.key;
		snprintf(o->name, sizeof(o->name), "%s", e->row.name);
		if ((lv == KS_TOP_VM || lv == KS_TOP_VCPU) && (vmname = vm_name_of(t, o->vm)))
			snprintf(o->name, sizeof(o->name), "%s", vmname);
		o->nr_vcpus = row_vcpus(t, lv, o->vm);
		o->total = e->total;
		o->time_ns = time_inside(t, lv, e->key, 0);
		set_time(t, o);
	}
	return i;
}

/* An exit open across the whole interval or replaced in it, of a row
 * without any exit measured yet, listed from row I on; the next free
 * row. */
static size_t list_span_rows(struct ks_top *t, enum ks_top_level lv, size_t i)
{
	const uint64_t *id;
	struct span *sp;
	size_t pos;
	int k;

	for (k = 0; k < 2; k++) {
		struct ks_hmap *map = k ? &t->replaced[lv] : &t->open[lv];

		pos = 0;
		while ((sp = ks_hmap_next_wide(map, &pos, &id))) {
			struct ks_top_row *o;

			if (sp->used)
				continue;
			o = &t->rows[lv][i++];
			*o = sp->row;
			o->nr_vcpus = row_vcpus(t, lv, o->vm);
			o->time_ns = time_inside(t, lv, id, 0);
			set_time(t, o);
		}
	}
	return i;
}

/* The rows of level LV: the interval's (added to their totals), then the
 * rows without exits in it whose total is not zero, then those whose only
 * exit spans the interval. */
static int collect_level(struct ks_top *t, enum ks_top_level lv, struct ks_error *err)
{
	struct ks_stat_row **rows;
	size_t n = ks_stat_rows(t->cur, (int)lv, &rows), i;
	struct ks_hmap swap;

	if (note_open_spans(t, lv, err) < 0 || add_totals(t, &t->totals[lv], rows, n, err) < 0)
		return -1;
	free(t->rows[lv]);
	t->nrows[lv] = 0;
	t->rows[lv] = calloc(rows_bound(t, lv, n) + 1, sizeof(struct ks_top_row));
	if (!t->rows[lv])
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	list_interval_rows(t, lv, rows, n);
	i = list_idle_totals(t, lv, n);
	t->nrows[lv] = list_span_rows(t, lv, i);
	ks_hmap_free(&t->replaced[lv]);
	ks_hmap_init_wide(&t->replaced[lv], 4, sizeof(struct span));
	/* what is open now is carried into the next interval */
	swap = t->carry[lv];
	t->carry[lv] = t->open[lv];
	t->open[lv] = swap;
	return 0;
}

static int collect(struct ks_top *t, struct ks_error *err)
{
	/* vCPUs first: the other levels' time share divides by their number */
	static const enum ks_top_level order[KS_TOP_LEVELS] = { KS_TOP_VCPU, KS_TOP_VM, KS_TOP_REASON,
								KS_TOP_VCPU_REASON };
	int k;

	t->nintervals++;
	for (k = 0; k < KS_TOP_LEVELS; k++)
		if (collect_level(t, order[k], err) < 0)
			return -1;
	return 0;
}

int ks_top_interval(struct ks_top *t, uint64_t end_ns, struct ks_error *err)
{
	struct ks_stat *next;

	if (t->failed)
		return ks_error_set(err, "%s", t->error.msg);
	if (ks_stat_error(t->cur, err) < 0)
		return -1;
	t->interval_ns = end_ns > t->start_ns && t->start_ns ? end_ns - t->start_ns : 0;
	t->end_ns = end_ns ? end_ns : t->last_ns;
	t->records = t->cur_records;
	t->lost = t->cur_lost;
	t->cur_records = t->cur_lost = 0;
	if (collect(t, err) < 0)
		return -1;
	set_arch_name(t);
	next = new_stat(t, err);
	if (!next)
		return -1;
	ks_stat_free(t->cur);
	t->cur = next;
	ks_vcpu_ctx_replay(&t->vctx, t->cur);
	if (end_ns)
		t->start_ns = end_ns;
	return 0;
}

size_t ks_top_rows(const struct ks_top *t, enum ks_top_level level,
		   const struct ks_top_row **rows)
{
	if ((int)level < 0 || level >= KS_TOP_LEVELS) {
		*rows = NULL;
		return 0;
	}
	*rows = t->rows[level];
	return t->nrows[level];
}

void ks_top_reset(struct ks_top *t)
{
	int lv;

	for (lv = 0; lv < KS_TOP_LEVELS; lv++) {
		struct totals *tt = &t->totals[lv];
		size_t i, j;

		for (j = 0; j < tt->n; j++)
			tt->v[j].total = 0;
		/* a row listed for its total alone goes */
		for (i = j = 0; i < t->nrows[lv]; i++) {
			struct ks_top_row *r = &t->rows[lv][i];

			if (!r->count)
				continue;
			r->total = 0;
			t->rows[lv][j++] = *r;
		}
		t->nrows[lv] = j;
	}
}

uint64_t ks_top_interval_ns(const struct ks_top *t) { return t->interval_ns; }
uint64_t ks_top_interval_records(const struct ks_top *t) { return t->records; }
uint64_t ks_top_interval_lost(const struct ks_top *t) { return t->lost; }
uint64_t ks_top_first_ts(const struct ks_top *t) { return t->first_ts; }
const char *ks_top_arch(const struct ks_top *t) { return t->arch_name; }

/* qsort_r's comparison; ARG is the column ("exits", "name", "time", "p99"). */
static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct ks_top_row *x = a, *y = b;
	const char *sort_column = arg;

	if (!strcmp(sort_column, "name")) {
		int c = strcmp(x->name, y->name);
		if (c)
			return c;
	} else if (!strcmp(sort_column, "time")) {
		if (x->total_ns != y->total_ns)
			return x->total_ns > y->total_ns ? -1 : 1;
	} else if (!strcmp(sort_column, "p99")) {
		if (x->p99_ns != y->p99_ns)
			return x->p99_ns > y->p99_ns ? -1 : 1;
	}
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->total != y->total) /* kvm_stat's order: the current, then the total */
		return x->total > y->total ? -1 : 1;
	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

void ks_top_sort(struct ks_top_row *rows, size_t n, const char *column)
{
	qsort_r(rows, n, sizeof(*rows), row_cmp, (void *)(column ? column : "exits"));
}

int ks_top_observe(struct ks_top *t, ks_top_observe_fn fn, void *ctx, uint64_t min_ns,
		   struct ks_error *err)
{
	struct ks_stat *st;

	t->observe = fn;
	t->observe_ctx = ctx;
	t->observe_min_ns = min_ns;
	/* no record was added yet: the first engine starts again with it */
	st = new_stat(t, err);
	if (!st)
		return -1;
	ks_stat_free(t->cur);
	t->cur = st;
	return 0;
}

void ks_top_free(struct ks_top *t)
{
	int i;

	if (!t)
		return;
	ks_stat_free(t->cur);
	for (i = 0; i < KS_TOP_LEVELS; i++) {
		free(t->rows[i]);
		free(t->totals[i].v);
		ks_hmap_free(&t->totals[i].index);
		ks_hmap_free(&t->carry[i]);
		ks_hmap_free(&t->open[i]);
		ks_hmap_free(&t->replaced[i]);
	}
	ks_vcpu_ctx_free(&t->vctx);
	free(t);
}
