/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_report.c - kvmscope stat output: human table, JSON, CSV and perf 6.1's
 * exact `perf kvm stat report` layout.
 *
 * Every format prints every view of the run (e.g. by reason, by vCPU) and a
 * footer with unmatched/lost/out-of-order counts: nothing is dropped silently.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/attribution.h"
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/stat_report.h"
#include "output/csv.h"

#define NSEC_PER_USEC 1000L

struct view_rows {
	struct ks_stat_row **rows;
	size_t n;
	uint64_t total_count, total_ns;
	unsigned dims;
};

static int collect(const struct ks_stat *st, int vi, unsigned dims, const char *sort_key,
		   struct view_rows *v, struct ks_error *err)
{
	struct ks_stat_row **rows;
	size_t i, n = ks_stat_rows(st, vi, &rows);

	memset(v, 0, sizeof(*v));
	v->dims = dims;
	v->n = n;
	v->rows = malloc((n + 1) * sizeof(*v->rows));
	if (!v->rows)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	memcpy(v->rows, rows, n * sizeof(*rows));
	for (i = 0; i < n; i++) {
		v->total_count += v->rows[i]->count;
		v->total_ns += v->rows[i]->total_ns;
	}
	return ks_stat_sort(st, v->rows, n, sort_key ? sort_key : "sample", err);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- perf's layout (builtin-kvm.c print_result): perf 6.1's, or 6.12's for
 * riscv; the name column is as wide as the architecture's perf makes it ---- */

static void perf_header(FILE *out, const struct ks_stat *st, const struct ks_stat_report_opts *o)
{
	fputs("\n\nAnalyze events for ", out);
	if (o->pid_arg)
		fprintf(out, "pid(s) %s, ", o->pid_arg);
	else
		fputs("all VMs, ", out);
	if (o->vcpu < 0)
		fputs("all VCPUs:\n\n", out);
	else
		fprintf(out, "VCPU %d:\n\n", o->vcpu);
	fprintf(out, "%*s ", ks_stat_perf_name_width(st), ks_stat_class_title(st));
	fprintf(out, "%10s ", "Samples");
	fprintf(out, "%9s ", "Samples%");
	fprintf(out, "%9s ", "Time%");
	fprintf(out, "%11s ", "Min Time");
	fprintf(out, "%11s ", "Max Time");
	fprintf(out, "%16s ", "Avg time");
	fputs("\n\n", out);
}

static int print_perf(FILE *out, const struct ks_stat *st, const struct ks_stat_report_opts *o,
		      struct ks_error *err)
{
	struct view_rows v;
	size_t i;

	if (collect(st, 0, KS_DIM_KEY, o->sort_key, &v, err) < 0) {
		free(v.rows);
		return -1;
	}
	perf_header(out, st, o);
	for (i = 0; i < v.n; i++) {
		const struct ks_stat_row *r = v.rows[i];
		char name[64]; /* perf's decode_str_len: names are cut at len - 1 */
		int dlen = ks_stat_perf_decode_len(st);

		ks_stat_key_name(st, r, true, name, sizeof(name));
		if (dlen > 0 && dlen <= (int)sizeof(name))
			name[dlen - 1] = '\0';
		fprintf(out, "%*s ", ks_stat_perf_name_width(st), name);
		fprintf(out, "%10llu ", (unsigned long long)r->count);
		fprintf(out, "%8.2f%% ", (double)r->count / (double)v.total_count * 100);
		fprintf(out, "%8.2f%% ", (double)r->total_ns / (double)v.total_ns * 100);
		fprintf(out, "%9.2fus ", (double)r->min_ns / NSEC_PER_USEC);
		fprintf(out, "%9.2fus ", (double)r->max_ns / NSEC_PER_USEC);
		fprintf(out, "%9.2fus ( +-%7.2f%% )",
			(double)r->total_ns / (double)r->count / NSEC_PER_USEC,
			ks_stat_row_stddev_pct(r));
		fputc('\n', out);
	}
	fprintf(out, "\nTotal Samples:%" PRIu64 ", Total events handled time:%.2fus.\n\n",
		v.total_count, (double)v.total_ns / (double)NSEC_PER_USEC);
	free(v.rows);
	return 0;
}

/* ---- shared row labels ---- */

static const char *dims_label(unsigned dims)
{
	switch (dims) {
	case KS_DIM_KEY: return "reason";
	case KS_DIM_VCPU: return "vcpu";
	case KS_DIM_VM: return "vm";
	case KS_DIM_VM | KS_DIM_VCPU: return "vm,vcpu";
	case KS_DIM_VM | KS_DIM_KEY: return "vm,reason";
	case KS_DIM_VCPU | KS_DIM_KEY: return "vcpu,reason";
	default: return "vm,vcpu,reason";
	}
}

static void vm_label(const struct ks_stat *st, int32_t vm, char *buf, size_t len)
{
	ks_vm_label(buf, len, vm, vm > 0 ? ks_stat_vm_name(st, vm) : NULL);
}

/* "3", or "tid 1234" for a thread whose vCPU no source names. */
static void vcpu_label(const struct ks_stat_row *r, char *buf, size_t len)
{
	if (r->vcpu >= 0)
		snprintf(buf, len, "%d", r->vcpu);
	else if (r->thread > 0)
		snprintf(buf, len, "tid %d", r->thread);
	else
		snprintf(buf, len, "?");
}

static void key_label(const struct ks_stat *st, const struct ks_stat_row *r, unsigned dims,
		      char *buf, size_t len)
{
	if (dims & KS_DIM_KEY)
		ks_stat_key_name(st, r, false, buf, len);
	else
		snprintf(buf, len, "all");
}

/* ---- human table ---- */

static void print_hist(FILE *out, const struct ks_stat_row *r)
{
	uint64_t h[64], maxc = 0;
	int i, lo = 64, hi = -1;

	ks_stat_row_log2_hist(r, h);
	for (i = 0; i < 64; i++) {
		if (!h[i])
			continue;
		if (i < lo)
			lo = i;
		hi = i;
		if (h[i] > maxc)
			maxc = h[i];
	}
	for (i = lo; i <= hi; i++) {
		int bar = maxc ? (int)(h[i] * 40 / maxc) : 0;

		fprintf(out, "    %12" PRIu64 " - %-12" PRIu64 " ns %10" PRIu64 " |%.*s\n",
			(uint64_t)(i ? 1ULL << i : 0), (uint64_t)((1ULL << (i + 1)) - 1), h[i], bar,
			"########################################");
	}
}

/* The Reason column's width: 22, or the longest of the N rows' names (an
 * MSR's "0xc0000301:W AMD_PERF_CNTR_GLOBAL_CTL"), so that no row shifts. */
static int reason_width(const struct ks_stat *st, struct ks_stat_row *const *rows, size_t n,
			unsigned dims)
{
	size_t i, w = 22;

	for (i = 0; i < n; i++) {
		char key[64];

		key_label(st, rows[i], dims, key, sizeof(key));
		if (strlen(key) > w)
			w = strlen(key);
	}
	return (int)w;
}

static void print_table_view(FILE *out, const struct ks_stat *st, const struct view_rows *v,
			     bool hist)
{
	int kw = reason_width(st, v->rows, v->n, v->dims);
	size_t i;

	fprintf(out, "\n%s by %s\n\n", ks_stat_class_title(st), dims_label(v->dims));
	if (v->dims & KS_DIM_VM)
		fprintf(out, "%-34s ", "VM");
	if (v->dims & KS_DIM_VCPU)
		fprintf(out, "%12s ", "vCPU");
	fprintf(out, "%-*s %10s %9s %9s %10s %10s %10s %10s %10s %8s\n", kw, "Reason", "Samples",
		"Samples%", "Time%", "Min(us)", "p50(us)", "p99(us)", "Max(us)", "Avg(us)", "+-%");
	for (i = 0; i < v->n; i++) {
		const struct ks_stat_row *r = v->rows[i];
		char key[64], vm[64];

		key_label(st, r, v->dims, key, sizeof(key));
		if (v->dims & KS_DIM_VM) {
			vm_label(st, r->vm, vm, sizeof(vm));
			fprintf(out, "%-34s ", vm);
		}
		if (v->dims & KS_DIM_VCPU) {
			char vc[24];

			vcpu_label(r, vc, sizeof(vc));
			fprintf(out, "%12s ", vc);
		}
		fprintf(out, "%-*s %10" PRIu64 " %8.2f%% %8.2f%% %10.2f %10.2f %10.2f %10.2f %10.2f %7.2f%%\n",
			kw, key, r->count, pct(r->count, v->total_count), pct(r->total_ns, v->total_ns),
			r->min_ns / 1e3, ks_stat_row_quantile(r, 0.5) / 1e3,
			ks_stat_row_quantile(r, 0.99) / 1e3, r->max_ns / 1e3,
			(double)r->total_ns / (double)r->count / 1e3, ks_stat_row_stddev_pct(r));
		if (hist)
			print_hist(out, r);
	}
	fprintf(out, "\nTotal: %" PRIu64 " samples, %.2f us handling time.\n", v->total_count,
		v->total_ns / 1e3);
}

struct footer_item {
	const char *what;
	uint64_t n;
};

static size_t footer_items(const struct ks_stat *st, const struct ks_stat_report_opts *o,
			   uint64_t unknown, struct footer_item *it)
{
	const struct ks_stat_anomalies *a = ks_stat_anomalies(st);
	const struct ks_source_stats *s = o->src_stats;
	struct footer_item all[] = {
		{ "events before their thread's first kvm_entry (ignored)", a->before_first_entry },
		{ "end events without a begin (ignored)", a->end_without_begin },
		{ "begin events replaced by a later begin", a->begin_replaced },
		{ "end events earlier than their begin (ignored)", a->end_before_begin },
		{ "occurrences with an exit code not in the table", unknown },
		{ "lost events", s ? s->lost_events : 0 },
		{ "exits the live engine could not count (its maps were full)",
		  s ? s->not_counted : 0 },
		{ "lost-event records", s ? s->lost_records : 0 },
		{ "records out of time order", s ? s->out_of_order : 0 },
		{ "events with no format in the input", s ? s->unknown_events : 0 },
		{ "records of kinds not decoded", s ? s->skipped : 0 },
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].n)
			it[n++] = all[i];
	return n;
}

static uint64_t unknown_occurrences(const struct ks_stat *st, const struct view_rows *key_view)
{
	uint64_t n = 0;
	size_t i;

	if (!(key_view->dims & KS_DIM_KEY))
		return 0;
	for (i = 0; i < key_view->n; i++)
		if (!ks_stat_key_known(st, key_view->rows[i]))
			n += key_view->rows[i]->count;
	return n;
}

/* Exits counted one by one (no times): the whole report when the input has
 * no end events, e.g. a text of kvm_exit lines only. */
static void print_begin_counts(FILE *out, const struct ks_stat *st, const struct view_rows *b)
{
	int kw = reason_width(st, b->rows, b->n, KS_DIM_KEY);
	size_t i;

	fprintf(out, "\n%s events by reason (counted; the input has no end events, so no times)\n\n",
		ks_stat_class_title(st));
	fprintf(out, "%-*s %10s %9s\n", kw, "Reason", "Count", "Count%");
	for (i = 0; i < b->n; i++) {
		char key[64];

		ks_stat_key_name(st, b->rows[i], false, key, sizeof(key));
		fprintf(out, "%-*s %10" PRIu64 " %8.2f%%\n", kw, key, b->rows[i]->count,
			pct(b->rows[i]->count, b->total_count));
	}
	fprintf(out, "\nTotal: %" PRIu64 " events.\n", b->total_count);
}

static void print_footer(FILE *out, const struct footer_item *it, size_t n)
{
	size_t i;

	if (!n)
		return;
	fputs("\nNot counted or questionable:\n", out);
	for (i = 0; i < n; i++)
		fprintf(out, "  %12" PRIu64 "  %s\n", it[i].n, it[i].what);
}

/* ---- vCPU / VM attribution ---- */

static void print_attribution(FILE *out, const struct ks_stat *st)
{
	const struct ks_attr_thread **ts;
	size_t i, n = ks_stat_attribution(st, &ts);
	char vm[64], vc[16];

	if (!n)
		return;
	fputs("\nHost threads (VM and vCPU, and what said so)\n\n", out);
	fprintf(out, "%8s %-18s %-34s %-13s %5s %-13s %10s\n", "tid", "name", "VM", "VM from",
		"vCPU", "vCPU from", "events");
	for (i = 0; i < n; i++) {
		const struct ks_attr_thread *t = ts[i];

		vm_label(st, t->vm, vm, sizeof(vm));
		if (t->vcpu >= 0)
			snprintf(vc, sizeof(vc), "%d", t->vcpu);
		else
			snprintf(vc, sizeof(vc), "-");
		fprintf(out, "%8d %-18s %-34s %-13s %5s %-13s %10llu%s\n", t->tid,
			t->comm[0] ? t->comm : "?", vm, ks_attr_source_name(t->vm_src), vc,
			ks_attr_source_name(t->vcpu_src), (unsigned long long)t->events,
			t->conflict ? "  (sources disagree)" : "");
	}
}

static const char *stat_vm_name(const void *ctx, int32_t vm)
{
	return ks_stat_vm_name(ctx, vm);
}

/* The "threads" array, written by the host model's writer: every command
 * prints it in this one shape. */
static void json_attribution(struct ks_json *j, const struct ks_stat *st)
{
	const struct ks_attr_thread **ts;
	size_t n = ks_stat_attribution(st, &ts);

	ks_host_json_attr(j, ts, n, stat_vm_name, st);
}

/* ---- JSON ---- */

static void json_row(struct ks_json *j, const struct ks_stat *st, const struct view_rows *v,
		     const struct ks_stat_row *r, bool hist)
{
	char buf[64];

	ks_json_begin_object(j);
	if (v->dims & KS_DIM_VM) {
		const char *name = r->vm > 0 ? ks_stat_vm_name(st, r->vm) : NULL;

		ks_json_kv_i64(j, "vm", r->vm);
		ks_json_key(j, "vm_name");
		if (name)
			ks_json_string(j, name);
		else
			ks_json_null(j);
	}
	if (v->dims & KS_DIM_VCPU) {
		ks_json_kv_i64(j, "vcpu", r->vcpu);
		if (r->thread > 0)
			ks_json_kv_i64(j, "thread", r->thread);
	}
	if (v->dims & KS_DIM_KEY) {
		key_label(st, r, v->dims, buf, sizeof(buf));
		ks_json_kv_string(j, "key", buf);
		ks_json_kv_u64(j, "key_value", r->key);
		ks_json_kv_i64(j, "info", r->info);
	}
	ks_json_kv_u64(j, "samples", r->count);
	ks_json_kv_double(j, "samples_pct", pct(r->count, v->total_count));
	ks_json_kv_double(j, "time_pct", pct(r->total_ns, v->total_ns));
	ks_json_kv_u64(j, "total_ns", r->total_ns);
	ks_json_kv_u64(j, "min_ns", r->min_ns);
	ks_json_kv_u64(j, "p50_ns", ks_stat_row_quantile(r, 0.5));
	ks_json_kv_u64(j, "p99_ns", ks_stat_row_quantile(r, 0.99));
	ks_json_kv_u64(j, "max_ns", r->max_ns);
	ks_json_kv_u64(j, "avg_ns", r->total_ns / r->count);
	ks_json_kv_double(j, "rse_pct", ks_stat_row_stddev_pct(r));
	if (hist) {
		uint64_t h[64];
		int i;

		ks_stat_row_log2_hist(r, h);
		ks_json_key(j, "log2_hist");
		ks_json_begin_array(j);
		for (i = 0; i < 64; i++) {
			if (!h[i])
				continue;
			ks_json_begin_array(j);
			ks_json_u64(j, i ? 1ULL << i : 0);
			ks_json_u64(j, h[i]);
			ks_json_end_array(j);
		}
		ks_json_end_array(j);
	}
	ks_json_end_object(j);
}

static void json_views(struct ks_json *j, const struct ks_stat *st, const struct view_rows *vs,
		       int nv, bool hist)
{
	int vi;
	size_t i;

	ks_json_key(j, "views");
	ks_json_begin_array(j);
	for (vi = 0; vi < nv; vi++) {
		ks_json_begin_object(j);
		ks_json_kv_string(j, "by", dims_label(vs[vi].dims));
		ks_json_kv_u64(j, "total_samples", vs[vi].total_count);
		ks_json_kv_u64(j, "total_ns", vs[vi].total_ns);
		ks_json_key(j, "rows");
		ks_json_begin_array(j);
		for (i = 0; i < vs[vi].n; i++)
			json_row(j, st, &vs[vi], vs[vi].rows[i], hist);
		ks_json_end_array(j);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static void json_begin_counts(struct ks_json *j, const struct ks_stat *st, const struct view_rows *b)
{
	size_t i;

	ks_json_key(j, "begin_counts");
	ks_json_begin_object(j);
	ks_json_kv_u64(j, "total", b->total_count);
	ks_json_key(j, "rows");
	ks_json_begin_array(j);
	for (i = 0; i < b->n; i++) {
		char key[64];

		ks_stat_key_name(st, b->rows[i], false, key, sizeof(key));
		ks_json_begin_object(j);
		ks_json_kv_string(j, "key", key);
		ks_json_kv_u64(j, "key_value", b->rows[i]->key);
		ks_json_kv_i64(j, "info", b->rows[i]->info);
		ks_json_kv_u64(j, "count", b->rows[i]->count);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
	ks_json_end_object(j);
}

/* The companion engine's rows (ks_stat_report_opts.companion). */
struct companion {
	struct view_rows vs[KS_STAT_MAX_VIEWS], begins;
	int nv;
};

static int companion_collect(const struct ks_stat_report_opts *o, struct companion *c,
			     struct ks_error *err)
{
	int vi, rc;

	memset(c, 0, sizeof(*c));
	if (!o->companion)
		return 0;
	c->nv = ks_stat_nviews(o->companion);
	rc = collect(o->companion, KS_STAT_BEGINS, KS_DIM_KEY, "sample", &c->begins, err);
	for (vi = 0; vi < c->nv && rc == 0; vi++)
		rc = collect(o->companion, vi, ks_stat_view_dims(o->companion, vi), o->sort_key,
			     &c->vs[vi], err);
	return rc;
}

static void companion_free(struct companion *c)
{
	int vi;

	free(c->begins.rows);
	for (vi = 0; vi < c->nv; vi++)
		free(c->vs[vi].rows);
}

static void companion_text(FILE *out, const struct ks_stat_report_opts *o,
			   const struct companion *c)
{
	int vi;

	if (!o->companion || !c->begins.total_count)
		return;
	fprintf(out, "\n%s\n", o->companion_title ? o->companion_title : "");
	if (c->vs[0].total_count)
		for (vi = 0; vi < c->nv; vi++)
			print_table_view(out, o->companion, &c->vs[vi], o->hist);
	fprintf(out, "\n%" PRIu64 " %s begin events in all, %" PRIu64
		" of them with a matching end.\n", c->begins.total_count, ks_stat_class_name(o->companion),
		ks_stat_anomalies(o->companion)->keyed_ends);
}

static void print_json(FILE *out, const struct ks_stat *st, const struct ks_stat_report_opts *o,
		       const struct view_rows *vs, int nv, const struct view_rows *b,
		       const struct footer_item *it, size_t nit, const struct companion *c)
{
	struct ks_json j;
	const int32_t *pvms;
	size_t i;

	ks_json_init(&j, out, !o->compact);
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "input", o->input);
	ks_json_kv_string(&j, "input_format", o->src_info ? o->src_info->format : NULL);
	ks_json_kv_string(&j, "event", ks_stat_class_name(st));
	ks_json_kv_string(&j, "isa", ks_stat_isa_name(st));
	ks_json_kv_string(&j, "arch", ks_stat_arch_name(st));
	ks_json_kv_string(&j, "arch_from", ks_stat_arch_source(st));
	ks_json_kv_string(&j, "measure", ks_stat_measure_name(st));
	ks_json_key(&j, "events_used");
	if (ks_stat_variant(st))
		ks_json_string(&j, ks_stat_variant(st));
	else
		ks_json_null(&j);
	ks_json_kv_i64(&j, "vcpu_filter", o->vcpu);
	json_views(&j, st, vs, nv, o->hist);
	json_begin_counts(&j, st, b);
	if (ks_stat_protected_vms(st, &pvms) || ks_stat_state_protected(st)) {
		ks_json_key(&j, "confidential_vms");
		ks_json_begin_array(&j);
		for (i = 0; i < ks_stat_protected_vms(st, &pvms); i++)
			ks_json_i64(&j, pvms[i]);
		ks_json_end_array(&j);
	}
	if (o->companion) {
		ks_json_key(&j, o->companion_key ? o->companion_key : "companion");
		ks_json_begin_object(&j);
		ks_json_kv_string(&j, "event", ks_stat_class_name(o->companion));
		json_views(&j, o->companion, c->vs, c->nv, o->hist);
		json_begin_counts(&j, o->companion, &c->begins);
		ks_json_end_object(&j);
	}
	json_attribution(&j, st);
	ks_json_key(&j, "not_counted");
	ks_json_begin_object(&j);
	for (i = 0; i < nit; i++)
		ks_json_kv_u64(&j, it[i].what, it[i].n);
	ks_json_end_object(&j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

/* ---- CSV ---- */

static void print_csv(FILE *out, const struct ks_stat *st, const struct view_rows *vs, int nv,
		      const struct view_rows *b)
{
	int vi;
	size_t i;

	fputs("view,vm,vm_name,vcpu,key,samples,samples_pct,time_pct,total_ns,min_ns,p50_ns,"
	      "p99_ns,max_ns,avg_ns,rse_pct\n", out);
	for (vi = 0; vi < nv; vi++) {
		for (i = 0; i < vs[vi].n; i++) {
			const struct ks_stat_row *r = vs[vi].rows[i];
			const char *name = r->vm > 0 ? ks_stat_vm_name(st, r->vm) : NULL;
			char key[64];

			key_label(st, r, vs[vi].dims, key, sizeof(key));
			ks_csv_field(out, dims_label(vs[vi].dims));
			fprintf(out, ",%d,", r->vm);
			ks_csv_field(out, name ? name : "");
			fprintf(out, ",%d,", r->vcpu);
			ks_csv_field(out, key);
			fprintf(out, ",%" PRIu64 ",%.4f,%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
				r->count, pct(r->count, vs[vi].total_count),
				pct(r->total_ns, vs[vi].total_ns), r->total_ns, r->min_ns,
				ks_stat_row_quantile(r, 0.5), ks_stat_row_quantile(r, 0.99),
				r->max_ns, r->total_ns / r->count, ks_stat_row_stddev_pct(r));
		}
	}
	/* Begin events counted one by one: count only, the time fields empty. */
	for (i = 0; i < b->n; i++) {
		char key[64];

		ks_stat_key_name(st, b->rows[i], false, key, sizeof(key));
		fputs("begins,-1,,-1,", out);
		ks_csv_field(out, key);
		fprintf(out, ",%" PRIu64 ",%.4f,,,,,,,,\n", b->rows[i]->count,
			pct(b->rows[i]->count, b->total_count));
	}
}

/* The VMs that exit through VMGEXIT: their registers and rip are hidden. */
static void print_protected(FILE *out, const struct ks_stat *st)
{
	const int32_t *vms;
	size_t i, n = ks_stat_protected_vms(st, &vms);

	if (!n)
		return;
	fputs("\nConfidential guests (state protected, exits through VMGEXIT):", out);
	for (i = 0; i < n; i++) {
		const char *name = ks_stat_vm_name(st, vms[i]);

		fprintf(out, " VM %d%s%s%s", vms[i], name ? " (" : "", name ? name : "",
			name ? ")" : "");
	}
	fputc('\n', out);
}

/* ---- entry point ---- */

int ks_stat_report(FILE *out, const struct ks_stat *st, const struct ks_stat_report_opts *o,
		   struct ks_error *err)
{
	struct view_rows vs[KS_STAT_MAX_VIEWS], begins;
	struct footer_item items[16];
	struct companion comp = { .nv = 0 };
	uint64_t unknown = 0;
	size_t nit;
	int nv, vi, rc = 0;

	if (o->format == KS_STAT_PERF)
		return print_perf(out, st, o, err);
	nv = ks_stat_nviews(st);
	memset(vs, 0, sizeof(vs));
	rc = collect(st, KS_STAT_BEGINS, KS_DIM_KEY, "sample", &begins, err);
	for (vi = 0; vi < nv && rc == 0; vi++) {
		rc = collect(st, vi, ks_stat_view_dims(st, vi), o->sort_key, &vs[vi], err);
		if (!unknown)
			unknown = unknown_occurrences(st, &vs[vi]);
	}
	if (rc == 0)
		rc = companion_collect(o, &comp, err);
	if (rc == 0) {
		nit = footer_items(st, o, unknown, items);
		if (o->format == KS_STAT_JSON) {
			print_json(out, st, o, vs, nv, &begins, items, nit, &comp);
		} else if (o->format == KS_STAT_CSV) {
			print_csv(out, st, vs, nv, &begins);
		} else {
			fprintf(out, "%s: %s, %s (%s, from the %s), %s exit reasons, %s time (%s)\n",
				o->input, o->src_info ? o->src_info->format : "?",
				ks_stat_arch_name(st), ks_stat_class_name(st),
				ks_stat_arch_source(st), ks_stat_isa_name(st),
				ks_stat_measure_name(st), strcmp(ks_stat_measure_name(st), "run") ?
				"exit -> entry" : "entry -> exit");
			if (ks_stat_variant(st))
				fprintf(out, "events used: %s\n", ks_stat_variant(st));
			if (!vs[0].total_count && begins.total_count)
				print_begin_counts(out, st, &begins);
			else
				for (vi = 0; vi < nv; vi++)
					print_table_view(out, st, &vs[vi], o->hist);
			/* the keyed begins against the occurrences they began:
			 * an MMIO read, begun by an unkeyed exit, is neither */
			if (begins.total_count != ks_stat_anomalies(st)->keyed_ends)
				fprintf(out, "\n%" PRIu64 " %s begin events in all, %" PRIu64
					" of them with a matching end.\n", begins.total_count,
					ks_stat_class_name(st), ks_stat_anomalies(st)->keyed_ends);
			companion_text(out, o, &comp);
			print_protected(out, st);
			print_attribution(out, st);
			print_footer(out, items, nit);
		}
	}
	free(begins.rows);
	for (vi = 0; vi < nv; vi++)
		free(vs[vi].rows);
	companion_free(&comp);
	return rc;
}
