/*
 * stat.c - the kvmscope stat engine (see include/kvmscope/stat.h).
 *
 * Per host thread we follow perf's state machine (tools/perf/builtin-kvm.c):
 * a thread is known from its first kvm_entry on (which gives its vCPU);
 * a begin event stores its timestamp and key, the next end event closes the
 * occurrence and adds end - begin to the row of that key.  Rows are created
 * at the same moments perf creates them, so that ties sort the same way.
 *
 * The hot path is: event-role lookup by tep_event pointer (small open hash),
 * thread lookup by tid (open hash), field reads at resolved offsets.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/field.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"

#define NO_KEY (~0ULL)

/* What one tracepoint means for the chosen class. */
struct event_role {
	struct tep_event *event;
	bool is_entry;                 /* binds the thread to a vCPU */
	struct ks_field entry_vcpu;
	struct ks_field exit_vcpu;     /* vcpu_id on the begin event, if any */
	struct ks_field isa;           /* x86 kvm_exit isa */
	int begin, end;                /* index of the matching rule, -1 = none */
	struct ks_field begin_cond, begin_key, begin_info;
	struct ks_field end_cond, end_key, end_info;
};

struct thread {
	int32_t tid;                   /* 0 = free slot (tid 0 is never a vCPU) */
	bool known;                    /* saw the first entry */
	int32_t vcpu;
	int32_t vm;
	uint64_t start;                /* 0 = no begin pending */
	bool keyed;                    /* the pending begin had a key */
	struct ks_stat_row *pending[KS_STAT_MAX_VIEWS];
};

struct view {
	unsigned dims;
	struct ks_stat_row **slots;    /* open hash */
	size_t cap, used;
	struct ks_stat_row **sorted;   /* valid rows, perf's iteration order */
	size_t nsorted;
};

struct comm {
	int32_t tid;
	char name[32];
};

struct ks_stat {
	struct ks_stat_config cfg;
	const struct ks_arch *arch;
	const struct ks_event_class *cls;
	struct ks_key_ctx key_ctx;
	bool isa_from_cpuid;
	struct ks_stat_anomalies anomalies;
	uint64_t next_seq;

	struct event_role *roles;      /* open hash by event pointer */
	size_t roles_cap;

	struct thread *threads;        /* open hash by tid */
	size_t threads_cap, threads_used;

	struct comm *comms;            /* open hash by tid */
	size_t comms_cap, comms_used;

	int nviews;
	struct view views[KS_STAT_MAX_VIEWS];
	struct view begins;            /* keyed begin events counted one by one */
};

/* ---- small open-addressing helpers ---- */

static size_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fputs("kvmscope: out of memory\n", stderr);
		abort();
	}
	return p;
}

/* ---- event roles ---- */

static bool match_event(const struct ks_match *m, const struct tep_event *ev)
{
	return m->name && !strcmp(m->name, ev->name) && !strcmp(m->system, ev->system);
}

static int find_rule(const struct ks_match *rules, const struct tep_event *ev)
{
	int i;

	for (i = 0; i < KS_MAX_MATCH && rules[i].name; i++)
		if (match_event(&rules[i], ev))
			return i;
	return -1;
}

static void resolve_rule(const struct ks_match *m, struct tep_event *ev,
			 struct ks_field *cond, struct ks_field *key, struct ks_field *info)
{
	if (m->cond_field)
		ks_field_resolve(cond, ev, m->cond_field);
	if (m->key_field)
		ks_field_resolve(key, ev, m->key_field);
	if (m->info_field)
		ks_field_resolve(info, ev, m->info_field);
}

static void init_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	memset(r, 0, sizeof(*r));
	r->event = ev;
	r->is_entry = !strcmp(ev->name, st->arch->entry_name) &&
		      !strcmp(ev->system, st->arch->entry_system);
	if (r->is_entry)
		ks_field_resolve(&r->entry_vcpu, ev, st->arch->entry_vcpu_field);
	r->begin = find_rule(st->cls->begin, ev);
	r->end = find_rule(st->cls->end, ev);
	if (r->begin >= 0) {
		resolve_rule(&st->cls->begin[r->begin], ev, &r->begin_cond, &r->begin_key,
			     &r->begin_info);
		ks_field_resolve(&r->exit_vcpu, ev, "vcpu_id");
	}
	if (r->end >= 0)
		resolve_rule(&st->cls->end[r->end], ev, &r->end_cond, &r->end_key, &r->end_info);
	if (!strcmp(ev->name, "kvm_exit"))
		ks_field_resolve(&r->isa, ev, "isa");
}

static void grow_roles(struct ks_stat *st)
{
	struct event_role *old = st->roles;
	size_t i, oldcap = st->roles_cap;

	st->roles_cap = oldcap ? oldcap * 2 : 64;
	st->roles = xcalloc(st->roles_cap, sizeof(*st->roles));
	for (i = 0; i < oldcap; i++) {
		size_t j = hash_u64((uintptr_t)old[i].event) & (st->roles_cap - 1);

		if (!old[i].event)
			continue;
		while (st->roles[j].event)
			j = (j + 1) & (st->roles_cap - 1);
		st->roles[j] = old[i];
	}
	free(old);
}

static struct event_role *role_of(struct ks_stat *st, struct tep_event *ev)
{
	size_t j, n = 0;

	for (;;) {
		j = hash_u64((uintptr_t)ev) & (st->roles_cap - 1);
		for (n = 0; st->roles[j].event; n++) {
			if (st->roles[j].event == ev)
				return &st->roles[j];
			j = (j + 1) & (st->roles_cap - 1);
		}
		if (n * 2 < st->roles_cap)
			break;
		grow_roles(st);
	}
	init_role(st, &st->roles[j], ev);
	return &st->roles[j];
}

/* ---- threads and names ---- */

static void grow_threads(struct ks_stat *st)
{
	struct thread *old = st->threads;
	size_t i, oldcap = st->threads_cap;

	st->threads_cap = oldcap ? oldcap * 2 : 256;
	st->threads = xcalloc(st->threads_cap, sizeof(*st->threads));
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].tid)
			continue;
		j = hash_u64((uint32_t)old[i].tid) & (st->threads_cap - 1);
		while (st->threads[j].tid)
			j = (j + 1) & (st->threads_cap - 1);
		st->threads[j] = old[i];
	}
	free(old);
}

static struct thread *thread_of(struct ks_stat *st, int32_t tid)
{
	size_t j;

	if (st->threads_used * 2 >= st->threads_cap)
		grow_threads(st);
	j = hash_u64((uint32_t)tid) & (st->threads_cap - 1);
	while (st->threads[j].tid) {
		if (st->threads[j].tid == tid)
			return &st->threads[j];
		j = (j + 1) & (st->threads_cap - 1);
	}
	st->threads_used++;
	st->threads[j].tid = tid;
	st->threads[j].vm = -1;
	st->threads[j].vcpu = -1;
	return &st->threads[j];
}

static struct comm *comm_slot(struct ks_stat *st, int32_t tid, bool create)
{
	size_t j;

	if (create && st->comms_used * 2 >= st->comms_cap) {
		struct comm *old = st->comms;
		size_t i, oldcap = st->comms_cap;

		st->comms_cap = oldcap ? oldcap * 2 : 256;
		st->comms = xcalloc(st->comms_cap, sizeof(*st->comms));
		st->comms_used = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].tid)
				*comm_slot(st, old[i].tid, true) = old[i];
		free(old);
	}
	if (!st->comms_cap)
		return NULL;
	j = hash_u64((uint32_t)tid) & (st->comms_cap - 1);
	while (st->comms[j].tid) {
		if (st->comms[j].tid == tid)
			return &st->comms[j];
		j = (j + 1) & (st->comms_cap - 1);
	}
	if (!create)
		return NULL;
	st->comms_used++;
	st->comms[j].tid = tid;
	return &st->comms[j];
}

const char *ks_stat_comm(const struct ks_stat *st, int32_t tid)
{
	struct comm *c = tid > 0 ? comm_slot((struct ks_stat *)st, tid, false) : NULL;

	return c ? c->name : NULL;
}

/* ---- rows ---- */

static bool row_matches(const struct ks_stat_row *r, int32_t vm, int32_t vcpu, uint64_t key,
			int32_t info)
{
	return r->key == key && r->info == info && r->vm == vm && r->vcpu == vcpu;
}

static void grow_view(struct view *v)
{
	struct ks_stat_row **old = v->slots;
	size_t i, oldcap = v->cap;

	v->cap = oldcap ? oldcap * 2 : 64;
	v->slots = xcalloc(v->cap, sizeof(*v->slots));
	for (i = 0; i < oldcap; i++) {
		struct ks_stat_row *r = old[i];
		size_t j;

		if (!r)
			continue;
		j = hash_u64(r->key ^ ((uint64_t)(uint32_t)r->vcpu << 40) ^
			     ((uint64_t)(uint32_t)r->vm << 20) ^ (uint64_t)r->info) & (v->cap - 1);
		while (v->slots[j])
			j = (j + 1) & (v->cap - 1);
		v->slots[j] = r;
	}
	free(old);
}

static struct ks_stat_row *find_create_row(struct ks_stat *st, struct view *v,
					   const struct thread *t, uint64_t key, int32_t info)
{
	int32_t vm = (v->dims & KS_DIM_VM) ? t->vm : -1;
	int32_t vcpu = (v->dims & KS_DIM_VCPU) ? t->vcpu : -1;
	struct ks_stat_row *r;
	size_t j;

	if (!(v->dims & KS_DIM_KEY)) {
		key = 0;
		info = 0;
	}
	if ((v->used + 1) * 2 > v->cap)
		grow_view(v);
	j = hash_u64(key ^ ((uint64_t)(uint32_t)vcpu << 40) ^ ((uint64_t)(uint32_t)vm << 20) ^
		     (uint64_t)info) & (v->cap - 1);
	while ((r = v->slots[j])) {
		if (row_matches(r, vm, vcpu, key, info))
			return r;
		j = (j + 1) & (v->cap - 1);
	}
	r = xcalloc(1, sizeof(*r));
	r->vm = vm;
	r->vcpu = vcpu;
	r->key = key;
	r->info = info;
	r->seq = st->next_seq++;
	r->min_ns = UINT64_MAX;
	v->slots[j] = r;
	v->used++;
	return r;
}

/* Log-linear buckets: values < 128 exact; above, 128 buckets per power of
 * two, so a bucket's width is at most 1/128 (0.8%) of its values. */
static void hist_add(struct ks_stat_row *r, uint64_t v)
{
	unsigned chunk, idx;

	if (v < 128) {
		chunk = 0;
		idx = (unsigned)v;
	} else {
		unsigned e = 63 - (unsigned)__builtin_clzll(v);

		chunk = e - 6;
		idx = (unsigned)(v >> (e - 7)) & 127;
	}
	if (!r->hist[chunk])
		r->hist[chunk] = xcalloc(128, sizeof(uint32_t));
	r->hist[chunk][idx]++;
}

static void hist_bucket_range(unsigned chunk, unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e;

	if (chunk == 0) {
		*lo = *hi = idx;
		return;
	}
	e = chunk + 6;
	*lo = ((uint64_t)(128 + idx)) << (e - 7);
	*hi = *lo + ((1ULL << (e - 7)) - 1);
}

/* perf's update_stats() plus our totals and histogram. */
static void row_add(struct ks_stat_row *r, uint64_t v)
{
	double delta;

	r->count++;
	r->total_ns += v;
	r->n++;
	delta = (double)v - r->mean;
	r->mean += delta / r->n;
	r->m2 += delta * ((double)v - r->mean);
	if (v > r->max_ns)
		r->max_ns = v;
	if (v < r->min_ns)
		r->min_ns = v;
	hist_add(r, v);
}

double ks_stat_row_stddev_pct(const struct ks_stat_row *row)
{
	double variance, stddev;

	if (row->n < 2)
		return 0.0;
	variance = row->m2 / (row->n - 1);
	stddev = sqrt(variance / row->n);
	return row->mean ? 100.0 * stddev / row->mean : 0.0;
}

uint64_t ks_stat_row_quantile(const struct ks_stat_row *row, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;
	unsigned c, i;

	if (!row->count)
		return 0;
	rank = (uint64_t)ceil(q * (double)row->count);
	if (rank < 1)
		rank = 1;
	if (rank > row->count)
		rank = row->count;
	for (c = 0; c < 64; c++) {
		if (!row->hist[c])
			continue;
		for (i = 0; i < 128; i++) {
			seen += row->hist[c][i];
			if (seen < rank)
				continue;
			hist_bucket_range(c, i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			if (mid < row->min_ns)
				mid = row->min_ns;
			if (mid > row->max_ns)
				mid = row->max_ns;
			return mid;
		}
	}
	return row->max_ns;
}

void ks_stat_row_log2_hist(const struct ks_stat_row *row, uint64_t out[64])
{
	unsigned c, i;

	memset(out, 0, 64 * sizeof(out[0]));
	for (c = 0; c < 64; c++) {
		if (!row->hist[c])
			continue;
		for (i = 0; i < 128; i++) {
			uint64_t lo, hi;

			if (!row->hist[c][i])
				continue;
			hist_bucket_range(c, i, &lo, &hi);
			out[lo ? 63 - __builtin_clzll(lo) : 0] += row->hist[c][i];
		}
	}
}

/* ---- the state machine ---- */

static bool pid_selected(const struct ks_stat *st, int32_t vm)
{
	int i;

	if (!st->cfg.npids)
		return true;
	for (i = 0; i < st->cfg.npids; i++)
		if (st->cfg.pids[i] == vm)
			return true;
	return false;
}

static void begin_event(struct ks_stat *st, struct thread *t, uint64_t ts, bool has_key,
			uint64_t key, int32_t info)
{
	int i;

	if (t->start && t->keyed)
		st->anomalies.begin_replaced++;
	for (i = 0; i < st->nviews; i++)
		t->pending[i] = has_key ? find_create_row(st, &st->views[i], t, key, info) : NULL;
	t->start = ts;
	t->keyed = has_key;
}

static void end_event(struct ks_stat *st, struct thread *t, uint64_t ts, bool has_key,
		      uint64_t key, int32_t info)
{
	uint64_t begin = t->start;
	int i;

	if (!begin) {
		st->anomalies.end_without_begin++;
		return;
	}
	/* Neither the begin nor the end named a key (e.g. an exit that was
	 * not an MMIO): perf keeps the begin pending. */
	if (!t->keyed && !has_key)
		return;
	for (i = 0; i < st->nviews; i++)
		if (!t->pending[i])
			t->pending[i] = find_create_row(st, &st->views[i], t, key, info);
	t->start = 0;
	t->keyed = false;
	if (ts < begin) {
		st->anomalies.end_before_begin++;
		return;
	}
	for (i = 0; i < st->nviews; i++) {
		row_add(t->pending[i], ts - begin);
		t->pending[i] = NULL;
	}
}

static bool cond_holds(const struct ks_field *cond, const struct ks_match *m,
		       const struct ks_record *rec)
{
	return !m->cond_field || (cond->present && ks_field_u64(cond, rec) == m->cond_value);
}

static void pick_isa(struct ks_stat *st, const struct event_role *r, const struct ks_record *rec)
{
	if (st->key_ctx.isa != KS_ISA_UNKNOWN || !r->isa.present)
		return;
	st->key_ctx.isa = (int)ks_field_u64(&r->isa, rec);
}

/* Every keyed begin event (e.g. each kvm_exit), whether or not its thread
 * is known yet: the count kvm_stat shows, and all a trace without end events
 * (kvm_exit lines only) can tell. */
static void count_begin(struct ks_stat *st, const struct event_role *r, const struct thread *t,
			const struct ks_record *rec)
{
	const struct ks_match *m = &st->cls->begin[r->begin];
	static const struct thread nobody = { .vm = -1, .vcpu = -1 };
	int32_t vcpu = r->exit_vcpu.present ? (int32_t)ks_field_u64(&r->exit_vcpu, rec) : t->vcpu;

	if (!r->begin_key.present || !cond_holds(&r->begin_cond, m, rec))
		return;
	if (st->cfg.vcpu >= 0 && vcpu >= 0 && vcpu != st->cfg.vcpu)
		return;
	pick_isa(st, r, rec);
	find_create_row(st, &st->begins, &nobody, ks_field_u64(&r->begin_key, rec),
			(int32_t)ks_field_u64(&r->begin_info, rec))->count++;
}

static void handle_event(struct ks_stat *st, const struct ks_record *rec)
{
	struct event_role *r = role_of(st, rec->event);
	const struct ks_match *m;
	struct thread *t;
	bool ok;

	if (!r->is_entry && r->begin < 0 && r->end < 0)
		return;
	t = thread_of(st, rec->tid);
	if (rec->pid >= 0)
		t->vm = rec->pid;
	if (!pid_selected(st, t->vm))
		return;
	if (r->is_entry && (!t->known || !st->cfg.perf_compat)) {
		int32_t vcpu = (int32_t)ks_field_read(&r->entry_vcpu, rec->data, rec->size, &ok);
		bool first = !t->known;

		t->vcpu = ok ? vcpu : -1;
		t->known = true;
		/* A thread's first entry ends nothing (perf: no begin time). */
		if (first)
			return;
	}
	if (r->begin >= 0)
		count_begin(st, r, t, rec);
	if (!t->known) {
		st->anomalies.before_first_entry++;
		return;
	}
	/* Newer kernels name the vCPU in the exit too: trust it over the
	 * thread's last entry (a thread may drive several vCPUs). */
	if (!st->cfg.perf_compat && r->begin >= 0 && r->exit_vcpu.present)
		t->vcpu = (int32_t)ks_field_u64(&r->exit_vcpu, rec);
	if (st->cfg.vcpu >= 0 && st->cfg.vcpu != t->vcpu)
		return;
	if (r->begin >= 0) {
		m = &st->cls->begin[r->begin];
		if (cond_holds(&r->begin_cond, m, rec)) {
			pick_isa(st, r, rec);
			begin_event(st, t, rec->ts, r->begin_key.present,
				    ks_field_u64(&r->begin_key, rec),
				    (int32_t)ks_field_u64(&r->begin_info, rec));
			return;
		}
	}
	if (r->end >= 0) {
		m = &st->cls->end[r->end];
		if (cond_holds(&r->end_cond, m, rec))
			end_event(st, t, rec->ts, r->end_key.present,
				  ks_field_u64(&r->end_key, rec),
				  (int32_t)ks_field_u64(&r->end_info, rec));
	}
}

static void handle_comm(struct ks_stat *st, const struct ks_record *rec)
{
	struct comm *c;

	if (rec->tid <= 0 || !rec->comm)
		return;
	c = comm_slot(st, rec->tid, true);
	snprintf(c->name, sizeof(c->name), "%s", rec->comm);
	if (rec->pid > 0)
		thread_of(st, rec->tid)->vm = rec->pid;
}

void ks_stat_add(struct ks_stat *st, const struct ks_record *rec)
{
	switch (rec->type) {
	case KS_REC_EVENT:
		if (rec->event)
			handle_event(st, rec);
		break;
	case KS_REC_COMM:
		handle_comm(st, rec);
		break;
	case KS_REC_FORK:
		if (rec->tid > 0 && rec->pid > 0)
			thread_of(st, rec->tid)->vm = rec->pid;
		break;
	case KS_REC_LOST:
		st->anomalies.lost_events += rec->lost;
		break;
	default:
		break;
	}
}

/* ---- setup and results ---- */

struct ks_stat *ks_stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
			    struct ks_error *err)
{
	struct ks_stat *st;
	int i;

	st = xcalloc(1, sizeof(*st));
	st->cfg = *cfg;
	st->arch = ks_arch_for(info->arch, info->cpuid);
	if (!st->arch) {
		ks_error_set(err, "no KVM event tables for architecture '%s'", info->arch);
		free(st);
		return NULL;
	}
	st->cls = ks_arch_class(st->arch, cfg->event_class ? cfg->event_class : "vmexit");
	if (!st->cls) {
		ks_error_set(err, "unknown event class '%s' for %s (try vmexit, mmio, ioport, msr)",
			     cfg->event_class, st->arch->name);
		free(st);
		return NULL;
	}
	/* perf decides VMX/SVM from the CPUID string only; we prefer it too
	 * when present and fall back on kvm_exit's isa field. */
	st->key_ctx.isa = ks_x86_isa_from_cpuid(info->cpuid);
	st->isa_from_cpuid = st->key_ctx.isa != KS_ISA_UNKNOWN;
	for (i = 0; i < KS_STAT_MAX_VIEWS && cfg->views[i]; i++)
		st->views[i].dims = cfg->views[i];
	st->nviews = i ? i : 1;
	if (!i)
		st->views[0].dims = KS_DIM_KEY;
	st->begins.dims = KS_DIM_KEY;
	grow_roles(st);
	grow_threads(st);
	return st;
}

static void free_row(struct ks_stat_row *r)
{
	int c;

	for (c = 0; c < 64; c++)
		free(r->hist[c]);
	free(r);
}

void ks_stat_free(struct ks_stat *st)
{
	int i;
	size_t j;

	if (!st)
		return;
	for (i = 0; i <= st->nviews; i++) {
		struct view *v = i < st->nviews ? &st->views[i] : &st->begins;

		for (j = 0; j < v->cap; j++)
			if (v->slots[j])
				free_row(v->slots[j]);
		free(v->slots);
		free(v->sorted);
	}
	free(st->roles);
	free(st->threads);
	free(st->comms);
	free(st);
}

const char *ks_stat_class_name(const struct ks_stat *st)
{
	return st->cls->name;
}

const char *ks_stat_class_title(const struct ks_stat *st)
{
	return st->cls->title;
}

const char *ks_stat_isa_name(const struct ks_stat *st)
{
	if (st->key_ctx.isa == KS_ISA_UNKNOWN)
		return "unknown";
	return ks_x86_isa_name(st->key_ctx.isa);
}

void ks_stat_key_name(const struct ks_stat *st, const struct ks_stat_row *row, bool perf_style,
		      char *buf, size_t len)
{
	struct ks_key_ctx ctx = st->key_ctx;

	if (ctx.isa == KS_ISA_UNKNOWN)
		ctx.isa = KS_ISA_VMX;
	st->cls->key_name(&ctx, row->key, row->info, perf_style, buf, len);
}

const struct ks_stat_anomalies *ks_stat_anomalies(const struct ks_stat *st)
{
	return &st->anomalies;
}

/* perf walks a 4096-bucket hash (key & 4095) in bucket order, newest row
 * first within a bucket.  The sort keys then apply stably on top. */
static int perf_iteration_cmp(const void *a, const void *b)
{
	const struct ks_stat_row *x = *(struct ks_stat_row *const *)a;
	const struct ks_stat_row *y = *(struct ks_stat_row *const *)b;
	uint64_t bx = x->key & 4095, by = y->key & 4095;

	if (bx != by)
		return bx < by ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq ? 1 : 0;
}

size_t ks_stat_rows(const struct ks_stat *cst, int vi, struct ks_stat_row ***rows)
{
	struct ks_stat *st = (struct ks_stat *)cst;
	struct view *v;
	size_t j;

	*rows = NULL;
	if (vi < KS_STAT_BEGINS || vi >= st->nviews)
		return 0;
	v = vi == KS_STAT_BEGINS ? &st->begins : &st->views[vi];
	if (!v->sorted) {
		v->sorted = xcalloc(v->used + 1, sizeof(*v->sorted));
		for (j = 0; j < v->cap; j++)
			if (v->slots[j] && v->slots[j]->count)
				v->sorted[v->nsorted++] = v->slots[j];
		qsort(v->sorted, v->nsorted, sizeof(*v->sorted), perf_iteration_cmp);
	}
	*rows = v->sorted;
	return v->nsorted;
}

int ks_stat_nviews(const struct ks_stat *st)
{
	return st->nviews;
}

unsigned ks_stat_view_dims(const struct ks_stat *st, int vi)
{
	return vi >= 0 && vi < st->nviews ? st->views[vi].dims : 0;
}

bool ks_stat_key_known(const struct ks_stat *st, const struct ks_stat_row *row)
{
	struct ks_key_ctx ctx = st->key_ctx;

	if (ctx.isa == KS_ISA_UNKNOWN)
		ctx.isa = KS_ISA_VMX;
	return !st->cls->key_known || st->cls->key_known(&ctx, row->key);
}

/* ---- sorting ---- */

struct sort_item {
	struct ks_stat_row *row;
	size_t pos;
	char name[64];
};

enum { BY_SAMPLE, BY_TIME, BY_MEAN, BY_MAX, BY_MIN, BY_NAME, BY_P99, BY_PERF_MEAN };

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int sort_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_item *x = a, *y = b;
	int c = 0;

	switch (*(const int *)ctx) {
	case BY_SAMPLE:
		c = cmp_u64_desc(x->row->count, y->row->count);
		break;
	case BY_TIME:
		c = cmp_u64_desc(x->row->total_ns, y->row->total_ns);
		break;
	case BY_MEAN:
		c = x->row->mean > y->row->mean ? -1 : x->row->mean < y->row->mean ? 1 : 0;
		break;
	case BY_PERF_MEAN: /* perf 6.1 compares the mean truncated to u64 ns */
		c = cmp_u64_desc((uint64_t)x->row->mean, (uint64_t)y->row->mean);
		break;
	case BY_MAX:
		c = cmp_u64_desc(x->row->max_ns, y->row->max_ns);
		break;
	case BY_MIN:
		c = cmp_u64_desc(x->row->min_ns, y->row->min_ns);
		break;
	case BY_NAME:
		c = strcmp(x->name, y->name);
		break;
	case BY_P99:
		c = cmp_u64_desc(ks_stat_row_quantile(x->row, 0.99),
				 ks_stat_row_quantile(y->row, 0.99));
		break;
	}
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos ? 1 : 0;
}

int ks_stat_sort(const struct ks_stat *st, struct ks_stat_row **rows, size_t n, const char *key,
		 struct ks_error *err)
{
	static const struct { const char *name; int mode; int perf_mode; } keys[] = {
		{ "sample", BY_SAMPLE, BY_SAMPLE }, { "time", BY_TIME, BY_PERF_MEAN },
		{ "mean_t", BY_MEAN, BY_MEAN },     { "max_t", BY_MAX, BY_MAX },
		{ "min_t", BY_MIN, BY_MIN },        { "ev_name", BY_NAME, BY_NAME },
		{ "p99", BY_P99, BY_P99 },
	};
	struct sort_item *items;
	size_t i, k;
	int mode;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strcmp(keys[k].name, key))
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return ks_error_set(err, "unknown sort key '%s' (use sample, time, mean_t, max_t, "
				    "min_t, ev_name or p99)", key);
	items = xcalloc(n + 1, sizeof(*items));
	for (i = 0; i < n; i++) {
		items[i].row = rows[i];
		items[i].pos = i;
		if (keys[k].mode == BY_NAME)
			ks_stat_key_name(st, rows[i], false, items[i].name, sizeof(items[i].name));
	}
	/* perf 6.1's "time" sorts by mean time; newer perf and we by total. */
	mode = st->cfg.perf_compat ? keys[k].perf_mode : keys[k].mode;
	qsort_r(items, n, sizeof(*items), sort_cmp, &mode);
	for (i = 0; i < n; i++)
		rows[i] = items[i].row;
	free(items);
	return 0;
}
