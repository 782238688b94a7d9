/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source_events.c - a source's event formats and kallsyms, through the
 * event layer (see source_events.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <traceevent/event-parse.h>

#include "ctx_impl.h"
#include "kallsyms_text.h"
#include "source_events.h"
#include "source_impl.h"

/* ---- the context's probe ---- */

static bool ctx_formats_safe(void *ctx, const struct ks_source_format *f, size_t n)
{
	return ks_ctx_formats_safe(ctx, f, n);
}

struct ks_guard_probe ks_ctx_guard_probe(struct ks_ctx *ctx)
{
	/* the context is asked at each question: it reads its probe under
	 * its lock, as before */
	return ctx ? (struct ks_guard_probe){ .fn = ctx_formats_safe, .arg = ctx } : KS_GUARD_NO_PROBE;
}

/* ---- kallsyms ----
 *
 * The symbols go into a table of their own (ks_ksym_table_new(): the
 * array libtraceevent would build, searched as it searches it) or, for a
 * text in a shape that parse does not know, into a handle of their own as
 * before (the same tep_register_function() calls); the resolver answers
 * from it: the same function and start address as when they were
 * registered on the source's handle.  The state has its own lock: lookups
 * come from the threads that print. */
struct lazy_ksyms {
	pthread_mutex_t lock;
	struct ks_source_meta *meta; /* its kallsyms text */
	struct ks_ksym_table *table; /* the parsed kallsyms, on first lookup */
	struct tep_handle *syms;     /* ... or (a text of another shape) these */
	bool tried;
};

static char *resolve(void *priv, unsigned long long *addrp, char **modp)
{
	struct lazy_ksyms *k = priv;
	const char *name = NULL;

	(void)modp;
	pthread_mutex_lock(&k->lock);
	if (!k->tried) {
		/* a text left in the file is read now (a failure is the
		 * source's error: its next read returns it) */
		const char *text = ks_source_meta_text(k->meta, KS_TEXT_KALLSYMS, NULL);

		k->tried = true;
		if (text && *text && !(k->table = ks_ksym_table_new(text)) &&
		    (k->syms = tep_alloc()))
			ks_parse_kallsyms(k->syms, text);
	}
	if (k->table)
		name = ks_ksym_table_find(k->table, *addrp, addrp);
	else if (k->syms && (name = tep_find_function(k->syms, *addrp)))
		*addrp = tep_find_function_address(k->syms, *addrp);
	pthread_mutex_unlock(&k->lock);
	return (char *)name;
}

/* The saved cmdlines deferred at open, into TEP as they were then (the
 * same tep_parse_saved_cmdlines() call on the same text). */
static void comms(void *priv, struct tep_handle *tep)
{
	struct lazy_ksyms *k = priv;
	const char *text;

	pthread_mutex_lock(&k->lock);
	text = ks_source_meta_text(k->meta, KS_TEXT_CMDLINES, NULL);
	if (text && *text)
		tep_parse_saved_cmdlines(tep, text);
	pthread_mutex_unlock(&k->lock);
}

static void ksyms_done(void *priv)
{
	struct lazy_ksyms *k = priv;

	ks_ksym_table_free(k->table);
	if (k->syms)
		tep_free(k->syms);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

struct ks_lazy *ks_source_lazy_attach(struct ks_ctx *ctx, struct tep_handle *tep,
				      const struct ks_source_format *f, size_t n,
				      struct ks_source_meta *syms, bool names, bool cmdlines)
{
	bool ksyms = syms && ks_source_meta_has_text(syms, KS_TEXT_KALLSYMS);
	bool cmds = cmdlines && syms && ks_source_meta_has_text(syms, KS_TEXT_CMDLINES);
	struct ks_lazy_syms hook = { .resolve = ksyms ? resolve : NULL, .done = ksyms_done,
				     .comms = cmds ? comms : NULL };
	struct lazy_ksyms *k = NULL;

	if (ksyms || cmds) {
		k = calloc(1, sizeof(*k));
		if (k && pthread_mutex_init(&k->lock, NULL)) {
			free(k);
			k = NULL;
		}
		if (k)
			k->meta = syms;
	}
	hook.priv = k;
	/* without memory for the symbols' state: no symbols, as when the
	 * deferred formats had none; the cmdlines now, as before */
	if (!k && cmds) {
		const char *text = ks_source_meta_text(syms, KS_TEXT_CMDLINES, NULL);

		if (text && *text)
			tep_parse_saved_cmdlines(tep, text);
	}
	return ks_lazy_attach(ks_ctx_guard_probe(ctx), tep, f, n, k ? &hook : NULL, names);
}

struct tep_handle *ks_source_tep_comms(const struct ks_source *src)
{
	if (!src)
		return NULL;
	ks_lazy_comms(src->lazy);
	return src->tep;
}

/* ---- the source's lookups (kvmscope/source.h) ---- */

struct tep_event *ks_source_event(struct ks_source *src, const char *system, const char *name)
{
	return src ? ks_lazy_event(src->lazy, src->tep, system, name) : NULL;
}

struct tep_event *ks_source_event_by_id(struct ks_source *src, int id)
{
	return src ? ks_lazy_event_by_id(src->lazy, src->tep, id) : NULL;
}

void ks_source_parse_all(struct ks_source *src)
{
	if (src)
		ks_lazy_parse_all(src->lazy);
}

size_t ks_source_formats_parsed(const struct ks_source *src)
{
	return src ? ks_lazy_formats_parsed(src->lazy, src->tep) : 0;
}
