/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_elfsyms.c - libFuzzer target for the ELF symbol reader (guest vmlinux,
 * --guest-binary): the bytes go to a temp file read through libelf.
 *
 *	clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *	      -I/usr/include/traceevent tests/fuzz/fuzz_elfsyms.c \
 *	      src/symbols/{symtab,kallsyms,elfsyms}.c src/util/error.c -ltraceevent -lelf -o fuzz_elfsyms
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct ks_symtab *t;
	struct ks_resolved r;
	struct ks_error err;
	uint64_t stext, vaddr;
	int fd;

	snprintf(path, sizeof(path), "/tmp/fuzz_elfsyms.%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	t = ks_symtab_new();
	if (t) {
		ks_elf_symbols_load(t, path, 0x1000, "fuzz", &stext, &err);
		ks_elf_min_vaddr(path, &vaddr, &err);
		ks_symtab_finish(t);
		ks_symtab_lookup(t, stext, &r);
		ks_symtab_free(t);
	}
	unlink(path);
	return 0;
}
