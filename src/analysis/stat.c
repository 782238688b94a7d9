/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat.c - the kvmscope stat engine (see include/kvmscope/stat.h).
 *
 * Per host thread we follow perf's state machine (tools/perf/builtin-kvm.c):
 * a thread is known from its first entry event on; a begin event stores its
 * timestamp and key, a child event (s390) replaces the pending key, the next
 * end event closes the occurrence and adds end - begin to the row of that
 * key.  Rows are created at the same moments perf creates them, so that ties
 * sort the same way.  The begin/end rules come from the architecture's
 * tables (src/arch/); --measure run swaps them (entry -> exit).
 *
 * The VM and vCPU of a thread come from src/analysis/attribution.c, except
 * in perf_compat mode, which keeps perf's rule (the first entry's vCPU
 * field, the sample's pid).
 *
 * Thread lifetimes: an EXIT record (or a FORK of a tid that already had
 * events, as perf's machine__process_fork_event) ends a thread: its
 * attribution is kept as one lifetime and the tid starts afresh (no pending
 * occurrence, no name, not "known" until its next entry), so a reused tid
 * of another VM or vCPU is attributed on its own.  Not in perf_compat mode:
 * perf kvm stat report ignores EXIT and FORK records.
 *
 * The hot path is: event-role lookup by tep_event pointer, thread lookup
 * by tid (direct-mapped caches in front of src/util/hashmap.c tables),
 * field reads at resolved offsets, row lookup (a direct index by key, or
 * the thread's row cache, in front of the view's ks_hmap of rows).  Nearly
 * every record takes a lane (lane_event): an exit or entry of a thread
 * whose process and vCPU stay as they are; on a plain engine (one view by
 * key, no hook: --format perf, the default table) its plain steps
 * (plain_begin, plain_end).
 *
 * Distinct threads count against the run's budget (limits.threads): past
 * it, the engine stops with an error naming the file and the record's
 * offset (ks_stat_error).
 *
 * An observer (cfg.observe: the slow-exit log, the heatmap) is handed each
 * occurrence as it ends, with what its events said: the guest address of
 * the begin (or the end, for --measure run) and the first event of another
 * class of the architecture on the thread meanwhile (kvm_mmio, kvm_pio,
 * kvm_msr: its key is the occurrence's detail).  The engine never prints;
 * without an observer the hot path pays one branch per begin and end.
 *
 * This file is the state machine and its hot path (records and aggregates
 * in); the engine's other jobs are in stat_*.c, listed in stat_impl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/host.h"
#include "stat_impl.h"

/* ---- the hot path's lookups: roles, rows ---- */

ALWAYS_INLINE struct event_role *role_of(struct ks_stat *st, struct tep_event *ev)
{
	/* by the tracepoint id: a system's events have consecutive ids, so
	 * the few a recording has never share a slot (hashing the pointer
	 * made kvm_exit and kvm_entry evict each other on some runs) */
	struct event_role **slot = &st->role_cache[(unsigned)ev->id & (CACHE_SLOTS - 1)];

	if (!*slot || (*slot)->event != ev) {
		*slot = stat_role_lookup(st, ev); /* roles never move */
		return *slot;
	}
	return *slot;
}

/* The identity of a row (all of it: ks_stat_row's fields). */
static inline void row_id(uint64_t id[ROW_ID_WORDS], uint64_t key, int32_t vm, int32_t vcpu,
			  int32_t thread, int32_t info, int32_t table)
{
	id[ROW_KEY] = key;
	id[ROW_VM_VCPU] = pack2(vm, vcpu);
	id[ROW_THREAD_INFO] = pack2(thread, info);
	id[ROW_TABLE] = (uint32_t)table;
}

static struct ks_stat_row *hash_find_create_row(struct ks_stat *st, struct view *v,
						const struct thread *t, uint64_t key,
						int32_t info, int32_t table)
{
	int32_t vm = (v->dims & KS_DIM_VM) ? t->vm : -1;
	int32_t vcpu = (v->dims & KS_DIM_VCPU) ? t->vcpu : -1, thread = -1;
	struct ks_stat_row **slot;
	uint64_t id[ROW_ID_WORDS];

	if ((v->dims & KS_DIM_VCPU) && t->vcpu < 0 && !st->cfg.perf_compat)
		thread = t->tid;
	if (!(v->dims & KS_DIM_KEY)) {
		key = 0;
		info = 0;
	}
	/* perf keys rows by (key, info) only; the name table is the one of
	 * the row's first occurrence. */
	row_id(id, key, vm, vcpu, thread, info,
	       (v->dims & KS_DIM_KEY) && !st->cfg.perf_compat ? table : 0);
	slot = ks_hmap_get_wide_k(&v->rows, id, ROW_ID_WORDS);
	if (slot)
		return *slot;
	return stat_row_create(st, v, id[ROW_KEY], id[ROW_VM_VCPU], id[ROW_THREAD_INFO], id[ROW_TABLE],
			  table);
}

/* Whether a row is found by its key alone: no info, and no name table
 * but the first occurrence's (perf's rows ignore it). */
static inline bool key_alone(const struct ks_stat *st, int32_t info, int32_t table)
{
	return !info && (!table || st->cfg.perf_compat);
}

static inline struct ks_stat_row *find_create_row(struct ks_stat *st, struct view *v,
						  const struct thread *t, uint64_t key,
						  int32_t info, int32_t table)
{
	struct ks_stat_row **d;

	if (!v->direct || key >= DIRECT_KEYS || !key_alone(st, info, table))
		return hash_find_create_row(st, v, t, key, info, table);
	d = &v->direct[key];
	if (!*d)
		*d = hash_find_create_row(st, v, t, key, info, table);
	return *d;
}

/* The row of key K in view VI for thread T: find_create_row(), through the
 * thread's row cache where the view has no direct index. */
ALWAYS_INLINE struct ks_stat_row *thread_row(struct ks_stat *st, int vi, struct thread *t,
					     struct key_val k)
{
	struct view *v = &st->views[vi];
	struct row_cache *c;

	if (v->direct || !key_alone(st, k.info, k.table))
		return find_create_row(st, v, t, k.key, k.info, k.table);
	c = &t->rows[v->cache][fib_hash(k.key, ROW_CACHE_BITS)];
	if (!c->row || c->key != k.key || c->vm != t->vm || c->vcpu != t->vcpu)
		*c = (struct row_cache){ k.key, hash_find_create_row(st, v, t, k.key, 0, k.table),
					 t->vm, t->vcpu };
	return c->row;
}

/* Log-linear buckets: values < 128 exact; above, 128 buckets per power of
 * two, so a bucket's width is at most 1/128 (0.8%) of its values. */
ALWAYS_INLINE bool hist_add(struct ks_stat_row *r, uint64_t v)
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
	if (!r->hist[chunk] && !(r->hist[chunk] = calloc(128, sizeof(uint32_t))))
		return false;
	r->hist[chunk][idx]++;
	return true;
}

/* perf's update_stats() plus our totals and histogram; false when the
 * histogram could not grow (out of memory). */
ALWAYS_INLINE bool row_add(struct ks_stat_row *r, uint64_t v, bool hist)
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
	return !hist || hist_add(r, v);
}

/* ---- the state machine ---- */

static bool cond_holds(const struct ks_field *cond, const struct ks_match *m,
		       const struct ks_record *rec)
{
	return !m->cond_field || (cond->present && ks_field_u64(cond, rec) == m->cond_value);
}

ALWAYS_INLINE struct key_val read_key(const struct ks_stat *st, const struct ks_match *m,
				      const struct rule_fields *f, const struct ks_record *rec)
{
	struct key_val k = { .has = f->key.present, .table = m->table };

	if (!k.has)
		return k;
	k.key = ks_rule_key(m, st->compose, &f->key, &f->key2, rec->data, rec->size, &k.table);
	k.info = (int32_t)ks_field_u64(&f->info, rec);
	return k;
}

static inline bool pid_selected(const struct ks_stat *st, int32_t vm)
{
	int i;

	if (!st->cfg.npids)
		return true;
	for (i = 0; i < st->cfg.npids; i++)
		if (st->cfg.pids[i] == vm)
			return true;
	return false;
}

/* What an observed occurrence's begin says (cfg.observe). */
static __attribute__((noinline)) void observe_begin(struct thread *t, const struct event_role *r,
						   const struct ks_record *rec, struct key_val k)
{
	bool ok = false;

	t->okey = k.key;
	t->oinfo = k.info;
	t->otable = k.table;

	t->ip = r->ip.present ? ks_field_read(&r->ip, rec->data, rec->size, &ok) : 0;
	t->has_ip = ok;
	t->detail = NULL;
}

/* An event of another class on thread T (cfg.observe): the detail of T's
 * pending occurrence, the first one only.  The thread is looked up, never
 * created: such events of threads the engine does not follow change
 * nothing. */
static __attribute__((noinline)) void observe_detail(struct ks_stat *st, const struct event_role *r,
						    const struct ks_record *rec)
{
	struct thread *t = rec->tid > 0 ? stat_thread_find(st, rec->tid) : NULL;
	bool ok;

	if (!t || !t->known || !t->start || t->detail)
		return;
	t->detail_key = ks_field_read(&r->detail_key, rec->data, rec->size, &ok);
	if (!ok)
		return;
	t->detail_info = r->detail_info.present ?
		(int32_t)ks_field_read(&r->detail_info, rec->data, rec->size, &ok) : 0;
	t->detail = r->detail;
}

/* Hand a measured occurrence to cfg.observe. */
static __attribute__((noinline)) void observe_end(struct ks_stat *st, const struct thread *t,
						 const struct event_role *r,
						 const struct ks_record *rec, uint64_t begin, struct key_val k)
{
	struct ks_stat_occurrence o = {
		.begin_ts = begin, .end_ts = rec->ts, .ns = rec->ts - begin,
		.tid = t->tid, .vm = t->vm, .vcpu = t->vcpu, .row = t->pending[0],
		.key = k.key, .info = k.info, .table = k.table,
		.has_ip = t->has_ip, .ip = t->ip,
	};
	bool ok = false;

	/* --measure run: the exit, which has the guest address, ends it */
	if (!o.has_ip && r->ip.present) {
		o.ip = ks_field_read(&r->ip, rec->data, rec->size, &ok);
		o.has_ip = ok;
	}
	if (t->detail) {
		o.detail_class = t->detail->name;
		o.detail_key = t->detail_key;
		o.detail_info = t->detail_info;
	}
	st->cfg.observe(st->cfg.observe_ctx, &o);
}

ALWAYS_INLINE void begin_event(struct ks_stat *st, struct thread *t, const struct event_role *r,
			       const struct ks_record *rec, struct key_val k)
{
	uint64_t ts = rec->ts;
	int i;

	if (t->start && t->keyed) {
		st->anomalies.begin_replaced++;
		if (st->cfg.on_replaced)
			st->cfg.on_replaced(st->cfg.on_occurrence_ctx, t->pending, t->start, ts);
	}
	for (i = 0; i < st->nviews; i++)
		t->pending[i] = k.has ? thread_row(st, i, t, k) : NULL;
	t->start = ts;
	t->keyed = k.has;
	t->skipped_begin = false;
	if (st->cfg.observe)
		observe_begin(t, r, rec, k);
}

/* VM has shown that its state is protected (SEV-ES/SNP: a VMGEXIT). */
static void note_protected(struct ks_stat *st, int32_t vm)
{
	size_t i;

	for (i = 0; i < st->nprotected; i++)
		if (st->protected_vms[i] == vm)
			return;
	if (st->nprotected < KS_STAT_MAX_PROTECTED)
		st->protected_vms[st->nprotected++] = vm;
}

/* perf's child event: the pending occurrence gets the child's key. */
static void child_event(struct ks_stat *st, struct thread *t, struct key_val k)
{
	int i;

	if (!t->start || !k.has)
		return;
	if (st->cls->state_protected)
		note_protected(st, t->vm);
	for (i = 0; i < st->nviews; i++)
		t->pending[i] = thread_row(st, i, t, k);
	t->keyed = true;
	t->okey = k.key;
	t->oinfo = k.info;
	t->otable = k.table;
}

ALWAYS_INLINE void end_event(struct ks_stat *st, struct thread *t, const struct event_role *r,
			     const struct ks_record *rec, struct key_val k)
{
	uint64_t begin = t->start, ts = rec->ts;
	bool keyed;
	int i;

	if (!begin) {
		if (t->skipped_begin)
			t->skipped_begin = false; /* e.g. an IRQ exit in --event trap */
		else
			st->anomalies.end_without_begin++;
		return;
	}
	/* Neither the begin nor the end named a key (e.g. an exit that was
	 * not an MMIO): perf keeps the begin pending. */
	if (!t->keyed && !k.has)
		return;
	for (i = 0; i < st->nviews; i++)
		if (!t->pending[i])
			t->pending[i] = thread_row(st, i, t, k);
	keyed = t->keyed;
	t->start = 0;
	t->keyed = false;
	if (ts < begin) {
		st->anomalies.end_before_begin++;
		return;
	}
	st->anomalies.keyed_ends += keyed;
	for (i = 0; i < st->nviews; i++)
		if (!row_add(t->pending[i], ts - begin, !st->cfg.no_histograms))
			stat_fail(st, NULL, "%s", "out of memory");
	if (st->cfg.on_occurrence && st->nviews)
		st->cfg.on_occurrence(st->cfg.on_occurrence_ctx, t->pending[0], ts - begin);
	if (st->cfg.observe && ts - begin >= st->cfg.observe_min_ns && st->nviews)
		observe_end(st, t, r, rec, begin,
			    keyed ? (struct key_val){ true, t->okey, t->oinfo, t->otable } : k);
	/* all of them (those past nviews are never set): constant-size
	 * stores, where the loop became a call to memset() */
	memset(t->pending, 0, sizeof(t->pending));
}

ALWAYS_INLINE void pick_isa(struct ks_stat *st, const struct event_role *r,
			    const struct ks_record *rec)
{
	if (st->key_ctx.isa != KS_ISA_UNKNOWN || !r->isa.present)
		return;
	st->key_ctx.isa = (int)ks_field_u64(&r->isa, rec);
}

/* The thread of a row counted for no thread (KS_STAT_BEGINS). */
static const struct thread no_thread = { .vm = -1, .vcpu = -1 };

/* One more begin event of key K (KS_STAT_BEGINS). */
ALWAYS_INLINE void count_key(struct ks_stat *st, struct key_val k)
{
	find_create_row(st, &st->begins, &no_thread, k.key, k.info, k.table)->count++;
}

/* Every keyed exit event (the class's handling-begin rule, e.g. each
 * kvm_exit), whether or not its thread is known yet: the count kvm_stat
 * shows, and all a trace without end events (kvm_exit lines only) can tell. */
static void count_begin(struct ks_stat *st, const struct event_role *r, const struct thread *t,
			const struct ks_record *rec)
{
	const struct ks_match *m = &st->cls->begin[r->count];
	int32_t vcpu = r->exit_vcpu.present ? (int32_t)ks_field_u64(&r->exit_vcpu, rec) : t->vcpu;

	if (!r->nf.key.present || !cond_holds(&r->nf.cond, m, rec))
		return;
	if (st->cfg.vcpu >= 0 && vcpu >= 0 && vcpu != st->cfg.vcpu)
		return;
	pick_isa(st, r, rec);
	count_key(st, read_key(st, m, &r->nf, rec));
}

/* vcpu_load / vcpu_put / entry vCPU fields.  Returns true when the event
 * was only that (nothing more to do). */
static bool track_vcpu(struct ks_stat *st, const struct event_role *r, struct thread *t,
		       const struct ks_record *rec, bool *first_entry)
{
	int32_t v, before = t->attr.field_vcpu;
	bool ok = false;

	*first_entry = false;
	if (r->is_load || r->is_put) {
		v = r->is_load ? (int32_t)ks_field_read(&r->load_vcpu, rec->data, rec->size, &ok) : -1;
		t->attr.load_vcpu = ok ? v : -1;
		stat_update_attribution(st, t);
		return true;
	}
	if (r->is_entry && (!t->known || !st->cfg.perf_compat)) {
		v = (int32_t)ks_field_read(&r->entry_vcpu, rec->data, rec->size, &ok);
		*first_entry = !t->known;
		t->known = true;
		if (st->cfg.perf_compat) {
			/* perf reads vcpu_id_str, 0 when the event lacks it */
			t->vcpu = ok ? v : 0;
		} else if (ok) {
			ks_attr_event_vcpu(&t->attr, v, false);
		}
	}
	/* Newer kernels name the vCPU in the exit too: trust it over the
	 * thread's last entry (a thread may drive several vCPUs). */
	if (!st->cfg.perf_compat && (r->begin >= 0 || r->end >= 0) && r->exit_vcpu.present) {
		v = (int32_t)ks_field_read(&r->exit_vcpu, rec->data, rec->size, &ok);
		if (ok)
			ks_attr_event_vcpu(&t->attr, v, !r->is_entry);
	}
	if (t->attr.field_vcpu != before)
		stat_update_attribution(st, t);
	return false;
}

static struct thread *event_thread(struct ks_stat *st, const struct ks_record *rec)
{
	struct thread *t = thread_of(st, rec, rec->tid);
	bool fresh = t->attr.events == 0;

	t->attr.events++;
	if (rec->pid >= 0 && (st->cfg.perf_compat ? t->vm : t->attr.tgid) != rec->pid) {
		t->vm = rec->pid;
		t->attr.tgid = rec->pid;
		fresh = true;
	}
	if (fresh) {
		stat_comm_from_tep(st, t, rec->event);
		stat_update_attribution(st, t);
	}
	return t;
}

static __attribute__((noinline)) void handle_event(struct ks_stat *st, struct event_role *r,
						  const struct ks_record *rec)
{
	const struct ks_match *m;
	struct thread *t;
	bool first;

	if (!r->active)
		return;
	if (r->detail) {
		observe_detail(st, r, rec);
		if (r->only_detail)
			return;
	}
	t = event_thread(st, rec);
	if (!pid_selected(st, t->vm))
		return;
	if (track_vcpu(st, r, t, rec, &first))
		return;
	/* A thread's first entry ends nothing (perf: no begin time). */
	if (first && r->begin < 0)
		return;
	if (r->count >= 0 && !st->cfg.no_begin_counts)
		count_begin(st, r, t, rec);
	if (!t->known) {
		if (r->begin >= 0 || r->end >= 0)
			st->anomalies.before_first_entry++;
		return;
	}
	if (st->cfg.vcpu >= 0 && st->cfg.vcpu != t->vcpu)
		return;
	if (r->begin >= 0) {
		m = &st->begin_rules[r->begin];
		if (cond_holds(&r->bf.cond, m, rec)) {
			pick_isa(st, r, rec);
			begin_event(st, t, r, rec, read_key(st, m, &r->bf, rec));
			return;
		}
		if (r->end < 0)
			t->skipped_begin = true;
	}
	if (r->child >= 0) {
		child_event(st, t, read_key(st, &st->cls->child[r->child], &r->cf, rec));
		return;
	}
	if (r->end >= 0) {
		m = &st->end_rules[r->end];
		if (cond_holds(&r->ef.cond, m, rec))
			end_event(st, t, r, rec, read_key(st, m, &r->ef, rec));
	}
}

/* ks_field_read() of a lane's field F, U32 when the role found it a 4-byte
 * unsigned field in host order: then one load after the bounds check. */
ALWAYS_INLINE uint64_t lane_read(const struct ks_field *f, bool u32, const struct ks_record *rec,
				 bool *ok)
{
	uint32_t v;

	if (u32 && (uint64_t)f->offset + 4 <= rec->size) {
		memcpy(&v, (const unsigned char *)rec->data + f->offset, 4);
		*ok = true;
		return v;
	}
	return ks_field_read(f, rec->data, rec->size, ok);
}

/* The key of a LANE_BEGIN record (0 when its payload is too short, as
 * ks_field_u64() says). */
ALWAYS_INLINE uint64_t lane_key(const struct event_role *r, const struct ks_record *rec)
{
	bool ok;

	return lane_read(&r->bf.key, r->key_u32, rec, &ok);
}

/* Whether the vCPU field F of REC (if the event has it) leaves the thread's
 * vCPU as it is: track_vcpu() would then change nothing. */
static inline bool vcpu_field_same(const struct ks_field *f, bool u32, const struct thread *t,
				   const struct ks_record *rec)
{
	bool ok;
	int32_t v;

	if (!f->present)
		return true;
	v = (int32_t)lane_read(f, u32, rec, &ok);
	return !ok || v == t->attr.field_vcpu;
}

/* begin_event() of a LANE_BEGIN role's KEY on a plain engine (st->plain):
 * the one row from the view's direct index where the key has it. */
ALWAYS_INLINE void plain_begin(struct ks_stat *st, struct thread *t, const struct event_role *r,
			       const struct ks_record *rec, uint64_t key)
{
	struct ks_stat_row *row = NULL;

	if (t->start && t->keyed)
		st->anomalies.begin_replaced++;
	if (r->lane_by_key && key < DIRECT_KEYS)
		row = st->views[0].direct[key];
	if (!row)
		row = thread_row(st, 0, t, (struct key_val){ true, key, 0, r->lane_table });
	t->pending[0] = row;
	t->start = rec->ts;
	t->keyed = true;
	t->skipped_begin = false;
}

/* end_event() of a LANE_END role (no key of its own) on a plain engine. */
ALWAYS_INLINE void plain_end(struct ks_stat *st, struct thread *t, const struct event_role *r,
			     const struct ks_record *rec)
{
	uint64_t begin = t->start, ts = rec->ts;
	struct ks_stat_row *row = t->pending[0];

	if (!begin || !t->keyed || !row) {
		end_event(st, t, r, rec, (struct key_val){ .table = r->lane_table });
		return;
	}
	t->start = 0;
	t->keyed = false;
	if (ts < begin) {
		st->anomalies.end_before_begin++;
		return;
	}
	st->anomalies.keyed_ends++;
	if (!row_add(row, ts - begin, !st->cfg.no_histograms))
		stat_fail(st, NULL, "%s", "out of memory");
	t->pending[0] = NULL;
}

/* handle_event() for an event of a LANE_BEGIN or LANE_END role whose
 * thread is known and stays as it is (same process, same vCPU): nearly
 * every event of a recording.  False when it is not such an event, and
 * nothing was done. */
ALWAYS_INLINE bool lane_event(struct ks_stat *st, const struct event_role *r,
				 const struct ks_record *rec)
{
	struct thread *t = thread_of(st, rec, rec->tid);
	bool compat = st->cfg.perf_compat;
	struct key_val k;

	if (!t->known || !t->attr.events ||
	    (rec->pid >= 0 && (compat ? t->vm : t->attr.tgid) != rec->pid))
		return false;
	if (!compat && (!vcpu_field_same(&r->exit_vcpu, r->exit_vcpu_u32, t, rec) ||
			(r->entry_vcpu_own &&
			 !vcpu_field_same(&r->entry_vcpu, r->entry_vcpu_u32, t, rec))))
		return false;
	t->attr.events++;
	if (st->plain && r->lane == LANE_BEGIN) {
		pick_isa(st, r, rec);
		k = (struct key_val){ .has = true, .key = lane_key(r, rec),
				      .table = r->count_table };
		if (r->lane_count)
			count_key(st, k);
		plain_begin(st, t, r, rec, k.key);
	} else if (st->plain) {
		plain_end(st, t, r, rec);
	} else if (r->lane == LANE_BEGIN) {
		pick_isa(st, r, rec);
		k = (struct key_val){ .has = true, .key = lane_key(r, rec) };
		if (r->count >= 0 && !st->cfg.no_begin_counts) {
			k.table = st->cls->begin[r->count].table;
			count_key(st, k);
		}
		k.table = st->begin_rules[r->begin].table;
		begin_event(st, t, r, rec, k);
	} else {
		k = (struct key_val){ .table = st->end_rules[r->end].table };
		end_event(st, t, r, rec, k);
	}
	return true;
}

ALWAYS_INLINE void handle_event_fast(struct ks_stat *st, struct event_role *r,
				    const struct ks_record *rec)
{
	if (!r->lane || !lane_event(st, r, rec))
		handle_event(st, r, rec);
}

/* ---- records and aggregates in ---- */

ALWAYS_INLINE void add_record(struct ks_stat *st, const struct ks_record *rec)
{
	if (rec->type != KS_REC_EVENT)
		stat_add_other(st, rec);
	else if (rec->event)
		handle_event_fast(st, role_of(st, rec->event), rec);
}

void ks_stat_add(struct ks_stat *st, const struct ks_record *rec)
{
	add_record(st, rec);
}

void ks_stat_add_batch(struct ks_stat *st, const struct ks_record *recs, size_t n)
{
	size_t i;

	if (st->failed)
		return;
	for (i = 0; i < n; i++)
		add_record(st, &recs[i]);
}

/* N values of about V in R's histogram (ks_stat_add_aggregate). */
static bool hist_add_n(struct ks_stat_row *r, uint64_t v, uint64_t n)
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
	if (!r->hist[chunk] && !(r->hist[chunk] = calloc(128, sizeof(uint32_t))))
		return false;
	r->hist[chunk][idx] += (uint32_t)(n > UINT32_MAX - r->hist[chunk][idx] ?
					  UINT32_MAX - r->hist[chunk][idx] : n);
	return true;
}

void ks_stat_add_aggregate(struct ks_stat *st, const struct ks_stat_aggregate *a)
{
	struct thread t = { .tid = a->tid, .vm = a->vm, .vcpu = a->vcpu };
	int vi;

	if (st->failed || !a->count)
		return;
	if (st->cfg.vcpu >= 0 && a->vcpu != st->cfg.vcpu)
		return;
	if (!pid_selected(st, a->vm))
		return;
	if (st->key_ctx.isa == KS_ISA_UNKNOWN && st->arch->isa_field && a->isa)
		st->key_ctx.isa = a->isa;
	for (vi = 0; vi < st->nviews; vi++) {
		struct view *v = &st->views[vi];
		struct ks_stat_row *r = hash_find_create_row(st, v, &t, a->key, 0, a->table);
		unsigned b;

		if (r == &st->spare_row)
			return;
		r->count += a->count;
		r->total_ns += a->sum_ns;
		/* no sum of squares: the mean is exact, the deviation unknown
		 * (n stays below 2: ks_stat_row_stddev_pct() says 0, as perf
		 * does for one sample) */
		r->n = 1;
		r->mean = (double)r->total_ns / (double)r->count;
		if (a->min_ns < r->min_ns)
			r->min_ns = a->min_ns;
		if (a->max_ns > r->max_ns)
			r->max_ns = a->max_ns;
		if (st->cfg.no_histograms)
			continue;
		/* each bucket's values at its upper bound (within min..max) */
		for (b = 0; b < a->nbuckets; b++) {
			uint64_t at = b < a->nbuckets - 1 ? a->bounds[b] : a->max_ns;

			if (!a->buckets[b])
				continue;
			if (at > a->max_ns)
				at = a->max_ns;
			if (at < a->min_ns)
				at = a->min_ns;
			if (!hist_add_n(r, at, a->buckets[b])) {
				stat_fail(st, NULL, "%s", "out of memory");
				return;
			}
		}
	}
	st->anomalies.keyed_ends += a->count;
}

static bool plays_a_part(void *st, struct tep_event *ev)
{
	return role_of(st, ev)->active;
}

int ks_stat_select(struct ks_stat *st, struct ks_source *src)
{
	return ks_source_select(src, plays_a_part, st);
}
