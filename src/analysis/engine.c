/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine.c - the live engine's dispatcher (see engine.h): AUTO tries the
 * BPF engine and falls back on the tracefs engine with one line saying
 * why; every other call goes through the backend's ops.
 *
 * It lives in src/analysis, not src/input, because the tracefs backend
 * pairs exits with the stat engine (analysis/stat.c) and the dispatcher
 * opens it: arrows only point down (the BPF backend, which needs no
 * analysis, is in src/input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "input/engine_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/stat.h"
#include "util/hashmap.h"

#define BPF_PREFIX "BPF engine unavailable: "

int ks_engine_open(struct ks_engine **out, const struct ks_engine_config *cfg, char *why,
		   size_t whylen, struct ks_error *err)
{
	struct ks_error berr;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	switch (cfg->kind) {
	case KS_ENGINE_BPF:
		return ks_engine_bpf_open(out, cfg, err);
	case KS_ENGINE_TRACEFS:
		return ks_engine_tracefs_open(out, cfg, err);
	case KS_ENGINE_AUTO:
		break;
	default:
		return ks_error_set(err, "unknown engine kind %d", (int)cfg->kind);
	}
	if (ks_engine_bpf_open(out, cfg, &berr) == 0)
		return 0;
	*out = NULL;
	/* the reason alone, whether or not the backend says what failed */
	if (!strncmp(berr.msg, BPF_PREFIX, strlen(BPF_PREFIX)))
		memmove(berr.msg, berr.msg + strlen(BPF_PREFIX), strlen(berr.msg + strlen(BPF_PREFIX)) + 1);
	if (ks_engine_tracefs_open(out, cfg, err) < 0) {
		/* both failed: say both, the tracefs reason last */
		char tmsg[sizeof(err->msg)];

		snprintf(tmsg, sizeof(tmsg), "%s", err->msg);
		return ks_error_set(err, "no live engine: BPF: %s; tracefs: %s", berr.msg, tmsg);
	}
	if (why && whylen)
		snprintf(why, whylen, BPF_PREFIX "%s; using tracefs", berr.msg);
	return 0;
}

const char *ks_engine_name(const struct ks_engine *e)
{
	return e ? e->ops->name : "none";
}

void ks_engine_wait(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready)
{
	e->ops->wait(e, extra_fd, timeout_ms, extra_ready);
}

int ks_engine_read(struct ks_engine *e, struct ks_engine_snapshot *snap, struct ks_error *err)
{
	return e->ops->read(e, snap, err);
}

void ks_engine_close(struct ks_engine *e)
{
	if (e)
		e->ops->close(e);
}

void ks_engine_to_stat(const struct ks_engine_snapshot *snap, struct ks_stat *st)
{
	size_t i;

	for (i = 0; i < snap->nexits; i++) {
		const struct ks_engine_exit *x = &snap->exits[i];
		const struct ks_arch *arch = ks_arch_named_or_default(snap->arch);
		bool x86 = arch && arch->isa_field;
		struct ks_stat_aggregate a = {
			.vm = x->pid, .vcpu = x->vcpu, .tid = x->tid,
			.table = x86 ? 0 : x->isa, .isa = x86 ? x->isa : 0,
			.key = x->reason, .count = x->count, .sum_ns = x->sum_ns,
			.min_ns = x->min_ns, .max_ns = x->max_ns,
			.buckets = x->bucket, .bounds = ks_lat_bucket_ns,
			.nbuckets = KS_LAT_NBUCKETS + 1,
		};

		ks_stat_add_aggregate(st, &a);
	}
}

