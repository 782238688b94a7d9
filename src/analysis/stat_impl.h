/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_impl.h - what the stat engine's files share: its state (struct
 * ks_stat: event roles, threads, views of rows) and the functions one
 * gives the others.  The engine's files, by job:
 *
 *   stat.c          records in: the per-thread begin/end state machine and
 *                   its hot batch path (ks_stat_add_batch), aggregates in
 *   stat_roles.c    what each tracepoint means for the chosen class
 *   stat_threads.c  threads: their names, lifetimes and attribution
 *   stat_rows.c     the views' tables of rows and their histograms
 *   stat_sort.c     names and sort orders of rows, for the reports
 *   stat_setup.c    the engine's creation, teardown and answers about it
 *
 * The hot path's pieces stay in stat.c (ALWAYS_INLINE there); what is
 * here is what the other files need, and the lookups the hot path inlines
 * from here (thread_of) are as small as they were.
 */
#ifndef KVMSCOPE_STAT_IMPL_H
#define KVMSCOPE_STAT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/attribution.h"
#include "kvmscope/field.h"
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
	/* the lane's name tables (of its begin or end rule, and of the
	 * counted begin rule), whether it counts begins, and whether its
	 * key alone finds its row (key_alone()) */
	int32_t lane_table, count_table;
	bool lane_count, lane_by_key;
	/* lane_read(): which of the lane's fields are 4-byte unsigned in
	 * host order (most are), read without ks_field_read()'s cases; and
	 * whether an entry's vCPU field is another than the exit_vcpu one
	 * (the lane reads a field it has already compared once only) */
	bool key_u32, exit_vcpu_u32, entry_vcpu_u32, entry_vcpu_own;
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
	/* one view, by key alone (a direct index), and no hook: lane_event()
	 * takes its plain steps (kvmscope stat --format perf, the table) */
	bool plain;
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

/* Fibonacci hashing: the top BITS bits of X times 2^64 / phi.  One
 * multiply, for the direct-mapped caches looked up per record. */
static inline size_t fib_hash(uint64_t x, unsigned bits)
{
	return (size_t)((x * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* The short path (lane_event) an event of role R may take: a begin that
 * only opens an occurrence under its key (and may be counted under its
 * key), or an end that only closes it, with no filter, condition, child or
 * composed key to decide. */
enum { LANE_NONE, LANE_BEGIN, LANE_END };

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

struct key_val {
	bool has;
	uint64_t key;
	int32_t info, table;
};

/* ---- shared between the engine's files ---- */

/* stat_setup.c: failing the engine, and allocation that fails it */
void stat_fail(struct ks_stat *st, const struct ks_record *rec, const char *fmt,
	       const char *what);
void *stat_calloc(struct ks_stat *st, size_t n, size_t size);

/* stat_roles.c: the role of a tracepoint, made on its first record */
struct event_role *stat_role_lookup(struct ks_stat *st, struct tep_event *ev);

/* stat_threads.c: threads, their names, lifetimes and attribution */
struct thread *stat_thread_lookup(struct ks_stat *st, int32_t tid, const struct ks_record *rec,
				  struct thread **slot);
struct thread *stat_thread_find(const struct ks_stat *st, int32_t tid);
void stat_comm_from_tep(const struct ks_stat *st, struct thread *t, const struct tep_event *ev);
void stat_update_attribution(struct ks_stat *st, struct thread *t);
void stat_add_other(struct ks_stat *st, const struct ks_record *rec);

/* stat_rows.c: the views' tables of rows */
int stat_view_init(struct ks_stat *st, struct view *v, unsigned dims);
struct ks_stat_row *stat_row_create(struct ks_stat *st, struct view *v, uint64_t key,
				    uint64_t vm_vcpu, uint64_t thread_info, uint64_t id_table,
				    int32_t table);

/* The thread of TID (stat_thread_lookup() behind the direct-mapped cache). */
static inline struct thread *thread_of(struct ks_stat *st, const struct ks_record *rec,
				       int32_t tid)
{
	struct thread **slot = &st->thread_cache[(uint32_t)tid & (THREAD_SLOTS - 1)];

	if (*slot && (*slot)->tid == tid)
		return *slot;
	return stat_thread_lookup(st, tid, rec, slot);
}

#endif
