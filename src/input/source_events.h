/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source_events.h - the readers' side of the event layer (src/event).
 *
 * The format guard and the deferred formats know no library context and no
 * source: a reader hands them what they need from its own.  Here: the
 * context's probe as the guard asks it, and a source's formats deferred
 * with its kallsyms resolved when first asked (the text may still be in
 * the file).  The source's event lookups of kvmscope/source.h
 * (ks_source_event()...) are defined here too, on the deferred formats.
 *
 *	b = ks_guard_batch_new(ks_ctx_guard_probe(ctx));
 *	src->lazy = ks_source_lazy_attach(ctx, tep, formats, n, &meta, names);
 */
#ifndef KVMSCOPE_SOURCE_EVENTS_H
#define KVMSCOPE_SOURCE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "event/format_guard.h"
#include "event/lazy_events.h"

struct ks_ctx;
struct ks_source_meta;
struct tep_handle;

/* CTX's probe (kvmscope/format_probe.h), asked as the context asks it
 * (ks_ctx_formats_safe()); CTX NULL: none. */
struct ks_guard_probe ks_ctx_guard_probe(struct ks_ctx *ctx);

/* ks_lazy_attach() with CTX's probe, and the kallsyms text of SYMS (NULL:
 * none; it stays as long) read (ks_source_meta_text) and parsed on the
 * first symbol lookup; with CMDLINES, its saved cmdlines text (not parsed
 * yet) registered on TEP when first asked (ks_lazy_comms(),
 * ks_source_tep_comms()).  NULL when out of memory (everything but the
 * kallsyms was then parsed now). */
struct ks_lazy *ks_source_lazy_attach(struct ks_ctx *ctx, struct tep_handle *tep,
				      const struct ks_source_format *f, size_t n,
				      struct ks_source_meta *syms, bool names, bool cmdlines);

#endif
