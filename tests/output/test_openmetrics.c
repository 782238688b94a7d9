/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_openmetrics.c - label values in the exposition (openmetrics.c):
 * escaped as the text format wants (\\, \", \n) and valid UTF-8 whatever
 * the bytes (Prometheus refuses a whole scrape with one invalid value);
 * the expected lines are written out by hand.  Content negotiation:
 * the format an Accept header asks for, its q-values read as RFC 9110's
 * grammar writes them ("0.5"; a q that is not one takes the element out).
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

static void t_negotiate(void)
{
	static const struct {
		const char *accept;
		enum ks_expo_format want;
	} cases[] = {
		{ NULL, KS_EXPO_PROMETHEUS },
		{ "", KS_EXPO_PROMETHEUS },
		{ "application/openmetrics-text; version=1.0.0", KS_EXPO_OPENMETRICS },
		{ "application/openmetrics-text;version=1.0.0;q=0.2,text/plain;version=0.0.4;q=0.9",
		  KS_EXPO_PROMETHEUS },
		{ "text/plain;q=0.5,application/openmetrics-text;q=0.9", KS_EXPO_OPENMETRICS },
		{ "application/openmetrics-text;q=0", KS_EXPO_PROMETHEUS },
		/* not q-values: the element is not taken */
		{ "text/plain;q=0.5,application/openmetrics-text;q=0.9junk", KS_EXPO_PROMETHEUS },
		{ "text/plain;q=0.5,application/openmetrics-text;q=inf", KS_EXPO_PROMETHEUS },
		{ "text/plain;q=0.5,application/openmetrics-text;q=-1", KS_EXPO_PROMETHEUS },
		{ "text/plain;q=0.5,application/openmetrics-text;q=", KS_EXPO_PROMETHEUS },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		KT_EQ_INT(ks_expo_negotiate(cases[i].accept), cases[i].want);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_label_values),
		KT_CASE(t_negotiate),
		{ 0 },
	};
	return kt_main(cases);
}
