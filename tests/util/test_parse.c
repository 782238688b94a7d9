/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_parse.c - the checked number parsers of kvmscope/limits.h, against
 * values written out by hand: what C's strto*() would take silently (space,
 * a sign, hex, "inf", a number cut short, one that overflows) is refused.
 */
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/limits.h"

#define D(s, out) ks_parse_double(s, strlen(s), out)
#define P(s, base, out) ks_parse_u64_prefix(s, strlen(s), base, out)

static void t_double(void)
{
	double d = 0;

	KT_EQ_INT(D("1.5", &d), 0);
	KT_EXPECT(d == 1.5);
	KT_EQ_INT(D("-2e3", &d), 0);
	KT_EXPECT(d == -2000);
	KT_EQ_INT(D("+.25", &d), 0);
	KT_EXPECT(d == 0.25);
	KT_EQ_INT(D("0", &d), 0);
	KT_EXPECT(d == 0);
	/* a length cuts the text: "12" of "125" */
	KT_EQ_INT(ks_parse_double("125", 2, &d), 0);
	KT_EXPECT(d == 12);
	/* strtod() takes all of these */
	KT_EQ_INT(D(" 1", &d), -1);
	KT_EQ_INT(D("\t1", &d), -1);
	KT_EQ_INT(D("0x10", &d), -1);
	KT_EQ_INT(D("inf", &d), -1);
	KT_EQ_INT(D("nan", &d), -1);
	KT_EQ_INT(D("-infinity", &d), -1);
	KT_EQ_INT(D("1e999", &d), -1);
	KT_EQ_INT(D("1.5x", &d), -1);
	KT_EQ_INT(D("1 ", &d), -1);
	KT_EQ_INT(D("", &d), -1);
	KT_EQ_INT(D("-", &d), -1);
	KT_EQ_INT(D(".", &d), -1);
	KT_EQ_INT(D("1e", &d), -1);
	KT_EQ_INT(D("--1", &d), -1);
	KT_EQ_INT(ks_parse_double("1\0" "5", 3, &d), -1);
}

static void t_prefix(void)
{
	uint64_t v = 0;

	KT_EQ_U64(P("123-4", 10, &v), 3);
	KT_EQ_U64(v, 123);
	KT_EQ_U64(P("ffffffff81000000 T _stext", 16, &v), 16);
	KT_EQ_U64(v, 0xffffffff81000000ull);
	KT_EQ_U64(P("18446744073709551615", 10, &v), 20);
	KT_EQ_U64(v, UINT64_MAX);
	KT_EQ_U64(P("7.exits", 10, &v), 1);
	KT_EQ_U64(v, 7);
	/* only the LEN bytes */
	KT_EQ_U64(ks_parse_u64_prefix("1234", 2, 10, &v), 2);
	KT_EQ_U64(v, 12);
	/* hex digits are not decimal ones; no prefix, sign or space */
	KT_EQ_U64(P("12ab", 10, &v), 2);
	KT_EQ_U64(P("0x10", 16, &v), 1);
	KT_EQ_U64(v, 0);
	KT_EQ_U64(P("-1", 10, &v), 0);
	KT_EQ_U64(P("+1", 10, &v), 0);
	KT_EQ_U64(P(" 1", 10, &v), 0);
	KT_EQ_U64(P("", 10, &v), 0);
	/* too big: none, not UINT64_MAX */
	KT_EQ_U64(P("18446744073709551616", 10, &v), 0);
	KT_EQ_U64(P("10000000000000000 T x", 16, &v), 0);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_double),
		KT_CASE(t_prefix),
		{ 0 },
	};
	return kt_main(cases);
}
