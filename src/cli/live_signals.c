/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live_signals.c - the command line's side of live tracing: SIGINT /
 * SIGTERM / SIGHUP set a flag that the loops of record and top check (they
 * wake at least every few hundred milliseconds, so a signal also ends
 * through ks_live_destroy()), and every tracefs instance the library
 * creates is listed here (ks_live_opts.track) so that an atexit() handler
 * removes it on die() and exit() paths and a second signal removes its
 * directory before the process ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/live.h"

#define MAX_LIVE 8
static struct ks_live *registry[MAX_LIVE];
static char registry_paths[MAX_LIVE][512]; /* for the signal handler's rmdir */
static volatile sig_atomic_t got_signal;
static bool atexit_done;

static void remove_all_at_exit(void)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (registry[i])
			ks_live_destroy(registry[i]); /* calls cli_live_track(.., false) */
}

int cli_live_track(void *ctx, struct ks_live *l, const char *dir, bool add)
{
	int i;

	(void)ctx;
	if (!add) {
		for (i = 0; i < MAX_LIVE; i++)
			if (registry[i] == l) {
				registry[i] = NULL;
				registry_paths[i][0] = 0;
			}
		return 0;
	}
	if (!atexit_done) {
		atexit(remove_all_at_exit);
		atexit_done = true;
	}
	if (strlen(dir) >= sizeof(registry_paths[0]))
		return -1; /* its removal by a signal could not be promised */
	for (i = 0; i < MAX_LIVE; i++) {
		if (registry[i])
			continue;
		snprintf(registry_paths[i], sizeof(registry_paths[i]), "%s", dir);
		registry[i] = l;
		return 0;
	}
	return -1; /* the caller fails: never an instance nobody removes */
}

/* The handlers that were in place before cli_live_catch_signals(), called
 * after a second signal (e.g. the command line's removal of unfinished
 * output files). */
static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction previous[3];

static void on_signal(int sig)
{
	size_t i;
	int fd;

	if (got_signal) {
		/* second signal: the user insists.  The instance's directory
		 * cannot be removed while its trace_pipe_raw files are open:
		 * close every descriptor but the standard ones (the process
		 * ends here anyway), then remove it. */
		for (fd = 3; fd < 65536; fd++)
			if (close(fd) < 0 && errno == EBADF && fd > 4096)
				break;
		for (i = 0; i < MAX_LIVE; i++)
			if (registry_paths[i][0])
				rmdir(registry_paths[i]);
		for (i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
			if (caught[i] == sig && previous[i].sa_handler != SIG_DFL &&
			    previous[i].sa_handler != SIG_IGN && !(previous[i].sa_flags & SA_SIGINFO))
				previous[i].sa_handler(sig);
		_exit(128 + sig);
	}
	got_signal = sig;
}

void cli_live_catch_signals(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction old;
		if (sigaction(caught[i], &sa, &old) == 0 && old.sa_handler != on_signal)
			previous[i] = old;
	}
	signal(SIGPIPE, SIG_IGN);
}

bool cli_live_interrupted(void)
{
	return got_signal != 0;
}

int cli_live_signal(void)
{
	return got_signal;
}
