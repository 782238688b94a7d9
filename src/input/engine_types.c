/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_types.c - snapshots of the live engines (engine_types.h): freeing
 * them, the difference of two (top's intervals), and the names of their
 * exit reasons from the architecture's tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "kvmscope/engine_types.h"
#include "util/buf.h"
#include "util/hashmap.h"

void ks_engine_snapshot_free(struct ks_engine_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->exits);
	free(snap->tps);
	memset(snap, 0, sizeof(*snap));
}

uint64_t ks_engine_snapshot_overflow(const struct ks_engine_snapshot *snap)
{
	return snap->overflow_series + snap->overflow_threads + snap->overflow_procs;
}

void ks_engine_reason_name(const char *arch_name, const struct ks_engine_exit *x, char *buf,
			   size_t len, bool *halts)
{
	const struct ks_arch *arch = ks_arch_named_or_default(arch_name);
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

/* ks_grow() (util/buf.h) as an expression: the array, or NULL. */
static void *grow_to(void *p, size_t *cap, size_t need, size_t size)
{
	return ks_grow(&p, cap, need, size) < 0 ? NULL : p;
}

/* PREV's exits by exit_id() into PX, its tracepoint counts by tp_id()
 * into PT (each to its index).  -1 when out of memory. */
static int index_prev(const struct ks_engine_snapshot *prev, struct ks_hmap *px,
		      struct ks_hmap *pt)
{
	size_t i;

	for (i = 0; prev && i < prev->nexits; i++) {
		uint64_t id[3];
		bool created;
		uint32_t *ix;

		exit_id(&prev->exits[i], id);
		if (!(ix = ks_hmap_put_wide(px, id, &created)))
			return -1;
		*ix = (uint32_t)i;
	}
	for (i = 0; prev && i < prev->ntps; i++) {
		uint64_t id[2];
		bool created;
		uint32_t *ix;

		tp_id(&prev->tps[i], id);
		if (!(ix = ks_hmap_put_wide(pt, id, &created)))
			return -1;
		*ix = (uint32_t)i;
	}
	return 0;
}

/* The exits of CUR that moved since PREV (indexed in PX), minus PREV's
 * counts, into OUT->exits (room for all of CUR's). */
static void delta_exits(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
			const struct ks_hmap *px, struct ks_engine_snapshot *out)
{
	size_t i, n;

	for (i = n = 0; i < cur->nexits; i++) {
		const struct ks_engine_exit *c = &cur->exits[i], *p = NULL;
		struct ks_engine_exit *d = &out->exits[n];
		uint64_t id[3];
		uint32_t *ix;
		unsigned b;

		exit_id(c, id);
		if ((ix = ks_hmap_get_wide(px, id)))
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
			for (b = 0; b <= KS_LAT_NBUCKETS; b++)
				d->bucket[b] = c->bucket[b] >= p->bucket[b] ?
					       c->bucket[b] - p->bucket[b] : 0;
		}
		n++;
	}
	out->nexits = n;
}

/* ... and the tracepoint counts (indexed in PT) into OUT->tps. */
static void delta_tps(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
		      const struct ks_hmap *pt, struct ks_engine_snapshot *out)
{
	size_t i, n;

	for (i = n = 0; i < cur->ntps; i++) {
		const struct ks_engine_tp *c = &cur->tps[i], *p = NULL;
		uint64_t id[2];
		uint32_t *ix;

		tp_id(c, id);
		if ((ix = ks_hmap_get_wide(pt, id)) &&
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
}

int ks_engine_delta(const struct ks_engine_snapshot *prev, const struct ks_engine_snapshot *cur,
		    struct ks_engine_snapshot *out, struct ks_error *err)
{
	struct ks_hmap px, pt;
	int rc = 0;

	ks_hmap_init_wide(&px, 3, sizeof(uint32_t));
	ks_hmap_init_wide(&pt, 2, sizeof(uint32_t));
	if (index_prev(prev, &px, &pt) < 0)
		goto oom;
	out->exits = grow_to(out->exits, &out->cap_exits, cur->nexits ? cur->nexits : 1,
			     sizeof(*out->exits));
	out->tps = grow_to(out->tps, &out->cap_tps, cur->ntps ? cur->ntps : 1, sizeof(*out->tps));
	if (!out->exits || !out->tps)
		goto oom;
	delta_exits(prev, cur, &px, out);
	delta_tps(prev, cur, &pt, out);
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
