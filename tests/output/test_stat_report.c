/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_stat_report.c - what the stat report says of the events its input
 * could not deliver: a live engine's uncounted exits (its maps full) in
 * the table's footer and in the JSON document's "not_counted" object,
 * next to the kernel's lost events; nothing when there are none.
 *
 * The rows come from one aggregate (ks_stat_add_aggregate, as stat --live
 * feeds the engine's series); the numbers checked are the ones given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../lib/ktest.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/stat_report.h"

#define UNCOUNTED "exits the live engine could not count (its maps were full)"

static struct ks_stat *one_series(void)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info;
	struct ks_stat_aggregate a;
	struct ks_error err;
	struct ks_stat *st;

	memset(&info, 0, sizeof(info));
	info.format = "live";
	cfg.arch = "x86";
	cfg.no_begin_counts = true;
	st = ks_stat_new(&cfg, &info, &err);
	if (!st)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.tid = 11;
	a.vm = 10;
	a.vcpu = 0;
	a.key = 12; /* HLT */
	a.count = 5;
	a.sum_ns = 5000;
	a.min_ns = 400;
	a.max_ns = 2000;
	ks_stat_add_aggregate(st, &a);
	return st;
}

/* The report of ST in FORMAT with the source stats S, as a string. */
static char *report(struct ks_stat *st, enum ks_stat_format format, const struct ks_source_stats *s)
{
	struct ks_stat_report_opts o = { .vcpu = -1 };
	struct ks_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	o.format = format;
	o.input = "live (bpf engine)";
	o.src_stats = s;
	if (ks_stat_report(f, st, &o, &err) < 0)
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
	fclose(f);
	return buf;
}

static void t_not_counted(void)
{
	struct ks_stat *st = one_series();
	struct ks_source_stats none = { 0 }, s = { .lost_events = 2, .not_counted = 3 };
	struct json_object *doc, *nc, *v;
	char *text, *js;

	KT_REQUIRE(st);
	text = report(st, KS_STAT_TABLE, &s);
	js = report(st, KS_STAT_JSON, &s);
	KT_REQUIRE(text && js);
	KT_EXPECT(strstr(text, "HLT") != NULL);
	KT_EXPECT(strstr(text, UNCOUNTED) != NULL);
	doc = json_tokener_parse(js);
	KT_REQUIRE(doc);
	KT_EXPECT(json_object_object_get_ex(doc, "not_counted", &nc));
	KT_EXPECT(nc && json_object_object_get_ex(nc, UNCOUNTED, &v) && json_object_get_int64(v) == 3);
	KT_EXPECT(nc && json_object_object_get_ex(nc, "lost events", &v) &&
		  json_object_get_int64(v) == 2);
	json_object_put(doc);
	free(text);
	free(js);
	/* none: not in the table, an empty object in JSON */
	text = report(st, KS_STAT_TABLE, &none);
	js = report(st, KS_STAT_JSON, &none);
	KT_REQUIRE(text && js);
	KT_EXPECT(!strstr(text, UNCOUNTED));
	doc = json_tokener_parse(js);
	KT_REQUIRE(doc);
	KT_EXPECT(json_object_object_get_ex(doc, "not_counted", &nc) &&
		  json_object_object_length(nc) == 0);
	json_object_put(doc);
	free(text);
	free(js);
	ks_stat_free(st);
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_not_counted), { 0 } };

	return kt_main(cases);
}
