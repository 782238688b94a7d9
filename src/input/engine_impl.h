/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_impl.h - what a live engine implements (engine.h): a backend
 * embeds struct ks_engine as its FIRST member and fills in ops.
 */
#ifndef KVMSCOPE_ENGINE_IMPL_H
#define KVMSCOPE_ENGINE_IMPL_H

#include "kvmscope/engine.h"

struct ks_engine_ops {
	const char *name;   /* "bpf", "tracefs" */
	void (*wait)(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready);
	int (*read)(struct ks_engine *e, struct ks_engine_snapshot *snap, struct ks_error *err);
	void (*close)(struct ks_engine *e);
};

struct ks_engine {
	const struct ks_engine_ops *ops;
};

#endif
