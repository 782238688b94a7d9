/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inputs.c - input files on the command line: "-" for standard input, and
 * what an input holds when a command's answer is empty (census.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/census.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"

/* The most standard input spooled to a temporary file, unless
 * KVMSCOPE_SPOOL_MAX says otherwise (a size: 8G, 500M). */
#define SPOOL_MAX_DEFAULT (4ull << 30)

static uint64_t spool_max(void)
{
	const char *e = getenv("KVMSCOPE_SPOOL_MAX");
	uint64_t v;

	if (!e || !*e)
		return SPOOL_MAX_DEFAULT;
	if (ks_parse_count(e, strlen(e), true, &v) < 0 || !v) {
		warnx_("KVMSCOPE_SPOOL_MAX='%s': expected a positive size with an optional K, M "
		       "or G", e);
		exit(2);
	}
	return v;
}

/* An unlinked temporary file in $TMPDIR (else /tmp). */
static int spool_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		goto out;
	/* a file system without O_TMPFILE: a named file, unlinked at once */
	snprintf(path, sizeof(path), "%s/kvmscope-stdin.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
out:
	if (fd < 0)
		die("-: cannot spool standard input to a temporary file in %s: %s%s", dir,
		    strerror(errno), getenv("TMPDIR") ? "" : " (set TMPDIR to use another directory)");
	return fd;
}

static void write_all(int fd, const char *buf, size_t n, const char *dir)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("-: spooling standard input to %s: %s", dir, strerror(errno));
		buf += w;
		n -= (size_t)w;
	}
}

/* Up to SIZE bytes of standard input into BUF (fewer only at its end). */
static size_t read_full(char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(STDIN_FILENO, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("-: standard input: %s", strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* The readers detect the type and read by offset (pread, mmap): a pipe is
 * spooled to an unlinked temporary file first (in $TMPDIR), which then
 * becomes standard input, and "/dev/stdin" opens it again as often as a
 * reader needs.  Its head is checked first, as opening a file checks it
 * (ks_source_check_head: what is not a recording is refused before a byte
 * is written), and the spool stops at KVMSCOPE_SPOOL_MAX bytes. */
const char *cli_input(const char *path)
{
	static bool spooled;
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	size_t head_size = ks_source_head_size(), got;
	uint64_t max, total;
	struct ks_error err;
	struct stat st;
	char *buf;
	int fd;

	if (!path || strcmp(path, "-"))
		return path;
	if (spooled)
		return "/dev/stdin";
	if (fstat(STDIN_FILENO, &st) < 0)
		die("-: standard input: %s", strerror(errno));
	if (isatty(STDIN_FILENO))
		die("-: standard input is a terminal; pipe a recording into it or name a file");
	if (S_ISREG(st.st_mode) && lseek(STDIN_FILENO, 0, SEEK_CUR) == 0)
		return spooled = true, "/dev/stdin";
	max = spool_max();
	if (!(buf = malloc(head_size)))
		die("-: out of memory");
	got = read_full(buf, head_size);
	/* named as the reader would name it: "/dev/stdin: offset N: ..." */
	if (ks_source_check_head("/dev/stdin", buf, got, got == head_size, &err) < 0)
		die("%s", err.msg);
	fd = spool_file();
	for (total = 0; got; got = read_full(buf, head_size)) {
		if (got > max - total)
			die("/dev/stdin: offset %" PRIu64 ": standard input is larger than kvmscope spools to "
			    "a temporary file (limit %" PRIu64 " bytes; raise it with "
			    "KVMSCOPE_SPOOL_MAX=SIZE, or save the data to a file and name that)",
			    max, max);
		write_all(fd, buf, got, dir);
		total += got;
	}
	free(buf);
	if (dup2(fd, STDIN_FILENO) < 0 || lseek(STDIN_FILENO, 0, SEEK_SET) < 0)
		die("-: spooling standard input: %s", strerror(errno));
	close(fd); /* standard input keeps the file open */
	spooled = true;
	return "/dev/stdin";
}

int cli_source_open(struct ks_source **out, const char *path, unsigned flags,
		    const struct ks_limits *lim, struct ks_error *err)
{
	struct ks_source_opts o = { .flags = flags, .limits = lim, .ctx = cli_ctx() };

	return ks_source_open_opts(out, path, &o, err);
}

void cli_census(const char *path, const char *arch, struct ks_census *c)
{
	struct ks_source *src;
	struct ks_error err;

	/* the census names no task */
	if (cli_source_open(&src, path, KS_OPEN_NO_SYMBOLS | KS_OPEN_COMMS_WHEN_ASKED, NULL,
			    &err) < 0 ||
	    ks_census(src, arch, c, &err) < 0)
		die("%s", err.msg);
	ks_source_close(src);
}

/* The line of cli_require_kvm() and cli_note_no_kvm() into BUF. */
static void no_kvm_line(char *buf, size_t size, const char *path, const struct ks_census *c,
			const char *what)
{
	/* a recording of KVM events on a host where no guest ran: no advice
	 * to record what was recorded */
	if (!c->events)
		snprintf(buf, size, "%s: no KVM events%s%s: the recording holds no events at all",
			 path, what ? " " : "", what ? what : "");
	else if (c->kvm_defined)
		snprintf(buf, size, "%s: no KVM events%s%s: none happened while it was recorded "
			 "(the file holds %llu events of other tracepoints)", path,
			 what ? " " : "", what ? what : "", (unsigned long long)c->events);
	else
		snprintf(buf, size,
			 "%s: no KVM events%s%s: the file holds %llu events of other tracepoints; "
			 "record kvm:* events ('perf kvm stat record', 'trace-cmd record -e kvm')",
			 path, what ? " " : "", what ? what : "", (unsigned long long)c->events);
}

void cli_require_kvm(const char *path, const struct ks_census *c, const char *what)
{
	char msg[1024];

	if (c->kvm_events)
		return;
	no_kvm_line(msg, sizeof(msg), path, c, what);
	die("%s", msg);
}

bool cli_note_no_kvm(const char *path, const struct ks_census *c, const char *what)
{
	char msg[1024];

	if (c->kvm_events)
		return false;
	no_kvm_line(msg, sizeof(msg), path, c, what);
	warnx_("%s", msg);
	return true;
}

/* "no WANT; this file has ..." into BUF, or the no-KVM-events line when
 * PATH has no KVM events. */
static void missing(const char *path, const char *want, char *buf, size_t size)
{
	static struct ks_census c; /* large: not on the stack */
	char have[512];

	cli_census(path, NULL, &c);
	if (!c.kvm_events) {
		no_kvm_line(buf, size, path, &c, NULL);
		return;
	}
	ks_census_classes(&c, have, sizeof(have));
	snprintf(buf, size, "%s: no %s; this file has %s", path, want,
		 have[0] ? have : "other KVM events only");
}

void cli_explain_missing(const char *path, const char *want)
{
	char msg[1024];

	missing(path, want, msg, sizeof(msg));
	die("%s", msg);
}

void cli_note_missing(const char *path, const char *want)
{
	char msg[1024];

	missing(path, want, msg, sizeof(msg));
	warnx_("%s", msg);
}

void cli_check_pids(const int32_t *pids, int n)
{
	char path[64];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pids[i]);
		if (access(path, F_OK) < 0)
			die("--pid %d: no such process", (int)pids[i]);
	}
}
