/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * merge_inputs.c - the input options shared by `kvmscope merge` and
 * `kvmscope timeline`: -i FILE (or FILE operands), --tsc-offset VCPU=OFFSET,
 * --no-sync; they end in one ks_merge_open().
 */
#include <stdlib.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/limits.h"
#include "kvmscope/timesync.h"

void merge_inputs_init(struct merge_inputs *in, int argc)
{
	in->specs = calloc((size_t)argc + 1, sizeof(*in->specs));
	in->offsets = calloc((size_t)argc + 1, sizeof(*in->offsets));
	in->n = 0;
	ks_limits_default(&in->limits);
	in->opts = (struct ks_merge_opts){ .ctx = cli_ctx(), .limits = &in->limits };
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

/* One line per guest whose time is not moved as the user may think. */
static void warn_sync(struct ks_merge *m, const struct merge_inputs *in, const char *cmd)
{
	for (int i = 1; i < ks_merge_nr_inputs(m); i++) {
		enum ks_timesync_kind k = ks_merge_sync_kind(m, i);

		if (in->opts.no_sync)
			break;
		if (k == KS_TSYNC_TIMESHIFT && in->opts.nr_offsets)
			warnx_("%s: %s: --tsc-offset is not used: the guest's TimeShift option "
			       "syncs its time (it takes precedence)", cmd, ks_merge_name(m, i));
		else if (k == KS_TSYNC_NONE)
			warnx_("%s: %s: no time sync (no TimeShift option in it, no "
			       "kvm_write_tsc_offset events in %s, no --tsc-offset): its "
			       "timestamps are kept as recorded", cmd, ks_merge_name(m, i),
			       ks_merge_name(m, 0));
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
	for (int i = 0; i < in->n; i++)
		in->specs[i] = cli_input(in->specs[i]);
	in->opts.offsets = in->offsets;
	if (ks_merge_open(&m, in->specs, in->n, &in->opts, &err) < 0)
		die("%s", err.msg);
	warn_sync(m, in, cmd);
	return m;
}

void merge_inputs_free(struct merge_inputs *in)
{
	free(in->specs);
	free(in->offsets);
	in->specs = NULL;
	in->offsets = NULL;
}
