/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_halt.c - halt polling from KVM's statistics (see
 * kvmstats_halt.h).
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/kvmstats_halt.h"

/* Counter statistics: KVM's name and where it goes. */
struct counter {
	const char *name;
	unsigned have;
	size_t off;
};

static const struct counter counters[] = {
	{ "halt_exits", KS_KHALT_HAVE_EXITS, offsetof(struct ks_khalt, exits) },
	{ "halt_successful_poll", KS_KHALT_HAVE_POLLED, offsetof(struct ks_khalt, polled) },
	{ "halt_wakeup", KS_KHALT_HAVE_WAKEUPS, offsetof(struct ks_khalt, wakeups) },
	{ "halt_attempted_poll", KS_KHALT_HAVE_ATTEMPTED, offsetof(struct ks_khalt, attempted) },
	{ "halt_poll_invalid", KS_KHALT_HAVE_INVALID, offsetof(struct ks_khalt, invalid) },
	{ "halt_poll_success_ns", KS_KHALT_HAVE_POLL_OK_NS, offsetof(struct ks_khalt, poll_ok_ns) },
	{ "halt_poll_fail_ns", KS_KHALT_HAVE_POLL_FAIL_NS, offsetof(struct ks_khalt, poll_fail_ns) },
	{ "halt_wait_ns", KS_KHALT_HAVE_WAIT_NS, offsetof(struct ks_khalt, wait_ns) },
};

static const char *const hist_names[KS_KHALT_NHIST] = {
	[KS_KHALT_POLL_OK] = "halt_poll_success_hist",
	[KS_KHALT_POLL_FAIL] = "halt_poll_fail_hist",
	[KS_KHALT_WAIT] = "halt_wait_hist",
};

/* K's value in ns: KVM's *_ns are nanoseconds whatever the source; a QMP
 * schema that says otherwise (seconds as 10^E) is followed. */
static uint64_t ns_of(const struct ks_kstat *k)
{
	if (!strcmp(k->unit, "seconds") && k->base == 10 && k->exponent != -9)
		return (uint64_t)(ks_kstat_scaled(k) * 1e9 + 0.5);
	return k->value;
}

/* Add the halt statistics of K (of its VM or vCPU) to H. */
static void add_stat(struct ks_khalt *h, const struct ks_kstat *k)
{
	size_t i;

	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (strcmp(k->name, counters[i].name))
			continue;
		*(uint64_t *)((char *)h + counters[i].off) +=
			!strcmp(k->name + strlen(k->name) - 3, "_ns") ? ns_of(k) : k->value;
		h->have |= counters[i].have;
		return;
	}
	for (i = 0; i < KS_KHALT_NHIST; i++) {
		uint32_t b, n = k->nbuckets;

		if (strcmp(k->name, hist_names[i]) || !k->buckets || !n)
			continue;
		if (n > KS_KHALT_MAX_BUCKETS)
			n = KS_KHALT_MAX_BUCKETS; /* (KVM has 32) */
		if (h->nbuckets[i] && h->nbuckets[i] != n)
			return; /* vCPUs that disagree: not summed */
		h->nbuckets[i] = n;
		for (b = 0; b < k->nbuckets; b++) {
			h->buckets[i][b < n ? b : n - 1] += k->buckets[b];
			h->hist_count[i] += k->buckets[b];
		}
		return;
	}
}

static int by_vcpu(const void *a, const void *b)
{
	const struct ks_khalt *x = a, *y = b;

	return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
}

static int by_vcpu_key(const void *key, const void *e)
{
	int32_t v = *(const int32_t *)key, w = ((const struct ks_khalt *)e)->vcpu;

	return (v > w) - (v < w);
}

static bool is_halt_stat(const char *name)
{
	return !strncmp(name, "halt_", 5);
}

int ks_khalt_of(const struct ks_kstats *s, struct ks_khalt **out, size_t *n)
{
	struct ks_khalt *h = NULL;
	size_t i, j, nh = 0, cap = 0;
	bool vm_own = false;

	*out = NULL;
	*n = 0;
	for (i = 0; i < s->n; i++)
		if (is_halt_stat(s->v[i].name)) {
			vm_own |= s->v[i].vcpu < 0;
			nh = 1;
		}
	if (!nh)
		return 0;
	cap = 4;
	h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	h[0].vcpu = -1;
	for (i = 0; i < s->n; i++) {
		const struct ks_kstat *k = &s->v[i];

		if (!is_halt_stat(k->name))
			continue;
		/* debugfs: the VM's directory holds the sums of its vCPUs'
		 * statistics itself; QMP and libvirt: per vCPU only */
		if (k->vcpu < 0 || !vm_own)
			add_stat(&h[0], k);
		if (k->vcpu < 0)
			continue;
		/* a vCPU's statistics come together: its entry is the last */
		j = nh - 1;
		if (h[j].vcpu != k->vcpu)
			for (j = 1; j < nh && h[j].vcpu != k->vcpu; j++)
				;
		if (j == nh) {
			if (nh == cap) {
				struct ks_khalt *g = realloc(h, 2 * cap * sizeof(*h));

				if (!g) {
					free(h);
					return -1;
				}
				memset(g + cap, 0, cap * sizeof(*h));
				h = g;
				cap *= 2;
			}
			h[nh++].vcpu = k->vcpu;
		}
		add_stat(&h[j], k);
	}
	qsort(h + 1, nh - 1, sizeof(*h), by_vcpu);
	*out = h;
	*n = nh;
	return 0;
}

const struct ks_khalt *ks_khalt_find(const struct ks_khalt *h, size_t n, int32_t vcpu)
{
	if (!n)
		return NULL;
	if (vcpu < 0)
		return h;
	return bsearch(&vcpu, h + 1, n - 1, sizeof(*h), by_vcpu_key);
}

uint64_t ks_khalt_bucket_max_ns(uint32_t b, uint32_t n)
{
	/* fls64(value) is the bucket: i bits */
	if (b + 1 >= n || b >= 64)
		return UINT64_MAX;
	return b ? (UINT64_C(1) << b) - 1 : 0;
}

/* NOW minus PREV for a counter (0 when it went back: a restarted VM). */
static uint64_t delta(uint64_t now, const struct ks_khalt *prev, size_t off)
{
	uint64_t p = prev ? *(const uint64_t *)((const char *)prev + off) : 0;

	return now >= p ? now - p : 0;
}

#define D(field) delta(now->field, prev, offsetof(struct ks_khalt, field))

void ks_khalt_interval(const struct ks_khalt *now, const struct ks_khalt *prev, double secs,
		       struct ks_khalt_rates *r)
{
	uint64_t polled = D(polled), slept = D(wakeups);
	double cpu_ns = secs > 0 ? secs * 1e9 : 0;

	memset(r, 0, sizeof(*r));
	r->halts = now->have & KS_KHALT_HAVE_EXITS ? D(exits) : polled + slept;
	r->halts_per_s = secs > 0 ? (double)r->halts / secs : 0;
	r->polled_pct = polled + slept ? 100.0 * (double)polled / (double)(polled + slept) : -1;
	r->have_cpu = (now->have & (KS_KHALT_HAVE_POLL_OK_NS | KS_KHALT_HAVE_POLL_FAIL_NS)) && cpu_ns > 0;
	if (r->have_cpu) {
		r->poll_cpu_pct = 100.0 * (double)(D(poll_ok_ns) + D(poll_fail_ns)) / cpu_ns;
		r->wasted_cpu_pct = 100.0 * (double)D(poll_fail_ns) / cpu_ns;
	}
}
