/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_impl.h - what the trace.dat reader's files share: the reader's
 * state (struct tracedat, its buffers and per-CPU cursors) and the
 * functions one file gives the others.  The reader is four rooms:
 *   tracedat_io.c      byte order, the memory budget, the metadata reader
 *                      (struct rd), decompression and v7 sections
 *   tracedat_meta.c    metadata blocks: header info, event formats,
 *                      kallsyms (left in the file), printk, cmdlines, options
 *   tracedat_layout.c  the file header, the v6 and v7 layouts, source info
 *   tracedat.c         timestamps, the per-CPU cursors and their merge,
 *                      pages, the public accessors and ks_tracedat_open()
 */
#ifndef KVMSCOPE_TRACEDAT_IMPL_H
#define KVMSCOPE_TRACEDAT_IMPL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <zlib.h>
#include <zstd.h>

#include "ringpage.h"
#include "kvmscope/limits.h"
#include "kvmscope/tracedat.h"
#include "kvmscope/vmident.h"
#include "ctx_impl.h"
#include "source_events.h" /* the event layer: format guard, deferred formats */
#include "ftrace_text.h"
#include "source_impl.h"
#include "util/hashmap.h"

/* Option / section ids (trace-cmd.dat.v7(5)). */
enum {
	OPT_DONE = 0, OPT_DATE = 1, OPT_CPUSTAT = 2, OPT_BUFFER = 3, OPT_TRACECLOCK = 4,
	OPT_UNAME = 5, OPT_HOOK = 6, OPT_OFFSET = 7, OPT_CPUCOUNT = 8, OPT_VERSION = 9,
	OPT_PROCMAPS = 10, OPT_TRACEID = 11, OPT_TIME_SHIFT = 12, OPT_GUEST = 13,
	OPT_TSC2NSEC = 14, OPT_STRINGS = 15, OPT_HEADER_INFO = 16, OPT_FTRACE_EVENTS = 17,
	OPT_EVENT_FORMATS = 18, OPT_KALLSYMS = 19, OPT_PRINTK = 20, OPT_CMDLINES = 21,
	OPT_BUFFER_TEXT = 22,
};

#define SEC_FL_COMPRESS 1
#define MAX_SECTION (256u << 20)  /* largest decompressed metadata section */
#define MAX_CHUNK (64u << 20)     /* largest decompressed data chunk */
#define MAX_OPTION_SECTIONS 4096
#define READ_PAGES 16             /* pages per read of uncompressed data */
#define READ_BLOCK_MAX (256u << 10) /* ... but no more than this, unless one page is larger */
#define READ_AHEAD (64u << 10)    /* bytes per read of metadata fields */
#define PLAUSIBLE (1ull << 40)    /* sizes and offsets past the end below it: a cut file */
#define TSYNC_INTERPOLATE 1

enum compression { COMP_NONE, COMP_ZLIB, COMP_ZSTD };

/* One flyrecord buffer: the top-level one (name "") or an instance. */
struct tdbuffer {
	char *name;
	uint64_t offset;           /* v7: its flyrecord section; v6: its "flyrecord" CPU table */
	uint32_t page_size;        /* 0 = the file's */
	uint32_t first, nr_cpus;   /* its cursors */
	uint32_t order;
};

/* Where one CPU's data is and how far its cursor got. */
struct cpu_cursor {
	uint32_t cpu;
	uint32_t buffer;           /* index into tracedat.buffers */
	uint32_t order;            /* ties between buffers: 0 = top, then option order */
	uint32_t page_size;        /* the buffer's ring-buffer page size */
	bool compressed;           /* the buffer's data is in compressed chunks */
	uint64_t start, end;       /* data region in the file */
	uint64_t next;             /* next file offset to read (page block or chunk) */
	uint32_t chunks_left;      /* compressed: chunks not yet read */
	uint64_t zend;             /* compressed: where the chunks must end */
	uint8_t *buf;              /* loaded pages (decompressed chunk or read block) */
	uint8_t *retired;          /* previous buf, still holding the last record */
	size_t buf_charge, retired_charge; /* their bytes counted against the memory budget */
	uint64_t buf_off;          /* file offset of buf (chunk header offset if compressed) */
	size_t buf_len, page_pos;  /* loaded bytes; offset of the current page */
	bool page_loaded;
	struct kbuffer *kbuf;
	/* the next record of this CPU (peeked) */
	bool has;
	bool lost_pending;         /* deliver a LOST record before the event */
	int64_t missed;
	uint64_t raw_ts, ts;
	void *data;
	uint32_t size;
	uint64_t offset;
	bool done;
};

struct tracedat {
	struct ks_source src;      /* first */
	unsigned open_flags;       /* KS_OPEN_* */
	struct ks_tracedat_meta meta;
	struct ks_vmident vmident; /* kvmscope record's task map, if any */
	char format[48];
	int fd;
	uint64_t file_size;
	bool swap;
	enum compression comp;
	uint32_t page_size;

	/* flyrecord buffers: the top-level one and the instances; their
	 * cursors are one flat array, cpus[first .. first + nr_cpus) */
	struct tdbuffer *buffers;
	uint32_t nr_buffers;
	bool have_top;
	uint32_t nr_cpus;          /* cursors of all buffers */
	struct cpu_cursor *cpus;
	uint32_t *heap;            /* indexes into cpus, ordered by (ts, order, cpu) */
	uint32_t heap_len;
	bool started;

	/* latency layout: the stored text, read by an ftrace text source */
	bool latency;
	uint64_t latency_offset;   /* v6: start of the text; v7: its section */
	char *latency_text;
	size_t latency_len;
	bool latency_chunks;       /* v7 compressed: offsets of the text are not file offsets */
	struct ks_source *text_src;
	struct tep_handle *file_tep; /* the file's formats (src.tep is the text reader's) */
	struct ks_lazy *file_lazy;   /* file_tep's deferred formats */

	uint32_t *by_start;        /* with instances: cursors sorted by data offset */
	uint32_t nr_by_start;

	struct tep_event **event_cache; /* by type id; EV_NONE = looked up, absent */
	int event_cache_len;            /* event_id_end, at most EVENT_CACHE_MAX */
	int event_id_end;               /* the largest event id of the formats + 1 */
	uint8_t *ra;                    /* read-ahead block of the metadata reader */
	uint64_t ra_off, ra_len;
	void *scratch;

	/* v7: the sections loaded so far, by offset (a set): each is used
	 * once, since a file naming one twice loops or repeats work; and
	 * their bytes (decompressed) in all */
	struct ks_hmap sections;        /* offset -> nothing (a set) */
	uint64_t section_bytes;

	/* the run's budget (src.limits): bytes held in memory now (sections
	 * and blocks being parsed, data chunks of every CPU of every buffer,
	 * metadata kept) and metadata objects declared so far */
	uint64_t mem_held;
	uint64_t objects;
	uint32_t instances;        /* instance buffers so far (their order) */
	uint32_t buffers_cap, cpus_cap, guests_cap, names_cap;
	bool have_buffer_option;   /* v7: a BUFFER or BUFFER_TEXT option was seen */
	uint64_t section_end;      /* v7: the end of the section loaded last */

	/* the kallsyms text, left in the file until first asked for
	 * (ks_source_meta_defer_text): LEN bytes at OFF, or a compressed
	 * block of LEN bytes at OFF holding ULEN bytes, "u32 size, text" */
	struct {
		uint64_t off, len, at; /* AT: its section (v7), for errors */
		uint32_t ulen;
		bool compressed;
	} kallsyms;
};

#define EV_NONE ((struct tep_event *)1)

/* A reader over a memory block (a loaded or decompressed section) or over
 * the file itself (v6 metadata, which is not in sections). */
struct rd {
	struct tracedat *td;
	const uint8_t *mem;   /* memory mode when non-NULL */
	uint64_t pos, end;    /* file offsets, or indexes into mem */
	uint64_t base;        /* file offset reported for errors in memory mode */
	const char *what;     /* what is being read, for errors */
};

/* ---- tracedat_io.c ---- */
int td_compressed_header(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
			 uint32_t *csizep, uint32_t *usizep, struct ks_error *err);
int td_count_section_bytes(struct tracedat *td, uint64_t off, uint8_t **data, uint64_t len,
			   struct ks_error *err);
int td_decompress(struct tracedat *td, const void *in, uint32_t in_len, void *out, uint32_t out_len,
		  uint64_t at, struct ks_error *err);
uint16_t td_get16(const struct tracedat *td, const void *p);
uint32_t td_get32(const struct tracedat *td, const void *p);
uint64_t td_get64(const struct tracedat *td, const void *p);
int td_grow(struct tracedat *td, void **p, uint32_t *cap, uint64_t n, size_t size, uint64_t at,
	    struct ks_error *err);
int td_load_compressed(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
		       uint8_t **out, uint32_t *out_len, uint64_t *next, struct ks_error *err);
int td_load_section(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
		    uint8_t **data, uint64_t *len, struct ks_error *err);
void td_mem_give(struct tracedat *td, uint64_t n);
int td_mem_take(struct tracedat *td, uint64_t n, uint64_t at, struct ks_error *err);
int td_obj_take(struct tracedat *td, uint64_t n, uint64_t at, const char *what,
		struct ks_error *err);
int td_pread_at(struct tracedat *td, void *dst, uint64_t n, uint64_t off, const char *what,
		struct ks_error *err);
int td_rd_alloc(struct rd *r, uint64_t n, char **out, struct ks_error *err);
int td_rd_bytes(struct rd *r, void *dst, uint64_t n, struct ks_error *err);
uint64_t td_rd_errpos(const struct rd *r);
int td_rd_expect(struct rd *r, const char *magic, size_t len, struct ks_error *err);
void td_rd_free(struct rd *r, char *buf, uint64_t n);
int td_rd_string(struct rd *r, char *dst, size_t max, struct ks_error *err);
int td_rd_u16(struct rd *r, uint16_t *v, struct ks_error *err);
int td_rd_u32(struct rd *r, uint32_t *v, struct ks_error *err);
int td_rd_u64(struct rd *r, uint64_t *v, struct ks_error *err);
void td_section_free(struct tracedat *td, uint8_t *data, uint64_t len);
int td_section_header(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
		      uint16_t *flagsp, uint64_t *sizep, struct ks_error *err);

/* ---- tracedat_meta.c ---- */
int td_add_cursors(struct tracedat *td, struct tdbuffer *b, uint32_t ncpu, uint64_t at,
		   struct ks_error *err);
struct tdbuffer *td_add_tdbuffer(struct tracedat *td, const char *name, uint64_t offset,
				 uint64_t at, struct ks_error *err);
int td_parse_cmdlines(struct rd *r, struct ks_error *err);
int td_parse_event_formats(struct rd *r, struct ks_error *err);
int td_parse_ftrace_formats(struct rd *r, struct ks_error *err);
int td_parse_header_info(struct rd *r, struct ks_error *err);
int td_parse_kallsyms(struct rd *r, struct ks_error *err);
int td_parse_options(struct tracedat *td, struct rd *r, uint64_t *next, struct ks_error *err);
int td_parse_printk(struct rd *r, struct ks_error *err);
int td_set_cursor(struct tracedat *td, struct tdbuffer *b, uint32_t i, uint32_t cpu, uint64_t off,
		  uint64_t size, uint64_t at, struct ks_error *err);

/* ---- tracedat_layout.c ---- */
void td_fill_info(struct tracedat *td);
int td_fill_source_meta(struct tracedat *td);
int td_parse_file_header(struct tracedat *td, struct rd *r, struct ks_error *err);
int td_parse_v6(struct tracedat *td, struct rd *r, struct ks_error *err);
int td_parse_v7(struct tracedat *td, struct rd *hdr, struct ks_error *err);
uint32_t td_top_buffer(const struct tracedat *td);

#endif
