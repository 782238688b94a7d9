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

void ks_engine_snapshot_free(struct ks_engine_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->exits);
	free(snap->tps);
	memset(snap, 0, sizeof(*snap));
}

void ks_engine_close(struct ks_engine *e)
{
	if (e)
		e->ops->close(e);
}

unsigned ks_engine_bucket_of(uint64_t ns)
{
	unsigned lo = 0, hi = KS_METRICS_NBUCKETS; /* first bound >= ns, or NBUCKETS */

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (ks_metrics_bucket_ns[mid] >= ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void ks_engine_reason_name(const char *arch_name, const struct ks_engine_exit *x, char *buf,
			   size_t len, bool *halts)
{
	const struct ks_arch *arch = ks_arch_by_name(arch_name && arch_name[0] ? arch_name : "x86");
	const struct ks_event_class *c = arch ? ks_arch_class(arch, "vmexit") : NULL;
	struct ks_key_ctx ctx = { 0 };

	if (halts)
		*halts = false;
	if (!c || !c->key_name) {
		snprintf(buf, len, "%llu", (unsigned long long)x->reason);
		return;
	}
	if (arch->isa_field) {
		ctx.isa = x->isa ? x->isa : KS_ISA_VMX;
		ctx.table = 0;
	} else {
		ctx.table = x->isa;
	}
	c->key_name(&ctx, x->reason, 0, false, buf, len);
	if (halts)
		*halts = ks_arch_exit_halts(arch, &ctx, x->reason);
}

void ks_engine_to_stat(const struct ks_engine_snapshot *snap, struct ks_stat *st)
{
	size_t i;

	for (i = 0; i < snap->nexits; i++) {
		const struct ks_engine_exit *x = &snap->exits[i];
		const struct ks_arch *arch = ks_arch_by_name(snap->arch[0] ? snap->arch : "x86");
		bool x86 = arch && arch->isa_field;
		struct ks_stat_aggregate a = {
			.vm = x->pid, .vcpu = x->vcpu, .tid = x->tid,
			.table = x86 ? 0 : x->isa, .isa = x86 ? x->isa : 0,
			.key = x->reason, .count = x->count, .sum_ns = x->sum_ns,
			.min_ns = x->min_ns, .max_ns = x->max_ns,
			.buckets = x->bucket, .bounds = ks_metrics_bucket_ns,
			.nbuckets = KS_METRICS_NBUCKETS + 1,
		};

		ks_stat_add_aggregate(st, &a);
	}
}

/* A series' identity: (pid, tid), (vcpu, isa, level), reason. */
static void exit_id(const struct ks_engine_exit *x, uint64_t id[3])
{
	id[0] = (uint64_t)(uint32_t)x->pid << 32 | (uint32_t)x->tid;
	id[1] = (uint64_t)(uint32_t)x->vcpu << 32 | (uint64_t)x->isa << 8 | x->level;
	id[2] = x->reason;
}

/* (pid, name) of a tracepoint count, hashed into two words and the name
 * compared on a match. */
static void tp_id(const struct ks_engine_tp *t, uint64_t id[2])
{
	uint64_t h = 1469598103934665603ull;
	const char *p;

	for (p = t->name; *p && p < t->name + sizeof(t->name); p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	id[0] = (uint32_t)t->pid;
	id[1] = h;
}

static void *grow_to(void *p, size_t *cap, size_t need, size_t size)
{
	void *n;

	if (need <= *cap)
		return p;
	n = realloc(p, need * size);
	if (!n)
		return NULL;
	*cap = need;
	return n;
}

int ks_engine_delta(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
		    struct ks_engine_snapshot *out, struct ks_error *err)
{
	struct ks_hmap px, pt;
	size_t i, n;
	int rc = 0;

	ks_hmap_init_wide(&px, 3, sizeof(uint32_t));
	ks_hmap_init_wide(&pt, 2, sizeof(uint32_t));
	for (i = 0; prev && i < prev->nexits; i++) {
		uint64_t id[3];
		bool created;
		uint32_t *ix;

		exit_id(&prev->exits[i], id);
		if (!(ix = ks_hmap_put_wide(&px, id, &created)))
			goto oom;
		*ix = (uint32_t)i;
	}
	for (i = 0; prev && i < prev->ntps; i++) {
		uint64_t id[2];
		bool created;
		uint32_t *ix;

		tp_id(&prev->tps[i], id);
		if (!(ix = ks_hmap_put_wide(&pt, id, &created)))
			goto oom;
		*ix = (uint32_t)i;
	}
	out->exits = grow_to(out->exits, &out->cap_exits, cur->nexits ? cur->nexits : 1,
			     sizeof(*out->exits));
	out->tps = grow_to(out->tps, &out->cap_tps, cur->ntps ? cur->ntps : 1, sizeof(*out->tps));
	if (!out->exits || !out->tps)
		goto oom;
	for (i = n = 0; i < cur->nexits; i++) {
		const struct ks_engine_exit *c = &cur->exits[i], *p = NULL;
		struct ks_engine_exit *d = &out->exits[n];
		uint64_t id[3];
		uint32_t *ix;
		unsigned b;

		exit_id(c, id);
		if ((ix = ks_hmap_get_wide(&px, id)))
			p = &prev->exits[*ix];
		/* a count that went down: the series was renewed; all new */
		if (p && p->count > c->count)
			p = NULL;
		if (p && p->count == c->count)
			continue;
		*d = *c;
		if (p) {
			d->count -= p->count;
			d->sum_ns -= p->sum_ns;
			for (b = 0; b <= KS_METRICS_NBUCKETS; b++)
				d->bucket[b] = c->bucket[b] >= p->bucket[b] ?
					       c->bucket[b] - p->bucket[b] : 0;
		}
		n++;
	}
	out->nexits = n;
	for (i = n = 0; i < cur->ntps; i++) {
		const struct ks_engine_tp *c = &cur->tps[i], *p = NULL;
		uint64_t id[2];
		uint32_t *ix;

		tp_id(c, id);
		if ((ix = ks_hmap_get_wide(&pt, id)) &&
		    !strncmp(prev->tps[*ix].name, c->name, sizeof(c->name)))
			p = &prev->tps[*ix];
		if (p && p->count > c->count)
			p = NULL;
		if (p && p->count == c->count)
			continue;
		out->tps[n] = *c;
		if (p)
			out->tps[n].count -= p->count;
		n++;
	}
	out->ntps = n;
	memcpy(out->engine, cur->engine, sizeof(out->engine));
	memcpy(out->arch, cur->arch, sizeof(out->arch));
	memcpy(out->isa, cur->isa, sizeof(out->isa));
#define D(f) out->f = prev && cur->f >= prev->f ? cur->f - prev->f : cur->f
	D(overflow_threads);
	D(overflow_series);
	D(overflow_procs);
	D(lost);
	D(unpaired);
#undef D
	out->ts_ns = cur->ts_ns;
	goto done;
oom:
	rc = ks_error_set(err, "out of memory");
done:
	ks_hmap_free(&px);
	ks_hmap_free(&pt);
	return rc;
}
