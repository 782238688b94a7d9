/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_json.c - the JSON writer's layouts: compact, pretty, and pretty with
 * a flat depth (one line per element of a long array).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/ktest.h"
#include "kvmscope/json.h"

/* {"n": 1, "events": [{"a": 1, "b": [2]}, {"a": 3, "b": []}], "e": []} */
static char *write_doc(bool pretty, int flat)
{
	char *buf = NULL;
	size_t len;
	FILE *m = open_memstream(&buf, &len);
	struct ks_json j;
	int i;

	if (!m)
		return NULL;
	ks_json_init(&j, m, pretty);
	ks_json_set_flat_depth(&j, flat);
	ks_json_begin_object(&j);
	ks_json_kv_u64(&j, "n", 1);
	ks_json_key(&j, "events");
	ks_json_begin_array(&j);
	for (i = 0; i < 2; i++) {
		ks_json_begin_object(&j);
		ks_json_kv_i64(&j, "a", 1 + 2 * i);
		ks_json_key(&j, "b");
		ks_json_begin_array(&j);
		if (!i)
			ks_json_u64(&j, 2);
		ks_json_end_array(&j);
		ks_json_end_object(&j);
	}
	ks_json_end_array(&j);
	ks_json_key(&j, "e");
	ks_json_begin_array(&j);
	ks_json_end_array(&j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
	fclose(m);
	return buf;
}

static void expect_doc(bool pretty, int flat, const char *want)
{
	char *got = write_doc(pretty, flat);

	KT_REQUIRE(got);
	KT_EQ_STR(got, want);
	free(got);
}

static void t_compact(void)
{
	expect_doc(false, 0, "{\"n\":1,\"events\":[{\"a\":1,\"b\":[2]},{\"a\":3,\"b\":[]}],\"e\":[]}\n");
	/* the flat depth changes nothing without pretty */
	expect_doc(false, 2, "{\"n\":1,\"events\":[{\"a\":1,\"b\":[2]},{\"a\":3,\"b\":[]}],\"e\":[]}\n");
}

static void t_pretty(void)
{
	expect_doc(true, 0,
		   "{\n"
		   "  \"n\": 1,\n"
		   "  \"events\": [\n"
		   "    {\n"
		   "      \"a\": 1,\n"
		   "      \"b\": [\n"
		   "        2\n"
		   "      ]\n"
		   "    },\n"
		   "    {\n"
		   "      \"a\": 3,\n"
		   "      \"b\": []\n"
		   "    }\n"
		   "  ],\n"
		   "  \"e\": []\n"
		   "}\n");
}

static void t_flat_depth(void)
{
	expect_doc(true, 2,
		   "{\n"
		   "  \"n\": 1,\n"
		   "  \"events\": [\n"
		   "    {\"a\":1,\"b\":[2]},\n"
		   "    {\"a\":3,\"b\":[]}\n"
		   "  ],\n"
		   "  \"e\": []\n"
		   "}\n");
	expect_doc(true, 1,
		   "{\n"
		   "  \"n\": 1,\n"
		   "  \"events\": [{\"a\":1,\"b\":[2]},{\"a\":3,\"b\":[]}],\n"
		   "  \"e\": []\n"
		   "}\n");
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_compact), KT_CASE(t_pretty),
						KT_CASE(t_flat_depth), { 0, 0 } };
	return kt_main(cases);
}
