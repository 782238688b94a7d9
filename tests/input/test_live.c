/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_live.c - the live tracefs layer (live.h): default event sets, the
 * TSC conversion, the instance's lifetime, the live source, and that live
 * pages decode to exactly the records the trace.dat reader gives for the
 * same pages written into a file (one decoding path).
 *
 * Tests that need tracefs skip with a message when it is not writable.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "kvmscope/live.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat_writer.h"
#include "../lib/ktest.h"

#define MAX_PAGES 4096

static bool has_event(const char *const *list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static void t_default_events_x86(void)
{
	static const char *const want[] = {
		"kvm:kvm_entry", "kvm:kvm_exit", "kvm:kvm_mmio", "kvm:kvm_pio", "kvm:kvm_msr",
		"kvm:kvm_write_tsc_offset", "kvm:vcpu_load", "kvm:vcpu_put", "sched:sched_switch",
	};
	struct ks_live_event_set set;
	size_t n, i;
	const char *const *l = ks_live_default_events("x86_64", &set, &n);

	KT_REQUIRE(l);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!has_event(l, n, want[i]))
			kt_fail(__FILE__, __LINE__, "x86 set lacks %s", want[i]);
}

static void t_default_events_other_arches(void)
{
	struct ks_live_event_set set;
	size_t n;
	const char *const *l = ks_live_default_events("aarch64", &set, &n);

	KT_REQUIRE(l);
	KT_EXPECT(has_event(l, n, "kvm:kvm_entry"));
	KT_EXPECT(has_event(l, n, "kvm:kvm_exit"));
	KT_EXPECT(!has_event(l, n, "kvm:kvm_pio"));
	l = ks_live_default_events("s390x", &set, &n);
	KT_REQUIRE(l);
	KT_EXPECT(has_event(l, n, "kvm:kvm_s390_sie_enter"));
	KT_EXPECT(ks_live_default_events("pdp11", &set, &n) == NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void t_tsc2nsec(void)
{
#if defined(__x86_64__)
	uint32_t mult, shift;
	uint64_t t0, t1, c0, c1, ns;
	struct timespec d = { 0, 30 * 1000 * 1000 };
	double ratio;

	KT_REQUIRE(ks_live_tsc2nsec(&mult, &shift) == 0);
	t0 = mono_ns();
	c0 = __builtin_ia32_rdtsc();
	nanosleep(&d, NULL);
	c1 = __builtin_ia32_rdtsc();
	t1 = mono_ns();
	ns = (uint64_t)(((unsigned __int128)(c1 - c0) * mult) >> shift);
	ratio = (double)ns / (double)(t1 - t0);
	if (ratio < 0.99 || ratio > 1.01)
		kt_fail(__FILE__, __LINE__, "TSC delta converts to %llu ns, clock says %llu",
			(unsigned long long)ns, (unsigned long long)(t1 - t0));
#else
	kt_skip("not x86");
#endif
}

static bool tracefs_ok(void)
{
	const char *d = tracefs_tracing_dir();
	char p[512];

	if (!d) {
		kt_skip("tracefs is not mounted");
		return false;
	}
	snprintf(p, sizeof(p), "%s/instances", d);
	if (access(p, W_OK) < 0) {
		kt_skip("%s is not writable (needs root)", p);
		return false;
	}
	return true;
}

static struct ks_live *open_sched(const char *clock)
{
	static const char *const evs[] = { "sched:sched_switch", "sched:sched_wakeup" };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l = NULL;
	struct ks_error err;

	o.events = evs;
	o.nevents = 2;
	o.clock = clock;
	o.buffer_kb = 2048;
	if (ks_live_create(&l, &o, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		return NULL;
	}
	return l;
}

static void make_activity(void)
{
	int i;

	for (i = 0; i < 40; i++)
		usleep(2000);
}

static void t_instance_lifetime(void)
{
	struct ks_live *l;
	char path[512];
	struct stat st;

	if (!tracefs_ok())
		return;
	l = open_sched("local");
	KT_REQUIRE(l);
	snprintf(path, sizeof(path), "%s/instances/%s", tracefs_tracing_dir(),
		 ks_live_instance_name(l));
	KT_EXPECT(stat(path, &st) == 0);
	KT_EQ_STR(ks_live_clock(l), "local");
	ks_live_destroy(l);
	KT_EXPECT(stat(path, &st) < 0);
}

static void t_live_source(void)
{
	struct ks_live *l;
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	uint64_t n = 0, mine = 0, last[256] = { 0 }, backwards = 0;
	int r;

	if (!tracefs_ok())
		return;
	l = open_sched("mono");
	KT_REQUIRE(l);
	if (ks_live_source_open(&src, l, &err) < 0 || ks_live_start(l, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		ks_live_destroy(l);
		return;
	}
	make_activity();
	ks_live_stop(l);
	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		if (rec.type != KS_REC_EVENT)
			continue;
		n++;
		KT_EXPECT(rec.event && !strcmp(rec.event->system, "sched"));
		if (rec.tid == getpid()) {
			mine++;
			KT_EQ_INT(rec.pid, getpid());
		}
		if (rec.cpu >= 0 && rec.cpu < 256) {
			if (rec.ts < last[rec.cpu])
				backwards++;
			last[rec.cpu] = rec.ts;
		}
	}
	KT_EXPECT(r == 0);
	KT_EXPECT(n > 10);
	KT_EXPECT(mine > 0);      /* our own usleep() switches */
	KT_EQ_U64(backwards, 0);
	ks_source_close(src);
	ks_live_destroy(l);
}

/* Pin this thread to CPU and sleep a little: our own sched_switch events
 * on that CPU. */
static void switch_on(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (i = 0; i < 3; i++)
		usleep(1000);
}

/* A thread that leaves one CPU and runs on another (a vCPU thread moved
 * between an exit and its entry): the CPU it left was read empty, then got
 * an event, then the other CPU got a later one that the source loads
 * first.  The source must not hand the later event out before the earlier
 * one (it did: entries merged before their exits, top lost those exits). */
static void t_cross_cpu_order(void)
{
	static const char *const evs[] = { "sched:sched_switch" };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l = NULL;
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	int32_t me = getpid();
	uint64_t last = 0, back = 0, n = 0, on0 = 0;
	bool stopped = false;
	int r;

	if (!tracefs_ok())
		return;
#if !defined(__x86_64__)
	kt_skip("not x86 (the x86-tsc clock)");
	return;
#endif
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		kt_skip("one CPU");
		return;
	}
	o.events = evs;
	o.nevents = 1;
	o.pids = &me;
	o.npids = 1;
	o.buffer_kb = 64;
	KT_REQUIRE(ks_live_create(&l, &o, &err) == 0);
	if (ks_live_source_open(&src, l, &err) < 0 || ks_live_start(l, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		ks_live_destroy(l);
		return;
	}
	switch_on(1);
	/* the first round: CPU 0 is empty, CPU 1's page is loaded */
	r = ks_source_next(src, &rec, &err);
	KT_REQUIRE(r > 0);
	last = rec.ts;
	n++;
	switch_on(0); /* after CPU 0 was read */
	switch_on(1); /* later, on a new page of CPU 1 */
	for (;;) {
		r = ks_source_next(src, &rec, &err);
		if (r == 0) {
			if (!stopped) {
				ks_live_stop(l);
				stopped = true;
				continue;
			}
			break;
		}
		KT_REQUIRE(r > 0);
		if (rec.type != KS_REC_EVENT)
			continue;
		n++;
		on0 += rec.cpu == 0;
		back += rec.ts < last;
		last = rec.ts;
	}
	KT_EXPECT(on0 > 0);
	KT_EXPECT(n > 6);
	KT_EQ_U64(back, 0);
	ks_source_close(src);
	ks_live_destroy(l);
}

/* ---- one decoding path: live pages == trace.dat reader on the same pages */

struct seen {
	uint64_t n;
	struct { int cpu; uint64_t ts; int tid; char name[32]; uint32_t size; uint32_t sum; } *r;
};

static uint32_t checksum(const void *p, uint32_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

static void note(struct seen *s, const struct ks_record *rec)
{
	s->r = realloc(s->r, (s->n + 1) * sizeof(*s->r));
	memset(&s->r[s->n], 0, sizeof(*s->r));
	s->r[s->n].cpu = rec->cpu;
	s->r[s->n].ts = rec->raw_ts;
	s->r[s->n].tid = rec->tid;
	snprintf(s->r[s->n].name, sizeof(s->r[s->n].name), "%s",
		 rec->event ? rec->event->name : "?");
	s->r[s->n].size = rec->size;
	s->r[s->n].sum = checksum(rec->data, rec->size);
	s->n++;
}

static void note_cb(void *ctx, const struct ks_record *rec)
{
	note(ctx, rec);
}

static int seen_cmp(const void *a, const void *b)
{
	const struct { int cpu; uint64_t ts; int tid; char name[32]; uint32_t size; uint32_t sum; }
		*x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->sum < y->sum ? -1 : x->sum > y->sum;
}

static struct ks_tdw *writer_for(struct ks_live *l, const char *path)
{
	struct ks_tdw_opts o = { .file_version = 7, .compression = "zstd" };
	const struct ks_live_event *evs;
	size_t n = ks_live_events(l, &evs), i;
	struct ks_error err;
	struct ks_tdw *w;
	char *hp, *he;
	int hl = 0, el = 0;

	o.nr_cpus = (uint32_t)ks_live_nr_cpus(l);
	o.page_size = ks_live_page_size(l);
	o.kernel_long_size = (uint32_t)tep_get_header_page_size(ks_live_tep(l));
	o.clock = ks_live_clock(l);
	w = ks_tdw_create(path, &o, &err);
	if (!w)
		return NULL;
	hp = tracefs_instance_file_read(NULL, "events/header_page", &hl);
	he = tracefs_instance_file_read(NULL, "events/header_event", &el);
	if (hp)
		ks_tdw_set_header_page(w, hp, (size_t)hl, &err);
	if (he)
		ks_tdw_set_header_event(w, he, (size_t)el, &err);
	free(hp);
	free(he);
	for (i = 0; i < n; i++)
		ks_tdw_add_event_format(w, evs[i].system, evs[i].format, evs[i].format_len, &err);
	return w;
}

static void t_same_decoding_as_tracedat(void)
{
	struct ks_live *l;
	struct ks_tdw *w;
	struct ks_error err;
	struct ks_source *src;
	struct ks_record rec;
	struct seen live = { 0 }, file = { 0 };
	char path[512];
	uint8_t *page;
	uint32_t ps;
	int cpu, n, pages = 0;
	uint64_t i, diff = 0;

	if (!tracefs_ok())
		return;
	l = open_sched("local");
	KT_REQUIRE(l);
	ps = ks_live_page_size(l);
	page = calloc(1, ps);
	snprintf(path, sizeof(path), "%s/live-pages.dat", kt_tmpdir());
	w = writer_for(l, path);
	KT_REQUIRE(w && page);
	KT_REQUIRE(ks_live_start(l, &err) == 0);
	make_activity();
	ks_live_stop(l);
	for (cpu = 0; cpu < ks_live_nr_cpus(l); cpu++) {
		while ((n = ks_live_read_page(l, cpu, page, &err)) > 0 && pages < MAX_PAGES) {
			memset(page + n, 0, ps - (uint32_t)n);
			KT_EXPECT(ks_live_decode_page(ks_live_tep(l), cpu, page, ps, note_cb, &live,
						      NULL) >= 0);
			KT_EXPECT(ks_tdw_add_page(w, (uint32_t)cpu, page, ps, &err) == 0);
			pages++;
		}
	}
	KT_REQUIRE(ks_tdw_close(w, &err) == 0);
	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	while (ks_source_next(src, &rec, &err) > 0)
		if (rec.type == KS_REC_EVENT)
			note(&file, &rec);
	ks_source_close(src);
	KT_EXPECT(live.n > 10);
	KT_EQ_U64(file.n, live.n);
	if (file.n == live.n) {
		qsort(live.r, live.n, sizeof(*live.r), seen_cmp);
		qsort(file.r, file.n, sizeof(*file.r), seen_cmp);
		for (i = 0; i < live.n; i++)
			if (memcmp(&live.r[i], &file.r[i], sizeof(*live.r)))
				diff++;
		KT_EQ_U64(diff, 0);
	}
	free(live.r);
	free(file.r);
	free(page);
	ks_live_destroy(l);
}

static void t_decode_rejects_bad_page(void)
{
	struct ks_live *l;
	uint8_t page[4096];

	if (!tracefs_ok())
		return;
	l = open_sched("local");
	KT_REQUIRE(l);
	memset(page, 0xff, sizeof(page)); /* commit far larger than the page */
	KT_EQ_INT(ks_live_decode_page(ks_live_tep(l), 0, page, sizeof(page), NULL, NULL, NULL), -1);
	ks_live_destroy(l);
}

static void t_bad_event_error(void)
{
	static const char *const evs[] = { "nosuchsystem:nosuchevent" };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l = NULL;
	struct ks_error err;

	if (!tracefs_ok())
		return;
	o.events = evs;
	o.nevents = 1;
	KT_EXPECT(ks_live_create(&l, &o, &err) < 0);
	KT_EXPECT(l == NULL);
	KT_EXPECT(strstr(err.msg, "matches no event") != NULL);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_default_events_x86),
		KT_CASE(t_default_events_other_arches),
		KT_CASE(t_tsc2nsec),
		KT_CASE(t_instance_lifetime),
		KT_CASE(t_live_source),
		KT_CASE(t_cross_cpu_order),
		KT_CASE(t_same_decoding_as_tracedat),
		KT_CASE(t_decode_rejects_bad_page),
		KT_CASE(t_bad_event_error),
		{ 0 },
	};
	return kt_main(cases);
}
