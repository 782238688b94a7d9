/*
 * tpcount.c - every tracepoint counted per VM (see tpcount.h).
 *
 * Events are identified by their format (struct tep_event *, one per event
 * of the source): a small cache maps each to its display name and, for the
 * architecture's exit events, the fields that give the exit reason.  Rows
 * are found by hashing (VM, event, child key).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/source.h"
#include "kvmscope/tpcount.h"
#include "kvmscope/tracedat.h"

struct ev_info {
	const struct tep_event *ev;   /* NULL = free slot */
	char name[64];
	const struct ks_match *rule;  /* an exit (begin) rule of the vmexit class */
	struct ks_field key, info, key2, cond, isa;
};

struct row_slot {
	int32_t vm;
	bool child, used;
	const struct tep_event *ev;
	uint64_t key;
	uint32_t row;
};

struct ks_tpcount {
	const struct ks_host *host;    /* tid -> VM: the caller's model */
	const struct ks_arch *arch;
	const struct ks_event_class *exits;
	int isa;                       /* from the CPUID; else each event's isa */
	struct ev_info *evs;
	size_t ev_cap, ev_used;
	struct row_slot *slots;
	size_t slot_cap;
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
		ks_error_set(err, "out of memory");
		return NULL;
	}
	if (info)
		c->arch = ks_arch_for(info->arch, info->cpuid);
	if (!c->arch && src && ks_source_tep(src))
		c->arch = ks_arch_detect(ks_source_tep(src));
	if (c->arch)
		c->exits = ks_arch_class(c->arch, "vmexit");
	c->isa = info ? ks_x86_isa_from_cpuid(info->cpuid) : KS_ISA_UNKNOWN;
	c->host = host;
	return c;
}

static size_t ptr_hash(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 4) * 2654435761u) % cap;
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

/* The cache entry of EV; NULL when out of memory. */
static struct ev_info *ev_find(struct ks_tpcount *c, struct tep_event *ev)
{
	size_t h, i;

	if ((c->ev_used + 1) * 2 > c->ev_cap) {
		size_t ncap = c->ev_cap ? c->ev_cap * 2 : 64;
		struct ev_info *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < c->ev_cap; i++) {
			if (!c->evs[i].ev)
				continue;
			for (h = ptr_hash(c->evs[i].ev, ncap); n[h].ev; h = (h + 1) % ncap)
				;
			n[h] = c->evs[i];
		}
		free(c->evs);
		c->evs = n;
		c->ev_cap = ncap;
	}
	for (h = ptr_hash(ev, c->ev_cap); c->evs[h].ev; h = (h + 1) % c->ev_cap)
		if (c->evs[h].ev == ev)
			return &c->evs[h];
	ev_init(c, &c->evs[h], ev);
	c->ev_used++;
	return &c->evs[h];
}

static size_t slot_hash(int32_t vm, const void *ev, uint64_t key, bool child, size_t cap)
{
	uint64_t h = (uint64_t)(uint32_t)vm * 0x9e3779b97f4a7c15ull;

	h ^= ((uintptr_t)ev >> 4) * 0xc2b2ae3d27d4eb4full;
	h ^= (key + child) * 0x165667b19e3779f9ull;
	return (size_t)((h ^ (h >> 29)) % cap);
}

static bool grow_slots(struct ks_tpcount *c)
{
	size_t ncap = c->slot_cap ? c->slot_cap * 2 : 128, i, h;
	struct row_slot *n = calloc(ncap, sizeof(*n));

	if (!n)
		return false;
	for (i = 0; i < c->slot_cap; i++) {
		struct row_slot *s = &c->slots[i];

		if (!s->used)
			continue;
		for (h = slot_hash(s->vm, s->ev, s->key, s->child, ncap); n[h].used; h = (h + 1) % ncap)
			;
		n[h] = *s;
	}
	free(c->slots);
	c->slots = n;
	c->slot_cap = ncap;
	return true;
}

/* The row of (VM, EV, KEY, CHILD), created on first use; -1 out of memory. */
static long row_find(struct ks_tpcount *c, int32_t vm, const struct ev_info *e, uint64_t key,
		     bool child, uint32_t parent, const char *name)
{
	struct row_slot *s;
	size_t h;

	if ((c->nrows + 1) * 2 > c->slot_cap && !grow_slots(c))
		return -1;
	for (h = slot_hash(vm, e->ev, key, child, c->slot_cap); c->slots[h].used;
	     h = (h + 1) % c->slot_cap) {
		s = &c->slots[h];
		if (s->vm == vm && s->ev == e->ev && s->key == key && s->child == child)
			return s->row;
	}
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
	s = &c->slots[h];
	*s = (struct row_slot){ .vm = vm, .child = child, .used = true, .ev = e->ev, .key = key,
				.row = (uint32_t)c->nrows };
	c->rows[c->nrows] = (struct ks_tpcount_row){ .vm = vm, .child = child, .parent = parent };
	snprintf(c->rows[c->nrows].name, sizeof(c->rows[c->nrows].name), "%s", name);
	c->cur[c->nrows] = 0;
	return (long)c->nrows++;
}

static void reason_name(const struct ks_tpcount *c, const struct ev_info *e,
			const struct ks_record *rec, uint64_t *key, char *buf, size_t len)
{
	struct ks_key_ctx ctx = { .isa = c->isa, .table = e->rule->table };
	int32_t info = e->info.present ? (int32_t)ks_field_u64(&e->info, rec) : 0;
	char reason[48];

	*key = ks_field_u64(&e->key, rec);
	if (c->exits->compose)
		c->exits->compose(key, e->key2.present ? ks_field_u64(&e->key2, rec) : 0, &ctx.table);
	if (ctx.isa == KS_ISA_UNKNOWN && e->isa.present)
		ctx.isa = (int)ks_field_u64(&e->isa, rec);
	if (ctx.isa == KS_ISA_UNKNOWN)
		ctx.isa = KS_ISA_VMX;
	c->exits->key_name(&ctx, *key, info, false, reason, sizeof(reason));
	snprintf(buf, len, "%.14s(%s)", e->ev->name, reason);
	/* the table joins the key: one code may name two reasons (arm64) */
	*key ^= (uint64_t)(uint32_t)ctx.table << 48;
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
	struct ev_info *e;
	char name[64];
	uint64_t key;
	int32_t vm;
	long r, ch;

	if (rec->type != KS_REC_EVENT || !rec->event)
		return;
	vm = vm_of(c, rec);
	e = ev_find(c, rec->event);
	if (!e)
		return;
	r = row_find(c, vm, e, 0, false, 0, e->name);
	if (r < 0)
		return;
	c->cur[r]++;
	if (!e->rule || (e->cond.present && ks_field_u64(&e->cond, rec) != e->rule->cond_value))
		return;
	reason_name(c, e, rec, &key, name, sizeof(name));
	ch = row_find(c, vm, e, key, true, (uint32_t)r, name);
	if (ch >= 0)
		c->cur[ch]++;
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
	free(c->evs);
	free(c->slots);
	free(c->rows);
	free(c->cur);
	free(c);
}
