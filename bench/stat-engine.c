/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat-engine.c - the stat engine's own cost per record, without the reader.
 *
 *	stat-engine [-n RECORDS] [-k REPEATS] [-r RUNS] [-t] FILE
 *
 * Reads the first RECORDS records of FILE (default 20000: records and
 * payloads of about the size a reader keeps in its caches) into memory,
 * payloads copied one after the other as in the reader's buffers; then
 * RUNS times (default 5) feeds them REPEATS times (default 50), in batches
 * of 64, to a fresh engine set up as `kvmscope stat --format perf` does
 * (-t: as the default table does: histograms and begin counts).  Each
 * repeat moves the timestamps past the previous one's, so that the state
 * machine sees one long recording.  Prints "records=N ns_per_record=X
 * rows=R count=C total_ns=T": the best run's time per record fed and a
 * digest of the rows (the same for any two builds that count the same).
 * The reader's time, which `kvmscope stat` also pays, is left out: what
 * is left is the engine's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvmscope/ctx.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"

#define BATCH 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A copy of REC that outlives the reader's buffers, its payload at
 * *ARENA (advanced past it). */
static int keep(struct ks_record *dst, const struct ks_record *rec, unsigned char **arena,
		const unsigned char *end)
{
	*dst = *rec;
	if (rec->size && rec->data) {
		if ((size_t)(end - *arena) < rec->size)
			return -1;
		memcpy(*arena, rec->data, rec->size);
		dst->data = *arena;
		*arena += (rec->size + 7) & ~7u;
	}
	if (rec->comm && !(dst->comm = strdup(rec->comm)))
		return -1;
	dst->callchain = NULL;
	dst->nr_callchain = 0;
	return 0;
}

static struct ks_stat *engine(struct ks_source *src, bool table)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_error err;
	struct ks_stat *st;

	if (!table) {
		cfg.perf_compat = true;
		cfg.no_histograms = true;
		cfg.no_begin_counts = true;
		cfg.measure = KS_MEASURE_PERF;
	}
	st = ks_stat_new_source(&cfg, src, &err);
	if (!st) {
		fprintf(stderr, "stat-engine: %s\n", err.msg);
		exit(1);
	}
	return st;
}

int main(int argc, char **argv)
{
	size_t want = 20000, n = 0, i, arena_size;
	int runs = 5, repeats = 50, opt, r, run, rep;
	unsigned char *arena, *at;
	uint64_t span;
	bool table = false;
	struct ks_record *recs, batch[BATCH];
	struct ks_source *src;
	struct ks_error err;
	struct ks_ctx *ctx;
	double best = 1e9;

	while ((opt = getopt(argc, argv, "n:k:r:t")) != -1) {
		if (opt == 'n')
			want = strtoull(optarg, NULL, 10);
		else if (opt == 'k')
			repeats = atoi(optarg);
		else if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 't')
			table = true;
		else
			return 2;
	}
	if (optind + 1 != argc || !want || runs < 1 || repeats < 1) {
		fprintf(stderr, "usage: stat-engine [-n RECORDS] [-k REPEATS] [-r RUNS] [-t] FILE\n");
		return 2;
	}
	ctx = ks_ctx_new();
	if (!ctx || ks_source_open_opts(&src, argv[optind],
					&(struct ks_source_opts){ .flags = KS_OPEN_NO_SYMBOLS,
								  .ctx = ctx }, &err) < 0) {
		fprintf(stderr, "stat-engine: %s\n", ctx ? err.msg : "out of memory");
		return 1;
	}
	recs = calloc(want, sizeof(*recs));
	arena_size = want * 512;
	at = arena = malloc(arena_size);
	if (!recs || !arena)
		return 1;
	ks_stat_select(engine(src, table), src); /* as kvmscope stat; the engine leaks */
	while (n < want && (r = ks_source_next_batch(src, batch, BATCH, &err)) > 0)
		for (i = 0; i < (size_t)r && n < want; i++)
			if (keep(&recs[n++], &batch[i], &at, arena + arena_size) < 0)
				return 1;
	span = n ? recs[n - 1].ts - recs[0].ts + 1 : 0;
	for (run = 0; run < runs; run++) {
		struct ks_stat *st = engine(src, table);
		struct ks_stat_row **rows;
		uint64_t count = 0, total = 0;
		size_t nrows, k;
		double t0, t = 0;

		for (rep = 0; rep < repeats; rep++) {
			for (i = 0; rep && i < n; i++)
				if (recs[i].ts)
					recs[i].ts += span;
			t0 = now_s();
			for (i = 0; i < n; i += BATCH)
				ks_stat_add_batch(st, recs + i, n - i < BATCH ? n - i : BATCH);
			t += now_s() - t0;
		}
		for (i = 0; i < n; i++) /* back to the first repeat's times */
			if (recs[i].ts)
				recs[i].ts -= span * (uint64_t)(repeats - 1);
		if (t < best)
			best = t;
		nrows = ks_stat_rows(st, 0, &rows);
		for (k = 0; k < nrows; k++) {
			count += rows[k]->count;
			total += rows[k]->total_ns;
		}
		if (run == runs - 1)
			printf("records=%zux%d ns_per_record=%.2f rows=%zu count=%llu total_ns=%llu\n", n, repeats,
			       best * 1e9 / (double)n / repeats, nrows, (unsigned long long)count,
			       (unsigned long long)total);
		ks_stat_free(st);
	}
	ks_source_close(src);
	ks_ctx_free(ctx);
	return 0;
}
