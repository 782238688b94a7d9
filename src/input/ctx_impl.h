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

/* The shared tep handles: one per slot, the last one kept, keyed by the
 * exact bytes that made it (the reader's serialization of everything it
 * fed in; keys of more than KS_CTX_TEP_KEY_MAX bytes are not kept).  A
 * kept handle is shared: nobody may change it afterwards. */
#define KS_CTX_TEP_KEY_MAX (8ull << 20)
enum ks_ctx_tep_slot {
	KS_CTX_TEP_PERFDATA,  /* a perf.data's tracing data block */
	KS_CTX_TEP_TRACEDAT,  /* a trace.dat's metadata */
	KS_CTX_TEP_SLOTS
};
/* A new reference to the handle kept in SLOT under KEY (LEN bytes), or
 * NULL. */
struct tep_handle *ks_ctx_tep_get(struct ks_ctx *ctx, enum ks_ctx_tep_slot slot, const void *key,
				  uint64_t len);
/* Keep a reference to TEP in SLOT under KEY (LEN bytes), replacing the
 * handle kept there before. */
void ks_ctx_tep_keep(struct ks_ctx *ctx, enum ks_ctx_tep_slot slot, const void *key,
		     uint64_t len, struct tep_handle *tep);
/* Release a reference to TEP (NULL ok) that came from CTX or was made by a
 * source opened with CTX: tep_free() under CTX's lock, as another thread
 * may take or release the same handle. */
void ks_ctx_tep_put(struct ks_ctx *ctx, struct tep_handle *tep);

/* Objects a reader builds once per context (read-only once built): the
 * one in SLOT, built by BUILD under CTX's lock on first use, freed by
 * DESTROY with the context.  NULL when CTX is NULL or BUILD failed (it is
 * tried again next time). */
enum ks_ctx_obj_slot {
	KS_CTX_OBJ_TEXT_FORMATS, /* the ftrace text reader's built-in formats */
	KS_CTX_OBJ_SLOTS
};
void *ks_ctx_obj(struct ks_ctx *ctx, enum ks_ctx_obj_slot slot, void *(*build)(void),
		 void (*destroy)(void *));

/* The perf.data reader's windows (see ks_ctx_perfdata_tune in
 * source_impl.h): the mapping threshold, and the prefetch chunk (0: the
 * reader's default). */
void ks_ctx_perfdata_windows(struct ks_ctx *ctx, uint64_t *min_mapped, uint64_t *chunk);

#endif
