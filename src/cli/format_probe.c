/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * format_probe.c - the command line's format probe (kvmscope/format_probe.h):
 * event formats are parsed by libtraceevent in a helper process first, so
 * that one which crashes it kills the helper, not kvmscope.  main() sets it
 * in the run's library context with ks_format_probe_set(); test and fuzz
 * programs that read damaged files link it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "format_probe.h"
#include "util/hashmap.h"

#define fmt_ref ks_source_format

/* ---- formats already checked in a child ----
 *
 * A process often meets the same formats again (host and guest traces of one
 * kernel, files of one machine, a fuzzer's mutations of one file): a format
 * that a child parsed without dying, or that killed a child on its own, is
 * remembered by a 128-bit fingerprint of its system name and text, and is
 * not checked again.  The sets (ks_hmap tables of two-word keys, no values)
 * are bounded; a full one starts afresh. */
#define FP_MAX 8192 /* fingerprints in a set */

struct fingerprint {
	uint64_t a, b;
};

static struct ks_hmap safe_set, unsafe_set; /* made on first use */
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
	struct fingerprint fp = { 0xcbf29ce484222325ull, f->len };

	mix(&fp, f->system ? f->system : "", f->system ? strlen(f->system) + 1 : 1);
	mix(&fp, f->text, f->len);
	return fp;
}

static bool fp_known(const struct ks_hmap *set, struct fingerprint fp)
{
	const uint64_t key[2] = { fp.a, fp.b };
	bool found;

	pthread_mutex_lock(&fp_lock);
	found = set->kwords && ks_hmap_get_wide(set, key);
	pthread_mutex_unlock(&fp_lock);
	return found;
}

/* Add FP to SET (unless out of memory: the set is a cache). */
static void fp_remember(struct ks_hmap *set, struct fingerprint fp)
{
	const uint64_t key[2] = { fp.a, fp.b };
	bool created;

	pthread_mutex_lock(&fp_lock);
	if (!set->kwords)
		ks_hmap_init_wide(set, 2, 0);
	if (ks_hmap_len(set) >= FP_MAX)
		ks_hmap_free(set);
	ks_hmap_put_wide(set, key, &created);
	pthread_mutex_unlock(&fp_lock);
}

/* ---- the checking process ----
 *
 * libtraceevent's expression parser crashes on some syntax errors in a print
 * fmt ("" . REC->x) that no cheap check can rule out, so formats are parsed
 * in a helper process first: a format that kills it is not given to the
 * real tep.  The helper is forked once and kept (a fork of a large process
 * costs milliseconds here, a request through its socket microseconds); when
 * a format kills it, the next request forks a new one.  Requests: u64
 * length of the rest, u32 count, then per format u32 system length, system,
 * u64 text length, text, written and read in one piece (a few system calls
 * per request, not five per format); the reply is one byte once every
 * format was parsed (each batch in a fresh tep).  A helper that does not
 * answer within GUARD_TIMEOUT_MS is killed and the formats count as unsafe:
 * the limit is for a parse that never ends, so it is far above what a busy
 * machine needs for the largest real format sets (10 s was passed once on a
 * loaded 2-CPU machine by a 1.9 MB set, and the file's events then printed
 * differently). */
#define GUARD_TIMEOUT_MS 60000
#define GUARD_MAX_TEXT (64u << 20)
#define GUARD_MAX_REQUEST (1ull << 30)

static struct {
	pid_t pid;
	int fd;
	unsigned long starts;
} helper = { -1, -1, 0 };
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;


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

/* N bytes at *P (before END) into DST; advances *P. */
static bool take(const uint8_t **p, const uint8_t *end, void *dst, size_t n)
{
	if ((size_t)(end - *p) < n)
		return false;
	memcpy(dst, *p, n);
	*p += n;
	return true;
}

/* One request in the helper: parse every format into a fresh tep. */
static bool helper_serve_one(int fd)
{
	struct tep_handle *t;
	uint64_t len, tlen;
	uint32_t n, i, slen;
	uint8_t *req;
	const uint8_t *p, *end;
	char sys[256];
	bool ok = true;

	if (!io_full(fd, &len, 8, false) || len > GUARD_MAX_REQUEST || !(req = malloc(len ? len : 1)))
		return false;
	if (!io_full(fd, req, len, false)) {
		free(req);
		return false;
	}
	p = req;
	end = req + len;
	t = tep_alloc();
	ok = take(&p, end, &n, 4);
	for (i = 0; ok && i < n; i++) {
		ok = take(&p, end, &slen, 4) && slen < sizeof(sys) && take(&p, end, sys, slen) &&
		     take(&p, end, &tlen, 8) && tlen <= GUARD_MAX_TEXT && tlen <= (uint64_t)(end - p);
		if (!ok)
			break;
		sys[slen] = 0;
		if (t)
			ks_format_parse_checked(t, (const char *)p, tlen, sys);
		p += tlen;
	}
	if (t)
		tep_free(t);
	free(req);
	return ok && io_full(fd, "K", 1, true);
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

	if (devnull >= 0) {
		dup2(devnull, 2); /* a sanitizer report of a crash is noise */
		/* nor does it hold the caller's pipe or file open: a reader of
		 * kvmscope's output sees its end when kvmscope ends */
		dup2(devnull, 1);
	}
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

unsigned long cli_format_probe_starts(void)
{
	unsigned long n;

	pthread_mutex_lock(&helper_lock);
	n = helper.starts;
	pthread_mutex_unlock(&helper_lock);
	return n;
}

static void put(uint8_t **p, const void *src, size_t n)
{
	memcpy(*p, src, n);
	*p += n;
}

/* The request for the N formats F, in one piece (see above). */
static bool helper_request(const struct fmt_ref *f, size_t n)
{
	uint32_t count = (uint32_t)n, slen;
	uint64_t tlen, len = 4;
	struct pollfd pfd = { .fd = helper.fd, .events = POLLIN };
	uint8_t *req, *p;
	size_t i;
	char reply;
	bool sent;

	for (i = 0; i < n; i++) {
		const char *sys = f[i].system ? f[i].system : "";

		len += 4 + strnlen(sys, 255) + 8 + f[i].len;
	}
	if (len > GUARD_MAX_REQUEST || !(req = malloc(8 + len)))
		return false;
	p = req;
	put(&p, &len, 8);
	put(&p, &count, 4);
	for (i = 0; i < n; i++) {
		const char *sys = f[i].system ? f[i].system : "";

		slen = (uint32_t)strnlen(sys, 255);
		tlen = f[i].len;
		put(&p, &slen, 4);
		put(&p, sys, slen);
		put(&p, &tlen, 8);
		put(&p, f[i].text, f[i].len);
	}
	sent = io_full(helper.fd, req, 8 + len, true);
	free(req);
	if (!sent)
		return false;
	while (poll(&pfd, 1, GUARD_TIMEOUT_MS) < 0)
		if (errno != EINTR)
			return false;
	return (pfd.revents & POLLIN) && io_full(helper.fd, &reply, 1, false) && reply == 'K';
}

/* The probe (ks_format_probe_fn): do the N formats parse without killing
 * the helper?  Only those not seen
 * before are sent (a file differs from one seen before in few of its
 * formats, if any); the verdict is remembered when it is clear: all sent
 * formats passed, or the one sent killed the helper.  When no helper can be
 * started the cheap checks have to do. */
bool cli_format_probe(void *ctx, const struct fmt_ref *f, size_t n)
{
	struct fmt_ref *ask = NULL;  /* the formats not known to be safe */
	struct fingerprint *fp = NULL; /* of ASK[i] */
	size_t i, m = 0;
	bool ok = false;

	(void)ctx;
	for (i = 0; i < n; i++) {
		struct fingerprint this = format_fingerprint(&f[i]);

		if (f[i].len > GUARD_MAX_TEXT || fp_known(&unsafe_set, this))
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


void cli_format_probe_start(void)
{
	/* a failure is not one: the first question tries again */
	pthread_mutex_lock(&helper_lock);
	if (helper.pid < 0)
		helper_start();
	pthread_mutex_unlock(&helper_lock);
}
