/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lazy_events.c - deferred event formats (see .h).
 *
 * The state belongs to its source (ks_source.lazy): lookups by id and by
 * name go through the source.  Consumers that hold only a tep handle look
 * events up by name (ks_tep_event()): the formats of the systems the
 * architecture tables name (kvm, kvm_hv...) are parsed at attach, so
 * those lookups see every event the tables can ask for.  The state has its
 * lock, so lookups from several threads parse a format once.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/source.h"
#include "format_guard.h"
#include "lazy_events.h"

struct lazy_fmt {
	int id;
	uint32_t idx;           /* into the formats */
	const char *name;       /* into the text; name_len bytes */
	size_t name_len;
};

struct ks_lazy {
	struct tep_handle *tep;
	struct ks_guard_probe probe;
	pthread_mutex_t lock;
	const struct ks_source_format *f;
	size_t n;
	struct lazy_fmt *by_id;    /* sorted by id; NULL: all parsed at attach */
	bool *parsed;              /* by format index */
	size_t nr_parsed;
	int id_end;
	struct ks_lazy_syms syms;  /* the reader's resolver (resolve NULL: none) */
	bool comms_done;           /* syms.comms was called */
};

/* "name: NAME\nID: N\n" at the start of TEXT, NAME a run of the
 * characters libtraceevent reads as one word and N a decimal number
 * without a leading zero (libtraceevent reads it with base 0) that fits
 * an int: the shape every kernel writes, read here as libtraceevent
 * reads it.  Anything else: false. */
static bool index_one(const char *t, size_t len, struct lazy_fmt *out)
{
	const char *end = t + len, *p = t, *name;
	long long id = 0;
	int digits = 0;

	if (len < 6 || memcmp(p, "name: ", 6))
		return false;
	p = name = t + 6;
	while (p < end && (*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
			   (*p >= 'A' && *p <= 'Z')))
		p++;
	if (p == name || p >= end || *p != '\n')
		return false;
	out->name = name;
	out->name_len = (size_t)(p - name);
	p++;
	if (end - p < 4 || memcmp(p, "ID: ", 4))
		return false;
	for (p += 4; p < end && *p >= '0' && *p <= '9'; p++) {
		if (++digits > 9 || (digits == 2 && id == 0))
			return false;
		id = id * 10 + (*p - '0');
	}
	if (!digits || p >= end || *p != '\n')
		return false;
	out->id = (int)id;
	return true;
}

static int by_id_cmp(const void *a, const void *b)
{
	const struct lazy_fmt *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Parse format I (once). */
static void parse_idx(struct ks_lazy *l, uint32_t i)
{
	if (l->parsed[i])
		return;
	l->parsed[i] = true;
	l->nr_parsed++;
	ks_guard_parse_event(l->probe, l->tep, l->f[i].text, l->f[i].len, l->f[i].system);
}

/* Everything not parsed yet, together: one question to the probe. */
static void parse_rest(struct ks_lazy *l)
{
	struct ks_guard_batch *b;
	size_t i;

	if (l->nr_parsed == l->n)
		return;
	b = ks_guard_batch_new(l->probe);
	for (i = 0; b && i < l->n; i++)
		if (!l->parsed[i] && ks_guard_batch_add(b, l->f[i].text, l->f[i].len,
							l->f[i].system) < 0)
			break;
	if (b && i == l->n) {
		ks_guard_batch_parse(b, l->tep);
		memset(l->parsed, 1, l->n * sizeof(*l->parsed));
		l->nr_parsed = l->n;
	}
	ks_guard_batch_free(b);
	for (i = 0; i < l->n; i++) /* out of memory: one at a time */
		parse_idx(l, (uint32_t)i);
}

/* The formats parsed at attach (see ks_lazy_attach): the lowest id and,
 * with NAMES, the systems the architecture tables name, in one batch (one
 * question to the probe).  AT[i]: format i is one of them. */
static void parse_at_attach(struct ks_lazy *l, bool *at, bool names)
{
	struct ks_guard_batch *b = ks_guard_batch_new(l->probe);
	const char *sys = NULL;
	bool named = false;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const char *s = l->f[i].system;

		if (names && s && (!sys || strcmp(s, sys))) { /* formats come grouped by system */
			sys = s;
			named = ks_arch_names_system(s);
		}
		at[i] = names && s && named;
	}
	at[l->by_id[0].idx] = true;
	for (i = 0; b && i < l->n; i++)
		if (at[i] && ks_guard_batch_add(b, l->f[i].text, l->f[i].len, l->f[i].system) < 0) {
			ks_guard_batch_free(b);
			b = NULL;
		}
	if (b) {
		ks_guard_batch_parse(b, l->tep);
		for (i = 0; i < l->n; i++)
			if (at[i]) {
				l->parsed[i] = true;
				l->nr_parsed++;
			}
	}
	ks_guard_batch_free(b);
	for (i = 0; i < l->n; i++) /* out of memory: one at a time */
		if (at[i])
			parse_idx(l, (uint32_t)i);
}

/* The index of TEP's formats by id, or false (then nothing is deferred). */
static bool build_index(struct ks_lazy *l)
{
	size_t i;

	if (!(l->by_id = malloc((l->n ? l->n : 1) * sizeof(*l->by_id))))
		return false;
	for (i = 0; i < l->n; i++) {
		if (!index_one(l->f[i].text, l->f[i].len, &l->by_id[i]))
			return false;
		l->by_id[i].idx = (uint32_t)i;
		if (l->by_id[i].id >= l->id_end)
			l->id_end = l->by_id[i].id + 1;
	}
	qsort(l->by_id, l->n, sizeof(*l->by_id), by_id_cmp);
	for (i = 1; i < l->n; i++)
		if (l->by_id[i].id == l->by_id[i - 1].id)
			return false; /* which one libtraceevent finds depends on all */
	return true;
}

/* Without memory for an index: every format now, as before (SYMS is
 * done with: the resolver is not set). */
static void parse_now(struct ks_guard_probe probe, struct tep_handle *tep,
		      const struct ks_source_format *f, size_t n, const struct ks_lazy_syms *syms)
{
	struct ks_guard_batch *b = ks_guard_batch_new(probe);
	size_t i;

	for (i = 0; b && i < n; i++)
		if (ks_guard_batch_add(b, f[i].text, f[i].len, f[i].system) < 0)
			break;
	if (b && i == n) {
		ks_guard_batch_parse(b, tep);
	} else {
		ks_guard_batch_free(b);
		b = NULL;
		for (i = 0; i < n; i++)
			ks_guard_parse_event(probe, tep, f[i].text, f[i].len, f[i].system);
	}
	ks_guard_batch_free(b);
	if (syms && syms->comms)
		syms->comms(syms->priv, tep);
	if (syms && syms->done)
		syms->done(syms->priv);
}

struct ks_lazy *ks_lazy_attach(struct ks_guard_probe probe, struct tep_handle *tep,
			       const struct ks_source_format *f, size_t n,
			       const struct ks_lazy_syms *syms, bool names)
{
	struct ks_lazy *l = calloc(1, sizeof(*l));
	size_t i;

	if (!l || pthread_mutex_init(&l->lock, NULL)) {
		free(l);
		parse_now(probe, tep, f, n, syms);
		return NULL;
	}
	l->tep = tep;
	l->probe = probe;
	l->f = f;
	l->n = n;
	if (!(l->parsed = calloc(n ? n : 1, sizeof(*l->parsed)))) {
		pthread_mutex_destroy(&l->lock);
		free(l);
		parse_now(probe, tep, f, n, syms);
		return NULL;
	}
	if (syms)
		l->syms = *syms;
	if (syms && syms->resolve)
		tep_set_function_resolver(tep, syms->resolve, syms->priv);
	if (!build_index(l)) {
		free(l->by_id);
		l->by_id = NULL;
		l->id_end = 0;
		parse_rest(l);
		return l;
	}
	/* the format of the lowest id and those of the events the
	 * architecture tables may ask for by name, together: one question
	 * to the probe (AT: scratch) */
	if (n) {
		bool *at = malloc(n * sizeof(*at));

		if (at)
			parse_at_attach(l, at, names);
		else
			for (i = 0; names && i < n; i++)
				if (f[i].system && ks_arch_names_system(f[i].system))
					parse_idx(l, (uint32_t)i);
		free(at);
	}
	/* the first event libtraceevent holds gives every record its
	 * common fields (type, pid): the one of the lowest id that parses,
	 * as when all are parsed */
	for (i = 0; i < n; i++) {
		parse_idx(l, l->by_id[i].idx);
		if (tep_find_event(tep, l->by_id[i].id))
			break;
	}
	return l;
}

void ks_lazy_comms(struct ks_lazy *l)
{
	if (!l || !l->syms.comms)
		return;
	pthread_mutex_lock(&l->lock);
	if (!l->comms_done) {
		l->comms_done = true;
		l->syms.comms(l->syms.priv, l->tep);
	}
	pthread_mutex_unlock(&l->lock);
}

void ks_lazy_detach(struct ks_lazy *l)
{
	if (!l)
		return;
	if (l->syms.resolve)
		tep_reset_function_resolver(l->tep);
	if (l->syms.done)
		l->syms.done(l->syms.priv);
	pthread_mutex_destroy(&l->lock);
	free(l->by_id);
	free(l->parsed);
	free(l);
}

int ks_lazy_id_end(struct ks_lazy *l, struct tep_handle *tep)
{
	int i, n, end = 0;

	if (l && l->by_id)
		return l->id_end;
	n = tep ? tep_get_events_count(tep) : 0;
	for (i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(tep, i);

		if (ev && ev->id >= end)
			end = ev->id + 1;
	}
	return end;
}

/* ---- lookups ---- */

struct tep_event *ks_lazy_event_by_id(struct ks_lazy *l, struct tep_handle *tep, int id)
{
	struct tep_event *ev = tep ? tep_find_event(tep, id) : NULL;
	struct lazy_fmt key = { .id = id }, *hit;

	if (ev || !l || !l->by_id)
		return ev;
	pthread_mutex_lock(&l->lock);
	hit = bsearch(&key, l->by_id, l->n, sizeof(*l->by_id), by_id_cmp);
	if (hit && !l->parsed[hit->idx]) {
		parse_idx(l, hit->idx);
		ev = tep_find_event(tep, id);
	}
	pthread_mutex_unlock(&l->lock);
	return ev;
}

struct tep_event *ks_lazy_event(struct ks_lazy *l, struct tep_handle *tep, const char *system,
				const char *name)
{
	struct tep_event *ev = tep && name ? tep_find_event_by_name(tep, system, name) : NULL;
	size_t i, len;
	bool more = false;

	if (ev || !name || !l || !l->by_id)
		return ev;
	len = strlen(name);
	pthread_mutex_lock(&l->lock);
	/* every format of that name: libtraceevent finds the lowest id */
	for (i = 0; i < l->n; i++) {
		const struct lazy_fmt *x = &l->by_id[i];

		if (!l->parsed[x->idx] && x->name_len == len && !memcmp(x->name, name, len) &&
		    (!system || !strcmp(l->f[x->idx].system, system))) {
			parse_idx(l, x->idx);
			more = true;
		}
	}
	if (more)
		ev = tep_find_event_by_name(tep, system, name);
	pthread_mutex_unlock(&l->lock);
	return ev;
}

void ks_lazy_parse_all(struct ks_lazy *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	parse_rest(l);
	pthread_mutex_unlock(&l->lock);
}

size_t ks_lazy_formats_parsed(struct ks_lazy *l, struct tep_handle *tep)
{
	size_t n;

	if (!l)
		return tep ? (size_t)tep_get_events_count(tep) : 0;
	pthread_mutex_lock(&l->lock);
	n = l->nr_parsed;
	pthread_mutex_unlock(&l->lock);
	return n;
}

struct tep_event *ks_tep_event(struct tep_handle *tep, const char *system, const char *name)
{
	return tep && name ? tep_find_event_by_name(tep, system, name) : NULL;
}
