/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_engine_bpf.c - the BPF engine's kernel side (src/input/bpf/
 * exits.bpf.c) on synthetic events: each one goes through the same
 * handlers as the tracepoints' (the SEC("syscall") program ks_test_feed,
 * run with BPF_PROG_TEST_RUN), as a record laid out the way the running
 * kernel's format file says; the maps are then read through the engine.
 *
 * Oracles computed here: the field offsets parsed from the format files
 * with sscanf (not libtraceevent); the bucket of a time by the rule of
 * metrics.h written as a linear scan (bucket i: <= bound i and > bound
 * i-1, the last the rest), on every bound - 1, bound and bound + 1; count,
 * sum, min, max and keys from the events fed; overflow and unpaired counts
 * from how many keys were fed beyond the sizes given.
 *
 * Skipped (with the engine's reason) where BPF cannot load: not root, no
 * kvm:* tracepoints.  CI runs as root on a kernel with BPF: no allowed skip.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "../lib/ktest.h"
#include "input/engine_bpf.h"
#include "input/engine_impl.h"
#include "kvmscope/metrics.h"

#define T0 1000000000000ull

/* offset and size of FIELD in events/kvm/EVENT/format; false if absent */
static bool fmt_field(const char *event, const char *field, int *off, int *size)
{
	char path[256], line[512], want[80];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kvm/%s/format", event);
	if (!(f = fopen(path, "r")))
		return false;
	snprintf(want, sizeof(want), " %s;", field);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want), *o;

		if (p && (o = strstr(p, "offset:")) && sscanf(o, "offset:%d;\tsize:%d;", off, size) == 2)
			found = true;
	}
	fclose(f);
	return found;
}

struct layout {
	int reason_off, reason_size, isa_off, isa_size, vcpu_off, vcpu_size;
	int evcpu_off, evcpu_size;
};

static bool layout(struct layout *l)
{
	memset(l, 0, sizeof(*l));
	return fmt_field("kvm_exit", "exit_reason", &l->reason_off, &l->reason_size) &&
	       fmt_field("kvm_exit", "isa", &l->isa_off, &l->isa_size) &&
	       fmt_field("kvm_exit", "vcpu_id", &l->vcpu_off, &l->vcpu_size) &&
	       fmt_field("kvm_entry", "vcpu_id", &l->evcpu_off, &l->evcpu_size);
}

static void put(uint8_t *rec, int off, int size, uint64_t v)
{
	memcpy(rec + off, &v, (size_t)size);   /* little endian: the low bytes */
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The engine with the test program, attached to nothing; NULL (skipped)
 * where BPF cannot load. */
static struct ks_engine *open_test(struct ks_engine_config *cfg, struct layout *l)
{
	struct ks_engine_bpf_opts o = { .test_prog = true, .no_attach = true };
	struct ks_engine *e;
	struct ks_error err;

	libbpf_set_print(quiet);
	if (!layout(l)) {
		kt_skip("no x86 kvm_exit/kvm_entry format in /sys/kernel/tracing (kvm not loaded, or not x86)");
		return NULL;
	}
	if (ks_engine_bpf_open_opts(&e, cfg, &o, &err) < 0) {
		kt_skip("%s", err.msg);
		return NULL;
	}
	return e;
}

static bool feed(struct ks_engine *e, const struct layout *l, uint32_t kind, int32_t pid,
		 int32_t tid, uint64_t ts, uint64_t reason, uint32_t isa, uint32_t vcpu)
{
	struct ks_bpf_test_ev ev;
	struct ks_error err;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.pid = pid;
	ev.tid = tid;
	ev.ts = ts;
	if (kind == KS_BPF_EV_EXIT) {
		put(ev.rec, l->reason_off, l->reason_size, reason);
		put(ev.rec, l->isa_off, l->isa_size, isa);
		put(ev.rec, l->vcpu_off, l->vcpu_size, vcpu);
	} else if (kind == KS_BPF_EV_ENTRY) {
		put(ev.rec, l->evcpu_off, l->evcpu_size, vcpu + 100);  /* not the exit's */
	} else if (kind == KS_BPF_EV_TP) {
		ev.tp_idx = (uint32_t)reason;
	}
	if (ks_engine_bpf_feed(e, &ev, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		return false;
	}
	return true;
}

static bool snap(struct ks_engine *e, struct ks_engine_snapshot *s)
{
	struct ks_error err;

	if (e->ops->read(e, s, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		return false;
	}
	return true;
}

static void snap_free(struct ks_engine_snapshot *s)
{
	free(s->exits);
	free(s->tps);
	memset(s, 0, sizeof(*s));
}

static const struct ks_engine_exit *find(const struct ks_engine_snapshot *s, int32_t tid,
					 uint64_t reason)
{
	size_t i;

	for (i = 0; i < s->nexits; i++)
		if (s->exits[i].tid == tid && s->exits[i].reason == reason)
			return &s->exits[i];
	return NULL;
}

/* metrics.h's rule, as a linear scan */
static unsigned expected_bucket(uint64_t ns)
{
	unsigned i;

	for (i = 0; i < KS_LAT_NBUCKETS; i++)
		if (ns <= ks_lat_bucket_ns[i])
			return i;
	return KS_LAT_NBUCKETS;
}

/* The loader found the fields where the format files put them. */
static void t_layout(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_bpf_field r, isa, xv, ev;
	struct layout l;
	struct ks_engine *e = open_test(&cfg, &l);

	if (!e)
		return;
	ks_engine_bpf_fields(e, &r, &isa, &xv, &ev);
	KT_EQ_INT(r.off, l.reason_off);
	KT_EQ_INT(r.size, l.reason_size);
	KT_EQ_INT(isa.off, l.isa_off);
	KT_EQ_INT(isa.size, l.isa_size);
	KT_EQ_INT(xv.off, l.vcpu_off);
	KT_EQ_INT(xv.size, l.vcpu_size);
	KT_EQ_INT(ev.off, l.evcpu_off);
	KT_EQ_INT(ev.size, l.evcpu_size);
	e->ops->close(e);
}

/* Every bound - 1, bound, bound + 1, 0 and far past the last bound: one
 * series each, its single time in the bucket metrics.h's rule says. */
static void t_buckets(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	uint64_t ns[3 * KS_LAT_NBUCKETS + 2];
	struct layout l;
	struct ks_engine *e = open_test(&cfg, &l);
	size_t n = 0, i;
	unsigned b;

	if (!e)
		return;
	for (i = 0; i < KS_LAT_NBUCKETS; i++) {
		ns[n++] = ks_lat_bucket_ns[i] - 1;
		ns[n++] = ks_lat_bucket_ns[i];
		ns[n++] = ks_lat_bucket_ns[i] + 1;
	}
	ns[n++] = 0;
	ns[n++] = 3 * ks_lat_bucket_ns[KS_LAT_NBUCKETS - 1];
	for (i = 0; i < n; i++) {
		int32_t tid = (int32_t)(1000 + i);

		if (!feed(e, &l, KS_BPF_EV_EXIT, 4242, tid, T0, i, 2, 1) ||
		    !feed(e, &l, KS_BPF_EV_ENTRY, 4242, tid, T0 + ns[i], 0, 0, 1))
			goto out;
	}
	if (!snap(e, &s))
		goto out;
	KT_EQ_U64(s.nexits, n);
	for (i = 0; i < n; i++) {
		const struct ks_engine_exit *x = find(&s, (int32_t)(1000 + i), i);
		uint64_t total = 0;

		KT_REQUIRE(x);
		KT_EQ_U64(x->count, 1);
		KT_EQ_U64(x->sum_ns, ns[i]);
		KT_EQ_U64(x->min_ns, ns[i]);
		KT_EQ_U64(x->max_ns, ns[i]);
		for (b = 0; b <= KS_LAT_NBUCKETS; b++)
			total += x->bucket[b];
		KT_EQ_U64(total, 1);
		if (x->bucket[expected_bucket(ns[i])] != 1)
			kt_fail(__FILE__, __LINE__, "%llu ns: not in bucket %u",
				(unsigned long long)ns[i], expected_bucket(ns[i]));
	}
	KT_EQ_U64(s.unpaired, 0);
	KT_EQ_STR(s.engine, "bpf");
	KT_EQ_STR(s.arch, "x86");
	KT_EQ_STR(s.isa, "SVM");
out:
	snap_free(&s);
	e->ops->close(e);
}

/* Keys (pid, tid, vcpu, isa, level, reason), aggregation, nested level,
 * unpaired entries. */
static void t_keys(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	static const uint64_t d[] = { 100, 700, 5000 };
	const struct ks_engine_exit *x;
	struct layout l;
	struct ks_engine *e = open_test(&cfg, &l);
	uint64_t t = T0;
	size_t i;

	if (!e)
		return;
	/* three io exits (SVM 0x7b) of vCPU 3 */
	for (i = 0; i < 3; i++, t += 10000)
		if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 501, t, 0x7b, 2, 3) ||
		    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 501, t + d[i], 0, 0, 3))
			goto out;
	/* an exit of the nested guest: exit, its marker, entry */
	if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 501, t, 0x7b, 2, 3) ||
	    !feed(e, &l, KS_BPF_EV_NESTED, 500, 501, t + 10, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 501, t + 300, 0, 0, 3))
		goto out;
	/* a VMX exit of another thread: EXTERNAL_INTERRUPT (1) */
	if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 502, t, 1, 1, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 502, t + 2600, 0, 0, 0))
		goto out;
	/* unpaired: an entry with no exit; an exit whose thread id another
	 * process enters with */
	if (!feed(e, &l, KS_BPF_EV_ENTRY, 500, 503, t, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_EXIT, 600, 601, t, 0x78, 2, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 700, 601, t + 50, 0, 0, 0))
		goto out;
	/* a nested marker with no pending exit changes nothing */
	if (!feed(e, &l, KS_BPF_EV_NESTED, 500, 504, t, 0, 0, 0) || !snap(e, &s))
		goto out;
	KT_EQ_U64(s.nexits, 3);
	KT_EQ_U64(s.unpaired, 2);
	x = &s.exits[0];   /* sorted: (500, 501, 3, 2, 1, 0x7b) first */
	KT_EXPECT(x->pid == 500 && x->tid == 501 && x->vcpu == 3 && x->isa == 2 && x->level == 1 &&
		  x->reason == 0x7b);
	KT_EQ_U64(x->count, 3);
	KT_EQ_U64(x->sum_ns, 5800);
	KT_EQ_U64(x->min_ns, 100);
	KT_EQ_U64(x->max_ns, 5000);
	KT_EQ_U64(x->bucket[0], 1);   /* 100 <= 250 */
	KT_EQ_U64(x->bucket[2], 1);   /* 700 <= 1000 */
	KT_EQ_U64(x->bucket[4], 1);   /* 5000 <= 5000 */
	x = &s.exits[1];
	KT_EXPECT(x->tid == 501 && x->level == 2 && x->reason == 0x7b && x->vcpu == 3);
	KT_EQ_U64(x->count, 1);
	KT_EQ_U64(x->sum_ns, 300);
	KT_EQ_U64(x->bucket[1], 1);
	x = &s.exits[2];
	KT_EXPECT(x->tid == 502 && x->isa == 1 && x->reason == 1 && x->level == 1 && x->vcpu == 0);
	KT_EQ_U64(x->bucket[4], 1);   /* 2600: (2500, 5000] */
	KT_EQ_U64(s.overflow_threads + s.overflow_series + s.overflow_procs, 0);
out:
	snap_free(&s);
	e->ops->close(e);
}

/* A pending exit of a thread that ended is removed at the first read: its
 * thread id reused by an entry later does not pair with it.  A live
 * thread's pending exit stays. */
static void t_sweep(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	struct layout l;
	struct ks_engine *e = open_test(&cfg, &l);
	pid_t child, me = getpid(), tid = gettid();

	if (!e)
		return;
	child = fork();
	if (child == 0)
		_exit(0);
	KT_REQUIRE(child > 0);
	waitpid(child, NULL, 0);
	/* at 1 us after boot: older than the sweep's minimum age (1 s) */
	if (!feed(e, &l, KS_BPF_EV_EXIT, child, child, 1000, 0x7b, 2, 0) ||
	    !feed(e, &l, KS_BPF_EV_EXIT, me, tid, 1000, 0x7c, 2, 0) || !snap(e, &s) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, child, child, 1010, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, me, tid, 1010, 0, 0, 0) || !snap(e, &s))
		goto out;
	KT_EQ_U64(s.nexits, 1);
	KT_EXPECT(find(&s, tid, 0x7c) != NULL);
	KT_EQ_U64(s.unpaired, 1);
out:
	snap_free(&s);
	e->ops->close(e);
}

/* Only the configured process is counted. */
static void t_pid_filter(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	struct layout l;
	struct ks_engine *e;

	cfg.pid = 777;
	if (!(e = open_test(&cfg, &l)))
		return;
	if (!feed(e, &l, KS_BPF_EV_EXIT, 777, 778, T0, 0x7b, 2, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 777, 778, T0 + 5, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_EXIT, 888, 889, T0, 0x7b, 2, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 888, 889, T0 + 5, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_ENTRY, 888, 890, T0 + 5, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_TP, 888, 889, T0, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_TP, 777, 778, T0, 0, 0, 0) || !snap(e, &s))
		goto out;
	KT_EQ_U64(s.nexits, 1);
	KT_EXPECT(s.nexits == 1 && s.exits[0].pid == 777);
	KT_EQ_U64(s.ntps, 1);
	KT_EXPECT(s.ntps == 1 && s.tps[0].pid == 777);
	KT_EQ_U64(s.unpaired, 0);
out:
	snap_free(&s);
	e->ops->close(e);
}

/* More series, pending threads and (process, event) pairs than the sizes
 * given: what does not fit is counted, what fits is exact. */
static void t_overflow(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	struct layout l;
	struct ks_engine *e;
	size_t ntp, i;
	int k;

	cfg.max_series = 4;
	cfg.max_threads = 2;
	cfg.max_procs = 1;
	if (!(e = open_test(&cfg, &l)))
		return;
	ntp = ks_engine_bpf_ntp(e);
	KT_REQUIRE(ntp > 1);
	/* 10 series on 10 threads, one after another: 4 fit */
	for (k = 0; k < 10; k++)
		if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 600 + k, T0, (uint64_t)k, 2, 0) ||
		    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 600 + k, T0 + 1000, 0, 0, 0))
			goto out;
	/* 3 threads pending at once: 2 fit */
	for (k = 0; k < 3; k++)
		if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 700 + k, T0, 0x7b, 2, 0))
			goto out;
	/* room for one process's every event: ntp pairs; feed ntp + 3 */
	for (i = 0; i < ntp + 3; i++)
		if (!feed(e, &l, KS_BPF_EV_TP, 900 + (int32_t)i, 900 + (int32_t)i, T0, 0, 0, 0))
			goto out;
	if (!feed(e, &l, KS_BPF_EV_TP, 900, 900, T0, 0, 0, 0) ||
	    !feed(e, &l, KS_BPF_EV_TP, 900, 900, T0, 0, 0, 0) || !snap(e, &s))
		goto out;
	KT_EQ_U64(s.nexits, 4);
	KT_EQ_U64(s.overflow_series, 6);
	KT_EQ_U64(s.overflow_threads, 1);
	KT_EQ_U64(s.ntps, ntp);
	KT_EQ_U64(s.overflow_procs, 3);
	for (i = 0; i < s.nexits; i++)
		KT_EQ_U64(s.exits[i].count, 1);
	KT_EXPECT(s.ntps && s.tps[0].pid == 900 && s.tps[0].count == 3);
	KT_EQ_STR(s.ntps ? s.tps[0].name : "", ks_engine_bpf_tp_name(e, 0));
out:
	snap_free(&s);
	e->ops->close(e);
}

/* One series counted on two CPUs (a test run runs on the caller's CPU):
 * the sums add up, min and max are over both, whichever CPU made it. */
static void t_percpu(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot s = { 0 };
	cpu_set_t old, one;
	int cpus[2], n = 0, c;
	struct layout l;
	struct ks_engine *e;

	if (sched_getaffinity(0, sizeof(old), &old) < 0) {
		kt_fail(__FILE__, __LINE__, "sched_getaffinity failed");
		return;
	}
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &old))
			cpus[n++] = c;
	if (n < 2) {
		kt_skip("one CPU only");
		return;
	}
	if (!(e = open_test(&cfg, &l)))
		return;
	for (c = 0; c < 2; c++) {
		CPU_ZERO(&one);
		CPU_SET(cpus[c], &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0) {
			kt_fail(__FILE__, __LINE__, "sched_setaffinity to CPU %d failed", cpus[c]);
			break;
		}
		/* CPU a: 400 and 900; CPU b: 2000 and 300000 */
		if (!feed(e, &l, KS_BPF_EV_EXIT, 500, 501, T0, 0x7b, 2, 0) ||
		    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 501, T0 + (c ? 2000 : 400), 0, 0, 0) ||
		    !feed(e, &l, KS_BPF_EV_EXIT, 500, 501, T0, 0x7b, 2, 0) ||
		    !feed(e, &l, KS_BPF_EV_ENTRY, 500, 501, T0 + (c ? 300000 : 900), 0, 0, 0))
			break;
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (c == 2 && snap(e, &s)) {
		KT_EQ_U64(s.nexits, 1);
		if (s.nexits == 1) {
			const struct ks_engine_exit *x = &s.exits[0];

			KT_EQ_U64(x->count, 4);
			KT_EQ_U64(x->sum_ns, 400 + 900 + 2000 + 300000);
			KT_EQ_U64(x->min_ns, 400);
			KT_EQ_U64(x->max_ns, 300000);
			KT_EQ_U64(x->bucket[1], 1);   /* 400 */
			KT_EQ_U64(x->bucket[2], 1);   /* 900 */
			KT_EQ_U64(x->bucket[3], 1);   /* 2000 */
			KT_EQ_U64(x->bucket[10], 1);  /* 300000: (250000, 500000] */
		}
	}
	snap_free(&s);
	e->ops->close(e);
}

/* The scenario of t_keys and some kvm:* events, fed to engine E. */
static bool feed_mix(struct ks_engine *e, const struct layout *l, size_t ntp)
{
	static const uint64_t d[] = { 100, 700, 5000, 40, 123456 };
	uint64_t t = T0;
	size_t i;

	for (i = 0; i < 5; i++, t += 10000)
		if (!feed(e, l, KS_BPF_EV_EXIT, 500, 501, t, 0x7b, 2, 3) ||
		    !feed(e, l, KS_BPF_EV_ENTRY, 500, 501, t + d[i], 0, 0, 3) ||
		    !feed(e, l, KS_BPF_EV_EXIT, 500, 502, t, i % 2 ? 0x78 : 1, 1, 1) ||
		    !feed(e, l, KS_BPF_EV_ENTRY, 500, 502, t + 3 * d[i], 0, 0, 1))
			return false;
	if (!feed(e, l, KS_BPF_EV_EXIT, 500, 501, t, 0x7b, 2, 3) ||
	    !feed(e, l, KS_BPF_EV_NESTED, 500, 501, t + 10, 0, 0, 0) ||
	    !feed(e, l, KS_BPF_EV_ENTRY, 500, 501, t + 300, 0, 0, 3))
		return false;
	for (i = 0; i < 3 * ntp; i++)
		if (!feed(e, l, KS_BPF_EV_TP, 500 + (int32_t)(i % 2), 501, t, i % ntp, 0, 0))
			return false;
	return true;
}

/* Every new series and (process, event) pair through the ring, as when the
 * kernel cannot allocate their elements: the snapshot equals the maps'
 * one of the same events, and nothing is counted as an overflow.  With
 * room for 4 series, the 6 more that come through the ring are. */
static void t_spill(void)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_bpf_opts o = { .test_prog = true, .no_attach = true, .spill_all = true };
	struct ks_engine_snapshot want = { 0 }, got = { 0 };
	struct ks_engine *e = NULL, *sp = NULL;
	struct ks_error err;
	struct layout l;
	size_t i, ntp;
	int k;

	if (!(e = open_test(&cfg, &l)))
		return;
	if (ks_engine_bpf_open_opts(&sp, &cfg, &o, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		goto out;
	}
	ntp = ks_engine_bpf_ntp(e);
	KT_REQUIRE(ntp > 1 && ks_engine_bpf_ntp(sp) == ntp);
	if (!feed_mix(e, &l, ntp) || !feed_mix(sp, &l, ntp) || !snap(e, &want) || !snap(sp, &got))
		goto out;
	KT_EQ_U64(got.nexits, want.nexits);
	KT_EXPECT(want.nexits >= 4);
	for (i = 0; i < want.nexits && i < got.nexits; i++)
		if (memcmp(&got.exits[i], &want.exits[i], sizeof(got.exits[i])))
			kt_fail(__FILE__, __LINE__, "series %zu (tid %d reason %llu) differs", i,
				want.exits[i].tid, (unsigned long long)want.exits[i].reason);
	KT_EQ_U64(got.ntps, want.ntps);
	KT_EXPECT(want.ntps == 2 * ntp);
	for (i = 0; i < want.ntps && i < got.ntps; i++) {
		KT_EQ_STR(got.tps[i].name, want.tps[i].name);
		KT_EQ_U64(got.tps[i].pid, want.tps[i].pid);
		KT_EQ_U64(got.tps[i].count, want.tps[i].count);
	}
	KT_EQ_U64(got.overflow_series + got.overflow_procs + got.overflow_threads, 0);
	KT_EQ_U64(got.unpaired, want.unpaired);
	/* read again: the ring's part is counted once */
	snap_free(&got);
	if (!snap(sp, &got))
		goto out;
	KT_EQ_U64(got.nexits, want.nexits);
	KT_EXPECT(got.nexits && got.exits[0].count == want.exits[0].count);
	sp->ops->close(sp);
	snap_free(&got);
	cfg.max_series = 4;
	if (ks_engine_bpf_open_opts(&sp, &cfg, &o, &err) < 0) {
		sp = NULL;
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		goto out;
	}
	for (k = 0; k < 10; k++)
		if (!feed(sp, &l, KS_BPF_EV_EXIT, 500, 600 + k, T0, (uint64_t)k, 2, 0) ||
		    !feed(sp, &l, KS_BPF_EV_ENTRY, 500, 600 + k, T0 + 1000, 0, 0, 0))
			goto out;
	if (!snap(sp, &got))
		goto out;
	KT_EQ_U64(got.nexits, 4);
	KT_EQ_U64(got.overflow_series, 6);
out:
	snap_free(&want);
	snap_free(&got);
	if (sp)
		sp->ops->close(sp);
	e->ops->close(e);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_layout), KT_CASE(t_buckets), KT_CASE(t_keys), KT_CASE(t_sweep),
		KT_CASE(t_pid_filter), KT_CASE(t_overflow), KT_CASE(t_percpu), KT_CASE(t_spill),
		{ 0 },
	};
	return kt_main(cases);
}
