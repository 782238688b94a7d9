/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_fuzz_regress.c - every input a fuzzer ever crashed on
 * (in tests/fuzz/regress/TARGET/) opens and iterates to a clean end or a
 * clean error, in the normal and the sanitizer builds.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "../lib/ktest.h"
/* the command line's probe (a helper process), which the library has not:
 * compiled in here, as the test programs link the library only */
#include "cli/format_probe.c"
#include "kvmscope/ctx.h"
#include "kvmscope/source.h"

/* One context for all inputs, with the command line's probe, as a fuzz
 * target has (tests/fuzz/fuzz_input.h): inputs share parsed formats. */
static struct ks_ctx *ctx;

static void t_regress_inputs(void)
{
	const char *top = "tests/fuzz/regress";
	DIR *d = opendir(top), *sub;
	struct dirent *e, *f;
	int n = 0;

	KT_REQUIRE(d);
	while ((e = readdir(d))) {
		char dir[512];

		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", top, e->d_name);
		sub = opendir(dir);
		if (!sub)
			continue;
		while ((f = readdir(sub))) {
			char path[1024];
			struct ks_source *src;
			struct ks_record rec;
			struct ks_error err;

			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			n++;
			if (ks_source_open_opts(&src, path, &(struct ks_source_opts){ .ctx = ctx },
						&err) < 0) {
				KT_EXPECT(strstr(err.msg, path) != NULL);
				continue;
			}
			while (ks_source_next(src, &rec, &err) > 0)
				;
			ks_source_close(src);
		}
		closedir(sub);
	}
	closedir(d);
	KT_EXPECT(n > 0);
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_regress_inputs), { 0 } };

	int r;

	ctx = ks_ctx_new();
	if (!ctx)
		return 1;
	ks_format_probe_set(ctx, cli_format_probe, NULL);
	r = kt_main(cases);
	ks_ctx_free(ctx);
	return r;
}
