/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_csv.c - CSV field quoting: plain fields as they are, fields with a
 * separator, quote or line break quoted with quotes doubled.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/ktest.h"
#include "output/csv.h"

static char *field(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	ks_csv_field(m, s);
	fclose(m);
	return buf;
}

static void expect_field(const char *in, const char *want)
{
	char *got = field(in);

	KT_REQUIRE(got);
	KT_EQ_STR(got, want);
	free(got);
}

static void t_plain_field_unchanged(void)
{
	expect_field("EPT_MISCONFIG", "EPT_MISCONFIG");
	expect_field("", "");
	expect_field("qemu system x86", "qemu system x86");
}

static void t_special_fields_quoted(void)
{
	expect_field("vm,vcpu", "\"vm,vcpu\"");
	expect_field("say \"hi\"", "\"say \"\"hi\"\"\"");
	expect_field("a\nb", "\"a\nb\"");
	expect_field("a\rb", "\"a\rb\"");
	expect_field("\"", "\"\"\"\"");
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_plain_field_unchanged),
						KT_CASE(t_special_fields_quoted), { 0, 0 } };
	return kt_main(cases);
}
