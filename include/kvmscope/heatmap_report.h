/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * heatmap_report.h - a stat run's latency heatmap (heatmap.h, whose series
 * are the rows of the stat engine's view 0) as a standalone SVG picture,
 * as JSON, or as shade blocks in a terminal.  One panel per row (exit
 * reason, or VM / vCPU / reason with stat --by), largest count first.
 */
#ifndef KVMSCOPE_HEATMAP_REPORT_H
#define KVMSCOPE_HEATMAP_REPORT_H

#include <stdio.h>

struct ks_heatmap;
struct ks_stat;

/* INPUT: the file's name for the titles.  Return 0, or -1 when out of
 * memory. */
int ks_heatmap_write_svg(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st,
			 const char *input);
int ks_heatmap_write_json(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st,
			  const char *input);
int ks_heatmap_print_text(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st);

#endif
