/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * halt.c - halt polling engine behind `kvmscope stat --event halt` (halt.h).
 *
 * One pass over the records: the host model (host.h) names each thread's VM
 * and vCPU; kvm_halt_poll_ns notes the window change of the halt in
 * progress on its thread, kvm_vcpu_wakeup closes the halt.  Per vCPU the
 * counts and two latency histograms, per VM one histogram of the valid
 * halts' durations with their sums, which is all the recommendation needs.
 */
#include <event-parse.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/field.h"
#include "kvmscope/halt.h"
#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "util/hashmap.h"

#define HALT_MAX_VCPUS 4096 /* distinct (VM, vCPU) pairs (20 KB each); more are not counted */

enum ev_kind { EV_OTHER = 0, EV_WAKEUP, EV_POLL_NS };

struct ev_info {          /* per tracepoint format, classified once */
	struct tep_event *ev;
	enum ev_kind kind;
	struct ks_field ns, waited, valid, grow, old_ns, new_ns, vcpu;
};

struct thread_state {     /* a window change waiting for its halt's wakeup */
	bool pending;
	uint32_t old_ns;
};

struct vm_hist {
	int32_t vm;
	uint64_t cnt[KS_HALT_BUCKETS], sum[KS_HALT_BUCKETS];
};

struct ks_halt {
	struct ks_host *host;
	struct ev_info *evs;
	int nevs, evcap;
	struct ks_hmap threads;        /* tid -> struct thread_state */
	struct ks_hmap vcpu_index;     /* (vm << 32 | vcpu) -> size_t index + 1 */
	struct ks_halt_vcpu **vcpus;
	size_t nvcpus, vcpucap;
	bool sorted;
	struct vm_hist **vms;
	size_t nvms;
	int32_t *vm_ids;
	struct ks_halt_change *changes;
	size_t nchanges;
	uint64_t dropped_changes, dropped_vcpus;
	uint64_t first_ts, last_ts;
	bool failed;
	struct ks_error error;
};

unsigned ks_halt_bucket(uint64_t ns)
{
	unsigned e;
	uint64_t m;

	if (ns < 64)
		return (unsigned)ns;
	if (ns > (1ULL << 40))
		ns = 1ULL << 40;
	e = 63 - (unsigned)__builtin_clzll(ns) - 5;       /* >= 1 */
	m = (ns + (1ULL << e) - 1) >> e;                  /* ceil: 32..64 */
	if (m == 64) {
		e++;
		m = 32;
	}
	return 64 + (e - 1) * 32 + (unsigned)(m - 32);
}

uint64_t ks_halt_bucket_max(unsigned b)
{
	unsigned e;

	if (b < 64)
		return b;
	e = (b - 64) / 32 + 1;
	return (uint64_t)((b - 64) % 32 + 32) << e;
}

uint64_t ks_halt_quantile(const uint64_t *hist, double q)
{
	uint64_t n = 0, seen = 0, rank;
	unsigned b;

	for (b = 0; b < KS_HALT_BUCKETS; b++)
		n += hist[b];
	if (!n)
		return 0;
	rank = (uint64_t)(q * (double)n);
	if (rank >= n)
		rank = n - 1;
	for (b = 0; b < KS_HALT_BUCKETS; b++) {
		seen += hist[b];
		if (seen > rank)
			return ks_halt_bucket_max(b);
	}
	return ks_halt_bucket_max(KS_HALT_BUCKETS - 1);
}

static void fail(struct ks_halt *h, const char *what)
{
	if (!h->failed)
		ks_error_set(&h->error, "%s", what);
	h->failed = true;
}

struct ks_halt *ks_halt_new(const struct ks_source *src, struct ks_error *err)
{
	struct ks_halt *h = calloc(1, sizeof(*h));

	if (!h) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	h->host = ks_host_new(NULL, src, err);
	if (!h->host) {
		free(h);
		return NULL;
	}
	ks_hmap_init(&h->threads, sizeof(struct thread_state));
	ks_hmap_init(&h->vcpu_index, sizeof(size_t));
	return h;
}

void ks_halt_free(struct ks_halt *h)
{
	size_t i;

	if (!h)
		return;
	ks_host_free(h->host);
	free(h->evs);
	ks_hmap_free(&h->threads);
	ks_hmap_free(&h->vcpu_index);
	for (i = 0; i < h->nvcpus; i++)
		free(h->vcpus[i]);
	free(h->vcpus);
	for (i = 0; i < h->nvms; i++)
		free(h->vms[i]);
	free(h->vms);
	free(h->vm_ids);
	free(h->changes);
	free(h);
}

int ks_halt_error(const struct ks_halt *h, struct ks_error *err)
{
	if (!h->failed)
		return 0;
	if (err)
		*err = h->error;
	return -1;
}

static const struct ev_info *ev_info(struct ks_halt *h, struct tep_event *ev)
{
	struct ev_info *e;
	int i;

	for (i = 0; i < h->nevs; i++)
		if (h->evs[i].ev == ev)
			return &h->evs[i];
	if (h->nevs == h->evcap) {
		int cap = h->evcap ? h->evcap * 2 : 16;
		struct ev_info *n = realloc(h->evs, (size_t)cap * sizeof(*n));

		if (!n) {
			fail(h, "out of memory");
			return NULL;
		}
		h->evs = n;
		h->evcap = cap;
	}
	e = &h->evs[h->nevs++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	if (!ev->system || strcmp(ev->system, "kvm"))
		return e;
	if (!strcmp(ev->name, "kvm_vcpu_wakeup") && !ks_field_resolve(&e->ns, ev, "ns") &&
	    !ks_field_resolve(&e->waited, ev, "waited")) {
		ks_field_resolve(&e->valid, ev, "valid");
		e->kind = EV_WAKEUP;
	} else if (!strcmp(ev->name, "kvm_halt_poll_ns") &&
		   !ks_field_resolve(&e->old_ns, ev, "old") &&
		   !ks_field_resolve(&e->new_ns, ev, "new")) {
		ks_field_resolve(&e->grow, ev, "grow");
		ks_field_resolve(&e->vcpu, ev, "vcpu_id");
		e->kind = EV_POLL_NS;
	}
	return e;
}

static struct vm_hist *vm_of(struct ks_halt *h, int32_t vm)
{
	struct vm_hist **n, *v;
	size_t i;

	for (i = 0; i < h->nvms; i++)
		if (h->vms[i]->vm == vm)
			return h->vms[i];
	n = realloc(h->vms, (h->nvms + 1) * sizeof(*n));
	if (!n)
		return NULL;
	h->vms = n;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->vm = vm;
	h->vms[h->nvms++] = v;
	return v;
}

static struct ks_halt_vcpu *vcpu_of(struct ks_halt *h, int32_t vm, int32_t vcpu)
{
	uint64_t key = ((uint64_t)(uint32_t)vm << 32) | (uint32_t)vcpu;
	struct ks_halt_vcpu *v;
	bool created;
	size_t *slot = ks_hmap_get(&h->vcpu_index, key);

	if (slot)
		return h->vcpus[*slot];
	if (h->nvcpus >= HALT_MAX_VCPUS) {
		h->dropped_vcpus++;
		return NULL;
	}
	if (h->nvcpus == h->vcpucap) {
		size_t cap = h->vcpucap ? h->vcpucap * 2 : 16;
		struct ks_halt_vcpu **n = realloc(h->vcpus, cap * sizeof(*n));

		if (!n)
			goto oom;
		h->vcpus = n;
		h->vcpucap = cap;
	}
	v = calloc(1, sizeof(*v));
	if (!v || !(slot = ks_hmap_put(&h->vcpu_index, key, &created))) {
		free(v);
		goto oom;
	}
	v->vm = vm;
	v->vcpu = vcpu;
	*slot = h->nvcpus;
	h->vcpus[h->nvcpus++] = v;
	h->sorted = false;
	return v;
oom:
	fail(h, "out of memory");
	return NULL;
}

static void on_poll_ns(struct ks_halt *h, const struct ev_info *e, const struct ks_record *rec,
		       const struct ks_attr_thread *a, struct thread_state *t)
{
	uint32_t old_ns = (uint32_t)ks_field_u64(&e->old_ns, rec);
	uint32_t new_ns = (uint32_t)ks_field_u64(&e->new_ns, rec);
	bool grow = e->grow.present && ks_field_u64(&e->grow, rec);
	int32_t vcpu = a->vcpu >= 0 ? a->vcpu :
		       e->vcpu.present ? (int32_t)ks_field_u64(&e->vcpu, rec) : -1;
	struct ks_halt_vcpu *v = vcpu_of(h, a->vm, vcpu);

	t->pending = true;
	t->old_ns = old_ns;
	if (!v)
		return;
	if (grow)
		v->grows++;
	else
		v->shrinks++;
	if (!v->window_known) {
		v->window_known = true;
		v->window_first = v->window_min = v->window_max = old_ns;
	}
	if (new_ns < v->window_min)
		v->window_min = new_ns;
	if (new_ns > v->window_max)
		v->window_max = new_ns;
	v->window_last = new_ns;
	if (h->nchanges < KS_HALT_MAX_CHANGES) {
		if (!h->changes && !(h->changes = malloc(KS_HALT_MAX_CHANGES * sizeof(*h->changes)))) {
			fail(h, "out of memory");
			return;
		}
		h->changes[h->nchanges++] = (struct ks_halt_change){
			.ts = rec->ts, .vm = a->vm, .vcpu = vcpu, .old_ns = old_ns,
			.new_ns = new_ns, .grow = grow };
	} else {
		h->dropped_changes++;
	}
}

static void on_wakeup(struct ks_halt *h, const struct ev_info *e, const struct ks_record *rec,
		      const struct ks_attr_thread *a, struct thread_state *t)
{
	uint64_t ns = ks_field_u64(&e->ns, rec);
	bool waited = ks_field_u64(&e->waited, rec) != 0;
	bool valid = !e->valid.present || ks_field_u64(&e->valid, rec) != 0;
	/* the window this halt polled: a change in this halt says its old
	 * value; none means it did not change, which for a halt that slept
	 * means polling was off (window 0): see halt.h */
	uint64_t window = t->pending ? t->old_ns : 0;
	struct ks_halt_vcpu *v = vcpu_of(h, a->vm, a->vcpu);
	struct vm_hist *vh;
	unsigned b = ks_halt_bucket(ns);

	t->pending = false;
	if (!v)
		return;
	v->halts++;
	if (waited) {
		v->waited++;
		v->poll_wasted_ns += window < ns ? window : ns;
		v->lat_waited[b]++;
	} else {
		v->polled++;
		v->poll_ok_ns += ns;
		v->lat_polled[b]++;
	}
	if (!valid) {
		v->invalid++;
		return; /* polling cannot win a wake-up with no reason */
	}
	vh = vm_of(h, a->vm);
	if (!vh) {
		fail(h, "out of memory");
		return;
	}
	vh->cnt[b]++;
	vh->sum[b] += ns;
}

void ks_halt_add(struct ks_halt *h, const struct ks_record *rec)
{
	const struct ks_attr_thread *a;
	const struct ev_info *e;
	struct thread_state *t;
	bool created;

	if (h->failed)
		return;
	a = ks_host_observe(h->host, rec);
	if (rec->type != KS_REC_EVENT || !rec->event)
		return;
	if (!h->first_ts || rec->ts < h->first_ts)
		h->first_ts = rec->ts;
	if (rec->ts > h->last_ts)
		h->last_ts = rec->ts;
	e = ev_info(h, rec->event);
	if (!e || e->kind == EV_OTHER)
		return;
	if (!a) {
		if (ks_host_error(h->host, &h->error) < 0)
			h->failed = true;
		return;
	}
	t = ks_hmap_put(&h->threads, (uint64_t)(uint32_t)rec->tid, &created);
	if (!t) {
		fail(h, "out of memory");
		return;
	}
	if (created)
		memset(t, 0, sizeof(*t));
	if (e->kind == EV_POLL_NS)
		on_poll_ns(h, e, rec, a, t);
	else
		on_wakeup(h, e, rec, a, t);
}

static int cmp_vcpu(const void *pa, const void *pb)
{
	const struct ks_halt_vcpu *a = *(const struct ks_halt_vcpu *const *)pa;
	const struct ks_halt_vcpu *b = *(const struct ks_halt_vcpu *const *)pb;

	if (a->vm != b->vm)
		return a->vm < b->vm ? -1 : 1;
	return a->vcpu < b->vcpu ? -1 : a->vcpu > b->vcpu;
}

size_t ks_halt_vcpus(struct ks_halt *h, const struct ks_halt_vcpu *const **out)
{
	size_t i;
	bool created;

	if (!h->sorted && h->nvcpus) {
		qsort(h->vcpus, h->nvcpus, sizeof(*h->vcpus), cmp_vcpu);
		for (i = 0; i < h->nvcpus; i++) {
			uint64_t key = ((uint64_t)(uint32_t)h->vcpus[i]->vm << 32) |
				       (uint32_t)h->vcpus[i]->vcpu;
			size_t *slot = ks_hmap_put(&h->vcpu_index, key, &created);

			if (slot)
				*slot = i;
		}
	}
	h->sorted = true;
	*out = (const struct ks_halt_vcpu *const *)h->vcpus;
	return h->nvcpus;
}

size_t ks_halt_changes(const struct ks_halt *h, const struct ks_halt_change **out,
		       uint64_t *dropped)
{
	*out = h->changes;
	*dropped = h->dropped_changes;
	return h->nchanges;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

size_t ks_halt_vms(struct ks_halt *h, const int32_t **vms)
{
	size_t i, n = 0;

	free(h->vm_ids);
	h->vm_ids = malloc((h->nvcpus + 1) * sizeof(*h->vm_ids));
	if (!h->vm_ids) {
		*vms = NULL;
		return 0;
	}
	for (i = 0; i < h->nvcpus; i++) {
		size_t k;

		for (k = 0; k < n && h->vm_ids[k] != h->vcpus[i]->vm; k++)
			;
		if (k == n)
			h->vm_ids[n++] = h->vcpus[i]->vm;
	}
	qsort(h->vm_ids, n, sizeof(*h->vm_ids), cmp_i32);
	*vms = h->vm_ids;
	return n;
}

uint64_t ks_halt_dropped_vcpus(const struct ks_halt *h)
{
	return h->dropped_vcpus;
}

const char *ks_halt_vm_name(const struct ks_halt *h, int32_t vm)
{
	return ks_host_vm_name(h->host, vm);
}

/* Cost of window W over the histogram: halts of at most W are won and cost
 * their duration; longer ones burn W each.  Exact at bucket bounds. */
static void cost_at(const struct vm_hist *v, uint64_t w, uint64_t *wins, uint64_t *ok,
		    uint64_t *wasted)
{
	unsigned b;

	*wins = *ok = *wasted = 0;
	for (b = 0; b < KS_HALT_BUCKETS; b++) {
		if (!v->cnt[b])
			continue;
		if (ks_halt_bucket_max(b) <= w) {
			*wins += v->cnt[b];
			*ok += v->sum[b];
		} else {
			*wasted += w * v->cnt[b];
		}
	}
}

int ks_halt_recommend(const struct ks_halt *h, int32_t vm, double budget_pct,
		      struct ks_halt_advice *out)
{
	const struct vm_hist *v = NULL;
	uint64_t wins, ok, wasted;
	size_t i;
	unsigned b;

	memset(out, 0, sizeof(*out));
	out->vm = vm;
	for (i = 0; i < h->nvms; i++)
		if (h->vms[i]->vm == vm)
			v = h->vms[i];
	for (i = 0; i < h->nvcpus; i++)
		if (h->vcpus[i]->vm == vm) {
			out->nvcpus++;
			out->rec_wins += h->vcpus[i]->polled;
			out->rec_cost_ns += h->vcpus[i]->poll_ok_ns + h->vcpus[i]->poll_wasted_ns;
		}
	out->span_ns = h->last_ts > h->first_ts ? h->last_ts - h->first_ts : 0;
	out->budget_ns = (uint64_t)(budget_pct / 100.0 * (double)out->span_ns * out->nvcpus);
	if (!v)
		return -1;
	for (b = 0; b < KS_HALT_BUCKETS; b++)
		out->halts += v->cnt[b];
	/* Polling cost grows with the window, so the window that wins most
	 * within the budget is the largest candidate that fits; candidates
	 * are the bounds of the buckets that hold halts (a window between two
	 * of them wins no more than the lower one and costs more). */
	for (b = 0; b < KS_HALT_BUCKETS; b++) {
		uint64_t w = ks_halt_bucket_max(b);

		if (!v->cnt[b])
			continue;
		cost_at(v, w, &wins, &ok, &wasted);
		if (ok + wasted > out->budget_ns)
			break;
		out->window_ns = w;
		out->wins = wins;
		out->cost_ok_ns = ok;
		out->cost_wasted_ns = wasted;
		out->cost_ns = ok + wasted;
	}
	return 0;
}
