/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top_report.h - kvmscope top's tables as text, CSV and JSON.
 *
 * Every view of top is a table: its columns (struct ks_top_cols) and its
 * lines (struct ks_top_line: a label indented by depth and cells already
 * formatted), which the command builds from its models, filtered and
 * named; the ncurses screen draws the same lines.  The exits view's CSV
 * and JSON are not its lines but every level of struct ks_top_row
 * (top.h), one record each.
 */
#ifndef KVMSCOPE_TOP_REPORT_H
#define KVMSCOPE_TOP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "top.h"

#define KS_TOP_MAX_COLS 5

struct ks_top_col {
	const char *title;
	int width;     /* cell width (right-aligned) in batch text */
	int prio;      /* lower = kept longer as the screen narrows */
	int swidth;    /* on the screen, narrower */
};

struct ks_top_cols {
	const char *label_title;
	int label_width;   /* batch text */
	int ncols;
	struct ks_top_col cols[KS_TOP_MAX_COLS];
};

/* One line of a view: a label (indented by depth) and its cells; a line
 * whose cells are all empty is a message (a VM's error). */
struct ks_top_line {
	int depth;
	int32_t vm;
	char label[96];
	char cell[KS_TOP_MAX_COLS][24];
};

/* Batch text: TITLE, the column heads, the N LINES (EMPTY when there are
 * none), then a blank line. */
void ks_top_report_text(FILE *out, const char *title, const struct ks_top_cols *cols,
			const struct ks_top_line *lines, size_t n, const char *empty);

/* CSV of a view's lines: the head line (before the first interval), and
 * one line per table line "interval,vm,depth,name,CELLS...". */
void ks_top_report_csv_head(FILE *out, const struct ks_top_cols *cols);
void ks_top_report_csv_lines(FILE *out, long interval, const struct ks_top_cols *cols,
			     const struct ks_top_line *lines, size_t n);
/* ... and the exits view's: its head line, and row R of LEVEL ("vm",
 * "vcpu", "reason", "vcpu_reason") with its VM's LABEL and REASON (""
 * for the VM and vCPU levels), at END_S seconds into the trace, and the
 * events the live engine could not count in the interval, OVERFLOW (its
 * maps full; the same in every row of the interval; < 0: no live engine,
 * an empty cell). */
void ks_top_report_csv_exit_head(FILE *out);
void ks_top_report_csv_exit(FILE *out, long interval, double end_s, const char *level,
			    const struct ks_top_row *r, const char *label, const char *reason,
			    int64_t overflow);

/* JSON objects: a table line with its VM's name (""; null), each cell
 * a number, true/false or null; an exit row of LEVEL (REASON: the row's
 * name is its reason, else null). */
void ks_top_report_json_line(struct ks_json *j, const struct ks_top_cols *cols,
			     const struct ks_top_line *l, const char *vm_name);
void ks_top_report_json_exit(struct ks_json *j, const char *level, const struct ks_top_row *r,
			     const char *vm_name, bool reason);

#endif
