/*
 * cmd_dump.c - kvmscope dump: print every event like `trace-cmd report`.
 *
 *	kvmscope dump [-t] [-N] [-i] FILE...
 *
 * Any input works (trace.dat, perf.data, ftrace text).  With several files
 * the events are merged by time and each line starts with the file's base
 * name, as trace-cmd report does with several -i options.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmscope/dump.h"
#include "kvmscope/source.h"

struct input {
	const char *path;
	struct ks_source *src;
	struct ks_dump *dump;
	struct ks_record rec;
	bool has;
	char prefix[256];
};

static void usage(FILE *out)
{
	fputs("usage: kvmscope dump [-t] [-N] [-i] FILE...\n\n"
	      "Print every event of the inputs in trace-cmd report's layout.\n\n"
	      "  -t          nanosecond timestamps\n"
	      "  -N          do not load libtraceevent plugins (raw print formats)\n"
	      "  -i FILE     an input (files may also be given without -i)\n"
	      "  -h, --help  this help\n", out);
}

static void pull(struct input *in)
{
	struct ks_error err;
	int r = ks_source_next(in->src, &in->rec, &err);

	if (r < 0)
		die("%s", err.msg);
	in->has = r > 0;
}

static void set_prefixes(struct input *in, int n)
{
	int i, width = 0;

	for (i = 0; i < n; i++) {
		const char *base = strrchr(in[i].path, '/');
		int len = (int)strlen(base ? base + 1 : in[i].path);
		if (len > width)
			width = len;
	}
	for (i = 0; i < n; i++) {
		const char *base = strrchr(in[i].path, '/');
		snprintf(in[i].prefix, sizeof(in[i].prefix), "%*s: ", width,
			 base ? base + 1 : in[i].path);
	}
}

static void merge(struct input *in, int n, FILE *out)
{
	for (;;) {
		struct input *best = NULL;
		int i;

		for (i = 0; i < n; i++)
			if (in[i].has && (!best || in[i].rec.ts < best->rec.ts))
				best = &in[i];
		if (!best)
			return;
		ks_dump_print_record(best->dump, &best->rec, out, n > 1 ? best->prefix : NULL);
		pull(best);
	}
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ks_dump_opts opts = { 0 };
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	struct input *in;
	int n = 0, c, i;

	if (!paths)
		die("out of memory");
	while ((c = getopt_long(argc, argv, "+tNi:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': opts.nsec = true; break;
		case 'N': opts.no_plugins = true; break;
		case 'i': paths[n++] = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage_error("dump", "unknown option");
		}
	}
	for (i = optind; i < argc; i++)
		paths[n++] = argv[i];
	if (!n)
		usage_error("dump", "no input file");
	in = calloc((size_t)n, sizeof(*in));
	if (!in)
		die("out of memory");
	for (i = 0; i < n; i++) {
		struct ks_error err;
		in[i].path = paths[i];
		if (ks_source_open(&in[i].src, paths[i], &err) < 0)
			die("%s", err.msg);
		in[i].dump = ks_dump_new(in[i].src, &opts);
		if (!in[i].dump)
			die("out of memory");
	}
	set_prefixes(in, n);
	for (i = 0; i < n; i++)
		ks_dump_print_header(in[i].dump, stdout, n > 1 ? in[i].prefix : NULL);
	for (i = 0; i < n; i++)
		pull(&in[i]);
	merge(in, n, stdout);
	for (i = 0; i < n; i++) {
		ks_dump_free(in[i].dump);
		ks_source_close(in[i].src);
	}
	free(in);
	free(paths);
	if (fflush(stdout) != 0)
		die("cannot write the output");
	return 0;
}
