/*
 * fuzz_elfsyms.c - libFuzzer target for the ELF symbol reader (guest vmlinux,
 * --guest-binary): the bytes go to a memfd (fuzz_input.h) read through libelf.
 *
 *	clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *	      -I/usr/include/traceevent tests/fuzz/fuzz_elfsyms.c \
 *	      src/symbols/{symtab,kallsyms,elfsyms}.c src/util/error.c -ltraceevent -lelf -o fuzz_elfsyms
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_path(data, size);
	struct ks_symtab *t;
	struct ks_resolved r;
	struct ks_error err;
	uint64_t stext, vaddr;

	if (!path)
		return 0;
	t = ks_symtab_new();
	if (t) {
		ks_elf_symbols_load(t, path, 0x1000, "fuzz", &stext, &err);
		ks_elf_min_vaddr(path, &vaddr, &err);
		ks_symtab_finish(t);
		ks_symtab_lookup(t, stext, &r);
		ks_symtab_free(t);
	}
	return 0;
}
