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
 * the thread's row cache, in front of the view's ks_hmap of rows).
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
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/attribution.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "util/hashmap.h"

#define NO_KEY (~0ULL)
/* the hot path's pieces, inlined into the short path (lane_event) */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define CACHE_BITS 6
#define CACHE_SLOTS (1u << CACHE_BITS)
/* The thread cache is indexed by the tid's low bits: a VM's vCPU threads
 * are created one after the other, so their tids are consecutive numbers
 * and never share a slot (hashed into 64 slots, 4 of the benchmark's 16
 * vCPU threads evicted each other, sending a quarter of the records to the
 * hash table). */
#define THREAD_SLOTS 256u

/* The fields of one matched rule. */
struct rule_fields {
	struct ks_field cond, key, key2, info;
};

/* What one tracepoint means for the chosen class. */
struct event_role {
	struct tep_event *event;
	bool active;                   /* has any of the roles below */
	bool is_entry;                 /* binds the thread to a vCPU */
	bool is_load, is_put;          /* kvm:vcpu_load / kvm:vcpu_put */
	struct ks_field entry_vcpu;
	struct ks_field exit_vcpu;     /* vCPU id on the begin event, if any */
	struct ks_field load_vcpu;
	struct ks_field isa;           /* x86 kvm_exit isa */
	int begin, end, child;         /* index of the matching rule, -1 = none */
	int count;                     /* index into the class's (exit) begin rules */
	int lane;                      /* LANE_*: the short path it may take */
	struct rule_fields bf, ef, cf, nf;
	/* cfg.observe only: the guest address of a begin or end event, and
	 * an event keyed by another class of the architecture (kvm_mmio's
	 * gpa in a vmexit run), the occurrence's detail */
	struct ks_field ip;
	const struct ks_event_class *detail;
	struct ks_field detail_key, detail_info;
	bool only_detail;              /* active for the detail alone */
};

/* A thread's rows by key in a view without a direct index (one over the
 * VM or vCPU), found for the VM and vCPU it then had (thread_row). */
#define ROW_CACHE_BITS 4
#define ROW_CACHE (1u << ROW_CACHE_BITS)
struct row_cache {
	uint64_t key;
	struct ks_stat_row *row;       /* NULL = empty */
	int32_t vm, vcpu;
};

struct thread {
	int32_t tid;                   /* 0 = free slot (tid 0 is never a vCPU) */
	bool known;                    /* saw the first entry */
	bool skipped_begin;            /* a begin event failed its condition */
	bool reused;                   /* an earlier thread had this tid: saved
					* cmdlines name that one, not this one */
	int32_t vcpu;
	int32_t vm;
	uint64_t start;                /* 0 = no begin pending */
	bool keyed;                    /* the pending begin had a key */
	/* cfg.observe only: what the pending occurrence's events said */
	bool has_ip;
	uint64_t ip;
	const struct ks_event_class *detail;
	uint64_t detail_key;
	int32_t detail_info;
	uint64_t okey;                 /* the pending occurrence's key */
	int32_t oinfo, otable;
	struct ks_stat_row *pending[KS_STAT_MAX_VIEWS];
	struct ks_attr_thread attr;
	/* one cache per view in use without a direct index (view.cache):
	 * st->thread_size bytes in all */
	struct row_cache rows[][ROW_CACHE];
};

/* Threads are allocated in chunks of this many, never moved. */
#define THREAD_CHUNK 256

#define DIRECT_KEYS 1024

struct view {
	unsigned dims;
	/* Rows of a view by key alone (dims KS_DIM_KEY), for keys below
	 * DIRECT_KEYS with info and table 0 (most exit reasons): a direct
	 * index in front of the hash, filled as the hash creates them. */
	struct ks_stat_row **direct;
	struct ks_hmap rows;           /* ROW_ID_WORDS identity -> struct ks_stat_row * */
	struct ks_stat_row **sorted;   /* valid rows, perf's iteration order */
	size_t nsorted;
	int cache;                     /* a thread's row cache for it (no direct index) */
};

struct comm {
	int32_t tid;
	char name[32];
};

struct ks_stat {
	struct ks_stat_config cfg;
	/* direct-mapped caches in front of the hash tables (cleared when
	 * a table moves): by event pointer, and by thread id */
	struct event_role *role_cache[CACHE_SLOTS];
	struct thread *thread_cache[THREAD_SLOTS];
	const struct ks_arch *arch;
	struct tep_handle *tep;      /* the source's (its saved cmdlines), or NULL */
	const struct ks_source *src; /* asked for its saved cmdlines first (NULL: none) */
	const char *arch_source;
	const struct ks_event_class *cls;
	ks_key_compose_fn compose;  /* cls's, or its perf_compose in perf_compat */
	const struct ks_match *begin_rules, *end_rules; /* swapped for run */
	bool run;
	int variant;                   /* -1 undecided, 0 preferred, 1 fallback */
	struct ks_key_ctx key_ctx;
	bool isa_from_cpuid;
	struct ks_stat_anomalies anomalies;
	uint64_t next_seq;
	struct ks_attr_guests guests;
	/* VMs whose state is protected (a child of a state_protected class
	 * matched), in order of discovery; at most KS_STAT_MAX_PROTECTED. */
	int32_t protected_vms[KS_STAT_MAX_PROTECTED];
	size_t nprotected;

	struct ks_hmap roles;          /* event pointer -> struct event_role * */
	struct event_role spare_role;  /* inactive, when out of memory */

	struct ks_hmap threads;        /* tid -> struct thread * */
	size_t threads_used, thread_size;
	unsigned char **chunks;        /* the threads, THREAD_CHUNK a chunk */
	size_t nchunks;
	uint64_t max_threads;          /* limits.threads */
	const char *path;              /* the input, for errors */
	/* a thread past the budget or memory: records go here, harmlessly,
	 * once the engine has failed */
	struct thread *spare_thread;
	struct ks_stat_row spare_row;  /* what rows that could not be made count into
					* (never reported: the engine has failed) */
	bool failed;
	struct ks_error error;

	struct ks_hmap comms;          /* tid -> struct comm */

	int nviews;
	struct view views[KS_STAT_MAX_VIEWS];
	struct view begins;            /* keyed begin events counted one by one */

	const struct ks_attr_thread **attr_sorted;
	size_t nattr;

	struct ks_attr_thread *retired; /* ended lifetimes of threads with events */
	size_t nretired, retired_cap;
};

/* ---- cache slots ---- */

/* Fibonacci hashing: the top BITS bits of X times 2^64 / phi.  One
 * multiply, for the direct-mapped caches looked up per record. */
static inline size_t fib_hash(uint64_t x, unsigned bits)
{
	return (size_t)((x * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static void stat_fail(struct ks_stat *st, const struct ks_record *rec, const char *fmt,
		      const char *what);

/* calloc() that fails the engine (ks_stat_error() then says "out of
 * memory") instead of returning NULL unnoticed. */
static void *st_calloc(struct ks_stat *st, size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		stat_fail(st, NULL, "%s", "out of memory");
	return p;
}

/* ---- event roles ---- */

static bool match_event(const struct ks_match *m, const struct tep_event *ev)
{
	return m->name && !strcmp(m->name, ev->name) && !strcmp(m->system, ev->system);
}

/* Whether the input has the class's preferred event (decided once). */
static void decide_variant(struct ks_stat *st, struct tep_event *ev)
{
	if (st->variant >= 0)
		return;
	st->variant = 0;
	if (st->cls->preferred_name &&
	    !ks_tep_event(ev->tep, st->cls->preferred_system, st->cls->preferred_name))
		st->variant = 1;
}

static int find_rule(const struct ks_stat *st, const struct ks_match *rules, int max,
		     const struct tep_event *ev)
{
	int i;

	for (i = 0; i < max && rules[i].name; i++) {
		if (rules[i].fallback && st->variant == 0)
			continue;
		if (match_event(&rules[i], ev))
			return i;
	}
	return -1;
}

static void resolve_rule(const struct ks_match *m, struct tep_event *ev, struct rule_fields *f)
{
	if (m->cond_field)
		ks_field_resolve(&f->cond, ev, m->cond_field);
	if (m->key_field)
		ks_field_resolve(&f->key, ev, m->key_field);
	if (m->key2_field)
		ks_field_resolve(&f->key2, ev, m->key2_field);
	if (m->info_field)
		ks_field_resolve(&f->info, ev, m->info_field);
}

static bool is_named(const struct tep_event *ev, const char *system, const char *name)
{
	return name && system && !strcmp(ev->name, name) && !strcmp(ev->system, system);
}

static void init_entry_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	const struct ks_arch *a = st->arch;
	const char *vf = st->cfg.perf_compat ? a->perf.vcpu_field : a->entry_vcpu_field;

	r->is_entry = is_named(ev, a->entry_system, a->entry_name) ||
		      (!st->cfg.perf_compat && is_named(ev, a->entry_system, a->entry2_name));
	if (r->is_entry && vf)
		ks_field_resolve(&r->entry_vcpu, ev, vf);
	r->is_load = is_named(ev, "kvm", "vcpu_load") || is_named(ev, "kvm", "kvm_vcpu_load");
	r->is_put = is_named(ev, "kvm", "vcpu_put") || is_named(ev, "kvm", "kvm_vcpu_put");
	if (r->is_load && ks_field_resolve(&r->load_vcpu, ev, "vcpu_id") < 0)
		ks_field_resolve(&r->load_vcpu, ev, "id");
}

/* Whether A and B read the same bytes the same way (both present). */
static bool same_field(const struct ks_field *a, const struct ks_field *b)
{
	return a->present && b->present && a->offset == b->offset && a->size == b->size &&
	       a->is_signed == b->is_signed && a->swap == b->swap;
}

/* The short path (lane_event) an event of role R may take: a begin that
 * only opens an occurrence under its key (and may be counted under its
 * key), or an end that only closes it, with no filter, condition, child or
 * composed key to decide. */
enum { LANE_NONE, LANE_BEGIN, LANE_END };

static int lane_of(const struct ks_stat *st, const struct event_role *r)
{
	bool counted = r->count >= 0 && !st->cfg.no_begin_counts;

	if (r->child >= 0 || r->is_load || r->is_put || st->cfg.npids || st->cfg.vcpu >= 0 ||
	    st->compose)
		return LANE_NONE;
	/* a counted begin (count_begin) must be as plain as the lane's, and
	 * keyed by the same field, which the lane then reads once */
	if (counted && (r->begin < 0 || st->cls->begin[r->count].cond_field || r->nf.info.present ||
			!same_field(&r->nf.key, &r->bf.key)))
		return LANE_NONE;
	if (r->begin >= 0 && r->end < 0 && !r->is_entry && !st->begin_rules[r->begin].cond_field &&
	    r->bf.key.present && !r->bf.info.present)
		return LANE_BEGIN;
	if (r->end >= 0 && r->begin < 0 && !st->end_rules[r->end].cond_field &&
	    !r->ef.key.present && !r->ef.info.present)
		return LANE_END;
	return LANE_NONE;
}

/* The other classes' keyed events (cfg.observe): the first rule of a class
 * other than the one counted that names EV and a key field, and plays no
 * part in the counted class. */
static void find_detail(const struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	const struct ks_event_class *c;
	int i, side;

	for (c = st->arch->classes; c && c->name; c++) {
		if (c == st->cls)
			continue;
		for (side = 0; side < 2; side++)
			for (i = 0; i < KS_MAX_MATCH; i++) {
				const struct ks_match *m = side ? &c->end[i] : &c->begin[i];

				if (!m->name || !m->key_field || !match_event(m, ev) ||
				    ks_field_resolve(&r->detail_key, ev, m->key_field) < 0)
					continue;
				if (m->info_field)
					ks_field_resolve(&r->detail_info, ev, m->info_field);
				r->detail = c;
				return;
			}
	}
}

static void init_observe_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	if ((r->begin >= 0 || r->end >= 0) && st->arch->guest_ip_field)
		ks_field_resolve(&r->ip, ev, st->arch->guest_ip_field);
	if (r->begin < 0 && r->end < 0 && r->child < 0 && !r->is_entry)
		find_detail(st, r, ev);
	if (r->detail && !r->active)
		r->active = r->only_detail = true;
}

static void init_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	memset(r, 0, sizeof(*r));
	r->event = ev;
	decide_variant(st, ev);
	init_entry_role(st, r, ev);
	r->begin = find_rule(st, st->begin_rules, KS_MAX_MATCH, ev);
	r->end = find_rule(st, st->end_rules, KS_MAX_MATCH, ev);
	r->child = st->run ? -1 : find_rule(st, st->cls->child, KS_MAX_CHILD, ev);
	r->count = find_rule(st, st->cls->begin, KS_MAX_MATCH, ev);
	if (r->begin >= 0)
		resolve_rule(&st->begin_rules[r->begin], ev, &r->bf);
	if (r->end >= 0)
		resolve_rule(&st->end_rules[r->end], ev, &r->ef);
	if (r->child >= 0)
		resolve_rule(&st->cls->child[r->child], ev, &r->cf);
	if (r->count >= 0)
		resolve_rule(&st->cls->begin[r->count], ev, &r->nf);
	if ((r->begin >= 0 || r->end >= 0) && st->arch->exit_vcpu_field)
		ks_field_resolve(&r->exit_vcpu, ev, st->arch->exit_vcpu_field);
	/* the exit's name table selector (x86 kvm_exit isa), per the arch */
	if (st->arch->isa_field && (r->begin >= 0 || r->end >= 0 || r->count >= 0))
		ks_field_resolve(&r->isa, ev, st->arch->isa_field);
	r->active = r->is_entry || r->is_load || r->is_put || r->begin >= 0 || r->end >= 0 ||
		    r->child >= 0 || r->count >= 0;
	r->lane = lane_of(st, r);
	if (st->cfg.observe)
		init_observe_role(st, r, ev);
}

static struct event_role *role_lookup(struct ks_stat *st, struct tep_event *ev);

ALWAYS_INLINE struct event_role *role_of(struct ks_stat *st, struct tep_event *ev)
{
	/* by the tracepoint id: a system's events have consecutive ids, so
	 * the few a recording has never share a slot (hashing the pointer
	 * made kvm_exit and kvm_entry evict each other on some runs) */
	struct event_role **slot = &st->role_cache[(unsigned)ev->id & (CACHE_SLOTS - 1)];

	if (!*slot || (*slot)->event != ev) {
		*slot = role_lookup(st, ev); /* roles never move */
		return *slot;
	}
	return *slot;
}

/* The engine cannot go on (a budget, or memory): the first error is kept
 * for ks_stat_error(), and records are no longer counted. */
static void stat_fail(struct ks_stat *st, const struct ks_record *rec, const char *fmt,
		      const char *what)
{
	if (st->failed)
		return;
	st->failed = true;
	if (rec && st->path)
		ks_error_at(&st->error, st->path, rec->offset, fmt, what);
	else
		ks_error_set(&st->error, fmt, what);
}

static struct event_role *role_lookup(struct ks_stat *st, struct tep_event *ev)
{
	struct event_role **v;
	bool created;

	v = ks_hmap_put(&st->roles, (uintptr_t)ev, &created);
	if (v && !created)
		return *v;
	if (v) {
		*v = malloc(sizeof(**v));
		if (*v) {
			init_role(st, *v, ev);
			return *v;
		}
		ks_hmap_del(&st->roles, (uintptr_t)ev);
	}
	/* an inactive role (not cached: its event is NULL) ignores the event */
	stat_fail(st, NULL, "%s", "out of memory");
	return &st->spare_role;
}

/* ---- threads and names ---- */

static struct comm *comm_slot(struct ks_stat *st, int32_t tid, bool create);

/* A new thread's memory (zeroed), from the chunks; NULL if out of memory. */
static struct thread *thread_alloc(struct ks_stat *st)
{
	size_t i = st->threads_used % THREAD_CHUNK;

	if (i == 0 && st->threads_used / THREAD_CHUNK == st->nchunks) {
		unsigned char **c = realloc(st->chunks, (st->nchunks + 1) * sizeof(*c));

		if (!c)
			return NULL;
		st->chunks = c;
		c[st->nchunks] = calloc(THREAD_CHUNK, st->thread_size);
		if (!c[st->nchunks])
			return NULL;
		st->nchunks++;
	}
	return (struct thread *)(void *)(st->chunks[st->threads_used / THREAD_CHUNK] +
					 i * st->thread_size);
}

static struct thread *thread_at(const struct ks_stat *st, size_t i)
{
	return (struct thread *)(void *)(st->chunks[i / THREAD_CHUNK] +
					 (i % THREAD_CHUNK) * st->thread_size);
}

static void thread_reset(struct ks_stat *st, struct thread *t, int32_t tid)
{
	memset(t, 0, st->thread_size);
	t->tid = tid;
	t->vm = -1;
	t->vcpu = -1;
	ks_attr_thread_init(&t->attr, tid);
}

/* thread_of() behind a cache miss: the table's thread of TID, created
 * if needed (REC: the record asking, for the budget's error); fills the
 * cache SLOT. */
static __attribute__((noinline)) struct thread *thread_lookup(struct ks_stat *st, int32_t tid,
							      const struct ks_record *rec,
							      struct thread **slot)
{
	struct thread **v, *t;
	struct comm *c;
	bool created;
	char hint[96];

	v = ks_hmap_get(&st->threads, (uint32_t)tid);
	if (v)
		return *slot = *v;
	if (st->failed)
		goto spare;
	if (st->threads_used >= st->max_threads) {
		ks_limit_hint(hint, sizeof(hint), "threads", st->max_threads);
		stat_fail(st, rec, "more distinct threads than the budget allows %s", hint);
		goto spare;
	}
	t = thread_alloc(st);
	v = t ? ks_hmap_put(&st->threads, (uint32_t)tid, &created) : NULL;
	if (!v) {
		stat_fail(st, NULL, "%s", "out of memory");
		goto spare;
	}
	*v = t;
	st->threads_used++;
	free(st->attr_sorted); /* lists the threads there were */
	st->attr_sorted = NULL;
	thread_reset(st, t, tid);
	c = comm_slot(st, tid, false);
	if (c)
		ks_attr_set_comm(&t->attr, c->name);
	return *slot = t;
spare:
	/* not cached: the engine has failed and counts nothing more */
	thread_reset(st, st->spare_thread, tid);
	return st->spare_thread;
}

static inline struct thread *thread_of(struct ks_stat *st, const struct ks_record *rec,
				       int32_t tid)
{
	struct thread **slot = &st->thread_cache[(uint32_t)tid & (THREAD_SLOTS - 1)];

	if (*slot && (*slot)->tid == tid)
		return *slot;
	return thread_lookup(st, tid, rec, slot);
}

/* Names the input's saved cmdlines know (trace.dat), for threads without
 * a COMM record. */
static void comm_from_tep(const struct ks_stat *st, struct thread *t, const struct tep_event *ev)
{
	const char *name;

	if (t->attr.comm[0] || t->reused || !ev || !ev->tep)
		return;
	ks_source_tep_comms(st->src); /* parsed on this first lookup */
	name = tep_data_comm_from_pid(ev->tep, t->tid);
	if (name && strcmp(name, "<...>") && strcmp(name, "<idle>"))
		ks_attr_set_comm(&t->attr, name);
}

/* The thread of TID if it exists (no creation). */
static struct thread *thread_find(const struct ks_stat *st, int32_t tid)
{
	struct thread *const *v = ks_hmap_get(&st->threads, (uint32_t)tid);

	return v ? *v : NULL;
}

/* Thread TID ended: keep its attribution as a lifetime, start it afresh. */
static void retire_thread(struct ks_stat *st, int32_t tid)
{
	struct thread *t = tid > 0 ? thread_find(st, tid) : NULL;
	struct comm *c;

	if (!t)
		return;
	if (t->attr.events) {
		if (st->nretired == st->retired_cap) {
			size_t cap = st->retired_cap ? st->retired_cap * 2 : 16;
			struct ks_attr_thread *n = realloc(st->retired, cap * sizeof(*n));

			if (!n) {
				stat_fail(st, NULL, "%s", "out of memory");
				return;
			}
			st->retired = n;
			st->retired_cap = cap;
		}
		st->retired[st->nretired++] = t->attr;
		free(st->attr_sorted);
		st->attr_sorted = NULL;
	}
	thread_reset(st, t, tid);
	t->reused = true;
	c = comm_slot(st, tid, false);
	if (c)
		c->name[0] = '\0';
}

/* The name of TID, created (empty) if CREATE; NULL if absent or out of
 * memory.  Valid until the next creation. */
static struct comm *comm_slot(struct ks_stat *st, int32_t tid, bool create)
{
	struct comm *c;
	bool created;

	if (!create)
		return ks_hmap_get(&st->comms, (uint32_t)tid);
	c = ks_hmap_put(&st->comms, (uint32_t)tid, &created);
	if (!c)
		stat_fail(st, NULL, "%s", "out of memory");
	else
		c->tid = tid;
	return c;
}

const char *ks_stat_comm(const struct ks_stat *st, int32_t tid)
{
	struct comm *c = tid > 0 ? comm_slot((struct ks_stat *)st, tid, false) : NULL;

	return c ? c->name : NULL;
}

/* ---- rows ---- */

/* A row's identity, the key of its view's table (view.rows): the key, then
 * the int32s (VM, vCPU, thread, info, name table) two to a 64-bit word,
 * each whole, so that no two rows share an identity. */
enum { ROW_KEY, ROW_VM_VCPU, ROW_THREAD_INFO, ROW_TABLE, ROW_ID_WORDS };

static inline uint64_t pack2(int32_t hi, int32_t lo)
{
	return (uint64_t)(uint32_t)hi << 32 | (uint32_t)lo;
}

static inline int32_t hi32(uint64_t w)
{
	return (int32_t)(uint32_t)(w >> 32);
}

static inline int32_t lo32(uint64_t w)
{
	return (int32_t)(uint32_t)w;
}

/* A view over DIMS; one by key alone gets its direct index. */
static int view_init(struct ks_stat *st, struct view *v, unsigned dims)
{
	v->dims = dims;
	ks_hmap_init_wide(&v->rows, ROW_ID_WORDS, sizeof(struct ks_stat_row *));
	if (dims == KS_DIM_KEY && !(v->direct = st_calloc(st, DIRECT_KEYS, sizeof(*v->direct))))
		return -1;
	return 0;
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

/* The new row of identity ID in V; TABLE is the key's name table (the
 * row keeps it where the identity leaves it out: perf_compat).  The
 * identity comes as its words' values, so that the lookup's copy of it
 * can stay in registers. */
static __attribute__((noinline)) struct ks_stat_row *
row_create(struct ks_stat *st, struct view *v, uint64_t key, uint64_t vm_vcpu,
	   uint64_t thread_info, uint64_t id_table, int32_t table)
{
	const uint64_t id[ROW_ID_WORDS] = { key, vm_vcpu, thread_info, id_table };
	struct ks_stat_row **slot, *r;
	bool created;

	slot = ks_hmap_put_wide(&v->rows, id, &created);
	if (!slot) {
		stat_fail(st, NULL, "%s", "out of memory");
		return &st->spare_row;
	}
	r = st_calloc(st, 1, sizeof(*r));
	if (!r) {
		ks_hmap_del_wide(&v->rows, id);
		return &st->spare_row;
	}
	r->key = key;
	r->vm = hi32(vm_vcpu);
	r->vcpu = lo32(vm_vcpu);
	r->thread = hi32(thread_info);
	r->info = lo32(thread_info);
	r->table = (v->dims & KS_DIM_KEY) ? table : 0;
	r->seq = st->next_seq++;
	r->min_ns = UINT64_MAX;
	*slot = r;
	return r;
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
	return row_create(st, v, id[ROW_KEY], id[ROW_VM_VCPU], id[ROW_THREAD_INFO], id[ROW_TABLE],
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

struct key_val {
	bool has;
	uint64_t key;
	int32_t info, table;
};

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
	struct thread *t = rec->tid > 0 ? thread_find(st, rec->tid) : NULL;
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

/* The thread's VM and vCPU as rows see them: the host model's when the
 * engine has one (cfg.host), else its own. */
static void update_attribution(struct ks_stat *st, struct thread *t)
{
	const struct ks_attr_thread *a;

	if (st->cfg.perf_compat)
		return;
	ks_attr_resolve(&t->attr, &st->guests);
	a = st->cfg.host ? ks_host_find(st->cfg.host, t->tid) : NULL;
	if (!a)
		a = &t->attr;
	t->vcpu = a->vcpu;
	t->vm = a->vm;
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
		update_attribution(st, t);
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
		update_attribution(st, t);
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
		comm_from_tep(st, t, rec->event);
		update_attribution(st, t);
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

/* Whether the vCPU field F of REC (if the event has it) leaves the thread's
 * vCPU as it is: track_vcpu() would then change nothing. */
static inline bool vcpu_field_same(const struct ks_field *f, const struct thread *t,
				   const struct ks_record *rec)
{
	bool ok;
	int32_t v;

	if (!f->present)
		return true;
	v = (int32_t)ks_field_read(f, rec->data, rec->size, &ok);
	return !ok || v == t->attr.field_vcpu;
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
	if (!compat && (!vcpu_field_same(&r->exit_vcpu, t, rec) ||
			(r->is_entry && !vcpu_field_same(&r->entry_vcpu, t, rec))))
		return false;
	t->attr.events++;
	if (r->lane == LANE_BEGIN) {
		pick_isa(st, r, rec);
		k = (struct key_val){ .has = true, .key = ks_field_u64(&r->bf.key, rec) };
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

static void handle_comm(struct ks_stat *st, const struct ks_record *rec)
{
	struct comm *c;
	struct thread *t;

	if (rec->tid <= 0 || !rec->comm)
		return;
	c = comm_slot(st, rec->tid, true);
	if (!c)
		return;
	snprintf(c->name, sizeof(c->name), "%s", rec->comm);
	t = thread_of(st, rec, rec->tid);
	ks_attr_set_comm(&t->attr, rec->comm);
	if (rec->pid > 0) {
		t->vm = rec->pid;
		t->attr.tgid = rec->pid;
	}
	update_attribution(st, t);
}

/* Records other than events: names, task lifetimes, losses. */
static __attribute__((noinline)) void add_other(struct ks_stat *st, const struct ks_record *rec)
{
	struct thread *t;

	switch (rec->type) {
	case KS_REC_COMM:
		handle_comm(st, rec);
		break;
	case KS_REC_EXIT:
		/* perf kvm stat report handles no EXIT or FORK record (its tool
		 * has only sample, comm and namespaces): a reused tid goes on as
		 * the same thread there, pending exit and vCPU included. */
		if (!st->cfg.perf_compat)
			retire_thread(st, rec->tid);
		break;
	case KS_REC_FORK:
		t = rec->tid > 0 && !st->cfg.perf_compat ? thread_find(st, rec->tid) : NULL;
		if (t && t->attr.events)
			retire_thread(st, rec->tid); /* tid reused, its EXIT unseen */
		if (rec->tid > 0 && rec->pid > 0) {
			t = thread_of(st, rec, rec->tid);
			t->vm = rec->pid;
			t->attr.tgid = rec->pid;
			update_attribution(st, t);
		}
		break;
	case KS_REC_LOST:
		st->anomalies.lost_events += rec->lost;
		break;
	default:
		break;
	}
}

ALWAYS_INLINE void add_record(struct ks_stat *st, const struct ks_record *rec)
{
	if (rec->type != KS_REC_EVENT)
		add_other(st, rec);
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

int ks_stat_error(const struct ks_stat *st, struct ks_error *err)
{
	if (!st->failed)
		return 0;
	if (err)
		*err = st->error;
	return -1;
}

static bool plays_a_part(void *st, struct tep_event *ev)
{
	return role_of(st, ev)->active;
}

int ks_stat_select(struct ks_stat *st, struct ks_source *src)
{
	return ks_source_select(src, plays_a_part, st);
}

/* ---- setup and results ---- */

static const struct ks_arch *choose_arch(struct ks_stat *st, const struct ks_source_info *info,
					 struct tep_handle *tep, struct ks_error *err)
{
	const struct ks_arch *a = ks_arch_resolve(st->cfg.arch, info->arch, info->cpuid,
						  info->arch_from_events, tep, &st->arch_source);

	if (!a) {
		char names[256];

		ks_arch_name_list(names, sizeof(names));
		ks_error_set(err, "unknown architecture '%s' (%s)", st->cfg.arch, names);
	}
	return a;
}

static int choose_class(struct ks_stat *st, struct ks_error *err)
{
	enum ks_measure m = st->cfg.measure;
	char list[128];

	st->cls = ks_arch_class(st->arch, st->cfg.event_class ? st->cfg.event_class : "vmexit");
	if (!st->cls) {
		ks_arch_class_list(st->arch, list, sizeof(list));
		return ks_error_set(err, "unknown event class '%s' for %s (try %s)",
				    st->cfg.event_class, st->arch->name, list);
	}
	if (m == KS_MEASURE_PERF)
		m = st->arch->perf.measure == KS_ARCH_MEASURE_RUN && st->cls->run_ok ?
		    KS_MEASURE_RUN : KS_MEASURE_HANDLING;
	if (m == KS_MEASURE_RUN && !st->cls->run_ok)
		return ks_error_set(err, "--measure run needs an exit/entry class (vmexit), "
				    "not '%s'", st->cls->name);
	st->run = m == KS_MEASURE_RUN;
	st->compose = st->cfg.perf_compat && st->cls->perf_compose ? st->cls->perf_compose
								  : st->cls->compose;
	st->begin_rules = st->run ? st->cls->end : st->cls->begin;
	st->end_rules = st->run ? st->cls->begin : st->cls->end;
	st->variant = -1;
	return 0;
}

static struct ks_stat *stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
				struct tep_handle *tep, const struct ks_source *src,
				struct ks_error *err)
{
	const struct ks_source_guest *guests = NULL;
	size_t nguests = src ? ks_source_guests(src, &guests) : 0;
	struct ks_stat *st;
	size_t ncache;
	int i;

	st = calloc(1, sizeof(*st));
	if (!st) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	st->cfg = *cfg;
	st->arch = choose_arch(st, info, tep, err);
	if (!st->arch || choose_class(st, err) < 0) {
		free(st);
		return NULL;
	}
	if (ks_attr_guests_init(&st->guests, guests, nguests) < 0) {
		ks_attr_guests_free(&st->guests);
		free(st);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	ks_attr_guests_procs(&st->guests, src);
	if (tep && st->cls->preferred_name)
		st->variant = ks_tep_event(tep, st->cls->preferred_system,
					   st->cls->preferred_name) ? 0 : 1;
	/* perf decides VMX/SVM from the CPUID string only; we prefer it too
	 * when present and fall back on kvm_exit's isa field. */
	st->key_ctx.isa = ks_x86_isa_from_cpuid(info->cpuid);
	st->isa_from_cpuid = st->key_ctx.isa != KS_ISA_UNKNOWN;
	for (i = 0; i < KS_STAT_MAX_VIEWS && cfg->views[i]; i++)
		view_init(st, &st->views[i], cfg->views[i]);
	st->nviews = i ? i : 1;
	if (!i)
		view_init(st, &st->views[0], KS_DIM_KEY);
	view_init(st, &st->begins, KS_DIM_KEY);
	ks_hmap_init(&st->roles, sizeof(struct event_role *));
	ks_hmap_init(&st->threads, sizeof(struct thread *));
	ks_hmap_init(&st->comms, sizeof(struct comm));
	for (i = 0, ncache = 0; i < st->nviews; i++)
		if (!st->views[i].direct)
			st->views[i].cache = ncache++;
	st->thread_size = sizeof(struct thread) + ncache * sizeof(st->spare_thread->rows[0]);
	st->spare_thread = st_calloc(st, 1, st->thread_size);
	st->max_threads = ks_limits_or_default(cfg->limits)->threads;
	if (st->failed) {
		if (err)
			*err = st->error;
		ks_stat_free(st);
		return NULL;
	}
	return st;
}

struct ks_stat *ks_stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
			    struct ks_error *err)
{
	return stat_new(cfg, info, NULL, NULL, err);
}

struct ks_stat *ks_stat_new_source(const struct ks_stat_config *cfg, struct ks_source *src,
				   struct ks_error *err)
{
	struct ks_stat_config c = *cfg;
	struct ks_stat *st;

	if (!c.limits)
		c.limits = ks_source_limits(src);
	st = stat_new(&c, ks_source_info(src), ks_source_tep(src), src, err);
	if (st) {
		st->path = ks_source_path(src);
		st->tep = ks_source_tep(src);
		st->src = src;
	}
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
	struct event_role **role;
	size_t j, pos;
	uint64_t key;
	int i;

	if (!st)
		return;
	for (i = 0; i <= st->nviews; i++) {
		struct view *v = i < st->nviews ? &st->views[i] : &st->begins;
		struct ks_stat_row **r;
		const uint64_t *id;

		pos = 0;
		while ((r = ks_hmap_next_wide(&v->rows, &pos, &id)))
			free_row(*r);
		ks_hmap_free(&v->rows);
		free(v->sorted);
		free(v->direct);
	}
	ks_attr_guests_free(&st->guests);
	free(st->attr_sorted);
	free(st->retired);
	pos = 0;
	while ((role = ks_hmap_next(&st->roles, &pos, &key)))
		free(*role);
	ks_hmap_free(&st->roles);
	ks_hmap_free(&st->threads);
	ks_hmap_free(&st->comms);
	for (j = 0; j < st->nchunks; j++)
		free(st->chunks[j]);
	free(st->chunks);
	free(st->spare_thread);
	for (j = 0; j < 64; j++)
		free(st->spare_row.hist[j]);
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
	if (st->arch->isa_name)
		return st->arch->isa_name;
	if (st->key_ctx.isa == KS_ISA_UNKNOWN)
		return "unknown";
	return ks_x86_isa_name(st->key_ctx.isa);
}

const char *ks_stat_arch_name(const struct ks_stat *st)
{
	return st->arch->name;
}

const char *ks_stat_arch_source(const struct ks_stat *st)
{
	return st->arch_source;
}

const char *ks_stat_measure_name(const struct ks_stat *st)
{
	return st->run ? "run" : "handling";
}

const char *ks_stat_variant(const struct ks_stat *st)
{
	if (!st->cls->preferred_name)
		return NULL;
	return st->variant == 1 ? st->cls->variant_fallback : st->cls->variant_preferred;
}

int ks_stat_perf_decode_len(const struct ks_stat *st)
{
	return st->arch->perf.decode_len;
}

int ks_stat_perf_name_width(const struct ks_stat *st)
{
	return st->arch->perf.name_width > 0 ? st->arch->perf.name_width : 20;
}

/* The class's name of KEY/INFO of exit table TABLE (unknown ISA: VMX). */
static void key_name(const struct ks_stat *st, uint64_t key, int32_t info, int32_t table,
		     bool perf_style, char *buf, size_t len)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.isa = ks_x86_isa_or_default(ctx.isa);
	ctx.table = table;
	st->cls->key_name(&ctx, key, info, perf_style, buf, len);
}

void ks_stat_key_name(const struct ks_stat *st, const struct ks_stat_row *row, bool perf_style,
		      char *buf, size_t len)
{
	key_name(st, row->key, row->info, row->table, perf_style, buf, len);
}

void ks_stat_occurrence_key(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			    char *buf, size_t len)
{
	key_name(st, occ->key, occ->info, occ->table, false, buf, len);
}

bool ks_stat_occurrence_detail(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			       char *buf, size_t len)
{
	const struct ks_event_class *c;

	if (len)
		buf[0] = '\0';
	for (c = st->arch->classes; occ->detail_class && c && c->name; c++)
		if (!strcmp(c->name, occ->detail_class)) {
			struct ks_key_ctx ctx = st->key_ctx;

			ctx.table = 0;
			c->key_name(&ctx, occ->detail_key, occ->detail_info, false, buf, len);
			return true;
		}
	return false;
}

size_t ks_stat_protected_vms(const struct ks_stat *st, const int32_t **vms)
{
	*vms = st->protected_vms;
	return st->nprotected;
}

bool ks_stat_state_protected(const struct ks_stat *st)
{
	return st->cls->state_protected;
}

const struct ks_stat_anomalies *ks_stat_anomalies(const struct ks_stat *st)
{
	return &st->anomalies;
}

/* ---- attribution results ---- */

size_t ks_stat_attribution(const struct ks_stat *cst, const struct ks_attr_thread ***out)
{
	struct ks_stat *st = (struct ks_stat *)cst;
	size_t i;

	if (!st->attr_sorted) {
		st->attr_sorted = st_calloc(st, st->threads_used + st->nretired + 1,
					    sizeof(*st->attr_sorted));
		st->nattr = 0;
		if (!st->attr_sorted) { /* ks_stat_error() says so */
			*out = NULL;
			return 0;
		}
		for (i = 0; i < st->nretired; i++)
			st->attr_sorted[st->nattr++] = &st->retired[i];
		for (i = 0; i < st->threads_used; i++)
			if (thread_at(st, i)->tid && thread_at(st, i)->attr.events)
				st->attr_sorted[st->nattr++] = &thread_at(st, i)->attr;
		qsort(st->attr_sorted, st->nattr, sizeof(*st->attr_sorted), ks_attr_cmp);
	}
	*out = st->attr_sorted;
	return st->nattr;
}

const char *ks_stat_vm_name(const struct ks_stat *st, int32_t vm)
{
	const char *name;
	uint32_t i;

	if (st->cfg.host && !st->cfg.perf_compat)
		return ks_host_vm_name(st->cfg.host, vm);
	for (i = 0; i < st->guests.n; i++)
		if (st->guests.g[i].vm == vm)
			return st->guests.g[i].name;
	if ((name = ks_attr_proc_name(&st->guests, vm)))
		return name;
	name = vm > 0 ? ks_stat_comm(st, vm) : NULL;
	if (!name && vm > 0) {
		const struct thread *t = thread_find(st, vm);

		name = t && t->attr.comm[0] ? t->attr.comm : NULL;
	}
	/* a process without events of its own (a trace.dat's VM known from
	 * kvmscope's tgids option): its saved cmdline; perf names by COMM
	 * records only */
	if (!name && vm > 0 && st->tep && !st->cfg.perf_compat &&
	    tep_is_pid_registered(ks_source_tep_comms(st->src), vm)) {
		name = tep_data_comm_from_pid(st->tep, vm);
		if (name && !strcmp(name, "<...>"))
			name = NULL;
	}
	/* a vCPU thread's name is not the VM's */
	return name && ks_attr_vcpu_from_name(name) < 0 ? name : NULL;
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
	struct ks_stat_row **r;
	const uint64_t *id;
	struct view *v;
	size_t pos = 0;

	*rows = NULL;
	if (vi < KS_STAT_BEGINS || vi >= st->nviews)
		return 0;
	v = vi == KS_STAT_BEGINS ? &st->begins : &st->views[vi];
	if (!v->sorted) {
		v->sorted = st_calloc((struct ks_stat *)st, ks_hmap_len(&v->rows) + 1,
				      sizeof(*v->sorted));
		if (!v->sorted) /* ks_stat_error() says so */
			return 0;
		while ((r = ks_hmap_next_wide(&v->rows, &pos, &id)))
			if ((*r)->count)
				v->sorted[v->nsorted++] = *r;
		qsort(v->sorted, v->nsorted, sizeof(*v->sorted), perf_iteration_cmp);
	}
	*rows = v->sorted;
	return v->nsorted;
}

void ks_stat_open(const struct ks_stat *st, int vi,
		  void (*fn)(void *ctx, const struct ks_stat_row *row, uint64_t begin_ns),
		  void *ctx)
{
	size_t i;

	if (vi < 0 || vi >= st->nviews)
		return;
	for (i = 0; i < st->threads_used; i++) {
		const struct thread *t = thread_at(st, i);

		if (t->tid && t->start && t->pending[vi])
			fn(ctx, t->pending[vi], t->start);
	}
}

int ks_stat_nviews(const struct ks_stat *st)
{
	return st->nviews;
}

unsigned ks_stat_view_dims(const struct ks_stat *st, int vi)
{
	return vi >= 0 && vi < st->nviews ? st->views[vi].dims : 0;
}

bool ks_stat_row_halts(const struct ks_stat *st, const struct ks_stat_row *row)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.table = row->table;
	return ks_arch_exit_halts(st->arch, &ctx, row->key);
}

bool ks_stat_key_known(const struct ks_stat *st, const struct ks_stat_row *row)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.isa = ks_x86_isa_or_default(ctx.isa);
	ctx.table = row->table;
	return !st->cls->key_known || st->cls->key_known(&ctx, row->key);
}

/* ---- sorting ---- */

struct sort_item {
	struct ks_stat_row *row;
	size_t pos;
	char name[64];
};

struct sort_mode {
	int by;             /* BY_* */
	bool ties_by_name;  /* perf's hists: equal rows in name order */
};

enum { BY_SAMPLE, BY_TIME, BY_MEAN, BY_MAX, BY_MIN, BY_NAME, BY_P99, BY_PERF_MEAN };

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int sort_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_item *x = a, *y = b;
	const struct sort_mode *m = ctx;
	int c = 0;

	switch (m->by) {
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
	if (m->ties_by_name && (c = strcmp(x->name, y->name)))
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos ? 1 : 0;
}

struct sort_key {
	const char *name;
	int mode, perf_mode;
};

static const struct sort_key sort_keys[] = {
	{ "sample", BY_SAMPLE, BY_SAMPLE }, { "time", BY_TIME, BY_PERF_MEAN },
	{ "mean_t", BY_MEAN, BY_MEAN },     { "max_t", BY_MAX, BY_MAX },
	{ "min_t", BY_MIN, BY_MIN },        { "ev_name", BY_NAME, BY_NAME },
	{ "p99", BY_P99, BY_P99 },
};

bool ks_stat_sort_key_valid(const char *key)
{
	for (size_t k = 0; k < sizeof(sort_keys) / sizeof(sort_keys[0]); k++)
		if (!strcmp(sort_keys[k].name, key))
			return true;
	return false;
}

int ks_stat_sort(const struct ks_stat *st, struct ks_stat_row **rows, size_t n, const char *key,
		 struct ks_error *err)
{
	struct sort_item *items;
	struct sort_mode mode;
	size_t i, k;

	for (k = 0; k < sizeof(sort_keys) / sizeof(sort_keys[0]); k++)
		if (!strcmp(sort_keys[k].name, key))
			break;
	if (k == sizeof(sort_keys) / sizeof(sort_keys[0]))
		return ks_error_set(err, "unknown sort key '%s' (use sample, time, mean_t, max_t, "
				    "min_t, ev_name or p99)", key);
	/* perf 6.1's "time" sorts by mean time; newer perf (hists) and we
	 * by total. */
	mode.ties_by_name = st->cfg.perf_compat && st->arch->perf.hists;
	mode.by = st->cfg.perf_compat && !mode.ties_by_name ? sort_keys[k].perf_mode :
								  sort_keys[k].mode;
	items = calloc(n + 1, sizeof(*items));
	if (!items)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		items[i].row = rows[i];
		items[i].pos = i;
		if (sort_keys[k].mode == BY_NAME || mode.ties_by_name)
			ks_stat_key_name(st, rows[i], mode.ties_by_name, items[i].name,
					 sizeof(items[i].name));
	}
	qsort_r(items, n, sizeof(*items), sort_cmp, &mode);
	for (i = 0; i < n; i++)
		rows[i] = items[i].row;
	free(items);
	return 0;
}
