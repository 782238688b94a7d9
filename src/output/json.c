/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json.c - streaming JSON writer (see include/kvmscope/json.h).
 */
#include <inttypes.h>
#include <math.h>

#include "kvmscope/json.h"

void ks_json_init(struct ks_json *j, FILE *out, bool pretty)
{
	j->out = out;
	j->depth = 0;
	j->need_comma[0] = false;
	j->after_key = false;
	j->pretty = pretty;
	j->flat_depth = 0;
}

void ks_json_set_flat_depth(struct ks_json *j, int depth)
{
	j->flat_depth = depth;
}

/* Whether items at nesting DEPTH go on lines of their own. */
static bool breaks(const struct ks_json *j, int depth)
{
	return j->pretty && (!j->flat_depth || depth <= j->flat_depth);
}

/* A new line for an item at nesting ITEMS (indented by the current depth). */
static void indent(struct ks_json *j, int items)
{
	int i;

	if (!breaks(j, items))
		return;
	fputc('\n', j->out);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Called before every value or key: separators and indentation. */
static void before_item(struct ks_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		putc_unlocked(',', j->out);
	if (j->depth > 0)
		indent(j, j->depth);
	j->need_comma[j->depth] = true;
}

static void open_scope(struct ks_json *j, char c)
{
	before_item(j);
	fputc(c, j->out);
	if (j->depth < KS_JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct ks_json *j, char c)
{
	bool had_items = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had_items)
		indent(j, j->depth + 1);
	fputc(c, j->out);
}

void ks_json_begin_object(struct ks_json *j)
{
	open_scope(j, '{');
}

void ks_json_end_object(struct ks_json *j)
{
	close_scope(j, '}');
}

void ks_json_begin_array(struct ks_json *j)
{
	open_scope(j, '[');
}

void ks_json_end_array(struct ks_json *j)
{
	close_scope(j, ']');
}

static void put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', out);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void ks_json_key(struct ks_json *j, const char *key)
{
	before_item(j);
	put_string(j->out, key);
	fputs(breaks(j, j->depth) ? ": " : ":", j->out);
	j->after_key = true;
}

void ks_json_string(struct ks_json *j, const char *s)
{
	before_item(j);
	put_string(j->out, s);
}

void ks_json_u64(struct ks_json *j, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	before_item(j);
	/* by hand: outputs of millions of numbers (timelines) spent most of
	 * their time in fprintf */
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), j->out);
}

void ks_json_i64(struct ks_json *j, int64_t v)
{
	before_item(j);
	fprintf(j->out, "%" PRId64, v);
}

void ks_json_double(struct ks_json *j, double v)
{
	before_item(j);
	if (isfinite(v))
		fprintf(j->out, "%.6g", v);
	else
		fputs("null", j->out);
}

void ks_json_bool(struct ks_json *j, bool v)
{
	before_item(j);
	fputs(v ? "true" : "false", j->out);
}

void ks_json_null(struct ks_json *j)
{
	before_item(j);
	fputs("null", j->out);
}

void ks_json_finish(struct ks_json *j)
{
	fputc('\n', j->out);
}

void ks_json_kv_string(struct ks_json *j, const char *key, const char *s)
{
	ks_json_key(j, key);
	ks_json_string(j, s);
}

void ks_json_kv_u64(struct ks_json *j, const char *key, uint64_t v)
{
	ks_json_key(j, key);
	ks_json_u64(j, v);
}

void ks_json_kv_i64(struct ks_json *j, const char *key, int64_t v)
{
	ks_json_key(j, key);
	ks_json_i64(j, v);
}

void ks_json_decimal(struct ks_json *j, int64_t v, unsigned decimals)
{
	uint64_t scale = 1, mag;
	unsigned i;

	if (decimals > 9)
		decimals = 9;
	for (i = 0; i < decimals; i++)
		scale *= 10;
	before_item(j);
	mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	if (decimals == 0)
		fprintf(j->out, "%s%llu", v < 0 ? "-" : "", (unsigned long long)mag);
	else
		fprintf(j->out, "%s%llu.%0*llu", v < 0 ? "-" : "", (unsigned long long)(mag / scale),
			(int)decimals, (unsigned long long)(mag % scale));
}

void ks_json_kv_double(struct ks_json *j, const char *key, double v)
{
	ks_json_key(j, key);
	ks_json_double(j, v);
}
