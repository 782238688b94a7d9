/*
 * main.c - kvmscope: see inside KVM guests from the host.
 *
 * Dispatches "kvmscope <command> ..." to cmd_<command>() (one file each).
 * "kvmscope help COMMAND" is "kvmscope COMMAND --help".
 */
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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

/* Large perf.data inputs are read through a mapping: a file cut short
 * while being read makes the next access fault.  Say so, in one line. */
static void on_sigbus(int sig)
{
	static const char msg[] = "kvmscope: an input file changed while being read "
				  "(truncated?): cannot read it\n";

	ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);

	(void)sig;
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

int main(int argc, char **argv)
{
	const struct command *c;

	signal(SIGBUS, on_sigbus);
	atexit(check_stdout);

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
		return c ? c->fn(2, help_argv) : not_a_command(argv[2]);
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
	return c ? c->fn(argc - 1, argv + 1) : not_a_command(argv[1]);
}
