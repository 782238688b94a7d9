/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * timeline_html.c - a ks_timeline as one self-contained HTML page: the data
 * as JSON (written with json.h) in a <script type="application/json"> and
 * kvmscope's own small canvas viewer in inline JavaScript.  No network, no
 * external files: open it with any browser.
 *
 * Rows, grouped: per VM (in natural name order) its vCPUs in numeric order,
 * each a state row followed by its guest-task row when a guest trace of
 * that VM was given (guest events as ticks on it); then one row per host
 * CPU (which vCPU ran there in guest mode, one hue per VM).
 *
 * Level of detail, as Perfetto and Trace Compass do it: what a pixel shows
 * is computed from the time spent there, never from the last interval
 * drawn.  For each row the page carries levels of fixed-width bins (about
 * 2048 bins over the whole span, then 4x finer each level); a bin holds the kind
 * (state, task, vCPU) that covered most of its time, "nothing" included, and
 * runs of equal bins are stored as (kind, count).  The viewer draws a row
 * from the coarsest level whose bins are no wider than a pixel, sums the
 * time of each kind inside each pixel and paints the dominant one; when
 * zoomed in below the finest level it uses the raw intervals, summed the
 * same way.  Raw intervals are kept while they fit a budget (RAW_BUDGET in
 * all), so the page is bounded by what can be seen, not by the input.
 * The rows' items are kept in record logs of the timeline's memory budget
 * (util/spill.h: past it they are in a temporary file) and read once per
 * level, so the memory is bounded too.
 *
 * Wheel zooms, dragging pans, hovering shows what is under the pointer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/json.h"
#include "kvmscope/timeline.h"
#include "util/spill.h"

#define BINS0 2048u            /* bins of the coarsest level */
#define RAW_BUDGET 1000000u    /* raw intervals kept in the page, all rows */
#define RUN_BUDGET 3000000u    /* (kind, count) runs of the levels, all rows */
#define MAX_LEVELS 12
#define MAX_ACC 16             /* distinct kinds tracked inside one bin */

enum row_type { ROW_STATE, ROW_TASKS, ROW_CPU };

struct item {
	uint64_t start, end;
	uint32_t kind;             /* 1 + state, task name or vCPU; 0 = nothing */
	uint32_t label;            /* exit reason of a state, else = kind - 1 */
};

struct row {
	char name[200];
	enum row_type type;
	uint32_t id;               /* vCPU index or host CPU */
	struct ks_rlog log;        /* the items, as they came */
	uint64_t n, last_start;
	bool unsorted;             /* ... not in time order: RUNS hold them sorted */
	struct ks_rlog *runs;      /* sorted runs of the items (row_sort) */
	size_t nruns;
	bool raw;                  /* raw intervals written */
};

/* A row's items in time order, each cut at the start of the next (none
 * overlap, so a row's time adds up): the log as it came, or a merge of the
 * sorted runs (a heap of their cursors by their heads' start, ties to the
 * earlier run: a stable sort). */
struct row_rd {
	const struct row *r;
	struct ks_rlog_cur *c;     /* one per run (or the log) */
	const struct item **head;
	uint32_t *heap;
	size_t nheap;
	struct item next;
	bool has, oom;
};

static bool rd_less(const struct row_rd *rd, uint32_t a, uint32_t b)
{
	if (rd->head[a]->start != rd->head[b]->start)
		return rd->head[a]->start < rd->head[b]->start;
	return a < b;
}

static void rd_sift(struct row_rd *rd, size_t i)
{
	size_t c;

	for (; (c = 2 * i + 1) < rd->nheap; i = c) {
		uint32_t t;

		if (c + 1 < rd->nheap && rd_less(rd, rd->heap[c + 1], rd->heap[c]))
			c++;
		if (!rd_less(rd, rd->heap[c], rd->heap[i]))
			break;
		t = rd->heap[c];
		rd->heap[c] = rd->heap[i];
		rd->heap[i] = t;
	}
}

static void rd_fetch(struct row_rd *rd)
{
	uint32_t k;

	rd->has = rd->nheap > 0;
	if (!rd->has)
		return;
	k = rd->heap[0];
	rd->next = *rd->head[k];
	rd->head[k] = ks_rlog_cur_next(&rd->c[k]);
	if (!rd->head[k])
		rd->heap[0] = rd->heap[--rd->nheap];
	rd_sift(rd, 0);
}

static void rd_init(struct row_rd *rd, const struct row *r)
{
	size_t n = r->runs ? r->nruns : 1, i;

	memset(rd, 0, sizeof(*rd));
	rd->r = r;
	rd->c = calloc(n, sizeof(*rd->c));
	rd->head = calloc(n, sizeof(*rd->head));
	rd->heap = calloc(n, sizeof(*rd->heap));
	if (!rd->c || !rd->head || !rd->heap) {
		rd->oom = true;
		return;
	}
	for (i = 0; i < n; i++) {
		ks_rlog_cur_init(&rd->c[i], r->runs ? &r->runs[i] : &r->log);
		rd->head[i] = ks_rlog_cur_next(&rd->c[i]);
		if (rd->head[i])
			rd->heap[rd->nheap++] = (uint32_t)i;
	}
	for (i = rd->nheap / 2 + 1; i-- > 0;)
		rd_sift(rd, i);
	rd_fetch(rd);
}

static bool rd_next(struct row_rd *rd, struct item *out)
{
	if (!rd->has)
		return false;
	*out = rd->next;
	rd_fetch(rd);
	if (rd->has && rd->next.start < out->end)
		out->end = rd->next.start;
	return true;
}

static void rd_free(struct row_rd *rd)
{
	size_t i, n = rd->r->runs ? rd->r->nruns : 1;

	for (i = 0; rd->c && i < n; i++)
		ks_rlog_cur_free(&rd->c[i]);
	free(rd->c);
	free(rd->head);
	free(rd->heap);
}

/* Runs of one level, written as they are made: only the last run can still
 * grow, so it is held back until a run of another kind follows. */
struct runs {
	struct ks_json *j;
	uint32_t kind, count;      /* the last run (count 0: none yet) */
	uint64_t n;                /* runs made */
};

static void run_put(struct runs *r)
{
	if (r->count) {
		ks_json_u64(r->j, r->kind);
		ks_json_u64(r->j, r->count);
	}
}

static void run_add(struct runs *r, uint32_t kind, uint64_t count)
{
	if (!count)
		return;
	if (r->count && r->kind == kind && r->count + count < UINT32_MAX) {
		r->count += (uint32_t)count;
		return;
	}
	while (count) {
		uint32_t c = count > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)count;

		run_put(r);
		r->kind = kind;
		r->count = c;
		r->n++;
		count -= c;
	}
}

/* The time of each kind inside the bin being filled. */
struct acc {
	uint32_t kind[MAX_ACC];
	uint64_t ns[MAX_ACC];
	int n;
	uint64_t sum;
};

static void acc_add(struct acc *a, uint32_t kind, uint64_t ns)
{
	int i, least = 0;

	a->sum += ns;
	for (i = 0; i < a->n; i++)
		if (a->kind[i] == kind) {
			a->ns[i] += ns;
			return;
		}
	if (a->n < MAX_ACC) {
		a->kind[a->n] = kind;
		a->ns[a->n++] = ns;
		return;
	}
	for (i = 1; i < MAX_ACC; i++) /* full: the smallest share gives way */
		if (a->ns[i] < a->ns[least])
			least = i;
	if (ns > a->ns[least]) {
		a->kind[least] = kind;
		a->ns[least] = ns;
	}
}

/* The kind covering most of a bin of WIDTH ns; the uncovered time counts
 * as kind 0 (nothing). */
static uint32_t acc_dominant(const struct acc *a, uint64_t width)
{
	uint64_t best = a->sum < width ? width - a->sum : 0;
	uint32_t kind = 0;
	int i;

	for (i = 0; i < a->n; i++)
		if (a->ns[i] > best) {
			best = a->ns[i];
			kind = a->kind[i];
		}
	return kind;
}

/* One level of bins of WIDTH ns (the last one may be shorter) over the
 * row's items (sorted, not overlapping), times relative to t0. */
static void build_level(const struct row *row, uint64_t t0, uint64_t span, uint64_t width,
			struct runs *out)
{
	uint64_t nbins = (span + width - 1) / width;
	uint64_t cur = 0, cur_end = width; /* bin being filled, its end */
	struct acc a = { .n = 0 };
	struct row_rd rd;
	struct item it;

	rd_init(&rd, row);
	while (rd_next(&rd, &it)) {
		uint64_t s = it.start - t0, e = it.end - t0;
		uint32_t kind = it.kind;

		if (e > span)
			e = span;
		while (s < e) {
			uint64_t b = s < cur_end ? cur : s / width, seg;

			if (b != cur) { /* close the bin being filled, gaps up to b */
				run_add(out, acc_dominant(&a, width), 1);
				run_add(out, 0, b - cur - 1);
				a.n = 0;
				a.sum = 0;
				cur = b;
				cur_end = (b + 1) * width;
			}
			if (a.sum == 0 && s == b * width && e >= cur_end) {
				/* whole bins: the item alone */
				uint64_t last = e / width;

				run_add(out, kind, last - b);
				cur = last;
				cur_end = (last + 1) * width;
				s = last * width;
				if (s >= e)
					break;
			}
			seg = (e < cur_end ? e : cur_end) - s;
			acc_add(&a, kind, seg);
			s += seg;
		}
	}
	rd_free(&rd);
	if (cur < nbins) {
		uint64_t w = (cur_end < span ? cur_end : span) - cur * width;

		run_add(out, acc_dominant(&a, w), 1);
		run_add(out, 0, nbins - cur - 1);
	}
}

/* ------------------------------------------------------------------ */
/* rows */

static bool row_push(struct row *r, uint64_t start, uint64_t end, uint32_t kind, uint32_t label)
{
	struct item *it = ks_rlog_push(&r->log);

	if (!it)
		return false;
	*it = (struct item){ start, end, kind, label };
	if (r->n && start < r->last_start)
		r->unsorted = true;
	r->last_start = start;
	r->n++;
	return true;
}

/* An item and its place in the row, for a stable sort. */
struct sitem {
	struct item it;
	uint64_t idx;
};

static int sitem_cmp(const void *a, const void *b)
{
	const struct sitem *x = a, *y = b;

	if (x->it.start != y->it.start)
		return x->it.start < y->it.start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Items arrive in time order per row (the state machine emits them so);
 * a row that did not (CPU slices of vCPUs overlapping on one CPU, as in
 * generated or crafted traces) is sorted outside memory: runs of at most
 * a quarter of the budget sorted (stably) in memory and written to logs
 * of the pool, merged by the reader.  Overlaps are cut by the reader. */
static int row_sort(struct row *r, struct ks_spill *sp)
{
	uint64_t max = sp->budget / 4 / sizeof(struct sitem), i = 0, n = 0;
	struct ks_rlog_cur c;
	const struct item *it;
	struct sitem *buf;
	int rc = 0;

	if (!r->unsorted)
		return 0;
	if (max < 4096)
		max = 4096;
	if (max > r->n)
		max = r->n;
	buf = malloc(max * sizeof(*buf));
	if (!buf)
		return -1;
	ks_rlog_cur_init(&c, &r->log);
	do {
		struct ks_rlog *runs, *run;
		uint64_t k;

		it = ks_rlog_cur_next(&c);
		if (it) {
			buf[n++] = (struct sitem){ *it, i++ };
			if (n < max)
				continue;
		}
		if (!n)
			break;
		qsort(buf, n, sizeof(*buf), sitem_cmp);
		runs = realloc(r->runs, (r->nruns + 1) * sizeof(*runs));
		if (!runs) {
			rc = -1;
			break;
		}
		r->runs = runs;
		run = &r->runs[r->nruns++];
		ks_rlog_init(run, sp, sizeof(struct item), 64u << 10);
		for (k = 0; k < n; k++) {
			struct item *o = ks_rlog_push(run);

			if (!o) {
				rc = -1;
				break;
			}
			*o = buf[k].it;
		}
		if (rc < 0 || ks_rlog_seal(run) < 0) {
			rc = -1;
			break;
		}
		n = 0;
	} while (it);
	ks_rlog_cur_free(&c);
	free(buf);
	if (rc == 0 && i < r->n)
		rc = -1;
	/* the runs hold the items now */
	ks_rlog_free(&r->log);
	ks_rlog_init(&r->log, sp, sizeof(struct item), 64u << 10);
	return rc;
}

/* VM names in natural order ("VM 9" before "VM 10"), then vCPU numbers. */
static int vcpu_cmp(const void *a, const void *b, void *ctx)
{
	const struct ks_timeline *sort_tl = ctx;
	const struct ks_tl_vcpu *x = &sort_tl->vcpus[*(const uint32_t *)a];
	const struct ks_tl_vcpu *y = &sort_tl->vcpus[*(const uint32_t *)b];
	int c = x->vm == y->vm ? 0 : strverscmp(sort_tl->vms[x->vm].name, sort_tl->vms[y->vm].name);

	if (c)
		return c;
	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->vcpu_id != y->vcpu_id)
		return x->vcpu_id < y->vcpu_id ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

struct layout {
	struct row *rows;
	uint32_t nr;
	uint32_t *state_row;   /* vCPU index -> its state row */
	int64_t *task_row;     /* vCPU index -> its task row, or -1 */
	int32_t max_cpu;
};

static void layout_free(struct layout *l)
{
	uint32_t i;

	for (i = 0; l->rows && i < l->nr; i++) {
		for (size_t k = 0; k < l->rows[i].nruns; k++)
			ks_rlog_free(&l->rows[i].runs[k]);
		free(l->rows[i].runs);
		ks_rlog_free(&l->rows[i].log);
	}
	free(l->rows);
	free(l->state_row);
	free(l->task_row);
}

static int layout_build(const struct ks_timeline *tl, struct layout *l)
{
	uint32_t *order = malloc((tl->nr_vcpus + 1) * sizeof(*order));
	uint32_t i, nrows = 0;
	struct ks_tl_cursor *cur;
	const struct ks_tl_interval *v;
	const struct ks_tl_guest_item *g;
	const struct ks_tl_cpu_slice *s;
	size_t maxrows;
	int32_t c;
	bool ok = true;

	memset(l, 0, sizeof(*l));
	l->max_cpu = -1;
	cur = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
	while ((s = ks_tl_cursor_next(cur)))
		if (s->cpu > l->max_cpu && s->cpu < 4096)
			l->max_cpu = s->cpu;
	ks_tl_cursor_free(cur);
	maxrows = 2 * (size_t)tl->nr_vcpus + (size_t)(l->max_cpu + 1) + 1;
	l->rows = calloc(maxrows, sizeof(*l->rows));
	l->state_row = calloc(tl->nr_vcpus + 1, sizeof(*l->state_row));
	l->task_row = calloc(tl->nr_vcpus + 1, sizeof(*l->task_row));
	if (!order || !l->rows || !l->state_row || !l->task_row) {
		free(order);
		return -1;
	}
	for (i = 0; i < maxrows; i++)
		ks_rlog_init(&l->rows[i].log, tl->spill, sizeof(struct item), 64u << 10);
	for (i = 0; i < tl->nr_vcpus; i++)
		order[i] = i;
	qsort_r(order, tl->nr_vcpus, sizeof(*order), vcpu_cmp, (void *)tl);
	for (i = 0; i < tl->nr_vcpus; i++) {
		const struct ks_tl_vcpu *v = &tl->vcpus[order[i]];
		struct row *r = &l->rows[nrows];

		snprintf(r->name, sizeof(r->name), "%s vCPU %u", tl->vms[v->vm].name, v->vcpu_id);
		r->type = ROW_STATE;
		r->id = order[i];
		l->state_row[order[i]] = nrows++;
		l->task_row[order[i]] = -1;
		if (tl->vms[v->vm].guest_input >= 0) {
			r = &l->rows[nrows];
			snprintf(r->name, sizeof(r->name), "  guest tasks (vCPU %u)", v->vcpu_id);
			r->type = ROW_TASKS;
			r->id = order[i];
			l->task_row[order[i]] = nrows++;
		}
	}
	for (c = 0; c <= l->max_cpu; c++) {
		struct row *r = &l->rows[nrows++];

		snprintf(r->name, sizeof(r->name), "host CPU %d", c);
		r->type = ROW_CPU;
		r->id = (uint32_t)c;
	}
	l->nr = nrows;
	free(order);
	cur = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	while (ok && (v = ks_tl_cursor_next(cur)))
		ok = row_push(&l->rows[l->state_row[v->vcpu]], v->start, v->end, 1u + v->state,
			      v->reason);
	ks_tl_cursor_free(cur);
	cur = ks_tl_cursor_new(tl, KS_TL_GUEST_TASKS);
	while (ok && (g = ks_tl_cursor_next(cur)))
		ok = l->task_row[g->vcpu] < 0 ||
		     row_push(&l->rows[l->task_row[g->vcpu]], g->start, g->end, 1u + g->name, g->name);
	ks_tl_cursor_free(cur);
	cur = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
	while (ok && (s = ks_tl_cursor_next(cur)))
		ok = s->cpu < 0 || s->cpu > l->max_cpu ||
		     row_push(&l->rows[nrows - (uint32_t)(l->max_cpu + 1) + (uint32_t)s->cpu],
			      s->start, s->end, 1u + s->vcpu, s->vcpu);
	ks_tl_cursor_free(cur);
	for (i = 0; ok && i < l->nr; i++) {
		ks_rlog_seal(&l->rows[i].log);
		ok = row_sort(&l->rows[i], tl->spill) == 0;
	}
	return ok && ks_spill_error(tl->spill, NULL) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* the data */

/* Strings go inside a <script> element: keep '<' and '>' out of them. */
static void safe_string(struct ks_json *j, const char *s)
{
	char buf[256];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (s[i] == '<' || s[i] == '>' || s[i] == '&') ? '?' : s[i];
	buf[i] = 0;
	ks_json_string(j, buf);
}

static void string_array(struct ks_json *j, const char *key, char *const *arr, uint32_t n)
{
	uint32_t i;

	ks_json_key(j, key);
	ks_json_begin_array(j);
	for (i = 0; i < n; i++)
		safe_string(j, arr[i]);
	ks_json_end_array(j);
}

/* Levels of one row, coarsest first, within its share of the run budget. */
static int write_levels(struct ks_json *j, const struct ks_timeline *tl, const struct row *r,
			uint64_t span, uint64_t run_share)
{
	uint64_t nbins = BINS0, total = 0, width;
	int lv;

	ks_json_key(j, "levels");
	ks_json_begin_array(j);
	for (lv = 0; lv < MAX_LEVELS && nbins <= span; lv++, nbins *= 4) {
		struct runs runs = { .j = j };

		width = (span + nbins - 1) / nbins;
		ks_json_begin_object(j);
		ks_json_kv_u64(j, "width", width);
		ks_json_key(j, "runs");
		ks_json_begin_array(j);
		build_level(r, tl->first_ts, span, width, &runs);
		run_put(&runs);
		ks_json_end_array(j);
		ks_json_end_object(j);
		total += runs.n;
		/* finer levels add nothing the raw intervals do not show, or
		 * cost more than this row's share */
		if ((r->raw && nbins >= 2 * r->n) || total >= run_share)
			break;
	}
	ks_json_end_array(j);
	return 0;
}

static void write_raw(struct ks_json *j, const struct ks_timeline *tl, const struct row *r)
{
	uint64_t prev = tl->first_ts;
	struct row_rd rd;
	struct item it;

	ks_json_key(j, "raw");
	if (!r->raw) {
		ks_json_null(j);
		return;
	}
	/* start - previous start, duration, kind, label */
	ks_json_begin_array(j);
	rd_init(&rd, r);
	while (rd_next(&rd, &it)) {
		ks_json_u64(j, it.start - prev);
		ks_json_u64(j, it.end - it.start);
		ks_json_u64(j, it.kind);
		ks_json_u64(j, it.label);
		prev = it.start;
	}
	rd_free(&rd);
	ks_json_end_array(j);
}

static int write_data(const struct ks_timeline *tl, const struct layout *l, FILE *out)
{
	struct ks_json j;
	char *state_names[KS_VS_COUNT];
	uint64_t span = tl->have_ts ? tl->last_ts - tl->first_ts : 0, total = 0, share;
	uint32_t i, vm;
	int s;

	/* raw intervals of all rows while they fit, else of the small rows */
	for (i = 0; i < l->nr; i++)
		total += l->rows[i].n;
	share = l->nr ? RAW_BUDGET / l->nr : 0;
	for (i = 0; i < l->nr; i++)
		l->rows[i].raw = total <= RAW_BUDGET || l->rows[i].n <= share;
	for (s = 0; s < KS_VS_COUNT; s++)
		state_names[s] = (char *)ks_vstate_name((enum ks_vstate)s);
	ks_json_init(&j, out, false);
	ks_json_begin_object(&j);
	ks_json_kv_u64(&j, "t0", tl->first_ts);
	ks_json_kv_u64(&j, "span", span);
	ks_json_kv_u64(&j, "intervals", tl->nr_iv);
	string_array(&j, "states", state_names, KS_VS_COUNT);
	string_array(&j, "reasons", tl->reasons, tl->nr_reasons);
	string_array(&j, "names", tl->names, tl->nr_names);
	ks_json_key(&j, "vms");
	ks_json_begin_array(&j);
	for (vm = 0; vm < tl->nr_vms; vm++)
		safe_string(&j, tl->vms[vm].name);
	ks_json_end_array(&j);
	ks_json_key(&j, "vcpus"); /* [vm, vcpu number] per vCPU index */
	ks_json_begin_array(&j);
	for (i = 0; i < tl->nr_vcpus; i++) {
		ks_json_u64(&j, tl->vcpus[i].vm);
		ks_json_u64(&j, tl->vcpus[i].vcpu_id);
	}
	ks_json_end_array(&j);
	ks_json_kv_u64(&j, "host_switch", tl->host_switches);
	ks_json_key(&j, "rows");
	ks_json_begin_array(&j);
	for (i = 0; i < l->nr && span; i++) {
		const struct row *r = &l->rows[i];
		ks_json_begin_object(&j);
		ks_json_key(&j, "name");
		safe_string(&j, r->name);
		ks_json_kv_string(&j, "type", r->type == ROW_STATE ? "state" :
					      r->type == ROW_TASKS ? "tasks" : "cpu");
		ks_json_kv_u64(&j, "n", r->n);
		if (write_levels(&j, tl, r, span, RUN_BUDGET / l->nr) < 0)
			return -1;
		write_raw(&j, tl, r);
		ks_json_end_object(&j);
	}
	ks_json_end_array(&j);
	ks_json_key(&j, "ev"); /* row, time from t0, name */
	ks_json_begin_array(&j);
	for (i = 0; i < tl->nr_gevents; i++) {
		const struct ks_tl_guest_item *g = &tl->gevents[i];
		if (l->task_row[g->vcpu] < 0 || g->start < tl->first_ts)
			continue;
		ks_json_u64(&j, (uint64_t)l->task_row[g->vcpu]);
		ks_json_u64(&j, g->start - tl->first_ts);
		ks_json_u64(&j, g->name);
	}
	ks_json_end_array(&j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
	return 0;
}

static const char page_head[] =
"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
"<title>kvmscope timeline</title>\n<style>\n"
"body{margin:0;font:12px sans-serif;background:#fafafa;color:#222}\n"
"#top{padding:6px 10px;border-bottom:1px solid #ccc;background:#fff}\n"
"#legend span{display:inline-block;margin-right:12px}\n"
"#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle;"
"border:1px solid #ccc}\n"
"#tip{position:fixed;pointer-events:none;background:#ffffe0;border:1px solid #999;"
"padding:3px 6px;display:none;white-space:pre}\n"
"canvas{display:block}\n</style></head><body>\n"
"<div id=\"top\"><b>kvmscope timeline</b> <span id=\"info\"></span>"
" &mdash; wheel: zoom, drag: pan, double-click: reset. A pixel shows what most of its time"
" was spent on.<div id=\"legend\"></div><div id=\"note\"></div></div>\n"
"<canvas id=\"c\"><ol id=\"labels\"></ol></canvas><div id=\"tip\"></div>\n"
"<script id=\"data\" type=\"application/json\">";

static const char page_tail[] =
"</script>\n<script>\n"
"'use strict';\n"
"const D=JSON.parse(document.getElementById('data').textContent);\n"
"const COL={RUNNING:'#2e9d3a',IDLE:'#a8d5a2',HOST:'#e6a117',HALTED:'#7f8fa6',"
"PREEMPTED:'#d9412b',BLOCKED:'#8e5cc2'};\n"
"const LABEL_W=220,ROW_H=22,AXIS_H=24,RIGHT=10;\n"
"const cv=document.getElementById('c'),cx=cv.getContext('2d');\n"
"const tip=document.getElementById('tip');\n"
"let v0=0,v1=Math.max(D.span,1);\n"
/* an initial view from the address: page.html#v=START,END (ns from the start) */
"{const h=/^#v=(\\d+),(\\d+)$/.exec(location.hash);if(h&&+h[2]>+h[1]){v0=+h[1];v1=+h[2];}}\n"
"function hue(n){let h=0;for(const ch of String(n))h=(h*31+ch.charCodeAt(0))%360;"
"return 'hsl('+h+',55%,60%)';}\n"
"function vmCol(vm,vc){return 'hsl('+((vm*137+200)%360)+',60%,'+(38+(vc%4)*8)+'%)';}\n"
/* kind 0 = nothing; states, tasks, vCPUs are 1-based */
"function color(row,k){if(row.type=='state')return COL[D.states[k-1]]||'#999';"
"if(row.type=='tasks'){const n=D.names[k-1];return /^swapper/.test(n)?'#ddd':hue(n);}"
"return vmCol(D.vcpus[2*(k-1)],D.vcpus[2*(k-1)+1]);}\n"
"function kindText(row,k,lab){if(row.type=='state'){const r=D.reasons[lab];"
"return D.states[k-1]+(r?' '+r:'');}if(row.type=='tasks')return 'guest task '+D.names[k-1];"
"return D.vms[D.vcpus[2*(k-1)]]+' vCPU '+D.vcpus[2*(k-1)+1]+' in guest mode';}\n"
/* decode: per level the start bin of each run; raw: absolute starts */
"for(const r of D.rows){r.cols=new Map();for(const L of r.levels){const n=L.runs.length/2;"
"L.at=new Float64Array(n+1);let b=0;for(let i=0;i<n;i++){L.at[i]=b;b+=L.runs[2*i+1];}L.at[n]=b;}"
"if(r.raw){const n=r.raw.length/4;r.s=new Float64Array(n);let t=0;"
"for(let i=0;i<n;i++){t+=r.raw[4*i];r.s[i]=t;}}}\n"
"function col(r,k){let c=r.cols.get(k);if(!c){c=color(r,k);r.cols.set(k,c);}return c;}\n"
"function W(){return cv.width-LABEL_W-RIGHT;}\n"
/* a row's name in W pixels: cut inside the VM name's parentheses (or the
 * middle), so that the VM's pid and the vCPU number stay: rows never read
 * alike */
"function fit(s,w){if(cx.measureText(s).width<=w)return s;"
"let i0=s.indexOf('(')+1,i1=s.lastIndexOf(')');"
"if(i0<1||i1<i0){i0=Math.floor(s.length/2);i1=i0;}"
"const h=s.slice(0,i0),m=s.slice(i0,i1),t=s.slice(i1);"
"for(let k=m.length-1;k>0;k--){const a=Math.ceil(k/2),"
"u=h+m.slice(0,a)+'\\u2026'+m.slice(m.length-(k-a))+t;if(cx.measureText(u).width<=w)return u;}"
"return h+'\\u2026'+t;}\n"
"function X(t){return LABEL_W+(t-v0)/(v1-v0)*W();}\n"
"function lower(a,n,x){let lo=0,hi=n;while(lo<hi){const m=(lo+hi)>>1;if(a[m]<=x)lo=m+1;else hi=m;}"
"return Math.max(lo-1,0);}\n"
/* the coarsest level with bins no wider than a pixel; null: the raw intervals */
"function pick(r,pxns){for(const L of r.levels){if(L.width<=pxns)return L;}"
"return r.raw?null:r.levels[r.levels.length-1];}\n"
/* calls f(start,end,kind,label) for the pieces of row r overlapping [a,b] */
"function each(r,L,a,b,f){if(!L){const n=r.s.length;for(let i=lower(r.s,n,a);i<n;i++){"
"const s=r.s[i];if(s>b)break;f(s,s+r.raw[4*i+1],r.raw[4*i+2],r.raw[4*i+3]);}return;}"
"const w=L.width,n=L.at.length-1;for(let i=lower(L.at,n,a/w);i<n;i++){"
"const s=L.at[i]*w;if(s>b)break;const k=L.runs[2*i];"
"if(k)f(s,L.at[i+1]*w,k,-1);}}\n"
/* paints the dominant kind of each pixel of row r */
"function drawRow(r,y){const pw=W(),pxns=(v1-v0)/pw,L=pick(r,pxns);let px=-1,acc=new Map();"
"let runK=0,runX=0,runN=0;"
"function paint(x,k){if(k===runK&&x===runX+runN){runN++;return;}"
"if(runK){cx.fillStyle=col(r,runK);cx.fillRect(LABEL_W+runX,y+3,runN,ROW_H-6);}"
"runK=k;runX=x;runN=1;}\n"
"function flush(){if(px<0)return;let best=0,bk=0,sum=0;for(const [k,ns] of acc){sum+=ns;"
"if(ns>best){best=ns;bk=k;}}if(pxns-sum>best)bk=0;if(bk)paint(px,bk);acc.clear();}\n"
"each(r,L,v0,v1,(s,e,k)=>{s=Math.max(s,v0);e=Math.min(e,v1);if(e<=s)return;"
"let p=Math.floor((s-v0)/pxns);const pe=Math.min(Math.floor((e-v0)/pxns),pw-1);"
"if(p!==px){flush();px=p;}"
"if(pe>p){acc.set(k,(acc.get(k)||0)+(v0+(p+1)*pxns-s));flush();"
"for(let q=p+1;q<pe;q++)paint(q,k);px=pe;s=v0+pe*pxns;}"
"acc.set(k,(acc.get(k)||0)+(e-s));});\n"
"flush();paint(-2,0);}\n"
"function draw(){\n"
" cv.width=window.innerWidth;cv.height=Math.max(window.innerHeight-90,AXIS_H+D.rows.length*ROW_H+10);\n"
" cx.fillStyle='#fff';cx.fillRect(0,0,cv.width,cv.height);\n"
" cx.font='12px sans-serif';cx.textBaseline='middle';\n"
/* the labels as drawn, also as the canvas's fallback content (readable
 * without the picture) */
" const ol=document.getElementById('labels');ol.textContent='';\n"
" for(let r=0;r<D.rows.length;r++){const y=AXIS_H+r*ROW_H,lab=fit(D.rows[r].name,LABEL_W-12);"
"cx.fillStyle=r%2?'#f4f4f4':'#fff';cx.fillRect(0,y,cv.width,ROW_H);"
"cx.fillStyle='#222';cx.fillText(lab,6,y+ROW_H/2);drawRow(D.rows[r],y);"
"const li=document.createElement('li');li.textContent=lab;ol.appendChild(li);}\n"
" cx.fillStyle='#000';for(let i=0;i<D.ev.length;i+=3){const t=D.ev[i+1];"
"if(t<v0||t>v1)continue;cx.fillRect(X(t),AXIS_H+D.ev[i]*ROW_H+ROW_H-6,1,5);}\n"
" cx.fillStyle='#fff';cx.fillRect(0,0,cv.width,AXIS_H);cx.strokeStyle='#888';"
"cx.beginPath();cx.moveTo(LABEL_W,AXIS_H-1);cx.lineTo(cv.width-RIGHT,AXIS_H-1);cx.stroke();\n"
" const span=v1-v0,step=Math.pow(10,Math.floor(Math.log10(span/8)));"
"let st=step;if(span/st>16)st*=5;else if(span/st>8)st*=2;\n"
" cx.fillStyle='#222';for(let t=Math.ceil(v0/st)*st;t<=v1;t+=st){const x=X(t);"
"const lab='+'+fmt(t),tw=cx.measureText(lab).width;"
"cx.fillRect(x,AXIS_H-6,1,6);cx.fillText(lab,x+2+tw>cv.width?x-2-tw:x+2,AXIS_H/2-2);}\n"
" cx.strokeStyle='#ccc';cx.beginPath();cx.moveTo(LABEL_W-1,AXIS_H);"
"cx.lineTo(LABEL_W-1,cv.height);cx.stroke();\n"
"}\n"
"function fmt(ns){if(ns>=1e9)return (ns/1e9).toFixed(6)+' s';"
"if(ns>=1e6)return (ns/1e6).toFixed(3)+' ms';if(ns>=1e3)return (ns/1e3).toFixed(3)+' us';"
"return ns.toFixed(0)+' ns';}\n"
"function at(px,py){const ri=Math.floor((py-AXIS_H)/ROW_H),r=D.rows[ri];"
"if(!r||px<LABEL_W)return null;const pxns=(v1-v0)/W(),t=v0+(px-LABEL_W)*pxns,L=pick(r,pxns);"
"let hit=null;each(r,L,t,t,(s,e,k,lab)=>{if(s<=t&&t<e)hit={r:r,s:s,e:e,k:k,lab:lab,L:L};});"
"return hit;}\n"
"let drag=null;\n"
"cv.addEventListener('wheel',e=>{e.preventDefault();if(e.offsetX<LABEL_W)return;"
"const t=v0+(e.offsetX-LABEL_W)/W()*(v1-v0);"
"const k=e.deltaY<0?0.8:1.25;v0=t-(t-v0)*k;v1=t+(v1-t)*k;"
"if(v1-v0<10)v1=v0+10;draw();},{passive:false});\n"
"cv.addEventListener('mousedown',e=>{drag={x:e.offsetX,a:v0,b:v1};});\n"
"window.addEventListener('mouseup',()=>{drag=null;});\n"
"cv.addEventListener('dblclick',()=>{v0=0;v1=Math.max(D.span,1);draw();});\n"
"cv.addEventListener('mousemove',e=>{if(drag){const d=(e.offsetX-drag.x)/"
"W()*(drag.b-drag.a);v0=drag.a-d;v1=drag.b-d;draw();return;}"
"const h=at(e.offsetX,e.offsetY);if(!h){tip.style.display='none';return;}"
"tip.textContent=h.r.name+'\\n'+(h.L?'mostly ':'')+kindText(h.r,h.k,h.lab)+'\\n'+"
"(h.L?'in bins of '+fmt(h.L.width)+' from +':'from +')+fmt(h.s)+' for '+fmt(h.e-h.s);"
"tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
"tip.style.display='block';});\n"
"window.addEventListener('resize',draw);\n"
"document.getElementById('info').textContent=D.rows.length+' rows, '+fmt(D.span)+"
"', '+D.intervals+' state intervals, '+(D.ev.length/3)+' guest events';\n"
"function sw(c,t){return '<span><i style=\"background:'+c+'\"></i>'+t+'</span>';}\n"
"let lg=Object.keys(COL).map(k=>sw(COL[k],k)).join('')+sw('#fff','no data');"
"const seen=new Set();if(D.rows.some(r=>r.type=='cpu'))for(let i=0;i<D.vcpus.length/2;i++){"
"const vm=D.vcpus[2*i];if(seen.has(vm))continue;seen.add(vm);"
"lg+=sw(vmCol(vm,0),'host CPU running '+D.vms[vm]+' (shades: vCPUs)');}"
"if(D.rows.some(r=>r.type=='tasks'))lg+=sw('#ddd','guest idle')+"
"'<span>guest tasks: one colour per task, ticks: guest events</span>';\n"
"document.getElementById('legend').innerHTML=lg;\n"
"if(!D.host_switch)document.getElementById('note').textContent='No host sched_switch events:"
" PREEMPTED and BLOCKED cannot be told apart (the time out of guest mode shows as HOST).';\n"
"draw();\n"
"</script></body></html>\n";

int ks_timeline_write_html(const struct ks_timeline *tl, FILE *out)
{
	struct layout l;
	int rc;

	if (layout_build(tl, &l) < 0) {
		layout_free(&l);
		return -1;
	}
	fputs(page_head, out);
	rc = write_data(tl, &l, out);
	fputs(page_tail, out);
	layout_free(&l);
	return rc;
}
