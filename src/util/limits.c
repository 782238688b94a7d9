/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * limits.c - the run's resource budgets.  See include/kvmscope/limits.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/limits.h"

static const struct ks_limits defaults = {
	.memory = KS_LIMIT_MEMORY_DEFAULT,
	.objects = KS_LIMIT_OBJECTS_DEFAULT,
	.threads = KS_LIMIT_THREADS_DEFAULT,
	.tables = KS_LIMIT_TABLES_DEFAULT,
};

void ks_limits_default(struct ks_limits *l)
{
	*l = defaults;
}

const struct ks_limits *ks_limits_or_default(const struct ks_limits *l)
{
	return l ? l : &defaults;
}

/* LEN bytes of S into BUF (SIZE bytes) as a string that starts with a
 * digit (no sign, space or empty number for strto*() to take); 0 or -1. */
static int number_token(const char *s, size_t len, char *buf, size_t size)
{
	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return buf[0] < '0' || buf[0] > '9' ? -1 : 0;
}

int ks_parse_seconds(const char *s, size_t len, double *out)
{
	char buf[64], *end;

	if (number_token(s, len, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	*out = strtod(buf, &end);
	return *end || errno || !isfinite(*out) ? -1 : 0;
}

int ks_parse_double(const char *s, size_t len, double *out)
{
	size_t i, at = len && (s[0] == '-' || s[0] == '+');
	char buf[64], *end;

	/* strtod() would also take space, hex, "inf" and "nan" */
	if (at >= len || len >= sizeof(buf) || !(isdigit((unsigned char)s[at]) || s[at] == '.'))
		return -1;
	for (i = at; i < len; i++)
		if (!isdigit((unsigned char)s[i]) && (!s[i] || !strchr(".eE+-", s[i])))
			return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	*out = strtod(buf, &end);
	return *end || errno || !isfinite(*out) ? -1 : 0;
}

size_t ks_parse_u64_prefix(const char *s, size_t len, int base, uint64_t *out)
{
	size_t n = 0;

	while (n < len && (base == 16 ? isxdigit((unsigned char)s[n]) : isdigit((unsigned char)s[n])))
		n++;
	return n && ks_parse_u64(s, n, base, out) == 0 ? n : 0;
}

/* LEN bytes of S into BUF as a token that starts with a letter or digit
 * (SIGN: or a '-' or '+' before one); 0 or -1. */
static int int_token(const char *s, size_t len, bool sign, char *buf, size_t size)
{
	size_t at = 0;

	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (sign && (buf[0] == '-' || buf[0] == '+'))
		at = 1;
	return isalnum((unsigned char)buf[at]) ? 0 : -1;
}

/* The value of digit C in BASE (8, 10 or 16), or -1. */
static inline int digit_value(char c, int base)
{
	unsigned d = (unsigned)(unsigned char)c - '0';

	if (d > 9) { /* a letter: lower case it (an ASCII letter has bit 0x20) */
		d = ((unsigned)(unsigned char)c | 0x20) - 'a';
		d = d < 6 ? d + 10 : 99;
	}
	return d < (unsigned)base ? (int)d : -1;
}

/* ks_parse_u64 for BASE 0, 8, 10 and 16 without copying the token: the
 * readers of text call it for every field of every line.  The same
 * answers as strtoull() on the token would give. */
static int parse_u64_fast(const char *s, size_t len, int base, uint64_t *out)
{
	uint64_t v = 0, lim, rem;
	size_t i = 0;

	if ((base == 0 || base == 16) && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (base == 0) {
		base = len > 1 && s[0] == '0' ? 8 : 10;
	}
	if (i == len)
		return -1;
	/* up to 21 octal, 19 decimal or 16 hex digits cannot overflow: no
	 * check per digit (most numbers of a text line are that short) */
	if (len - i <= (size_t)(base == 8 ? 21 : base == 10 ? 19 : 16)) {
		for (; i < len; i++) {
			int d = digit_value(s[i], base);

			if (d < 0)
				return -1;
			v = v * (uint64_t)base + (uint64_t)d;
		}
		*out = v;
		return 0;
	}
	/* v * base + d fits while v < lim, or v == lim and d <= rem */
	lim = UINT64_MAX / (uint64_t)base;
	rem = UINT64_MAX % (uint64_t)base;
	for (; i < len; i++) {
		int d = digit_value(s[i], base);

		if (d < 0 || v > lim || (v == lim && (uint64_t)d > rem))
			return -1;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

int ks_parse_u64(const char *s, size_t len, int base, uint64_t *out)
{
	char buf[72], *end;
	unsigned long long v;

	if (len >= sizeof(buf))
		return -1; /* as long a token as the general case takes */
	if (base == 0 || base == 8 || base == 10 || base == 16)
		return parse_u64_fast(s, len, base, out);
	if (int_token(s, len, false, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoull(buf, &end, base);
	if (*end || errno || end == buf)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int ks_parse_i64(const char *s, size_t len, int base, int64_t *out)
{
	char buf[72], *end;
	long long v;

	if (int_token(s, len, true, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, base);
	if (*end || errno || end == buf)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int ks_parse_count(const char *s, size_t len, bool sized, uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;
	unsigned shift = 0;

	if (number_token(s, len, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno)
		return -1;
	if (sized && *end) {
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -1;
		}
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int ks_limits_parse(struct ks_limits *l, const char *spec, struct ks_error *err)
{
	const char *p = spec;

	while (*p) {
		const char *comma = strchr(p, ','), *eq;
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		uint64_t *field = NULL;
		bool sized = false;

		eq = memchr(p, '=', len);
		if (eq) {
			size_t nlen = (size_t)(eq - p);

			if (nlen == 6 && !memcmp(p, "memory", 6))
				field = &l->memory, sized = true;
			else if (nlen == 7 && !memcmp(p, "objects", 7))
				field = &l->objects;
			else if (nlen == 7 && !memcmp(p, "threads", 7))
				field = &l->threads;
			else if (nlen == 6 && !memcmp(p, "tables", 6))
				field = &l->tables, sized = true;
		}
		if (!field)
			return ks_error_code(err, KS_E_USAGE,
					     "'%.*s': expected memory=SIZE, tables=SIZE, objects=N or "
					     "threads=N", (int)len, p);
		if (ks_parse_count(eq + 1, len - (size_t)(eq + 1 - p), sized, field) < 0 || !*field)
			return ks_error_code(err, KS_E_USAGE,
					     "'%.*s': expected a positive whole number%s", (int)len, p,
					     sized ? " with an optional K, M or G" : "");
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

const char *ks_limit_hint(char *buf, size_t size, const char *name, uint64_t value)
{
	snprintf(buf, size, "(limit %" PRIu64 "; raise it with --limit %s=VALUE)", value, name);
	return buf;
}
