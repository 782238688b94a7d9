/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics.c - cumulative exit metrics behind `kvmscope exporter` (see metrics.h).
 *
 * The stat engine (stat.h) runs with one view, VM + vCPU + reason, and no
 * histograms of its own; its on_occurrence hook hands every measured exit
 * (the row it was counted in, and its time) to this file, which adds it to
 * dense arrays: VMs, reason names, counter series and histograms.  Hash
 * tables (util/hashmap.h) map keys to indexes into them.  A snapshot is a copy of the
 * arrays.
 *
 * A long-running exporter renews the stat engine now and then (rotate_records)
 * so that its per-thread and per-row state does not grow with every thread
 * and VM that ever ran: as top.c does between intervals, each host thread's
 * last entry event and the KVM events after it are kept and fed to the new
 * engine first, so an exit pending at the renewal is counted once.  VMs
 * whose process is gone (vm_alive) and had no exit since the last renewal
 * are dropped then with their series.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "util/buf.h"
#include "util/hashmap.h"
#include "util/text.h"
#include "vcpu_ctx.h"
#include "kvmscope/engine.h"
#include "kvmscope/metrics.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"

#define NONE UINT32_MAX
#define VCPU_OTHER (-2)

/* The index stored under KEY (of the table's width), or NONE. */
static uint32_t map_get(const struct ks_hmap *h, const uint64_t *key)
{
	const uint32_t *v = ks_hmap_get_wide(h, key);

	return v ? *v : NONE;
}

static int map_put(struct ks_hmap *h, const uint64_t *key, uint32_t idx)
{
	bool created;
	uint32_t *v = ks_hmap_put_wide(h, key, &created);

	if (!v)
		return -1;
	*v = idx;
	return 0;
}

/* The keys: a VM by its pid; a reason by the stat row's key and its
 * (table, info); a series by (VM << 32 | reason, vCPU); a histogram by
 * VM << 32 | reason. */
#define VM_KEY(pid) { (uint64_t)(int64_t)(pid) }
#define PAIR_KEY(vm, reason) ((uint64_t)(vm) << 32 | (reason))

/* ks_grow() (util/buf.h) as an expression: the array, or NULL. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	return ks_grow(&p, cap, need, size) < 0 ? NULL : p;
}

struct ks_metrics {
	struct ks_metrics_config cfg;
	struct ks_stat *st;
	struct ks_source *src;
	struct ks_vcpu_ctx vctx;    /* each vCPU's events since its entry (the arch of
				     * the stat engine: its entry events) */
	uint64_t since_rotation;
	bool *vm_active;            /* per VM: exits since the last renewal */
	size_t cap_active;
	struct ks_metrics_vm *vms;
	size_t nvms, cap_vms;
	char (*reasons)[48];
	bool *halt;                 /* per reason */
	size_t nreasons, cap_reasons, cap_halt;
	struct ks_metrics_series *series;
	size_t nseries, cap_series;
	struct ks_metrics_hist *hists;
	size_t nhists, cap_hists;
	struct ks_hmap vm_map, reason_map, series_map, hist_map; /* -> index */
	uint32_t other_vm, other_reason, other_series, other_hist;
	uint64_t records, lost, folded, last_ts;
	uint64_t anomalies[3];      /* of earlier stat engines (restarts) */
	char arch[16], isa[16];
	uint64_t engine_adds;       /* ks_metrics_add_engine() calls */
	bool oom;
};

static uint32_t add_vm(struct ks_metrics *m, int32_t pid, const char *domain)
{
	struct ks_metrics_vm *v = grow(m->vms, &m->cap_vms, m->nvms + 1, sizeof(*v));

	if (!v)
		return NONE;
	m->vms = v;
	if (m->nvms + 1 > m->cap_active) {
		size_t ncap = m->cap_active ? m->cap_active * 2 : 64;
		bool *a = realloc(m->vm_active, ncap * sizeof(*a));
		if (!a)
			return NONE;
		memset(a + m->cap_active, 0, (ncap - m->cap_active) * sizeof(*a));
		m->vm_active = a;
		m->cap_active = ncap;
	}
	m->vm_active[m->nvms] = true;
	v = &m->vms[m->nvms];
	v->pid = pid;
	ks_utf8_copy(v->domain, sizeof(v->domain), domain);
	return (uint32_t)m->nvms++;
}

static bool domain_used(const struct ks_metrics *m, const char *d)
{
	size_t i;

	for (i = 0; i < m->nvms; i++)
		if (!strcmp(m->vms[i].domain, d))
			return true;
	return false;
}

/* The domain of PID: the caller's name for it, the input's guest name,
 * else the pid (a name taken by another VM gets "-PID" appended). */
static void vm_domain(struct ks_metrics *m, int32_t pid, char *out, size_t len)
{
	char name[64] = "";
	const char *g;

	if (pid < 0) {
		snprintf(out, len, "unknown");
		return;
	}
	if (m->cfg.vm_name && !m->cfg.vm_name(m->cfg.vm_name_ctx, pid, name, sizeof(name)))
		name[0] = 0;
	if (!name[0] && !m->cfg.vm_name && m->st && (g = ks_stat_vm_name(m->st, pid))) {
		/* a guest name (trace.dat GUEST option), not the process's
		 * name (its COMM, e.g. "qemu-system-x86") */
		const char *comm = ks_stat_comm(m->st, pid);
		if ((!comm || strcmp(comm, g)) && strncmp(g, "qemu", 4) && strncmp(g, "kvm", 3))
			ks_utf8_copy(name, sizeof(name), g);
	}
	if (!name[0]) {
		snprintf(out, len, "%d", pid);
	} else if (domain_used(m, name)) {
		/* NAME-PID, NAME cut on a character boundary to fit */
		char suffix[16];
		size_t n = strlen(name), sl = (size_t)snprintf(suffix, sizeof(suffix), "-%d", pid);

		n = ks_utf8_cut(name, n, len - 1 - sl);
		snprintf(out, len, "%.*s%s", (int)n, name, suffix);
	} else {
		ks_utf8_copy(out, len, name);
	}
}

static uint32_t vm_index(struct ks_metrics *m, int32_t pid)
{
	uint64_t key[1] = VM_KEY(pid);
	uint32_t i = map_get(&m->vm_map, key);
	char domain[64];

	if (i != NONE)
		return i;
	if (m->nvms >= m->cfg.max_vms)
		return NONE;
	vm_domain(m, pid, domain, sizeof(domain));
	i = add_vm(m, pid, domain);
	if (i == NONE || map_put(&m->vm_map, key, i) < 0) {
		m->oom = true;
		return NONE;
	}
	return i;
}

/* HALT: the architecture's table says the reason halts the vCPU. */
static uint32_t add_reason(struct ks_metrics *m, const char *name, bool halt)
{
	char(*r)[48] = grow(m->reasons, &m->cap_reasons, m->nreasons + 1, sizeof(*r));
	bool *h;

	if (!r)
		return NONE;
	m->reasons = r;
	h = grow(m->halt, &m->cap_halt, m->nreasons + 1, sizeof(*h));
	if (!h)
		return NONE;
	m->halt = h;
	snprintf(m->reasons[m->nreasons], sizeof(m->reasons[0]), "%s", name);
	m->halt[m->nreasons] = halt;
	return (uint32_t)m->nreasons++;
}

#define MAX_REASONS 4096

static uint32_t reason_index(struct ks_metrics *m, const struct ks_stat_row *row)
{
	uint64_t key[2] = { row->key, (uint64_t)(uint32_t)row->table << 32 | (uint32_t)row->info };
	uint32_t i = map_get(&m->reason_map, key);
	char name[64];

	if (i != NONE)
		return i;
	if (m->nreasons >= MAX_REASONS)
		return NONE;
	ks_stat_key_name(m->st, row, false, name, sizeof(name));
	i = add_reason(m, name, ks_stat_row_halts(m->st, row));
	if (i == NONE || map_put(&m->reason_map, key, i) < 0) {
		m->oom = true;
		return NONE;
	}
	return i;
}

static uint32_t new_series(struct ks_metrics *m, uint32_t vm, int32_t vcpu, uint32_t reason)
{
	struct ks_metrics_series *s = grow(m->series, &m->cap_series, m->nseries + 1, sizeof(*s));

	if (!s)
		return NONE;
	m->series = s;
	s = &m->series[m->nseries];
	memset(s, 0, sizeof(*s));
	s->vm = vm;
	s->vcpu = vcpu;
	s->reason = reason;
	return (uint32_t)m->nseries++;
}

static uint32_t new_hist(struct ks_metrics *m, uint32_t vm, uint32_t reason)
{
	struct ks_metrics_hist *h = grow(m->hists, &m->cap_hists, m->nhists + 1, sizeof(*h));

	if (!h)
		return NONE;
	m->hists = h;
	h = &m->hists[m->nhists];
	memset(h, 0, sizeof(*h));
	h->vm = vm;
	h->reason = reason;
	h->halt = reason < m->nreasons && m->halt[reason];
	return (uint32_t)m->nhists++;
}

/* The "other" VM, reason, series and histogram, made on the first fold. */
static int make_other(struct ks_metrics *m)
{
	if (m->other_series != NONE)
		return 0;
	if (m->other_vm == NONE && (m->other_vm = add_vm(m, -1, "other")) == NONE)
		return -1;
	if (m->other_reason == NONE && (m->other_reason = add_reason(m, "other", false)) == NONE)
		return -1;
	if (m->other_hist == NONE &&
	    (m->other_hist = new_hist(m, m->other_vm, m->other_reason)) == NONE)
		return -1;
	m->other_series = new_series(m, m->other_vm, VCPU_OTHER, m->other_reason);
	return m->other_series == NONE ? -1 : 0;
}

static void count_in(struct ks_metrics_series *s, struct ks_metrics_hist *h, uint64_t ns)
{
	s->count++;
	s->total_ns += ns;
	h->count++;
	h->sum_ns += ns;
	h->bucket[ks_lat_bucket_of(ns)]++; /* the live engines' rule too */
}

static void on_exit_measured(void *ctx, const struct ks_stat_row *row, uint64_t ns)
{
	struct ks_metrics *m = ctx;
	uint32_t vm = vm_index(m, row->vm), reason = NONE, si = NONE, hi = NONE;

	if (vm != NONE)
		reason = reason_index(m, row);
	if (reason != NONE) {
		uint64_t skey[2] = { PAIR_KEY(vm, reason), (uint64_t)(uint32_t)row->vcpu };

		si = map_get(&m->series_map, skey);
		if (si == NONE && m->nseries < m->cfg.max_series) {
			si = new_series(m, vm, row->vcpu, reason);
			if (si != NONE && map_put(&m->series_map, skey, si) < 0)
				m->oom = true;
		}
		hi = map_get(&m->hist_map, skey); /* its first word */
		if (hi == NONE && m->nhists < m->cfg.max_histograms) {
			hi = new_hist(m, vm, reason);
			if (hi != NONE && map_put(&m->hist_map, skey, hi) < 0)
				m->oom = true;
		}
	}
	if (si == NONE || hi == NONE) {
		/* Fold the whole exit, so that series and histograms agree. */
		if (make_other(m) < 0) {
			m->oom = true;
			return;
		}
		si = m->other_series;
		hi = m->other_hist;
		m->folded++;
	}
	count_in(&m->series[si], &m->hists[hi], ns);
	if (vm != NONE && vm < m->cap_active)
		m->vm_active[vm] = true;
}

static struct ks_stat *new_stat(struct ks_metrics *m, struct ks_source *src, struct ks_error *err)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;

	cfg.views[0] = KS_DIM_VM | KS_DIM_VCPU | KS_DIM_KEY;
	cfg.views[1] = 0;
	cfg.no_histograms = true;
	cfg.no_begin_counts = true;
	cfg.on_occurrence = on_exit_measured;
	cfg.on_occurrence_ctx = m;
	return ks_stat_new_source(&cfg, src, err);
}

static void note_arch(struct ks_metrics *m)
{
	const char *isa, *arch;

	if (!m->st)
		return; /* fed by a live engine: its snapshots say */
	isa = ks_stat_isa_name(m->st);
	arch = ks_stat_arch_name(m->st);

	if (arch)
		snprintf(m->arch, sizeof(m->arch), "%s", arch);
	if (isa && strcmp(isa, "unknown"))
		snprintf(m->isa, sizeof(m->isa), "%s", isa);
}

/* A thread the caller says is gone (config.vm_alive) need not be kept. */
static bool thread_alive(void *arg, int32_t tid)
{
	const struct ks_metrics *m = arg;

	return m->cfg.vm_alive(m->cfg.vm_name_ctx, tid);
}

/* Drop the VMs that are gone and had no exit since the last renewal,
 * with their series and histograms; indexes are renumbered. */
static int evict_vms(struct ks_metrics *m)
{
	uint32_t *remap, j = 0;
	size_t i, k;

	if (!m->cfg.vm_alive)
		return 0;
	remap = malloc((m->nvms + 1) * sizeof(*remap));
	if (!remap)
		return -1;
	for (i = 0; i < m->nvms; i++) {
		bool keep = m->vm_active[i] || m->vms[i].pid < 0 || (uint32_t)i == m->other_vm ||
			    m->cfg.vm_alive(m->cfg.vm_name_ctx, m->vms[i].pid);
		remap[i] = keep ? j : NONE;
		if (keep) {
			m->vms[j] = m->vms[i];
			j++;
		}
	}
	if (j == m->nvms) {
		free(remap);
		memset(m->vm_active, 0, m->cap_active * sizeof(*m->vm_active));
		return 0;
	}
	m->nvms = j;
	if (m->other_vm != NONE)
		m->other_vm = remap[m->other_vm];
	for (i = k = 0; i < m->nseries; i++) {
		if (remap[m->series[i].vm] == NONE)
			continue;
		if ((uint32_t)i == m->other_series)
			m->other_series = (uint32_t)k;
		m->series[k] = m->series[i];
		m->series[k++].vm = remap[m->series[i].vm];
	}
	m->nseries = k;
	for (i = k = 0; i < m->nhists; i++) {
		if (remap[m->hists[i].vm] == NONE)
			continue;
		if ((uint32_t)i == m->other_hist)
			m->other_hist = (uint32_t)k;
		m->hists[k] = m->hists[i];
		m->hists[k++].vm = remap[m->hists[i].vm];
	}
	m->nhists = k;
	free(remap);
	/* rebuild the maps */
	ks_hmap_free(&m->vm_map);
	ks_hmap_free(&m->series_map);
	ks_hmap_free(&m->hist_map);
	for (i = 0; i < m->nvms; i++) {
		uint64_t key[1] = VM_KEY(m->vms[i].pid);

		if ((uint32_t)i != m->other_vm && map_put(&m->vm_map, key, (uint32_t)i) < 0)
			return -1;
	}
	for (i = 0; i < m->nseries; i++) {
		uint64_t key[2] = { PAIR_KEY(m->series[i].vm, m->series[i].reason),
				    (uint64_t)(uint32_t)m->series[i].vcpu };

		if ((uint32_t)i != m->other_series && map_put(&m->series_map, key, (uint32_t)i) < 0)
			return -1;
	}
	for (i = 0; i < m->nhists; i++) {
		uint64_t key[1] = { PAIR_KEY(m->hists[i].vm, m->hists[i].reason) };

		if ((uint32_t)i != m->other_hist && map_put(&m->hist_map, key, (uint32_t)i) < 0)
			return -1;
	}
	memset(m->vm_active, 0, m->cap_active * sizeof(*m->vm_active));
	return 0;
}

static void keep_anomalies(struct ks_metrics *m);
static struct ks_stat *new_stat(struct ks_metrics *m, struct ks_source *src, struct ks_error *err);

int ks_metrics_rotate(struct ks_metrics *m, struct ks_error *err)
{
	struct ks_stat *st = new_stat(m, m->src, err);

	if (!st)
		return -1;
	keep_anomalies(m);
	ks_stat_free(m->st);
	m->st = st;
	m->since_rotation = 0;
	if (ks_vcpu_ctx_prune(&m->vctx, m->cfg.vm_alive ? thread_alive : NULL, m) < 0)
		m->oom = true;
	if (evict_vms(m) < 0) {
		m->oom = true;
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	ks_vcpu_ctx_replay(&m->vctx, m->st);
	return 0;
}

/* A metrics table with CFG's caps (defaults for 0) and no input yet. */
static struct ks_metrics *metrics_alloc(const struct ks_metrics_config *cfg,
					struct ks_error *err)
{
	struct ks_metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (cfg)
		m->cfg = *cfg;
	if (!m->cfg.max_vms)
		m->cfg.max_vms = 1024;
	if (!m->cfg.max_series)
		m->cfg.max_series = 65536;
	if (!m->cfg.max_histograms)
		m->cfg.max_histograms = 16384;
	m->other_vm = m->other_reason = m->other_series = m->other_hist = NONE;
	ks_vcpu_ctx_init(&m->vctx, NULL, 0);
	ks_hmap_init(&m->vm_map, sizeof(uint32_t));
	ks_hmap_init_wide(&m->reason_map, 2, sizeof(uint32_t));
	ks_hmap_init_wide(&m->series_map, 2, sizeof(uint32_t));
	ks_hmap_init(&m->hist_map, sizeof(uint32_t));
	return m;
}

struct ks_metrics *ks_metrics_new(const struct ks_metrics_config *cfg, struct ks_source *src,
				  struct ks_error *err)
{
	struct ks_metrics *m = metrics_alloc(cfg, err);

	if (!m)
		return NULL;
	m->src = src;
	m->st = new_stat(m, src, err);
	if (!m->st) {
		free(m);
		return NULL;
	}
	note_arch(m);
	m->vctx.arch = ks_arch_by_name(ks_stat_arch_name(m->st));
	return m;
}

void ks_metrics_add(struct ks_metrics *m, const struct ks_record *rec)
{
	m->records++;
	if (rec->ts > m->last_ts)
		m->last_ts = rec->ts;
	if (rec->type == KS_REC_LOST)
		m->lost += rec->lost ? rec->lost : 1;
	ks_stat_add(m->st, rec);
	if (!m->isa[0] && rec->type == KS_REC_EVENT && (m->records & 1023) == 1)
		note_arch(m);
	if (m->cfg.rotate_records) {
		if (ks_vcpu_ctx_note(&m->vctx, rec) < 0)
			m->oom = true;
		if (++m->since_rotation >= m->cfg.rotate_records) {
			struct ks_error err;
			if (ks_metrics_rotate(m, &err) < 0)
				m->oom = true;
		}
	}
}

static void keep_anomalies(struct ks_metrics *m)
{
	const struct ks_stat_anomalies *a = ks_stat_anomalies(m->st);

	m->anomalies[0] += a->end_without_begin;
	m->anomalies[1] += a->begin_replaced;
	m->anomalies[2] += a->end_before_begin;
}

int ks_metrics_restart(struct ks_metrics *m, struct ks_source *src, struct ks_error *err)
{
	struct ks_stat *st = new_stat(m, src, err);

	if (!st)
		return -1;
	note_arch(m);
	keep_anomalies(m);
	ks_stat_free(m->st);
	m->st = st;
	m->src = src;
	ks_vcpu_ctx_reset(&m->vctx, ks_arch_by_name(ks_stat_arch_name(m->st)));
	m->since_rotation = 0;
	return 0;
}

void ks_metrics_zero(struct ks_metrics *m)
{
	size_t i;

	for (i = 0; i < m->nseries; i++)
		m->series[i].count = m->series[i].total_ns = 0;
	for (i = 0; i < m->nhists; i++) {
		bool halt = m->hists[i].halt;
		uint32_t vm = m->hists[i].vm, reason = m->hists[i].reason;
		memset(&m->hists[i], 0, sizeof(m->hists[i]));
		m->hists[i].vm = vm;
		m->hists[i].reason = reason;
		m->hists[i].halt = halt;
	}
	m->records = m->lost = m->folded = m->last_ts = 0;
	memset(m->anomalies, 0, sizeof(m->anomalies));
}

static int copy_out(void **dst, size_t *cap, const void *src, size_t n, size_t size)
{
	void *p = grow(*dst, cap, n ? n : 1, size);

	if (!p)
		return -1;
	*dst = p;
	if (n)
		memcpy(p, src, n * size);
	return 0;
}

int ks_metrics_snapshot(const struct ks_metrics *cm, struct ks_metrics_snapshot *s,
			struct ks_error *err)
{
	struct ks_metrics *m = (struct ks_metrics *)cm;
	static const struct ks_stat_anomalies none;
	const struct ks_stat_anomalies *a = m->st ? ks_stat_anomalies(m->st) : &none;

	if (m->oom)
		return ks_error_code(err, KS_E_NOMEM, "out of memory while counting exits");
	note_arch(m);
	if (copy_out((void **)&s->vms, &s->cap_vms, m->vms, m->nvms, sizeof(*m->vms)) < 0 ||
	    copy_out((void **)&s->reasons, &s->cap_reasons, m->reasons, m->nreasons,
		     sizeof(*m->reasons)) < 0 ||
	    copy_out((void **)&s->series, &s->cap_series, m->series, m->nseries,
		     sizeof(*m->series)) < 0 ||
	    copy_out((void **)&s->hists, &s->cap_hists, m->hists, m->nhists, sizeof(*m->hists)) < 0)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	s->nvms = m->nvms;
	s->nreasons = m->nreasons;
	s->nseries = m->nseries;
	s->nhists = m->nhists;
	snprintf(s->arch, sizeof(s->arch), "%s", m->arch);
	snprintf(s->isa, sizeof(s->isa), "%s", m->isa);
	s->records = m->records;
	s->lost_events = m->lost;
	s->folded_exits = m->folded;
	s->end_without_begin = m->anomalies[0] + a->end_without_begin;
	s->begin_replaced = m->anomalies[1] + a->begin_replaced;
	s->end_before_begin = m->anomalies[2] + a->end_before_begin;
	s->last_ts = m->last_ts;
	return 0;
}

void ks_metrics_snapshot_free(struct ks_metrics_snapshot *s)
{
	if (!s)
		return;
	free(s->vms);
	free(s->reasons);
	free(s->series);
	free(s->hists);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* fed by a live engine (engine.h) */

struct ks_metrics *ks_metrics_new_engine(const struct ks_metrics_config *cfg,
					 struct ks_error *err)
{
	struct ks_metrics *m = metrics_alloc(cfg, err);

	if (m)
		m->cfg.rotate_records = 0;
	return m;
}

/* The reason of engine series X, by its code and table (ISA). */
static uint32_t engine_reason(struct ks_metrics *m, const char *arch,
			      const struct ks_engine_exit *x)
{
	uint64_t key[2] = { x->reason, (uint64_t)x->isa << 32 };
	uint32_t i = map_get(&m->reason_map, key);
	char name[64];
	bool halts;

	if (i != NONE)
		return i;
	if (m->nreasons >= MAX_REASONS)
		return NONE;
	ks_engine_reason_name(arch, x, name, sizeof(name), &halts);
	i = add_reason(m, name, halts);
	if (i == NONE || map_put(&m->reason_map, key, i) < 0) {
		m->oom = true;
		return NONE;
	}
	return i;
}

/* Deltas between two evictions of the VMs that are gone (a live exporter
 * adds one every 250 ms: about a minute). */
#define ENGINE_EVICT_EVERY 240

void ks_metrics_add_engine(struct ks_metrics *m, const struct ks_engine_snapshot *delta,
			   uint64_t events)
{
	size_t i;
	unsigned b;

	if (delta->arch[0])
		snprintf(m->arch, sizeof(m->arch), "%s", delta->arch);
	if (delta->isa[0])
		snprintf(m->isa, sizeof(m->isa), "%s", delta->isa);
	m->records += events;
	m->lost += delta->lost;
	for (i = 0; i < delta->nexits; i++) {
		const struct ks_engine_exit *x = &delta->exits[i];
		uint32_t vm = vm_index(m, x->pid), reason = NONE, si = NONE, hi = NONE;
		struct ks_metrics_series *s;
		struct ks_metrics_hist *h;

		if (vm != NONE)
			reason = engine_reason(m, delta->arch, x);
		if (reason != NONE) {
			uint64_t skey[2] = { PAIR_KEY(vm, reason), (uint64_t)(uint32_t)x->vcpu };

			si = map_get(&m->series_map, skey);
			if (si == NONE && m->nseries < m->cfg.max_series) {
				si = new_series(m, vm, x->vcpu, reason);
				if (si != NONE && map_put(&m->series_map, skey, si) < 0)
					m->oom = true;
			}
			hi = map_get(&m->hist_map, skey);
			if (hi == NONE && m->nhists < m->cfg.max_histograms) {
				hi = new_hist(m, vm, reason);
				if (hi != NONE && map_put(&m->hist_map, skey, hi) < 0)
					m->oom = true;
			}
		}
		if (si == NONE || hi == NONE) {
			if (make_other(m) < 0) {
				m->oom = true;
				return;
			}
			si = m->other_series;
			hi = m->other_hist;
			m->folded += x->count;
		}
		s = &m->series[si];
		h = &m->hists[hi];
		s->count += x->count;
		s->total_ns += x->sum_ns;
		h->count += x->count;
		h->sum_ns += x->sum_ns;
		for (b = 0; b <= KS_LAT_NBUCKETS; b++)
			h->bucket[b] += x->bucket[b];
		if (vm != NONE && vm < m->cap_active)
			m->vm_active[vm] = true;
	}
	/* now and then, as a rotation would: the VMs gone and idle since */
	if (++m->engine_adds % ENGINE_EVICT_EVERY == 0 && evict_vms(m) < 0)
		m->oom = true;
}

void ks_metrics_free(struct ks_metrics *m)
{
	if (!m)
		return;
	if (m->st)
		ks_stat_free(m->st);
	free(m->vms);
	free(m->reasons);
	free(m->halt);
	free(m->series);
	free(m->hists);
	ks_hmap_free(&m->vm_map);
	ks_hmap_free(&m->reason_map);
	ks_hmap_free(&m->series_map);
	ks_hmap_free(&m->hist_map);
	ks_vcpu_ctx_free(&m->vctx);
	free(m->vm_active);
	free(m);
}
