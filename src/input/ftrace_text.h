/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text.h - extras of the ftrace text reader (ftrace_text.c).
 *
 * The reader is opened through ks_source_open(); this header only exposes
 * what the generic struct ks_source has no room for.
 */
#ifndef KVMSCOPE_FTRACE_TEXT_H
#define KVMSCOPE_FTRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"

struct ks_source;

/* A reader over text in memory (used for the text stored in trace.dat
 * latency files): LEN bytes of TEXT followed by a NUL, which the caller
 * keeps unchanged while the source lives.  NAME is used in error messages;
 * CTX is the library context (kvmscope/ctx.h; NULL: none).  Unlike files,
 * any text is accepted; lines that are not trace events are counted as
 * usual. */
struct ks_ctx;
int ks_ftrace_text_open_mem(struct ks_source **out, const char *name, const char *text,
			    size_t len, struct ks_ctx *ctx, struct ks_error *err);

/* Lines that looked like trace text but could not be decoded (they are
 * also counted in stats.skipped).  Returns that count and stores the byte
 * offset of the first one in *first_offset (when non-NULL and count > 0).
 * Returns 0 for a source that is not ftrace text. */
uint64_t ks_ftrace_text_malformed(const struct ks_source *src, uint64_t *first_offset);

/* The check ks_source_open() makes of a text file's head, on LEN bytes at
 * HEAD (the first ks_ftrace_text_head_size() of the input, or all of it;
 * MORE: the input goes on).  0, or -1 with ERR "NAME: offset N: ...". */
int ks_ftrace_text_check_head(const char *name, const void *head, size_t len, bool more,
			      struct ks_error *err);
size_t ks_ftrace_text_head_size(void);

#endif
