/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top_report.c - kvmscope top's tables as batch text, CSV and JSON (see
 * kvmscope/top_report.h).  The lines come filtered and named by the
 * command; here they are only laid out: the text's columns right-aligned
 * at their widths (a label cut at its width, a message line whole), the
 * CSV's and JSON's field names from the column titles.
 */
#include <stdio.h>
#include <string.h>

#include "kvmscope/json.h"
#include "kvmscope/limits.h"
#include "kvmscope/top_report.h"
#include "output/csv.h"

void ks_top_report_text(FILE *out, const char *title, const struct ks_top_cols *cols,
			const struct ks_top_line *lines, size_t n, const char *empty)
{
	size_t i;
	int c;

	fprintf(out, "%s\n", title);
	fprintf(out, "%-*s", cols->label_width, cols->label_title);
	for (c = 0; c < cols->ncols; c++)
		fprintf(out, " %*s", cols->cols[c].width, cols->cols[c].title);
	fputc('\n', out);
	if (!n)
		fprintf(out, "%s\n", empty);
	for (i = 0; i < n; i++) {
		char label[128];

		snprintf(label, sizeof(label), "%*s%s", lines[i].depth * 2, "", lines[i].label);
		for (c = 0; c < cols->ncols && !lines[i].cell[c][0]; c++)
			;
		if (c == cols->ncols) { /* a message (a VM's error): whole */
			fprintf(out, "%s\n", label);
			continue;
		}
		fprintf(out, "%-*.*s", cols->label_width, cols->label_width, label);
		for (c = 0; c < cols->ncols; c++)
			fprintf(out, " %*s", cols->cols[c].width, lines[i].cell[c]);
		fputc('\n', out);
	}
	fputc('\n', out);
}

/* A column's title as a CSV / JSON field name: lower case, '/' as '_'
 * ("EXITS/s" -> "exits_s"), into BUF. */
static const char *field_name(const char *title, char *buf, size_t len)
{
	snprintf(buf, len, "%s", title);
	for (size_t k = 0; buf[k]; k++)
		buf[k] = buf[k] == '/' ? '_' : (char)(buf[k] | 0x20);
	return buf;
}

void ks_top_report_csv_head(FILE *out, const struct ks_top_cols *cols)
{
	int c;

	fputs("interval,vm,depth,name", out);
	for (c = 0; c < cols->ncols; c++) {
		char low[24];

		fprintf(out, ",%s", field_name(cols->cols[c].title, low, sizeof(low)));
	}
	fputc('\n', out);
}

/* depth 0 = VM; a line's path is its label and those above it */
void ks_top_report_csv_lines(FILE *out, long interval, const struct ks_top_cols *cols,
			     const struct ks_top_line *lines, size_t n)
{
	size_t i;
	int c;

	for (i = 0; i < n; i++) {
		fprintf(out, "%ld,%d,%d,", interval, lines[i].vm, lines[i].depth);
		ks_csv_field(out, lines[i].label);
		for (c = 0; c < cols->ncols; c++)
			fprintf(out, ",%s", lines[i].cell[c]);
		fputc('\n', out);
	}
}

void ks_top_report_csv_exit_head(FILE *out)
{
	fputs("interval,end_s,level,vm,vm_name,vcpu,reason,exits,exits_per_s,time_pct,p99_ns,"
	      "total,overflow\n", out);
}

void ks_top_report_csv_exit(FILE *out, long interval, double end_s, const char *level,
			    const struct ks_top_row *r, const char *label, const char *reason,
			    int64_t overflow)
{
	fprintf(out, "%ld,%.6f,%s,%d,", interval, end_s, level, r->vm);
	ks_csv_field(out, label);
	fprintf(out, ",%d,", r->vcpu);
	ks_csv_field(out, reason);
	fprintf(out, ",%llu,%.3f,%.4f,%llu,%llu,", (unsigned long long)r->count, r->rate,
		r->time_pct, (unsigned long long)r->p99_ns, (unsigned long long)r->total);
	if (overflow >= 0)
		fprintf(out, "%lld", (long long)overflow);
	fputc('\n', out);
}

/* "vm" and "vm_name" (null when unknown) of every JSON object */
static void json_vm(struct ks_json *j, int32_t vm, const char *vm_name)
{
	ks_json_kv_i64(j, "vm", vm);
	ks_json_key(j, "vm_name");
	if (vm_name[0])
		ks_json_string(j, vm_name);
	else
		ks_json_null(j);
}

/* A cell: a number, true/false, or null when empty ("-": no figure yet).
 * A number's digits go through the checked parser; a sign is taken for a
 * rate that would go down. */
static void json_cell(struct ks_json *j, const char *key, const char *cell)
{
	bool neg = cell[0] == '-';
	double v;

	ks_json_key(j, key);
	if (!strcmp(cell, "true") || !strcmp(cell, "false"))
		ks_json_bool(j, cell[0] == 't');
	else if (ks_parse_seconds(cell + neg, strlen(cell + neg), &v) == 0)
		ks_json_double(j, neg ? -v : v);
	else
		ks_json_null(j);
}

void ks_top_report_json_line(struct ks_json *j, const struct ks_top_cols *cols,
			     const struct ks_top_line *l, const char *vm_name)
{
	int c;

	ks_json_begin_object(j);
	json_vm(j, l->vm, vm_name);
	ks_json_kv_i64(j, "depth", l->depth);
	ks_json_kv_string(j, "name", l->label);
	for (c = 0; c < cols->ncols; c++) {
		char low[24];

		json_cell(j, field_name(cols->cols[c].title, low, sizeof(low)), l->cell[c]);
	}
	ks_json_end_object(j);
}

void ks_top_report_json_exit(struct ks_json *j, const char *level, const struct ks_top_row *r,
			     const char *vm_name, bool reason)
{
	ks_json_begin_object(j);
	ks_json_kv_string(j, "level", level);
	json_vm(j, r->vm, vm_name);
	ks_json_kv_i64(j, "vcpu", r->vcpu);
	ks_json_key(j, "reason");
	if (reason)
		ks_json_string(j, r->name);
	else
		ks_json_null(j);
	ks_json_kv_u64(j, "exits", r->count);
	ks_json_kv_double(j, "exits_per_s", r->rate);
	ks_json_kv_double(j, "time_pct", r->time_pct);
	ks_json_kv_u64(j, "time_ns", r->time_ns);
	ks_json_kv_u64(j, "p99_ns", r->p99_ns);
	ks_json_kv_u64(j, "total", r->total);
	ks_json_end_object(j);
}
