/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * merge.c - a host trace and its guests' traces as one stream in host time
 * (see merge.h).  Used by `kvmscope merge` and `kvmscope timeline`.
 *
 * Each input is a ks_source; the next record of every input is held and the
 * one with the smallest host time goes out (ties: the input given first).
 * Guest timestamps are recomputed from the records' raw counter values with
 * a ks_timesync (TimeShift, or kvm_write_tsc_offset events found by a first
 * pass over the host trace), then converted to nanoseconds.  The host
 * input's records also build the host model (host.h) as they go out.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/merge.h"
#include "kvmscope/source.h"

/* A host vCPU thread, for the sync checks. */
struct vthread {
	int32_t tid;
	int guest;            /* input index of its guest */
	bool in_guest;
	bool seen_exit;
	uint64_t last_exit;
	uint64_t *pending;    /* guest events seen while outside the guest */
	uint32_t nr_pending, cap_pending;
};

struct input {
	char *path;
	char *name;
	struct ks_source *src;
	const struct ks_source_clock *clock;
	struct ks_record rec;
	bool has;
	/* guests */
	struct ks_timesync *sync;
	const struct ks_source_clock *ns_clock; /* whose TSC2NSEC converts host raw */
	bool to_ns;
	uint32_t nr_vcpus;
	int32_t *vcpu_tid;    /* [nr_vcpus] host thread, -1 unknown */
	int32_t *vcpu_vt;     /* [nr_vcpus] index in vthreads, -1 */
};

struct ks_merge {
	struct ks_merge_opts opts;
	int n;
	struct input *in;
	struct vthread *vt;
	uint32_t nr_vt;
	struct tep_event *kvm_entry, *kvm_exit;
	struct ks_host *host; /* the host input's threads -> VM, vCPU */
	int last;             /* input whose record went out last */
	bool have_host_first;
	uint64_t host_first;
	struct ks_merge_quality q;
};

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* "PATH@NAME": split at the last '@' if what follows is not a path. */
static int split_spec(struct input *in, const char *spec)
{
	const char *at = strrchr(spec, '@');

	if (at && at[1] && !strchr(at, '/')) {
		in->path = strndup(spec, (size_t)(at - spec));
		in->name = strdup(at + 1);
	} else {
		in->path = strdup(spec);
		in->name = in->path ? strdup(base_name(in->path)) : NULL;
	}
	return in->path && in->name ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* guests: vCPU threads and time sync */

static const struct ks_source_guest *find_guest(const struct ks_merge *m,
						const struct input *g)
{
	const struct ks_source_guest *hg;
	size_t i, n = ks_source_guests(m->in[0].src, &hg);

	for (i = 0; i < n; i++)
		if (g->clock->has_trace_id && hg[i].trace_id == g->clock->trace_id)
			return &hg[i];
	for (i = 0; i < n; i++)
		if (hg[i].name && !strcmp(hg[i].name, g->name))
			return &hg[i];
	return NULL;
}

static int vthread_index(struct ks_merge *m, int32_t tid, int guest)
{
	uint32_t i;
	struct vthread *v;

	for (i = 0; i < m->nr_vt; i++)
		if (m->vt[i].tid == tid)
			return (int)i;
	v = realloc(m->vt, (m->nr_vt + 1) * sizeof(*v));
	if (!v)
		return -1;
	m->vt = v;
	memset(&v[m->nr_vt], 0, sizeof(*v));
	v[m->nr_vt].tid = tid;
	v[m->nr_vt].guest = guest;
	return (int)m->nr_vt++;
}

static int map_vcpus(struct ks_merge *m, int gi, struct ks_error *err)
{
	struct input *g = &m->in[gi];
	const struct ks_source_guest *hg = find_guest(m, g);
	const struct ks_source_info *info = ks_source_info(g->src);
	uint32_t n = hg ? hg->nr_vcpus : 0, v;

	if (info->nr_cpus > 0 && (uint32_t)info->nr_cpus > n)
		n = (uint32_t)info->nr_cpus;
	if (n > 4096)
		n = 4096;
	g->nr_vcpus = n;
	g->vcpu_tid = malloc((n ? n : 1) * sizeof(int32_t));
	g->vcpu_vt = malloc((n ? n : 1) * sizeof(int32_t));
	if (!g->vcpu_tid || !g->vcpu_vt)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (v = 0; v < n; v++)
		g->vcpu_tid[v] = g->vcpu_vt[v] = -1;
	for (v = 0; hg && v < hg->nr_vcpus; v++) {
		uint32_t cpu = hg->vcpus[v].vcpu;
		if (cpu >= n)
			continue;
		g->vcpu_tid[cpu] = (int32_t)hg->vcpus[v].host_tid;
		g->vcpu_vt[cpu] = vthread_index(m, g->vcpu_tid[cpu], gi);
		if (g->vcpu_vt[cpu] < 0)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	return 0;
}

/* First pass over the host trace: its kvm_write_tsc_offset events. */
static int scan_tsc_offsets(struct ks_merge *m, struct ks_timesync *ts, struct ks_error *err)
{
	struct ks_source *src;
	struct ks_record rec;
	struct tep_event *ev = NULL;
	struct ks_field vcpu, prev, next;
	int r;

	/* the events' fields only: the host's symbols would be a second copy,
	 * and its events are met in its records */
	if (ks_source_open_opts(&src, m->in[0].path,
				&(struct ks_source_opts){ .flags = KS_OPEN_NO_SYMBOLS |
								   KS_OPEN_EVENTS_BY_RECORD,
							  .ctx = m->opts.ctx,
							  .limits = m->opts.limits }, err) < 0)
		return -1;
	while ((r = ks_source_next(src, &rec, err)) > 0) {
		if (rec.type != KS_REC_EVENT || !rec.event)
			continue;
		if (!ev) {
			if (strcmp(rec.event->name, "kvm_write_tsc_offset"))
				continue;
			ev = rec.event;
			ks_field_resolve(&vcpu, ev, "vcpu_id");
			ks_field_resolve(&prev, ev, "previous_tsc_offset");
			ks_field_resolve(&next, ev, "next_tsc_offset");
		}
		if (rec.event != ev)
			continue;
		if (ks_timesync_add_tsc_offset(ts, (uint32_t)ks_field_u64(&vcpu, &rec), rec.raw_ts,
					       ks_field_u64(&prev, &rec),
					       ks_field_u64(&next, &rec)) < 0) {
			r = ks_error_code(err, KS_E_NOMEM, "out of memory");
			break;
		}
	}
	ks_source_close(src);
	return r < 0 ? -1 : 0;
}

static int setup_sync(struct ks_merge *m, int gi, struct ks_error *err)
{
	struct input *g = &m->in[gi];
	uint32_t i;

	g->sync = ks_timesync_new();
	if (!g->sync)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	if (m->opts.no_sync)
		return 0;
	if (ks_source_timeshift(g->src)) {
		g->ns_clock = g->clock;      /* trace-cmd: the guest's own TSC2NSEC */
		g->to_ns = !g->clock->ts_ticks;
		return ks_timesync_use_timeshift(g->sync, ks_source_timeshift(g->src), err);
	}
	for (i = 0; i < m->opts.nr_offsets; i++)
		if (ks_timesync_set_fixed_offset(g->sync, m->opts.offsets[i].vcpu,
						 m->opts.offsets[i].offset) < 0)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
	if (!m->opts.nr_offsets && scan_tsc_offsets(m, g->sync, err) < 0)
		return -1;
	/* the offsets are host TSC ticks: the host's conversion applies */
	g->ns_clock = m->in[0].clock;
	g->to_ns = !m->in[0].clock->ts_ticks;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the stream */

static uint64_t guest_host_ts(const struct input *g, const struct ks_record *rec)
{
	uint64_t raw;

	if (ks_timesync_kind(g->sync) == KS_TSYNC_NONE)
		return rec->ts;
	raw = ks_timesync_to_host(g->sync, rec->cpu >= 0 ? (uint32_t)rec->cpu : 0, rec->raw_ts);
	return g->to_ns ? ks_timesync_tsc2nsec(g->ns_clock, raw) : raw;
}

static int pull(struct ks_merge *m, int i, struct ks_error *err)
{
	struct input *in = &m->in[i];
	int r = ks_source_next(in->src, &in->rec, err);

	if (r < 0)
		return -1;
	in->has = r > 0;
	if (in->has && i > 0)
		in->rec.ts = guest_host_ts(in, &in->rec);
	return 0;
}

static void resolve_kvm_events(struct ks_merge *m)
{
	struct tep_handle *tep = ks_source_tep(m->in[0].src);

	if (!tep)
		return;
	m->kvm_entry = ks_tep_event(tep, "kvm", "kvm_entry");
	m->kvm_exit = ks_tep_event(tep, "kvm", "kvm_exit");
}

int ks_merge_open(struct ks_merge **out, const char *const *specs, int n,
		  const struct ks_merge_opts *opts, struct ks_error *err)
{
	struct ks_merge *m = calloc(1, sizeof(*m));
	int i;

	*out = NULL;
	if (!m || n <= 0 || !(m->in = calloc((size_t)n, sizeof(*m->in)))) {
		free(m);
		return ks_error_set(err, n <= 0 ? "no input" : "out of memory");
	}
	m->n = n;
	m->last = -1;
	if (opts)
		m->opts = *opts;
	for (i = 0; i < n; i++) {
		if (split_spec(&m->in[i], specs[i]) < 0) {
			ks_merge_close(m);
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		}
		/* a guest's events are met in its records only (the host's
		 * tep is asked by name: kvm_entry, kvm_exit, the architecture) */
		if (ks_source_open_opts(&m->in[i].src, m->in[i].path,
					&(struct ks_source_opts){
						.flags = i ? KS_OPEN_EVENTS_BY_RECORD : 0,
						.ctx = m->opts.ctx,
						.limits = m->opts.limits }, err) < 0) {
			ks_merge_close(m);
			return -1;
		}
		m->in[i].clock = ks_source_clock(m->in[i].src);
	}
	resolve_kvm_events(m);
	m->host = ks_host_new(NULL, m->in[0].src, err);
	if (!m->host) {
		ks_merge_close(m);
		return -1;
	}
	ks_host_set_limits(m->host, ks_source_limits(m->in[0].src));
	for (i = 1; i < n; i++)
		if (map_vcpus(m, i, err) < 0 || setup_sync(m, i, err) < 0) {
			ks_merge_close(m);
			return -1;
		}
	for (i = 0; i < n; i++)
		if (pull(m, i, err) < 0) {
			ks_merge_close(m);
			return -1;
		}
	m->have_host_first = m->in[0].has;
	m->host_first = m->in[0].rec.ts;
	*out = m;
	return 0;
}

static void free_input(struct input *in)
{
	free(in->path);
	free(in->name);
	if (in->src)
		ks_source_close(in->src);
	ks_timesync_free(in->sync);
	free(in->vcpu_tid);
	free(in->vcpu_vt);
}

void ks_merge_close(struct ks_merge *m)
{
	int i;
	uint32_t t;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free_input(&m->in[i]);
	ks_host_free(m->host);
	for (t = 0; t < m->nr_vt; t++)
		free(m->vt[t].pending);
	free(m->vt);
	free(m->in);
	free(m);
}

/* ------------------------------------------------------------------ */
/* sync checks */

static void note_outside(struct ks_merge *m, const struct vthread *v, uint64_t ts,
			 uint64_t dist)
{
	if (dist == 0)
		return;
	m->q.outside++;
	if (dist > m->q.worst_ns) {
		m->q.worst_ns = dist;
		m->q.worst_ts = ts;
		m->q.worst_input = v->guest;
	}
}

/* The guest events that waited for this thread's next kvm_entry at ENTRY
 * (or for the end of the trace when ENTRY is 0). */
static void settle_pending(struct ks_merge *m, struct vthread *v, uint64_t entry, bool at_end)
{
	uint32_t i;

	for (i = 0; i < v->nr_pending; i++) {
		uint64_t ts = v->pending[i];
		uint64_t to_exit = v->seen_exit ? ts - v->last_exit : UINT64_MAX;
		uint64_t to_entry = at_end ? UINT64_MAX : entry - ts;
		uint64_t dist = to_exit < to_entry ? to_exit : to_entry;
		note_outside(m, v, ts, dist == UINT64_MAX ? 0 : dist);
	}
	v->nr_pending = 0;
}

static void check_host(struct ks_merge *m, const struct ks_record *rec)
{
	uint32_t i;

	if (!rec->event || (rec->event != m->kvm_entry && rec->event != m->kvm_exit))
		return;
	for (i = 0; i < m->nr_vt; i++) {
		struct vthread *v = &m->vt[i];
		if (v->tid != rec->tid)
			continue;
		if (rec->event == m->kvm_entry) {
			settle_pending(m, v, rec->ts, false);
			v->in_guest = true;
		} else {
			v->in_guest = false;
			v->seen_exit = true;
			v->last_exit = rec->ts;
		}
		return;
	}
}

static void check_guest(struct ks_merge *m, const struct input *g, const struct ks_merge_rec *r)
{
	struct vthread *v;

	if (r->vcpu < 0 || (uint32_t)r->vcpu >= g->nr_vcpus || g->vcpu_vt[r->vcpu] < 0)
		return;
	if (r->rec->type != KS_REC_EVENT)
		return;
	v = &m->vt[g->vcpu_vt[r->vcpu]];
	m->q.checked++;
	if (!m->have_host_first || r->rec->ts < m->host_first) {
		m->q.before_host++;
		return;
	}
	if (v->in_guest || (v->seen_exit && r->rec->ts == v->last_exit))
		return;
	if (v->nr_pending == v->cap_pending) {
		uint32_t cap = v->cap_pending ? v->cap_pending * 2 : 64;
		uint64_t *p = realloc(v->pending, cap * sizeof(*p));
		if (!p) {
			note_outside(m, v, r->rec->ts, 1);
			return;
		}
		v->pending = p;
		v->cap_pending = cap;
	}
	v->pending[v->nr_pending++] = r->rec->ts;
}

int ks_merge_next(struct ks_merge *m, struct ks_merge_rec *r, struct ks_error *err)
{
	int i, best = -1;
	struct input *in;

	/* the input that went out last time moves on only now, so that its
	 * record stayed valid until this call */
	if (m->last >= 0 && pull(m, m->last, err) < 0)
		return -1;
	m->last = -1;
	for (i = 0; i < m->n; i++)
		if (m->in[i].has && (best < 0 || m->in[i].rec.ts < m->in[best].rec.ts))
			best = i;
	if (best < 0)
		return 0;
	in = &m->in[best];
	r->input = best;
	r->rec = &in->rec;
	r->vcpu = best > 0 ? in->rec.cpu : -1;
	r->host_tid = -1;
	if (best > 0 && in->rec.cpu >= 0 && (uint32_t)in->rec.cpu < in->nr_vcpus)
		r->host_tid = in->vcpu_tid[in->rec.cpu];
	m->last = best;
	if (best == 0) {
		r->thread = ks_host_observe(m->host, &in->rec);
		if (!r->thread &&
		    ks_host_error_at(m->host, ks_source_path(in->src), &in->rec, err) < 0)
			return -1;
		check_host(m, &in->rec);
	} else {
		r->thread = ks_host_find(m->host, r->host_tid);
		check_guest(m, in, r);
	}
	return 1;
}

void ks_merge_quality(struct ks_merge *m, struct ks_merge_quality *q)
{
	uint32_t i;

	for (i = 0; i < m->nr_vt; i++)
		settle_pending(m, &m->vt[i], 0, true);
	*q = m->q;
}

/* ------------------------------------------------------------------ */
/* accessors */

int ks_merge_nr_inputs(const struct ks_merge *m)
{
	return m->n;
}

struct ks_source *ks_merge_source(const struct ks_merge *m, int input)
{
	return input >= 0 && input < m->n ? m->in[input].src : NULL;
}

const char *ks_merge_name(const struct ks_merge *m, int input)
{
	return input >= 0 && input < m->n ? m->in[input].name : NULL;
}

struct ks_host *ks_merge_host(const struct ks_merge *m)
{
	return m->host;
}

enum ks_timesync_kind ks_merge_sync_kind(const struct ks_merge *m, int input)
{
	return input > 0 && input < m->n ? ks_timesync_kind(m->in[input].sync) : KS_TSYNC_NONE;
}

const struct ks_timesync *ks_merge_timesync(const struct ks_merge *m, int input)
{
	return input > 0 && input < m->n ? m->in[input].sync : NULL;
}

int32_t ks_merge_vcpu_tid(const struct ks_merge *m, int input, uint32_t vcpu)
{
	if (input <= 0 || input >= m->n || vcpu >= m->in[input].nr_vcpus)
		return -1;
	return m->in[input].vcpu_tid[vcpu];
}

uint32_t ks_merge_nr_vcpus(const struct ks_merge *m, int input)
{
	return input > 0 && input < m->n ? m->in[input].nr_vcpus : 0;
}

/* ------------------------------------------------------------------ */
/* guest symbols */

/* The guest whose vCPU thread TID is, or -1. */
static int guest_of_tid(const struct ks_merge *m, int32_t tid)
{
	uint32_t i;

	for (i = 0; i < m->nr_vt; i++)
		if (m->vt[i].tid == tid)
			return m->vt[i].guest;
	return -1;
}

const char *ks_merge_guest_function(const struct ks_merge *m, int32_t host_tid, uint64_t addr,
				    uint64_t *start)
{
	struct tep_handle *gtep;
	const char *func;
	int g = guest_of_tid(m, host_tid);

	if (g < 0 || !(gtep = ks_source_tep(m->in[g].src)))
		return NULL;
	func = tep_find_function(gtep, addr);
	if (func && start)
		*start = tep_find_function_address(gtep, addr);
	return func;
}
