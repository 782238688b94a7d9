/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_report.h - printing kvmscope stat results: table, JSON, CSV, perf.
 */
#ifndef KVMSCOPE_STAT_REPORT_H
#define KVMSCOPE_STAT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "source.h"
#include "stat.h"

enum ks_stat_format {
	KS_STAT_TABLE,
	KS_STAT_JSON,
	KS_STAT_CSV,
	KS_STAT_PERF,   /* perf 6.1 `perf kvm stat report` layout, byte for byte */
};

struct ks_stat_report_opts {
	enum ks_stat_format format;
	const char *sort_key;      /* "sample" by default */
	bool hist;                 /* log2 latency histograms per row */
	bool compact;              /* JSON on one line (after JSON Lines) */
	const char *pid_arg;       /* the --pid argument as given (perf's header) */
	int vcpu;                  /* --vcpu or -1 */
	const char *input;         /* file name for the header */
	const struct ks_source_info *src_info;
	const struct ks_source_stats *src_stats;
	/* Another class's engine fed the same records, printed after the
	 * tables under COMPANION_TITLE (table) and as COMPANION_KEY: {views,
	 * begin_counts} (JSON); not in CSV or perf's layout.  NULL: none. */
	const struct ks_stat *companion;
	const char *companion_title, *companion_key;
};

int ks_stat_report(FILE *out, const struct ks_stat *st, const struct ks_stat_report_opts *o,
		   struct ks_error *err);

#endif
