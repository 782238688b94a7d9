/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_impl.h - what a live engine implements (engine.h): a backend
 * embeds struct ks_engine as its FIRST member and fills in ops.
 */
#ifndef KVMSCOPE_ENGINE_IMPL_H
#define KVMSCOPE_ENGINE_IMPL_H

#include "kvmscope/engine_types.h"

struct ks_engine_ops {
	const char *name;   /* "bpf", "tracefs" */
	void (*wait)(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready);
	int (*read)(struct ks_engine *e, struct ks_engine_snapshot *snap, struct ks_error *err);
	void (*close)(struct ks_engine *e);
};

struct ks_engine {
	const struct ks_engine_ops *ops;
};

/* The backends (ks_engine_open, engine.h, calls them): src/input/engine_bpf.c
 * and src/analysis/engine_tracefs.c.  -1 with err saying why. */
int ks_engine_bpf_open(struct ks_engine **out, const struct ks_engine_config *cfg,
		       struct ks_error *err);
int ks_engine_tracefs_open(struct ks_engine **out, const struct ks_engine_config *cfg,
			   struct ks_error *err);

#endif
