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

int cmd_timeline(int argc, char **argv)
{
	struct merge_inputs in;
	const char *json = NULL, *html = NULL, *pb = NULL;
	long long max_ev = 100000;
	struct time_window time = { 0 };
	uint64_t win_start = 0, win_end = UINT64_MAX;
	struct ks_census census;
	struct ks_timeline *tl;
	struct ks_merge *m;
	struct ks_merge_rec r;
	struct ks_error err;
	bool quiet = false;
	struct ks_progress prog;
	char what[300];
	int rc = 0, first, i, nops;

	merge_inputs_init(&in, argc);
	{
		const struct opt opts[] = {
			OPT_LIST('i', NULL, in.specs, &in.n, argc, "FILE[@NAME]",
				 "an input; the first is the host (files may also be\n"
				 "given without -i)"),
			OPT_STRING(0, "json", &json, "FILE", "write Chrome/Perfetto trace-event JSON"),
			OPT_STRING(0, "html", &html, "FILE",
				   "write a self-contained HTML timeline viewer"),
			OPT_STRING(0, "perfetto", &pb, "FILE",
				   "write a Perfetto protobuf trace (ui.perfetto.dev)"),
			MERGE_INPUT_OPTS(&in),
			OPT_INT(0, "max-guest-events", &max_ev, "N",
				"guest instant events kept (default 100000)", 0, INT64_MAX),
			OPT_TIME(&time),
			OPT_FLAG('q', "quiet", &quiet, "no summary on stdout"),
			OPT_END(),
		};

		first = parse_options(&timeline_cmd, opts, argc, argv);
	}
	/* the outputs are checked before any input is read */
	nops = argc - first;
	for (i = first; i < argc; i++)
		in.specs[in.n++] = argv[i];
	in.specs[in.n] = NULL;
	if (!in.n)
		usage_error("timeline", "no input file");
	if (json)
		cli_output_check(json, in.specs, 0);
	if (html)
		cli_output_check(html, in.specs, 0);
	if (pb)
		cli_output_check(pb, in.specs, 0);
	{
		const char *outs[3] = { json, html, pb }, *names[3] = { "--json", "--html", "--perfetto" };

		for (i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (outs[i] && outs[j] && !strcmp(outs[i], outs[j]))
					usage_error("timeline", "%s and %s name the same file '%s'",
						    names[i], names[j], outs[i]);
	}
	in.n -= nops;
	m = merge_inputs_open(&in, "timeline", first, argc, argv);
	if (time.set)
		resolve_time_window(in.specs[0], &time, &win_start, &win_end);
	tl = ks_timeline_new(m);
	if (!tl)
		die("out of memory");
	tl->max_gevents = (unsigned long long)max_ev;
	if (time.set)
		ks_timeline_set_window(tl, win_start, win_end);
	cli_progress_init(&prog, "timeline", quiet, false);
	/* every record is fed, so that the states at the window's start are
	 * known; the outputs are cut to the window afterwards */
	while (ks_timeline_error(tl, NULL) == 0 && (rc = ks_merge_next(m, &r, &err)) > 0) {
		ks_timeline_feed(tl, &r);
		if (ks_progress_due(&prog))
			cli_progress_merge(&prog, m);
	}
	ks_progress_end(&prog);
	if (rc < 0 || ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	ks_timeline_finish(tl);
	if (ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	if (time.set) {
		ks_timeline_clip(tl, win_start, win_end);
		if (ks_timeline_error(tl, &err) < 0)
			die("%s", err.msg);
	}
	if (!tl->nr_vcpus) {
		cli_census(in.specs[0], NULL, &census);
		if (cli_note_no_kvm(in.specs[0], &census, "in the host trace"))
			; /* an idle host: an empty timeline, not an error */
		else if (!time.set)
			die("%s: no vCPU thread found: no kvm_entry/kvm_exit events", in.specs[0]);
		else
			warnx_("%s: no vCPU activity in the time window", in.specs[0]);
	}
	if (!quiet)
		ks_timeline_print_summary(tl, stdout);
	for (i = 0; i < 3; i++) {
		const char *path = i == 0 ? json : i == 1 ? html : pb;
		if (!path)
			continue;
		snprintf(what, sizeof(what), "writing %s", path);
		ks_progress_phase(&prog, what);
		write_file(path, in.specs, tl, i);
	}
	ks_progress_end(&prog);
	ks_timeline_free(tl);
	ks_merge_close(m);
	merge_inputs_free(&in);
	/* standard output is checked at exit (main.c) */
	return 0;
}
