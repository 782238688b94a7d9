/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_print.c - kvmscope top without a screen: each interval as plain
 * text (--batch: a title, the column heads, the rows), as CSV lines
 * (--csv) or as one JSON document per line (--json), and the exits slower
 * than --than, written as they end or kept for the screen's bottom lines.
 * Here the titles, and which rows with which names (the filters); their
 * layout is output/top_report.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_top_impl.h"
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/source.h"
#include "kvmscope/top_report.h"
#include "util/text.h"

/* An exit slower than --than (ks_top_observe): printed (batch, JSON
 * Lines), or kept for the screen's bottom lines. */
void top_slow_exit(void *ctx, const struct ks_stat *st, const struct ks_stat_occurrence *occ)
{
	struct top_state *s = ctx;
	FILE *f;

	s->slow.st = st;
	if (!s->screen) {
		ks_slow_log_add(&s->slow, occ);
		s->slow_printed = !s->a->json;
		return;
	}
	if (s->nslow == SLOW_KEPT) {
		memmove(s->slow_lines[0], s->slow_lines[1], sizeof(s->slow_lines[0]) * (SLOW_KEPT - 1));
		s->nslow--;
	}
	f = fmemopen(s->slow_lines[s->nslow], sizeof(s->slow_lines[0]), "w");
	if (!f)
		return;
	s->slow.out = f;
	s->slow.no_heading = true;
	ks_slow_log_add(&s->slow, occ);
	fclose(f);
	s->slow_lines[s->nslow][strcspn(s->slow_lines[s->nslow], "\n")] = '\0';
	if (s->slow_lines[s->nslow][0])
		s->nslow++;
}

/* ------------------------------------------------------------------ */
/* the title */

/* ", overflow N (maps full), " when the engine could not count
 * everything in the interval, else ""; static storage. */
const char *top_overflow_text(const struct top_state *s)
{
	static char buf[64];
	uint64_t n;

	if (!s->eng)
		return "";
	n = ks_engine_snapshot_overflow(&s->delta);
	if (!n)
		return "";
	snprintf(buf, sizeof(buf), "overflow %llu (maps full), ", (unsigned long long)n);
	return buf;
}

static void title(const struct top_state *s, char *buf, size_t len)
{
	double secs;
	uint64_t recs;

	if (STATS_VIEW(s->a->view) || !s->top) {
		size_t nvms = top_stats_vms_shown(s);

		snprintf(buf, len, "kvmscope top - %s, interval %ld: %.2f s, %zu VMs [sort: %s]",
			 top_view_names[s->a->view], s->interval, s->last_secs, nvms,
			 s->a->view == VIEW_HALT ? "found" : "delta/s, value");
		return;
	}
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	recs = ks_top_interval_records(s->top);
	snprintf(buf, len, "kvmscope top - %s, interval %ld: %.2f s, %llu events (%.0f/s), lost %llu, "
		 "%s%s%s [sort: %s]",
		 s->live ? s->live_what : ks_source_path(s->src), s->interval, secs,
		 (unsigned long long)recs, secs > 0 ? (double)recs / secs : 0.0,
		 (unsigned long long)ks_top_interval_lost(s->top), top_overflow_text(s),
		 s->a->view == VIEW_EXITS ? "exits by " : "events per VM",
		 s->a->view == VIEW_EXITS ? ks_top_arch(s->top) : "",
		 s->a->view == VIEW_EXITS ? top_sort_columns[s->a->sort] : "vm, count");
}

/* batch text and CSV */

void top_print_text(struct top_state *s)
{
	char t[512];

	top_build_rows(s);
	title(s, t, sizeof(t));
	if (s->slow_printed)
		putchar('\n');
	s->slow_printed = false;
	ks_top_report_text(stdout, t, &top_view_cols[s->a->view], s->rows, s->nrows,
			   top_empty_text(s));
	fflush(stdout);
}

/* The name the VM row of VM has ("" if none): every row level shows it. */
static const char *vm_row_name(const struct top_state *s, int32_t vm)
{
	const struct ks_top_row *rows;
	size_t n = ks_top_rows(s->top, KS_TOP_VM, &rows), i;

	for (i = 0; i < n; i++)
		if (rows[i].vm == vm)
			return rows[i].name;
	return "";
}

static void csv_exit_rows(struct top_state *s, enum ks_top_level lv, const char *level)
{
	size_t n, i;
	struct ks_top_row *rows = top_sorted_copy(s, lv, &n);
	double end = (double)(s->end_ns - ks_top_first_ts(s->top)) / 1e9;
	int64_t over = s->eng ? (int64_t)ks_engine_snapshot_overflow(&s->delta) : -1;
	char label[128], safe[256];

	for (i = 0; i < n; i++) {
		const struct ks_top_row *r = &rows[i];
		bool reason = lv == KS_TOP_REASON || lv == KS_TOP_VCPU_REASON;

		const char *known = reason ? vm_row_name(s, r->vm) : r->name;

		if (!top_vm_wanted(s, r->vm, known) || (reason && !top_name_wanted(s, r->name)))
			continue;
		top_vm_label(s, r->vm, known, label, sizeof(label));
		ks_top_report_csv_exit(stdout, s->interval, end, level, r, label,
				       reason ? ks_term_escape(safe, sizeof(safe), r->name) : "", over);
	}
	free(rows);
}

void top_print_csv(struct top_state *s)
{
	const struct ks_top_cols *vc = &top_view_cols[s->a->view];

	if (s->a->view == VIEW_EXITS) {
		if (s->interval == 1)
			ks_top_report_csv_exit_head(stdout);
		csv_exit_rows(s, KS_TOP_VM, "vm");
		csv_exit_rows(s, KS_TOP_VCPU, "vcpu");
		csv_exit_rows(s, KS_TOP_REASON, "reason");
		csv_exit_rows(s, KS_TOP_VCPU_REASON, "vcpu_reason");
		fflush(stdout);
		return;
	}
	/* the other views: their rows */
	if (s->interval == 1)
		ks_top_report_csv_head(stdout, vc);
	top_build_rows(s);
	ks_top_report_csv_lines(stdout, s->interval, vc, s->rows, s->nrows);
	fflush(stdout);
}

/* JSON: the CSV's rows as objects, one document per interval and line,
 * with the host model's "threads" (the shape of every command's). */

/* VM's name for JSON ("" when unknown). */
static const char *json_vm_name(const struct top_state *s, int32_t vm, char *name, size_t len)
{
	top_vm_name(s, vm, s->host ? ks_host_vm_name(s->host, vm) : NULL, name, len);
	return name;
}

static void json_exit_rows(struct ks_json *j, struct top_state *s, enum ks_top_level lv,
			   const char *level)
{
	size_t n, i;
	struct ks_top_row *rows = top_sorted_copy(s, lv, &n);
	char name[64];

	for (i = 0; i < n; i++) {
		const struct ks_top_row *r = &rows[i];
		bool reason = lv == KS_TOP_REASON || lv == KS_TOP_VCPU_REASON;

		if (!top_vm_wanted(s, r->vm, r->name) || (reason && !top_name_wanted(s, r->name)))
			continue;
		ks_top_report_json_exit(j, level, r, json_vm_name(s, r->vm, name, sizeof(name)),
					reason);
	}
	free(rows);
}

/* The document's facts about the interval: its number, view, input,
 * and the trace's times and counts (or the statistics' interval). */
static void json_interval(struct ks_json *j, const struct top_state *s)
{
	ks_json_kv_i64(j, "interval", s->interval);
	ks_json_kv_string(j, "view", top_view_names[s->a->view]);
	ks_json_key(j, "input");
	if (s->live)
		ks_json_null(j);
	else
		ks_json_string(j, ks_source_path(s->src));
	if (!s->top) {
		ks_json_kv_double(j, "interval_s", s->last_secs);
		return;
	}
	ks_json_kv_u64(j, "end_ns", s->end_ns - ks_top_first_ts(s->top));
	ks_json_kv_u64(j, "interval_ns", ks_top_interval_ns(s->top));
	ks_json_kv_u64(j, "events", ks_top_interval_records(s->top));
	ks_json_kv_u64(j, "lost", ks_top_interval_lost(s->top));
	ks_json_kv_string(j, "arch", ks_top_arch(s->top));
	if (s->eng) {
		ks_json_kv_string(j, "engine", ks_engine_name(s->eng));
		ks_json_kv_u64(j, "overflow", ks_engine_snapshot_overflow(&s->delta));
	}
}

/* The rows of a view other than the exits: as the CSV's. */
static void json_view_rows(struct ks_json *j, struct top_state *s)
{
	char name[64];
	size_t i;

	top_build_rows(s);
	for (i = 0; i < s->nrows; i++)
		ks_top_report_json_line(j, &top_view_cols[s->a->view], &s->rows[i],
					json_vm_name(s, s->rows[i].vm, name, sizeof(name)));
}

void top_print_json(struct top_state *s)
{
	struct ks_json j;

	ks_json_init(&j, stdout, false);
	ks_json_begin_object(&j);
	json_interval(&j, s);
	ks_json_key(&j, "rows");
	ks_json_begin_array(&j);
	if (s->a->view == VIEW_EXITS && s->top) {
		json_exit_rows(&j, s, KS_TOP_VM, "vm");
		json_exit_rows(&j, s, KS_TOP_VCPU, "vcpu");
		json_exit_rows(&j, s, KS_TOP_REASON, "reason");
		json_exit_rows(&j, s, KS_TOP_VCPU_REASON, "vcpu_reason");
	} else if (s->a->view != VIEW_EXITS) {
		json_view_rows(&j, s);
	}
	ks_json_end_array(&j);
	if (s->host) {
		ks_host_json_threads(s->host, &j);
	} else {
		ks_json_key(&j, "threads");
		ks_json_begin_array(&j);
		ks_json_end_array(&j);
	}
	ks_json_end_object(&j);
	ks_json_finish(&j);
	fflush(stdout);
}
