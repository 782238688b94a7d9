/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * heatmap_report.c - the latency heatmap as SVG, JSON and terminal text
 * (see include/kvmscope/heatmap_report.h).
 *
 * Every panel has the same axes: time bins left to right, latency buckets
 * (powers of two of nanoseconds, the range any series uses) bottom to top.
 * A cell's colour is its count on a log scale of its panel's largest cell,
 * so rare slow exits stay visible next to millions of fast ones; empty
 * cells are not drawn.  The SVG's grid of panel N is the <g> with id
 * "grid-N", whose data-* attributes give its cell size and first bucket,
 * for programs (tests) that look at the picture.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/heatmap.h"
#include "kvmscope/heatmap_report.h"
#include "kvmscope/json.h"
#include "kvmscope/stat.h"

struct panel {
	size_t i;             /* series index */
	const struct ks_stat_row *row;
	uint64_t count, max;  /* occurrences, largest cell */
	unsigned bmin, bmax;  /* the buckets it uses */
	char name[128];
};

static void row_name(const struct ks_stat *st, const struct ks_stat_row *r, char *buf, size_t len)
{
	unsigned dims = ks_stat_view_dims(st, 0);
	char key[80] = "all", vm[64] = "", vcpu[24] = "";
	const char *name;

	if (dims & KS_DIM_KEY)
		ks_stat_key_name(st, r, false, key, sizeof(key));
	if (dims & KS_DIM_VM) {
		name = r->vm > 0 ? ks_stat_vm_name(st, r->vm) : NULL;
		if (name)
			snprintf(vm, sizeof(vm), "VM %d(%s) ", r->vm, name);
		else
			snprintf(vm, sizeof(vm), "VM %d ", r->vm);
	}
	if (dims & KS_DIM_VCPU) {
		if (r->vcpu >= 0)
			snprintf(vcpu, sizeof(vcpu), "vCPU %d ", r->vcpu);
		else
			snprintf(vcpu, sizeof(vcpu), "tid %d ", r->thread);
	}
	snprintf(buf, len, "%s%s%s", vm, vcpu, key);
}

static int panel_cmp(const void *a, const void *b)
{
	const struct panel *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The series, largest count first (name order on ties), and the bucket
 * range [*bmin, *bmax] any of them uses.  NULL when out of memory. */
static struct panel *panels(const struct ks_heatmap *hm, const struct ks_stat *st, size_t *n,
			    unsigned *bmin, unsigned *bmax)
{
	size_t ns = ks_heatmap_nseries(hm), i;
	unsigned nb = ks_heatmap_nbins(hm), j, b;
	struct panel *p = calloc(ns + 1, sizeof(*p));

	if (!p)
		return NULL;
	*bmin = KS_HEATMAP_BUCKETS - 1;
	*bmax = 0;
	for (i = 0; i < ns; i++) {
		p[i].bmin = KS_HEATMAP_BUCKETS - 1;
		p[i].i = i;
		p[i].row = ks_heatmap_series(hm, i);
		p[i].count = ks_heatmap_series_count(hm, i);
		row_name(st, p[i].row, p[i].name, sizeof(p[i].name));
		for (j = 0; j < nb; j++)
			for (b = 0; b < KS_HEATMAP_BUCKETS; b++) {
				uint64_t c = ks_heatmap_cell(hm, i, j, b);

				if (!c)
					continue;
				if (c > p[i].max)
					p[i].max = c;
				if (b < p[i].bmin)
					p[i].bmin = b;
				if (b > p[i].bmax)
					p[i].bmax = b;
				if (b < *bmin)
					*bmin = b;
				if (b > *bmax)
					*bmax = b;
			}
	}
	if (*bmin > *bmax)
		*bmin = *bmax = 0;
	qsort(p, ns, sizeof(*p), panel_cmp);
	*n = ns;
	return p;
}

/* "512ns", "1us", "2.0ms"-style: the lower bound of bucket B. */
static void bucket_label(unsigned b, char *buf, size_t len)
{
	uint64_t lo, hi;

	ks_heatmap_bucket_range(b, &lo, &hi);
	if (lo < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", lo);
	else if (lo < 1000000)
		snprintf(buf, len, "%.3gus", lo / 1e3);
	else if (lo < 1000000000)
		snprintf(buf, len, "%.3gms", lo / 1e6);
	else
		snprintf(buf, len, "%.3gs", lo / 1e9);
}

/* Position of C on its panel's log scale, in (0, 1]. */
static double level(uint64_t c, uint64_t max)
{
	return max <= 1 ? 1.0 : log((double)c + 1) / log((double)max + 1);
}

/* ---- SVG ---- */

#define LEFT 70
#define TOP 56
#define TITLE_H 22
#define AXIS_H 22
#define GAP 14
#define CELL_H 12

/* Light yellow to dark red (ColorBrewer YlOrRd), interpolated. */
static void ramp(double f, char *buf, size_t len)
{
	static const unsigned char stops[][3] = {
		{ 0xff, 0xed, 0xa0 }, { 0xfe, 0xb2, 0x4c }, { 0xf0, 0x3b, 0x20 }, { 0x80, 0x00, 0x26 },
	};
	double x = f * 3;
	int k = x >= 3 ? 2 : (int)x;
	double t = x - k;
	int c[3];

	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * t);
	snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
}

static void svg_panel(FILE *out, const struct ks_heatmap *hm, const struct panel *p, size_t k,
		      int y, int cw, unsigned bmin, unsigned bmax)
{
	unsigned nb = ks_heatmap_nbins(hm), j, b, rows = bmax - bmin + 1;
	uint64_t bin = ks_heatmap_bin_ns(hm);
	char col[8], lab[24];
	int gy = y + TITLE_H;

	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"t\">", LEFT, y + 15);
	xml_text(out, p->name);
	fprintf(out, ": %" PRIu64 " occurrence%s, at most %" PRIu64 " in a cell</text>\n", p->count,
		p->count == 1 ? "" : "s", p->max);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%u\" height=\"%u\" fill=\"#f4f4f4\"/>\n", LEFT,
		gy, nb * cw, rows * CELL_H);
	fprintf(out, "<g id=\"grid-%zu\" data-x=\"%d\" data-y=\"%d\" data-cell-w=\"%d\" "
		"data-cell-h=\"%d\" data-bins=\"%u\" data-bucket-min=\"%u\" data-bucket-max=\"%u\">\n",
		k, LEFT, gy, cw, CELL_H, nb, bmin, bmax);
	for (j = 0; j < nb; j++)
		for (b = bmin; b <= bmax; b++) {
			uint64_t c = ks_heatmap_cell(hm, p->i, j, b);

			if (!c)
				continue;
			ramp(level(c, p->max), col, sizeof(col));
			fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"%s\">"
				"<title>%" PRIu64 "</title></rect>\n", LEFT + j * cw,
				gy + (bmax - b) * CELL_H, cw, CELL_H, col, c);
		}
	fputs("</g>\n", out);
	for (b = bmin; b <= bmax; b++) {
		bucket_label(b, lab, sizeof(lab));
		fprintf(out, "<text x=\"%d\" y=\"%u\" class=\"l\" text-anchor=\"end\">%s</text>\n",
			LEFT - 4, gy + (bmax - b) * CELL_H + CELL_H - 2, lab);
	}
	for (j = 0; j <= nb; j += nb >= 4 ? nb / 4 : 1) {
		fprintf(out, "<text x=\"%u\" y=\"%u\" class=\"l\" text-anchor=\"middle\">+%.3fs</text>\n",
			LEFT + j * cw, gy + rows * CELL_H + 14, (double)j * (double)bin / 1e9);
		if (nb < 1)
			break;
	}
}

int ks_heatmap_write_svg(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st,
			 const char *input)
{
	unsigned nb = ks_heatmap_nbins(hm), bmin, bmax;
	size_t n, k;
	struct panel *p = panels(hm, st, &n, &bmin, &bmax);
	int cw = nb ? (800 / (int)nb < 4 ? 4 : 800 / (int)nb) : 8;
	int ph = TITLE_H + (int)(bmax - bmin + 1) * CELL_H + AXIS_H + GAP;
	int w = LEFT + (int)(nb ? nb : 1) * cw + 40, h = TOP + (int)n * ph + 10;
	char lab[24];

	if (!p)
		return -1;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n", w, h, w, h);
	fputs("<style>text{font-family:sans-serif;fill:#222}.t{font-size:13px}"
	      ".l{font-size:10px}.h{font-size:15px;font-weight:bold}</style>\n", out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
	fprintf(out, "<text x=\"%d\" y=\"18\" class=\"h\">%s latency over time: ", LEFT,
		ks_stat_class_name(st));
	xml_text(out, input ? input : "");
	fputs("</text>\n", out);
	bucket_label(bmin, lab, sizeof(lab));
	fprintf(out, "<text x=\"%d\" y=\"38\" class=\"l\">%s time (%s), log2 buckets from %s; "
		"time bins of %.6f s from %" PRIu64 ".%09" PRIu64 " s; colour: count in a cell, "
		"log scale of the panel's largest</text>\n", LEFT, ks_stat_measure_name(st),
		ks_stat_class_title(st), lab, ks_heatmap_bin_ns(hm) / 1e9,
		ks_heatmap_start_ns(hm) / 1000000000, ks_heatmap_start_ns(hm) % 1000000000);
	for (k = 0; k < n; k++)
		svg_panel(out, hm, &p[k], k, TOP + (int)k * ph, cw, bmin, bmax);
	fputs("</svg>\n", out);
	free(p);
	return 0;
}

/* ---- JSON ---- */

int ks_heatmap_write_json(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st,
			  const char *input)
{
	unsigned nb = ks_heatmap_nbins(hm), bmin, bmax, j, b;
	unsigned dims = ks_stat_view_dims(st, 0);
	struct ks_json jw;
	uint64_t lo, hi;
	size_t n, k;
	struct panel *p = panels(hm, st, &n, &bmin, &bmax);
	char key[80];

	if (!p)
		return -1;
	ks_json_init(&jw, out, true);
	ks_json_set_flat_depth(&jw, 2);
	ks_json_begin_object(&jw);
	ks_json_kv_string(&jw, "input", input);
	ks_json_kv_string(&jw, "event", ks_stat_class_name(st));
	ks_json_kv_string(&jw, "measure", ks_stat_measure_name(st));
	ks_json_kv_u64(&jw, "start_ns", ks_heatmap_start_ns(hm));
	ks_json_kv_u64(&jw, "bin_ns", ks_heatmap_bin_ns(hm));
	ks_json_kv_u64(&jw, "bins", nb);
	ks_json_key(&jw, "buckets");
	ks_json_begin_array(&jw);
	for (b = 0; b < KS_HEATMAP_BUCKETS; b++) {
		ks_heatmap_bucket_range(b, &lo, &hi);
		ks_json_begin_object(&jw);
		ks_json_kv_u64(&jw, "lo_ns", lo);
		ks_json_key(&jw, "hi_ns");
		if (hi == UINT64_MAX)
			ks_json_null(&jw);
		else
			ks_json_u64(&jw, hi);
		ks_json_end_object(&jw);
	}
	ks_json_end_array(&jw);
	ks_json_key(&jw, "series");
	ks_json_begin_array(&jw);
	for (k = 0; k < n; k++) {
		const struct ks_stat_row *r = p[k].row;

		ks_json_begin_object(&jw);
		ks_json_key(&jw, "key");
		if (dims & KS_DIM_KEY) {
			ks_stat_key_name(st, r, false, key, sizeof(key));
			ks_json_string(&jw, key);
		} else {
			ks_json_null(&jw);
		}
		ks_json_kv_i64(&jw, "vm", r->vm);
		ks_json_kv_i64(&jw, "vcpu", r->vcpu);
		ks_json_kv_u64(&jw, "count", p[k].count);
		/* sparse: [bin, bucket, count] of the cells that are not empty */
		ks_json_key(&jw, "cells");
		ks_json_begin_array(&jw);
		for (j = 0; j < nb; j++)
			for (b = 0; b < KS_HEATMAP_BUCKETS; b++) {
				uint64_t c = ks_heatmap_cell(hm, p[k].i, j, b);

				if (!c)
					continue;
				ks_json_begin_array(&jw);
				ks_json_u64(&jw, j);
				ks_json_u64(&jw, b);
				ks_json_u64(&jw, c);
				ks_json_end_array(&jw);
			}
		ks_json_end_array(&jw);
		ks_json_end_object(&jw);
	}
	ks_json_end_array(&jw);
	ks_json_end_object(&jw);
	ks_json_finish(&jw);
	free(p);
	return 0;
}

/* ---- terminal ---- */

int ks_heatmap_print_text(FILE *out, const struct ks_heatmap *hm, const struct ks_stat *st)
{
	static const char *const shade[] = { " ", "\u2591", "\u2592", "\u2593", "\u2588" };
	unsigned nb = ks_heatmap_nbins(hm), bmin, bmax, j, b;
	uint64_t bin = ks_heatmap_bin_ns(hm);
	size_t n, k;
	struct panel *p = panels(hm, st, &n, &bmin, &bmax);
	char lab[24];

	if (!p)
		return -1;
	fprintf(out, "Latency heatmap (%s time; %u bins of %.6f s; shades: count in a cell, log "
		"scale of the panel's largest)\n", ks_stat_measure_name(st), nb, bin / 1e9);
	for (k = 0; k < n; k++) {
		fprintf(out, "\n%s: %" PRIu64 " occurrence%s, at most %" PRIu64 " in a cell\n",
			p[k].name, p[k].count, p[k].count == 1 ? "" : "s", p[k].max);
		/* its own buckets: a terminal has no room for every panel's */
		for (b = p[k].bmax + 1; b-- > p[k].bmin;) {
			bucket_label(b, lab, sizeof(lab));
			fprintf(out, "%8s |", lab);
			for (j = 0; j < nb; j++) {
				uint64_t c = ks_heatmap_cell(hm, p[k].i, j, b);
				int s = c ? 1 + (int)(level(c, p[k].max) * 3.999) : 0;

				fputs(shade[s > 4 ? 4 : s], out);
			}
			fputs("|\n", out);
		}
		fprintf(out, "%8s +%.3fs%*s+%.3fs\n", "", 0.0, nb > 16 ? (int)nb - 14 : 1, "",
			(double)nb * (double)bin / 1e9);
	}
	free(p);
	return 0;
}
