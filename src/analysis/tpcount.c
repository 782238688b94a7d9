/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tpcount.c - every tracepoint counted per VM (see tpcount.h).
 *
 * Events are identified by their format (struct tep_event *, one per event
 * of the source): a small cache maps each to its display name and, for the
 * architecture's exit events, the fields that give the exit reason.  Rows
 * are found by (event, child key, VM and whether a child) in a ks_hmap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "kvmscope/engine.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/source.h"
#include "kvmscope/tpcount.h"
#include "kvmscope/tracedat.h"
#include "util/hashmap.h"

struct ev_info {
	const struct tep_event *ev;
	uint32_t idx;                 /* its number, from 1, in the order met */
	char name[64];
	const struct ks_match *rule;  /* an exit (begin) rule of the vmexit class */
	struct ks_field key, info, key2, cond, isa;
};

/* A row's identity, the key of ks_tpcount.rows_by_id: the child's key (0
 * for the event's own row), then the event's index (31 bits), the VM and
 * whether the row is a child in one word. */
enum { ROW_KEY, ROW_EVENT_VM_CHILD, ROW_ID_WORDS };

struct ks_tpcount {
	const struct ks_host *host;    /* tid -> VM: the caller's model */
	const struct ks_arch *arch;
	const struct ks_event_class *exits;
	int isa;                       /* from the CPUID; else each event's isa */
	struct ks_hmap evs;            /* event pointer -> struct ev_info */
	struct ks_hmap rows_by_id;     /* ROW_ID_WORDS identity -> uint32_t row */
	struct ks_tpcount_row *rows;
	uint64_t *cur;                 /* counts of the open interval, per row */
	size_t nrows, row_cap;
};

struct ks_tpcount *ks_tpcount_new(struct ks_source *src, const struct ks_host *host,
				  struct ks_error *err)
{
	struct ks_tpcount *c = calloc(1, sizeof(*c));
	const struct ks_source_info *info = src ? ks_source_info(src) : NULL;

	if (!c) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	ks_hmap_init(&c->evs, sizeof(struct ev_info));
	ks_hmap_init_wide(&c->rows_by_id, ROW_ID_WORDS, sizeof(uint32_t));
	if (src)
		c->arch = ks_arch_resolve(NULL, info->arch, info->cpuid, info->arch_from_events,
					  ks_source_tep(src), NULL);
	if (c->arch)
		c->exits = ks_arch_class(c->arch, "vmexit");
	c->isa = info ? ks_x86_isa_from_cpuid(info->cpuid) : KS_ISA_UNKNOWN;
	c->host = host;
	return c;
}

static void ev_init(struct ks_tpcount *c, struct ev_info *e, struct tep_event *ev)
{
	int i;

	e->ev = ev;
	if (!strcmp(ev->system, "kvm"))
		snprintf(e->name, sizeof(e->name), "%s", ev->name);
	else
		snprintf(e->name, sizeof(e->name), "%s:%s", ev->system, ev->name);
	for (i = 0; c->exits && i < KS_MAX_MATCH && c->exits->begin[i].name; i++) {
		const struct ks_match *m = &c->exits->begin[i];

		if (!m->key_field || strcmp(m->system, ev->system) || strcmp(m->name, ev->name))
			continue;
		if (ks_field_resolve(&e->key, ev, m->key_field) < 0)
			continue;
		if (m->cond_field && ks_field_resolve(&e->cond, ev, m->cond_field) < 0)
			continue;
		if (m->info_field)
			ks_field_resolve(&e->info, ev, m->info_field);
		if (m->key2_field)
			ks_field_resolve(&e->key2, ev, m->key2_field);
		ks_field_resolve(&e->isa, ev, "isa");
		e->rule = m;
		break;
	}
}

/* The cache entry of EV; NULL when out of memory.  Valid until the next
 * new event. */
static struct ev_info *ev_find(struct ks_tpcount *c, struct tep_event *ev)
{
	struct ev_info *e = ks_hmap_get(&c->evs, (uintptr_t)ev);
	bool created;

	if (e)
		return e;
	if (ks_hmap_len(&c->evs) >= (1u << 31))
		return NULL; /* the index takes 31 bits of a row's identity */
	e = ks_hmap_put(&c->evs, (uintptr_t)ev, &created);
	if (e) {
		ev_init(c, e, ev);
		e->idx = (uint32_t)ks_hmap_len(&c->evs);
	}
	return e;
}

/* The identity of the row of (VM, EV, KEY, CHILD). */
static inline void row_id(uint64_t id[ROW_ID_WORDS], int32_t vm, const struct ev_info *e,
			  uint64_t key, bool child)
{
	id[ROW_KEY] = key;
	id[ROW_EVENT_VM_CHILD] = (uint64_t)e->idx << 33 | (uint64_t)(uint32_t)vm << 1 | child;
}

/* The row of identity ID, or -1 when there is none yet. */
static inline long row_get(const struct ks_tpcount *c, const uint64_t *id)
{
	const uint32_t *row = ks_hmap_get_wide_k(&c->rows_by_id, id, ROW_ID_WORDS);

	return row ? (long)*row : -1;
}

/* A new row of identity ID (VM, CHILD, PARENT, NAME); -1 out of memory. */
static long row_new(struct ks_tpcount *c, const uint64_t *id, int32_t vm, bool child,
		    uint32_t parent, const char *name)
{
	uint32_t *row;
	bool created;

	if (c->nrows == c->row_cap) {
		size_t ncap = c->row_cap ? c->row_cap * 2 : 64;
		struct ks_tpcount_row *nr = realloc(c->rows, ncap * sizeof(*nr));
		uint64_t *ncur;

		if (!nr)
			return -1;
		c->rows = nr;
		ncur = realloc(c->cur, ncap * sizeof(*ncur));
		if (!ncur)
			return -1;
		c->cur = ncur;
		c->row_cap = ncap;
	}
	row = ks_hmap_put_wide(&c->rows_by_id, id, &created);
	if (!row)
		return -1;
	*row = (uint32_t)c->nrows;
	c->rows[c->nrows] = (struct ks_tpcount_row){ .vm = vm, .child = child, .parent = parent };
	snprintf(c->rows[c->nrows].name, sizeof(c->rows[c->nrows].name), "%s", name);
	c->cur[c->nrows] = 0;
	return (long)c->nrows++;
}

/* The reason code of exit REC (EV's rule matched), composed as the
 * architecture does; CTX gets what names it (table, isa). */
static uint64_t reason_key(const struct ks_tpcount *c, const struct ev_info *e,
			   const struct ks_record *rec, struct ks_key_ctx *ctx)
{
	uint64_t key;

	*ctx = (struct ks_key_ctx){ .isa = c->isa };
	key = ks_rule_key(e->rule, c->exits->compose, &e->key, &e->key2, rec->data, rec->size,
			  &ctx->table);
	if (ctx->isa == KS_ISA_UNKNOWN && e->isa.present)
		ctx->isa = (int)ks_field_u64(&e->isa, rec);
	ctx->isa = ks_x86_isa_or_default(ctx->isa);
	return key;
}

/* The name of the child row of exit REC, reason KEY (reason_key): the
 * event's name and the reason's. */
static void reason_name(const struct ks_tpcount *c, const struct ev_info *e,
			const struct ks_record *rec, const struct ks_key_ctx *ctx, uint64_t key,
			char *buf, size_t len)
{
	int32_t info = e->info.present ? (int32_t)ks_field_u64(&e->info, rec) : 0;
	char reason[48];

	c->exits->key_name(ctx, key, info, false, reason, sizeof(reason));
	snprintf(buf, len, "%.14s(%s)", e->ev->name, reason);
}

/* The VM of REC's thread as the host model has it (the exits view's),
 * else its process, else the thread alone. */
static int32_t vm_of(const struct ks_tpcount *c, const struct ks_record *rec)
{
	const struct ks_attr_thread *t = c->host ? ks_host_find(c->host, rec->tid) : NULL;

	if (!t)
		return rec->pid > 0 ? rec->pid : rec->tid;
	return t->vm > 0 ? t->vm : rec->tid;
}

void ks_tpcount_add(struct ks_tpcount *c, const struct ks_record *rec)
{
	uint64_t id[ROW_ID_WORDS], key;
	struct ks_key_ctx ctx;
	struct ev_info *e;
	char name[64];
	int32_t vm;
	long r, ch;

	if (rec->type != KS_REC_EVENT || !rec->event)
		return;
	vm = vm_of(c, rec);
	e = ev_find(c, rec->event);
	if (!e)
		return;
	row_id(id, vm, e, 0, false);
	r = row_get(c, id);
	if (r < 0 && (r = row_new(c, id, vm, false, 0, e->name)) < 0)
		return;
	c->cur[r]++;
	if (!e->rule || (e->cond.present && ks_field_u64(&e->cond, rec) != e->rule->cond_value))
		return;
	key = reason_key(c, e, rec, &ctx);
	/* the table joins the key: one code may name two reasons (arm64);
	 * the name, the one of the row's first exit, is made only then */
	row_id(id, vm, e, key ^ (uint64_t)(uint32_t)ctx.table << 48, true);
	ch = row_get(c, id);
	if (ch < 0) {
		reason_name(c, e, rec, &ctx, key, name, sizeof(name));
		ch = row_new(c, id, vm, true, (uint32_t)r, name);
	}
	if (ch >= 0)
		c->cur[ch]++;
}

/* The pseudo event of a count a live engine names (engine mode has no
 * event formats): its index among the names met, from 1, and its name. */
static struct ev_info *named_event(struct ks_tpcount *c, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	struct ev_info *e;
	bool created;
	const char *p;

	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	/* a hash collision of two names: the next slot */
	while ((e = ks_hmap_get(&c->evs, h)) && strcmp(e->name, name))
		h++;
	if (e)
		return e;
	e = ks_hmap_put(&c->evs, h, &created);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->idx = (uint32_t)ks_hmap_len(&c->evs);
	return e;
}

void ks_tpcount_add_engine(struct ks_tpcount *c, const struct ks_engine_snapshot *delta)
{
	const struct ks_arch *arch = ks_arch_named_or_default(delta->arch);
	const struct ks_event_class *exits = arch ? ks_arch_class(arch, "vmexit") : NULL;
	const char *exit_ev = exits ? exits->begin[0].name : NULL;
	uint64_t id[ROW_ID_WORDS];
	struct ev_info *e;
	char name[64], reason[48];
	size_t i;
	long r, ch;

	for (i = 0; i < delta->ntps; i++) {
		const struct ks_engine_tp *tp = &delta->tps[i];

		if (!(e = named_event(c, tp->name)))
			return;
		row_id(id, tp->pid, e, 0, false);
		r = row_get(c, id);
		if (r < 0 && (r = row_new(c, id, tp->pid, false, 0, e->name)) < 0)
			return;
		c->cur[r] += tp->count;
	}
	/* kvm_exit(REASON) under the exit event's row: the exits the engine
	 * paired (an exit still pending at the interval's end counts in the
	 * next one) */
	for (i = 0; exit_ev && i < delta->nexits; i++) {
		const struct ks_engine_exit *x = &delta->exits[i];

		if (!(e = named_event(c, exit_ev)))
			return;
		row_id(id, x->pid, e, 0, false);
		r = row_get(c, id);
		if (r < 0 && (r = row_new(c, id, x->pid, false, 0, e->name)) < 0)
			return;
		row_id(id, x->pid, e, x->reason ^ (uint64_t)x->isa << 48, true);
		ch = row_get(c, id);
		if (ch < 0) {
			ks_engine_reason_name(delta->arch, x, reason, sizeof(reason), NULL);
			snprintf(name, sizeof(name), "%.14s(%s)", exit_ev, reason);
			ch = row_new(c, id, x->pid, true, (uint32_t)r, name);
		}
		if (ch >= 0)
			c->cur[ch] += x->count;
	}
}

void ks_tpcount_interval(struct ks_tpcount *c)
{
	size_t i;

	for (i = 0; i < c->nrows; i++) {
		c->rows[i].count = c->cur[i];
		c->rows[i].total += c->cur[i];
		c->cur[i] = 0;
	}
}

size_t ks_tpcount_rows(const struct ks_tpcount *c, const struct ks_tpcount_row **rows)
{
	*rows = c->rows;
	return c->nrows;
}

void ks_tpcount_reset(struct ks_tpcount *c)
{
	size_t i;

	for (i = 0; i < c->nrows; i++)
		c->rows[i].total = 0;
}

void ks_tpcount_free(struct ks_tpcount *c)
{
	if (!c)
		return;
	ks_hmap_free(&c->evs);
	ks_hmap_free(&c->rows_by_id);
	free(c->rows);
	free(c->cur);
	free(c);
}
