/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctx.c - the library context (kvmscope/ctx.h): the program's format probe,
 * the release of tep handles under its lock, and the readers'
 * tuning, behind one lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ctx_impl.h"
#include "kvmscope/format_probe.h"
#include "source_impl.h"

struct ks_ctx {
	pthread_mutex_t lock;
	ks_format_probe_fn probe;
	void *probe_arg;
	uint64_t pd_map_min, pd_chunk;
	bool (*cancelled)(void *arg);
	void *cancel_arg;
	struct {
		void *obj;
		void (*destroy)(void *);
	} objs[KS_CTX_OBJ_SLOTS];
};

struct ks_ctx *ks_ctx_new(void)
{
	struct ks_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	if (pthread_mutex_init(&ctx->lock, NULL)) {
		free(ctx);
		return NULL;
	}
	ctx->pd_map_min = KS_PD_MAP_MIN;
	return ctx;
}

void ks_ctx_free(struct ks_ctx *ctx)
{
	if (!ctx)
		return;
	for (int i = 0; i < KS_CTX_OBJ_SLOTS; i++)
		if (ctx->objs[i].obj)
			ctx->objs[i].destroy(ctx->objs[i].obj);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

/* ---- cancel ---- */

void ks_ctx_set_cancel(struct ks_ctx *ctx, bool (*cancelled)(void *arg), void *arg)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	ctx->cancelled = cancelled;
	ctx->cancel_arg = arg;
	pthread_mutex_unlock(&ctx->lock);
}

bool ks_ctx_cancelled(struct ks_ctx *ctx)
{
	bool (*fn)(void *);
	void *arg;

	if (!ctx)
		return false;
	pthread_mutex_lock(&ctx->lock);
	fn = ctx->cancelled;
	arg = ctx->cancel_arg;
	pthread_mutex_unlock(&ctx->lock);
	return fn && fn(arg);
}

/* ---- the program's format probe ---- */

void ks_format_probe_set(struct ks_ctx *ctx, ks_format_probe_fn fn, void *arg)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	ctx->probe = fn;
	ctx->probe_arg = arg;
	pthread_mutex_unlock(&ctx->lock);
}

bool ks_ctx_formats_safe(struct ks_ctx *ctx, const struct ks_source_format *f, size_t n)
{
	ks_format_probe_fn fn;
	void *arg;

	if (!ctx)
		return true;
	pthread_mutex_lock(&ctx->lock);
	fn = ctx->probe;
	arg = ctx->probe_arg;
	pthread_mutex_unlock(&ctx->lock);
	/* asked unlocked: a probe may take long (it parses in a helper) */
	return !fn || fn(arg, f, n);
}

/* ---- objects built once per context ---- */

void *ks_ctx_obj(struct ks_ctx *ctx, enum ks_ctx_obj_slot slot, void *(*build)(void),
		 void (*destroy)(void *))
{
	void *obj;

	if (!ctx)
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->objs[slot].obj && (ctx->objs[slot].obj = build()))
		ctx->objs[slot].destroy = destroy;
	obj = ctx->objs[slot].obj;
	pthread_mutex_unlock(&ctx->lock);
	return obj;
}

/* ---- tep handles ---- */

void ks_ctx_tep_put(struct ks_ctx *ctx, struct tep_handle *tep)
{
	if (!tep)
		return;
	if (!ctx) {
		tep_free(tep);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	tep_free(tep);
	pthread_mutex_unlock(&ctx->lock);
}

/* ---- reader tuning ---- */

void ks_ctx_perfdata_tune(struct ks_ctx *ctx, uint64_t min_mapped, uint64_t chunk)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	ctx->pd_map_min = min_mapped;
	ctx->pd_chunk = chunk;
	pthread_mutex_unlock(&ctx->lock);
}

void ks_ctx_perfdata_windows(struct ks_ctx *ctx, uint64_t *min_mapped, uint64_t *chunk)
{
	*min_mapped = KS_PD_MAP_MIN;
	*chunk = 0;
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	*min_mapped = ctx->pd_map_min;
	*chunk = ctx->pd_chunk;
	pthread_mutex_unlock(&ctx->lock);
}
