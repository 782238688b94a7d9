/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symtab.c - sorted, deduplicated symbol tables with binary-search lookup.
 *
 * Sources (kallsyms.c, elfsyms.c) add symbols in any order; ks_symtab_finish()
 * sorts them, keeps one symbol per address and computes missing ends.  Lookups
 * are a binary search over the symbols plus one over the maps.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab.h"

#define ARENA_CHUNK (256 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct ks_symtab {
	struct ks_sym *syms;
	size_t nsyms, cap;
	struct ks_sym *maps; /* name = NULL */
	size_t nmaps, mapcap;
	struct arena_chunk *arena;
	const char **dsos;   /* interned DSO names */
	size_t ndsos, dsocap;
	bool finished;
};

struct ks_symtab *ks_symtab_new(void)
{
	return calloc(1, sizeof(struct ks_symtab));
}

void ks_symtab_free(struct ks_symtab *t)
{
	struct arena_chunk *c, *n;

	if (!t)
		return;
	for (c = t->arena; c; c = n) {
		n = c->next;
		free(c);
	}
	free(t->syms);
	free(t->maps);
	free(t->dsos);
	free(t);
}

static const char *arena_strdup(struct ks_symtab *t, const char *s)
{
	size_t len = strlen(s) + 1;
	struct arena_chunk *c = t->arena;
	char *p;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = t->arena;
		t->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	c->used += len;
	return p;
}

static const char *intern_dso(struct ks_symtab *t, const char *dso)
{
	size_t i;

	if (!dso)
		dso = KS_DSO_KERNEL;
	for (i = t->ndsos; i-- > 0;)
		if (!strcmp(t->dsos[i], dso))
			return t->dsos[i];
	if (t->ndsos == t->dsocap) {
		size_t cap = t->dsocap ? t->dsocap * 2 : 16;
		const char **d = realloc(t->dsos, cap * sizeof(*d));

		if (!d)
			return NULL;
		t->dsos = d;
		t->dsocap = cap;
	}
	t->dsos[t->ndsos] = arena_strdup(t, dso);
	return t->dsos[t->ndsos++];
}

int ks_symtab_add(struct ks_symtab *t, uint64_t start, uint64_t size, const char *name,
		  const char *dso)
{
	struct ks_sym *s;

	if (t->nsyms == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct ks_sym *n = realloc(t->syms, cap * sizeof(*n));

		if (!n)
			return -1;
		t->syms = n;
		t->cap = cap;
	}
	s = &t->syms[t->nsyms];
	s->start = start;
	s->end = size ? start + size : 0;
	if (s->end && s->end < start)
		s->end = UINT64_MAX;
	s->name = arena_strdup(t, name);
	s->dso = intern_dso(t, dso);
	if (!s->name || !s->dso)
		return -1;
	t->nsyms++;
	t->finished = false;
	return 0;
}

int ks_symtab_add_map(struct ks_symtab *t, uint64_t start, uint64_t end, const char *dso)
{
	if (end <= start)
		return 0;
	if (t->nmaps == t->mapcap) {
		size_t cap = t->mapcap ? t->mapcap * 2 : 64;
		struct ks_sym *n = realloc(t->maps, cap * sizeof(*n));

		if (!n)
			return -1;
		t->maps = n;
		t->mapcap = cap;
	}
	t->maps[t->nmaps].start = start;
	t->maps[t->nmaps].end = end;
	t->maps[t->nmaps].name = NULL;
	t->maps[t->nmaps].dso = intern_dso(t, dso);
	if (!t->maps[t->nmaps].dso)
		return -1;
	t->nmaps++;
	t->finished = false;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Order by address, then by preference (the preferred symbol first). */
static int sym_cmp(const void *a, const void *b)
{
	const struct ks_sym *x = a, *y = b;
	size_t ux, uy;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int map_cmp(const void *a, const void *b)
{
	const struct ks_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

void ks_symtab_finish(struct ks_symtab *t)
{
	size_t i, out = 0;

	if (t->finished)
		return;
	if (t->nsyms)
		qsort(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp);
	for (i = 0; i < t->nsyms; i++) {
		if (out && t->syms[out - 1].start == t->syms[i].start) {
			if (!t->syms[out - 1].end)
				t->syms[out - 1].end = t->syms[i].end;
			continue;
		}
		t->syms[out++] = t->syms[i];
	}
	t->nsyms = out;
	for (i = 0; i < t->nsyms; i++) {
		uint64_t next = i + 1 < t->nsyms ? t->syms[i + 1].start : 0;
		struct ks_sym *s = &t->syms[i];

		if (!s->end || (next && s->end > next))
			s->end = next ? next : s->start + KS_SYM_LAST_SPAN;
		if (s->end <= s->start)
			s->end = s->start + 1;
	}
	if (t->nmaps)
		qsort(t->maps, t->nmaps, sizeof(*t->maps), map_cmp);
	t->finished = true;
}

size_t ks_symtab_count(const struct ks_symtab *t)
{
	return t->nsyms;
}

const struct ks_sym *ks_symtab_at(const struct ks_symtab *t, size_t i)
{
	return i < t->nsyms ? &t->syms[i] : NULL;
}

bool ks_symtab_addr_of(const struct ks_symtab *t, const char *name, uint64_t *addr)
{
	size_t i;

	for (i = 0; i < t->nsyms; i++) {
		if (!strcmp(t->syms[i].name, name)) {
			*addr = t->syms[i].start;
			return true;
		}
	}
	return false;
}

/* Index of the last entry with start <= addr, or -1. */
static long find_le(const struct ks_sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

bool ks_symtab_lookup(const struct ks_symtab *t, uint64_t addr, struct ks_resolved *r)
{
	long i = find_le(t->syms, t->nsyms, addr);
	long m = find_le(t->maps, t->nmaps, addr);
	const struct ks_sym *map = (m >= 0 && addr < t->maps[m].end) ? &t->maps[m] : NULL;

	r->name = NULL;
	r->dso = map ? map->dso : NULL;
	r->offset = 0;
	if (i < 0 || addr >= t->syms[i].end)
		return false;
	if (map && t->syms[i].start < map->start)
		return false; /* a symbol from below running into a module's range */
	r->name = t->syms[i].name;
	r->dso = t->syms[i].dso;
	r->offset = addr - t->syms[i].start;
	return true;
}
