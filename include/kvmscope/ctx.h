/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctx.h - the library context: what the library would otherwise keep for
 * the whole process.
 *
 * The library holds no process-wide state.  The program's settings and
 * what inputs share live in a struct ks_ctx that the program creates,
 * hands to every open (ks_source_open_opts, ks_merge_opts, ks_live_opts)
 * and frees after the last thing opened with it is closed:
 *
 *	struct ks_ctx *ctx = ks_ctx_new();
 *	ks_format_probe_set(ctx, probe, NULL);        // optional (format_probe.h)
 *	struct ks_source_opts o = { .ctx = ctx };
 *	if (ks_source_open_opts(&src, path, &o, &err) < 0) die(err.msg);
 *	...
 *	ks_source_close(src);
 *	ks_ctx_free(ctx);
 *
 * A context holds:
 *  - the program's format probe (format_probe.h), asked about the event
 *    formats of every input opened with the context;
 *  - the ftrace text reader's built-in event formats, parsed once per
 *    context and shared by the text inputs opened with it (handles are
 *    reference-counted, so a source's handle stays valid until the source
 *    is closed).  A trace.dat or perf.data has a handle of its own: its
 *    formats are parsed as they are first needed, so the handle grows;
 *  - reader tuning for tests (src/input/source_impl.h).
 *
 * A NULL context is accepted wherever one is taken: no probe (the
 * library's own checks of formats only) and nothing shared.
 *
 * Threads: several threads may open and close sources on one context at
 * once; shared handles are taken and released under the context's lock.
 * Set the probe before opening inputs.  Sources that share a handle are
 * read (decoded) through libtraceevent, which does not lock a handle: a
 * program that reads inputs on several threads at once gives each thread
 * its own context.
 */
#ifndef KVMSCOPE_CTX_H
#define KVMSCOPE_CTX_H

#include <stdbool.h>

struct ks_ctx;

/* A new context without probe and with nothing cached; NULL when out of
 * memory. */
struct ks_ctx *ks_ctx_new(void);
/* Release what CTX holds (NULL: nothing to do).  Sources, merges and live
 * sessions opened with CTX must be closed before. */
void ks_ctx_free(struct ks_ctx *ctx);

/* The program's cancel function: the library's waits on peers (QMP) ask
 * it at least every 100 ms and give up ("interrupted") once it returns
 * true: a program that catches SIGINT/SIGTERM passes what its handler
 * sets.  NULL: never.  Called from any thread. */
void ks_ctx_set_cancel(struct ks_ctx *ctx, bool (*cancelled)(void *arg), void *arg);
/* Whether CTX's cancel function says so (false for a NULL CTX). */
bool ks_ctx_cancelled(struct ks_ctx *ctx);

#endif
