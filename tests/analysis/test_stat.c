/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_stat.c - the stat engine on hand-built kvm event sequences.
 *
 * Payloads are laid out with the real tracefs formats in
 * tests/fixtures/x86-6.18 (copied from a 6.18 kernel's tracefs).  Expected
 * values are computed in the test from the same inputs by plain loops,
 * independently of the engine's Welford/histogram code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "kvmscope/field.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"

static struct tep_handle *tep;
static struct tep_event *ev_entry, *ev_exit, *ev_mmio, *ev_pio, *ev_msr;

static struct tep_event *load_format(const char *name)
{
	return kt_fixture_event(tep, "x86-6.18", "kvm", name);
}

static bool setup(void)
{
	if (tep)
		return ev_entry && ev_exit;
	tep = tep_alloc();
	ev_entry = load_format("kvm_entry");
	ev_exit = load_format("kvm_exit");
	ev_mmio = load_format("kvm_mmio");
	ev_pio = load_format("kvm_pio");
	ev_msr = load_format("kvm_msr");
	return ev_entry && ev_exit && ev_mmio && ev_pio && ev_msr;
}

/* A record under construction: payload buffer + fields set by name. */
struct rec {
	struct ks_record r;
	unsigned char buf[128];
};

static void set_field(struct rec *x, const char *name, uint64_t v)
{
	struct tep_format_field *f = tep_find_any_field(x->r.event, name);

	if (!f) {
		kt_fail(__FILE__, __LINE__, "no field %s in %s", name, x->r.event->name);
		return;
	}
	memcpy(x->buf + f->offset, &v, (size_t)f->size); /* little-endian host */
}

static struct rec make(struct tep_event *ev, uint64_t ts, int32_t tid, int32_t pid)
{
	struct rec x;

	memset(&x, 0, sizeof(x));
	x.r.type = KS_REC_EVENT;
	x.r.event = ev;
	x.r.ts = x.r.raw_ts = ts;
	x.r.tid = tid;
	x.r.pid = pid;
	x.r.cpu = 0;
	x.r.size = sizeof(x.buf);
	memcpy(x.buf, &(uint16_t){ (uint16_t)ev->id }, 2);
	memcpy(x.buf + 4, &tid, 4);
	return x;
}

static void feed(struct ks_stat *st, struct rec *x)
{
	x->r.data = x->buf;
	ks_stat_add(st, &x->r);
}

static void entry(struct ks_stat *st, uint64_t ts, int32_t tid, int32_t pid, unsigned vcpu)
{
	struct rec x = make(ev_entry, ts, tid, pid);

	set_field(&x, "vcpu_id", vcpu);
	feed(st, &x);
}

static void kexit(struct ks_stat *st, uint64_t ts, int32_t tid, int32_t pid, unsigned vcpu,
		  uint32_t reason)
{
	struct rec x = make(ev_exit, ts, tid, pid);

	set_field(&x, "exit_reason", reason);
	set_field(&x, "isa", 1);
	set_field(&x, "vcpu_id", vcpu);
	feed(st, &x);
}

static struct ks_stat *new_stat(const char *cls, unsigned v0, unsigned v1, bool perf)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info;
	struct ks_error err;

	memset(&info, 0, sizeof(info));
	snprintf(info.cpuid, sizeof(info.cpuid), "GenuineIntel,6,85,7");
	cfg.event_class = cls;
	cfg.views[0] = v0;
	cfg.views[1] = v1;
	cfg.perf_compat = perf;
	return ks_stat_new(&cfg, &info, &err);
}

static const struct ks_stat_row *find_row(struct ks_stat *st, int view, uint64_t key)
{
	struct ks_stat_row **rows;
	size_t i, n = ks_stat_rows(st, view, &rows);

	for (i = 0; i < n; i++)
		if (rows[i]->key == key)
			return rows[i];
	return NULL;
}

/* exit -> entry per thread; two threads interleaved; reasons HLT (12) and
 * MSR_WRITE (32).  Expected sums from the list of durations. */
static void t_exit_to_entry(void)
{
	struct ks_stat *st;
	const struct ks_stat_row *hlt, *msr;
	uint64_t d_hlt[] = { 500, 1500, 2500 }, d_msr[] = { 100, 300 };
	uint64_t t = 1000;

	KT_REQUIRE(setup());
	st = new_stat("vmexit", KS_DIM_KEY, KS_DIM_VCPU, false);
	KT_REQUIRE(st);
	entry(st, t, 101, 100, 0);
	entry(st, t + 1, 102, 100, 1);
	for (int i = 0; i < 3; i++) {
		t += 10000;
		kexit(st, t, 101, 100, 0, 12);
		if (i < 2)
			kexit(st, t + 5, 102, 100, 1, 32);
		if (i < 2)
			entry(st, t + 5 + d_msr[i], 102, 100, 1);
		entry(st, t + d_hlt[i], 101, 100, 0);
	}
	hlt = find_row(st, 0, 12);
	msr = find_row(st, 0, 32);
	KT_REQUIRE(hlt && msr);
	KT_EQ_U64(hlt->count, 3);
	KT_EQ_U64(hlt->total_ns, 500 + 1500 + 2500);
	KT_EQ_U64(hlt->min_ns, 500);
	KT_EQ_U64(hlt->max_ns, 2500);
	KT_EQ_U64(msr->count, 2);
	KT_EQ_U64(msr->total_ns, 400);
	/* by vcpu: vcpu 0 has all HLT time, vcpu 1 all MSR time */
	{
		struct ks_stat_row **rows;
		size_t n = ks_stat_rows(st, 1, &rows), i;
		uint64_t v0 = 0, v1 = 0;

		KT_EQ_U64(n, 2);
		for (i = 0; i < n; i++) {
			if (rows[i]->vcpu == 0)
				v0 = rows[i]->total_ns;
			if (rows[i]->vcpu == 1)
				v1 = rows[i]->total_ns;
		}
		KT_EQ_U64(v0, 4500);
		KT_EQ_U64(v1, 400);
	}
	ks_stat_free(st);
}

/* perf's unmatched-event rules, each counted. */
static void t_unmatched(void)
{
	struct ks_stat *st;
	const struct ks_stat_anomalies *a;
	const struct ks_stat_row *r;

	KT_REQUIRE(setup());
	st = new_stat("vmexit", KS_DIM_KEY, 0, false);
	KT_REQUIRE(st);
	kexit(st, 100, 7, 7, 0, 12);     /* before the first entry: ignored */
	entry(st, 200, 7, 7, 0);         /* first entry: no begin pending */
	entry(st, 300, 7, 7, 0);         /* end without begin (the first is not one) */
	kexit(st, 400, 7, 7, 0, 12);
	kexit(st, 450, 7, 7, 0, 30);     /* replaces the HLT begin */
	entry(st, 1450, 7, 7, 0);        /* IO_INSTRUCTION: 1000 */
	a = ks_stat_anomalies(st);
	KT_EQ_U64(a->before_first_entry, 1);
	KT_EQ_U64(a->end_without_begin, 1);
	KT_EQ_U64(a->begin_replaced, 1);
	r = find_row(st, 0, 30);
	KT_REQUIRE(r);
	KT_EQ_U64(r->count, 1);
	KT_EQ_U64(r->total_ns, 1000);
	/* the replaced HLT row exists in perf too but has no samples */
	KT_EXPECT(find_row(st, 0, 12) == NULL);
	ks_stat_free(st);
}

/* MMIO: write from kvm_mmio(W) to entry; read from exit to kvm_mmio(R). */
static void t_mmio(void)
{
	struct ks_stat *st;
	const struct ks_stat_row *w, *rd;
	struct rec x;

	KT_REQUIRE(setup());
	st = new_stat("mmio", KS_DIM_KEY, 0, false);
	KT_REQUIRE(st);
	entry(st, 10, 5, 5, 0);
	kexit(st, 100, 5, 5, 0, 48);
	x = make(ev_mmio, 130, 5, 5);
	set_field(&x, "type", 2);
	set_field(&x, "gpa", 0xfee00000);
	feed(st, &x);
	entry(st, 200, 5, 5, 0);         /* write: 200 - 130 */
	kexit(st, 300, 5, 5, 0, 48);
	x = make(ev_mmio, 340, 5, 5);
	set_field(&x, "type", 1);
	set_field(&x, "gpa", 0xfebf0000);
	feed(st, &x);                    /* read: 340 - 300 */
	entry(st, 400, 5, 5, 0);
	kexit(st, 500, 5, 5, 0, 12);     /* not MMIO: stays pending */
	entry(st, 600, 5, 5, 0);
	w = find_row(st, 0, 0xfee00000);
	rd = find_row(st, 0, 0xfebf0000);
	KT_REQUIRE(w && rd);
	KT_EQ_U64(w->total_ns, 70);
	KT_EQ_INT(w->info, 2);
	KT_EQ_U64(rd->total_ns, 40);
	KT_EQ_INT(rd->info, 1);
	{
		char name[64];

		ks_stat_key_name(st, w, true, name, sizeof(name));
		KT_EQ_STR(name, "0xfee00000:W");
		ks_stat_key_name(st, rd, true, name, sizeof(name));
		KT_EQ_STR(name, "0xfebf0000:R");
	}
	ks_stat_free(st);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Welford mean/stddev agree with the two-pass formulas; quantiles are
 * within the stated 1% of the exact order statistic. */
static void t_statistics(void)
{
	enum { N = 20000 };
	static uint64_t vals[N];
	struct ks_stat *st;
	const struct ks_stat_row *r;
	uint64_t t = 1000, seed = 12345;
	double sum = 0, mean, ss = 0, sd_pct;
	int i;

	KT_REQUIRE(setup());
	st = new_stat("vmexit", KS_DIM_KEY, 0, false);
	KT_REQUIRE(st);
	entry(st, t, 9, 9, 0);
	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		vals[i] = 50 + (seed >> 33) % 200000 * ((seed >> 20) % 7 + 1);
		t += 1000;
		kexit(st, t, 9, 9, 0, 1);
		t += vals[i];
		entry(st, t, 9, 9, 0);
		sum += (double)vals[i];
	}
	r = find_row(st, 0, 1);
	KT_REQUIRE(r);
	mean = sum / N;
	for (i = 0; i < N; i++)
		ss += ((double)vals[i] - mean) * ((double)vals[i] - mean);
	sd_pct = 100.0 * sqrt(ss / (N - 1) / N) / mean;
	KT_EXPECT(fabs(r->mean - mean) / mean < 1e-9);
	KT_EXPECT(fabs(ks_stat_row_stddev_pct(r) - sd_pct) < 1e-6);
	{
		double qs[] = { 0.5, 0.9, 0.99, 0.999 };

		qsort(vals, N, sizeof(vals[0]), cmp_u64);
		for (i = 0; i < 4; i++) {
			uint64_t rank = (uint64_t)ceil(qs[i] * N);
			uint64_t exact = vals[rank - 1], got = ks_stat_row_quantile(r, qs[i]);

			if (fabs((double)got - (double)exact) > 0.01 * (double)exact)
				kt_fail(__FILE__, __LINE__, "q%.3f: %llu vs exact %llu", qs[i],
					(unsigned long long)got, (unsigned long long)exact);
		}
	}
	ks_stat_free(st);
}

/* perf_compat: a thread's vCPU is fixed by its first entry; native mode
 * follows the exit's vcpu_id. */
static void t_vcpu_binding(void)
{
	struct ks_stat *perf, *native;
	struct ks_stat_row **rows;
	size_t n;

	KT_REQUIRE(setup());
	perf = new_stat("vmexit", KS_DIM_VCPU, 0, true);
	native = new_stat("vmexit", KS_DIM_VCPU, 0, false);
	KT_REQUIRE(perf && native);
	for (int k = 0; k < 2; k++) {
		struct ks_stat *st = k ? native : perf;

		entry(st, 10, 3, 3, 0);
		kexit(st, 20, 3, 3, 0, 12);
		entry(st, 30, 3, 3, 1);   /* the thread now runs vCPU 1 */
		kexit(st, 40, 3, 3, 1, 12);
		entry(st, 45, 3, 3, 1);
	}
	n = ks_stat_rows(perf, 0, &rows);
	KT_EQ_U64(n, 1);
	KT_EQ_INT(rows[0]->vcpu, 0);
	n = ks_stat_rows(native, 0, &rows);
	KT_EQ_U64(n, 2);
	ks_stat_free(perf);
	ks_stat_free(native);
}

static void ignore_occurrence(void *ctx, const struct ks_stat_row *row, uint64_t ns)
{
	(void)ctx;
	(void)row;
	(void)ns;
}

/* Whether two engines' rows of view 0 and of the begin counts are the same
 * rows, with the same sums, in the same order, bit for bit. */
static void same_rows(struct ks_stat *a, struct ks_stat *b, int view)
{
	struct ks_stat_row **x, **y;
	size_t n = ks_stat_rows(a, view, &x), i;

	KT_EQ_U64(ks_stat_rows(b, view, &y), n);
	for (i = 0; i < n && i < ks_stat_rows(b, view, &y); i++) {
		KT_EQ_U64(x[i]->key, y[i]->key);
		KT_EQ_INT(x[i]->table, y[i]->table);
		KT_EQ_U64(x[i]->seq, y[i]->seq);
		KT_EQ_U64(x[i]->count, y[i]->count);
		KT_EQ_U64(x[i]->total_ns, y[i]->total_ns);
		KT_EQ_U64(x[i]->min_ns, y[i]->min_ns);
		KT_EQ_U64(x[i]->max_ns, y[i]->max_ns);
		KT_EXPECT(!memcmp(&x[i]->mean, &y[i]->mean, sizeof(double)));
		KT_EXPECT(!memcmp(&x[i]->m2, &y[i]->m2, sizeof(double)));
		KT_EXPECT(ks_stat_row_quantile(x[i], 0.99) == ks_stat_row_quantile(y[i], 0.99));
	}
}

/* The short path of an engine with one view by key and no hook (what
 * --format perf and the default table run) counts what the general path
 * counts: a hook (on_occurrence, a no-op here) sends every record through
 * the general one.  Three threads, keys above the direct index too, begins
 * replaced, ends without begins and ends before their begins. */
static void t_plain_path(void)
{
	static const uint32_t keys[] = { 12, 30, 48, 1, 32, 2000, 7 };

	KT_REQUIRE(setup());
	for (int perf = 0; perf < 2; perf++) {
		struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
		struct ks_source_info info;
		struct ks_error err;
		struct ks_stat *st[2];
		uint64_t seed = 777, t = 1000;

		memset(&info, 0, sizeof(info));
		snprintf(info.cpuid, sizeof(info.cpuid), "GenuineIntel,6,85,7");
		cfg.perf_compat = perf;
		cfg.no_histograms = perf;
		cfg.no_begin_counts = perf;
		st[0] = ks_stat_new(&cfg, &info, &err);
		cfg.on_occurrence = ignore_occurrence;
		st[1] = ks_stat_new(&cfg, &info, &err);
		KT_REQUIRE(st[0] && st[1]);
		for (int i = 0; i < 30000; i++) {
			int32_t tid = 100 + (int32_t)((seed >> 40) % 3);
			unsigned what = (unsigned)(seed >> 20) % 16;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* now and then a record from the past: an end before its begin */
			t = what == 15 && t > 5000 ? t - 3000 : t + 50 + (seed >> 33) % 4000;
			for (int k = 0; k < 2; k++) {
				if (what < 7)
					entry(st[k], t, tid, tid, (unsigned)(tid - 100));
				else
					kexit(st[k], t, tid, tid, (unsigned)(tid - 100),
					      keys[(seed >> 45) % 7]);
			}
		}
		same_rows(st[0], st[1], 0);
		if (!perf)
			same_rows(st[0], st[1], KS_STAT_BEGINS);
		KT_EXPECT(!memcmp(ks_stat_anomalies(st[0]), ks_stat_anomalies(st[1]),
				  sizeof(struct ks_stat_anomalies)));
		KT_EXPECT(ks_stat_anomalies(st[0])->begin_replaced > 0);
		KT_EXPECT(ks_stat_anomalies(st[0])->end_before_begin > 0);
		KT_EXPECT(ks_stat_anomalies(st[0])->end_without_begin > 0);
		ks_stat_free(st[0]);
		ks_stat_free(st[1]);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_exit_to_entry), KT_CASE(t_unmatched), KT_CASE(t_mmio),
		KT_CASE(t_statistics), KT_CASE(t_vcpu_binding), KT_CASE(t_plain_path), { 0 },
	};
	int rc = kt_main(cases);

	tep_free(tep);
	return rc;
}
