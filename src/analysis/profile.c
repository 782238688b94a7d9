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
 *
 * Rows and folded stacks are built in profile_rows.c (profile_impl.h).
 */
#include "profile_impl.h"

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

int pf_erec_cmp(const void *a, const void *b)
{
	const struct erec *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* The entry table, sorted by (ip, ctx), as one more run in the temporary
 * file; the table is emptied (a new generation of indexes).  0 or -1. */
int pf_spill_entries(struct ks_profile *p)
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
	qsort(recs, n, sizeof(*recs), pf_erec_cmp);
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
void pf_spill_failed(struct ks_profile *p)
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
	if (p->nentries >= p->max_entries && pf_spill_entries(p) < 0) {
		pf_spill_failed(p);
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
void pf_sync_counts(struct ks_profile *p)
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
			pf_spill_failed(p);
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
		uint64_t v;

		if (p->nsample_keys == KS_PROF_MAX_SAMPLE_EXITS)
			return ks_error_code(err, KS_E_USAGE, "too many --sample-exits reasons");
		for (a = 0; ks_arches[a]; a++)
			if (ks_arch_exit_code(ks_arches[a], name, &k->sel, &k->code))
				break;
		if (ks_arches[a]) {
			k->arch = a + 1;
		} else {
			/* exit codes are 32 bits in every architecture */
			if (ks_parse_u64(name, strlen(name), 0, &v) < 0 || v > UINT32_MAX)
				return ks_error_code(err, KS_E_USAGE, "unknown exit reason '%s'", name);
			*k = (struct sample_key){ .arch = -1, .sel = -1, .code = v };
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
	p->default_isa = ks_x86_isa_or_default(info ? ks_x86_isa_from_cpuid(info->cpuid)
						    : KS_ISA_UNKNOWN);
	if (info) {
		snprintf(p->machine, sizeof(p->machine), "%s", info->arch);
		snprintf(p->cpuid, sizeof(p->cpuid), "%s", info->cpuid);
		p->machine_from_events = info->arch_from_events;
	}
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
	if (!p->arch_tried) {
		p->arch_tried = true;
		p->arch = ks_arch_resolve(NULL, p->machine, p->cpuid, p->machine_from_events,
					  ev->tep, NULL);
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
bool pf_is_sample_reason(const struct ks_profile *p, uint64_t reason)
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
	if (pf_is_sample_reason(p, reason)) {
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

bool pf_vm_protected(const struct ks_profile *p, int32_t vm)
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

