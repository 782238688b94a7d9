/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * progress.c - when and from what the reading commands draw their progress
 * line (kvmscope/progress.h draws it): standard error a terminal, no -q,
 * and for a command that writes as it reads (dump, merge, stat --than)
 * standard output not a terminal as well, where the line would mix with
 * the output.  The position is the inputs' (ks_source_position).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"

void cli_progress_init(struct ks_progress *p, const char *cmd, bool quiet, bool streams)
{
	const char *d = getenv("KVMSCOPE_PROGRESS_DELAY");
	double delay = 1.0, v;
	bool on = !quiet && isatty(STDERR_FILENO) && !(streams && isatty(STDOUT_FILENO));

	/* tests lower the second to see the line on a small input */
	if (d && ks_parse_seconds(d, strlen(d), &v) == 0 && v < 3600)
		delay = v;
	ks_progress_init(p, on ? stderr : NULL, cmd, delay);
}

void cli_progress_sources(struct ks_progress *p, struct ks_source *const *srcs, int n)
{
	uint64_t done = 0, total = 0, events = 0, d, t;
	int i;

	for (i = 0; i < n; i++) {
		if (!srcs[i])
			continue;
		ks_source_position(srcs[i], &d, &t);
		done += d;
		total += t;
		events += ks_source_stats(srcs[i])->records;
	}
	ks_progress_show(p, done, total, events);
}

void cli_progress_merge(struct ks_progress *p, const struct ks_merge *m)
{
	struct ks_source *srcs[64];
	int i, n = ks_merge_nr_inputs(m);

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		srcs[i] = ks_merge_source(m, i);
	cli_progress_sources(p, srcs, n);
}
