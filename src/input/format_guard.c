/*
 * format_guard.c - checks in front of libtraceevent's parsers (see .h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

struct fmt_ref {
	const char *text;
	size_t size;
	const char *sys;
};

/* ---- formats already checked in a child ----
 *
 * A process often meets the same formats again (host and guest traces of one
 * kernel, files of one machine, a fuzzer's mutations of one file): a format
 * that a child parsed without dying, or that killed a child on its own, is
 * remembered by a 128-bit fingerprint of its system name and text, and is
 * not checked again.  The sets are bounded; a full one starts afresh. */
#define FP_SLOTS 16384 /* a power of two; at most half full */

struct fingerprint {
	uint64_t a, b;
};

struct fp_set {
	struct fingerprint slot[FP_SLOTS];
	size_t used;
};

static struct fp_set safe_set, unsafe_set;
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;

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

static struct fingerprint format_fingerprint(const struct fmt_ref *f)
{
	struct fingerprint fp = { 0xcbf29ce484222325ull, f->size };

	mix(&fp, f->sys ? f->sys : "", f->sys ? strlen(f->sys) + 1 : 1);
	mix(&fp, f->text, f->size);
	if (!fp.a && !fp.b) /* 0,0 marks an empty slot */
		fp.a = 1;
	return fp;
}

/* Find FP's slot in SET: its own, or the empty one where it would go. */
static size_t fp_slot(const struct fp_set *set, struct fingerprint fp)
{
	size_t j = (size_t)fp.a & (FP_SLOTS - 1);

	while ((set->slot[j].a || set->slot[j].b) &&
	       (set->slot[j].a != fp.a || set->slot[j].b != fp.b))
		j = (j + 1) & (FP_SLOTS - 1);
	return j;
}

static bool fp_known(const struct fp_set *set, struct fingerprint fp)
{
	bool found;
	size_t j;

	pthread_mutex_lock(&fp_lock);
	j = fp_slot(set, fp);
	found = set->slot[j].a == fp.a && set->slot[j].b == fp.b;
	pthread_mutex_unlock(&fp_lock);
	return found;
}

static void fp_remember(struct fp_set *set, struct fingerprint fp)
{
	size_t j;

	pthread_mutex_lock(&fp_lock);
	if (set->used >= FP_SLOTS / 2)
		memset(set, 0, sizeof(*set));
	j = fp_slot(set, fp);
	if (set->slot[j].a != fp.a || set->slot[j].b != fp.b) {
		set->slot[j] = fp;
		set->used++;
	}
	pthread_mutex_unlock(&fp_lock);
}

/* ---- the checking process ----
 *
 * libtraceevent's expression parser crashes on some syntax errors in a print
 * fmt ("" . REC->x) that no cheap check can rule out, so formats are parsed
 * in a helper process first: a format that kills it is not given to the
 * real tep.  The helper is forked once and kept (a fork of a large process
 * costs milliseconds here, a request through its socket microseconds); when
 * a format kills it, the next request forks a new one.  Requests: u32
 * count, then per format u32 system length, system, u64 text length, text;
 * the reply is one byte once every format was parsed (each batch in a fresh
 * tep).  A helper that does not answer within GUARD_TIMEOUT_MS is killed and
 * the formats count as unsafe. */
#define GUARD_TIMEOUT_MS 10000
#define GUARD_MAX_TEXT (64u << 20)

static struct {
	pid_t pid;
	int fd;
	unsigned long starts;
} helper = { -1, -1, 0 };
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;

static int guarded_parse(struct tep_handle *tep, const char *buf, size_t size, const char *sys,
			 bool probe);

static bool io_full(int fd, void *buf, size_t len, bool writing)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* One request in the helper: parse every format into a fresh tep. */
static bool helper_serve_one(int fd)
{
	struct tep_handle *t;
	uint32_t n, i, slen;
	uint64_t tlen;
	char sys[256], *text;

	if (!io_full(fd, &n, 4, false))
		return false;
	t = tep_alloc();
	for (i = 0; i < n; i++) {
		if (!io_full(fd, &slen, 4, false) || slen >= sizeof(sys) ||
		    !io_full(fd, sys, slen, false) || !io_full(fd, &tlen, 8, false) ||
		    tlen > GUARD_MAX_TEXT || !(text = malloc(tlen + 1)))
			return false;
		sys[slen] = 0;
		if (!io_full(fd, text, tlen, false))
			return false;
		if (t)
			guarded_parse(t, text, tlen, sys, false);
		free(text);
	}
	if (t)
		tep_free(t);
	return io_full(fd, "K", 1, true);
}

/* Set by sanitizer runtimes (a weak reference: NULL in a plain build). */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void helper_die(void)
{
	_exit(1);
}

/* The helper's crashes are its job: they leave no core file, and no
 * inherited crash handler runs (a fuzzer's would save the input as a crash
 * artifact, though the parent survives it). */
static void helper_die_quietly(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	int devnull = open("/dev/null", O_WRONLY);
	size_t i;

	if (devnull >= 0)
		dup2(devnull, 2); /* a sanitizer report of a crash is noise */
	prctl(PR_SET_DUMPABLE, 0);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(helper_die);
}

static void helper_main(int fd)
{
	helper_die_quietly();
	signal(SIGINT, SIG_IGN); /* Ctrl-C is for the parent to handle */
	while (helper_serve_one(fd))
		;
	_exit(0);
}

static void helper_stop(void)
{
	if (helper.fd >= 0)
		close(helper.fd);
	if (helper.pid > 0) {
		kill(helper.pid, SIGKILL);
		while (waitpid(helper.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	helper.fd = -1;
	helper.pid = -1;
}

static bool helper_start(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return false;
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1]);
	}
	close(sv[1]);
	helper.pid = pid;
	helper.fd = sv[0];
	helper.starts++;
	return true;
}

unsigned long ks_guard_helper_starts(void)
{
	unsigned long n;

	pthread_mutex_lock(&helper_lock);
	n = helper.starts;
	pthread_mutex_unlock(&helper_lock);
	return n;
}

static bool helper_request(const struct fmt_ref *f, size_t n)
{
	uint32_t count = (uint32_t)n, slen;
	uint64_t tlen;
	struct pollfd pfd = { .fd = helper.fd, .events = POLLIN };
	char reply;

	if (!io_full(helper.fd, &count, 4, true))
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *sys = f[i].sys ? f[i].sys : "";

		slen = (uint32_t)strnlen(sys, 255);
		tlen = f[i].size;
		if (!io_full(helper.fd, &slen, 4, true) || !io_full(helper.fd, (void *)sys, slen, true) ||
		    !io_full(helper.fd, &tlen, 8, true) ||
		    !io_full(helper.fd, (void *)f[i].text, f[i].size, true))
			return false;
	}
	while (poll(&pfd, 1, GUARD_TIMEOUT_MS) < 0)
		if (errno != EINTR)
			return false;
	return (pfd.revents & POLLIN) && io_full(helper.fd, &reply, 1, false) && reply == 'K';
}

/* Do the N formats parse without killing the helper?  Only those not seen
 * before are sent (a file differs from one seen before in few of its
 * formats, if any); the verdict is remembered when it is clear: all sent
 * formats passed, or the one sent killed the helper.  When no helper can be
 * started the cheap checks have to do. */
static bool formats_parse_safely(const struct fmt_ref *f, size_t n)
{
	struct fmt_ref *ask = NULL;  /* the formats not known to be safe */
	struct fingerprint *fp = NULL; /* of ASK[i] */
	size_t i, m = 0;
	bool ok = false;

	for (i = 0; i < n; i++) {
		struct fingerprint this = format_fingerprint(&f[i]);

		if (f[i].size > GUARD_MAX_TEXT || fp_known(&unsafe_set, this))
			goto out;
		if (fp_known(&safe_set, this))
			continue;
		if (!ask && (!(ask = malloc(n * sizeof(*ask))) || !(fp = malloc(n * sizeof(*fp)))))
			goto out; /* each format is then probed on its own */
		fp[m] = this;
		ask[m++] = f[i];
	}
	pthread_mutex_lock(&helper_lock);
	if (!m || (helper.pid < 0 && !helper_start())) {
		pthread_mutex_unlock(&helper_lock);
		ok = true;
		goto out;
	}
	ok = helper_request(ask, m);
	if (!ok)
		helper_stop(); /* dead, hung or out of step: a new one next time */
	pthread_mutex_unlock(&helper_lock);
	for (i = 0; ok && i < m; i++)
		fp_remember(&safe_set, fp[i]);
	if (!ok && m == 1)
		fp_remember(&unsafe_set, fp[0]);
out:
	free(ask);
	free(fp);
	return ok;
}

static bool parses_safely(const char *buf, size_t size, const char *sys)
{
	struct fmt_ref f = { buf, size, sys };

	return formats_parse_safely(&f, 1);
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
	if ((!fmt || print_fmt_ok(fmt + 10, end, &nm)) && (!probe || parses_safely(buf, size, sys)))
		return tep_parse_event(tep, buf, size, sys);
	if (!fmt)
		return -1; /* no print fmt to drop: its fields kill the parser */
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


struct ks_guard_batch {
	struct fmt_ref *f; /* text and sys owned */
	size_t n, cap;
};

struct ks_guard_batch *ks_guard_batch_new(void)
{
	return calloc(1, sizeof(struct ks_guard_batch));
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
	b->f[b->n++] = (struct fmt_ref){ text, size, name };
	return 0;
}

static void batch_clear(struct ks_guard_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free((char *)b->f[i].text);
		free((char *)b->f[i].sys);
	}
	b->n = 0;
}

void ks_guard_batch_parse(struct ks_guard_batch *b, struct tep_handle *tep)
{
	/* all of B's formats through the cheap checks in one request */
	bool safe = b->n && formats_parse_safely(b->f, b->n);

	for (size_t i = 0; i < b->n; i++)
		guarded_parse(tep, b->f[i].text, b->f[i].size, b->f[i].sys, !safe);
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
