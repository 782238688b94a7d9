/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_openmetrics.c - label values in the exposition (openmetrics.c):
 * escaped as the text format wants (\\, \", \n) and valid UTF-8 whatever
 * the bytes (Prometheus refuses a whole scrape with one invalid value);
 * the expected lines are written out by hand.
 */
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/openmetrics.h"

static void t_label_values(void)
{
	struct ks_expo e;
	const char *lbl[] = { "domain", "a\"b\\c\nd", "vcpu", "\xc3\xa9\xff\xe2\x82", NULL };

	ks_expo_init(&e, KS_EXPO_PROMETHEUS);
	ks_expo_sample_u64(&e, "m", lbl, 3);
	KT_REQUIRE(!e.oom);
	KT_EQ_STR(e.buf, "m{domain=\"a\\\"b\\\\c\\nd\",vcpu=\"\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"} 3\n");
	ks_expo_free(&e);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_label_values),
		{ 0 },
	};
	return kt_main(cases);
}
