/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * slow_log.h - the slow-exit log (kvmscope stat --than, top --than): one
 * line per occurrence slower than a threshold, as the stat engine measures
 * it (its cfg.observe hook), written as it comes: a table line, or one JSON
 * object per line (JSON Lines).
 *
 *	struct ks_slow_log log = { .out = stdout, .st = st, .than_ns = ns,
 *				   .than_text = "1ms", .json = false };
 *	cfg.observe = ks_slow_log_observe; cfg.observe_ctx = &log;
 *	...
 *	ks_slow_log_end(&log);   // "N exits slower than 1ms."
 */
#ifndef KVMSCOPE_SLOW_LOG_H
#define KVMSCOPE_SLOW_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ks_guestsyms;
struct ks_stat;
struct ks_stat_occurrence;

struct ks_slow_log {
	FILE *out;
	const struct ks_stat *st;  /* names of keys, VMs and details */
	uint64_t than_ns;          /* occurrences of more than this are logged */
	const char *than_text;     /* the threshold as the user wrote it */
	bool json;                 /* JSON Lines, else a table */
	bool no_heading;           /* table lines only (a screen draws its own) */
	/* the guests' kernel symbols, for the guest address: NULL = none */
	const struct ks_guestsyms *guest_syms;
	uint64_t count;            /* lines written */
};

/* One occurrence (logged when OCC->ns > log->than_ns). */
void ks_slow_log_add(struct ks_slow_log *log, const struct ks_stat_occurrence *occ);
/* The table's last line (nothing in JSON). */
void ks_slow_log_end(struct ks_slow_log *log);

#endif
