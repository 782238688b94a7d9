/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_top_report.c - kvmscope top's tables as text, CSV and JSON: the
 * expected bytes are written out here by hand from the layout top(1)
 * documents (label left-aligned and cut at its width, cells right-aligned
 * at theirs, a line without cells printed whole; CSV fields quoted per
 * RFC 4180; JSON cells numbers, booleans or null).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/ktest.h"
#include "kvmscope/json.h"
#include "kvmscope/top_report.h"

static const struct ks_top_cols cols = {
	"VM / STAT", 12, 2, { { "VALUE", 6, 0, 5 }, { "DELTA/s", 8, 1, 7 } }
};

static const struct ks_top_line lines[] = {
	{ 0, 42, "42(a VM with a long name)", { "qmp", "" } },
	{ 1, 42, "exits", { "1500", "12.5" } },
	{ 1, 42, "flag", { "true", "" } },
	{ 0, 7, "7(bad)", { "", "" } },
	{ 1, 7, "/q.sock: refused, \"no\"", { "", "" } },
};

/* What FN writes into a memory stream, NUL-terminated (caller frees). */
#define CAPTURE(buf, call) do { \
	size_t len_; \
	FILE *m_ = open_memstream(&(buf), &len_); \
	KT_REQUIRE(m_); \
	{ FILE *out = m_; call; } \
	fclose(m_); \
} while (0)

static void t_text_layout(void)
{
	char *got = NULL;

	CAPTURE(got, ks_top_report_text(out, "T", &cols, lines, 5, "(none)"));
	KT_EQ_STR(got, "T\n"
		  "VM / STAT     VALUE  DELTA/s\n"
		  "42(a VM with    qmp         \n"
		  "  exits        1500     12.5\n"
		  "  flag         true         \n"
		  "7(bad)\n"
		  "  /q.sock: refused, \"no\"\n"
		  "\n");
	free(got);
	got = NULL;
	CAPTURE(got, ks_top_report_text(out, "T", &cols, lines, 0, "(none)"));
	KT_EQ_STR(got, "T\nVM / STAT     VALUE  DELTA/s\n(none)\n\n");
	free(got);
}

static void t_csv_lines(void)
{
	char *got = NULL;

	CAPTURE(got, (ks_top_report_csv_head(out, &cols),
		      ks_top_report_csv_lines(out, 3, &cols, lines, 5)));
	KT_EQ_STR(got, "interval,vm,depth,name,value,delta_s\n"
		  "3,42,0,42(a VM with a long name),qmp,\n"
		  "3,42,1,exits,1500,12.5\n"
		  "3,42,1,flag,true,\n"
		  "3,7,0,7(bad),,\n"
		  "3,7,1,\"/q.sock: refused, \"\"no\"\"\",,\n");
	free(got);
}

static void t_csv_exit(void)
{
	struct ks_top_row r = { .vm = 42, .vcpu = 1, .count = 10, .rate = 20, .time_pct = 1.25,
				.p99_ns = 3000, .total = 99 };
	char *got = NULL;

	snprintf(r.name, sizeof(r.name), "HLT");
	CAPTURE(got, (ks_top_report_csv_exit_head(out),
		      ks_top_report_csv_exit(out, 2, 1.5, "vcpu_reason", &r, "42(x,y)", "HLT", -1),
		      ks_top_report_csv_exit(out, 3, 2.5, "vm", &r, "42(x,y)", "", 0),
		      ks_top_report_csv_exit(out, 4, 3.5, "vm", &r, "42(x,y)", "", 7)));
	/* overflow: empty without a live engine, else the interval's count */
	KT_EQ_STR(got, "interval,end_s,level,vm,vm_name,vcpu,reason,exits,exits_per_s,time_pct,"
		  "p99_ns,total,overflow\n"
		  "2,1.500000,vcpu_reason,42,\"42(x,y)\",1,HLT,10,20.000,1.2500,3000,99,\n"
		  "3,2.500000,vm,42,\"42(x,y)\",1,,10,20.000,1.2500,3000,99,0\n"
		  "4,3.500000,vm,42,\"42(x,y)\",1,,10,20.000,1.2500,3000,99,7\n");
	free(got);
}

static void t_json_cells(void)
{
	static const struct ks_top_line halt = { 1, 9, "vcpu 0", { "12.5", "-", "-2.5", "false",
								   "(error)" } };
	static const struct ks_top_cols hc = { "VM", 4, 5, { { "A/s", 1, 0, 1 }, { "B%", 1, 0, 1 },
							 { "C", 1, 0, 1 }, { "D", 1, 0, 1 },
							 { "E", 1, 0, 1 } } };
	char *got = NULL;
	struct ks_json j;

	CAPTURE(got, (ks_json_init(&j, out, false), ks_json_begin_array(&j),
		      ks_top_report_json_line(&j, &hc, &halt, ""),
		      ks_top_report_json_line(&j, &hc, &halt, "web \"1\""),
		      ks_json_end_array(&j), ks_json_finish(&j)));
	KT_EQ_STR(got, "[{\"vm\":9,\"vm_name\":null,\"depth\":1,\"name\":\"vcpu 0\",\"a_s\":12.5,"
		  "\"b%\":null,\"c\":-2.5,\"d\":false,\"e\":null},"
		  "{\"vm\":9,\"vm_name\":\"web \\\"1\\\"\",\"depth\":1,\"name\":\"vcpu 0\",\"a_s\":12.5,"
		  "\"b%\":null,\"c\":-2.5,\"d\":false,\"e\":null}]\n");
	free(got);
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_text_layout), KT_CASE(t_csv_lines),
						KT_CASE(t_csv_exit), KT_CASE(t_json_cells),
						{ 0, 0 } };
	return kt_main(cases);
}
