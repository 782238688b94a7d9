/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracing_data.c - the ftrace metadata block of perf.data / trace.dat v6
 * (see tracing_data.h), loaded into a tep_handle with libtraceevent.
 *
 * A bounds-checked cursor walks the block; every size read from the file is
 * checked against the bytes left before anything is allocated or parsed.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "util/byteorder.h"
#include "ctx_impl.h"
#include "kvmscope/limits.h"
#include "source_events.h"
#include "source_impl.h"
#include "tracing_data.h"

struct td_cursor {
	const uint8_t *buf;
	uint64_t len;
	uint64_t pos;
	bool big_endian;  /* numbers in the block are big-endian */
	const char *path;
	uint64_t base;    /* file offset of buf[0] */
	struct ks_error *err;
	struct ks_guard_batch *formats; /* parsed together at the end; NULL: no tep,
					 * or deferred (lazy) */
	bool lazy;                      /* formats, kallsyms and cmdlines deferred: kept
					 * in meta */
	struct ks_source_meta *meta;    /* where the texts are kept, or NULL */
	uint64_t memory;                /* the run's memory budget (limits.memory) */
	uint64_t fields;                /* fields of the formats so far (event/format_guard.h) */
};

/* Keep TEXT (SIZE bytes) as the source's text ID, if texts are kept. */
static int td_keep(struct td_cursor *c, enum ks_source_text_id id, const uint8_t *p,
		   uint64_t size)
{
	if (c->meta && ks_source_meta_set_text(c->meta, id, (char *)p, size, false) < 0)
		return ks_error_code(c->err, KS_E_NOMEM, "%s: out of memory", c->path);
	return 0;
}

static int td_fail(struct td_cursor *c, const char *what)
{
	return ks_error_at(c->err, c->path, c->base + c->pos, "tracing data: %s", what);
}

static bool td_have(const struct td_cursor *c, uint64_t n)
{
	return n <= c->len - c->pos;
}

static int td_u32(struct td_cursor *c, uint32_t *v, const char *what)
{
	uint32_t x;

	if (!td_have(c, 4))
		return td_fail(c, what);
	x = ks_load32(c->buf + c->pos, ks_swap_for(c->big_endian));
	*v = x;
	c->pos += 4;
	return 0;
}

static int td_u64(struct td_cursor *c, uint64_t *v, const char *what)
{
	uint64_t x;

	if (!td_have(c, 8))
		return td_fail(c, what);
	x = ks_load64(c->buf + c->pos, ks_swap_for(c->big_endian));
	*v = x;
	c->pos += 8;
	return 0;
}

/* A NUL-terminated string inside the block; *s points into the buffer. */
static int td_string(struct td_cursor *c, const char **s, const char *what)
{
	const uint8_t *start = c->buf + c->pos;
	const uint8_t *nul = memchr(start, 0, c->len - c->pos);

	if (!nul)
		return td_fail(c, what);
	*s = (const char *)start;
	c->pos += (uint64_t)(nul - start) + 1;
	return 0;
}

/* Take SIZE bytes; checks they are there. */
static int td_take(struct td_cursor *c, uint64_t size, const uint8_t **p, const char *what)
{
	if (!td_have(c, size))
		return td_fail(c, what);
	*p = c->buf + c->pos;
	c->pos += size;
	return 0;
}

/* A NUL-terminated heap copy for the libtraceevent calls that want one. */
static char *td_strdup(const uint8_t *p, uint64_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, p, size);
		s[size] = 0;
	}
	return s;
}

/* Whether saved cmdlines end the block: from version 0.6 on ("0.6";
 * trace.dat v6 writes "6").  The number is the version's digits, '.' and
 * digits (what strtod() read of it before: a damaged version may differ
 * only past that). */
static bool td_has_cmdlines(const char *version)
{
	size_t n = strspn(version, "0123456789");
	double v;

	if (n && version[n] == '.')
		n += 1 + strspn(version + n + 1, "0123456789");
	return n && ks_parse_seconds(version, n, &v) == 0 && v >= 0.6;
}

static int td_preamble(struct td_cursor *c, struct tep_handle *tep, bool *has_cmdlines)
{
	const char *version = "";
	const uint8_t *p = NULL;
	uint32_t page_size = 0;
	uint8_t endian, long_size;

	if (!td_have(c, 10) || memcmp(c->buf, "\027\010\104tracing", 10) != 0)
		return td_fail(c, "bad magic (expected \\027\\010\\104tracing)");
	c->pos = 10;
	if (td_string(c, &version, "unterminated version string") < 0)
		return -1;
	*has_cmdlines = td_has_cmdlines(version);
	if (td_take(c, 2, &p, "truncated after the version") < 0)
		return -1;
	endian = p[0];
	long_size = p[1];
	if (endian > 1)
		return ks_error_at(c->err, c->path, c->base + c->pos - 2,
				   "tracing data: bad endian byte %u", endian);
	if (long_size != 4 && long_size != 8)
		return ks_error_at(c->err, c->path, c->base + c->pos - 1,
				   "tracing data: bad long size %u", long_size);
	c->big_endian = endian == 1;
	if (td_u32(c, &page_size, "truncated page size") < 0)
		return -1;
	if (page_size == 0 || page_size > (1u << 24) || (page_size & (page_size - 1)))
		return ks_error_at(c->err, c->path, c->base + c->pos - 4,
				   "tracing data: bad page size %u", page_size);
	if (!tep)
		return 0;
	tep_set_file_bigendian(tep, c->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, long_size);
	tep_set_page_size(tep, (int)page_size);
	return 0;
}

static int td_header_files(struct td_cursor *c, struct tep_handle *tep)
{
	const uint8_t *p = NULL;
	uint64_t size = 0;
	char *text;

	if (td_take(c, 12, &p, "truncated header_page") < 0)
		return -1;
	if (memcmp(p, "header_page", 12) != 0)
		return ks_error_at(c->err, c->path, c->base + c->pos - 12,
				   "tracing data: missing header_page");
	if (td_u64(c, &size, "truncated header_page size") < 0 ||
	    td_take(c, size, &p, "header_page runs past the end") < 0)
		return -1;
	if (td_keep(c, KS_TEXT_HEADER_PAGE, p, size) < 0)
		return -1;
	if (tep) {
		text = td_strdup(p, size);
		if (!text)
			return ks_error_code(c->err, KS_E_NOMEM, "%s: out of memory", c->path);
		if (tep_parse_header_page(tep, text, size, tep_get_long_size(tep)) == 0)
			tep_set_long_size(tep, tep_get_header_page_size(tep));
		free(text);
	}

	if (td_take(c, 13, &p, "truncated header_event") < 0)
		return -1;
	if (memcmp(p, "header_event", 13) != 0)
		return ks_error_at(c->err, c->path, c->base + c->pos - 13,
				   "tracing data: missing header_event");
	if (td_u64(c, &size, "truncated header_event size") < 0 ||
	    td_take(c, size, &p, "header_event runs past the end") < 0)
		return -1;
	return td_keep(c, KS_TEXT_HEADER_EVENT, p, size);
}

/* COUNT formats, each u64 size + text, of system SYS. */
static int td_formats(struct td_cursor *c, const char *sys,
		      uint32_t count)
{
	const uint8_t *p = NULL;
	uint64_t size = 0;
	uint32_t i;

	for (i = 0; i < count; i++) {
		uint64_t at, n, room;

		if (td_u64(c, &size, "truncated event format size") < 0)
			return -1;
		at = c->base + c->pos;
		if (td_take(c, size, &p, "event format runs past the end") < 0)
			return -1;
		/* what libtraceevent will keep of the formats, counted from
		 * their text before anything parses them (event/format_guard.h) */
		room = c->memory / KS_FORMAT_FIELD_COST;
		room = room > c->fields ? room - c->fields : 0;
		if (ks_guard_format_budget((const char *)p, size, room, c->memory, c->path, at, &n,
					   c->err) < 0)
			return -1;
		c->fields += n;
		/* An event libtraceevent cannot parse is left out, not fatal. */
		if (c->formats && ks_guard_batch_add(c->formats, (const char *)p, size, sys) < 0)
			return td_fail(c, "out of memory");
		if (c->meta && ks_source_meta_add_format(c->meta, sys, (char *)p, size, false) < 0)
			return td_fail(c, "out of memory");
	}
	return 0;
}

static int td_events(struct td_cursor *c)
{
	uint32_t count = 0, systems = 0, i;
	const char *sys = "";

	if (td_u32(c, &count, "truncated ftrace format count") < 0)
		return -1;
	if (count > c->len / 8)
		return td_fail(c, "absurd ftrace format count");
	if (td_formats(c, "ftrace", count) < 0)
		return -1;
	if (td_u32(c, &systems, "truncated event system count") < 0)
		return -1;
	if (systems > c->len)
		return td_fail(c, "absurd event system count");
	for (i = 0; i < systems; i++) {
		if (td_string(c, &sys, "unterminated event system name") < 0 ||
		    td_u32(c, &count, "truncated event count") < 0)
			return -1;
		if (count > c->len / 8)
			return td_fail(c, "absurd event count");
		if (td_formats(c, sys, count) < 0)
			return -1;
	}
	return 0;
}

typedef int (*td_text_parser)(struct tep_handle *tep, const char *text);

/* A text block (kallsyms, printk formats, cmdlines) handed to PARSE. */
static int td_text(struct td_cursor *c, struct tep_handle *tep, uint64_t size,
		   enum ks_source_text_id id, td_text_parser parse, const char *what)
{
	const uint8_t *p = NULL;
	char *text;

	if (td_take(c, size, &p, what) < 0 || td_keep(c, id, p, size) < 0)
		return -1;
	/* kept texts wait: the kallsyms for a symbol lookup, the saved
	 * cmdlines (thousands of lines) for a comm lookup */
	if (size == 0 || !tep || (c->lazy && (id == KS_TEXT_KALLSYMS || id == KS_TEXT_CMDLINES)))
		return 0;
	text = td_strdup(p, size);
	if (!text)
		return ks_error_code(c->err, KS_E_NOMEM, "%s: out of memory", c->path);
	parse(tep, text);
	free(text);
	return 0;
}

static int td_tail(struct td_cursor *c, struct tep_handle *tep, bool has_cmdlines)
{
	uint32_t size32 = 0;
	uint64_t size64 = 0;

	if (td_u32(c, &size32, "truncated kallsyms size") < 0 ||
	    td_text(c, tep, size32, KS_TEXT_KALLSYMS, tep_parse_kallsyms, "kallsyms run past the end") < 0)
		return -1;
	if (td_u32(c, &size32, "truncated printk formats size") < 0 ||
	    td_text(c, tep, size32, KS_TEXT_PRINTK, ks_guard_parse_printk,
		    "printk formats run past the end") < 0)
		return -1;
	if (!has_cmdlines)
		return 0;
	if (td_u64(c, &size64, "truncated saved cmdlines size") < 0 ||
	    td_text(c, tep, size64, KS_TEXT_CMDLINES, tep_parse_saved_cmdlines,
		    "saved cmdlines run past the end") < 0)
		return -1;
	return 0;
}

/* Walk the block: parse it into TEP (if not NULL; the formats checked with
 * CTX's probe), keep its texts in META (if not NULL). */
static int td_walk(struct ks_ctx *ctx, struct tep_handle *tep, struct ks_source_meta *meta,
		   const uint8_t *buf, uint64_t len, const char *path, uint64_t file_offset,
		   const struct ks_limits *lim, uint64_t *consumed, struct ks_lazy **lazy,
		   struct ks_error *err)
{
	struct td_cursor c = { .buf = buf, .len = len, .path = path,
			       .base = file_offset, .err = err, .meta = meta,
			       .memory = ks_limits_or_default(lim)->memory };
	bool has_cmdlines = false;
	int ret = -1;

	/* with the texts kept, the formats and kallsyms wait until needed */
	c.lazy = tep && meta;
	if (tep && !c.lazy && !(c.formats = ks_guard_batch_new(ks_ctx_guard_probe(ctx))))
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	if (td_preamble(&c, tep, &has_cmdlines) == 0 && td_header_files(&c, tep) == 0 &&
	    td_events(&c) == 0 && td_tail(&c, tep, has_cmdlines) == 0) {
		if (c.formats)
			ks_guard_batch_parse(c.formats, tep);
		else if (c.lazy)
			*lazy = ks_source_lazy_attach(ctx, tep, meta->formats, meta->nr_formats,
						      meta, true, true);
		if (consumed)
			*consumed = c.pos;
		ret = 0;
	}
	ks_guard_batch_free(c.formats);
	return ret;
}

int ks_tracing_data_parse_len(struct ks_ctx *ctx, struct tep_handle *tep, const uint8_t *buf,
			      uint64_t len, const char *path, uint64_t file_offset,
			      uint64_t *consumed, struct ks_error *err)
{
	return td_walk(ctx, tep, NULL, buf, len, path, file_offset, NULL, consumed, NULL, err);
}

int ks_tracing_data_parse(struct ks_ctx *ctx, struct tep_handle *tep, const uint8_t *buf,
			  uint64_t len, const char *path, uint64_t file_offset,
			  struct ks_error *err)
{
	return ks_tracing_data_parse_len(ctx, tep, buf, len, path, file_offset, NULL, err);
}

/* The tep grows as events are looked up (event/lazy_events.h): it is the
 * source's own, never shared through the context. */
int ks_tracing_data_load(struct ks_ctx *ctx, struct tep_handle **tep, struct ks_source_meta *meta,
			 const uint8_t *buf, uint64_t len, const char *path, uint64_t file_offset,
			 const struct ks_limits *lim, struct ks_lazy **lazy, struct ks_error *err)
{
	return td_walk(ctx, *tep, meta, buf, len, path, file_offset, lim, NULL, lazy, err);
}
