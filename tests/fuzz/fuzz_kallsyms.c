/*
 * fuzz_kallsyms.c - libFuzzer target for the kallsyms and modules parsers.
 *
 * Parses the bytes (in memory) as /proc/kallsyms and as /proc/modules into
 * one table, finishes it and looks a few addresses up.
 *
 *	clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *	      -I/usr/include/traceevent tests/fuzz/fuzz_kallsyms.c \
 *	      src/symbols/{symtab,kallsyms,elfsyms}.c src/util/error.c -ltraceevent -lelf -o fuzz_kallsyms
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	free(text);
	ks_symtab_free(t);
	return 0;
}
