/*
 * print-meta - print one metadata text of an input as its reader keeps it
 * (ks_source_formats(), ks_source_text()), byte for byte, for the tests
 * that compare a file with its copy by kvmscope convert.
 *
 *	print-meta WHAT FILE
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

int main(int argc, char **argv)
{
	static const char *const names[KS_TEXT_NR] = {
		[KS_TEXT_HEADER_PAGE] = "header_page", [KS_TEXT_HEADER_EVENT] = "header_event",
		[KS_TEXT_KALLSYMS] = "kallsyms", [KS_TEXT_PRINTK] = "printk",
		[KS_TEXT_CMDLINES] = "cmdlines", [KS_TEXT_UNAME] = "uname",
	};
	const struct ks_source_format *f;
	struct ks_source *src;
	struct ks_error err;
	size_t i, n, len;
	int id = -1;

	if (argc != 3) {
		fputs("usage: print-meta formats|ftrace|events|header_page|header_event|kallsyms|"
		      "printk|cmdlines|uname FILE\n", stderr);
		return 2;
	}
	for (i = 0; i < KS_TEXT_NR; i++)
		if (!strcmp(argv[1], names[i]))
			id = (int)i;
	if (id < 0 && strcmp(argv[1], "formats") && strcmp(argv[1], "ftrace") &&
	    strcmp(argv[1], "events")) {
		fprintf(stderr, "print-meta: unknown text '%s'\n", argv[1]);
		return 2;
	}
	if (ks_source_open(&src, argv[2], &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (id < 0) {
		n = ks_source_formats(src, &f);
		for (i = 0; i < n; i++) {
			bool ftrace = !strcmp(f[i].system, "ftrace");

			if (!strcmp(argv[1], "formats"))
				printf("%s\n", f[i].system);
			else if (ftrace != !strcmp(argv[1], "ftrace"))
				continue;
			fwrite(f[i].text, 1, f[i].len, stdout);
			if (strcmp(argv[1], "formats"))
				putchar('\n'); /* trace-cmd dump's separator */
		}
	} else {
		const char *t = ks_source_text(src, (enum ks_source_text_id)id, &len);

		if (t)
			fwrite(t, 1, len, stdout);
	}
	ks_source_close(src);
	return fflush(stdout) ? 1 : 0;
}
