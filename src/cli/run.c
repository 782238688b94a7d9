/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * run.c - what every command's run shares: its library context (cli_ctx),
 * its error and usage exits (die, usage_error, warnx_) and the check of
 * standard output at exit.  main.c dispatches to a command through
 * cli_run(); the commands call back only here, never into main.c, so that
 * the arrows between the command files point one way.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "format_probe.h"
#include "kvmscope/ctx.h"

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

int cli_run(int (*fn)(int argc, char **argv), int argc, char **argv)
{
	int r;

	run_ctx = ks_ctx_new();
	if (!run_ctx)
		die("out of memory");
	/* event formats of damaged files are tried in a helper process first */
	ks_format_probe_set(run_ctx, cli_format_probe, NULL);
	ks_ctx_set_cancel(run_ctx, signal_cancels, NULL);
	r = fn(argc, argv);
	ks_ctx_free(run_ctx);
	run_ctx = NULL;
	return r;
}

void cli_check_stdout_at_exit(void)
{
	atexit(check_stdout);
}
