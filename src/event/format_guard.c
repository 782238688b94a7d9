/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * format_guard.c - checks in front of libtraceevent's parsers (see .h).
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "atom.h"
#include "format_guard.h"
#include "kvmscope/format_probe.h"

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

		if ((size_t)(eol - p) < n || memcmp(p, tags[i], n) || !(p = digits_semi(p + n, eol)))
			return false;
	}
	if (eol - p >= 8 && !memcmp(p, "\tsigned:", 8) && !(p = digits_semi(p + 8, eol)))
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

/* The divisor after a '/' or '%' at P (outside strings) is a number
 * literal other than 0 (decimal, or 0x and hex digits, then an integer
 * suffix at most: "1000L"): libtraceevent divides without a check, while
 * folding constants (parse time) and while printing a record, so a zero
 * divisor (or INT_MIN / -1) kills the process with SIGFPE.  Anything else
 * (a field, a parenthesis, a sign, an identifier, "2_c2", which its
 * tokenizer splits, "2 x", which it joins) could be zero.  Not even
 * sizeof(), which real formats divide by (dma: "/ sizeof(u64)"):
 * libtraceevent 1.7 reads freed memory while parsing it (AddressSanitizer
 * in the probe's helper says so), and fails the types kernels use there. */
static bool divisor_ok(const char *p, const char *end)
{
	bool hex, nonzero = false;

	for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	hex = end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	if (hex)
		p += 2;
	if (p == end || !(hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)) ||
	    (!hex && *p == '0'))
		return false; /* (a leading 0 is octal: "08" reads as 0) */
	for (; p < end && (hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)); p++)
		nonzero |= *p != '0';
	while (p < end && strchr("uUlL", *p) && *p)
		p++;
	/* then the operand ends: libtraceevent joins the items after it
	 * into one atom ("2 zd22aza"), and it groups operators of one
	 * precedence from the right ("a % 2 % 2" is a % (2 % 2)), so no
	 * '*', '/' or '%' may follow either */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return nonzero && (p == end || (*p && strchr(")],;?:+-&|^<>=!\n", *p)));
}

/* The print fmt is usable: quotes and parentheses balance, every REC->X
 * names a field of the format, every divisor is a nonzero number, and no
 * control character (but newlines, and tabs between the strings) hides
 * where a string ends: libtraceevent's tokenizer reads "\x01,7 / 0" as a
 * division. */
static bool print_fmt_ok(const char *p, const char *end, const struct names *nm)
{
	bool in_str = false, after_str = false;
	int depth = 0;

	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c < 0x20 && c != '\n' && (in_str || c != '\t')) || c == 0x7f)
			return false;
		if (in_str) {
			if (*p == '\\' && p + 1 < end)
				p++;
			else if (*p == '"')
				in_str = false, after_str = true;
			continue;
		}
		if (after_str && *p == '.')
			return false; /* "" . REC->x: the expression parser crashes */
		if (*p != ' ' && *p != '\t' && *p != '\n')
			after_str = false;
		if (*p == '"') {
			in_str = true;
		} else if (!is_ident(*p) && !strchr(" \t\n+-*/%&|^~!<>=?:(),.[]{}'", *p)) {
			return false; /* a character C expressions do not use ('$', '@'...) */
		} else if ((*p == '/' || *p == '%') && !divisor_ok(p, end)) {
			return false;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth < 0) {
			return false;
		} else if (end - p > 5 && !memcmp(p, "REC->", 5)) { /* TEXT is not terminated */
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

/* Every division in ARG (and the args after it) is by a number other
 * than 0 and -1, as libtraceevent parsed it: it divides unchecked when it
 * prints a record (eval_num_arg), and a zero divisor is SIGFPE.  This
 * looks at the parse itself, so it holds wherever the textual check above
 * and libtraceevent's tokenizer might read a text differently. */
static bool divisions_safe(const struct tep_print_arg *arg, int depth)
{
	for (; arg; arg = arg->next) {
		if (depth > 32)
			return false;
		switch (arg->type) {
		case TEP_PRINT_OP:
			if (arg->op.op && (!strcmp(arg->op.op, "/") || !strcmp(arg->op.op, "%"))) {
				const struct tep_print_arg *r = arg->op.right;
				uint64_t v;

				if (!r || r->type != TEP_PRINT_ATOM || !r->atom.atom)
					return false;
				v = ks_atom_value(r->atom.atom);
				if (v == 0 || v == UINT64_MAX)
					return false;
			}
			if (!divisions_safe(arg->op.left, depth + 1) ||
			    !divisions_safe(arg->op.right, depth + 1))
				return false;
			break;
		case TEP_PRINT_TYPE:
			if (!divisions_safe(arg->typecast.item, depth + 1))
				return false;
			break;
		case TEP_PRINT_FLAGS:
			if (!divisions_safe(arg->flags.field, depth + 1))
				return false;
			break;
		case TEP_PRINT_SYMBOL:
			if (!divisions_safe(arg->symbol.field, depth + 1))
				return false;
			break;
		case TEP_PRINT_HEX:
		case TEP_PRINT_HEX_STR:
			if (!divisions_safe(arg->hex.field, depth + 1) ||
			    !divisions_safe(arg->hex.size, depth + 1))
				return false;
			break;
		case TEP_PRINT_INT_ARRAY:
			if (!divisions_safe(arg->int_array.field, depth + 1) ||
			    !divisions_safe(arg->int_array.count, depth + 1) ||
			    !divisions_safe(arg->int_array.el_size, depth + 1))
				return false;
			break;
		case TEP_PRINT_DYNAMIC_ARRAY:
		case TEP_PRINT_DYNAMIC_ARRAY_LEN:
			if (!divisions_safe(arg->dynarray.index, depth + 1))
				return false;
			break;
		case TEP_PRINT_FUNC:
			if (!divisions_safe(arg->func.args, depth + 1))
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}

bool ks_guard_divisions_safe(const struct tep_event *ev)
{
	return divisions_safe(ev->print_fmt.args, 0);
}

/* Parse one format; an event whose print fmt could divide by zero is
 * kept with its fields but marked failed (libtraceevent then prints its
 * fields, not the print fmt, as for any print fmt it could not parse). */
static int parse_one(struct tep_handle *tep, const char *buf, size_t size, const char *sys)
{
	struct tep_event *ev = NULL;
	int ret = tep_parse_format(tep, &ev, buf, size, sys);

	if (ret == 0 && ev && !ks_guard_divisions_safe(ev))
		ev->flags |= TEP_EVENT_FL_FAILED;
	return ret;
}

/* A format as the probe sees it (system, text, len). */
#define fmt_ref ks_source_format

/* ---- the program's probe ----
 *
 * libtraceevent's expression parser crashes on some syntax errors in a print
 * fmt ("" . REC->x): the checks above refuse the ones the fuzzers found, but
 * cannot prove the parser safe.  Finding out safely takes a process that
 * may die, which a library does not start: the program sets a probe in the
 * context it opens inputs with (ks_format_probe_set; kvmscope's command line
 * forks a checking process, src/cli/format_probe.c), and the reader hands
 * it here.  Without one, the checks above have to do. */
static bool formats_safe(struct ks_guard_probe pr, const struct fmt_ref *f, size_t n)
{
	return !pr.fn || pr.fn(pr.arg, f, n);
}

static bool parses_safely(struct ks_guard_probe pr, const char *buf, size_t size, const char *sys)
{
	struct fmt_ref f = { .system = sys, .text = buf, .len = size };

	return formats_safe(pr, &f, 1);
}

/* PROBE: ask PR (if it is one) before tep_parse_event. */
static int guarded_parse(struct ks_guard_probe pr, struct tep_handle *tep, const char *buf,
			 size_t size, const char *sys, bool probe)
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
		else if ((size_t)(eol - p) >= 5 && !strncmp(p, "print", 5) && !fmt)
			return -1; /* "print fmt :": libtraceevent reads it, unchecked */
		p = eol + (eol < end);
	}
	if ((!fmt || print_fmt_ok(fmt + 10, end, &nm)) &&
	    (!probe || parses_safely(pr, buf, size, sys)))
		return parse_one(tep, buf, size, sys);
	if (!fmt)
		return -1; /* no print fmt to drop: its fields kill the parser */
	/* Keep everything before the print fmt, replace it by an empty one. */
	keep = (size_t)(fmt - buf);
	copy = malloc(keep + sizeof(empty_fmt));
	if (!copy)
		return -1;
	memcpy(copy, buf, keep);
	memcpy(copy + keep, empty_fmt, sizeof(empty_fmt));
	ret = !probe || parses_safely(pr, copy, keep + sizeof(empty_fmt) - 1, sys) ?
	      tep_parse_event(tep, copy, keep + sizeof(empty_fmt) - 1, sys) : -1;
	free(copy);
	return ret;
}

int ks_guard_parse_event(struct ks_guard_probe probe, struct tep_handle *tep, const char *buf,
			 size_t size, const char *sys)
{
	return guarded_parse(probe, tep, buf, size, sys, true);
}

int ks_format_parse_checked(struct tep_handle *tep, const char *text, size_t len,
			    const char *system)
{
	return guarded_parse(KS_GUARD_NO_PROBE, tep, text, len, system, false);
}


struct ks_guard_batch {
	struct ks_guard_probe probe;
	struct fmt_ref *f; /* text and sys owned */
	size_t n, cap;
};

struct ks_guard_batch *ks_guard_batch_new(struct ks_guard_probe probe)
{
	struct ks_guard_batch *b = calloc(1, sizeof(*b));

	if (b)
		b->probe = probe;
	return b;
}

int ks_guard_batch_add(struct ks_guard_batch *b, const char *buf, size_t size, const char *sys)
{
	char *text, *name;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct fmt_ref *nf = realloc(b->f, cap * sizeof(*nf));

		if (!nf)
			return -1;
		b->f = nf;
		b->cap = cap;
	}
	text = malloc(size ? size : 1);
	name = strdup(sys ? sys : "");
	if (!text || !name) {
		free(text);
		free(name);
		return -1;
	}
	memcpy(text, buf, size);
	b->f[b->n++] = (struct fmt_ref){ .system = name, .text = text, .len = size };
	return 0;
}

static void batch_clear(struct ks_guard_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free((char *)b->f[i].text);
		free((char *)b->f[i].system);
	}
	b->n = 0;
}

void ks_guard_batch_parse(struct ks_guard_batch *b, struct tep_handle *tep)
{
	/* all of B's formats through the cheap checks in one request */
	bool safe = b->n && formats_safe(b->probe, b->f, b->n);

	for (size_t i = 0; i < b->n; i++)
		guarded_parse(b->probe, tep, b->f[i].text, b->f[i].len, b->f[i].system, !safe);
	batch_clear(b);
}

void ks_guard_batch_free(struct ks_guard_batch *b)
{
	if (!b)
		return;
	batch_clear(b);
	free(b->f);
	free(b);
}

uint64_t ks_guard_count_fields(const char *text, size_t len)
{
	uint64_t n = 0;
	size_t i;

	/* libtraceevent reads "field" as a token wherever blanks put it:
	 * count every occurrence up to the print fmt.  One pass by hand (not
	 * memmem() on the rest for each: sanitizers check the whole rest at
	 * each call, quadratic on a format of a million fields). */
	for (i = 0; i < len; i++) {
		if (text[i] == 'f' && len - i >= 5 && !memcmp(text + i, "field", 5)) {
			n++;
			i += 4;
		} else if (text[i] == 'p' && len - i >= 9 && !memcmp(text + i, "print fmt", 9)) {
			break;
		}
	}
	return n;
}

/* The event's name ("name: NAME" on the first line), printable, for
 * messages. */
static void format_name(const char *text, size_t len, char *out, size_t size)
{
	size_t i = 0, j;

	if (len > 6 && !memcmp(text, "name: ", 6))
		for (j = 6; j < len && i + 1 < size && is_ident(text[j]); j++)
			out[i++] = text[j];
	if (!i)
		snprintf(out, size, "an event");
	else
		out[i] = 0;
}

int ks_guard_format_budget(const char *text, size_t len, uint64_t room, uint64_t memory,
			   const char *path, uint64_t at, uint64_t *fields, struct ks_error *err)
{
	uint64_t n = ks_guard_count_fields(text, len);
	char name[65];

	*fields = n;
	if (n <= KS_FORMAT_MAX_FIELDS && n <= room)
		return 0;
	format_name(text, len, name, sizeof(name));
	if (n > KS_FORMAT_MAX_FIELDS)
		return ks_error_at(err, path, at, "format of %s has %" PRIu64 " fields (limit %u)",
				   name, n, KS_FORMAT_MAX_FIELDS);
	return ks_error_at(err, path, at,
			   "format of %s has %" PRIu64 " fields, more than the memory budget leaves "
			   "room for (limit %" PRIu64 " fields of %" PRIu64 " MiB; raise it with "
			   "--limit memory=SIZE)", name, n, room, memory >> 20);
}

/* "0xADDR : \"TEXT\"" with the closing quote last and TEXT at least two
 * characters: libtraceevent reads past the line for anything else, and
 * before the string for a shorter TEXT (tep_register_print_string looks for
 * "\\n" two characters before the closing quote). */
static bool printk_line_ok(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] == ' ')
		i++;
	if (i + 2 >= n || p[i] != '0' || (p[i + 1] != 'x' && p[i + 1] != 'X'))
		return false;
	for (i += 2; i < n && isxdigit((unsigned char)p[i]); i++)
		;
	if (i + 4 > n || strncmp(p + i, " : \"", 4))
		return false;
	return n >= i + 4 + 2 + 1 && p[n - 1] == '"';
}

int ks_guard_parse_printk(struct tep_handle *tep, const char *text)
{
	size_t len = strlen(text);
	char *clean = malloc(len + 2), *o = clean; /* each line gets its newline */
	const char *p = text;
	int ret;

	if (!clean)
		return -1;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		/* "0xffffffff81e3c4e0 : \"text\"": exactly that shape. */
		if (printk_line_ok(p, n)) {
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
