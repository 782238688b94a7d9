/*
 * format_guard.c - checks in front of libtraceevent's parsers (see .h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "format_guard.h"

#define MAX_FIELDS 256

struct names {
	const char *at[MAX_FIELDS];
	size_t len[MAX_FIELDS];
	int n;
};

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* "N;" at P: digits then ';'.  Returns the position after it, or NULL. */
static const char *digits_semi(const char *p, const char *eol)
{
	const char *q = p;

	while (q < eol && isdigit((unsigned char)*q))
		q++;
	return q > p && q < eol && *q == ';' ? q + 1 : NULL;
}

/* A field line libtraceevent can parse: "\tfield:DECL;\toffset:N;\tsize:N;"
 * optionally followed by "\tsigned:N;", DECL printable with balanced [] holding
 * only identifier characters or spaces. */
static bool field_line_ok(const char *p, const char *eol)
{
	static const char *const tags[] = { "\toffset:", "\tsize:" };
	const char *semi = memchr(p, ';', (size_t)(eol - p));
	int depth = 0;
	size_t i;

	if (!semi)
		return false;
	for (p += 7; p < semi; p++) {
		if (!isprint((unsigned char)*p))
			return false;
		if (*p == '[' && depth++)
			return false;
		if (*p == ']' && --depth < 0)
			return false;
		if (depth && *p != '[' && !is_ident(*p) && *p != ' ')
			return false;
	}
	if (depth)
		return false;
	p = semi + 1;
	for (i = 0; i < 2; i++) {
		size_t n = strlen(tags[i]);

		if ((size_t)(eol - p) < n || strncmp(p, tags[i], n) || !(p = digits_semi(p + n, eol)))
			return false;
	}
	if (p < eol && !strncmp(p, "\tsigned:", 8) && !(p = digits_semi(p + 8, eol)))
		return false;
	return true;
}

/* "\tfield:unsigned long guest_rip;\toffset:..." -> "guest_rip" */
static void collect_field(struct names *nm, const char *line, const char *eol)
{
	const char *semi = memchr(line, ';', (size_t)(eol - line));
	const char *end, *start;

	if (!semi || nm->n == MAX_FIELDS)
		return;
	end = semi;
	if (end > line && end[-1] == ']')	/* char comm[16] */
		while (end > line && *end != '[')
			end--;
	start = end;
	while (start > line && is_ident(start[-1]))
		start--;
	if (start == end)
		return;
	nm->at[nm->n] = start;
	nm->len[nm->n++] = (size_t)(end - start);
}

static bool known_field(const struct names *nm, const char *id, size_t len)
{
	int i;

	for (i = 0; i < nm->n; i++)
		if (nm->len[i] == len && !memcmp(nm->at[i], id, len))
			return true;
	return false;
}

/* The print fmt is usable: quotes and parentheses balance and every REC->X
 * names a field of the format. */
static bool print_fmt_ok(const char *p, const char *end, const struct names *nm)
{
	bool in_str = false;
	int depth = 0;

	for (; p < end; p++) {
		if (in_str) {
			if (*p == '\\' && p + 1 < end)
				p++;
			else if (*p == '"')
				in_str = false;
			continue;
		}
		if (*p == '"') {
			in_str = true;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth < 0) {
			return false;
		} else if (!strncmp(p, "REC->", 5) && end - p > 5) {
			const char *id = p + 5, *q = id;

			while (q < end && is_ident(*q))
				q++;
			if (q == id || isdigit((unsigned char)*id) || !known_field(nm, id, (size_t)(q - id)))
				return false;
			p = q - 1;
		}
	}
	return !in_str && depth == 0;
}

int ks_guard_parse_event(struct tep_handle *tep, const char *buf, size_t size, const char *sys)
{
	static const char empty_fmt[] = "print fmt: \"\"\n";
	struct names nm = { .n = 0 };
	const char *p = buf, *end = buf + size, *fmt = NULL;
	char *copy;
	size_t keep;
	int ret;

	/* libtraceevent reads the text as a C string and trusts its fields. */
	if (memchr(buf, 0, size))
		return -1;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > 7 && !strncmp(p, "\tfield:", 7)) {
			if (!fmt && !field_line_ok(p, eol))
				return -1;
			collect_field(&nm, p, eol);
		}
		else if ((size_t)(eol - p) >= 10 && !strncmp(p, "print fmt:", 10) && !fmt)
			fmt = p; /* runs to the end: its strings may hold newlines */
		p = eol + (eol < end);
	}
	if (!fmt || print_fmt_ok(fmt + 10, end, &nm))
		return tep_parse_event(tep, buf, size, sys);
	/* Keep everything before the print fmt, replace it by an empty one. */
	keep = (size_t)(fmt - buf);
	copy = malloc(keep + sizeof(empty_fmt));
	if (!copy)
		return -1;
	memcpy(copy, buf, keep);
	memcpy(copy + keep, empty_fmt, sizeof(empty_fmt));
	ret = tep_parse_event(tep, copy, keep + sizeof(empty_fmt) - 1, sys);
	free(copy);
	return ret;
}

int ks_guard_parse_printk(struct tep_handle *tep, const char *text)
{
	size_t len = strlen(text);
	char *clean = malloc(len + 1), *o = clean;
	const char *p = text;
	int ret;

	if (!clean)
		return -1;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *colon = memchr(p, ':', n);

		/* "0xffffffff81e3c4e0 : \"text\"": a colon, then a quote after it. */
		if (colon && memchr(colon, '"', n - (size_t)(colon - p))) {
			memcpy(o, p, n);
			o += n;
			*o++ = '\n';
		}
		p += n + (eol != NULL);
	}
	*o = 0;
	ret = tep_parse_printk_formats(tep, clean);
	free(clean);
	return ret;
}
