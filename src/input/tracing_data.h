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
 *	if (ks_tracing_data_parse_len(tep, buf, len, path, file_off, &used, err) < 0)
 *		fail;
 *	// buf + used is the first byte after the block (trace.dat v6: cpu count)
 *
 * FILE_OFFSET is where BUF starts in PATH; it is only used in error messages
 * ("PATH: offset N: ...").  Malformed input gives an error, never a crash.
 * A single event format that libtraceevent cannot parse is not an error (the
 * event is simply absent), as in perf and trace-cmd.
 */
#ifndef KVMSCOPE_TRACING_DATA_H
#define KVMSCOPE_TRACING_DATA_H

#include <stdint.h>

#include "kvmscope/error.h"

struct tep_handle;

/* Returns 0 or a negative value with err set. */
int ks_tracing_data_parse(struct tep_handle *tep, const uint8_t *buf, uint64_t len,
			  const char *path, uint64_t file_offset, struct ks_error *err);

/* Same; *consumed (may be NULL) receives the size of the block in bytes. */
int ks_tracing_data_parse_len(struct tep_handle *tep, const uint8_t *buf, uint64_t len,
			      const char *path, uint64_t file_offset, uint64_t *consumed,
			      struct ks_error *err);

/* The block's tep handle: *TEP (a fresh handle) is either filled from the
 * block, or replaced by a reference to the handle of an identical block
 * parsed before in this process (its state depends on the block's bytes
 * only).  META (may be NULL) receives the block's texts as stored
 * (ks_source_formats(), ks_source_text()).  Callers must not change the handle afterwards, other than
 * releasing it with tep_free().  Returns 0 or a negative value with err set. */
struct ks_source_meta;
int ks_tracing_data_load(struct tep_handle **tep, struct ks_source_meta *meta,
			 const uint8_t *buf, uint64_t len, const char *path, uint64_t file_offset,
			 struct ks_error *err);

/* A one-entry cache of tep handles per slot, keyed by the exact bytes that
 * made the handle (the caller's serialization of everything it fed in).
 * Lookup returns a new reference or NULL; store keeps a reference (keys of
 * more than KS_TEP_CACHE_MAX bytes are not kept).  A cached handle is
 * shared: nobody may change it afterwards. */
#define KS_TEP_CACHE_MAX (8ull << 20)
enum ks_tep_cache_slot { KS_TEP_CACHE_PERFDATA, KS_TEP_CACHE_TRACEDAT, KS_TEP_CACHE_SLOTS };

struct tep_handle *ks_tep_cache_lookup(enum ks_tep_cache_slot slot, const void *key, uint64_t len);
void ks_tep_cache_store(enum ks_tep_cache_slot slot, const void *key, uint64_t len,
			struct tep_handle *tep);

#endif
