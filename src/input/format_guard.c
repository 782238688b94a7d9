/*
 * format_guard.c - checks in front of libtraceevent's parsers (see .h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
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
		} else if (!is_ident(*p) && !strchr(" \t\n+-*/%&|^~!<>=?:(),.[]{}'", *p)) {
			return false; /* a character C expressions do not use ('$', '@'...) */
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

/* ---- formats already checked in a child ----
 *
 * A process often meets the same formats again (host and guest traces of one
 * kernel, files of one machine, a fuzzer's mutations of one file): a format
 * that a child parsed without dying is remembered by a 128-bit fingerprint
 * of its system name and text, and is not checked again.  The set is
 * bounded; when full it starts afresh. */
#define SAFE_SLOTS 16384 /* a power of two; at most half full */

struct fingerprint {
	uint64_t a, b;
};

static struct fingerprint safe_set[SAFE_SLOTS];
static size_t safe_used;
static pthread_mutex_t safe_lock = PTHREAD_MUTEX_INITIALIZER;

static void mix(struct fingerprint *fp, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		fp->a = (fp->a ^ p[i]) * 0x100000001b3ull;           /* FNV-1a */
		fp->b = (fp->b + p[i] + 1) * 0x9e3779b97f4a7c15ull;  /* independent */
		fp->b ^= fp->b >> 29;
	}
}

static struct fingerprint format_fingerprint(const char *buf, size_t size, const char *sys)
{
	struct fingerprint fp = { 0xcbf29ce484222325ull, size };

	mix(&fp, sys ? sys : "", sys ? strlen(sys) + 1 : 1);
	mix(&fp, buf, size);
	if (!fp.a && !fp.b) /* 0,0 marks an empty slot */
		fp.a = 1;
	return fp;
}

/* Find FP's slot: its own, or the empty one where it would go. */
static size_t safe_slot(struct fingerprint fp)
{
	size_t j = (size_t)fp.a & (SAFE_SLOTS - 1);

	while ((safe_set[j].a || safe_set[j].b) && (safe_set[j].a != fp.a || safe_set[j].b != fp.b))
		j = (j + 1) & (SAFE_SLOTS - 1);
	return j;
}

static bool known_safe(const char *buf, size_t size, const char *sys)
{
	struct fingerprint fp = format_fingerprint(buf, size, sys);
	bool found;

	pthread_mutex_lock(&safe_lock);
	found = safe_set[safe_slot(fp)].a == fp.a && safe_set[safe_slot(fp)].b == fp.b;
	pthread_mutex_unlock(&safe_lock);
	return found;
}

static void remember_safe(const char *buf, size_t size, const char *sys)
{
	struct fingerprint fp = format_fingerprint(buf, size, sys);
	size_t j;

	pthread_mutex_lock(&safe_lock);
	if (safe_used >= SAFE_SLOTS / 2) {
		memset(safe_set, 0, sizeof(safe_set));
		safe_used = 0;
	}
	j = safe_slot(fp);
	if (safe_set[j].a != fp.a || safe_set[j].b != fp.b) {
		safe_set[j] = fp;
		safe_used++;
	}
	pthread_mutex_unlock(&safe_lock);
}

/* libtraceevent's expression parser crashes on some syntax errors in a print
 * fmt ("" . REC->x) that no cheap check can rule out: parse the format in a
 * child process first.  A fork of this process costs well under a
 * millisecond; a format that kills the child is not given to the real tep. */
static bool parses_safely(const char *buf, size_t size, const char *sys)
{
	int status = 0;
	pid_t pid;

	if (known_safe(buf, size, sys))
		return true;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return true; /* cannot check: the cheap checks have to do */
	if (pid == 0) {
		struct tep_handle *t = tep_alloc();
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 2); /* a sanitizer report of the crash is noise */
		if (t)
			tep_parse_event(t, buf, size, sys);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return false;
	remember_safe(buf, size, sys);
	return true;
}

static int guarded_parse(struct tep_handle *tep, const char *buf, size_t size, const char *sys,
			 bool probe)
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
	if (!fmt || (print_fmt_ok(fmt + 10, end, &nm) && (!probe || parses_safely(buf, size, sys))))
		return tep_parse_event(tep, buf, size, sys);
	/* Keep everything before the print fmt, replace it by an empty one. */
	keep = (size_t)(fmt - buf);
	copy = malloc(keep + sizeof(empty_fmt));
	if (!copy)
		return -1;
	memcpy(copy, buf, keep);
	memcpy(copy + keep, empty_fmt, sizeof(empty_fmt));
	ret = !probe || parses_safely(copy, keep + sizeof(empty_fmt) - 1, sys) ?
	      tep_parse_event(tep, copy, keep + sizeof(empty_fmt) - 1, sys) : -1;
	free(copy);
	return ret;
}

int ks_guard_parse_event(struct tep_handle *tep, const char *buf, size_t size, const char *sys)
{
	return guarded_parse(tep, buf, size, sys, true);
}

struct batch_format {
	char *text;
	size_t size;
	char sys[64];
};

struct ks_guard_batch {
	struct batch_format *f;
	size_t n, cap;
};

struct ks_guard_batch *ks_guard_batch_new(void)
{
	return calloc(1, sizeof(struct ks_guard_batch));
}

int ks_guard_batch_add(struct ks_guard_batch *b, const char *buf, size_t size, const char *sys)
{
	struct batch_format *f;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct batch_format *nf = realloc(b->f, cap * sizeof(*nf));

		if (!nf)
			return -1;
		b->f = nf;
		b->cap = cap;
	}
	f = &b->f[b->n];
	f->text = malloc(size ? size : 1);
	if (!f->text)
		return -1;
	memcpy(f->text, buf, size);
	f->size = size;
	snprintf(f->sys, sizeof(f->sys), "%s", sys ? sys : "");
	b->n++;
	return 0;
}

/* All of B's formats through the cheap checks in one child process. */
static bool batch_parses_safely(const struct ks_guard_batch *b)
{
	int status = 0;
	pid_t pid;
	size_t i;

	for (i = 0; i < b->n && known_safe(b->f[i].text, b->f[i].size, b->f[i].sys); i++)
		;
	if (i == b->n)
		return true;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return true;
	if (pid == 0) {
		struct tep_handle *t = tep_alloc();
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 2);
		for (i = 0; t && i < b->n; i++)
			guarded_parse(t, b->f[i].text, b->f[i].size, b->f[i].sys, false);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return false;
	for (i = 0; i < b->n; i++)
		remember_safe(b->f[i].text, b->f[i].size, b->f[i].sys);
	return true;
}

void ks_guard_batch_parse(struct ks_guard_batch *b, struct tep_handle *tep)
{
	bool safe = b->n && batch_parses_safely(b);
	size_t i;

	for (i = 0; i < b->n; i++) {
		guarded_parse(tep, b->f[i].text, b->f[i].size, b->f[i].sys, !safe);
		free(b->f[i].text);
	}
	b->n = 0;
}

void ks_guard_batch_free(struct ks_guard_batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		free(b->f[i].text);
	free(b->f);
	free(b);
}

/* "0xADDR : \"TEXT\"" with the closing quote last: libtraceevent reads past
 * the line for anything else. */
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
	return n >= i + 5 && p[n - 1] == '"';
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
