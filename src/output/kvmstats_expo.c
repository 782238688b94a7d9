/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_expo.c - KVM's statistics as Prometheus metrics (see
 * kvmstats_expo.h): QEMU's own names (kvm_stat_*), and the halt polling
 * ones named as Prometheus wants them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/kvmstats_expo.h"
#include "kvmscope/kvmstats_halt.h"

struct qsample {
	char metric[112];
	bool counter;
	size_t src;            /* the VM's index in the collector */
	const char *domain;
	int32_t vcpu;
	double value;
};

static int qsample_cmp(const void *pa, const void *pb)
{
	const struct qsample *a = pa, *b = pb;
	int c = strcmp(a->metric, b->metric);

	if (c)
		return c;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return (a->vcpu > b->vcpu) - (a->vcpu < b->vcpu);
}

/* kvm_stat_NAME: units in the name as Prometheus wants them (seconds, bytes). */
static void qmp_metric_name(const struct ks_kstat *st, char *out, size_t len)
{
	char name[72];
	size_t n, i;

	snprintf(name, sizeof(name), "%s", st->name);
	for (i = 0; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			name[i] = '_';
	n = strlen(name);
	if (!strcmp(st->unit, "seconds")) {
		if (n > 3 && (!strcmp(name + n - 3, "_ns") || !strcmp(name + n - 3, "_us") ||
			      !strcmp(name + n - 3, "_ms")))
			name[n - 3] = 0;
		snprintf(out, len, "kvm_stat_%s_seconds", name);
	} else if (!strcmp(st->unit, "bytes") && (n < 6 || strcmp(name + n - 6, "_bytes"))) {
		snprintf(out, len, "kvm_stat_%s_bytes", name);
	} else {
		snprintf(out, len, "kvm_stat_%s", name);
	}
}

/* The samples of ST (histograms left out) appended to *ALL. */
static int add_samples(struct qsample **all, size_t *n, size_t *cap, const struct ks_kstats *st,
		       size_t src, const char *domain)
{
	size_t i;

	if (*n + st->n > *cap) {
		size_t ncap = (*n + st->n) * 2;
		struct qsample *b = realloc(*all, ncap * sizeof(*b));
		if (!b)
			return -1;
		*all = b;
		*cap = ncap;
	}
	for (i = 0; i < st->n; i++) {
		const struct ks_kstat *k = &st->v[i];
		struct qsample *q;
		if (k->buckets)
			continue; /* histograms (lists) are left out */
		q = &(*all)[(*n)++];
		qmp_metric_name(k, q->metric, sizeof(q->metric));
		q->counter = k->type == KS_KSTAT_CUMULATIVE;
		q->src = src;
		q->domain = domain;
		q->vcpu = k->vcpu;
		q->value = ks_kstat_scaled(k);
	}
	return 0;
}

/* The domain label of VM: its name, else its process id ("" failed). */
static const char *domain_of(const struct ks_kvmcol_vm *vm, char *buf, size_t len)
{
	if (vm->failed)
		snprintf(buf, len, "%s", "");
	else if (vm->name[0])
		snprintf(buf, len, "%s", vm->name);
	else
		snprintf(buf, len, "%d", vm->pid);
	return buf;
}

static bool exported(const struct ks_kvmcol_vm *vm)
{
	return !vm->failed && !vm->duplicate && vm->now.n;
}

static void up_metrics(struct ks_expo *e, struct ks_kvmcol *c, int nqmp)
{
	const char *lbl[5];
	struct ks_kvmcol_vm *vms;
	size_t n, i;

	vms = ks_kvmcol_vms(c, &n);
	if (nqmp)
		ks_expo_family(e, "kvmscope_qmp_up", KS_EXPO_GAUGE,
			       "1 when the QMP socket answered query-stats at this scrape.", NULL);
	/* the sockets in the order given: the collector keeps them so */
	for (i = 0; i < n; i++) {
		char domain[128];

		if (vms[i].qmp_index < 0)
			continue;
		lbl[0] = "socket";
		lbl[1] = vms[i].key;
		lbl[2] = "domain";
		lbl[3] = domain_of(&vms[i], domain, sizeof(domain));
		lbl[4] = NULL;
		ks_expo_sample_u64(e, "kvmscope_qmp_up", lbl, !vms[i].failed);
	}
	if (ks_kvmcol_libvirt_uri(c)) {
		ks_expo_family(e, "kvmscope_libvirt_up", KS_EXPO_GAUGE,
			       "1 when libvirt answered at this scrape.", NULL);
		lbl[0] = "uri";
		lbl[1] = ks_kvmcol_libvirt_uri(c);
		lbl[2] = NULL;
		ks_expo_sample_u64(e, "kvmscope_libvirt_up", lbl, ks_kvmcol_libvirt_up(c));
	}
}

/* kvm_stat_*: every statistic of every VM, one family at a time. */
static int stat_metrics(struct ks_expo *e, struct ks_kvmcol_vm *vms, size_t nvms,
			char (*domains)[128])
{
	struct qsample *all = NULL;
	size_t n = 0, cap = 0, i;
	const char *lbl[5];

	for (i = 0; i < nvms; i++)
		if (exported(&vms[i]) && add_samples(&all, &n, &cap, &vms[i].now, i, domains[i]) < 0) {
			free(all);
			return -1;
		}
	if (n) /* all is NULL when no source answered */
		qsort(all, n, sizeof(*all), qsample_cmp);
	for (i = 0; i < n; i++) {
		char sample[128], vcpu[16], help[160];
		bool counter = all[i].counter;
		if (!i || strcmp(all[i].metric, all[i - 1].metric)) {
			snprintf(help, sizeof(help), "KVM statistic %s (QEMU query-stats)",
				 all[i].metric + 9);
			ks_expo_family(e, all[i].metric, counter ? KS_EXPO_COUNTER : KS_EXPO_GAUGE, help,
				       NULL);
		}
		snprintf(sample, sizeof(sample), "%s%s", all[i].metric, counter ? "_total" : "");
		lbl[0] = "domain";
		lbl[1] = all[i].domain;
		lbl[2] = NULL;
		if (all[i].vcpu >= 0) {
			snprintf(vcpu, sizeof(vcpu), "%d", all[i].vcpu);
			lbl[2] = "vcpu";
			lbl[3] = vcpu;
			lbl[4] = NULL;
		}
		ks_expo_sample(e, sample, lbl, all[i].value);
	}
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */
/* halt polling */

struct vm_halt {
	const char *domain;
	struct ks_khalt *h;   /* h[0] the VM, then its vCPUs */
	size_t n;
};

/* NS as seconds, exactly ("0.000000007"). */
static const char *seconds_text(char *buf, size_t len, uint64_t ns)
{
	int n = snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
			 (unsigned long long)(ns % 1000000000u));

	while (n > 1 && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = 0;
	return buf;
}

/* One counter family: SAMPLE{domain,vcpu[,result=RESULT]} from FIELD of
 * every vCPU (or of the VM where the source has no vCPUs: debugfs),
 * where the source gave it (HAVE); seconds when SECONDS. */
struct counter_def {
	const char *family, *help;
	unsigned have;
	size_t off;
	const char *result;  /* NULL: no result label */
	bool seconds;
};

static const struct counter_def halt_counters[] = {
	{ "kvmscope_halt_exits", "Halt exits of the vCPU (KVM statistic halt_exits).",
	  KS_KHALT_HAVE_EXITS, offsetof(struct ks_khalt, exits), NULL, false },
	{ "kvmscope_halt_wakeups", "Wake-ups of a halted vCPU: polled, ended while KVM polled "
	  "(halt_successful_poll); slept, of a vCPU that slept (halt_wakeup).",
	  KS_KHALT_HAVE_POLLED, offsetof(struct ks_khalt, polled), "polled", false },
	{ "kvmscope_halt_wakeups", NULL, KS_KHALT_HAVE_WAKEUPS, offsetof(struct ks_khalt, wakeups),
	  "slept", false },
	{ "kvmscope_halt_poll_attempts", "Halts that KVM polled, successfully or not "
	  "(halt_attempted_poll).", KS_KHALT_HAVE_ATTEMPTED, offsetof(struct ks_khalt, attempted),
	  NULL, false },
	{ "kvmscope_halt_poll_invalid", "Successful polls woken for no valid reason "
	  "(halt_poll_invalid).", KS_KHALT_HAVE_INVALID, offsetof(struct ks_khalt, invalid), NULL,
	  false },
	{ "kvmscope_halt_poll_seconds", "CPU time KVM spent polling halted vCPUs: success, polls "
	  "that ended with a wake-up; fail, polls that ran out (wasted) "
	  "(halt_poll_success_ns, halt_poll_fail_ns).", KS_KHALT_HAVE_POLL_OK_NS,
	  offsetof(struct ks_khalt, poll_ok_ns), "success", true },
	{ "kvmscope_halt_poll_seconds", NULL, KS_KHALT_HAVE_POLL_FAIL_NS,
	  offsetof(struct ks_khalt, poll_fail_ns), "fail", true },
	{ "kvmscope_halt_wait_seconds", "Time halted vCPUs slept after polling (halt_wait_ns).",
	  KS_KHALT_HAVE_WAIT_NS, offsetof(struct ks_khalt, wait_ns), NULL, true },
};

static void halt_counter(struct ks_expo *e, const struct vm_halt *vh, size_t nvh,
			 const struct counter_def *d, bool *family_done)
{
	char sample[96], vcpu[16], val[32];
	const char *lbl[7];
	size_t i, j;

	snprintf(sample, sizeof(sample), "%s_total", d->family);
	for (i = 0; i < nvh; i++) {
		/* the vCPUs; the VM's own where the source has no vCPU */
		for (j = vh[i].n > 1 ? 1 : 0; j < vh[i].n; j++) {
			const struct ks_khalt *h = &vh[i].h[j];
			uint64_t v = *(const uint64_t *)((const char *)h + d->off);
			int l = 0;

			if (!(h->have & d->have))
				continue;
			if (!*family_done)
				ks_expo_family(e, d->family, KS_EXPO_COUNTER, d->help,
					       d->seconds ? "seconds" : NULL);
			*family_done = true;
			lbl[l++] = "domain";
			lbl[l++] = vh[i].domain;
			if (h->vcpu >= 0) {
				snprintf(vcpu, sizeof(vcpu), "%d", h->vcpu);
				lbl[l++] = "vcpu";
				lbl[l++] = vcpu;
			}
			if (d->result) {
				lbl[l++] = "result";
				lbl[l++] = d->result;
			}
			lbl[l] = NULL;
			if (d->seconds)
				ks_expo_sample_text(e, sample, lbl,
						    seconds_text(val, sizeof(val), v));
			else
				ks_expo_sample_u64(e, sample, lbl, v);
		}
	}
}

/* The histogram WHICH of every VM (its vCPUs summed). */
static void halt_hist(struct ks_expo *e, const struct vm_halt *vh, size_t nvh, const char *family,
		      const char *help, enum ks_khalt_hist which, const char *result, bool *family_done)
{
	char name[96], le[32], sum[32];
	const char *lbl[7];
	size_t i;
	uint32_t b;

	for (i = 0; i < nvh; i++) {
		const struct ks_khalt *h = &vh[i].h[0];
		uint32_t nb = h->nbuckets[which];
		uint64_t cum = 0, sum_ns;
		int l = 0;

		if (!nb)
			continue;
		if (!*family_done)
			ks_expo_family(e, family, KS_EXPO_HISTOGRAM, help, "seconds");
		*family_done = true;
		lbl[l++] = "domain";
		lbl[l++] = vh[i].domain;
		if (result) {
			lbl[l++] = "result";
			lbl[l++] = result;
		}
		snprintf(name, sizeof(name), "%s_bucket", family);
		for (b = 0; b < nb; b++) {
			uint64_t max = ks_khalt_bucket_max_ns(b, nb);

			cum += h->buckets[which][b];
			lbl[l] = "le";
			lbl[l + 1] = max == UINT64_MAX ? "+Inf" : seconds_text(le, sizeof(le), max);
			lbl[l + 2] = NULL;
			ks_expo_sample_u64(e, name, lbl, cum);
		}
		lbl[l] = NULL;
		snprintf(name, sizeof(name), "%s_count", family);
		ks_expo_sample_u64(e, name, lbl, h->hist_count[which]);
		sum_ns = which == KS_KHALT_POLL_OK ? h->poll_ok_ns :
			 which == KS_KHALT_POLL_FAIL ? h->poll_fail_ns : h->wait_ns;
		snprintf(name, sizeof(name), "%s_sum", family);
		ks_expo_sample_text(e, name, lbl, seconds_text(sum, sizeof(sum), sum_ns));
	}
}

static int halt_metrics(struct ks_expo *e, struct ks_kvmcol_vm *vms, size_t nvms,
			char (*domains)[128])
{
	struct vm_halt *vh = calloc(nvms + 1, sizeof(*vh));
	size_t i, nvh = 0;
	bool done = false;
	int rc = 0;

	if (!vh)
		return -1;
	for (i = 0; i < nvms; i++) {
		if (!exported(&vms[i]))
			continue;
		if (ks_khalt_of(&vms[i].now, &vh[nvh].h, &vh[nvh].n) < 0) {
			rc = -1;
			break;
		}
		vh[nvh].domain = domains[i];
		if (vh[nvh].n)
			nvh++;
	}
	for (i = 0; rc == 0 && i < sizeof(halt_counters) / sizeof(halt_counters[0]); i++) {
		/* a family's second result follows its first */
		if (halt_counters[i].help)
			done = false;
		halt_counter(e, vh, nvh, &halt_counters[i], &done);
	}
	if (rc == 0) {
		done = false;
		halt_hist(e, vh, nvh, "kvmscope_halt_poll_duration_seconds",
			  "CPU time of each poll of a halted vCPU: success, ended with a wake-up; fail, "
			  "ran out (halt_poll_success_hist, halt_poll_fail_hist; vCPUs summed).",
			  KS_KHALT_POLL_OK, "success", &done);
		halt_hist(e, vh, nvh, "kvmscope_halt_poll_duration_seconds", NULL, KS_KHALT_POLL_FAIL,
			  "fail", &done);
		done = false;
		halt_hist(e, vh, nvh, "kvmscope_halt_wait_duration_seconds",
			  "Time each halted vCPU slept after polling (halt_wait_hist; vCPUs summed).",
			  KS_KHALT_WAIT, NULL, &done);
	}
	for (i = 0; i <= nvh && i < nvms; i++)
		free(vh[i].h);
	free(vh);
	return rc;
}

void ks_expo_kvmstats(struct ks_expo *e, struct ks_kvmcol *c, int nqmp)
{
	size_t nvms, i;
	struct ks_kvmcol_vm *vms = ks_kvmcol_vms(c, &nvms);
	char (*domains)[128] = calloc(nvms + 1, sizeof(*domains));

	up_metrics(e, c, nqmp);
	if (!domains) {
		e->oom = true;
		return;
	}
	for (i = 0; i < nvms; i++)
		domain_of(&vms[i], domains[i], sizeof(domains[i]));
	if (stat_metrics(e, vms, nvms, domains) < 0 || halt_metrics(e, vms, nvms, domains) < 0)
		e->oom = true;
	free(domains);
}
