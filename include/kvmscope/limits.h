/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * limits.h - resource budgets of one run.
 *
 * Every reader and engine that keeps something per item of its input
 * (decompressed chunks, options, threads, records held for ordering) counts
 * it against one budget of the whole run, not a limit per item, so that no
 * input, however crafted, makes kvmscope use more than the budget allows.
 * Exceeding a budget is an error naming the file, the offset and the limit:
 *
 *	"FILE: offset N: the file needs more than 256 MiB of decompressed data
 *	 in memory at once (limit; raise it with --limit memory=SIZE)"
 *
 * The defaults are far above what real recordings need and keep a run under
 * about 256 MB of peak memory.  The CLI lets the user raise each one with
 * --limit NAME=VALUE (ks_limits_parse).
 */
#ifndef KVMSCOPE_LIMITS_H
#define KVMSCOPE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ks_limits {
	/* bytes of decompressed or buffered input data a reader holds in
	 * memory at once (all CPUs of all buffers together) */
	uint64_t memory;
	/* metadata objects one file may declare: options, buffers, CPU
	 * regions, guests, guest vCPUs, event formats, strings */
	uint64_t objects;
	/* distinct host threads (tids) an engine tracks */
	uint64_t threads;
	/* bytes an engine keeps in memory of what grows with its input
	 * (profile entries and stacks, timeline intervals); past it the rest
	 * goes to a temporary file in $TMPDIR, or into an "other" row where
	 * only the top of a table is printed (util/spill.h) */
	uint64_t tables;
};

/* The defaults: memory 160 MiB, objects 1,000,000, threads 200,000,
 * tables 48 MiB. */
#define KS_LIMIT_MEMORY_DEFAULT (160ull << 20)
#define KS_LIMIT_TABLES_DEFAULT (48ull << 20)
#define KS_LIMIT_OBJECTS_DEFAULT 1000000ull
#define KS_LIMIT_THREADS_DEFAULT 200000ull

void ks_limits_default(struct ks_limits *l);

/* The budget in force: L, or the defaults when L is NULL. */
const struct ks_limits *ks_limits_or_default(const struct ks_limits *l);

/* Parse "NAME=VALUE[,NAME=VALUE...]" into L (memory takes a size with an
 * optional K, M or G suffix, powers of 1024).  Returns 0, or -1 with err
 * naming the bad part. */
int ks_limits_parse(struct ks_limits *l, const char *spec, struct ks_error *err);

/* The one parser of counts and sizes: LEN bytes of S as a whole decimal
 * number, with SIZED an optional K, M or G suffix (powers of 1024, "KiB"
 * and "KB" spellings too).  0, or -1 when S is not one. */
int ks_parse_count(const char *s, size_t len, bool sized, uint64_t *out);
/* ... and of integers read from files and peers: LEN bytes of S as a
 * whole number in BASE (0: C's prefixes, 0x hex, 0 octal; 16: hex digits,
 * an 0x prefix allowed), no space; ks_parse_i64 takes a leading '-' or '+'.
 * 0, or -1 when S is not one or does not fit. */
int ks_parse_u64(const char *s, size_t len, int base, uint64_t *out);
int ks_parse_i64(const char *s, size_t len, int base, int64_t *out);
/* ... and of seconds: LEN bytes of S as a finite decimal number that
 * starts with a digit ("1.5", "2e3"; no sign).  0, or -1. */
int ks_parse_seconds(const char *s, size_t len, double *out);
/* ... and of other real numbers: LEN bytes of S as a finite decimal
 * number with an optional sign ("-1.5", ".5", "2e3"; no space, no hex, no
 * inf or nan).  0, or -1. */
int ks_parse_double(const char *s, size_t len, double *out);
/* ... and of a number that starts a longer text ("123-4", "ffff T name"):
 * the digits of BASE (10 or 16; no sign, space or 0x prefix) at the start
 * of the LEN bytes of S.  Returns how many bytes it took: 0 when S does
 * not start with a digit or the number does not fit. */
size_t ks_parse_u64_prefix(const char *s, size_t len, int base, uint64_t *out);

/* The message tail every "over the budget" error ends with, for NAME:
 * "(limit N; raise it with --limit NAME=VALUE)" written into BUF. */
const char *ks_limit_hint(char *buf, size_t size, const char *name, uint64_t value);

#endif
