/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print-meta - print one metadata text of an input as its reader keeps it
 * (ks_source_formats(), ks_source_text()), byte for byte, for the tests
 * that compare a file with its copy by kvmscope convert.
 *
 *	print-meta WHAT FILE
 *	print-meta -d DIR FILE    (every WHAT into DIR/WHAT, one open)
 *
 * WHAT: formats (every format as "SYSTEM\n" then its text, in the file's
 * order), ftrace or events (the texts of the ftrace formats or of the
 * others, each followed by a newline, as `trace-cmd dump` prints them),
 * header_page, header_event, kallsyms, printk, cmdlines, uname.  Exit 1 when
 * FILE cannot be read, 2 on a usage error; a text the input does not hold
 * prints nothing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kvmscope/source.h"

static const char *const names[KS_TEXT_NR] = {
	[KS_TEXT_HEADER_PAGE] = "header_page", [KS_TEXT_HEADER_EVENT] = "header_event",
	[KS_TEXT_KALLSYMS] = "kallsyms", [KS_TEXT_PRINTK] = "printk",
	[KS_TEXT_CMDLINES] = "cmdlines", [KS_TEXT_UNAME] = "uname",
};

/* WHAT of SRC to OUT. */
static void print(struct ks_source *src, const char *what, FILE *out)
{
	const struct ks_source_format *f;
	size_t i, n, len;
	int id = -1;

	for (i = 0; i < KS_TEXT_NR; i++)
		if (!strcmp(what, names[i]))
			id = (int)i;
	if (id < 0) {
		n = ks_source_formats(src, &f);
		for (i = 0; i < n; i++) {
			bool ftrace = !strcmp(f[i].system, "ftrace");

			if (!strcmp(what, "formats"))
				fprintf(out, "%s\n", f[i].system);
			else if (ftrace != !strcmp(what, "ftrace"))
				continue;
			fwrite(f[i].text, 1, f[i].len, out);
			if (strcmp(what, "formats"))
				fputc('\n', out); /* trace-cmd dump's separator */
		}
	} else {
		const char *t = ks_source_text(src, (enum ks_source_text_id)id, &len);

		if (t)
			fwrite(t, 1, len, out);
	}
}

static bool known(const char *what)
{
	size_t i;

	for (i = 0; i < KS_TEXT_NR; i++)
		if (!strcmp(what, names[i]))
			return true;
	return !strcmp(what, "formats") || !strcmp(what, "ftrace") || !strcmp(what, "events");
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "formats", "ftrace", "events", "header_page",
					   "header_event", "kallsyms", "printk", "cmdlines",
					   "uname" };
	const char *dir = NULL;
	struct ks_source *src;
	struct ks_error err;
	size_t i;

	if (argc == 4 && !strcmp(argv[1], "-d")) {
		dir = argv[2];
	} else if (argc != 3 || !known(argv[1])) {
		fputs("usage: print-meta formats|ftrace|events|header_page|header_event|kallsyms|"
		      "printk|cmdlines|uname FILE\n       print-meta -d DIR FILE\n", stderr);
		return 2;
	}
	if (ks_source_open(&src, argv[argc - 1], &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (!dir) {
		print(src, argv[1], stdout);
	} else {
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			char path[4096];
			FILE *f;

			snprintf(path, sizeof(path), "%s/%s", dir, all[i]);
			if (!(f = fopen(path, "w"))) {
				perror(path);
				ks_source_close(src);
				return 1;
			}
			print(src, all[i], f);
			if (fclose(f)) {
				perror(path);
				ks_source_close(src);
				return 1;
			}
		}
	}
	ks_source_close(src);
	return fflush(stdout) ? 1 : 0;
}
