/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_kallsyms.c - libFuzzer target for the kallsyms and modules parsers.
 *
 * Parses the bytes (in memory) as /proc/kallsyms and as /proc/modules into
 * one table, finishes it and looks a few addresses up.  Also the trace.dat
 * reader's kallsyms parser and its symbol table (src/input/kallsyms_text.c),
 * against tep_parse_kallsyms(): the same addresses must resolve alike (the
 * same name and start), else abort.
 *
 *	clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc \
 *	      -I/usr/include/traceevent tests/fuzz/fuzz_kallsyms.c \
 *	      src/symbols/{symtab,kallsyms,elfsyms}.c src/input/{kallsyms_text,source}.c \
 *	      src/util/{error,hashmap,limits}.c -ltraceevent -lelf -lpthread -o fuzz_kallsyms
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "input/kallsyms_text.h"
#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_symtab *t = ks_symtab_new();
	struct ks_resolved r;
	struct ks_error err;
	char *text = malloc(size + 1);
	size_t i;

	if (!t || !text) {
		free(text);
		ks_symtab_free(t);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	ks_kallsyms_parse(t, text, size, "fuzz", &err);
	ks_modules_parse(t, text, size, "fuzz", &err);
	ks_symtab_finish(t);
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		ks_symtab_lookup(t, a, &r);
	}
	ks_symtab_lookup(t, 0, &r);
	ks_symtab_lookup(t, UINT64_MAX, &r);
	{
		struct tep_handle *a = tep_alloc(), *b = tep_alloc();
		struct ks_ksym_table *kt = ks_ksym_table_new(text); /* NULL: another shape */

		if (a && b) {
			tep_parse_kallsyms(a, text);
			ks_parse_kallsyms(b, text);
			for (i = 0; i + 8 <= size && i < 256; i += 4) {
				uint64_t x;
				const char *fa, *fb;

				memcpy(&x, data + i, 8);
				x = i % 8 ? strtoull(text + i, NULL, 16) : x;
				fa = tep_find_function(a, x);
				fb = tep_find_function(b, x);
				if ((fa == NULL) != (fb == NULL) || (fa && strcmp(fa, fb)) ||
				    tep_find_function_address(a, x) != tep_find_function_address(b, x))
					abort();
				if (kt) {
					unsigned long long start = 0;
					const char *fk = ks_ksym_table_find(kt, x, &start);

					if ((fa == NULL) != (fk == NULL) || (fa && strcmp(fa, fk)) ||
					    (fa && start != tep_find_function_address(a, x)))
						abort();
				}
			}
		}
		ks_ksym_table_free(kt);
		tep_free(a);
		tep_free(b);
	}
	free(text);
	ks_symtab_free(t);
	return 0;
}
