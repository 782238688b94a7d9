/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_tracefs.c - the tracefs live engine (engine.h): every KVM event
 * streamed through a private tracefs instance (live.h) and decoded here;
 * exits paired by the stat engine (stat.h, vmexit class, exit -> entry),
 * whose every measured occurrence (cfg.observe) is added to the cumulative
 * series (pid, tid, vCPU, ISA, level, reason) with the exporter's buckets
 * (ks_lat_bucket_of, the rule the BPF engine applies in the kernel);
 * every event counted per (process, event) as tpcount.c counts them.
 *
 * A long run renews the stat engine every ROTATE_RECORDS records, as the
 * exporter's metrics do (metrics.c): each vCPU thread's last entry and the
 * KVM events after it are fed to the new one first, so an exit pending
 * then is counted once, and the state of threads that are gone goes.
 *
 * It is in src/analysis because it needs the stat engine's pairing and the
 * attribution of threads to VMs and vCPUs (the events' vcpu_id, else thread names...); the
 * BPF engine (src/input) needs neither: it pairs in the kernel.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "input/engine_impl.h"
#include "kvmscope/engine_types.h"
#include "kvmscope/live.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "util/buf.h"
#include "util/hashmap.h"
#include "vcpu_ctx.h"

#define NONE UINT32_MAX
#define ROTATE_RECORDS 16777216

struct tfs_engine {
	struct ks_engine base;          /* first: engine_impl.h */
	struct ks_engine_config cfg;
	struct ks_live *live;
	struct ks_source *src;
	struct ks_stat *st;
	struct ks_vcpu_ctx vctx;        /* each vCPU's events since its entry */
	uint64_t since_rotation;
	uint64_t unpaired_before;       /* of the stat engines renewed */
	struct ks_engine_exit *exits;
	size_t nexits, cap_exits;
	struct ks_hmap series;          /* (pid, tid), (vcpu, isa, level), reason -> index */
	struct ks_engine_tp *tps;
	size_t ntps, cap_tps;
	struct ks_hmap tp_map;          /* (pid, event id) -> index */
	struct ks_hmap procs;           /* pids counted (max_procs) */
	uint64_t overflow_series, overflow_procs, lost_records, oom;
	int isa;                        /* the stat engine's exit table, once known */
	char arch[16], isa_name[16];
	struct ks_error err;            /* a read error of the source, reported by read */
	bool failed;
};

/* ks_grow() (util/buf.h) as an expression: the array, or NULL. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	return ks_grow(&p, cap, need, size) < 0 ? NULL : p;
}

static void note_isa(struct tfs_engine *t)
{
	const char *isa = ks_stat_isa_name(t->st), *arch = ks_stat_arch_name(t->st);

	if (arch)
		snprintf(t->arch, sizeof(t->arch), "%s", arch);
	if (!isa || !strcmp(isa, "unknown"))
		return;
	snprintf(t->isa_name, sizeof(t->isa_name), "%s", isa);
	if (!strcmp(isa, ks_x86_isa_name(KS_ISA_VMX)))
		t->isa = KS_ISA_VMX;
	else if (!strcmp(isa, ks_x86_isa_name(KS_ISA_SVM)))
		t->isa = KS_ISA_SVM;
}

/* One exit measured by the stat engine: into its series. */
static void on_exit_measured(void *ctx, const struct ks_stat_occurrence *occ)
{
	struct tfs_engine *t = ctx;
	const struct ks_arch *arch;
	struct ks_engine_exit *x;
	uint64_t key[3];
	uint32_t *idx;
	bool created;
	int isa;

	if (!t->isa)
		note_isa(t);
	arch = ks_arch_by_name(t->arch);
	/* the key's table: x86 its exit table; elsewhere the class's table */
	isa = arch && arch->isa_field ? t->isa : occ->table;
	key[0] = (uint64_t)(uint32_t)occ->vm << 32 | (uint32_t)occ->tid;
	key[1] = (uint64_t)(uint32_t)occ->vcpu << 32 | (uint64_t)(uint16_t)isa << 8 | 1;
	key[2] = occ->key;
	idx = ks_hmap_get_wide(&t->series, key);
	if (!idx) {
		if (t->nexits >= t->cfg.max_series) {
			t->overflow_series++;
			return;
		}
		x = grow(t->exits, &t->cap_exits, t->nexits + 1, sizeof(*x));
		if (!x) {
			t->oom++;
			return;
		}
		t->exits = x;
		idx = ks_hmap_put_wide(&t->series, key, &created);
		if (!idx) {
			t->oom++;
			return;
		}
		*idx = (uint32_t)t->nexits;
		x = &t->exits[t->nexits++];
		memset(x, 0, sizeof(*x));
		x->pid = occ->vm;
		x->tid = occ->tid;
		x->vcpu = occ->vcpu;
		x->isa = (uint16_t)isa;
		x->level = 1;
		x->reason = occ->key;
		x->min_ns = UINT64_MAX;
	}
	x = &t->exits[*idx];
	x->count++;
	x->sum_ns += occ->ns;
	if (occ->ns < x->min_ns)
		x->min_ns = occ->ns;
	if (occ->ns > x->max_ns)
		x->max_ns = occ->ns;
	x->bucket[ks_lat_bucket_of(occ->ns)]++;
}

static void count_tp(struct tfs_engine *t, const struct ks_record *rec)
{
	uint64_t key[2] = { (uint64_t)(uint32_t)rec->pid, (uint64_t)(uint32_t)rec->event->id };
	struct ks_engine_tp *tp;
	uint32_t *idx = ks_hmap_get_wide(&t->tp_map, key);
	bool created;

	if (idx) {
		t->tps[*idx].count++;
		return;
	}
	if (!ks_hmap_get(&t->procs, (uint64_t)(uint32_t)rec->pid)) {
		if (t->procs.len >= t->cfg.max_procs) {
			t->overflow_procs++;
			return;
		}
		if (!ks_hmap_put(&t->procs, (uint64_t)(uint32_t)rec->pid, &created)) {
			t->oom++;
			return;
		}
	}
	tp = grow(t->tps, &t->cap_tps, t->ntps + 1, sizeof(*tp));
	if (!tp) {
		t->oom++;
		return;
	}
	t->tps = tp;
	idx = ks_hmap_put_wide(&t->tp_map, key, &created);
	if (!idx) {
		t->oom++;
		return;
	}
	*idx = (uint32_t)t->ntps;
	tp = &t->tps[t->ntps++];
	memset(tp, 0, sizeof(*tp));
	tp->pid = rec->pid;
	/* kvm events by their name (tpcount.c's rows), others SYS:NAME */
	if (!strcmp(rec->event->system, "kvm"))
		snprintf(tp->name, sizeof(tp->name), "%s", rec->event->name);
	else
		snprintf(tp->name, sizeof(tp->name), "%s:%s", rec->event->system, rec->event->name);
	tp->count = 1;
}

static struct ks_stat *new_stat(struct tfs_engine *t, struct ks_error *err)
{
	struct ks_stat_config sc = KS_STAT_CONFIG_INIT;

	sc.views[0] = KS_DIM_VM | KS_DIM_VCPU | KS_DIM_KEY;
	sc.views[1] = 0;
	sc.no_histograms = true;
	sc.no_begin_counts = true;
	sc.host = t->cfg.host; /* NULL: the engine's own attribution */
	sc.observe = on_exit_measured;
	sc.observe_ctx = t;
	sc.observe_min_ns = 0;
	return ks_stat_new_source(&sc, t->src, err);
}

/* A thread that is gone need not be kept (kill 0: ESRCH). */
static bool thread_alive(void *arg, int32_t tid)
{
	(void)arg;
	return tid > 0 && (kill(tid, 0) == 0 || errno == EPERM);
}

static void rotate(struct tfs_engine *t)
{
	struct ks_error err;
	struct ks_stat *st = new_stat(t, &err);

	if (!st) {
		t->oom++;
		return;
	}
	t->unpaired_before += ks_stat_anomalies(t->st)->end_without_begin;
	ks_stat_free(t->st);
	t->st = st;
	t->since_rotation = 0;
	if (ks_vcpu_ctx_prune(&t->vctx, thread_alive, NULL) < 0)
		t->oom++;
	ks_vcpu_ctx_replay(&t->vctx, t->st);
}

static void drain(struct tfs_engine *t)
{
	struct ks_record rec;
	int r;

	if (t->failed)
		return;
	while ((r = ks_source_next(t->src, &rec, &t->err)) > 0) {
		if (rec.type == KS_REC_LOST) {
			t->lost_records += rec.lost ? rec.lost : 1;
			continue;
		}
		if (t->cfg.exits) {
			ks_stat_add(t->st, &rec);
			if (ks_vcpu_ctx_note(&t->vctx, &rec) == KS_VCTX_NOMEM)
				t->oom++;
			if (++t->since_rotation >= ROTATE_RECORDS)
				rotate(t);
		}
		if (t->cfg.tracepoints && rec.type == KS_REC_EVENT && rec.event)
			count_tp(t, &rec);
	}
	if (r < 0)
		t->failed = true;
}

static void tfs_wait(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready)
{
	struct tfs_engine *t = (struct tfs_engine *)e;

	ks_live_wait(t->live, extra_fd, timeout_ms, extra_ready);
	drain(t);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int tfs_read(struct ks_engine *e, struct ks_engine_snapshot *s, struct ks_error *err)
{
	struct tfs_engine *t = (struct tfs_engine *)e;
	const struct ks_stat_anomalies *a;
	uint64_t klost;
	void *p;

	drain(t);
	if (t->failed)
		return ks_error_set(err, "%s", t->err.msg);
	if (t->oom)
		return ks_error_set(err, "out of memory while counting events");
	if (t->nexits > s->cap_exits) {
		p = realloc(s->exits, t->nexits * sizeof(*s->exits));
		if (!p)
			return ks_error_set(err, "out of memory");
		s->exits = p;
		s->cap_exits = t->nexits;
	}
	if (t->ntps > s->cap_tps) {
		p = realloc(s->tps, t->ntps * sizeof(*s->tps));
		if (!p)
			return ks_error_set(err, "out of memory");
		s->tps = p;
		s->cap_tps = t->ntps;
	}
	if (t->nexits)
		memcpy(s->exits, t->exits, t->nexits * sizeof(*s->exits));
	if (t->ntps)
		memcpy(s->tps, t->tps, t->ntps * sizeof(*s->tps));
	s->nexits = t->nexits;
	s->ntps = t->ntps;
	snprintf(s->engine, sizeof(s->engine), "tracefs");
	note_isa(t);
	snprintf(s->arch, sizeof(s->arch), "%s", t->arch);
	snprintf(s->isa, sizeof(s->isa), "%s", t->isa_name);
	s->overflow_threads = 0;
	s->overflow_series = t->overflow_series;
	s->overflow_procs = t->overflow_procs;
	/* the kernel's count (every CPU's overrun and dropped) covers the
	 * LOST records the stream carries; the larger of the two */
	klost = ks_live_kernel_lost(t->live);
	s->lost = klost > t->lost_records ? klost : t->lost_records;
	a = ks_stat_anomalies(t->st);
	s->unpaired = t->unpaired_before + a->end_without_begin;
	s->ts_ns = mono_ns();
	return 0;
}

static void tfs_close(struct ks_engine *e)
{
	struct tfs_engine *t = (struct tfs_engine *)e;

	ks_stat_free(t->st);
	ks_vcpu_ctx_free(&t->vctx);
	if (t->src)
		ks_source_close(t->src);
	ks_live_destroy(t->live);
	free(t->exits);
	free(t->tps);
	ks_hmap_free(&t->series);
	ks_hmap_free(&t->tp_map);
	ks_hmap_free(&t->procs);
	free(t);
}

static const struct ks_engine_ops tfs_ops = {
	.name = "tracefs",
	.wait = tfs_wait,
	.read = tfs_read,
	.close = tfs_close,
};

int ks_engine_tracefs_open(struct ks_engine **out, const struct ks_engine_config *cfg,
			   struct ks_error *err)
{
	static const char *const all_kvm[] = { "kvm:*" };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct tfs_engine *t;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ks_error_set(err, "out of memory");
	t->base.ops = &tfs_ops;
	t->cfg = *cfg;
	if (!t->cfg.max_series)
		t->cfg.max_series = 65536;
	if (!t->cfg.max_procs)
		t->cfg.max_procs = 1024;
	ks_hmap_init_wide(&t->series, 3, sizeof(uint32_t));
	ks_hmap_init_wide(&t->tp_map, 2, sizeof(uint32_t));
	ks_hmap_init(&t->procs, 1);
	ks_vcpu_ctx_init(&t->vctx, NULL, 0);
	/* the tracepoint view wants every kvm:* event (they include the
	 * exit and entry events of x86); else the architecture's KVM set */
	if (cfg->tracepoints) {
		o.events = all_kvm;
		o.nevents = 1;
	}
	if (cfg->pid > 0) {
		o.pids = &t->cfg.pid;
		o.npids = 1;
	}
	o.clock = "mono";
	o.buffer_kb = cfg->buffer_kb ? cfg->buffer_kb : 4096;
	o.track = cfg->track;
	o.track_ctx = cfg->track_ctx;
	if (ks_live_create(&t->live, &o, err) < 0)
		goto fail;
	if (ks_live_source_open(&t->src, t->live, err) < 0)
		goto fail;
	t->st = new_stat(t, err);
	if (!t->st)
		goto fail;
	t->vctx.arch = ks_arch_by_name(ks_stat_arch_name(t->st));
	note_isa(t);
	if (ks_live_start(t->live, err) < 0)
		goto fail;
	*out = &t->base;
	return 0;
fail:
	tfs_close(&t->base);
	return -1;
}
