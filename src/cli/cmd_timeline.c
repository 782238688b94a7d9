/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_timeline.c - kvmscope timeline: vCPU states over time from a host
 * trace (and its guests' traces), as a text summary, Perfetto/Chrome JSON
 * and a self-contained HTML page.
 *
 *	kvmscope timeline [--json FILE] [--html FILE] [--perfetto FILE] [--tsc-offset V=OFF]...
 *	                  [--max-guest-events N] [--no-sync] -i HOST [-i GUEST[@NAME]]...
 *
 * ks_merge (merge.h) gives the stream, ks_timeline (timeline.h) the states.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/census.h"
#include "kvmscope/timeline.h"

static const struct opt_cmd timeline_cmd = {
	.name = "timeline",
	.synopsis = "[--json FILE] [--html FILE] [--perfetto FILE] [--tsc-offset V=OFF]...\n"
		    "                         [--max-guest-events N] [--no-sync] [--time START,END]\n"
		    "                         [--quiet] -i HOST [-i GUEST[@NAME]]...",
	.intro = "Compute each vCPU's state over time (RUNNING, IDLE, HOST with the exit\n"
		 "reason, HALTED, PREEMPTED, BLOCKED) from the host's kvm_entry, kvm_exit and\n"
		 "sched_switch events, with the guest tasks of the guest traces (moved to\n"
		 "host time as `kvmscope merge` does).  Prints a summary per vCPU and the\n"
		 "exit cost per guest task.\n",
	.outro = "--time is in the host trace's clock (guest events are compared after their\n"
		 "move to host time); percentages are of the host trace's span.\n"
		 "See kvmscope-timeline(1).\n",
};

/* Written to a temporary file renamed to PATH when complete (outfile.h). */
static void write_file(const char *path, const char *const *inputs, const struct ks_timeline *tl,
		       int kind)
{
	struct ks_outfile *of = cli_output_open(path, inputs, 0);
	struct ks_error err;
	int rc = 0;

	if (kind == 1)
		rc = ks_timeline_write_html(tl, ks_outfile_stream(of));
	else if (kind == 2)
		rc = ks_timeline_write_perfetto(tl, ks_outfile_stream(of));
	else
		ks_timeline_write_json(tl, ks_outfile_stream(of));
	/* the timeline's lists may be read back from its temporary file */
	if (ks_timeline_error(tl, &err) < 0)
		die("%s: %s", path, err.msg);
	if (rc < 0)
		die("out of memory");
	cli_output_commit(of);
}

struct timeline_args {
	struct merge_inputs in;
	const char *out[3];     /* --json, --html, --perfetto (write_file's kinds) */
	long long max_ev;
	struct time_window time;
	bool quiet;
	int first;              /* argv index of the first non-option */
};

/* Options; the outputs are checked before any input is read. */
static void parse_args(struct timeline_args *a, int argc, char **argv)
{
	static const char *const names[3] = { "--json", "--html", "--perfetto" };
	const struct opt opts[] = {
		OPT_LIST('i', NULL, a->in.specs, &a->in.n, argc, "FILE[@NAME]",
			 "an input; the first is the host (files may also be\n"
			 "given without -i)"),
		OPT_STRING(0, "json", &a->out[0], "FILE", "write Chrome/Perfetto trace-event JSON"),
		OPT_STRING(0, "html", &a->out[1], "FILE",
			   "write a self-contained HTML timeline viewer"),
		OPT_STRING(0, "perfetto", &a->out[2], "FILE",
			   "write a Perfetto protobuf trace (ui.perfetto.dev)"),
		MERGE_INPUT_OPTS(&a->in),
		OPT_INT(0, "max-guest-events", &a->max_ev, "N",
			"guest instant events kept (default 100000)", 0, INT64_MAX),
		OPT_TIME(&a->time),
		OPT_FLAG('q', "quiet", &a->quiet, "no summary on stdout"),
		OPT_END(),
	};
	int i, j;

	a->first = parse_options(&timeline_cmd, opts, argc, argv);
	for (i = a->first; i < argc; i++)
		a->in.specs[a->in.n++] = argv[i];
	a->in.specs[a->in.n] = NULL;
	if (!a->in.n)
		usage_error("timeline", "no input file");
	for (i = 0; i < 3; i++)
		if (a->out[i])
			cli_output_check(a->out[i], a->in.specs, 0);
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (a->out[i] && a->out[j] && !strcmp(a->out[i], a->out[j]))
				usage_error("timeline", "%s and %s name the same file '%s'",
					    names[i], names[j], a->out[i]);
	a->in.n -= argc - a->first;
}

/* Every record is fed, so that the states at the window's start are
 * known; the outputs are cut to the window afterwards. */
static void feed(struct ks_timeline *tl, struct ks_merge *m, const struct timeline_args *a,
		 uint64_t win_start, uint64_t win_end, struct ks_progress *prog)
{
	struct ks_merge_rec r;
	struct ks_error err;
	int rc = 0;

	while (ks_timeline_error(tl, NULL) == 0 && (rc = ks_merge_next(m, &r, &err)) > 0) {
		ks_timeline_feed(tl, &r);
		if (ks_progress_due(prog))
			cli_progress_merge(prog, m);
	}
	ks_progress_end(prog);
	if (rc < 0 || ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	ks_timeline_finish(tl);
	if (ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	if (a->time.set) {
		ks_timeline_clip(tl, win_start, win_end);
		if (ks_timeline_error(tl, &err) < 0)
			die("%s", err.msg);
	}
}

/* No vCPU in the timeline: an idle host is an empty timeline; else say why. */
static void check_vcpus(const struct ks_timeline *tl, const struct timeline_args *a)
{
	struct ks_census census;
	const char *host = a->in.specs[0];

	if (tl->nr_vcpus)
		return;
	cli_census(host, NULL, &census);
	if (cli_note_no_kvm(host, &census, "in the host trace"))
		return;
	if (!a->time.set)
		die("%s: no vCPU thread found: no kvm_entry/kvm_exit events", host);
	warnx_("%s: no vCPU activity in the time window", host);
}

int cmd_timeline(int argc, char **argv)
{
	struct timeline_args a = { .max_ev = 100000 };
	uint64_t win_start = 0, win_end = UINT64_MAX;
	struct ks_timeline *tl;
	struct ks_merge *m;
	struct ks_progress prog;
	char what[300];
	int i;

	merge_inputs_init(&a.in, argc);
	parse_args(&a, argc, argv);
	m = merge_inputs_open(&a.in, "timeline", a.first, argc, argv);
	if (a.time.set)
		resolve_time_window(a.in.specs[0], &a.time, &win_start, &win_end);
	tl = ks_timeline_new(m);
	if (!tl)
		die("out of memory");
	tl->max_gevents = (unsigned long long)a.max_ev;
	if (a.time.set)
		ks_timeline_set_window(tl, win_start, win_end);
	cli_progress_init(&prog, "timeline", a.quiet, false);
	feed(tl, m, &a, win_start, win_end, &prog);
	check_vcpus(tl, &a);
	if (!a.quiet)
		ks_timeline_print_summary(tl, stdout);
	for (i = 0; i < 3; i++) {
		if (!a.out[i])
			continue;
		snprintf(what, sizeof(what), "writing %s", a.out[i]);
		ks_progress_phase(&prog, what);
		write_file(a.out[i], a.in.specs, tl, i);
	}
	ks_progress_end(&prog);
	ks_timeline_free(tl);
	ks_merge_close(m);
	merge_inputs_free(&a.in);
	/* standard output is checked at exit (main.c) */
	return 0;
}
