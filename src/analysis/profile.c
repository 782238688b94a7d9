/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.c - guest profile engine behind `kvmscope report` (profile.h).
 *
 * Hot path: one hash lookup per sample into a table of distinct
 * (VM, vCPU, mode, reason, address) entries with counts and handling times.
 * Symbols are resolved once per entry when rows are built.  Threads are
 * tracked for their vCPU (kvm_entry vcpu_id, GUEST option, "CPU N/KVM"
 * comm) and their pending exit (exit -> entry handling time).
 *
 * Memory: the entry table holds at most limits.tables / 256 entries; when
 * it is full it is written, sorted by (address, context), as a run to a
 * temporary file (util/spill.h) and emptied.  Rows then come from a merge
 * of the runs, so every count stays exact; only a table of rows per
 * address (--offsets) that would outgrow the budget keeps its top rows and
 * folds the rest into one "[other]" row (ks_profile_rows_folded()).  The
 * stacks of --folded go to the same file past a quarter of the budget.
 */
#include <errno.h>
#include <event-parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "arch/arch.h"
#include "kvmscope/host.h"
#include "kvmscope/field.h"
#include "kvmscope/limits.h"
#include "kvmscope/profile.h"
#include "kvmscope/source.h"
#include "symbols/symtab.h"
#include "util/hashmap.h"
#include "util/spill.h"

/* include/uapi/linux/perf_event.h */
#define MISC_CPUMODE_MASK 7
#define MISC_GUEST_KERNEL 4
#define MISC_GUEST_USER 5
#define CTX_GUEST ((uint64_t)-2048)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER ((uint64_t)-2560)
#define CTX_MAX ((uint64_t)-4095)

/* Reason keys: the architecture (index in ks_arches + 1) in bits 40..47,
 * the selector (x86 isa, else the name table) in bits 32..39, the code
 * below (see ks_arch_report_reason()). */
#define RK_NONE UINT64_MAX
#define RK_KIND(k) ((k) >> 40)
#define RK(arch, sel, code) (((uint64_t)(arch) << 40) | ((uint64_t)((sel) & 0xff) << 32) | \
			     ((code) & 0xffffffffull))

enum ev_kind { EV_OTHER = 0, EV_EXIT, EV_ENTRY };

struct ev_info {          /* per tracepoint format, cached by event pointer */
	struct tep_event *ev;
	enum ev_kind kind;
	struct ks_arch_exit x;
};

/* A --sample-exits reason: -1 members match any. */
struct sample_key {
	int32_t arch, sel;
	uint64_t code;
};

struct entry {
	int32_t vm, vcpu;
	uint64_t ip, reason;
	uint8_t mode;
	uint64_t count, handled, time_ns;
	/* resolved at row time */
	const char *dso, *sym;
	uint64_t offset;
};

/* Value of the entry table, keyed by (address, context id: the interned
 * VM, vCPU, mode and reason, so the key is exact without looking at the
 * entry): the entry's index and its count, so that a repeated sample
 * touches one slot. */
struct eslot {
	uint64_t count;
	uint32_t idx;            /* entry index + 1 */
};

struct ctx {
	int32_t vm, vcpu;
	uint8_t mode;
	uint64_t reason;
};

/* Pending-exit state of a host thread; its VM and vCPU come from the host
 * model (kvmscope/host.h). */
struct thread {
	int32_t tid;
	int64_t pending;       /* entry index of the exit waiting for its entry, -1 */
	uint64_t pending_ts;
	/* the pending entry's key and the table generation its index is of
	 * (the table may have been spilled and emptied since) */
	uint64_t pending_ip;
	uint32_t pending_ctx, pending_gen;
	bool used;
};

/* An entry as a spilled run holds it: runs are sorted by (ip, ctx). */
struct erec {
	uint64_t ip;
	uint32_t ctx, pad;
	uint64_t count, handled, time_ns;
};

struct stack {
	int32_t vm;
	uint32_t nframes;
	uint64_t user_mask;    /* bit i: frame i is guest user */
	uint64_t count;
	uint32_t next;         /* next stack of the same hash, index + 1; 0: none */
	uint64_t *frames;      /* leaf first */
};

struct vm_syms {
	int32_t vm;
	const struct ks_symtab *kernel, *user;
};

struct vm_name {
	int32_t vm;
	char *name;
};

struct ks_profile {
	struct ks_profile_config cfg;
	int default_isa;
	const struct ks_arch *arch;  /* from the source info, else the formats */
	bool arch_tried;
	struct sample_key sample_keys[KS_PROF_MAX_SAMPLE_EXITS];
	int nsample_keys;

	struct ev_info *evs;     /* every event met, classified once (grows) */
	int nevs, evcap;

	struct entry *entries;
	size_t nentries, entcap;
	struct ks_hmap ehash;    /* (ip, ctx id) -> struct eslot */
	struct ctx *ctxs;
	size_t nctxs, ctxcap;
	struct ks_hmap chash;    /* (vm:vcpu, reason, mode) -> uint32_t ctx index */

	struct ks_hmap threads;  /* tid -> struct thread */
	int32_t protected_vms[KS_PROF_MAX_PROTECTED];
	size_t nprotected;
	struct ks_host *host;    /* threads -> VM and vCPU */
	uint64_t max_threads;    /* limits.threads */
	bool failed;             /* over the budget or out of memory: stopped */
	struct ks_error error;

	struct stack *stacks;
	size_t nstacks, stcap;
	struct ks_hmap shash;    /* stack_hash -> first stack index + 1 */

	struct vm_syms *syms;    /* grows: one per VM given symbols */
	int nsyms, symcap;
	struct vm_name *names;
	size_t nnames;
	int32_t *vms;
	size_t nvms;

	struct ks_profile_totals tot;

	/* the budget (limits.tables) and what spilled past it */
	size_t max_entries;      /* entries in the table at most */
	uint32_t gen;            /* times the table was spilled and emptied */
	struct ks_spill sp;      /* the temporary file of the runs and stacks */
	struct ks_rlog *runs;    /* sorted runs of entries */
	size_t nruns;
	uint64_t stack_bytes, max_stack_bytes;
	struct ks_rlog stk;      /* spilled stacks: words vm<<32|n, umask, count, frames */
	uint64_t folded_rows;    /* rows the last ks_profile_rows() folded into [other] */
	size_t max_rows;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* ---- threads ---- */

/* The thread TID, created if new; NULL once the profile has failed (REC,
 * if any, names the offset of a budget error). */
static struct thread *thread_get(struct ks_profile *p, int32_t tid, const struct ks_record *rec)
{
	struct thread *t;
	bool created;
	char hint[96];

	t = ks_hmap_get(&p->threads, (uint32_t)tid);
	if (t || p->failed)
		return t;
	if (ks_hmap_len(&p->threads) >= p->max_threads) {
		ks_limit_hint(hint, sizeof(hint), "threads", p->max_threads);
		p->failed = true;
		if (rec && p->cfg.path)
			ks_error_code_at(&p->error, KS_E_LIMIT, p->cfg.path, rec->offset,
				    "more distinct threads than the budget allows %s", hint);
		else
			ks_error_code(&p->error, KS_E_LIMIT,
				      "%s: more distinct threads than the budget allows %s",
				      p->cfg.path ? p->cfg.path : "input", hint);
		return NULL;
	}
	t = ks_hmap_put(&p->threads, (uint32_t)tid, &created);
	if (!t) {
		p->failed = true;
		ks_error_code(&p->error, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	t->used = true;
	t->tid = tid;
	t->pending = -1;
	return t;
}

int ks_profile_error(const struct ks_profile *p, struct ks_error *err)
{
	if (!p->failed)
		return 0;
	if (err)
		*err = p->error;
	return -1;
}

int ks_profile_set_guests(struct ks_profile *p, const struct ks_source *src,
			  struct ks_error *err)
{
	struct ks_host *h = ks_host_new(NULL, src, err);

	if (!h)
		return -1;
	ks_host_free(p->host);
	ks_host_set_limits(h, p->cfg.limits);
	p->host = h;
	return 0;
}

struct ks_host *ks_profile_host(const struct ks_profile *p)
{
	return p->host;
}

void ks_profile_set_vm_name(struct ks_profile *p, int32_t vm, const char *name)
{
	struct vm_name *n;
	size_t i;

	for (i = 0; i < p->nnames; i++) {
		if (p->names[i].vm == vm) {
			char *s = strdup(name);

			if (s) {
				free(p->names[i].name);
				p->names[i].name = s;
			}
			return;
		}
	}
	n = realloc(p->names, (p->nnames + 1) * sizeof(*n));
	if (!n)
		return;
	p->names = n;
	n[p->nnames].vm = vm;
	n[p->nnames].name = strdup(name);
	if (n[p->nnames].name)
		p->nnames++;
}

const char *ks_profile_vm_name(const struct ks_profile *p, int32_t vm)
{
	size_t i;

	for (i = 0; i < p->nnames; i++)
		if (p->names[i].vm == vm)
			return p->names[i].name;
	return ks_host_vm_name(p->host, vm);
}

static void note_vm(struct ks_profile *p, int32_t vm)
{
	size_t i;

	for (i = p->nvms; i-- > 0;)
		if (p->vms[i] == vm)
			return;
	int32_t *n = realloc(p->vms, (p->nvms + 1) * sizeof(*n));
	if (!n)
		return;
	p->vms = n;
	p->vms[p->nvms++] = vm;
}

size_t ks_profile_protected_vms(const struct ks_profile *p, const int32_t **vms)
{
	*vms = p->protected_vms;
	return p->nprotected;
}

size_t ks_profile_vms(const struct ks_profile *p, const int32_t **vms)
{
	*vms = p->vms;
	return p->nvms;
}

/* ---- entries ---- */

/* Id of the context (VM, vCPU, mode, reason), interned; -1 on memory. */
static int64_t ctx_get(struct ks_profile *p, int32_t vm, int32_t vcpu, uint8_t mode,
		       uint64_t reason)
{
	const uint64_t key[3] = { ((uint64_t)(uint32_t)vm << 32) | (uint32_t)vcpu, reason, mode };
	uint32_t *v;
	bool created;

	v = ks_hmap_get_wide(&p->chash, key);
	if (v)
		return *v;
	if (p->nctxs == p->ctxcap) {
		size_t cap = p->ctxcap ? p->ctxcap * 2 : 64;
		struct ctx *n;

		if (cap > UINT32_MAX - 1)
			return -1;
		n = realloc(p->ctxs, cap * sizeof(*n));
		if (!n)
			return -1;
		p->ctxs = n;
		p->ctxcap = cap;
	}
	v = ks_hmap_put_wide(&p->chash, key, &created);
	if (!v)
		return -1;
	*v = (uint32_t)p->nctxs;
	p->ctxs[p->nctxs] = (struct ctx){ .vm = vm, .vcpu = vcpu, .mode = mode, .reason = reason };
	return (int64_t)p->nctxs++;
}

static int erec_cmp(const void *a, const void *b)
{
	const struct erec *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* The entry table, sorted by (ip, ctx), as one more run in the temporary
 * file; the table is emptied (a new generation of indexes).  0 or -1. */
static int spill_entries(struct ks_profile *p)
{
	const uint64_t *key;
	const struct eslot *sl;
	struct erec *recs;
	struct ks_rlog *runs, *run;
	size_t pos = 0, n = 0, i;

	if (!p->nentries)
		return 0;
	runs = realloc(p->runs, (p->nruns + 1) * sizeof(*runs));
	recs = malloc(p->nentries * sizeof(*recs));
	if (!runs || !recs) {
		free(recs);
		if (runs)
			p->runs = runs;
		return -1;
	}
	p->runs = runs;
	while ((sl = ks_hmap_next_wide(&p->ehash, &pos, &key))) {
		const struct entry *e = &p->entries[sl->idx - 1];

		recs[n++] = (struct erec){ .ip = key[0], .ctx = (uint32_t)key[1], .count = sl->count,
					   .handled = e->handled, .time_ns = e->time_ns };
	}
	qsort(recs, n, sizeof(*recs), erec_cmp);
	run = &p->runs[p->nruns++];
	ks_rlog_init(run, &p->sp, sizeof(*recs), 32u << 10);
	for (i = 0; i < n; i++) {
		struct erec *r = ks_rlog_push(run);

		if (!r)
			break;
		*r = recs[i];
	}
	free(recs);
	if (i < n || ks_rlog_seal(run) < 0)
		return -1;
	ks_hmap_free(&p->ehash);
	ks_hmap_init_wide(&p->ehash, 2, sizeof(struct eslot));
	p->nentries = 0;
	p->gen++;
	return 0;
}

/* The spill failed: the profile stops with its reason. */
static void spill_failed(struct ks_profile *p)
{
	if (!p->failed && ks_spill_error(&p->sp, &p->error) == 0)
		ks_error_code(&p->error, KS_E_NOMEM, "out of memory");
	p->failed = true;
}

/* The slot of the entry of context C (created with count 0 if new); NULL
 * on memory.  Valid until the next entry_get. */
static struct eslot *entry_get_ctx(struct ks_profile *p, int64_t c, uint64_t ip)
{
	const struct ctx *cx;
	uint64_t key[2] = { ip, (uint64_t)c };
	struct eslot *sl;
	bool created;

	if (c < 0)
		return NULL;
	sl = ks_hmap_get_wide(&p->ehash, key);
	if (sl)
		return sl;
	if (p->nentries >= p->max_entries && spill_entries(p) < 0) {
		spill_failed(p);
		return NULL;
	}
	if (p->nentries == p->entcap) {
		size_t cap = p->entcap ? p->entcap * 2 : 1024;
		struct entry *n;

		if (cap > p->max_entries)
			cap = p->max_entries;
		if (cap > UINT32_MAX - 1)
			return NULL;
		n = realloc(p->entries, cap * sizeof(*n));
		if (!n)
			return NULL;
		p->entries = n;
		p->entcap = cap;
	}
	sl = ks_hmap_put_wide(&p->ehash, key, &created);
	if (!sl)
		return NULL;
	cx = &p->ctxs[c];
	p->entries[p->nentries] = (struct entry){ .vm = cx->vm, .vcpu = cx->vcpu, .mode = cx->mode,
						  .reason = cx->reason, .ip = ip };
	*sl = (struct eslot){ .idx = (uint32_t)p->nentries + 1 };
	p->nentries++;
	note_vm(p, cx->vm);
	return sl;
}

static struct eslot *entry_get(struct ks_profile *p, int32_t vm, int32_t vcpu, uint8_t mode,
			       uint64_t reason, uint64_t ip)
{
	return entry_get_ctx(p, ctx_get(p, vm, vcpu, mode, reason), ip);
}

/* Copy the slot counts into the entries (before building rows). */
static void sync_counts(struct ks_profile *p)
{
	const uint64_t *key;
	const struct eslot *sl;
	size_t pos = 0;

	while ((sl = ks_hmap_next_wide(&p->ehash, &pos, &key)))
		p->entries[sl->idx - 1].count = sl->count;
}

/* ---- stacks ---- */

static uint64_t stack_hash(int32_t vm, const uint64_t *f, uint32_t n, uint64_t umask)
{
	uint64_t h = mix((uint64_t)(uint32_t)vm ^ umask ^ ((uint64_t)n << 40));
	uint32_t i;

	for (i = 0; i < n; i++)
		h = mix(h ^ f[i]);
	return h;
}

/* Bytes a stack of N frames costs in the table (frames, its malloc, its
 * entry and hash slot). */
static uint64_t stack_cost(uint32_t n)
{
	return (uint64_t)n * sizeof(uint64_t) + 16 + sizeof(struct stack) + 32;
}

/* Every stack of the table to the temporary file (the words vm<<32|n,
 * user mask, count, then the frames) and the table emptied.  0 or -1. */
static int spill_stacks(struct ks_profile *p)
{
	size_t i;
	uint32_t k;

	if (!p->stk.rsize)
		ks_rlog_init(&p->stk, &p->sp, sizeof(uint64_t), 64u << 10);
	for (i = 0; i < p->nstacks; i++) {
		struct stack *s = &p->stacks[i];
		uint64_t hdr[3] = { ((uint64_t)(uint32_t)s->vm << 32) | s->nframes, s->user_mask,
				    s->count };

		for (k = 0; k < 3 + s->nframes; k++) {
			uint64_t *w = ks_rlog_push(&p->stk);

			if (!w)
				return -1;
			*w = k < 3 ? hdr[k] : s->frames[k - 3];
		}
		free(s->frames);
	}
	p->nstacks = 0;
	p->stack_bytes = 0;
	ks_hmap_free(&p->shash);
	ks_hmap_init(&p->shash, sizeof(uint32_t));
	return 0;
}

/* Count one more of the stack (VM, F[0..N), UMASK), added if new.  The
 * table maps the stack's hash to the first stack with it; stacks of one
 * hash are chained through their next and compared whole. */
static void stack_add(struct ks_profile *p, int32_t vm, const uint64_t *f, uint32_t n,
		      uint64_t umask)
{
	uint64_t h = stack_hash(vm, f, n, umask);
	uint32_t *head, k;
	bool created;

	head = ks_hmap_get(&p->shash, h);
	for (k = head ? *head : 0; k; k = p->stacks[k - 1].next) {
		struct stack *s = &p->stacks[k - 1];

		if (s->vm == vm && s->nframes == n && s->user_mask == umask &&
		    !memcmp(s->frames, f, n * sizeof(*f))) {
			s->count++;
			return;
		}
	}
	if (p->stack_bytes + stack_cost(n) > p->max_stack_bytes && p->nstacks) {
		if (spill_stacks(p) < 0) {
			spill_failed(p);
			return;
		}
		head = NULL;
	}
	if (p->nstacks == p->stcap) {
		size_t cap = p->stcap ? p->stcap * 2 : 1024;
		struct stack *ns;

		if (cap > UINT32_MAX - 1)
			return;
		ns = realloc(p->stacks, cap * sizeof(*ns));
		if (!ns)
			return;
		p->stacks = ns;
		p->stcap = cap;
	}
	/* a new key holds 0 (no stack) until the stack is complete */
	head = ks_hmap_put(&p->shash, h, &created);
	if (!head)
		return;
	struct stack *s = &p->stacks[p->nstacks];
	s->frames = malloc(n * sizeof(*f));
	if (!s->frames)
		return;
	memcpy(s->frames, f, n * sizeof(*f));
	s->vm = vm;
	s->nframes = n;
	s->user_mask = umask;
	s->count = 1;
	s->next = *head;
	*head = (uint32_t)p->nstacks + 1;
	p->nstacks++;
	p->stack_bytes += stack_cost(n);
}

/* ---- setup ---- */

static int arch_index(const struct ks_arch *a)
{
	int i;

	for (i = 0; ks_arches[i]; i++)
		if (ks_arches[i] == a)
			return i + 1;
	return 0;
}

/* NAME as a reason of any architecture (the first that knows it), or a
 * number: that code in every architecture and table. */
static int parse_sample_exits(struct ks_profile *p, struct ks_error *err)
{
	int i, a;

	for (i = 0; i < p->cfg.nsample_exits; i++) {
		const char *name = p->cfg.sample_exits[i];
		struct sample_key *k = &p->sample_keys[p->nsample_keys];
		unsigned long long v;
		char *end;

		if (p->nsample_keys == KS_PROF_MAX_SAMPLE_EXITS)
			return ks_error_code(err, KS_E_USAGE, "too many --sample-exits reasons");
		for (a = 0; ks_arches[a]; a++)
			if (ks_arch_exit_code(ks_arches[a], name, &k->sel, &k->code))
				break;
		if (ks_arches[a]) {
			k->arch = a + 1;
		} else {
			v = strtoull(name, &end, 0);
			if (!*name || *end)
				return ks_error_code(err, KS_E_USAGE, "unknown exit reason '%s'", name);
			*k = (struct sample_key){ .arch = -1, .sel = -1, .code = v & 0xffffffffull };
		}
		p->nsample_keys++;
	}
	return 0;
}

struct ks_profile *ks_profile_new(const struct ks_profile_config *cfg,
				  const struct ks_source_info *info, struct ks_error *err)
{
	struct ks_profile *p = calloc(1, sizeof(*p));

	if (!p) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->host = ks_host_new(NULL, NULL, err);
	if (!p->host) {
		free(p);
		return NULL;
	}
	ks_host_set_limits(p->host, cfg->limits);
	ks_hmap_init(&p->threads, sizeof(struct thread));
	ks_hmap_init_wide(&p->chash, 3, sizeof(uint32_t));
	ks_hmap_init_wide(&p->ehash, 2, sizeof(struct eslot));
	ks_hmap_init(&p->shash, sizeof(uint32_t));
	p->max_threads = ks_limits_or_default(cfg->limits)->threads;
	{
		uint64_t tables = ks_limits_or_default(cfg->limits)->tables;

		/* entries (80 bytes, their slot, the table's doubling) take half
		 * of the budget, stacks a quarter; once the entries are all in
		 * runs, the rows per address take half */
		p->max_entries = (size_t)(tables / 256 > 1024 ? tables / 256 : 1024);
		p->max_stack_bytes = tables / 4;
		p->max_rows = (size_t)(tables / 2 / sizeof(struct ks_profile_row));
		if (p->max_rows < 64)
			p->max_rows = 64;
	}
	ks_spill_init(&p->sp, 0); /* the tables are the memory: runs go to the file */
	p->default_isa = info && info->cpuid[0] ? ks_x86_isa_from_cpuid(info->cpuid) : KS_ISA_VMX;
	if (!p->default_isa)
		p->default_isa = KS_ISA_VMX;
	p->arch = info ? ks_arch_for(info->arch, info->cpuid) : NULL;
	if (parse_sample_exits(p, err) < 0) {
		ks_host_free(p->host);
		free(p);
		return NULL;
	}
	return p;
}

void ks_profile_free(struct ks_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	for (i = 0; i < p->nnames; i++)
		free(p->names[i].name);
	for (i = 0; i < p->nruns; i++)
		ks_rlog_free(&p->runs[i]);
	free(p->runs);
	if (p->stk.rsize)
		ks_rlog_free(&p->stk);
	ks_spill_free(&p->sp);
	free(p->stacks);
	ks_hmap_free(&p->shash);
	free(p->entries);
	ks_hmap_free(&p->ehash);
	free(p->ctxs);
	ks_hmap_free(&p->chash);
	ks_hmap_free(&p->threads);
	ks_host_free(p->host);
	free(p->names);
	free(p->vms);
	free(p->evs);
	free(p->syms);
	free(p);
}

/* The profile stops (ks_profile error "out of memory"). */
static void out_of_memory(struct ks_profile *p)
{
	if (!p->failed)
		ks_error_code(&p->error, KS_E_NOMEM, "out of memory");
	p->failed = true;
}

int ks_profile_set_symbols(struct ks_profile *p, int32_t vm, const struct ks_symtab *kernel,
			   const struct ks_symtab *user)
{
	int i;

	for (i = 0; i < p->nsyms; i++)
		if (p->syms[i].vm == vm)
			break;
	if (i == p->nsyms) {
		if (p->nsyms == p->symcap) {
			int cap = p->symcap ? p->symcap * 2 : 16;
			struct vm_syms *n = realloc(p->syms, (size_t)cap * sizeof(*n));

			if (!n) {
				out_of_memory(p);
				return -ENOMEM;
			}
			p->syms = n;
			p->symcap = cap;
		}
		p->nsyms++;
	}
	p->syms[i] = (struct vm_syms){ vm, kernel, user };
	return 0;
}

/* ---- event classification ---- */

static struct ev_info *ev_info(struct ks_profile *p, struct tep_event *ev)
{
	struct ev_info *e;
	int i;

	for (i = 0; i < p->nevs; i++)
		if (p->evs[i].ev == ev)
			return &p->evs[i];
	if (p->nevs == p->evcap) {
		int cap = p->evcap ? p->evcap * 2 : 16;
		struct ev_info *n = realloc(p->evs, (size_t)cap * sizeof(*n));

		if (!n) {
			out_of_memory(p);
			return NULL;
		}
		p->evs = n;
		p->evcap = cap;
	}
	e = &p->evs[p->nevs++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	if (!p->arch && !p->arch_tried) {
		p->arch_tried = true;
		p->arch = ks_arch_detect(ev->tep);
	}
	if (ks_arch_exit_resolve(p->arch, ev, &e->x))
		e->kind = EV_EXIT;
	else if (ks_arch_is_entry(p->arch, ev))
		e->kind = EV_ENTRY;
	return e;
}

/* Whether an exit of REASON is a sample of where the guest runs: every
 * exit, or only the periodic ones where the architecture has them (powerpc
 * HV_DECREMENTER), or the --sample-exits reasons. */
static bool is_sample_reason(const struct ks_profile *p, uint64_t reason)
{
	int32_t arch = (int32_t)RK_KIND(reason), sel = (int32_t)((reason >> 32) & 0xff);
	uint64_t code = reason & 0xffffffffull;
	const struct ks_arch *a;
	struct ks_key_ctx ctx = { .isa = sel, .table = sel };
	int i;

	if (reason == RK_NONE)
		return true;
	if (!p->nsample_keys) {
		for (i = 0; ks_arches[i] && i + 1 < arch; i++)
			;
		a = arch > 0 ? ks_arches[i] : NULL;
		return !a || !a->exit_periodic || ks_arch_exit_periodic(a, &ctx, code);
	}
	for (i = 0; i < p->nsample_keys; i++) {
		const struct sample_key *k = &p->sample_keys[i];

		if (k->code == code && (k->arch < 0 || k->arch == arch) &&
		    (k->sel < 0 || k->sel == sel))
			return true;
	}
	return false;
}

static void on_vm_exit(struct ks_profile *p, const struct ks_record *rec, struct thread *t,
		       const struct ks_attr_thread *a, uint8_t mode, uint64_t reason, uint64_t ip)
{
	int64_t c = ctx_get(p, a->vm, a->vcpu, mode, reason);
	struct eslot *sl = entry_get_ctx(p, c, ip);

	p->tot.exits++;
	if (!sl)
		return;
	sl->count++;
	t->pending = (int64_t)sl->idx - 1;
	t->pending_ts = rec->ts;
	t->pending_ip = ip;
	t->pending_ctx = (uint32_t)c;
	t->pending_gen = p->gen;
	if (is_sample_reason(p, reason)) {
		p->tot.samples++;
		p->tot.exit_samples++;
		if (p->cfg.stacks)
			stack_add(p, a->vm, &ip, 1, mode == KS_MODE_GUEST_USER ? 1 : 0);
	}
}

static void on_entry(struct ks_profile *p, const struct ks_record *rec, struct thread *t)
{
	if (t->pending >= 0 && rec->ts >= t->pending_ts) {
		struct entry *en = NULL;

		if (t->pending_gen == p->gen) {
			en = &p->entries[t->pending];
		} else { /* spilled since: the entry again, its count in the runs */
			struct eslot *sl = entry_get_ctx(p, t->pending_ctx, t->pending_ip);

			if (sl)
				en = &p->entries[sl->idx - 1];
		}
		if (en) {
			en->handled++;
			en->time_ns += rec->ts - t->pending_ts;
		}
	}
	t->pending = -1;
}

/* VM exited as only a guest with protected state does (VMGEXIT). */
static void note_protected(struct ks_profile *p, int32_t vm)
{
	size_t i;

	for (i = 0; i < p->nprotected; i++)
		if (p->protected_vms[i] == vm)
			return;
	if (p->nprotected < KS_PROF_MAX_PROTECTED)
		p->protected_vms[p->nprotected++] = vm;
}

static bool vm_protected(const struct ks_profile *p, int32_t vm)
{
	size_t i;

	for (i = 0; i < p->nprotected; i++)
		if (p->protected_vms[i] == vm)
			return true;
	return false;
}

static void on_tracepoint(struct ks_profile *p, const struct ks_record *rec,
			  const struct ks_attr_thread *a)
{
	struct ev_info *e = ev_info(p, rec->event);
	struct thread *t;

	if (!e || e->kind == EV_OTHER || !a || !(t = thread_get(p, rec->tid, rec)))
		return;
	if (e->kind == EV_EXIT) {
		struct ks_key_ctx ctx;
		int32_t sel;
		uint64_t code = ks_arch_report_reason(&e->x, rec->data, rec->size, p->default_isa,
						      &sel, &ctx);
		uint64_t ip;
		bool user;

		ks_arch_exit_key(&e->x, rec->data, rec->size, p->default_isa, &ctx, &ip);
		if (p->arch->exit_protected && p->arch->exit_protected(&ctx, code))
			note_protected(p, a->vm);
		user = ks_arch_exit_user(&e->x, rec->data, rec->size, ip);
		on_vm_exit(p, rec, t, a, user ? KS_MODE_GUEST_USER : KS_MODE_GUEST_KERNEL,
			   RK(arch_index(p->arch), sel, code), ip);
	} else if (e->kind == EV_ENTRY) {
		on_entry(p, rec, t);
	}
}

/* Guest frames of a callchain: after GUEST_KERNEL / GUEST_USER markers. */
static uint32_t guest_frames(const struct ks_record *rec, uint64_t *f, uint64_t *umask)
{
	uint32_t i, n = 0;
	int ctx = 0; /* 0 = host or none, 1 guest kernel, 2 guest user */

	*umask = 0;
	for (i = 0; i < rec->nr_callchain && n < KS_PROF_MAX_FRAMES; i++) {
		uint64_t ip = rec->callchain[i];

		if (ip >= CTX_MAX) {
			ctx = ip == CTX_GUEST_KERNEL ? 1 : ip == CTX_GUEST_USER ? 2 :
			      ip == CTX_GUEST ? ctx : 0;
			continue;
		}
		if (!ctx)
			continue;
		if (ctx == 2)
			*umask |= 1ull << n;
		f[n++] = ip;
	}
	return n;
}

static void on_pmu_sample(struct ks_profile *p, const struct ks_record *rec,
			  const struct ks_attr_thread *a)
{
	unsigned cpumode = rec->misc & MISC_CPUMODE_MASK;
	uint64_t frames[KS_PROF_MAX_FRAMES], umask;
	struct thread *t;
	uint8_t mode;
	struct eslot *sl;
	uint32_t n;

	if (cpumode != MISC_GUEST_KERNEL && cpumode != MISC_GUEST_USER) {
		p->tot.host_samples++;
		return;
	}
	if (!a || !(t = thread_get(p, rec->tid, rec)))
		return;
	mode = cpumode == MISC_GUEST_USER ? KS_MODE_GUEST_USER : KS_MODE_GUEST_KERNEL;
	sl = entry_get(p, a->vm, a->vcpu, mode, RK_NONE, rec->ip);
	if (!sl)
		return;
	sl->count++;
	p->tot.samples++;
	p->tot.pmu_samples++;
	if (!p->cfg.stacks)
		return;
	n = guest_frames(rec, frames, &umask);
	if (!n) {
		frames[0] = rec->ip;
		umask = mode == KS_MODE_GUEST_USER;
		n = 1;
	}
	stack_add(p, a->vm, frames, n, umask);
}

void ks_profile_add(struct ks_profile *p, const struct ks_record *rec)
{
	const struct ks_attr_thread *a;

	if (p->failed)
		return;
	a = ks_host_observe(p->host, rec);
	if (!a && ks_host_error_at(p->host, p->cfg.path, rec, &p->error) < 0) {
		p->failed = true;
		return;
	}
	if (rec->type != KS_REC_EVENT)
		return;
	if (rec->event)
		on_tracepoint(p, rec, a);
	else
		on_pmu_sample(p, rec, a);
}

/* ---- resolution and rows ---- */

static const struct vm_syms *syms_for(const struct ks_profile *p, int32_t vm)
{
	const struct vm_syms *def = NULL;
	int i;

	for (i = 0; i < p->nsyms; i++) {
		if (p->syms[i].vm == vm)
			return &p->syms[i];
		if (p->syms[i].vm == -1)
			def = &p->syms[i];
	}
	return def;
}

static void resolve(const struct ks_profile *p, int32_t vm, uint8_t mode, uint64_t ip,
		    const char **dso, const char **sym, uint64_t *offset)
{
	const struct vm_syms *vs = syms_for(p, vm);
	const struct ks_symtab *t = NULL;
	struct ks_resolved r = { 0 };

	if (vs)
		t = mode == KS_MODE_GUEST_USER ? vs->user : vs->kernel;
	/* A confidential guest's exits say nothing of where it ran (rip 0). */
	if (!ip && vm_protected(p, vm)) {
		*sym = KS_SYM_PROTECTED;
		*dso = KS_DSO_PROTECTED;
		*offset = 0;
		return;
	}
	if (t)
		ks_symtab_lookup(t, ip, &r);
	*sym = r.name ? r.name : KS_SYM_UNKNOWN;
	*dso = r.dso ? r.dso : mode == KS_MODE_GUEST_USER ? KS_DSO_GUEST_USER :
	       (t ? KS_DSO_KERNEL : KS_SYM_UNKNOWN);
	*offset = r.name ? r.offset : 0;
}

static void resolve_entries(struct ks_profile *p)
{
	size_t i;

	for (i = 0; i < p->nentries; i++) {
		struct entry *e = &p->entries[i];

		if (!e->sym)
			resolve(p, e->vm, e->mode, e->ip, &e->dso, &e->sym, &e->offset);
	}
}

static void row_key(const struct entry *e, unsigned dims, struct ks_profile_row *r)
{
	memset(r, 0, sizeof(*r));
	r->vm = dims & KS_PROF_VM ? e->vm : -1;
	r->vcpu = dims & KS_PROF_VCPU ? e->vcpu : -1;
	if (dims & (KS_PROF_SYM | KS_PROF_DSO | KS_PROF_ADDR)) {
		r->mode = e->mode;
		r->dso = e->dso;
	}
	if (dims & (KS_PROF_SYM | KS_PROF_ADDR))
		r->sym = e->sym;
	if (dims & KS_PROF_ADDR) {
		r->addr = e->ip;
		r->offset = e->offset;
	}
	if (dims & KS_PROF_REASON) {
		r->has_reason = e->reason != RK_NONE;
		r->reason = e->reason;
	}
}

/* The key of a row for the aggregation table: every field the rows are
 * told apart by, without loss. */
static void row_hkey(const struct ks_profile_row *r, uint64_t key[6])
{
	key[0] = (uint64_t)(uintptr_t)r->sym;
	key[1] = (uint64_t)(uintptr_t)r->dso;
	key[2] = r->addr;
	key[3] = ((uint64_t)(uint32_t)r->vm << 32) | (uint32_t)r->vcpu;
	key[4] = r->reason;
	key[5] = (uint64_t)(uint32_t)r->mode | ((uint64_t)r->has_reason << 32);
}

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int row_cmp(const void *x, const void *y)
{
	const struct ks_profile_row *a = x, *b = y;
	int c;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->vm != b->vm)
		return a->vm < b->vm ? -1 : 1;
	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	if (a->reason != b->reason)
		return a->reason < b->reason ? -1 : 1;
	if ((c = str_cmp(a->sym, b->sym)) || (c = str_cmp(a->dso, b->dso)))
		return c;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->mode - b->mode;
}

/* Rows being aggregated: the array and a table of their keys. */
struct rowset {
	struct ks_profile_row *out;
	size_t n, cap;
	struct ks_hmap h;     /* row_hkey -> row index */
	unsigned dims;
	bool oom;
};

static void rowset_init(struct rowset *rs, unsigned dims)
{
	memset(rs, 0, sizeof(*rs));
	rs->dims = dims;
	ks_hmap_init_wide(&rs->h, 6, sizeof(size_t));
}

/* Entry E counted into its row. */
static void rowset_add(struct rowset *rs, const struct entry *e)
{
	struct ks_profile_row key, *r;
	uint64_t hk[6];
	size_t *v;
	bool created;

	row_key(e, rs->dims, &key);
	row_hkey(&key, hk);
	v = ks_hmap_get_wide(&rs->h, hk);
	if (!v) {
		if (rs->n == rs->cap) {
			size_t cap = rs->cap ? rs->cap * 2 : 16;
			struct ks_profile_row *no = realloc(rs->out, cap * sizeof(*no));

			if (!no) {
				rs->oom = true;
				return;
			}
			rs->out = no;
			rs->cap = cap;
		}
		v = ks_hmap_put_wide(&rs->h, hk, &created);
		if (!v) {
			rs->oom = true;
			return;
		}
		rs->out[rs->n] = key;
		*v = rs->n++;
	}
	r = &rs->out[*v];
	r->samples += e->count;
	r->handled += e->handled;
	r->time_ns += e->time_ns;
}

/* The rows so far forgotten (their array stays with the caller). */
static void rowset_clear(struct rowset *rs)
{
	ks_hmap_free(&rs->h);
	ks_hmap_init_wide(&rs->h, 6, sizeof(size_t));
	rs->n = 0;
}

static bool entry_wanted(const struct ks_profile *p, const struct entry *e, bool exits)
{
	return exits ? e->reason != RK_NONE : is_sample_reason(p, e->reason);
}

/* The best rows of a table per address, at most MAX of them: a heap whose
 * root is the row that sorts last; the rows pushed out are summed into
 * OTHER. */
struct toprows {
	struct ks_profile_row *h, other;
	size_t n, max;
	uint64_t folded;
};

static void top_swap(struct ks_profile_row *a, struct ks_profile_row *b)
{
	struct ks_profile_row t = *a;

	*a = *b;
	*b = t;
}

static void fold_row(struct toprows *t, const struct ks_profile_row *r)
{
	t->other.samples += r->samples;
	t->other.handled += r->handled;
	t->other.time_ns += r->time_ns;
	t->folded++;
}

static void top_push(struct toprows *t, const struct ks_profile_row *r)
{
	size_t i, c;

	if (t->n == t->max) {
		if (row_cmp(r, &t->h[0]) >= 0) {
			fold_row(t, r);
			return;
		}
		fold_row(t, &t->h[0]);
		t->h[0] = *r;
		for (i = 0; (c = 2 * i + 1) < t->n; i = c) { /* sift down */
			if (c + 1 < t->n && row_cmp(&t->h[c + 1], &t->h[c]) > 0)
				c++;
			if (row_cmp(&t->h[c], &t->h[i]) <= 0)
				break;
			top_swap(&t->h[c], &t->h[i]);
		}
		return;
	}
	t->h[t->n] = *r;
	for (i = t->n++; i && row_cmp(&t->h[i], &t->h[(i - 1) / 2]) > 0; i = (i - 1) / 2)
		top_swap(&t->h[i], &t->h[(i - 1) / 2]);
}

/* Cursor of one run in the merge. */
struct run_cur {
	struct ks_rlog_cur c;
	const struct erec *r;
};

/* A min-heap of run indexes by their head record (runs at their end are
 * not in it). */
struct run_heap {
	struct run_cur *cur;
	uint32_t *h;
	size_t n;
};

static bool run_less(const struct run_heap *rh, uint32_t a, uint32_t b)
{
	return erec_cmp(rh->cur[a].r, rh->cur[b].r) < 0;
}

static void run_sift_down(struct run_heap *rh, size_t i)
{
	size_t c;

	for (; (c = 2 * i + 1) < rh->n; i = c) {
		uint32_t t;

		if (c + 1 < rh->n && run_less(rh, rh->h[c + 1], rh->h[c]))
			c++;
		if (!run_less(rh, rh->h[c], rh->h[i]))
			break;
		t = rh->h[c];
		rh->h[c] = rh->h[i];
		rh->h[i] = t;
	}
}

/* The heap's least run moves to its next record (leaves at its end). */
static void run_advance(struct run_heap *rh)
{
	struct run_cur *c = &rh->cur[rh->h[0]];

	c->r = ks_rlog_cur_next(&c->c);
	if (!c->r)
		rh->h[0] = rh->h[--rh->n];
	run_sift_down(rh, 0);
}

/* Rows from the spilled runs (the table spilled last as one more run):
 * a k-way merge by (ip, ctx) sums each entry's records, then each entry
 * is resolved and counted into its row.  Rows per address are complete
 * when the address changes: they go to the top rows, the rest folded. */
/* Open a cursor on every run and heap them by their first entry.
 * false: out of memory. */
static bool runs_open(struct ks_profile *p, struct run_cur *cur, struct run_heap *rh)
{
	size_t i;

	if (!cur || !rh->h)
		return false;
	for (i = 0; i < p->nruns; i++) {
		ks_rlog_cur_init(&cur[i].c, &p->runs[i]);
		cur[i].r = ks_rlog_cur_next(&cur[i].c);
		if (cur[i].r)
			rh->h[rh->n++] = (uint32_t)i;
	}
	for (i = rh->n / 2 + 1; i-- > 0;)
		run_sift_down(rh, i);
	return true;
}

/* The next entry in key order, summed over every run that has it, with
 * its context's VM, vCPU, mode and reason; false when the runs are done. */
static bool runs_next(struct ks_profile *p, struct run_cur *cur, struct run_heap *rh,
		      struct entry *e)
{
	struct erec key;
	const struct ctx *cx;

	if (!rh->n)
		return false;
	key = *cur[rh->h[0]].r;
	cx = &p->ctxs[key.ctx];
	*e = (struct entry){ .ip = key.ip };
	while (rh->n && !erec_cmp(cur[rh->h[0]].r, &key)) {
		const struct erec *r = cur[rh->h[0]].r;

		e->count += r->count;
		e->handled += r->handled;
		e->time_ns += r->time_ns;
		run_advance(rh);
	}
	e->vm = cx->vm;
	e->vcpu = cx->vcpu;
	e->mode = cx->mode;
	e->reason = cx->reason;
	return true;
}

/* The rows, sorted; per address, the kept top ones and an [other] row
 * for what was folded.  false: out of memory. */
static bool rows_finish(struct ks_profile *p, bool per_addr, struct rowset *rs,
			struct toprows *top)
{
	size_t i;

	if (per_addr) {
		for (i = 0; i < rs->n; i++)
			top_push(top, &rs->out[i]);
		free(rs->out);
		rs->out = top->h;
		rs->n = top->n;
		top->h = NULL;
	}
	if (rs->n)
		qsort(rs->out, rs->n, sizeof(*rs->out), row_cmp);
	p->folded_rows = top->folded;
	if (top->folded) { /* the [other] row, last */
		struct ks_profile_row *o = realloc(rs->out, (rs->n + 1) * sizeof(*o));

		if (!o)
			return false;
		rs->out = o;
		top->other.vm = -1;
		top->other.vcpu = -1;
		top->other.reason = RK_NONE;
		top->other.sym = KS_SYM_OTHER;
		top->other.dso = "";
		rs->out[rs->n++] = top->other;
	}
	return true;
}

static size_t rows_from_runs(struct ks_profile *p, unsigned dims, bool exits,
			     struct ks_profile_row **rows)
{
	struct run_cur *cur = calloc(p->nruns + 1, sizeof(*cur));
	struct run_heap rh = { .cur = cur, .h = malloc((p->nruns + 1) * sizeof(uint32_t)) };
	bool per_addr = dims & KS_PROF_ADDR;
	struct toprows top = { .max = p->max_rows };
	struct rowset rs;
	struct entry e = { 0 }, last = { .sym = NULL };
	uint64_t group_ip = 0;
	size_t i, n = 0;
	bool ok = false;

	rowset_init(&rs, dims);
	if (per_addr)
		top.h = malloc(top.max * sizeof(*top.h));
	if (!runs_open(p, cur, &rh) || (per_addr && !top.h))
		goto fail;
	while (runs_next(p, cur, &rh, &e)) {
		if (!entry_wanted(p, &e, exits))
			continue;
		if (last.sym && last.ip == e.ip && last.vm == e.vm && last.mode == e.mode) {
			e.dso = last.dso;
			e.sym = last.sym;
			e.offset = last.offset;
		} else {
			resolve(p, e.vm, e.mode, e.ip, &e.dso, &e.sym, &e.offset);
			last = e;
		}
		if (per_addr && rs.n && e.ip != group_ip) {
			for (i = 0; i < rs.n; i++)
				top_push(&top, &rs.out[i]);
			rowset_clear(&rs);
		}
		group_ip = e.ip;
		rowset_add(&rs, &e);
		if (rs.oom)
			goto fail;
	}
	if (ks_spill_error(&p->sp, NULL) < 0 || !rows_finish(p, per_addr, &rs, &top))
		goto fail;
	n = rs.n;
	*rows = rs.out;
	rs.out = NULL;
	ok = true;
fail:
	if (!ok)
		spill_failed(p);
	for (i = 0; cur && i < p->nruns; i++)
		ks_rlog_cur_free(&cur[i].c);
	free(cur);
	free(rh.h);
	free(top.h);
	free(rs.out);
	ks_hmap_free(&rs.h);
	if (!n)
		*rows = NULL;
	return n;
}

size_t ks_profile_rows(struct ks_profile *p, unsigned dims, bool exits,
		       struct ks_profile_row **rows)
{
	struct rowset rs;
	size_t i;

	p->folded_rows = 0;
	if (p->nruns) {
		/* the rest of the table joins the runs, for a merge of them all */
		if (spill_entries(p) < 0) {
			spill_failed(p);
			*rows = NULL;
			return 0;
		}
		/* the table is empty for good: its room goes to the rows */
		free(p->entries);
		p->entries = NULL;
		p->entcap = 0;
		return rows_from_runs(p, dims, exits, rows);
	}
	sync_counts(p);
	resolve_entries(p);
	rowset_init(&rs, dims);
	for (i = 0; i < p->nentries && !rs.oom; i++) {
		const struct entry *e = &p->entries[i];

		if (entry_wanted(p, e, exits))
			rowset_add(&rs, e);
	}
	ks_hmap_free(&rs.h);
	if (rs.n)
		qsort(rs.out, rs.n, sizeof(*rs.out), row_cmp);
	*rows = rs.out;
	return rs.n;
}

uint64_t ks_profile_rows_folded(const struct ks_profile *p)
{
	return p->folded_rows;
}

void ks_profile_reason_name(const struct ks_profile *p, uint64_t reason, char *buf, size_t len)
{
	uint64_t kind = RK_KIND(reason);
	int n;

	(void)p;
	if (reason == RK_NONE) {
		snprintf(buf, len, "-");
		return;
	}
	for (n = 0; ks_arches[n]; n++)
		;
	if (!kind || kind > (uint64_t)n) {
		snprintf(buf, len, "UNKNOWN(0x%llx)", (unsigned long long)(reason & 0xffffffffull));
		return;
	}
	ks_arch_report_reason_name(ks_arches[kind - 1], (int32_t)((reason >> 32) & 0xff),
				   reason & 0xffffffffull, buf, len);
}

void ks_profile_totals(const struct ks_profile *p, struct ks_profile_totals *t)
{
	*t = p->tot;
}

/* ---- folded stacks ---- */

/* Folded frames have no ';' nor spaces problems: ';' in names becomes ':'.
 * -1: out of memory. */
static int add_frame(struct ks_buf *b, const char *name, bool kernel)
{
	size_t start = b->len, i;

	if (ks_buf_adds(b, ";") < 0 || ks_buf_adds(b, name) < 0)
		return -1;
	for (i = start + 1; i < b->len; i++)
		if (b->p[i] == ';')
			b->p[i] = ':';
	return kernel ? ks_buf_adds(b, "_[k]") : 0;
}

struct folded_line {
	char *stack;
	uint64_t count;
	uint32_t next;         /* next line of the same hash, index + 1 */
};

/* Distinct folded lines and their counts (stacks of several addresses
 * resolve to one line): a table of the lines' hashes. */
struct folded_set {
	struct folded_line *lines;
	size_t n, cap;
	struct ks_hmap h;      /* string hash -> first line index + 1 */
	bool oom;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix(h);
}

static void folded_count(struct folded_set *fs, const char *stack, uint64_t count)
{
	uint64_t h = str_hash(stack);
	uint32_t *head = ks_hmap_get(&fs->h, h), k;
	bool created;

	for (k = head ? *head : 0; k; k = fs->lines[k - 1].next)
		if (!strcmp(fs->lines[k - 1].stack, stack)) {
			fs->lines[k - 1].count += count;
			return;
		}
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 256;
		struct folded_line *nl = realloc(fs->lines, cap * sizeof(*nl));

		if (nl)
			fs->lines = nl;
		if (!nl || cap > UINT32_MAX - 1) {
			fs->oom = true;
			return;
		}
		fs->lines = nl;
		fs->cap = cap;
	}
	head = ks_hmap_put(&fs->h, h, &created);
	if (!head || !(fs->lines[fs->n].stack = strdup(stack))) {
		fs->oom = true;
		return;
	}
	fs->lines[fs->n].count = count;
	fs->lines[fs->n].next = created ? 0 : *head;
	*head = (uint32_t)++fs->n;
}

/* The folded line of the stack (VM, FRAMES[0..N) leaf first, UMASK) into B. */
static int fold_stack(const struct ks_profile *p, struct ks_buf *b, int32_t vm,
		      const uint64_t *frames, uint32_t n, uint64_t umask)
{
	const char *name = ks_profile_vm_name(p, vm);
	char vmname[160];
	uint32_t k;

	ks_buf_reset(b);
	/* the VM's display name (host.h); ';' separates frames */
	ks_vm_label(vmname, sizeof(vmname), vm, name);
	for (k = 0; vmname[k]; k++)
		if (vmname[k] == ';')
			vmname[k] = '_';
	if (ks_buf_adds(b, vmname) < 0)
		return -1;
	for (k = n; k-- > 0;) {
		bool user = (umask >> k) & 1;
		const char *dso, *sym;
		uint64_t off;

		resolve(p, vm, user ? KS_MODE_GUEST_USER : KS_MODE_GUEST_KERNEL, frames[k], &dso,
			&sym, &off);
		if (user && !strcmp(sym, KS_SYM_UNKNOWN))
			sym = KS_DSO_GUEST_USER;
		if (add_frame(b, sym, !user) < 0)
			return -1;
	}
	return 0;
}

static int folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

/* Stacks are kept per address (in the table, and those spilled past the
 * budget in the temporary file); several resolve to the same frames (two
 * addresses in one function): the lines are merged, sorted by stack as
 * stackcollapse scripts write them. */
int ks_profile_folded(struct ks_profile *p, ks_folded_fn fn, void *ctx)
{
	struct ks_buf b = KS_BUF_INIT;
	struct folded_set fs = { 0 };
	uint64_t frames[KS_PROF_MAX_FRAMES];
	size_t i;
	int rc = 0;

	ks_hmap_init(&fs.h, sizeof(uint32_t));
	if (p->stk.rsize) {
		struct ks_rlog_cur c;
		const uint64_t *w;

		ks_rlog_cur_init(&c, &p->stk);
		while (!fs.oom && (w = ks_rlog_cur_next(&c))) {
			int32_t vm = (int32_t)(uint32_t)(*w >> 32);
			uint32_t n = (uint32_t)*w, k;
			uint64_t umask, count;

			if (n > KS_PROF_MAX_FRAMES || !(w = ks_rlog_cur_next(&c)))
				break;
			umask = *w;
			if (!(w = ks_rlog_cur_next(&c)))
				break;
			count = *w;
			for (k = 0; k < n && (w = ks_rlog_cur_next(&c)); k++)
				frames[k] = *w;
			if (k < n || fold_stack(p, &b, vm, frames, n, umask) < 0)
				break;
			folded_count(&fs, b.p, count);
		}
		ks_rlog_cur_free(&c);
		if (ks_spill_error(&p->sp, NULL) < 0)
			rc = -1;
	}
	for (i = 0; rc == 0 && !fs.oom && i < p->nstacks; i++) {
		const struct stack *s = &p->stacks[i];

		if (fold_stack(p, &b, s->vm, s->frames, s->nframes, s->user_mask) < 0)
			rc = -1;
		else
			folded_count(&fs, b.p, s->count);
	}
	if (fs.oom)
		rc = -1;
	if (fs.n)
		qsort(fs.lines, fs.n, sizeof(*fs.lines), folded_cmp);
	for (i = 0; rc == 0 && i < fs.n; i++)
		fn(ctx, fs.lines[i].stack, fs.lines[i].count);
	for (i = 0; i < fs.n; i++)
		free(fs.lines[i].stack);
	free(fs.lines);
	ks_hmap_free(&fs.h);
	ks_buf_free(&b);
	return rc;
}
