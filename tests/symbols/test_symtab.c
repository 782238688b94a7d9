/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_symtab.c - symbol tables: kallsyms parsing, deduplication, lookup
 * ends, module maps, ELF symbols with a KASLR-style bias (checked against
 * nm(1)'s view of this very test binary), and a brute-force comparison of
 * the binary search with a linear scan.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <link.h>

#include "../lib/ktest.h"
#include "symbols/symtab.h"

static const char kallsyms_text[] =
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 t __local_helper\n"
	"ffffffff81000100 t local_helper\n"
	"ffffffff81000200 T iowrite16\n"
	"0000000000001000 A fixed_percpu_data\n"
	"ffffffff81000300 t $x\n"
	"garbage line\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n";

static struct ks_symtab *make(void)
{
	struct ks_symtab *t = ks_symtab_new();
	struct ks_error err;

	if (!t || ks_kallsyms_parse(t, kallsyms_text, strlen(kallsyms_text), "k", &err) < 0)
		return NULL;
	ks_symtab_finish(t);
	return t;
}

static void t_kallsyms_dedupe(void)
{
	struct ks_symtab *t = make();
	struct ks_resolved r;

	KT_REQUIRE(t);
	/* startup_64, _stext, _text -> fewest underscores */
	KT_EQ_U64(ks_symtab_count(t), 4);
	KT_EXPECT(ks_symtab_lookup(t, 0xffffffff81000010, &r));
	KT_EQ_STR(r.name, "startup_64");
	KT_EQ_U64(r.offset, 0x10);
	KT_EXPECT(ks_symtab_lookup(t, 0xffffffff81000109, &r));
	KT_EQ_STR(r.name, "local_helper");
	KT_EXPECT(ks_symtab_lookup(t, 0xffffffff81000209, &r));
	KT_EQ_STR(r.name, "iowrite16");
	KT_EQ_STR(r.dso, KS_DSO_KERNEL);
	KT_EXPECT(ks_symtab_lookup(t, 0xffffffffc0001004, &r));
	KT_EQ_STR(r.name, "mod_fn");
	KT_EQ_STR(r.dso, "[mymod]");
	/* below the first symbol, past the last one's span */
	KT_EXPECT(!ks_symtab_lookup(t, 0xffffffff80000000, &r));
	KT_EXPECT(!ks_symtab_lookup(t, 0xffffffffc0001000 + KS_SYM_LAST_SPAN, &r));
	KT_EXPECT(!ks_symtab_lookup(t, 0x1000, &r));
	ks_symtab_free(t);
}

static void t_modules_map(void)
{
	static const char mods[] = "mymod 16384 0 - Live 0xffffffffc0000000\n"
				   "other 8192 1 mymod, Live 0xffffffffc0010000 (O)\n";
	struct ks_symtab *t = ks_symtab_new();
	struct ks_resolved r;
	struct ks_error err;

	KT_REQUIRE(t);
	KT_EQ_INT(ks_kallsyms_parse(t, kallsyms_text, strlen(kallsyms_text), "k", &err), 0);
	KT_EQ_INT(ks_modules_parse(t, mods, strlen(mods), "m", &err), 0);
	ks_symtab_finish(t);
	/* inside "other" with no symbol of it: DSO known, symbol not */
	KT_EXPECT(!ks_symtab_lookup(t, 0xffffffffc0010010, &r));
	KT_EQ_STR(r.dso, "[other]");
	KT_EXPECT(ks_symtab_lookup(t, 0xffffffffc0001008, &r));
	KT_EQ_STR(r.name, "mod_fn");
	KT_EXPECT(ks_modules_parse(t, "x", 1, "m", &err) < 0);
	ks_symtab_free(t);
}

static void t_binary_search_matches_linear(void)
{
	struct ks_symtab *t = ks_symtab_new();
	uint64_t *starts = malloc(5000 * sizeof(*starts));
	unsigned seed = 7;
	size_t i, j, n;
	char name[32];

	KT_REQUIRE(t && starts);
	for (i = 0; i < 5000; i++) {
		seed = seed * 1103515245u + 12345u;
		starts[i] = 0x1000 + (seed % 100000) * 16;
		snprintf(name, sizeof(name), "f%zu", i);
		KT_REQUIRE(ks_symtab_add(t, starts[i], 0, name, NULL) == 0);
	}
	ks_symtab_finish(t);
	n = ks_symtab_count(t);
	for (i = 1; i < n; i++)
		KT_REQUIRE(ks_symtab_at(t, i - 1)->start < ks_symtab_at(t, i)->start);
	for (j = 0; j < 20000; j++) {
		struct ks_resolved r;
		uint64_t a, best = 0;
		bool found = false, got;

		seed = seed * 1103515245u + 12345u;
		a = seed % (100000 * 16 + 0x3000);
		for (i = 0; i < 5000; i++)
			if (starts[i] <= a && (!found || starts[i] > best))
				best = starts[i], found = true;
		got = ks_symtab_lookup(t, a, &r);
		if (found && a - best >= (best == ks_symtab_at(t, n - 1)->start ? KS_SYM_LAST_SPAN : UINT64_MAX))
			found = false;
		KT_REQUIRE(got == found);
		if (got)
			KT_REQUIRE(a - r.offset == best);
	}
	free(starts);
	ks_symtab_free(t);
}

/* This test binary's own symbols through libelf vs nm(1), with a bias. */
static void t_elf_symbols_bias(void)
{
	char cmd[512], *out;
	unsigned long long nm_addr = 0;
	struct ks_symtab *t = ks_symtab_new();
	struct ks_resolved r;
	struct ks_error err;
	uint64_t stext = 0, bias = 0x200000;
	int status;

	KT_REQUIRE(t);
	snprintf(cmd, sizeof(cmd), "nm /proc/%d/exe 2>/dev/null | awk '$3 == \"t_elf_symbols_bias\" { print $1 }'",
		 (int)getpid());
	out = kt_run(cmd, &status);
	if (!out || sscanf(out, "%llx", &nm_addr) != 1) {
		free(out);
		ks_symtab_free(t);
		kt_skip("nm not available");
		return;
	}
	free(out);
	KT_EQ_INT(ks_elf_symbols_load(t, "/proc/self/exe", bias, "test", &stext, &err), 0);
	ks_symtab_finish(t);
	KT_EXPECT(ks_symtab_lookup(t, nm_addr + bias + 3, &r));
	KT_EQ_STR(r.name, "t_elf_symbols_bias");
	KT_EQ_U64(r.offset, 3);
	KT_EXPECT(ks_elf_symbols_load(t, "/dev/null", 0, "x", NULL, &err) < 0);
	ks_symtab_free(t);
}

static void t_bad_inputs(void)
{
	struct ks_symtab *t = ks_symtab_new();
	struct ks_error err;

	KT_REQUIRE(t);
	KT_EXPECT(ks_kallsyms_parse(t, "", 0, "k", &err) < 0);
	KT_EXPECT(ks_kallsyms_parse(t, "zz\n\n", 4, "k", &err) < 0);
	/* strtoull() took a sign (wrapping), space, 0x and 2^64 (as 2^64-1):
	 * no address of /proc/kallsyms, no symbol */
	KT_EXPECT(ks_kallsyms_parse(t, "-1 T wrapped\n", 13, "k", &err) < 0);
	KT_EXPECT(ks_kallsyms_parse(t, " 1000 T spaced\n", 15, "k", &err) < 0);
	KT_EXPECT(ks_kallsyms_parse(t, "0x1000 T prefixed\n", 18, "k", &err) < 0);
	KT_EXPECT(ks_kallsyms_parse(t, "10000000000000000 T big\n", 24, "k", &err) < 0);
	KT_EXPECT(ks_kallsyms_load(t, "/nonexistent/kallsyms", &err) < 0);
	ks_symtab_finish(t);
	KT_EQ_U64(ks_symtab_count(t), 0);
	ks_symtab_free(t);
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr; /* the main program comes first */
	return 1;
}

/* The code bytes of this very program, read from its file at its load bias,
 * are the bytes the CPU runs. */
static void t_code_from_elf_file(void)
{
	struct ks_codemap m = { 0 };
	struct ks_error err;
	uint64_t bias = 0, at = (uint64_t)(uintptr_t)&t_bad_inputs;
	uint8_t b[32];

	dl_iterate_phdr(first_bias, &bias);
	KT_EQ_INT(ks_elf_code_load(&m, "/proc/self/exe", bias, &err), 0);
	KT_EXPECT(m.n >= 1);
	KT_EQ_INT(ks_codemap_read(&m, at, b, sizeof(b)), 0);
	KT_EXPECT(memcmp(b, (const void *)(uintptr_t)at, sizeof(b)) == 0);
	KT_EQ_INT(ks_codemap_read(&m, 0x10, b, 4), -1);        /* not in a segment */
	KT_EQ_INT(ks_codemap_read(&m, m.seg[0].end - 2, b, 4), -1); /* runs past it */
	ks_codemap_free(&m);
	KT_EXPECT(ks_elf_code_load(&m, "/proc/self/status", 0, &err) < 0);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_kallsyms_dedupe), KT_CASE(t_modules_map),
		KT_CASE(t_binary_search_matches_linear), KT_CASE(t_elf_symbols_bias),
		KT_CASE(t_bad_inputs), KT_CASE(t_code_from_elf_file), { 0, 0 },
	};
	return kt_main(cases);
}
