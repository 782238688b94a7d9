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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/timeline.h"

static void usage(FILE *out)
{
	fputs("usage: kvmscope timeline [--json FILE] [--html FILE] [--perfetto FILE]\n"
	      "                         [--tsc-offset V=OFF]...\n"
	      "                         [--max-guest-events N] [--no-sync] [--quiet]\n"
	      "                         -i HOST [-i GUEST[@NAME]]...\n\n"
	      "Compute each vCPU's state over time (RUNNING, IDLE, HOST with the exit\n"
	      "reason, HALTED, PREEMPTED, BLOCKED) from the host's kvm_entry, kvm_exit and\n"
	      "sched_switch events, with the guest tasks of the guest traces (moved to\n"
	      "host time as `kvmscope merge` does).  Prints a summary per vCPU and the\n"
	      "exit cost per guest task.\n\n"
	      "  -i FILE[@NAME]          an input; the first is the host\n"
	      "  --json FILE             write Chrome/Perfetto trace-event JSON\n"
	      "  --html FILE             write a self-contained HTML timeline viewer\n"
	      "  --perfetto FILE         write a Perfetto protobuf trace (ui.perfetto.dev)\n"
	      "  --tsc-offset V=OFF      guest TSC = host TSC + OFF on vCPU V\n"
	      "  --max-guest-events N    guest instant events kept (default 100000)\n"
	      "  --no-sync               keep guest timestamps as recorded\n"
	      "  -q, --quiet             no summary on stdout\n"
	      "  -h, --help              this help\n", out);
}

/* A progress line on stderr, as perf and trace-cmd users know it: only on a
 * terminal, only once the run takes more than a second, erased at the end. */
struct progress {
	bool on, shown;
	double start;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress_show(struct progress *p, const char *what, unsigned long long n)
{
	double t;

	if (!p->on || (t = now_s()) - p->start < 1.0)
		return;
	if (n)
		fprintf(stderr, "\rtimeline: %s: %llu events, %.1f s\033[K", what, n, t - p->start);
	else
		fprintf(stderr, "\rtimeline: %s, %.1f s\033[K", what, t - p->start);
	fflush(stderr);
	p->shown = true;
}

static void progress_end(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

/* Written to a temporary file renamed to PATH when complete (outfile.h). */
static void write_file(const char *path, const char *const *inputs, const struct ks_timeline *tl,
		       int kind)
{
	struct ks_outfile *of = cli_output_open(path, inputs, 0);

	if (kind == 1) {
		if (ks_timeline_write_html(tl, ks_outfile_stream(of)) < 0)
			die("out of memory");
	} else if (kind == 2) {
		if (ks_timeline_write_perfetto(tl, ks_outfile_stream(of)) < 0)
			die("out of memory");
	} else
		ks_timeline_write_json(tl, ks_outfile_stream(of));
	cli_output_commit(of);
}

int cmd_timeline(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_HTML, OPT_MAX_EV, OPT_PERFETTO };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "perfetto", required_argument, NULL, OPT_PERFETTO },
		MERGE_INPUT_LONGOPTS,
		{ "max-guest-events", required_argument, NULL, OPT_MAX_EV },
		{ NULL, 0, NULL, 0 },
	};
	struct merge_inputs in;
	const char *json = NULL, *html = NULL, *pb = NULL;
	unsigned long long max_ev = 100000;
	struct ks_timeline *tl;
	struct ks_merge *m;
	struct ks_merge_rec r;
	struct ks_error err;
	bool quiet = false;
	struct progress prog = { .start = now_s() };
	unsigned long long nrec = 0;
	char what[300];
	int c, rc;
	char *end;

	merge_inputs_init(&in, argc);
	while ((c = getopt_long(argc, argv, "+i:qh", longopts, NULL)) != -1) {
		if (merge_inputs_option(&in, "timeline", c, optarg))
			continue;
		switch (c) {
		case 'q': quiet = true; break;
		case OPT_JSON: json = optarg; break;
		case OPT_HTML: html = optarg; break;
		case OPT_PERFETTO: pb = optarg; break;
		case OPT_MAX_EV:
			max_ev = strtoull(optarg, &end, 10);
			if (*end || end == optarg)
				usage_error("timeline", "--max-guest-events wants a number");
			break;
		case 'h':
			usage(stdout);
			merge_inputs_free(&in);
			return 0;
		default: usage_error("timeline", "unknown option");
		}
	}
	/* the outputs are checked before any input is read */
	for (c = optind; c < argc; c++)
		in.specs[in.n++] = argv[c];
	in.specs[in.n] = NULL;
	if (json)
		cli_output_check(json, in.specs, 0);
	if (html)
		cli_output_check(html, in.specs, 0);
	if (pb)
		cli_output_check(pb, in.specs, 0);
	in.n -= argc - optind;
	m = merge_inputs_open(&in, "timeline", optind, argc, argv);
	tl = ks_timeline_new(m);
	if (!tl)
		die("out of memory");
	tl->max_gevents = max_ev;
	prog.on = !quiet && isatty(2);
	while (ks_timeline_error(tl, NULL) == 0 && (rc = ks_merge_next(m, &r, &err)) > 0) {
		ks_timeline_feed(tl, &r);
		if ((++nrec & 0xffff) == 0)
			progress_show(&prog, "reading", nrec);
	}
	progress_end(&prog);
	if (rc < 0 || ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	ks_timeline_finish(tl);
	if (ks_timeline_error(tl, &err) < 0)
		die("%s", err.msg);
	if (!quiet)
		ks_timeline_print_summary(tl, stdout);
	for (c = 0; c < 3; c++) {
		const char *path = c == 0 ? json : c == 1 ? html : pb;
		if (!path)
			continue;
		snprintf(what, sizeof(what), "writing %s", path);
		progress_show(&prog, what, 0);
		write_file(path, in.specs, tl, c);
	}
	progress_end(&prog);
	ks_timeline_free(tl);
	ks_merge_close(m);
	merge_inputs_free(&in);
	/* standard output is checked at exit (main.c) */
	return 0;
}
