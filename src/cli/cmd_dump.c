/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_dump.c - kvmscope dump: print every event like `trace-cmd report`.
 *
 *	kvmscope dump [-t] [-N] [-i] FILE...
 *
 * Any input works (trace.dat, perf.data, ftrace text).  With several files
 * the events are merged by time and each line starts with the file's base
 * name, as trace-cmd report does with several -i options.  Events of
 * trace.dat buffer instances start with the instance's name (top-level
 * events with blanks, or the file name with several files), and a latency
 * trace.dat prints its stored text, like trace-cmd report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/dump.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"

struct input {
	const char *path;
	struct ks_source *src;
	struct ks_dump *dump;
	struct ks_record rec;
	bool has;
	char prefix[256];
	const char *base;  /* base name of the file */
	int index;         /* position among the inputs */
	int inst_base;     /* rank of its first instance (see record_rank) */
	int rank;          /* of the pulled record */
	uint64_t win_start, win_end; /* --time, in the clock of ts */
};

/* Prefix width and mode shared by all inputs (trace-cmd's max_file_size). */
static int prefix_width;
static bool multi_inputs, any_instances;
/* the progress line: of all the inputs (the CLI's own state) */
static struct ks_progress progress;
static struct ks_source *progress_srcs[64];
static int progress_n;

static const struct opt_cmd dump_cmd = {
	.name = "dump",
	.synopsis = "[-t] [-N] [-i] FILE...",
	.intro = "Print every event of the inputs in trace-cmd report's layout.\n",
	.outro = "See kvmscope-dump(1).\n",
};

/* A latency trace.dat: trace-cmd report prints "cpus=N", the stored text
 * and a newline, nothing else.  Returns whether IN is one. */
static bool print_latency(const struct input *in, FILE *out)
{
	size_t len;
	const char *text = ks_tracedat_latency_text(in->src, &len);

	if (!text)
		return false;
	ks_dump_print_header(in->dump, out, NULL);
	fwrite(text, 1, len, out);
	fputc('\n', out);
	return true;
}

/* trace-cmd report merges its handles in list order on equal times: the
 * top-level buffers of all files first, then the instances file by file. */
static int record_rank(const struct input *in)
{
	const char *const *names;
	size_t i, n = ks_source_buffers(in->src, &names);
	const char *name = ks_tracedat_record_buffer(in->src, &in->rec);
	int k = 0;

	if (!name || !n)
		return in->index;
	for (i = 0; i < n; i++) {
		if (!names[i][0])
			continue;
		if (!strcmp(names[i], name))
			break;
		k++;
	}
	return in->inst_base + k;
}

static void pull(struct input *in)
{
	struct ks_error err;
	int r = ks_source_next(in->src, &in->rec, &err);

	if (r < 0)
		die("%s", err.msg);
	in->has = r > 0;
	if (ks_progress_due(&progress))
		cli_progress_sources(&progress, progress_srcs, progress_n);
	if (in->has && (multi_inputs || any_instances))
		in->rank = record_rank(in);
}

/* The longest instance name of IN; 0 if it has no instances. */
static int instance_width(const struct input *in)
{
	const char *const *names;
	size_t i, n = ks_source_buffers(in->src, &names);
	int width = 0;

	for (i = 0; i < n; i++) {
		int len = (int)strlen(names[i]);
		if (len > width)
			width = len;
	}
	return width;
}

static int count_instances(const struct input *in)
{
	const char *const *names;
	size_t i, n = ks_source_buffers(in->src, &names);
	int k = 0;

	for (i = 0; i < n; i++)
		k += names[i][0] != '\0';
	return k;
}

/* trace-cmd report: file names only with several files; instance names
 * whenever a file has instances.  The header lines of later files already
 * count the instances of earlier ones, as trace-cmd adds them file by file. */
static void set_prefixes(struct input *in, int n)
{
	int i, width = 0;

	multi_inputs = n > 1;
	for (i = 0; i < n; i++) {
		const char *base = strrchr(in[i].path, '/');
		int len;
		in[i].base = base ? base + 1 : in[i].path;
		len = (int)strlen(in[i].base);
		if (multi_inputs && len > width)
			width = len;
	}
	for (i = 0; i < n; i++) {
		int iw = instance_width(&in[i]);

		in[i].index = i;
		in[i].inst_base = i ? in[i - 1].inst_base + count_instances(&in[i - 1]) : n;
		snprintf(in[i].prefix, sizeof(in[i].prefix), "%*s: ", width, in[i].base);
		if (iw > width)
			width = iw;
		any_instances |= iw > 0;
	}
	prefix_width = width;
}

/* The prefix of one record (NULL: none). */
static const char *record_prefix(struct input *in, char *buf, size_t size)
{
	const char *name;

	if (!multi_inputs && !any_instances)
		return NULL;
	name = ks_tracedat_record_buffer(in->src, &in->rec);
	if (name)
		snprintf(buf, size, "%*s: ", prefix_width, name);
	else if (multi_inputs)
		snprintf(buf, size, "%*s: ", prefix_width, in->base);
	else
		snprintf(buf, size, "%*s  ", prefix_width, "");
	return buf;
}

static void merge(struct input *in, int n, FILE *out)
{
	char prefix[512];

	for (;;) {
		struct input *best = NULL;
		int i;

		for (i = 0; i < n; i++)
			if (in[i].has && (!best || in[i].rec.ts < best->rec.ts ||
					  (in[i].rec.ts == best->rec.ts && in[i].rank < best->rank)))
				best = &in[i];
		if (!best)
			return;
		if (best->rec.type == KS_REC_EVENT && best->rec.ts > best->win_end) {
			best->has = false; /* in time order: the rest is after the window too */
			continue;
		}
		if (best->rec.type == KS_REC_EVENT && best->rec.ts < best->win_start)
			/* formatted, not printed: the sched_switch plugin learns
			 * task names from it, as trace-cmd does on its way */
			ks_dump_format(best->dump, &best->rec, NULL);
		else
			ks_dump_print_record(best->dump, &best->rec, out,
					     record_prefix(best, prefix, sizeof(prefix)));
		pull(best);
	}
}

int cmd_dump(int argc, char **argv)
{
	struct ks_dump_opts opts = { 0 };
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	struct input *in;
	int n = 0, shown, i, first;
	struct time_window time = { 0 };
	bool quiet = false;

	if (!paths)
		die("out of memory");
	{
		const struct opt table[] = {
			OPT_FLAG('t', NULL, &opts.nsec, "nanosecond timestamps"),
			OPT_FLAG('N', NULL, &opts.no_plugins,
				 "do not load libtraceevent plugins (raw print formats)"),
			OPT_LIST('i', NULL, paths, &n, argc, "FILE",
				 "an input (files may also be given without -i)"),
			OPT_TIME(&time),
			OPT_FLAG('q', "quiet", &quiet, "no progress line on stderr"),
			OPT_END(),
		};

		first = parse_options(&dump_cmd, table, argc, argv);
	}
	for (i = first; i < argc; i++)
		paths[n++] = argv[i];
	if (!n)
		usage_error("dump", "no input file");
	shown = n;
	in = calloc((size_t)n, sizeof(*in));
	if (!in)
		die("out of memory");
	for (i = 0; i < n; i++) {
		struct ks_error err;
		in[i].path = paths[i] = cli_input(paths[i]);
		/* dump meets its events in the records only */
		if (cli_source_open(&in[i].src, paths[i], KS_OPEN_EVENTS_BY_RECORD, NULL, &err) < 0)
			die("%s", err.msg);
		in[i].win_end = UINT64_MAX;
		resolve_time_window(paths[i], &time, &in[i].win_start, &in[i].win_end);
		in[i].dump = ks_dump_new(in[i].src, &opts);
		if (!in[i].dump)
			die("out of memory");
	}
	set_prefixes(in, n);
	for (i = 0; i < n && i < 64; i++)
		progress_srcs[progress_n++] = in[i].src;
	cli_progress_init(&progress, "dump", quiet, true);
	cli_stdout_blocks();
	for (i = 0; n > 1 && i < n; i++)
		if (ks_tracedat_latency_text(in[i].src, NULL))
			die("%s: latency traces do not work with several inputs", in[i].path);
	if (n == 1 && print_latency(&in[0], stdout)) {
		shown = 0; /* trace-cmd prints only the text */
	}
	for (i = 0; i < shown; i++)
		ks_dump_print_header(in[i].dump, stdout, n > 1 ? in[i].prefix : NULL);
	for (i = 0; i < shown; i++)
		pull(&in[i]);
	merge(in, shown, stdout);
	ks_progress_end(&progress);
	for (i = 0; i < n; i++) {
		ks_dump_free(in[i].dump);
		ks_source_close(in[i].src);
	}
	free(in);
	free(paths);
	/* standard output is checked at exit (main.c) */
	return 0;
}
