/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile_rows.c - the profile's answer (profile.h): entries resolved to
 * symbols once each, merged from the spilled runs into rows by the
 * dimensions asked (--by), the top rows per address with the rest in
 * "[other]", and folded stacks as stackcollapse scripts write them
 * (profile_impl.h).
 */
#include "profile_impl.h"

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
	if (!ip && pf_vm_protected(p, vm)) {
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
	return exits ? e->reason != RK_NONE : pf_is_sample_reason(p, e->reason);
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
	return pf_erec_cmp(rh->cur[a].r, rh->cur[b].r) < 0;
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
	while (rh->n && !pf_erec_cmp(cur[rh->h[0]].r, &key)) {
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
		pf_spill_failed(p);
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
		if (pf_spill_entries(p) < 0) {
			pf_spill_failed(p);
			*rows = NULL;
			return 0;
		}
		/* the table is empty for good: its room goes to the rows */
		free(p->entries);
		p->entries = NULL;
		p->entcap = 0;
		return rows_from_runs(p, dims, exits, rows);
	}
	pf_sync_counts(p);
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

