/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracing_data.h - parse the ftrace metadata block shared by perf.data
 * (feature HEADER_TRACING_DATA) and trace.dat v6 (the start of the file).
 *
 * The block holds: magic "\027\010\104tracing", a version string, the
 * endian byte, long size, page size, header_page, header_event, the ftrace
 * formats, the event systems and their formats, kallsyms, printk formats and
 * (version >= 0.6) saved cmdlines.  Everything is loaded into TEP with
 * libtraceevent; TEP's file endianness, long size and page size are set.
 *
 *	uint64_t used;
 *	if (ks_tracing_data_parse_len(ctx, tep, buf, len, path, file_off, &used, err) < 0)
 *		fail;
 *	// buf + used is the first byte after the block (trace.dat v6: cpu count)
 *
 * FILE_OFFSET is where BUF starts in PATH; it is only used in error messages
 * ("PATH: offset N: ...").  Malformed input gives an error, never a crash.
 * A single event format that libtraceevent cannot parse is not an error (the
 * event is simply absent), as in perf and trace-cmd.  CTX is the library
 * context of the input (kvmscope/ctx.h; NULL: none): its format probe is
 * asked about the formats.
 */
#ifndef KVMSCOPE_TRACING_DATA_H
#define KVMSCOPE_TRACING_DATA_H

#include <stdint.h>

#include "kvmscope/error.h"

struct ks_ctx;
struct tep_handle;

/* Returns 0 or a negative value with err set. */
int ks_tracing_data_parse(struct ks_ctx *ctx, struct tep_handle *tep, const uint8_t *buf,
			  uint64_t len, const char *path, uint64_t file_offset,
			  struct ks_error *err);

/* Same; *consumed (may be NULL) receives the size of the block in bytes. */
int ks_tracing_data_parse_len(struct ks_ctx *ctx, struct tep_handle *tep, const uint8_t *buf,
			      uint64_t len, const char *path, uint64_t file_offset,
			      uint64_t *consumed, struct ks_error *err);

/* The block into *TEP (a fresh handle, the source's own), its texts kept
 * in META as stored (ks_source_formats(), ks_source_text()): the event
 * formats, kallsyms and saved cmdlines are attached to the handle unparsed
 * and parsed when first needed (the cmdlines: ks_source_tep_comms()) (event/lazy_events.h: the state into *LAZY; the caller calls
 * ks_lazy_detach() before freeing META), the rest is parsed now.  The
 * formats' fields are counted against LIM's memory budget (NULL: the
 * defaults; ks_tracing_data_parse*() use the defaults too).  Returns 0 or
 * a negative value with err set. */
struct ks_source_meta;
struct ks_lazy;
struct ks_limits;
int ks_tracing_data_load(struct ks_ctx *ctx, struct tep_handle **tep, struct ks_source_meta *meta,
			 const uint8_t *buf, uint64_t len, const char *path, uint64_t file_offset,
			 const struct ks_limits *lim, struct ks_lazy **lazy, struct ks_error *err);

#endif
