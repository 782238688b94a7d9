/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - kvmscope: see inside KVM guests from the host.
 *
 * Dispatches "kvmscope <command> ..." to cmd_<command>() (one file each).
 * "kvmscope help COMMAND" is "kvmscope COMMAND --help".
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "format_probe.h"
#include "kvmscope/ctx.h"
#include "kvmscope/limits.h"
#include "util/hex.h"

/* Set by the Makefile: git describe in a checkout, else the VERSION file. */
#ifndef KS_VERSION
#define KS_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "stat", cmd_stat, "exit, MMIO, I/O port and MSR statistics per reason, VM and vCPU" },
	{ "dump", cmd_dump, "print the events of any input in trace-cmd report's layout" },
	{ "convert", cmd_convert, "write any input as a trace.dat file (v6 or v7, zstd, zlib or none)" },
	{ "record", cmd_record, "trace a live KVM host into a trace.dat (tracefs, private instance)" },
	{ "top", cmd_top, "live exits per VM, vCPU and reason (or replay a file)" },
	{ "report", cmd_report, "guest profile: which guest code runs and which causes exits" },
	{ "merge", cmd_merge, "host and guest traces merged on the host's clock" },
	{ "timeline", cmd_timeline, "vCPU states over time; Perfetto/Chrome JSON and HTML" },
	{ "sample", cmd_sample, "guest call chains sampled live over QEMU's gdbstub" },
	{ "unwind", cmd_unwind, "every vCPU's stack from a QEMU guest memory dump" },
	{ "pmu", cmd_pmu, "vPMU: who holds the host's counters; PMU MSR traffic of guests" },
	{ "exporter", cmd_exporter, "serve exit metrics over HTTP for Prometheus (live or replayed)" },
	{ NULL, NULL, NULL },
};

/* Set by die() and usage_error(): the run failed and said why already. */
static bool dying;

_Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	dying = true;
	fflush(stdout);
	fputs("kvmscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	fputs("kvmscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

_Noreturn void usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	dying = true;
	fprintf(stderr, "kvmscope %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'kvmscope %s --help'.\n", cmd);
	exit(2);
}

static void usage(FILE *out)
{
	const struct command *c;

	fputs("usage: kvmscope <command> [options]\n"
	      "       kvmscope help <command>\n"
	      "       kvmscope --version\n\n"
	      "See inside KVM virtual machines from the host.\n\n"
	      "Commands:\n", out);
	for (c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->help);
	fputs("\nRun 'kvmscope <command> --help' (or 'kvmscope help <command>') for a\n"
	      "command's options; 'man kvmscope' and 'man kvmscope-<command>' for details.\n"
	      "Exit status: 0 success, 1 error (input, output, system), 2 usage error.\n", out);
}

static const struct command *find_command(const char *name)
{
	const struct command *c;

	for (c = commands; c->name; c++)
		if (!strcmp(name, c->name))
			return c;
	return NULL;
}

static int not_a_command(const char *name)
{
	fprintf(stderr, "kvmscope: '%s' is not a kvmscope command; see 'kvmscope --help'.\n", name);
	return 2;
}

/* Signal-safe text helpers for on_sigbus(). */
static size_t put_str(char *dst, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		dst[at++] = *s++;
	return at;
}

static size_t put_u64(char *dst, size_t at, size_t cap, uint64_t v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 24);
	while (n && at + 1 < cap)
		dst[at++] = d[--n];
	return at;
}

static uint64_t hex_field(const char **p)
{
	uint64_t v = 0;

	for (int d; (d = ks_hexval(**p)) >= 0; (*p)++)
		v = v * 16 + (uint64_t)d;
	return v;
}

/* The file mapped at ADDR and the offset in it, from a line of
 * /proc/self/maps: "start-end perms offset dev inode   path". */
static int maps_line(const char *line, uintptr_t addr, const char **path, uint64_t *off)
{
	const char *p = line;
	uint64_t start, end, pgoff;
	int field;

	start = hex_field(&p);
	if (*p++ != '-')
		return 0;
	end = hex_field(&p);
	if (addr < start || addr >= end)
		return 0;
	while (*p == ' ')
		p++;
	while (*p && *p != ' ') /* perms */
		p++;
	while (*p == ' ')
		p++;
	pgoff = hex_field(&p);
	for (field = 0; field < 2; field++) { /* dev, inode */
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	if (*p != '/')
		return 0;
	*path = p;
	*off = pgoff + (addr - start);
	return 1;
}

/* Large perf.data inputs are read through a mapping: a file cut short
 * while being read makes the next access fault.  Say so in one line naming
 * the file and the offset, found in /proc/self/maps by the faulting address
 * (open, read and write are async-signal-safe; nothing here allocates). */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	static char maps[8192], msg[8192 + 256];
	static const char tail[] = ": the file was truncated while being read (by another "
				   "process?): cannot read it\n";
	size_t len = 0, m = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	const char *path = NULL;
	uint64_t off = 0;

	(void)sig;
	(void)uc;
	while (fd >= 0 && !path && (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0) {
		char *line = maps, *nl;

		len += (size_t)n;
		maps[len] = '\0';
		while ((nl = memchr(line, '\n', len - (size_t)(line - maps)))) {
			*nl = '\0';
			if (maps_line(line, (uintptr_t)si->si_addr, &path, &off))
				break;
			line = nl + 1;
		}
		if (path)
			break;
		/* keep the unfinished line (a line longer than the buffer is dropped) */
		len -= (size_t)(line - maps);
		if (len >= sizeof(maps) - 1)
			len = 0;
		memmove(maps, line, len);
	}
	if (fd >= 0)
		close(fd);
	m = put_str(msg, m, sizeof(msg), "kvmscope: ");
	if (path) {
		m = put_str(msg, m, sizeof(msg), path);
		m = put_str(msg, m, sizeof(msg), ": offset ");
		m = put_u64(msg, m, sizeof(msg), off);
	} else {
		m = put_str(msg, m, sizeof(msg), "an input file");
	}
	m = put_str(msg, m, sizeof(msg), tail);
	n = write(STDERR_FILENO, msg, m);
	(void)n; /* nothing more to say if stderr is gone */
	_exit(1);
}

/* Every command's standard output is checked once, at exit (also after
 * --help's exit(0)): a full disk or a broken file behind stdout is an error
 * (exit 1 with one line), not a silent success.  After die() the run has
 * failed already and said why. */
static void check_stdout(void)
{
	struct ks_error err;

	if (ks_stdout_close(&err) < 0 && !dying) {
		fprintf(stderr, "kvmscope: %s\n", err.msg);
		_exit(1);
	}
}

/* The run's library context: every input is opened with it, so that the
 * files of one setup share their parsed formats. */
static struct ks_ctx *run_ctx;

struct ks_ctx *cli_ctx(void)
{
	/* the context is asked for to open inputs, whose formats the probe's
	 * helper parses: it is forked now, while the process is small (a
	 * fork copies the page tables, and every page written after it is
	 * copied once more, in the parent as in the helper) */
	cli_format_probe_start();
	return run_ctx;
}

/* The run's context without starting the format probe's helper: for
 * what opens no input (QMP connections). */
struct ks_ctx *cli_peer_ctx(void)
{
	return run_ctx;
}

/* The library's waits on peers end on the first SIGINT / SIGTERM / SIGHUP
 * caught (cli_live_catch_signals). */
static bool signal_cancels(void *arg)
{
	(void)arg;
	return cli_live_interrupted();
}

/* The command C with ARGV, in the run's context. */
static int run(const struct command *c, int argc, char **argv)
{
	int r;

	run_ctx = ks_ctx_new();
	if (!run_ctx)
		die("out of memory");
	/* event formats of damaged files are tried in a helper process first */
	ks_format_probe_set(run_ctx, cli_format_probe, NULL);
	ks_ctx_set_cancel(run_ctx, signal_cancels, NULL);
	r = c->fn(argc, argv);
	ks_ctx_free(run_ctx);
	run_ctx = NULL;
	return r;
}

/* libbpf prints its warnings to stderr unless told otherwise, and that
 * hook is process-wide, so the program sets it, not the library: silent.
 * The BPF engine's errors say why in one line of their own (the
 * verifier's log is kept per program, engine_bpf.c). */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *c;

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	atexit(check_stdout);
	libbpf_set_print(libbpf_quiet);

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* "help CMD": the command's own --help text, word for word. */
		char *help_argv[] = { argv[2], (char *)"--help", NULL };

		if (argc > 3) {
			fputs("usage: kvmscope help <command>\n", stderr);
			return 2;
		}
		c = find_command(argv[2]);
		return c ? run(c, 2, help_argv) : not_a_command(argv[2]);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("kvmscope " KS_VERSION);
		return 0;
	}
	c = find_command(argv[1]);
	return c ? run(c, argc - 1, argv + 1) : not_a_command(argv[1]);
}
