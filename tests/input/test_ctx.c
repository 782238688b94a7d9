/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_ctx.c - the library context (kvmscope/ctx.h): what a context holds
 * (its format probe, its parsed formats, its reader tuning) is seen by the
 * inputs opened with it only, never through another context or without
 * one; a NULL context opens every kind of input; threads opening and
 * closing inputs on one context share its formats safely.
 *
 * Inputs are generated (tools/gen-tracedat-layouts and gen-kvm-perfdata)
 * from the format fixtures: trace.dat files of every layout and
 * compression, the latency layout (read through the ftrace text reader),
 * its ftrace text, and a perf.data with tracing data.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "input/source_impl.h"
#include "kvmscope/ctx.h"
#include "kvmscope/format_probe.h"
#include "kvmscope/source.h"

#define NR_SAMPLES 3000 /* perf.data samples: a data section of ~250 KB */

static const char *const tracedats[] = {
	"inst-v6.dat", "inst-v7.dat", "inst-v7-zstd.dat", "inst-v7-zlib.dat",
};
static const char *const latency[] = {
	"lat-v6.dat", "lat-v7.dat", "lat-v7-zstd.dat", "lat-v7-zlib.dat",
};

static char dir[4096];

/* The generated inputs' directory, or NULL (the case is skipped). */
static const char *inputs(void)
{
	static int state; /* 0: not tried, 1: made, -1: failed */
	const char *build = getenv("KS_BUILD");
	char cmd[16384], scn[4200];
	FILE *f;
	int st = -1, i;

	if (state)
		return state > 0 ? dir : (kt_skip("the inputs could not be generated"), NULL);
	state = -1;
	if (!build) {
		kt_skip("needs KS_BUILD (tests/run.sh)");
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s/ctx", kt_tmpdir());
	snprintf(scn, sizeof(scn), "%s/kvm.scn", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && %s/tools/gen-tracedat-layouts "
		 "tests/fixtures/x86-6.18 %s", dir, build, dir);
	free(kt_run(cmd, &st));
	if (st != 0 || !(f = fopen(scn, "w"))) {
		kt_skip("gen-tracedat-layouts failed");
		return NULL;
	}
	fprintf(f, "comm 100 100 vm\ncomm 201 100 CPU 0/KVM\n");
	for (i = 0; i < NR_SAMPLES; i++)
		fprintf(f, "%d 0 201 100 kvm:%s vcpu_pc=0xffff800010001000\n", 1000 + i * 100,
			i % 2 ? "kvm_entry" : "kvm_exit esr_ec=22");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/tools/gen-kvm-perfdata --formats tests/fixtures/arm64 "
		 "--machine aarch64 -o %s/kvm.data %s", build, dir, scn);
	free(kt_run(cmd, &st));
	if (st != 0) {
		kt_skip("gen-kvm-perfdata failed");
		return NULL;
	}
	state = 1;
	return dir;
}

static const char *path_of(const char *name)
{
	static char path[8][4200];
	static unsigned next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

static struct ks_source *open_with(const char *name, struct ks_ctx *ctx)
{
	struct ks_source_opts o = { .ctx = ctx };
	struct ks_source *src = NULL;
	struct ks_error err;

	if (ks_source_open_opts(&src, path_of(name), &o, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
		return NULL;
	}
	return src;
}

struct counts {
	uint64_t records, events, decoded; /* decoded: events with their format */
};

static struct counts read_all(struct ks_source *src)
{
	struct counts c = { 0 };
	struct ks_record rec;
	struct ks_error err;
	int r;

	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		c.records++;
		if (rec.type == KS_REC_EVENT) {
			c.events++;
			c.decoded += rec.event != NULL;
		}
	}
	if (r < 0)
		kt_fail(__FILE__, __LINE__, "%s: %s", ks_source_path(src), err.msg);
	return c;
}

/* A probe that counts its questions and gives one answer. */
struct probe {
	atomic_int calls;
	bool verdict;
};

static bool probe_fn(void *arg, const struct ks_source_format *f, size_t n)
{
	struct probe *p = arg;

	(void)f;
	(void)n;
	atomic_fetch_add(&p->calls, 1);
	return p->verdict;
}

/* Without a context every kind of input opens and reads as with one (no
 * probe: the library's own checks let these formats through). */
static void t_null_context_opens_everything(void)
{
	static const char *const all[] = {
		"inst-v6.dat", "inst-v7.dat", "inst-v7-zstd.dat", "inst-v7-zlib.dat",
		"lat-v6.dat", "lat-v7.dat", "lat-v7-zstd.dat", "lat-v7-zlib.dat",
		"lat.txt", "kvm.data",
	};
	struct ks_ctx *ctx = ks_ctx_new();

	KT_REQUIRE(ctx);
	if (!inputs())
		goto out;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct ks_source *a, *b = NULL, *c = open_with(all[i], ctx);
		struct ks_error err;
		struct counts ca, cb, cc;

		KT_REQUIRE(c);
		if (ks_source_open(&a, path_of(all[i]), &err) < 0) {
			kt_fail(__FILE__, __LINE__, "%s: %s", all[i], err.msg);
			ks_source_close(c);
			continue;
		}
		b = open_with(all[i], NULL);
		ca = read_all(a);
		cb = b ? read_all(b) : (struct counts){ 0 };
		cc = read_all(c);
		KT_EXPECT(ca.events > 0);
		KT_EQ_U64(ca.decoded, ca.events);
		KT_EQ_U64(ca.records, cc.records);
		KT_EQ_U64(cb.records, cc.records);
		KT_EQ_U64(ca.decoded, cc.decoded);
		/* nothing shared without a context */
		KT_EXPECT(!b || ks_source_tep(a) != ks_source_tep(b));
		KT_EXPECT(ks_source_tep(a) != ks_source_tep(c));
		ks_source_close(a);
		ks_source_close(b);
		ks_source_close(c);
	}
out:
	ks_ctx_free(ctx);
}

/* Each context asks its own probe only; a context whose probe refuses
 * every format (its inputs decode no event) does not hand its handles to
 * another one, opened after it on the same file.  Formats are parsed when
 * first needed: the probe is asked at open (for the first format) and
 * again as the records need theirs. */
static void t_probe_per_context(void)
{
	static const char *const files[] = { "kvm.data", "inst-v7.dat", "inst-v6.dat" };
	struct probe yes = { .verdict = true }, no = { .verdict = false };

	if (!inputs())
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct ks_ctx *a = ks_ctx_new(), *b = ks_ctx_new();
		int y0, n0, y1, n1, y2, n2;
		struct ks_source *sa = NULL, *sb = NULL, *sn = NULL, *again = NULL;
		struct counts ca, cb, cn;

		KT_REQUIRE(a && b);
		ks_format_probe_set(a, probe_fn, &yes);
		ks_format_probe_set(b, probe_fn, &no);
		y0 = atomic_load(&yes.calls), n0 = atomic_load(&no.calls);
		sb = open_with(files[i], b);
		y1 = atomic_load(&yes.calls), n1 = atomic_load(&no.calls);
		sa = open_with(files[i], a);
		y2 = atomic_load(&yes.calls), n2 = atomic_load(&no.calls);
		sn = open_with(files[i], NULL);
		again = open_with(files[i], a);
		if (sa && sb && sn && again) {
			KT_EXPECT(n1 > n0);   /* B asked its probe, */
			KT_EQ_INT(y1, y0);    /* not A's; */
			KT_EXPECT(y2 > y1);   /* A asked its own, */
			KT_EQ_INT(n2, n1);    /* not B's; nobody without a context */
			KT_EQ_INT(atomic_load(&no.calls), n2);
			KT_EXPECT(ks_source_tep(sa) != ks_source_tep(sb));
			KT_EXPECT(ks_source_tep(sa) != ks_source_tep(again));
			cb = read_all(sb);
			ca = read_all(sa);
			cn = read_all(sn);
			KT_EXPECT(cb.events > 0);
			KT_EQ_U64(cb.decoded, 0);             /* every format refused */
			KT_EQ_U64(ca.decoded, ca.events);     /* A's formats are its own */
			KT_EQ_U64(cn.decoded, cn.events);
			KT_EQ_U64(ca.events, cb.events);
		}
		ks_source_close(again);
		ks_source_close(sa);
		ks_source_close(sb);
		ks_source_close(sn);
		ks_ctx_free(a);
		ks_ctx_free(b);
	}
}

/* A trace.dat or perf.data has a handle of its own, which grows as its
 * events are first needed, even with one context.  The latency layout is
 * read by the ftrace text reader: its handle is the context's built-in
 * formats, shared with a text file's; another context has its own. */
static void t_formats_shared_per_context(void)
{
	struct ks_ctx *a = ks_ctx_new(), *b = ks_ctx_new();
	struct ks_source *s[6] = { 0 };
	size_t i;

	KT_REQUIRE(a && b);
	if (!inputs())
		goto out;
	for (i = 0; i < sizeof(tracedats) / sizeof(tracedats[0]); i++) {
		s[0] = open_with(tracedats[i], a);
		s[1] = open_with(tracedats[i], a);
		s[2] = open_with(tracedats[i], b);
		if (s[0] && s[1] && s[2]) {
			KT_EXPECT(ks_source_tep(s[0]) != ks_source_tep(s[1]));
			KT_EXPECT(ks_source_tep(s[0]) != ks_source_tep(s[2]));
		}
		for (int k = 0; k < 3; k++)
			ks_source_close(s[k]);
	}
	s[0] = open_with("kvm.data", a);
	s[1] = open_with("kvm.data", a);
	s[2] = open_with("kvm.data", b);
	s[3] = open_with("lat.txt", a);
	s[4] = open_with(latency[1], a);
	s[5] = open_with(latency[2], b);
	if (s[0] && s[1] && s[2] && s[3] && s[4] && s[5]) {
		KT_EXPECT(ks_source_tep(s[0]) != ks_source_tep(s[1]));
		KT_EXPECT(ks_source_tep(s[0]) != ks_source_tep(s[2]));
		KT_EXPECT(ks_source_tep(s[3]) == ks_source_tep(s[4]));
		KT_EXPECT(ks_source_tep(s[3]) != ks_source_tep(s[5]));
		/* closing one source leaves the other one's handle alone */
		ks_source_close(s[0]);
		s[0] = NULL;
		KT_EXPECT(read_all(s[1]).decoded == NR_SAMPLES);
	}
	for (i = 0; i < 6; i++)
		ks_source_close(s[i]);
out:
	ks_ctx_free(a);
	ks_ctx_free(b);
}

/* A perf.data's formats are parsed when first needed: those of its
 * recorded events (its attrs) at open, others when asked for. */
static void t_perf_formats_on_demand(void)
{
	const struct ks_source_format *f;
	struct ks_source *s;
	struct counts c;
	size_t n;

	if (!inputs() || !(s = open_with("kvm.data", NULL)))
		return;
	n = ks_source_formats(s, &f);
	KT_EXPECT(n > 3);
	c = read_all(s);
	KT_EQ_U64(c.decoded, c.events);
	KT_EXPECT(ks_source_formats_parsed(s) <= n);
	n = ks_source_formats_parsed(s);
	KT_EXPECT(ks_source_event(s, "kvm", "kvm_exit") != NULL);
	KT_EXPECT(ks_source_event(s, "kvm", "no_such_event") == NULL);
	KT_EQ_U64(ks_source_formats_parsed(s), n);
	ks_source_close(s);
}

/* The perf.data reader's windows are a setting of the context: a tuned
 * context maps a small file and lets the prefetch thread frame it in
 * small chunks; another context, and none, read it the default way.  The
 * records are the same. */
static void t_tuning_per_context(void)
{
	struct ks_ctx *tuned = ks_ctx_new(), *plain = ks_ctx_new();
	struct ks_source *a = NULL, *b = NULL, *n = NULL;
	struct counts ca, cb, cn;

	KT_REQUIRE(tuned && plain);
	if (!inputs())
		goto out;
	ks_ctx_perfdata_tune(tuned, 0, 1024);
	a = open_with("kvm.data", tuned);
	b = open_with("kvm.data", plain);
	n = open_with("kvm.data", NULL);
	if (!a || !b || !n)
		goto out;
	ca = read_all(a);
	cb = read_all(b);
	cn = read_all(n);
	KT_EQ_U64(ca.records, cb.records);
	KT_EQ_U64(cn.records, cb.records);
	KT_EQ_U64(ca.decoded, NR_SAMPLES);
	KT_EXPECT(ks_perfdata_framed_ahead(a) > NR_SAMPLES / 2);
	KT_EQ_U64(ks_perfdata_framed_ahead(b), 0);
	KT_EQ_U64(ks_perfdata_framed_ahead(n), 0);
out:
	ks_source_close(a);
	ks_source_close(b);
	ks_source_close(n);
	ks_ctx_free(tuned);
	ks_ctx_free(plain);
}

/* Threads opening and closing inputs on one context at once: the shared
 * handles are taken and released under the context's lock (ASan and the
 * reference counts would see a lost or doubled release). */
#define THREADS 4
#define ROUNDS 25

struct worker {
	struct ks_ctx *ctx;
	int id, failures;
};

static void *worker_main(void *arg)
{
	static const char *const files[] = {
		"kvm.data", "inst-v7.dat", "inst-v6.dat", "lat-v7.dat", "lat.txt",
	};
	struct worker *w = arg;

	for (int r = 0; r < ROUNDS; r++) {
		struct ks_source_opts o = { .ctx = w->ctx };
		struct ks_source *src;
		struct ks_error err;
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", dir, files[(r + w->id) % 5]);
		if (ks_source_open_opts(&src, path, &o, &err) < 0) {
			w->failures++;
			continue;
		}
		if (!ks_source_tep(src))
			w->failures++;
		ks_source_close(src);
	}
	return NULL;
}

static void t_threads_share_one_context(void)
{
	struct probe yes = { .verdict = true };
	struct ks_ctx *ctx = ks_ctx_new();
	struct worker w[THREADS];
	pthread_t th[THREADS];
	struct ks_source *keep[2] = { 0 };
	int i, started = 0;

	KT_REQUIRE(ctx);
	ks_format_probe_set(ctx, probe_fn, &yes);
	if (!inputs())
		goto out;
	/* two sources that hold shared handles across the threads' work */
	keep[0] = open_with("inst-v7.dat", ctx);
	keep[1] = open_with("lat.txt", ctx);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .ctx = ctx, .id = i };
		if (pthread_create(&th[i], NULL, worker_main, &w[i]) == 0)
			started++;
		else
			break;
	}
	for (i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		KT_EQ_INT(w[i].failures, 0);
	}
	KT_EQ_INT(started, THREADS);
	KT_EXPECT(atomic_load(&yes.calls) > 0);
	for (i = 0; i < 2; i++)
		KT_EXPECT(keep[i] && read_all(keep[i]).decoded > 0);
out:
	ks_source_close(keep[0]);
	ks_source_close(keep[1]);
	ks_ctx_free(ctx);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_null_context_opens_everything),
		KT_CASE(t_probe_per_context),
		KT_CASE(t_formats_shared_per_context),
		KT_CASE(t_perf_formats_on_demand),
		KT_CASE(t_tuning_per_context),
		KT_CASE(t_threads_share_one_context),
		{ 0 },
	};

	return kt_main(cases);
}
