/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat.c - trace-cmd trace.dat reader (file versions 6 and 7).
 *
 * ks_tracedat_open() parses the metadata (header page, event formats,
 * kallsyms, printk formats, saved cmdlines, options) into the source's tep,
 * then ks_source_next() delivers the flyrecord events of every buffer (the
 * top-level one and the instances of trace-cmd record -B) in time order: one
 * cursor per CPU of every buffer reads one page (or one compressed chunk) at
 * a time and a small heap merges them, ties going to the top buffer, then to
 * the instances in option order, then to the lower CPU, like trace-cmd
 * report.  ks_tracedat_record_buffer() maps a record back to its buffer by
 * its file offset.  A latency file (the text of the trace instead of pages)
 * is handed to the ftrace text reader through ks_ftrace_text_open_mem().  Timestamps are converted like `trace-cmd report`:
 * guest TimeShift samples, then TSC2NSEC, then OFFSET.
 *
 * Layout references: trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5).
 */
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
#include "format_guard.h"
#include "lazy_events.h"
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

static const struct ks_source_ops tracedat_ops;

/* ------------------------------------------------------------------ */
/* byte order helpers */

static uint16_t get16(const struct tracedat *td, const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return td->swap ? __builtin_bswap16(v) : v;
}

static uint32_t get32(const struct tracedat *td, const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return td->swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const struct tracedat *td, const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return td->swap ? __builtin_bswap64(v) : v;
}

static int pread_at(struct tracedat *td, void *dst, uint64_t n, uint64_t off,
		    const char *what, struct ks_error *err)
{
	uint8_t *d = dst;
	uint64_t done = 0;

	if (off > td->file_size || n > td->file_size - off)
		return ks_error_at(err, td->src.path, off,
				   "truncated: %s of %llu bytes runs past the end of the file (%llu bytes)",
				   what, (unsigned long long)n, (unsigned long long)td->file_size);
	while (done < n) {
		ssize_t r = pread(td->fd, d + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ks_error_at(err, td->src.path, off + done, "cannot read %s: %s", what,
					   r < 0 ? strerror(errno) : "unexpected end of file");
		done += (uint64_t)r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the run's budget */

/* Take N more bytes of the memory budget for data read at AT. */
static int mem_take(struct tracedat *td, uint64_t n, uint64_t at, struct ks_error *err)
{
	uint64_t lim = td->src.limits.memory;
	char hint[96];

	if (n <= lim && td->mem_held <= lim - n) {
		td->mem_held += n;
		return 0;
	}
	return ks_error_at(err, td->src.path, at,
			   "the file needs more than %llu MiB of decompressed data in memory at once %s",
			   (unsigned long long)(lim >> 20), ks_limit_hint(hint, sizeof(hint), "memory", lim));
}

static void mem_give(struct tracedat *td, uint64_t n)
{
	td->mem_held = n < td->mem_held ? td->mem_held - n : 0;
}

/* N more metadata objects (WHAT, declared at AT). */
static int obj_take(struct tracedat *td, uint64_t n, uint64_t at, const char *what,
		    struct ks_error *err)
{
	uint64_t lim = td->src.limits.objects;
	char hint[96];

	if (n <= lim && td->objects <= lim - n) {
		td->objects += n;
		return 0;
	}
	return ks_error_at(err, td->src.path, at,
			   "the file declares more than %llu metadata objects (at %s) %s",
			   (unsigned long long)lim, what, ks_limit_hint(hint, sizeof(hint), "objects", lim));
}

/* Room for N + 1 items of SIZE bytes in the array *P of capacity *CAP
 * (grown by doubling: options handled in linear time), the growth counted
 * against the memory budget. */
static int grow(struct tracedat *td, void **p, uint32_t *cap, uint64_t n, size_t size, uint64_t at,
		struct ks_error *err)
{
	uint64_t want;
	void *q;

	if (n < *cap)
		return 0;
	want = *cap ? (uint64_t)*cap * 2 : 8;
	while (want <= n)
		want *= 2;
	if (want > UINT32_MAX)
		return ks_error_at(err, td->src.path, at, "too many items");
	if (mem_take(td, (want - *cap) * size, at, err) < 0)
		return -1;
	q = realloc(*p, want * size);
	if (!q)
		return ks_error_at(err, td->src.path, at, "out of memory");
	*p = q;
	*cap = (uint32_t)want;
	return 0;
}

/* ------------------------------------------------------------------ */
/* A reader over a memory block (a loaded or decompressed section) or over
 * the file itself (v6 metadata, which is not in sections). */

struct rd {
	struct tracedat *td;
	const uint8_t *mem;   /* memory mode when non-NULL */
	uint64_t pos, end;    /* file offsets, or indexes into mem */
	uint64_t base;        /* file offset reported for errors in memory mode */
	const char *what;     /* what is being read, for errors */
};

static uint64_t rd_errpos(const struct rd *r)
{
	return r->mem ? r->base : r->pos;
}

/* N file bytes at OFF through the read-ahead block (the metadata is read
 * in fields of a few bytes: one pread each cost more than parsing them). */
static int read_ahead(struct tracedat *td, void *dst, uint64_t n, uint64_t off, const char *what,
		      struct ks_error *err)
{
	uint64_t len;

	if (n > READ_AHEAD || off > td->file_size || n > td->file_size - off)
		return pread_at(td, dst, n, off, what, err);
	if (off < td->ra_off || off + n > td->ra_off + td->ra_len) {
		len = td->file_size - off < READ_AHEAD ? td->file_size - off : READ_AHEAD;
		td->ra_len = 0;
		if (!td->ra && !(td->ra = malloc(READ_AHEAD)))
			return pread_at(td, dst, n, off, what, err);
		if (pread_at(td, td->ra, len, off, what, err) < 0)
			return -1;
		td->ra_off = off;
		td->ra_len = len;
	}
	memcpy(dst, td->ra + (off - td->ra_off), n);
	return 0;
}

static int rd_bytes(struct rd *r, void *dst, uint64_t n, struct ks_error *err)
{
	if (n > r->end - r->pos)
		return ks_error_at(err, r->td->src.path, rd_errpos(r),
				   "%s is truncated (needs %llu more bytes, %llu left)", r->what,
				   (unsigned long long)n, (unsigned long long)(r->end - r->pos));
	if (r->mem)
		memcpy(dst, r->mem + r->pos, n);
	else if (read_ahead(r->td, dst, n, r->pos, r->what, err) < 0)
		return -1;
	r->pos += n;
	return 0;
}

static int rd_u16(struct rd *r, uint16_t *v, struct ks_error *err)
{
	uint8_t b[2];
	if (rd_bytes(r, b, 2, err) < 0)
		return -1;
	*v = get16(r->td, b);
	return 0;
}

static int rd_u32(struct rd *r, uint32_t *v, struct ks_error *err)
{
	uint8_t b[4];
	if (rd_bytes(r, b, 4, err) < 0)
		return -1;
	*v = get32(r->td, b);
	return 0;
}

static int rd_u64(struct rd *r, uint64_t *v, struct ks_error *err)
{
	uint8_t b[8];
	if (rd_bytes(r, b, 8, err) < 0)
		return -1;
	*v = get64(r->td, b);
	return 0;
}

/* Read N bytes into a new NUL-terminated buffer (N bounded by what is left),
 * counted against the memory budget until rd_free(). */
static int rd_alloc(struct rd *r, uint64_t n, char **out, struct ks_error *err)
{
	char *buf;

	*out = NULL;
	if (n > r->end - r->pos)
		return ks_error_at(err, r->td->src.path, rd_errpos(r),
				   "%s%s: a block of %llu bytes runs past its end (%llu bytes left)",
				   /* in the file (v6): cut short, unless absurd */
				   !r->mem && n < PLAUSIBLE ? "truncated: " : "", r->what,
				   (unsigned long long)n,
				   (unsigned long long)(r->end - r->pos));
	if (mem_take(r->td, n + 1, rd_errpos(r), err) < 0)
		return -1;
	buf = malloc(n + 1);
	if (!buf)
		return ks_error_at(err, r->td->src.path, rd_errpos(r), "out of memory");
	if (rd_bytes(r, buf, n, err) < 0) {
		free(buf);
		mem_give(r->td, n + 1);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* Free a block of N bytes from rd_alloc(). */
static void rd_free(struct rd *r, char *buf, uint64_t n)
{
	free(buf);
	mem_give(r->td, n + 1);
}

/* Read a NUL-terminated string of at most MAX-1 characters. */
static int rd_string(struct rd *r, char *dst, size_t max, struct ks_error *err)
{
	size_t i;

	for (i = 0; i < max; i++) {
		if (rd_bytes(r, dst + i, 1, err) < 0)
			return -1;
		if (dst[i] == '\0')
			return 0;
	}
	return ks_error_at(err, r->td->src.path, rd_errpos(r),
			   "%s: string longer than %zu bytes", r->what, max - 1);
}

static int rd_expect(struct rd *r, const char *magic, size_t len, struct ks_error *err)
{
	char buf[16];
	uint64_t at = rd_errpos(r);

	if (rd_bytes(r, buf, len, err) < 0)
		return -1;
	if (memcmp(buf, magic, len))
		return ks_error_at(err, r->td->src.path, at, "%s: expected \"%s\"", r->what, magic);
	return 0;
}

/* ------------------------------------------------------------------ */
/* decompression */

static int decompress(struct tracedat *td, const void *in, uint32_t in_len, void *out,
		      uint32_t out_len, uint64_t at, struct ks_error *err)
{
	if (td->comp == COMP_ZLIB) {
		uLongf got = out_len;
		int r = uncompress(out, &got, in, in_len);
		if (r != Z_OK || got != out_len)
			return ks_error_at(err, td->src.path, at,
					   "corrupt zlib block (%s, %lu of %u bytes)",
					   r == Z_OK ? "short" : zError(r), (unsigned long)got, out_len);
		return 0;
	}
	if (td->comp == COMP_ZSTD) {
		size_t got = ZSTD_decompress(out, out_len, in, in_len);
		if (ZSTD_isError(got) || got != out_len)
			return ks_error_at(err, td->src.path, at, "corrupt zstd block (%s)",
					   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
		return 0;
	}
	return ks_error_at(err, td->src.path, at, "compressed block in an uncompressed file");
}

/* The header "u32 csize, u32 usize" of the compressed block at AT (which
 * must end by LIMIT and hold at most MAX_OUT bytes). */
static int compressed_header(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
			     uint32_t *csizep, uint32_t *usizep, struct ks_error *err)
{
	uint8_t hdr[8];
	uint32_t csize, usize;

	if (at > limit || limit - at < 8)
		return ks_error_at(err, td->src.path, at, "%scompressed block header runs past its section",
				   at > td->file_size || td->file_size - at < 8 ? "truncated: " : "");
	if (pread_at(td, hdr, 8, at, "compressed block header", err) < 0)
		return -1;
	csize = get32(td, hdr);
	usize = get32(td, hdr + 4);
	if (csize > limit - at - 8)
		return ks_error_at(err, td->src.path, at,
				   "%scompressed block of %u bytes runs past its section",
				   csize > td->file_size - at - 8 ? "truncated: " : "", csize);
	if (usize > max_out)
		return ks_error_at(err, td->src.path, at,
				   "compressed block claims %u decompressed bytes (limit %u)", usize, max_out);
	*csizep = csize;
	*usizep = usize;
	return 0;
}

/* Read one compressed block "u32 csize, u32 usize, data" at AT into a new
 * buffer.  *NEXT = offset after the block. */
static int load_compressed(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
			   uint8_t **out, uint32_t *out_len, uint64_t *next, struct ks_error *err)
{
	uint8_t *in, *buf;
	uint32_t csize, usize;

	*out = NULL;
	if (compressed_header(td, at, limit, max_out, &csize, &usize, err) < 0)
		return -1;
	/* the decompressed block stays counted until the caller frees it
	 * (mem_give(usize + 1)); the compressed one only until here */
	if (mem_take(td, (uint64_t)usize + 1, at, err) < 0)
		return -1;
	if (mem_take(td, (uint64_t)csize + 1, at, err) < 0) {
		mem_give(td, (uint64_t)usize + 1);
		return -1;
	}
	in = malloc(csize ? csize : 1);
	buf = malloc(usize ? usize : 1);
	if (!in || !buf) {
		free(in);
		free(buf);
		mem_give(td, (uint64_t)usize + csize + 2);
		return ks_error_at(err, td->src.path, at, "out of memory");
	}
	if (pread_at(td, in, csize, at + 8, "compressed block", err) < 0 ||
	    decompress(td, in, csize, buf, usize, at, err) < 0) {
		free(in);
		free(buf);
		mem_give(td, (uint64_t)usize + csize + 2);
		return -1;
	}
	free(in);
	mem_give(td, (uint64_t)csize + 1);
	*out = buf;
	*out_len = usize;
	*next = at + 8 + csize;
	return 0;
}

/* Add the LEN bytes of the section at OFF just loaded into *DATA to the
 * total; past MAX_SECTION, free them and fail. */
static int count_section_bytes(struct tracedat *td, uint64_t off, uint8_t **data, uint64_t len,
			       struct ks_error *err)
{
	td->section_bytes += len;
	if (td->section_bytes <= MAX_SECTION)
		return 0;
	free(*data);
	*data = NULL;
	mem_give(td, len + 1);
	return ks_error_at(err, td->src.path, off,
			   "the metadata sections hold more than %u MB in all", MAX_SECTION >> 20);
}

/* Add OFF to the sections loaded.  Returns 1 if it is new, 0 if it was
 * loaded before, -1 when out of memory. */
static int section_add(struct tracedat *td, uint64_t off)
{
	bool created;

	if (!ks_hmap_put(&td->sections, off, &created))
		return -1;
	return created;
}

/* The header of the v7 section at OFF, not read before (see load_section). */
static int section_header(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
			  uint16_t *flagsp, uint64_t *sizep, struct ks_error *err)
{
	uint8_t hdr[16];
	uint16_t flags;
	uint64_t size;
	int fresh;

	fresh = section_add(td, off);
	if (fresh < 0)
		return ks_error_at(err, td->src.path, off, "out of memory");
	if (!fresh)
		return ks_error_at(err, td->src.path, off,
				   "the %s points at a section already read (a loop?)", what);
	if (pread_at(td, hdr, 16, off, "section header", err) < 0)
		return -1;
	*id = get16(td, hdr);
	flags = get16(td, hdr + 2);
	size = get64(td, hdr + 8);
	td->section_end = off + 16 + size;
	if (size > td->file_size - off - 16)
		return ks_error_at(err, td->src.path, off,
				   "truncated: section %u of %llu bytes runs past the end of the file (%llu bytes)",
				   *id, (unsigned long long)size, (unsigned long long)td->file_size);
	*flagsp = flags;
	*sizep = size;
	return 0;
}

/* Load a v7 section at OFF (header + payload, decompressed) into memory.
 * Each section is loaded once (a second time is an error naming WHAT),
 * and all of them together hold at most MAX_SECTION bytes: a small file
 * cannot make the reader parse or decompress far more than it holds. */
static int load_section(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
			uint8_t **data, uint64_t *len, struct ks_error *err)
{
	uint16_t flags;
	uint64_t size;

	*data = NULL;
	if (section_header(td, off, what, id, &flags, &size, err) < 0)
		return -1;
	if (flags & SEC_FL_COMPRESS) {
		uint32_t ulen;
		uint64_t next;
		if (load_compressed(td, off + 16, off + 16 + size, MAX_SECTION, data, &ulen, &next,
				    err) < 0)
			return -1;
		*len = ulen;
		return count_section_bytes(td, off, data, ulen, err);
	}
	if (size > MAX_SECTION)
		return ks_error_at(err, td->src.path, off, "section of %llu bytes is too large",
				   (unsigned long long)size);
	if (mem_take(td, size + 1, off, err) < 0)
		return -1;
	*data = malloc(size ? size : 1);
	if (!*data) {
		mem_give(td, size + 1);
		return ks_error_at(err, td->src.path, off, "out of memory");
	}
	if (pread_at(td, *data, size, off + 16, "section", err) < 0) {
		free(*data);
		*data = NULL;
		mem_give(td, size + 1);
		return -1;
	}
	*len = size;
	return count_section_bytes(td, off, data, size, err);
}

/* Free a section from load_section() (LEN bytes). */
static void section_free(struct tracedat *td, uint8_t *data, uint64_t len)
{
	free(data);
	mem_give(td, len + 1);
}

/* ------------------------------------------------------------------ */
/* metadata blocks (same layout in v6 and in v7 sections) */

/* Keep BUF (SIZE bytes from rd_alloc(), still counted against the memory
 * budget) as the source's text ID. */
static int keep_text(struct rd *r, enum ks_source_text_id id, char *buf, uint64_t size,
		     struct ks_error *err)
{
	if (ks_source_meta_set_text(&r->td->src.meta, id, buf, size, true) < 0)
		return ks_error_at(err, r->td->src.path, rd_errpos(r), "out of memory");
	return 0;
}

static int parse_header_info(struct rd *r, struct ks_error *err)
{
	uint64_t size;
	char *buf;
	int ret;

	r->what = "header_page";
	if (rd_expect(r, "header_page", 12, err) < 0 || rd_u64(r, &size, err) < 0 ||
	    rd_alloc(r, size, &buf, err) < 0)
		return -1;
	ret = tep_parse_header_page(r->td->src.tep, buf, size, (int)r->td->meta.long_size);
	if (ret < 0) {
		rd_free(r, buf, size);
		return ks_error_at(err, r->td->src.path, rd_errpos(r), "cannot parse header_page");
	}
	/* kept as stored (its bytes stay counted) */
	if (keep_text(r, KS_TEXT_HEADER_PAGE, buf, size, err) < 0)
		return -1;
	r->what = "header_event";
	if (rd_expect(r, "header_event", 13, err) < 0 || rd_u64(r, &size, err) < 0 ||
	    rd_alloc(r, size, &buf, err) < 0)
		return -1;
	return keep_text(r, KS_TEXT_HEADER_EVENT, buf, size, err);
}

static int parse_formats(struct rd *r, const char *sys, uint32_t count, struct ks_error *err)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		uint64_t size, at, fields, lim = r->td->src.limits.memory;
		char *buf;

		if (obj_take(r->td, 1, rd_errpos(r), "an event format", err) < 0 ||
		    rd_u64(r, &size, err) < 0)
			return -1;
		at = rd_errpos(r);
		if (rd_alloc(r, size, &buf, err) < 0)
			return -1;
		/* what libtraceevent will keep of it, from the text, before
		 * anything parses it (format_guard.h) */
		if (ks_guard_format_budget(buf, size, lim > r->td->mem_held ?
					   (lim - r->td->mem_held) / KS_FORMAT_FIELD_COST : 0,
					   lim, r->td->src.path, at, &fields, err) < 0 ||
		    mem_take(r->td, fields * KS_FORMAT_FIELD_COST, at, err) < 0) {
			rd_free(r, buf, size);
			return -1;
		}
		/* the source keeps the text as stored (ks_source_formats()) and
		 * parses it when its events are first needed (lazy_events.h); a
		 * format libtraceevent cannot parse is skipped, like trace-cmd
		 * does: its events then come out with event == NULL.  Its bytes
		 * stay counted. */
		if (ks_source_meta_add_format(&r->td->src.meta, sys, buf, size, true) < 0)
			return ks_error_set(err, "%s: out of memory", r->td->src.path);
	}
	return 0;
}

static int parse_ftrace_formats(struct rd *r, struct ks_error *err)
{
	uint32_t count;

	r->what = "ftrace event formats";
	if (rd_u32(r, &count, err) < 0)
		return -1;
	return parse_formats(r, "ftrace", count, err);
}

static int parse_event_formats(struct rd *r, struct ks_error *err)
{
	uint32_t nsys, i, count;
	char sys[256];

	r->what = "event formats";
	if (rd_u32(r, &nsys, err) < 0)
		return -1;
	for (i = 0; i < nsys; i++) {
		if (rd_string(r, sys, sizeof(sys), err) < 0 || rd_u32(r, &count, err) < 0 ||
		    parse_formats(r, sys, count, err) < 0)
			return -1;
	}
	return 0;
}

static uint64_t count_lines(const char *s, uint64_t len)
{
	const char *end = s + len, *p = s;
	uint64_t n = 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		n++;
		p++;
	}
	return n + (len && s[len - 1] != '\n');
}

/* A text block preceded by its size (4 or 8 bytes), handed to PARSE. */
static int parse_text(struct rd *r, const char *what, int size_bytes, enum ks_source_text_id id,
		      int (*parse)(struct tep_handle *, const char *), struct ks_error *err)
{
	uint64_t size;
	uint32_t s32;
	char *buf;

	r->what = what;
	if (size_bytes == 4) {
		if (rd_u32(r, &s32, err) < 0)
			return -1;
		size = s32;
	} else if (rd_u64(r, &size, err) < 0) {
		return -1;
	}
	if (rd_alloc(r, size, &buf, err) < 0)
		return -1;
	/* every line becomes an object of the tep (a symbol, a format, a
	 * command name) about as large as its text: the lines count as
	 * objects and the bytes stay counted as memory */
	if (obj_take(r->td, count_lines(buf, size), rd_errpos(r), what, err) < 0) {
		rd_free(r, buf, size);
		return -1;
	}
	if (size)
		parse(r->td->src.tep, buf);
	/* the text as stored stays with the source (ks_source_text()) */
	return keep_text(r, id, buf, size, err);
}

/* ---- kallsyms, left in the file ----
 *
 * A recording's kallsyms are some 15 MB of text (2 MB compressed): reading
 * and decompressing them was most of the cost of opening a file, and most
 * runs print no symbol.  Opening checks where they are (the section and
 * block headers, the sizes, the budgets) and leaves the text in the file;
 * it is read on the first ks_source_text() or symbol lookup.  What only
 * reading can find (a corrupt block, a size past the block's end, too many
 * lines) is then the source's error (its next read returns it). */

/* ks_source_text_loader: read the kallsyms that opening left in the file. */
static int load_kallsyms(void *arg, enum ks_source_text_id id, char **text, size_t *lenp,
			 struct ks_error *err)
{
	struct tracedat *td = arg;
	uint64_t at = td->kallsyms.at;
	uint64_t n = td->kallsyms.compressed ? td->kallsyms.ulen : td->kallsyms.len;
	char *buf = malloc(n + 1);
	uint8_t *in = NULL;
	uint32_t size;

	(void)id;
	if (!buf)
		return ks_error_at(err, td->src.path, at, "out of memory");
	if (td->kallsyms.compressed) {
		if (!(in = malloc(td->kallsyms.len ? td->kallsyms.len : 1))) {
			free(buf);
			return ks_error_at(err, td->src.path, at, "out of memory");
		}
		if (pread_at(td, in, td->kallsyms.len, td->kallsyms.off, "compressed block", err) < 0 ||
		    decompress(td, in, (uint32_t)td->kallsyms.len, buf, td->kallsyms.ulen, at + 16,
			       err) < 0)
			goto fail;
		free(in);
		in = NULL;
		size = get32(td, buf); /* the section: "u32 size, text" */
		if (size > n - 4) {
			ks_error_at(err, td->src.path, at,
				    "kallsyms: a block of %u bytes runs past its end (%llu bytes left)",
				    size, (unsigned long long)(n - 4));
			goto fail;
		}
		memmove(buf, buf + 4, size);
		n = size;
	} else if (pread_at(td, buf, n, td->kallsyms.off, "kallsyms", err) < 0) {
		goto fail;
	}
	buf[n] = '\0';
	/* every line would be a symbol: counted as parse_text counts */
	if (obj_take(td, count_lines(buf, n), at, "kallsyms", err) < 0)
		goto fail;
	*text = buf;
	*lenp = n;
	return 0;
fail:
	free(in);
	free(buf);
	return -1;
}

/* Leave the kallsyms in the file (not kept at all with
 * KS_OPEN_NO_SYMBOLS); an empty text is kept as it is. */
static int defer_kallsyms_text(struct tracedat *td, struct ks_error *err)
{
	char empty[1] = "";

	if ((td->open_flags & KS_OPEN_NO_SYMBOLS) ||
	    (!td->kallsyms.compressed && td->kallsyms.len == 0)) {
		if (!(td->open_flags & KS_OPEN_NO_SYMBOLS) &&
		    ks_source_meta_set_text(&td->src.meta, KS_TEXT_KALLSYMS, empty, 0, false) < 0)
			return ks_error_set(err, "%s: out of memory", td->src.path);
		return 0;
	}
	if (ks_source_meta_defer_text(&td->src.meta, KS_TEXT_KALLSYMS, load_kallsyms, td) < 0)
		return ks_error_set(err, "%s: out of memory", td->src.path);
	return 0;
}

/* v6: "u32 size, text" at R, in the file (v7 sections:
 * defer_kallsyms_section). */
static int parse_kallsyms(struct rd *r, struct ks_error *err)
{
	struct tracedat *td = r->td;
	bool skip = td->open_flags & KS_OPEN_NO_SYMBOLS;
	uint32_t size;

	r->what = "kallsyms";
	if (rd_u32(r, &size, err) < 0)
		return -1;
	if (size > r->end - r->pos)
		return ks_error_at(err, td->src.path, r->pos,
				   "truncated: kallsyms: a block of %u bytes runs past its end "
				   "(%llu bytes left)", size,
				   (unsigned long long)(r->end - r->pos));
	if (!skip && mem_take(td, (uint64_t)size + 1, r->pos, err) < 0)
		return -1;
	td->kallsyms.off = r->pos;
	td->kallsyms.len = size;
	td->kallsyms.compressed = false;
	r->pos += size;
	td->kallsyms.at = r->pos;
	return defer_kallsyms_text(td, err);
}

/* v7: the kallsyms section at OFF, its headers checked and
 * counted as load_section and parse_text count them. */
static int defer_kallsyms_section(struct tracedat *td, uint64_t off, struct ks_error *err)
{
	bool skip = td->open_flags & KS_OPEN_NO_SYMBOLS;
	uint8_t *none = NULL, b[4];
	uint32_t csize, usize, size;
	uint16_t id, flags;
	uint64_t len;

	if (section_header(td, off, "option", &id, &flags, &len, err) < 0)
		return -1;
	if (id != OPT_KALLSYMS)
		return ks_error_at(err, td->src.path, off, "section id %u where %u was expected", id,
				   OPT_KALLSYMS);
	td->kallsyms.at = off;
	if (flags & SEC_FL_COMPRESS) {
		if (compressed_header(td, off + 16, off + 16 + len, MAX_SECTION, &csize, &usize,
				      err) < 0 ||
		    mem_take(td, (uint64_t)usize + csize + 2, off + 16, err) < 0)
			return -1;
		mem_give(td, (uint64_t)csize + 1);
		/* the decompressed section stays counted as the text */
		if (count_section_bytes(td, off, &none, usize, err) < 0)
			return -1;
		if (usize < 4)
			return ks_error_at(err, td->src.path, off,
					   "kallsyms is truncated (needs 4 more bytes, %u left)", usize);
		if (skip)
			mem_give(td, (uint64_t)usize + 1);
		td->kallsyms.off = off + 16 + 8;
		td->kallsyms.len = csize;
		td->kallsyms.ulen = usize;
		td->kallsyms.compressed = true;
		return defer_kallsyms_text(td, err);
	}
	if (len > MAX_SECTION)
		return ks_error_at(err, td->src.path, off, "section of %llu bytes is too large",
				   (unsigned long long)len);
	if (len < 4)
		return ks_error_at(err, td->src.path, off,
				   "kallsyms is truncated (needs 4 more bytes, %llu left)",
				   (unsigned long long)len);
	if (pread_at(td, b, 4, off + 16, "section", err) < 0)
		return -1;
	size = get32(td, b);
	if (size > len - 4)
		return ks_error_at(err, td->src.path, off,
				   "kallsyms: a block of %u bytes runs past its end (%llu bytes left)",
				   size, (unsigned long long)(len - 4));
	td->section_bytes += len;
	if (td->section_bytes > MAX_SECTION)
		return ks_error_at(err, td->src.path, off,
				   "the metadata sections hold more than %u MB in all", MAX_SECTION >> 20);
	if (!skip && mem_take(td, (uint64_t)size + 1, off, err) < 0)
		return -1;
	td->kallsyms.off = off + 16 + 4;
	td->kallsyms.len = size;
	td->kallsyms.compressed = false;
	return defer_kallsyms_text(td, err);
}

static int parse_printk(struct rd *r, struct ks_error *err)
{
	return parse_text(r, "printk formats", 4, KS_TEXT_PRINTK, ks_guard_parse_printk, err);
}

static int parse_cmdlines(struct rd *r, struct ks_error *err)
{
	return parse_text(r, "saved cmdlines", 8, KS_TEXT_CMDLINES, tep_parse_saved_cmdlines, err);
}

/* ------------------------------------------------------------------ */
/* options */

static char *opt_string(const uint8_t *data, uint32_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static void set_string(char **dst, const uint8_t *data, uint32_t size)
{
	free(*dst);
	*dst = opt_string(data, size);
}

static int opt_guest(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
		     struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	struct ks_tracedat_guest *g;
	const uint8_t *nul = memchr(d, 0, size);
	uint32_t pos, n, i;

	if (!nul || (uint32_t)(nul - d) + 1 + 12 > size)
		return ks_error_at(err, td->src.path, at, "GUEST option is truncated");
	pos = (uint32_t)(nul - d) + 1;
	n = get32(td, d + pos + 8);
	if ((uint64_t)n * 8 > size - pos - 12)
		return ks_error_at(err, td->src.path, at, "GUEST option: %u vCPUs do not fit", n);
	if (obj_take(td, 1 + (uint64_t)n, at, "a GUEST option", err) < 0 ||
	    mem_take(td, pos + (n ? n : 1) * sizeof(*g->vcpus), at, err) < 0 ||
	    grow(td, (void **)&m->guests, &td->guests_cap, m->nr_guests, sizeof(*m->guests), at,
		 err) < 0)
		return -1;
	g = &m->guests[m->nr_guests];
	memset(g, 0, sizeof(*g));
	g->name = strdup((const char *)d);
	g->trace_id = get64(td, d + pos);
	g->vcpus = calloc(n ? n : 1, sizeof(*g->vcpus));
	if (!g->name || !g->vcpus) {
		free(g->name);
		free(g->vcpus);
		return ks_error_at(err, td->src.path, at, "out of memory");
	}
	g->nr_vcpus = n;
	for (i = 0; i < n; i++) {
		g->vcpus[i].vcpu = get32(td, d + pos + 12 + i * 8);
		g->vcpus[i].host_tid = get32(td, d + pos + 16 + i * 8);
	}
	m->nr_guests++;
	return 0;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct ks_tracedat_tsync_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int opt_time_shift(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
			  struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	uint32_t ncpu, c, i, pos = 16;

	if (size < 16 || m->has_time_shift)
		return size < 16 ? ks_error_at(err, td->src.path, at, "TimeShift option is truncated") : 0;
	m->tsync_peer_id = get64(td, d);
	m->tsync_flags = get32(td, d + 8);
	ncpu = get32(td, d + 12);
	if (ncpu > size / 4)
		return ks_error_at(err, td->src.path, at, "TimeShift option: %u CPUs do not fit", ncpu);
	/* at most a sample per 24 bytes of the option, each one of 32 */
	if (obj_take(td, ncpu, at, "a TimeShift option", err) < 0 ||
	    mem_take(td, (uint64_t)ncpu * sizeof(*m->tsync_cpus) + size / 24 * 32, at, err) < 0)
		return -1;
	m->tsync_cpus = calloc(ncpu ? ncpu : 1, sizeof(*m->tsync_cpus));
	if (!m->tsync_cpus)
		return ks_error_at(err, td->src.path, at, "out of memory");
	m->tsync_nr_cpus = ncpu;
	m->has_time_shift = true;
	for (c = 0; c < ncpu; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		uint32_t n;

		if (size - pos < 4)
			return ks_error_at(err, td->src.path, at, "TimeShift option is truncated");
		n = get32(td, d + pos);
		pos += 4;
		if ((uint64_t)n * 24 > size - pos)
			return ks_error_at(err, td->src.path, at,
					   "TimeShift option: %u samples of CPU %u do not fit", n, c);
		tc->samples = calloc(n ? n : 1, sizeof(*tc->samples));
		if (!tc->samples)
			return ks_error_at(err, td->src.path, at, "out of memory");
		tc->nr_samples = n;
		for (i = 0; i < n; i++) {
			tc->samples[i].time = get64(td, d + pos + i * 8);
			tc->samples[i].offset = (int64_t)get64(td, d + pos + (n + i) * 8);
			tc->samples[i].scaling = get64(td, d + pos + (2 * n + i) * 8);
		}
		pos += n * 24;
	}
	/* Optional second part: the fraction bits of every sample. */
	for (c = 0; c < ncpu && size > pos; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		if ((uint64_t)tc->nr_samples * 8 > size - pos)
			return ks_error_at(err, td->src.path, at, "TimeShift fraction bits are truncated");
		for (i = 0; i < tc->nr_samples; i++)
			tc->samples[i].fraction = get64(td, d + pos + i * 8);
		pos += tc->nr_samples * 8;
	}
	for (c = 0; c < ncpu; c++) {
		struct ks_tracedat_tsync_cpu *tc = &m->tsync_cpus[c];
		uint32_t j = 0;
		qsort(tc->samples, tc->nr_samples, sizeof(*tc->samples), sample_cmp);
		for (i = 0; i < tc->nr_samples; i++)
			if (i == 0 || tc->samples[i].time != tc->samples[i - 1].time)
				tc->samples[j++] = tc->samples[i];
		tc->nr_samples = j;
	}
	return 0;
}

static int add_buffer_name(struct tracedat *td, const char *name, uint64_t at, struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;
	char **names;

	if (obj_take(td, 1, at, "a BUFFER option", err) < 0 ||
	    mem_take(td, strlen(name) + 1, at, err) < 0 ||
	    grow(td, (void **)&m->buffer_names, &td->names_cap, m->nr_buffers, sizeof(*names), at,
		 err) < 0)
		return -1;
	names = m->buffer_names;
	names[m->nr_buffers] = strdup(name);
	if (!names[m->nr_buffers])
		return ks_error_at(err, td->src.path, at, "out of memory");
	m->nr_buffers++;
	return 0;
}

/* A new flyrecord buffer NAME whose data is described at OFFSET. */
static struct tdbuffer *add_tdbuffer(struct tracedat *td, const char *name, uint64_t offset,
				     uint64_t at, struct ks_error *err)
{
	struct tdbuffer *b;
	bool top = *name == '\0';

	if (top && td->have_top) {
		ks_error_at(err, td->src.path, at, "more than one top-level BUFFER option");
		return NULL;
	}
	if (obj_take(td, 1, at, "a buffer", err) < 0 || mem_take(td, strlen(name) + 1, at, err) < 0 ||
	    grow(td, (void **)&td->buffers, &td->buffers_cap, td->nr_buffers, sizeof(*b), at, err) < 0)
		return NULL;
	b = &td->buffers[td->nr_buffers];
	memset(b, 0, sizeof(*b));
	b->name = strdup(name);
	if (!b->name) {
		ks_error_at(err, td->src.path, at, "out of memory");
		return NULL;
	}
	b->offset = offset;
	b->first = td->nr_cpus;
	b->order = top ? 0 : 1 + td->instances;
	td->instances += !top;
	td->nr_buffers++;
	td->have_top |= top;
	return b;
}

/* Append NCPU cursors for buffer B (the last one added). */
static int add_cursors(struct tracedat *td, struct tdbuffer *b, uint32_t ncpu, uint64_t at,
		       struct ks_error *err)
{
	if (ncpu > (1u << 16) || td->nr_cpus + ncpu > (1u << 20))
		return ks_error_at(err, td->src.path, at, "implausible CPU count %u in buffer \"%s\"",
				   ncpu, b->name);
	/* each cursor: its entry here, its index in the heap and in by_start */
	if (obj_take(td, ncpu, at, "CPU regions", err) < 0 ||
	    mem_take(td, (uint64_t)ncpu * 8, at, err) < 0 ||
	    grow(td, (void **)&td->cpus, &td->cpus_cap, td->nr_cpus + ncpu, sizeof(*td->cpus), at,
		 err) < 0)
		return -1;
	memset(td->cpus + td->nr_cpus, 0, ncpu * sizeof(*td->cpus));
	b->first = td->nr_cpus;
	b->nr_cpus = ncpu;
	td->nr_cpus += ncpu;
	return 0;
}

/* Check one CPU's data location and fill in its cursor. */
static int set_cursor(struct tracedat *td, struct tdbuffer *b, uint32_t i, uint32_t cpu,
		      uint64_t off, uint64_t size, uint64_t at, struct ks_error *err)
{
	struct cpu_cursor *c = &td->cpus[b->first + i];

	if (cpu >= (1u << 16))
		return ks_error_at(err, td->src.path, at, "buffer \"%s\": implausible CPU number %u",
				   b->name, cpu);
	/* past the end: a file cut short, unless the numbers are absurd */
	if ((off > td->file_size || size > td->file_size - off) && off < PLAUSIBLE && size < PLAUSIBLE)
		return ks_error_at(err, td->src.path, at,
				   "truncated: buffer \"%s\": data of CPU %u (offset %llu, %llu bytes) "
				   "runs past the end of the file (%llu bytes)", b->name, cpu,
				   (unsigned long long)off, (unsigned long long)size,
				   (unsigned long long)td->file_size);
	if (off > td->file_size || size > td->file_size - off)
		return ks_error_at(err, td->src.path, at,
				   "buffer \"%s\": data of CPU %u (offset %llu, %llu bytes) lies outside the file",
				   b->name, cpu, (unsigned long long)off, (unsigned long long)size);
	c->cpu = cpu;
	c->buffer = (uint32_t)(b - td->buffers);
	c->order = b->order;
	c->start = off;
	c->end = off + size;
	return 0;
}

/* v7 BUFFER: offset, name, clock, page size, CPU count, per CPU (id, offset, size). */
static int opt_buffer_v7(struct tracedat *td, const uint8_t *d, uint32_t size, uint64_t at,
			 struct ks_error *err)
{
	const uint8_t *name = d + 8, *clock, *p, *end = d + size;
	struct tdbuffer *b;
	uint32_t ncpu, i;

	clock = name + strlen((const char *)name) + 1;
	if (clock >= end || !memchr(clock, 0, (size_t)(end - clock)))
		return ks_error_at(err, td->src.path, at, "BUFFER option: clock is truncated");
	p = clock + strlen((const char *)clock) + 1;
	if (end - p < 8)
		return ks_error_at(err, td->src.path, at, "BUFFER option is truncated");
	if (*clock && !*name) /* the top buffer's clock wins over TRACECLOCK */
		set_string(&td->meta.clock, clock, (uint32_t)strlen((const char *)clock));
	ncpu = get32(td, p + 4);
	if ((uint64_t)ncpu * 20 > (uint64_t)(end - p - 8))
		return ks_error_at(err, td->src.path, at, "BUFFER option: %u CPUs do not fit", ncpu);
	b = add_tdbuffer(td, (const char *)name, get64(td, d), at, err);
	if (!b)
		return -1;
	b->page_size = get32(td, p);
	if (add_cursors(td, b, ncpu, at, err) < 0)
		return -1;
	for (i = 0, p += 8; i < ncpu; i++, p += 20)
		if (set_cursor(td, b, i, get32(td, p), get64(td, p + 4), get64(td, p + 12), at, err) < 0)
			return -1;
	return 0;
}

/* BUFFER / BUFFER_TEXT.  v6: offset + name (the CPU table is at the offset).
 * v7: see opt_buffer_v7; BUFFER_TEXT: offset, name, clock of a latency section. */
static int opt_buffer(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
		      uint64_t at, struct ks_error *err)
{
	const char *name;

	if (size < 9 || !memchr(d + 8, 0, size - 8))
		return ks_error_at(err, td->src.path, at, "BUFFER option is truncated");
	name = (const char *)d + 8;
	td->have_buffer_option = true;
	if (add_buffer_name(td, name, at, err) < 0)
		return -1;
	if (id == OPT_BUFFER_TEXT) {
		if (td->latency)
			return ks_error_at(err, td->src.path, at, "more than one latency buffer");
		td->meta.has_latency = true;
		td->latency = true;
		td->latency_offset = get64(td, d);
		return 0;
	}
	if (td->meta.version >= 7)
		return opt_buffer_v7(td, d, size, at, err);
	if (!*name)
		return ks_error_at(err, td->src.path, at, "v6 BUFFER option without a name");
	return add_tdbuffer(td, name, get64(td, d), at, err) ? 0 : -1;
}

static int opt_section_ref(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			   uint64_t at, struct ks_error *err);

/* TRACECLOCK is the tracefs trace_clock file: "local [x86-tsc] ...", the
 * clock in brackets is the one in use. */
static void set_selected_clock(struct ks_tracedat_meta *m, const uint8_t *d, uint32_t size)
{
	char *s = opt_string(d, size), *open, *close;

	if (!s)
		return;
	open = strchr(s, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		*close = '\0';
		memmove(s, open + 1, strlen(open + 1) + 1);
	} else {
		s[strcspn(s, " \n")] = '\0';
	}
	free(m->clock);
	m->clock = s;
}

static int handle_option(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			 uint64_t at, struct ks_error *err)
{
	struct ks_tracedat_meta *m = &td->meta;

	switch (id) {
	case OPT_BUFFER:
	case OPT_BUFFER_TEXT:
		return opt_buffer(td, id, d, size, at, err);
	case OPT_TRACECLOCK:
		if (!m->clock)
			set_selected_clock(m, d, size);
		return 0;
	case OPT_UNAME:
		set_string(&m->uname, d, size);
		return 0;
	case OPT_VERSION:
		set_string(&m->version_string, d, size);
		return 0;
	case OPT_OFFSET: {
		/* trace-cmd writes it "%lld" and reads it with base 0 */
		char *s = opt_string(d, size);
		int64_t v;
		int bad = s && ks_parse_i64(s, strlen(s), 0, &v) < 0;

		if (s && !bad)
			m->ts_offset += v;
		free(s);
		if (bad)
			return ks_error_at(err, td->src.path, at,
					   "the OFFSET option is not a whole number");
		return 0;
	}
	case OPT_CPUCOUNT:
		if (size >= 4)
			m->cpu_count = get32(td, d);
		if (m->cpu_count > (1u << 16))
			return ks_error_at(err, td->src.path, at, "implausible CPU count %u",
					   m->cpu_count);
		return 0;
	case OPT_TRACEID:
		if (size >= 8) {
			m->trace_id = get64(td, d);
			m->has_trace_id = true;
		}
		return 0;
	case OPT_TIME_SHIFT:
		return opt_time_shift(td, d, size, at, err);
	case OPT_GUEST:
		return opt_guest(td, d, size, at, err);
	case OPT_TSC2NSEC:
		if (size >= 16) {
			m->has_tsc2nsec = true;
			m->tsc_mult = get32(td, d);
			m->tsc_shift = get32(td, d + 4);
			m->tsc_offset = get64(td, d + 8);
		}
		return 0;
	case OPT_HEADER_INFO:
	case OPT_FTRACE_EVENTS:
	case OPT_EVENT_FORMATS:
	case OPT_KALLSYMS:
	case OPT_PRINTK:
	case OPT_CMDLINES:
		return opt_section_ref(td, id, d, size, at, err);
	case KS_VMIDENT_OPTION:
		/* one per file; its tables hold ~2x its text */
		if (td->vmident.ntasks || td->vmident.nprocs)
			return ks_error_at(err, td->src.path, at, "more than one task map option");
		if (mem_take(td, 2 * (uint64_t)size, at, err) < 0)
			return -1;
		return ks_vmident_parse(&td->vmident, td->src.path, at, (const char *)d, size, err);
	default:
		return 0; /* DATE, CPUSTAT, HOOK, PROCMAPS, STRINGS...: not needed */
	}
}

/* v7: an option pointing at a metadata section; load and parse it. */
static int opt_section_ref(struct tracedat *td, uint16_t id, const uint8_t *d, uint32_t size,
			   uint64_t at, struct ks_error *err)
{
	struct rd r = { .td = td };
	uint16_t sec_id;
	uint8_t *data;
	uint64_t len, off;
	int ret;

	if (td->meta.version < 7)
		return 0;
	if (size < 8)
		return ks_error_at(err, td->src.path, at, "option %u is truncated", id);
	off = get64(td, d);
	if (id == OPT_KALLSYMS)
		return defer_kallsyms_section(td, off, err);
	if (load_section(td, off, "option", &sec_id, &data, &len, err) < 0)
		return -1;
	if (sec_id != id) {
		section_free(td, data, len);
		return ks_error_at(err, td->src.path, off, "section id %u where %u was expected",
				   sec_id, id);
	}
	r.mem = data;
	r.end = len;
	r.base = off;
	switch (id) {
	case OPT_HEADER_INFO: ret = parse_header_info(&r, err); break;
	case OPT_FTRACE_EVENTS: ret = parse_ftrace_formats(&r, err); break;
	case OPT_EVENT_FORMATS: ret = parse_event_formats(&r, err); break;
	case OPT_PRINTK: ret = parse_printk(&r, err); break;
	default: ret = parse_cmdlines(&r, err); break;
	}
	section_free(td, data, len);
	return ret;
}

/* Walk options "u16 id, u32 size, data" in R.  v6 ends at id 0; v7 ends at
 * DONE whose data is the offset of the next options section (*NEXT). */
static int parse_options(struct tracedat *td, struct rd *r, uint64_t *next, struct ks_error *err)
{
	*next = 0;
	r->what = "options";
	for (;;) {
		uint16_t id;
		uint32_t size;
		uint64_t at = rd_errpos(r);
		char *data;
		int ret;

		if (rd_u16(r, &id, err) < 0)
			return -1;
		if (id == OPT_DONE && td->meta.version < 7)
			return 0;
		if (obj_take(td, 1, at, "an option", err) < 0 || rd_u32(r, &size, err) < 0 ||
		    rd_alloc(r, size, &data, err) < 0)
			return -1;
		if (id == OPT_DONE) {
			if (size >= 8)
				*next = get64(td, data);
			rd_free(r, data, size);
			return 0;
		}
		ret = handle_option(td, id, (const uint8_t *)data, size, at, err);
		rd_free(r, data, size);
		if (ret < 0)
			return -1;
		r->what = "options";
	}
}

/* ------------------------------------------------------------------ */
/* file header and the two layouts */

/* What follows the last options section (at END): trace-cmd and kvmscope
 * write the strings section there, last or before a latency section.  A
 * file without BUFFER options is a recording without data (trace-cmd
 * convert writes one) or one cut before the BUFFER options were written:
 * then a flyrecord section or nothing follows.  A section there cut short
 * is a file cut short. */
static int check_finished(struct tracedat *td, uint64_t end, struct ks_error *err)
{
	uint8_t hdr[16];
	uint64_t left = end <= td->file_size ? td->file_size - end : 0;
	uint16_t id;

	if (!left && !td->have_buffer_option)
		return ks_error_at(err, td->src.path, end,
				   "truncated: the file ends after its options, which name no data "
				   "(the recording was not finished)");
	if (!left)
		return 0;
	if (left < 16)
		return ks_error_at(err, td->src.path, end,
				   "truncated: a section header of %llu bytes (16 expected) ends the file",
				   (unsigned long long)left);
	if (pread_at(td, hdr, 16, end, "section header", err) < 0)
		return -1;
	id = get16(td, hdr);
	if ((id == OPT_BUFFER || id == OPT_BUFFER_TEXT) && !td->have_buffer_option)
		return ks_error_at(err, td->src.path, end,
				   "truncated: data section without a BUFFER option naming it "
				   "(the recording was not finished)");
	if (id == OPT_STRINGS && get64(td, hdr + 8) > left - 16)
		return ks_error_at(err, td->src.path, end,
				   "truncated: section %u of %llu bytes runs past the end of the file "
				   "(%llu bytes)", id, (unsigned long long)get64(td, hdr + 8),
				   (unsigned long long)td->file_size);
	return 0;
}

static int parse_v7(struct tracedat *td, struct rd *hdr, struct ks_error *err)
{
	uint64_t off, end = 0;
	int n = 0;

	hdr->what = "options offset";
	if (rd_u64(hdr, &off, err) < 0)
		return -1;
	/* trace-cmd writes the offset of the first options section once the
	 * metadata is written, and the BUFFER options (where the data is)
	 * last: without them the recording was never finished */
	if (!off)
		return ks_error_at(err, td->src.path, hdr->pos - 8,
				   "truncated: the options offset is 0 (the recording was not finished)");
	while (off) {
		struct rd r = { .td = td };
		uint16_t id;
		uint8_t *data;
		uint64_t len;
		int ret;

		if (++n > MAX_OPTION_SECTIONS)
			return ks_error_at(err, td->src.path, off, "more than %d options sections",
					   MAX_OPTION_SECTIONS);
		if (load_section(td, off, n == 1 ? "file header" : "previous options section", &id,
				 &data, &len, err) < 0)
			return -1;
		if (id != OPT_DONE) {
			section_free(td, data, len);
			return ks_error_at(err, td->src.path, off,
					   "section id %u where an options section was expected", id);
		}
		r.mem = data;
		r.end = len;
		r.base = off;
		end = td->section_end;
		ret = parse_options(td, &r, &off, err);
		section_free(td, data, len);
		if (ret < 0)
			return -1;
	}
	return check_finished(td, end, err);
}

/* v6: NCPU (offset, size) pairs at R give the CPU data of buffer B. */
static int read_v6_cpu_table(struct tracedat *td, struct tdbuffer *b, struct rd *r, uint32_t ncpu,
			     struct ks_error *err)
{
	uint32_t i;

	if (add_cursors(td, b, ncpu, r->pos, err) < 0)
		return -1;
	r->what = "flyrecord CPU table";
	for (i = 0; i < ncpu; i++) {
		uint64_t at = r->pos, off, size;
		if (rd_u64(r, &off, err) < 0 || rd_u64(r, &size, err) < 0 ||
		    set_cursor(td, b, i, i, off, size, at, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_v6_flyrecord(struct tracedat *td, struct rd *r, uint32_t ncpu,
			      struct ks_error *err)
{
	struct tdbuffer *b = add_tdbuffer(td, "", r->pos, r->pos, err);

	return b ? read_v6_cpu_table(td, b, r, ncpu, err) : -1;
}

/* v6 instances: at each BUFFER option's offset, "flyrecord\0" and the CPU table. */
static int parse_v6_instances(struct tracedat *td, struct ks_error *err)
{
	uint32_t i, n = td->nr_buffers;

	for (i = 0; i < n; i++) {
		struct tdbuffer *b = &td->buffers[i];
		struct rd r = { .td = td, .pos = b->offset, .end = td->file_size,
				.what = "buffer instance" };
		char kind[10];

		if (!b->name[0])
			continue;
		if (b->offset > td->file_size)
			return ks_error_at(err, td->src.path, b->offset,
					   "buffer \"%s\" lies outside the file", b->name);
		if (rd_bytes(&r, kind, 10, err) < 0)
			return -1;
		if (memcmp(kind, "flyrecord", 10))
			return ks_error_at(err, td->src.path, b->offset,
					   "buffer \"%s\": expected \"flyrecord\"", b->name);
		if (read_v6_cpu_table(td, b, &r, td->meta.cpu_count, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_v6(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	uint32_t ncpu;
	uint64_t next;
	char kind[10];

	if (parse_header_info(r, err) < 0 || parse_ftrace_formats(r, err) < 0 ||
	    parse_event_formats(r, err) < 0 || parse_kallsyms(r, err) < 0 ||
	    parse_printk(r, err) < 0 || parse_cmdlines(r, err) < 0)
		return -1;
	r->what = "CPU count";
	if (rd_u32(r, &ncpu, err) < 0)
		return -1;
	if (ncpu > 1u << 16)
		return ks_error_at(err, td->src.path, r->pos - 4, "implausible CPU count %u", ncpu);
	td->meta.cpu_count = ncpu;
	r->what = "data kind";
	if (rd_bytes(r, kind, 10, err) < 0)
		return -1;
	if (!memcmp(kind, "options  ", 10)) {
		if (parse_options(td, r, &next, err) < 0)
			return -1;
		r->what = "data kind";
		if (rd_bytes(r, kind, 10, err) < 0)
			return -1;
	}
	if (!memcmp(kind, "latency  ", 10)) {
		/* the rest of the file is the text of the trace */
		td->latency = td->meta.has_latency = true;
		td->latency_offset = r->pos;
		return 0;
	}
	if (memcmp(kind, "flyrecord", 10))
		return ks_error_at(err, td->src.path, r->pos - 10,
				   "unknown data kind (not flyrecord or latency)");
	if (parse_v6_flyrecord(td, r, ncpu, err) < 0)
		return -1;
	return parse_v6_instances(td, err);
}

static int parse_compression(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	uint64_t at = r->pos;

	r->what = "compression header";
	if (rd_string(r, td->meta.compression, sizeof(td->meta.compression), err) < 0 ||
	    rd_string(r, td->meta.compression_version, sizeof(td->meta.compression_version), err) < 0)
		return -1;
	if (!strcmp(td->meta.compression, "none"))
		td->comp = COMP_NONE;
	else if (!strcmp(td->meta.compression, "zlib"))
		td->comp = COMP_ZLIB;
	else if (!strcmp(td->meta.compression, "zstd"))
		td->comp = COMP_ZSTD;
	else
		return ks_error_at(err, td->src.path, at,
				   "unsupported compression algorithm \"%s\" (known: none, zlib, zstd)",
				   td->meta.compression);
	return 0;
}

static int parse_file_header(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	char magic[10], version[8];
	uint8_t endian, lsize;
	uint32_t psize;

	r->what = "file header";
	if (rd_bytes(r, magic, 10, err) < 0)
		return -1;
	if (memcmp(magic, KS_TRACEDAT_MAGIC, 10))
		return ks_error_at(err, td->src.path, 0, "not a trace.dat file (bad magic)");
	if (rd_string(r, version, sizeof(version), err) < 0)
		return -1;
	if (strcmp(version, "6") && strcmp(version, "7"))
		return ks_error_at(err, td->src.path, 10,
				   "unsupported trace.dat version \"%s\" (only 6 and 7)", version);
	td->meta.version = version[0] - '0';
	if (rd_bytes(r, &endian, 1, err) < 0 || rd_bytes(r, &lsize, 1, err) < 0)
		return -1;
	if (endian > 1 || (lsize != 4 && lsize != 8))
		return ks_error_at(err, td->src.path, r->pos - 2,
				   "bad endian flag %u or long size %u", endian, lsize);
	td->meta.big_endian = endian;
	td->swap = (endian == 1) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	td->meta.long_size = lsize;
	if (rd_u32(r, &psize, err) < 0)
		return -1;
	if (psize < 64 || psize > (1u << 24) || (psize & (psize - 1)))
		return ks_error_at(err, td->src.path, r->pos - 4, "bad page size %u", psize);
	td->meta.page_size = td->page_size = psize;
	strcpy(td->meta.compression, "none");
	if (td->meta.version >= 7)
		return parse_compression(td, r, err);
	return 0;
}

/* ------------------------------------------------------------------ */
/* info */

static void copy_word(char *dst, size_t max, const char *src, size_t len)
{
	if (len >= max)
		len = max - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* UNAME is "sysname nodename release version... machine". */
static void info_from_uname(struct ks_source_info *info, const char *uname)
{
	const char *words[3], *p = uname, *last = NULL;
	size_t lens[3], last_len = 0;
	int n = 0;

	while (*p) {
		size_t len;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		len = strcspn(p, " \n");
		if (n < 3) {
			words[n] = p;
			lens[n] = len;
		}
		n++;
		last = p;
		last_len = len;
		p += len;
		if (*p == '\n')
			break;
	}
	if (n >= 3) {
		copy_word(info->hostname, sizeof(info->hostname), words[1], lens[1]);
		copy_word(info->osrelease, sizeof(info->osrelease), words[2], lens[2]);
	}
	if (n >= 4 && last)
		copy_word(info->arch, sizeof(info->arch), last, last_len);
}

/* trace-cmd treats these clocks as raw counters unless TSC2NSEC is given. */
static bool clock_is_counter(const char *clock)
{
	return clock && (!strcmp(clock, "x86-tsc") || !strcmp(clock, "counter") ||
			 !strcmp(clock, "uptime"));
}

static uint32_t top_buffer(const struct tracedat *td)
{
	uint32_t i;

	for (i = 0; i < td->nr_buffers; i++)
		if (!td->buffers[i].name[0])
			return i;
	return 0;
}

static void fill_info(struct tracedat *td)
{
	struct ks_tracedat_meta *m = &td->meta;
	struct ks_source_info *info = &td->src.info;

	if (m->version == 6)
		snprintf(td->format, sizeof(td->format), "trace.dat v6");
	else if (td->comp == COMP_NONE)
		snprintf(td->format, sizeof(td->format), "trace.dat v7");
	else
		snprintf(td->format, sizeof(td->format), "trace.dat v7 (%s)", m->compression);
	info->format = td->format;
	info->big_endian = m->big_endian;
	if (m->uname)
		info_from_uname(info, m->uname);
	if (m->clock)
		copy_word(info->clock, sizeof(info->clock), m->clock, strlen(m->clock));
	if (m->version >= 7 && td->have_top) {
		const struct tdbuffer *top = &td->buffers[top_buffer(td)];
		uint32_t i, max = 0;
		for (i = top->first; i < top->first + top->nr_cpus; i++)
			if (td->cpus[i].cpu + 1 > max)
				max = td->cpus[i].cpu + 1;
		/* trace-cmd reports the larger of CPUCOUNT and the buffer's CPUs */
		info->nr_cpus = (int)(max > m->cpu_count ? max : m->cpu_count);
	} else {
		info->nr_cpus = (int)m->cpu_count;
	}
	m->ts_in_ns = m->has_tsc2nsec || (m->clock && !clock_is_counter(m->clock));
	m->tsync_applied = m->has_time_shift && m->tsync_nr_cpus > 0;
}

/* What the source interface hands out (ks_source_clock, ks_source_guests,
 * ks_source_text(KS_TEXT_UNAME)) from the options read.  Returns 0 or -1
 * (out of memory). */
static int fill_source_meta(struct tracedat *td)
{
	const struct ks_tracedat_meta *m = &td->meta;
	struct ks_source_meta *sm = &td->src.meta;
	uint32_t i;

	sm->clock = (struct ks_source_clock){
		.name = m->clock,
		.raw_counter = !m->tsync_applied && m->ts_offset == 0 &&
			       (m->has_tsc2nsec ? m->tsc_mult != 0 : m->clock != NULL),
		.has_tsc2nsec = m->has_tsc2nsec, .tsc_mult = m->tsc_mult,
		.ts_ticks = !m->ts_in_ns,
		.tsc_shift = m->tsc_shift, .tsc_offset = m->tsc_offset,
		.ts_offset = m->ts_offset, .moved = m->tsync_applied,
		.has_trace_id = m->has_trace_id, .trace_id = m->trace_id,
	};
	/* the generic TimeShift types have the reader's layouts */
	_Static_assert(sizeof(struct ks_source_tsync_cpu) == sizeof(struct ks_tracedat_tsync_cpu) &&
		       sizeof(struct ks_source_tsync_sample) ==
		       sizeof(struct ks_tracedat_tsync_sample), "TimeShift layouts differ");
	if (m->has_time_shift && m->tsync_nr_cpus > 0) {
		sm->has_timeshift = true;
		sm->timeshift = (struct ks_source_timeshift){
			.peer_id = m->tsync_peer_id, .flags = m->tsync_flags,
			.nr_cpus = m->tsync_nr_cpus,
			.cpus = (const struct ks_source_tsync_cpu *)m->tsync_cpus,
		};
	}
	sm->buffers = (const char *const *)m->buffer_names;
	sm->nr_buffers = m->nr_buffers;
	if (m->uname && ks_source_meta_set_text(sm, KS_TEXT_UNAME, m->uname, strlen(m->uname),
						false) < 0)
		return -1;
	sm->procs = td->vmident.procs;
	sm->nr_procs = td->vmident.nprocs;
	if (!m->nr_guests)
		return 0;
	sm->guests = calloc(m->nr_guests, sizeof(*sm->guests));
	if (!sm->guests)
		return -1;
	/* struct ks_source_vcpu and struct ks_tracedat_vcpu have one layout */
	_Static_assert(sizeof(struct ks_source_vcpu) == sizeof(struct ks_tracedat_vcpu),
		       "vCPU map layouts differ");
	for (i = 0; i < m->nr_guests; i++)
		sm->guests[i] = (struct ks_source_guest){
			.name = m->guests[i].name ? m->guests[i].name : "",
			.trace_id = m->guests[i].trace_id,
			.nr_vcpus = m->guests[i].nr_vcpus,
			.vcpus = (const struct ks_source_vcpu *)m->guests[i].vcpus,
		};
	sm->nr_guests = m->nr_guests;
	return 0;
}

/* ------------------------------------------------------------------ */
/* timestamps */

static uint64_t mul_u64_u32_shr(uint64_t a, uint32_t mul, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)a * mul) >> shift);
}

static uint64_t tsync_calc(const struct ks_tracedat_meta *m, uint64_t ts,
			   const struct ks_tracedat_tsync_sample *lo,
			   const struct ks_tracedat_tsync_sample *hi)
{
	int64_t cor = lo->offset;

	if ((m->tsync_flags & TSYNC_INTERPOLATE) && hi && hi->time != lo->time) {
		int64_t delta = (int64_t)(hi->time - lo->time);
		int64_t num = ((int64_t)ts - (int64_t)lo->time) * (hi->offset - lo->offset);
		cor = lo->offset + (num + delta / 2) / delta;
	}
	/* 64-bit product, wrapping like trace-cmd does */
	if (lo->fraction < 64)
		ts = (ts * lo->scaling) >> lo->fraction;
	return ts + (uint64_t)cor;
}

/* Guest time -> host time with the TimeShift samples of CPU. */
static uint64_t tsync_ts(const struct ks_tracedat_meta *m, uint32_t cpu, uint64_t ts)
{
	const struct ks_tracedat_tsync_cpu *tc;
	const struct ks_tracedat_tsync_sample *s;
	uint32_t lo, hi, n;

	if (cpu >= m->tsync_nr_cpus)
		return ts;
	tc = &m->tsync_cpus[cpu];
	s = tc->samples;
	n = tc->nr_samples;
	if (n == 0)
		return ts;
	if (n == 1)
		return ts + (uint64_t)s[0].offset;
	if (ts <= s[0].time)
		return tsync_calc(m, ts, &s[0], &s[1]);
	if (ts >= s[n - 1].time)
		return tsync_calc(m, ts, &s[n - 2], &s[n - 1]);
	/* the last sample whose time is <= ts */
	lo = 0;
	hi = n - 1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s[mid].time <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return tsync_calc(m, ts, &s[lo], &s[lo + 1]);
}

static uint64_t convert_ts(const struct tracedat *td, uint32_t cpu, uint64_t ts)
{
	const struct ks_tracedat_meta *m = &td->meta;

	if (m->tsync_applied)
		ts = tsync_ts(m, cpu, ts);
	if (m->has_tsc2nsec && m->tsc_mult)
		ts = mul_u64_u32_shr(ts, m->tsc_mult, m->tsc_shift);
	return ts + (uint64_t)m->ts_offset;
}

/* ------------------------------------------------------------------ */
/* per-CPU cursors */

static int cursor_init(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	enum kbuffer_long_size ls;
	int hps = tep_get_header_page_size(td->src.tep);

	if (hps != 4 && hps != 8)
		hps = (int)td->meta.long_size;
	ls = hps == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4;
	c->kbuf = kbuffer_alloc(ls, td->meta.big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	if (!c->kbuf)
		return ks_error_at(err, td->src.path, c->start, "out of memory");
	c->next = c->start;
	if (c->compressed && c->end > c->start) {
		uint8_t b[4];
		if (c->end - c->start < 4)
			return ks_error_at(err, td->src.path, c->start,
					   "compressed data of CPU %u is truncated", c->cpu);
		if (pread_at(td, b, 4, c->start, "chunk count", err) < 0)
			return -1;
		c->chunks_left = get32(td, b);
		c->next = c->start + 4;
		/* trace-cmd's size may leave out the 4-byte chunk count */
		c->zend = c->end + 4 <= td->file_size ? c->end + 4 : td->file_size;
	}
	return 0;
}

/* Load the next block of pages; returns 0 at the end of the CPU's data. */
static int cursor_fill(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	uint32_t ps = c->page_size;

	/* every CPU of every buffer holds at most two blocks (the current
	 * one and the retired one); all of them count against one budget */
	free(c->retired);
	mem_give(td, c->retired_charge);
	c->retired = c->buf; /* the record delivered last may point into it */
	c->retired_charge = c->buf_charge;
	c->buf = NULL;
	c->buf_charge = 0;
	c->buf_len = c->page_pos = 0;
	if (c->compressed) {
		uint32_t len;
		uint64_t next;
		if (!c->chunks_left)
			return 0;
		if (load_compressed(td, c->next, c->zend, MAX_CHUNK, &c->buf, &len, &next, err) < 0)
			return -1;
		c->buf_charge = (size_t)len + 1;
		c->buf_off = c->next;
		c->buf_len = len;
		c->next = next;
		c->chunks_left--;
		return 1;
	} else {
		uint64_t left = c->end - c->next, n = (uint64_t)ps * READ_PAGES, alloc;
		if (!left)
			return 0;
		if (n > READ_BLOCK_MAX)
			n = ps > READ_BLOCK_MAX ? ps : READ_BLOCK_MAX / ps * ps;
		if (n > left)
			n = left;
		/* a short last page is padded with zeroes */
		alloc = (n + ps - 1) / ps * ps;
		if (mem_take(td, alloc, c->next, err) < 0)
			return -1;
		c->buf_charge = (size_t)alloc;
		c->buf = calloc(1, alloc);
		if (!c->buf)
			return ks_error_at(err, td->src.path, c->next, "out of memory");
		if (pread_at(td, c->buf, n, c->next, "CPU data", err) < 0)
			return -1;
		c->buf_off = c->next;
		c->buf_len = (n + ps - 1) / ps * ps;
		c->next += n;
		return 1;
	}
}

static uint64_t page_file_offset(const struct tracedat *td, const struct cpu_cursor *c)
{
	/* compressed data has no file offset per page: report the chunk */
	(void)td;
	return c->compressed ? c->buf_off : c->buf_off + c->page_pos;
}

/* Check the page header's commit before libtraceevent walks the page. */
static int check_page(struct tracedat *td, struct cpu_cursor *c, const uint8_t *page,
		      uint32_t *events, struct ks_error *err)
{
	int hps = tep_get_header_page_size(td->src.tep);
	uint64_t commit;
	long bad;

	if (hps != 4 && hps != 8)
		hps = (int)td->meta.long_size;
	commit = hps == 8 ? get64(td, page + 8) : get32(td, page + 8);
	commit &= (1u << 27) - 1; /* the top bits are missed-events flags */
	if (commit > c->page_size - 8 - (uint64_t)hps)
		return ks_error_at(err, td->src.path, page_file_offset(td, c),
				   "CPU %u: ring buffer page with bad commit size %llu (page size %u)",
				   c->cpu, (unsigned long long)commit, c->page_size);
	bad = ks_ringpage_count(page + 8 + hps, (uint32_t)commit, c->page_size - 8 - (uint32_t)hps,
				td->meta.big_endian, td->swap, events);
	if (bad >= 0)
		return ks_error_at(err, td->src.path, page_file_offset(td, c),
				   "CPU %u: ring buffer page with a bad event header at byte %ld "
				   "(its length does not move forward)", c->cpu, bad + 8 + hps);
	return 0;
}

/* Advance C to its next event (c->has = false at the end). */
static int cursor_advance(struct tracedat *td, struct cpu_cursor *c, struct ks_error *err)
{
	unsigned long long ts;
	void *data = NULL;

	c->has = false;
	if (c->done)
		return 0;
	if (c->page_loaded)
		data = kbuffer_next_event(c->kbuf, &ts);
	while (!data) {
		int r;
		if (c->page_loaded)
			c->page_pos += c->page_size;
		c->page_loaded = false;
		if (!c->buf || c->page_pos + c->page_size > c->buf_len) {
			if (c->buf && c->page_pos < c->buf_len)
				return ks_error_at(err, td->src.path, c->buf_off,
						   "CPU %u: data chunk of %zu bytes is not a whole number of %u-byte pages",
						   c->cpu, c->buf_len, c->page_size);
			r = cursor_fill(td, c, err);
			if (r <= 0) {
				c->done = r == 0;
				return r;
			}
			continue;
		}
		if (check_page(td, c, c->buf + c->page_pos, &(uint32_t){ 0 }, err) < 0)
			return -1;
		kbuffer_load_subbuffer(c->kbuf, c->buf + c->page_pos);
		c->page_loaded = true;
		c->missed = kbuffer_missed_events(c->kbuf);
		data = kbuffer_read_event(c->kbuf, &ts);
		if (data && c->missed)
			c->lost_pending = true;
	}
	{
		int esize = kbuffer_event_size(c->kbuf);
		uint8_t *page = c->buf + c->page_pos;
		if (esize < 0 || (uint8_t *)data < page ||
		    (uint8_t *)data + esize > page + c->page_size)
			return ks_error_at(err, td->src.path, page_file_offset(td, c),
					   "CPU %u: event of %d bytes runs past its page", c->cpu, esize);
		c->data = data;
		c->size = (uint32_t)esize;
		c->offset = page_file_offset(td, c) +
			    (c->compressed ? 0 : (uint64_t)((uint8_t *)data - page));
	}
	c->raw_ts = ts;
	c->ts = convert_ts(td, c->cpu, ts);
	c->has = true;
	return 0;
}

/* heap of cursors with an event, ordered by (ts, cpu) */

static bool cur_less(const struct tracedat *td, uint32_t a, uint32_t b)
{
	const struct cpu_cursor *x = &td->cpus[a], *y = &td->cpus[b];

	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->order != y->order)
		return x->order < y->order;
	return x->cpu < y->cpu;
}

static void heap_down(struct tracedat *td, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
		if (l < td->heap_len && cur_less(td, td->heap[l], td->heap[m]))
			m = l;
		if (r < td->heap_len && cur_less(td, td->heap[r], td->heap[m]))
			m = r;
		if (m == i)
			return;
		t = td->heap[i];
		td->heap[i] = td->heap[m];
		td->heap[m] = t;
		i = m;
	}
}

static int start_cursors(struct tracedat *td, struct ks_error *err)
{
	uint32_t i;

	td->started = true;
	td->heap = calloc(td->nr_cpus ? td->nr_cpus : 1, sizeof(*td->heap));
	if (!td->heap)
		return ks_error_at(err, td->src.path, 0, "out of memory");
	for (i = 0; i < td->nr_cpus; i++) {
		if (cursor_init(td, &td->cpus[i], err) < 0 ||
		    cursor_advance(td, &td->cpus[i], err) < 0)
			return -1;
		if (td->cpus[i].has)
			td->heap[td->heap_len++] = i;
	}
	for (i = td->heap_len; i-- > 0;)
		heap_down(td, i);
	return 0;
}

/* Ids past it are looked up without the table: the formats' ids are not
 * checked until they are parsed, and a damaged one may be huge. */
#define EVENT_CACHE_MAX (1 << 20)

/* The event of record type TYPE, from a table sized by the formats' ids
 * (allocated at the first record: a reader opened for its header only
 * never pays for it). */
static struct tep_event *find_event(struct tracedat *td, int type)
{
	struct tep_event *ev;

	if (!td->event_cache) {
		td->event_id_end = ks_lazy_id_end(td->src.lazy, td->src.tep);
		td->event_cache_len = td->event_id_end < EVENT_CACHE_MAX ? td->event_id_end :
					EVENT_CACHE_MAX;
		td->event_cache = calloc(td->event_cache_len ? td->event_cache_len : 1,
					 sizeof(*td->event_cache));
		if (!td->event_cache)
			return ks_source_event_by_id(&td->src, type);
	}
	if (type < 0 || type >= td->event_id_end)
		return NULL;
	if (type >= td->event_cache_len)
		return ks_source_event_by_id(&td->src, type);
	ev = td->event_cache[type];
	if (!ev) {
		ev = ks_source_event_by_id(&td->src, type);
		td->event_cache[type] = ev ? ev : EV_NONE;
	}
	return ev == EV_NONE ? NULL : ev;
}

static void fill_event(struct tracedat *td, struct cpu_cursor *c, struct ks_record *rec)
{
	struct tep_record tr;
	int type;

	memset(&tr, 0, sizeof(tr));
	tr.data = c->data;
	tr.size = (int)c->size;
	tr.cpu = (int)c->cpu;
	rec->type = KS_REC_EVENT;
	rec->data = c->data;
	rec->size = c->size;
	rec->tid = -1;
	rec->event = NULL;
	if (c->size >= 8) {
		type = tep_data_type(td->src.tep, &tr);
		rec->event = find_event(td, type);
		rec->tid = tep_data_pid(td->src.tep, &tr);
		/* the process, where kvmscope record's task map says */
		rec->pid = ks_vmident_tgid(&td->vmident, rec->tid);
	}
	if (!rec->event)
		td->src.stats.unknown_events++;
}

/* Latency layout: the text reader's records, with file offsets. */
static int latency_next(struct tracedat *td, struct ks_record *rec, struct ks_error *err)
{
	const struct ks_source_stats *in;
	int r = ks_source_next(td->text_src, rec, err);

	if (r > 0)
		rec->offset = td->latency_offset + (td->latency_chunks ? 0 : rec->offset);
	in = ks_source_stats(td->text_src);
	td->src.stats.lost_events = in->lost_events;
	td->src.stats.lost_records = in->lost_records;
	td->src.stats.out_of_order = in->out_of_order;
	td->src.stats.unknown_events = in->unknown_events;
	td->src.stats.skipped = in->skipped;
	return r;
}

static int tracedat_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	struct tracedat *td = (struct tracedat *)src;
	struct cpu_cursor *c;

	if (td->text_src)
		return latency_next(td, rec, err);
	if (!td->started && start_cursors(td, err) < 0)
		return -1;
	if (!td->heap_len)
		return 0;
	c = &td->cpus[td->heap[0]];
	memset(rec, 0, sizeof(*rec));
	rec->ts = c->ts;
	rec->raw_ts = c->raw_ts;
	rec->cpu = (int32_t)c->cpu;
	rec->pid = -1;
	rec->offset = c->offset;
	if (c->lost_pending) {
		c->lost_pending = false;
		rec->type = KS_REC_LOST;
		rec->tid = -1;
		rec->lost = c->missed > 0 ? (uint64_t)c->missed : 0;
		src->stats.lost_records++;
		src->stats.lost_events += rec->lost;
		return 1;
	}
	fill_event(td, c, rec);
	/* The data stays valid until the next call: the cursor keeps its
	 * buffer until it moves past the page, which happens only now. */
	if (cursor_advance(td, c, err) < 0)
		return -1;
	if (!c->has)
		td->heap[0] = td->heap[--td->heap_len];
	heap_down(td, 0);
	return 1;
}

/* Drop a cursor's blocks and their charge against the budget. */
static void cursor_release(struct tracedat *td, struct cpu_cursor *c)
{
	free(c->buf);
	free(c->retired);
	mem_give(td, c->buf_charge + c->retired_charge);
	c->buf = c->retired = NULL;
	c->buf_charge = c->retired_charge = 0;
	c->buf_len = c->page_pos = 0;
	c->done = true;
}

/* Every page of cursor C to FN, block after block. */
static int cursor_pages(struct tracedat *td, struct cpu_cursor *c, ks_tracedat_page_fn fn,
			void *arg, struct ks_error *err)
{
	int r;

	if (cursor_init(td, c, err) < 0)
		return -1;
	while ((r = cursor_fill(td, c, err)) > 0) {
		if (c->buf_len % c->page_size)
			return ks_error_at(err, td->src.path, c->buf_off,
					   "CPU %u: data chunk of %zu bytes is not a whole number of %u-byte pages",
					   c->cpu, c->buf_len, c->page_size);
		for (c->page_pos = 0; c->page_pos < c->buf_len; c->page_pos += c->page_size) {
			uint32_t events = 0;
			const uint8_t *page = c->buf + c->page_pos;

			if (check_page(td, c, page, &events, err) < 0 ||
			    fn(arg, c->cpu, page, c->page_size, events, err) < 0)
				return -1;
		}
	}
	return r;
}

int ks_tracedat_pages(struct ks_source *src, ks_tracedat_page_fn fn, void *arg,
		      struct ks_error *err)
{
	struct tracedat *td = (struct tracedat *)src;
	uint32_t i;
	int r = 0;

	if (!src || src->ops != &tracedat_ops || td->started || td->text_src || td->swap ||
	    td->nr_buffers > 1 || td->src.windowed)
		return 1;
	if (!fn)
		return 0;
	if (ks_source_late_error(src, err) < 0) /* as for records */
		return -1;
	td->started = true; /* the records are consumed here: next() delivers none */
	for (i = 0; !r && i < td->nr_cpus; i++) {
		r = cursor_pages(td, &td->cpus[i], fn, arg, err);
		cursor_release(td, &td->cpus[i]);
	}
	return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* open / close */

static void free_meta(struct ks_tracedat_meta *m)
{
	uint32_t i;

	for (i = 0; i < m->nr_guests; i++) {
		free(m->guests[i].name);
		free(m->guests[i].vcpus);
	}
	free(m->guests);
	for (i = 0; i < m->tsync_nr_cpus; i++)
		free(m->tsync_cpus[i].samples);
	free(m->tsync_cpus);
	for (i = 0; i < m->nr_buffers; i++)
		free(m->buffer_names[i]);
	free(m->buffer_names);
	free(m->uname);
	free(m->version_string);
	free(m->clock);
}

static void tracedat_close(struct ks_source *src)
{
	struct tracedat *td = (struct tracedat *)src;
	uint32_t i;

	/* the deferred formats are the meta's texts */
	ks_lazy_detach(td->src.lazy);
	ks_lazy_detach(td->file_lazy);
	ks_source_meta_free(&src->meta);
	ks_vmident_free(&td->vmident);
	free(td->ra);
	for (i = 0; i < td->nr_cpus; i++) {
		free(td->cpus[i].buf);
		free(td->cpus[i].retired);
		if (td->cpus[i].kbuf)
			kbuffer_free(td->cpus[i].kbuf);
	}
	free(td->cpus);
	free(td->heap);
	free(td->event_cache);
	ks_hmap_free(&td->sections);
	for (i = 0; i < td->nr_buffers; i++)
		free(td->buffers[i].name);
	free(td->buffers);
	free(td->by_start);
	free_meta(&td->meta);
	if (td->text_src) { /* src.tep belongs to the text reader */
		ks_ctx_tep_put(td->src.ctx, td->file_tep);
		ks_source_close(td->text_src);
	} else {
		ks_ctx_tep_put(td->src.ctx, td->src.tep);
	}
	free(td->latency_text);
	if (td->fd >= 0)
		close(td->fd);
	free(td->src.path);
	free(td);
}

/* Progress: what each CPU's cursor has read of its data region (they are
 * read side by side, in time order). */
static void tracedat_position(const struct ks_source *src, uint64_t *done, uint64_t *total)
{
	const struct tracedat *td = (const struct tracedat *)src;
	uint32_t i;

	*done = *total = 0;
	if (td->text_src) {
		ks_source_position(td->text_src, done, total);
		return;
	}
	for (i = 0; i < td->nr_cpus; i++) {
		const struct cpu_cursor *c = &td->cpus[i];
		uint64_t len = c->end > c->start ? c->end - c->start : 0;

		*total += len;
		if (c->done || c->next >= c->end)
			*done += len;
		else if (c->next > c->start)
			*done += c->next - c->start;
	}
}

static const struct ks_source_ops tracedat_ops = {
	.name = "trace.dat",
	.next = tracedat_next,
	.close = tracedat_close,
	.position = tracedat_position,
};

const struct ks_vmident *ks_tracedat_vmident(const struct ks_source *src)
{
	const struct tracedat *td = (const struct tracedat *)src;

	if (!src || src->ops != &tracedat_ops)
		return NULL;
	return td->vmident.ntasks || td->vmident.nprocs ? &td->vmident : NULL;
}

const struct ks_tracedat_meta *ks_tracedat_meta(const struct ks_source *src)
{
	if (!src || src->ops != &tracedat_ops)
		return NULL;
	return &((const struct tracedat *)src)->meta;
}

/* The instance a record came from, found by the record's file offset:
 * every CPU of every buffer has its own data region. */
const char *ks_tracedat_record_buffer(const struct ks_source *src, const struct ks_record *rec)
{
	const struct tracedat *td;
	uint32_t lo = 0, hi;
	const struct cpu_cursor *c;

	if (!src || !rec || src->ops != &tracedat_ops)
		return NULL;
	td = (const struct tracedat *)src;
	if (!td->nr_by_start)
		return NULL;
	hi = td->nr_by_start;
	while (hi - lo > 1) { /* the last region starting at or before the offset */
		uint32_t mid = lo + (hi - lo) / 2;
		if (td->cpus[td->by_start[mid]].start <= rec->offset)
			lo = mid;
		else
			hi = mid;
	}
	c = &td->cpus[td->by_start[lo]];
	if (c->start > rec->offset)
		return NULL;
	return td->buffers[c->buffer].name[0] ? td->buffers[c->buffer].name : NULL;
}

const char *ks_tracedat_latency_text(const struct ks_source *src, size_t *len)
{
	const struct tracedat *td;

	if (!src || src->ops != &tracedat_ops)
		return NULL;
	td = (const struct tracedat *)src;
	if (!td->text_src)
		return NULL;
	if (len)
		*len = td->latency_len;
	return td->latency_text;
}

static int cmp_start(const void *a, const void *b, void *cursors)
{
	const struct cpu_cursor *x = (const struct cpu_cursor *)cursors + *(const uint32_t *)a;
	const struct cpu_cursor *y = (const struct cpu_cursor *)cursors + *(const uint32_t *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The data regions of all CPUs of all buffers sorted by offset: no two may
 * overlap (a file naming one region for many CPUs would make the reader
 * decompress it once per CPU).  With instances, it is the index
 * ks_tracedat_record_buffer() searches. */
static int index_regions(struct tracedat *td, struct ks_error *err)
{
	uint32_t i;

	td->by_start = calloc(td->nr_cpus ? td->nr_cpus : 1, sizeof(*td->by_start));
	if (!td->by_start)
		return ks_error_at(err, td->src.path, 0, "out of memory");
	for (i = 0; i < td->nr_cpus; i++)
		if (td->cpus[i].end > td->cpus[i].start)
			td->by_start[td->nr_by_start++] = i;
	qsort_r(td->by_start, td->nr_by_start, sizeof(*td->by_start), cmp_start, td->cpus);
	for (i = 1; i < td->nr_by_start; i++) {
		const struct cpu_cursor *a = &td->cpus[td->by_start[i - 1]];
		const struct cpu_cursor *b = &td->cpus[td->by_start[i]];

		if (b->start < a->end)
			return ks_error_at(err, td->src.path, b->start,
					   "data of CPU %u of buffer \"%s\" overlaps the data of CPU %u "
					   "of buffer \"%s\" (at %llu, %llu bytes)", b->cpu,
					   td->buffers[b->buffer].name, a->cpu, td->buffers[a->buffer].name,
					   (unsigned long long)a->start,
					   (unsigned long long)(a->end - a->start));
	}
	if (td->nr_buffers < 2) {
		free(td->by_start);
		td->by_start = NULL;
		td->nr_by_start = 0;
	}
	return 0;
}

/* v7: a buffer's own page size and its flyrecord section, which tells
 * whether its data is compressed. */
static int check_flyrecord_v7(struct tracedat *td, struct tdbuffer *b, bool *compressed,
			      struct ks_error *err)
{
	uint8_t hdr[16];
	uint32_t i;

	if (!b->page_size)
		b->page_size = td->page_size;
	if (b->page_size < 64 || b->page_size > (1u << 24) || (b->page_size & (b->page_size - 1)))
		return ks_error_at(err, td->src.path, b->offset, "buffer \"%s\": bad page size %u",
				   b->name, b->page_size);
	if (!b->nr_cpus)
		return 0;
	if (pread_at(td, hdr, 16, b->offset, "flyrecord section header", err) < 0)
		return -1;
	if (get64(td, hdr + 8) > td->file_size - b->offset - 16)
		return ks_error_at(err, td->src.path, b->offset,
				   "truncated: buffer \"%s\": flyrecord section of %llu bytes runs past "
				   "the end of the file (%llu bytes)", b->name,
				   (unsigned long long)get64(td, hdr + 8), (unsigned long long)td->file_size);
	*compressed = (get16(td, hdr + 2) & SEC_FL_COMPRESS) != 0;
	if (*compressed && td->comp == COMP_NONE)
		return ks_error_at(err, td->src.path, b->offset,
				   "compressed flyrecord section in a file without compression");
	for (i = b->first; i < b->first + b->nr_cpus; i++)
		if (td->cpus[i].start < b->offset + 16 && td->cpus[i].end > td->cpus[i].start)
			return ks_error_at(err, td->src.path, b->offset,
					   "data of CPU %u starts before its flyrecord section", td->cpus[i].cpu);
	return 0;
}

/* Give every cursor its buffer's page size and compression. */
static int setup_buffers(struct tracedat *td, struct ks_error *err)
{
	uint32_t i, j;

	for (i = 0; i < td->nr_buffers; i++) {
		struct tdbuffer *b = &td->buffers[i];
		bool compressed = false;

		if (td->meta.version < 7)
			b->page_size = td->page_size;
		else if (check_flyrecord_v7(td, b, &compressed, err) < 0)
			return -1;
		for (j = b->first; j < b->first + b->nr_cpus; j++) {
			td->cpus[j].page_size = b->page_size;
			td->cpus[j].compressed = compressed;
		}
	}
	if (td->have_top) /* what the file reports as its page size */
		td->page_size = td->buffers[top_buffer(td)].page_size;
	return index_regions(td, err);
}

/* ------------------------------------------------------------------ */
/* latency layout: the text of the trace, read by the ftrace text reader */

/* v7: the latency section's payload, in compressed chunks if flagged. */
static int load_latency_v7(struct tracedat *td, struct ks_error *err)
{
	uint8_t hdr[16], b4[4];
	uint64_t off = td->latency_offset, size, end, pos;
	uint32_t count, i;

	if (pread_at(td, hdr, 16, off, "latency section header", err) < 0)
		return -1;
	size = get64(td, hdr + 8);
	if (size > td->file_size - off - 16)
		return ks_error_at(err, td->src.path, off,
				   "truncated: latency section of %llu bytes runs past the end of the file",
				   (unsigned long long)size);
	end = off + 16 + size;
	if (!(get16(td, hdr + 2) & SEC_FL_COMPRESS)) {
		struct rd r = { .td = td, .pos = off + 16, .end = end, .what = "latency text" };
		td->latency_offset = off + 16;
		if (rd_alloc(&r, size, &td->latency_text, err) < 0)
			return -1;
		td->latency_len = size;
		return 0;
	}
	if (td->comp == COMP_NONE)
		return ks_error_at(err, td->src.path, off,
				   "compressed latency section in a file without compression");
	td->latency_chunks = true;
	if (size < 4)
		return ks_error_at(err, td->src.path, off, "latency section is truncated");
	if (pread_at(td, b4, 4, off + 16, "latency chunk count", err) < 0)
		return -1;
	count = get32(td, b4);
	pos = off + 20;
	for (i = 0; i < count; i++) {
		uint8_t *chunk;
		uint32_t len;
		char *grown;

		if (load_compressed(td, pos, end, MAX_CHUNK, &chunk, &len, &pos, err) < 0)
			return -1;
		if (td->latency_len + len > MAX_SECTION) {
			free(chunk);
			return ks_error_at(err, td->src.path, off, "latency text is too large");
		}
		/* the text is kept: its bytes stay counted */
		if (mem_take(td, len, pos, err) < 0) {
			free(chunk);
			return -1;
		}
		grown = realloc(td->latency_text, td->latency_len + len + 1);
		if (!grown) {
			free(chunk);
			return ks_error_at(err, td->src.path, off, "out of memory");
		}
		td->latency_text = grown;
		memcpy(grown + td->latency_len, chunk, len);
		td->latency_len += len;
		grown[td->latency_len] = '\0';
		free(chunk);
		mem_give(td, (uint64_t)len + 1);
	}
	if (!td->latency_text && !(td->latency_text = calloc(1, 1)))
		return ks_error_at(err, td->src.path, off, "out of memory");
	return 0;
}

static int load_latency(struct tracedat *td, struct ks_error *err)
{
	struct rd r = { .td = td, .pos = td->latency_offset, .end = td->file_size,
			.what = "latency text" };
	struct ks_source *text;

	if (td->meta.version >= 7) {
		if (td->latency_offset > td->file_size || td->file_size - td->latency_offset < 16)
			return ks_error_at(err, td->src.path, td->latency_offset,
					   "truncated: latency section lies outside the file");
		if (load_latency_v7(td, err) < 0)
			return -1;
	} else {
		if (rd_alloc(&r, td->file_size - td->latency_offset, &td->latency_text, err) < 0)
			return -1;
		td->latency_len = td->file_size - td->latency_offset;
	}
	if (ks_ftrace_text_open_mem(&text, td->src.path, td->latency_text, td->latency_len,
				    td->src.ctx, err) < 0)
		return -1;
	td->text_src = text;
	/* records come with the text reader's formats: its tep is the source's */
	td->file_tep = td->src.tep;
	td->file_lazy = td->src.lazy;
	td->src.lazy = NULL;
	td->src.tep = ks_source_tep(text);
	return 0;
}

/* The event formats and kallsyms into the tep, deferred: each format is
 * parsed when its events are first needed, the symbols on the first
 * lookup.  The tep is the source's own (it grows as it is used). */
static void load_formats(struct tracedat *td)
{
	tep_set_cpus(td->src.tep, (int)td->src.info.nr_cpus);
	td->src.lazy = ks_lazy_attach(td->src.ctx, td->src.tep, td->src.meta.formats,
				      td->src.meta.nr_formats, &td->src.meta,
				      !(td->open_flags & KS_OPEN_EVENTS_BY_RECORD));
}

static int tracedat_parse(struct tracedat *td, struct ks_error *err)
{
	struct rd r = { .td = td, .end = td->file_size };

	if (parse_file_header(td, &r, err) < 0)
		return -1;
	tep_set_file_bigendian(td->src.tep, td->meta.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(td->src.tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(td->src.tep, (int)td->meta.long_size);
	tep_set_page_size(td->src.tep, (int)td->page_size);
	if (td->meta.version == 6 ? parse_v6(td, &r, err) < 0 : parse_v7(td, &r, err) < 0)
		return -1;
	if (setup_buffers(td, err) < 0)
		return -1;
	if (!td->latency && tep_get_header_timestamp_size(td->src.tep) != 8 && td->nr_cpus)
		return ks_error_at(err, td->src.path, 0, "missing or unusable header_page format");
	fill_info(td);
	if (fill_source_meta(td) < 0)
		return ks_error_set(err, "%s: out of memory", td->src.path);
	load_formats(td);
	if (td->latency && load_latency(td, err) < 0)
		return -1;
	return 0;
}

int ks_tracedat_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err)
{
	struct tracedat *td;
	struct stat st;

	*out = NULL;
	td = calloc(1, sizeof(*td));
	if (!td)
		return ks_error_set(err, "%s: out of memory", path);
	td->open_flags = o ? o->flags : 0;
	ks_source_apply_opts(&td->src, o);
	td->fd = -1;
	td->src.ops = &tracedat_ops;
	ks_hmap_init(&td->sections, 0);
	td->src.path = strdup(path);
	td->src.tep = tep_alloc();
	if (!td->src.path || !td->src.tep) {
		tracedat_close(&td->src);
		return ks_error_set(err, "%s: out of memory", path);
	}
	td->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (td->fd < 0 || fstat(td->fd, &st) < 0) {
		ks_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		tracedat_close(&td->src);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		ks_source_check_regular(path, td->fd, err);
		tracedat_close(&td->src);
		return -1;
	}
	td->file_size = (uint64_t)st.st_size;
	if (tracedat_parse(td, err) < 0) {
		tracedat_close(&td->src);
		return -1;
	}
	*out = &td->src;
	return 0;
}
