/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_opt.c - the command line's side of the live engines (engine.h):
 * the --engine choice shared by stat --live, top and exporter, and the
 * opening of the engine, with the one line that says why AUTO fell back
 * on tracefs (on stderr).
 */
#include <stdio.h>

#include "cli.h"
#include "kvmscope/engine.h"

/* in the order of enum ks_engine_kind */
const char *const cli_engine_names[] = { "auto", "bpf", "tracefs", NULL };

struct ks_engine *cli_engine_open(const char *cmd, struct ks_engine_config *cfg)
{
	struct ks_engine *e;
	struct ks_error err;
	char why[256];

	cfg->track = cli_live_track;
	if (ks_engine_open(&e, cfg, why, sizeof(why), &err) < 0)
		die("%s: %s", cmd, err.msg);
	if (why[0])
		warnx_("%s: %s", cmd, why);
	return e;
}
