/*
 * merge_inputs.c - the input options shared by `kvmscope merge` and
 * `kvmscope timeline`: -i FILE (or FILE operands), --tsc-offset VCPU=OFFSET,
 * --no-sync; they end in one ks_merge_open().
 */
#include <stdlib.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/timesync.h"

void merge_inputs_init(struct merge_inputs *in, int argc)
{
	in->specs = calloc((size_t)argc + 1, sizeof(*in->specs));
	in->offsets = calloc((size_t)argc + 1, sizeof(*in->offsets));
	in->n = 0;
	in->opts = (struct ks_merge_opts){ 0 };
	if (!in->specs || !in->offsets)
		die("out of memory");
}

const char *merge_take_offset(const char *arg, void *value)
{
	struct merge_inputs *in = value;
	struct ks_merge_offset *o = &in->offsets[in->opts.nr_offsets];

	if (ks_timesync_parse_offset_arg(arg, &o->vcpu, &o->offset) < 0)
		return "wants VCPU=OFFSET";
	in->opts.nr_offsets++;
	return NULL;
}

bool merge_inputs_option(struct merge_inputs *in, const char *cmd, int c, const char *arg)
{
	struct ks_merge_offset *o = &in->offsets[in->opts.nr_offsets];

	switch (c) {
	case 'i':
		in->specs[in->n++] = arg;
		return true;
	case OPT_MERGE_TSC_OFFSET:
		if (ks_timesync_parse_offset_arg(arg, &o->vcpu, &o->offset) < 0)
			usage_error(cmd, "--tsc-offset wants VCPU=OFFSET, not '%s'", arg);
		in->opts.nr_offsets++;
		return true;
	case OPT_MERGE_NO_SYNC:
		in->opts.no_sync = true;
		return true;
	default:
		return false;
	}
}

struct ks_merge *merge_inputs_open(struct merge_inputs *in, const char *cmd, int first, int argc,
				   char **argv)
{
	struct ks_merge *m;
	struct ks_error err;

	for (int i = first; i < argc; i++)
		in->specs[in->n++] = argv[i];
	if (!in->n)
		usage_error(cmd, "no input file");
	in->opts.offsets = in->offsets;
	if (ks_merge_open(&m, in->specs, in->n, &in->opts, &err) < 0)
		die("%s", err.msg);
	return m;
}

void merge_inputs_free(struct merge_inputs *in)
{
	free(in->specs);
	free(in->offsets);
	in->specs = NULL;
	in->offsets = NULL;
}
