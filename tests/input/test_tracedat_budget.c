/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_tracedat_budget.c - the trace.dat reader's memory and object budget.
 *
 * Inputs: the crafted files of tools/gen-hostile (made in the test's temp
 * dir) and the real hip24 recordings.  Properties: the memory held counts
 * the chunks of all CPUs together (a budget of L bytes lets exactly
 * floor(L / 64 MiB) CPUs hold a 64 MiB chunk: the error moves by one CPU
 * region per 64 MiB); raising a budget lets a file through that the default
 * stops; what is released is given back (a real recording reads under a
 * budget a little above its peak, however long it is); 1M options open in
 * linear time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/ktest.h"
#include "input/source_impl.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

/* DIR/NAME made by gen-hostile; NULL (skipped) when the tool is absent. */
static const char *hostile(const char *name)
{
	static char path[4096];
	const char *build = getenv("KS_BUILD");
	char cmd[8192], *out;
	int st = -1;

	snprintf(path, sizeof(path), "%s/%s", kt_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "'%s/tools/gen-hostile' '%s' '%s' 2>&1; echo $?",
		 build && *build ? build : "build", kt_tmpdir(), name);
	out = kt_run(cmd, &st);
	if (!out || atoi(out) != 0) {
		kt_skip("gen-hostile did not run: %s", out ? out : "");
		free(out);
		return NULL;
	}
	free(out);
	return path;
}

/* Open PATH with the budgets L and read it to the end.  Returns 0, or -1
 * with err set (at open or while reading). */
static int read_all(const char *path, const struct ks_limits *l, uint64_t *records,
		    struct ks_error *err)
{
	struct ks_source_opts o = { .flags = KS_OPEN_NO_SYMBOLS, .limits = l };
	struct ks_source *src;
	struct ks_record rec;
	int r;

	*records = 0;
	if (ks_source_open_opts(&src, path, &o, err) < 0)
		return -1;
	while ((r = ks_source_next(src, &rec, err)) > 0)
		(*records)++;
	ks_source_close(src);
	return r < 0 ? -1 : 0;
}

/* The N of "offset N:" in a message; 0 if absent. */
static uint64_t msg_offset(const struct ks_error *err)
{
	const char *p = strstr(err->msg, ": offset ");

	return p ? strtoull(p + 9, NULL, 10) : 0;
}

static void t_memory_counts_all_cpus(void)
{
	const char *p = hostile("zstd-bomb-40cpus.dat");
	struct ks_limits l;
	struct ks_error err;
	uint64_t n, off[4];
	int k;

	if (!p)
		return;
	/* the default: an error naming the limit, no records */
	KT_EXPECT(read_all(p, NULL, &n, &err) < 0);
	KT_EXPECT(strstr(err.msg, "--limit memory=") != NULL);
	KT_EXPECT(strstr(err.msg, "zstd-bomb-40cpus.dat: offset ") != NULL);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&err)), "limit"); /* a budget to raise */
	/* a budget for K chunks of 64 MiB (plus 16 MiB of slack) stops at CPU K */
	for (k = 0; k < 4; k++) {
		ks_limits_default(&l);
		l.memory = ((uint64_t)k << 26) + (16u << 20);
		KT_EXPECT(read_all(p, &l, &n, &err) < 0);
		KT_EXPECT(strstr(err.msg, "more than") != NULL);
		off[k] = msg_offset(&err);
	}
	/* the CPU regions are equally long: the error moves one region a time */
	KT_EXPECT(off[0] > 0);
	KT_EXPECT(off[1] > off[0]);
	KT_EQ_U64(off[2] - off[1], off[1] - off[0]);
	KT_EQ_U64(off[3] - off[2], off[1] - off[0]);
}

static void t_overlap_is_an_error(void)
{
	const char *p = hostile("zstd-bomb-shared.dat");
	struct ks_limits l;
	struct ks_error err;
	uint64_t n;

	if (!p)
		return;
	ks_limits_default(&l);
	l.memory = 8ull << 30; /* not a question of budget */
	KT_EXPECT(read_all(p, &l, &n, &err) < 0);
	KT_EXPECT(strstr(err.msg, "overlaps the data of CPU 0 of buffer \"\"") != NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void t_objects_budget_and_linear_time(void)
{
	const char *p = hostile("buffers-1m.dat");
	struct ks_limits l;
	struct ks_error err;
	uint64_t n;
	double t;

	if (!p)
		return;
	KT_EXPECT(read_all(p, NULL, &n, &err) < 0);
	KT_EXPECT(strstr(err.msg, "(limit 1000000; raise it with --limit objects=VALUE)") != NULL);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&err)), "limit");
	/* raised: 1M empty buffers (3M objects) open, in linear time (the
	 * quadratic scan took minutes), and hold no records */
	ks_limits_default(&l);
	l.objects = 4000000;
	t = now();
	KT_EXPECT(read_all(p, &l, &n, &err) == 0);
	t = now() - t;
	KT_EQ_U64(n, 0);
	KT_EXPECT(t < 10.0);
	p = hostile("buffers-100k.dat");
	KT_REQUIRE(p);
	KT_EXPECT(read_all(p, NULL, &n, &err) == 0);
}

static void t_unfinished(void)
{
	const char *p = hostile("v7-offset0.dat");
	struct ks_error err;
	uint64_t n;

	if (!p)
		return;
	KT_EXPECT(read_all(p, NULL, &n, &err) < 0);
	KT_EXPECT(strstr(err.msg, "v7-offset0.dat: offset 29: truncated: ") != NULL);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&err)), "input"); /* a cut file: not a budget */
	p = hostile("v7-unfinished-data.dat");
	KT_REQUIRE(p);
	KT_EXPECT(read_all(p, NULL, &n, &err) < 0);
	KT_EXPECT(strstr(err.msg, ": truncated: data section without a BUFFER option") != NULL);
}

/* Blocks given back are no longer counted: a whole real recording (9k
 * events in many chunks, symbols parsed) reads under a budget of 48 MiB
 * (its peak is about 33 MB), but not under 4 MiB. */
static void t_budget_released(void)
{
	const char *p = kt_shared("data/hip24/host-1vcpu-9k.trace.dat");
	struct ks_source *src;
	struct ks_record rec;
	struct ks_limits l;
	struct ks_source_opts o = { .limits = &l };
	struct ks_error err;
	uint64_t n = 0;
	int r;

	if (!p) {
		kt_skip("hip24 recordings absent");
		return;
	}
	ks_limits_default(&l);
	l.memory = 48u << 20;
	KT_REQUIRE(ks_source_open_opts(&src, p, &o, &err) == 0);
	while ((r = ks_source_next(src, &rec, &err)) > 0)
		n++;
	KT_EQ_INT(r, 0);
	/* trace-cmd report -t prints 18009 events (hip24/expected) */
	KT_EQ_U64(n, 18009);
	ks_source_close(src);
	l.memory = 4u << 20;
	KT_EXPECT(ks_source_open_opts(&src, p, &o, &err) < 0);
	KT_EXPECT(strstr(err.msg, "(limit 4194304; raise it with --limit memory=VALUE)") != NULL);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_memory_counts_all_cpus),
		KT_CASE(t_overlap_is_an_error),
		KT_CASE(t_objects_budget_and_linear_time),
		KT_CASE(t_unfinished),
		KT_CASE(t_budget_released),
		{ 0 },
	};
	return kt_main(cases);
}
