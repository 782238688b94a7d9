/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctx_impl.h - what the readers use of a library context (kvmscope/ctx.h).
 *
 * Every function takes a NULL context: no probe, nothing cached.
 */
#ifndef KVMSCOPE_CTX_IMPL_H
#define KVMSCOPE_CTX_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/ctx.h"
#include "kvmscope/source.h"

struct tep_handle;

/* The program's verdict on the N formats F (format_probe.h): true when
 * CTX has no probe. */
bool ks_ctx_formats_safe(struct ks_ctx *ctx, const struct ks_source_format *f, size_t n);

/* Release a reference to TEP (NULL ok) that came from CTX or was made by a
 * source opened with CTX: tep_free() under CTX's lock, as another thread
 * may take or release the same handle. */
void ks_ctx_tep_put(struct ks_ctx *ctx, struct tep_handle *tep);

/* Objects a reader builds once per context (read-only once built, or
 * guarded by a lock of their own): the one in SLOT, built by BUILD under
 * CTX's lock on first use, freed by DESTROY with the context.  NULL when CTX is NULL or BUILD failed (it is
 * tried again next time). */
enum ks_ctx_obj_slot {
	KS_CTX_OBJ_TEXT_FORMATS, /* the ftrace text reader's built-in formats */
	KS_CTX_OBJ_LIBVIRT_HUNG, /* libvirt's calls given up on, still running */
	KS_CTX_OBJ_SLOTS
};
void *ks_ctx_obj(struct ks_ctx *ctx, enum ks_ctx_obj_slot slot, void *(*build)(void),
		 void (*destroy)(void *));

/* The perf.data reader's windows (see ks_ctx_perfdata_tune in
 * source_impl.h): the mapping threshold, and the prefetch chunk (0: the
 * reader's default). */
void ks_ctx_perfdata_windows(struct ks_ctx *ctx, uint64_t *min_mapped, uint64_t *chunk);

#endif
