/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text_line.c - the ftrace text reader's lines: a buffered reader
 * of lines (a fixed-size buffer, over-long lines cut and flagged) and the
 * tokenizer of a line's header,
 *   [file: ] comm-pid [(tgid)] [[cpu]] [flags] ts: [system:]name: fields
 * (task and thread id, tgid, CPU, latency flags, timestamp in ns, event
 * name), and of the lines that are no event: ftrace's and trace-cmd's
 * headers ("cpus=N", "# tracer: nop"), lost-event lines.
 *
 * Part of the reader in ftrace_text.c (see ftrace_text_impl.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ftrace_text_impl.h"

/* ------------------------------------------------------------------ */
/* Buffered line reader                                                 */

static int reader_fill(struct line_reader *lr)
{
	ssize_t n;

	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->mem) {
		size_t room = lr->cap - 1 - lr->end, left = lr->mem_len - lr->mem_pos;
		n = (ssize_t)(room < left ? room : left);
		memcpy(lr->buf + lr->end, lr->mem + lr->mem_pos, (size_t)n);
		lr->mem_pos += (size_t)n;
	} else {
		do {
			n = read(lr->fd, lr->buf + lr->end, lr->cap - 1 - lr->end);
		} while (n < 0 && errno == EINTR);
	}
	if (n < 0)
		return -1;
	if (n == 0)
		lr->eof = true;
	lr->end += (size_t)n;
	return 0;
}

/* The buffer for input of SIZE bytes (UINT64_MAX: unknown, e.g. a pipe):
 * room for a READ_CHUNK read plus a line of LINE_MAX_LEN bytes, or for the
 * whole of a smaller input plus such a line. */
char *tx_reader_buffer(struct line_reader *lr, uint64_t size)
{
	lr->cap = (size < READ_CHUNK ? (size_t)size : READ_CHUNK) + LINE_MAX_LEN + 1;
	return malloc(lr->cap);
}

/* Returns 1 with *ln set, 0 at the end, -1 on a read error. */
int tx_reader_next(struct line_reader *lr, struct line *ln)
{
	for (;;) {
		char *p = lr->buf + lr->start;
		size_t avail = lr->end - lr->start;
		char *nl = avail ? memchr(p, '\n', avail) : NULL;
		size_t len;

		if (!nl && !lr->eof && avail < LINE_MAX_LEN) {
			if (reader_fill(lr) < 0)
				return -1;
			continue;
		}
		if (!nl && avail == 0)
			return 0;
		len = nl ? (size_t)(nl - p) : (avail < LINE_MAX_LEN ? avail : LINE_MAX_LEN);
		ln->text = p;
		ln->len = len;
		ln->offset = lr->offset;
		ln->too_long = lr->skipping || (!nl && avail >= LINE_MAX_LEN);
		lr->skipping = !nl && ln->too_long;
		p[len] = '\0'; /* cap keeps one spare byte past end */
		len += nl ? 1 : 0;
		lr->start += len;
		lr->offset += len;
		if (ln->len && ln->text[ln->len - 1] == '\r')
			ln->text[--ln->len] = '\0';
		return 1;
	}
}


/* ------------------------------------------------------------------ */
/* Line header: [file: ] comm-pid [(tgid)] [[cpu]] [flags] ts: name: fields */

/* "1234.567890:" / "303280081900681:" at P -> ns; *end after the ':'. */
static int parse_ts(const char *p, uint64_t *ts, bool *raw, const char **end)
{
	uint64_t sec = 0, frac = 0;
	int nd = 0, nf = 0;

	while (is_digit(*p)) {
		if (++nd > 20 || sec > (UINT64_MAX - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(*p++ - '0');
	}
	if (nd == 0)
		return -1;
	*raw = *p != '.';
	if (*p == '.') {
		p++;
		while (is_digit(*p)) {
			if (nf < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				nf++;
			}
			p++;
		}
		if (nf == 0)
			return -1;
		for (int i = nf; i < 9; i++)
			frac *= 10;
		if (sec > (UINT64_MAX - frac) / 1000000000ull)
			return -1;
		sec = sec * 1000000000ull + frac;
	}
	if (*p != ':' || (p[1] != ' ' && p[1] != '\0'))
		return -1;
	*ts = sec;
	*end = p + 1;
	return 0;
}

/* Find the timestamp: a number after a space or ']' (or at the start),
 * followed by ':' and a space. */
static const char *find_ts(const char *line, uint64_t *ts, bool *raw, const char **after)
{
	for (const char *p = line; *p; p++) {
		if (!is_digit(*p) || (p > line && p[-1] != ' ' && p[-1] != ']'))
			continue;
		if (parse_ts(p, ts, raw, after) == 0)
			return p;
		while (is_digit(p[1]) || p[1] == '.')
			p++;
	}
	return NULL;
}

static bool is_flag_token(const char *s, size_t len)
{
	if (len < 3 || len > 6)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr(".dDbXNnpZzHhs0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

static uint8_t hex_nibble(char c)
{
	if (is_digit(c))
		return (uint8_t)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (uint8_t)(c - 'a' + 10);
	return 0;
}

/* Latency columns "dNs3." -> common_flags / common_preempt_count. */
static void parse_flags(const char *s, size_t len, struct line_hdr *h)
{
	static const char irq[] = "dDbX";
	static const uint8_t irq_bits[] = { 0x01, 0x81, 0x80, 0x02 };
	static const char resched[] = "Nnp";
	static const uint8_t resched_bits[] = { 0x24, 0x04, 0x20 };
	static const char ctx[] = "ZzHhs";
	static const uint8_t ctx_bits[] = { 0x48, 0x40, 0x18, 0x08, 0x10 };
	const char *c;

	if (len > 0 && s[0] && (c = strchr(irq, s[0])))
		h->flags |= irq_bits[c - irq];
	if (len > 1 && s[1] && (c = strchr(resched, s[1])))
		h->flags |= resched_bits[c - resched];
	if (len > 2 && s[2] && (c = strchr(ctx, s[2])))
		h->flags |= ctx_bits[c - ctx];
	if (len > 3)
		h->preempt |= hex_nibble(s[3]);
	if (len > 4)
		h->preempt |= (uint8_t)(hex_nibble(s[4]) << 4);
}

static size_t trim_right(const char *s, size_t e)
{
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	return e;
}

/* Strip "[cpu]", "(tgid)" and the latency token from the end of [0, e). */
static int parse_columns(const char *s, size_t *pe, struct line_hdr *h)
{
	size_t e = trim_right(s, *pe), t = e;
	uint64_t v;
	const char *end;

	while (t > 0 && s[t - 1] != ' ' && s[t - 1] != ']' && s[t - 1] != ')')
		t--;
	if (t < e && t > 0 && is_flag_token(s + t, e - t)) {
		parse_flags(s + t, e - t, h);
		e = trim_right(s, t);
	}
	if (e > 0 && s[e - 1] == ']') {
		size_t b = e - 1;

		while (b > 0 && s[b] != '[')
			b--;
		if (s[b] != '[' || parse_u64(s + b + 1, 10, &v, &end) < 0 || *end != ']' ||
		    v > INT32_MAX)
			return -1;
		h->cpu = (int32_t)v;
		e = trim_right(s, b);
	}
	if (e > 0 && s[e - 1] == ')') {
		size_t b = e - 1;

		while (b > 0 && s[b] != '(')
			b--;
		if (s[b] != '(')
			return -1;
		if (parse_u64(skip_spaces(s + b + 1), 10, &v, &end) == 0 && v <= INT32_MAX)
			h->tgid = (int32_t)v;
		e = trim_right(s, b);
	}
	*pe = e;
	return 0;
}

/* "  [file.dat: ]comm-pid" in [0, e) -> comm, tid */
static int parse_comm_pid(const char *s, size_t e, struct line_hdr *h)
{
	size_t d = e, b;
	uint64_t v;
	const char *c, *colon;

	while (d > 0 && is_digit(s[d - 1]))
		d--;
	if (d == e || d == 0 || s[d - 1] != '-' || e - d > 10)
		return -1;
	if (parse_u64(s + d, 10, &v, NULL) < 0 || v > INT32_MAX)
		return -1;
	h->tid = (int32_t)v;
	c = skip_spaces(s);
	b = (size_t)(c - s);
	/* a multi-file report's "name: " prefix: one word, then ": " */
	colon = memmem(c, d - 1 - b, ": ", 2);
	if (colon && !memchr(c, ' ', (size_t)(colon - c)))
		c = skip_spaces(colon + 2);
	if ((size_t)(c - s) > d - 1)
		return -1;
	h->comm = c;
	h->comm_len = (size_t)(s + d - 1 - c);
	return 0;
}

/* After the timestamp: " name: fields" or " system:name: fields". */
static void parse_name(const char *p, struct line_hdr *h)
{
	const char *n = skip_spaces(p), *q = n;

	while (is_name_char(*q))
		q++;
	if (*q == ':' && is_name_char(q[1])) { /* system:name: */
		n = q + 1;
		for (q = n; is_name_char(*q);)
			q++;
	}
	if (q == n || *q != ':') { /* e.g. a function tracer line */
		h->name = n;
		h->name_len = 0;
		h->fields = n;
		return;
	}
	h->name = n;
	h->name_len = (size_t)(q - n);
	h->fields = skip_spaces(q + 1);
}

static int parse_header(const char *line, struct line_hdr *h)
{
	const char *after;
	const char *tsp;
	size_t e;

	memset(h, 0, sizeof(*h));
	h->cpu = -1;
	h->tgid = -1;
	tsp = find_ts(line, &h->ts, &h->raw, &after);
	if (!tsp)
		return -1;
	e = (size_t)(tsp - line);
	if (parse_columns(line, &e, h) < 0 || parse_comm_pid(line, e, h) < 0)
		return -1;
	parse_name(after, h);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Non-event lines                                                      */

/* Skip a multi-file "name: " prefix when followed by what TAIL matches. */
static const char *after_prefix(const char *s, const char *tail)
{
	const char *c = strstr(s, ": ");

	if (c && !memchr(s, ' ', (size_t)(c - s)) && strncmp(skip_spaces(c + 2), tail,
								strlen(tail)) == 0)
		return skip_spaces(c + 2);
	return s;
}

/* "cpus=N" -> N, else -1 */
int64_t tx_cpus_line(const char *s)
{
	uint64_t v;
	const char *e;

	s = after_prefix(s, "cpus=");
	if (strncmp(s, "cpus=", 5) != 0 || parse_u64(s + 5, 10, &v, &e) < 0 || *skip_spaces(e))
		return -1;
	return v > 100000 ? -1 : (int64_t)v;
}

/* "CPU:3 [LOST 12 EVENTS]" (ftrace) or "CPU:3 [12 EVENTS DROPPED]"; the
 * number of lost events, 0 if none is printed, -1 if not such a line. */
int64_t tx_lost_line(const char *s)
{
	const char *b;
	uint64_t v = 0;

	s = after_prefix(s, "CPU:");
	if (strncmp(s, "CPU:", 4) != 0 || !(b = strchr(s, '[')) ||
	    (!strstr(b, "LOST") && !strstr(b, "DROPPED")))
		return -1;
	for (b++; *b && *b != ']' && !is_digit(*b); b++)
		;
	if (is_digit(*b))
		parse_u64(b, 10, &v, NULL);
	return v > INT64_MAX ? 0 : (int64_t)v;
}

bool tx_meta_line(const char *s)
{
	uint64_t v;
	const char *e;

	if (s[0] == '#' || tx_cpus_line(s) >= 0 || strncmp(s, "version = ", 10) == 0)
		return true;
	/* trace-cmd: "CPU 3 is empty", "CPU0 data recorded at offset=..." */
	s = after_prefix(s, "CPU");
	if (strncmp(s, "CPU", 3) == 0 && parse_u64(skip_spaces(s + 3), 10, &v, &e) == 0 &&
	    (strcmp(e, " is empty") == 0 || strncmp(e, " data recorded", 14) == 0))
		return true;
	return false;
}

enum line_kind tx_classify(const char *text, struct line_hdr *h)
{
	const char *s = skip_spaces(text);

	if (*s == '\0')
		return LINE_EMPTY;
	if (*s == '#')
		return LINE_META;
	if (parse_header(text, h) == 0)
		return LINE_EVENT;
	if (tx_meta_line(s))
		return LINE_META;
	return tx_lost_line(s) >= 0 ? LINE_LOST : LINE_BAD;
}

