/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symtab.h - guest symbol tables: sorted, deduplicated, binary-searched.
 *
 * A table holds symbols (start, end, name, DSO) and DSO ranges ("maps", from a
 * modules list).  Fill it from any number of sources, call ks_symtab_finish()
 * once, then look addresses up:
 *
 *	struct ks_symtab *t = ks_symtab_new();
 *	ks_kallsyms_load(t, "kallsyms", &err);        (or modules, vmlinux...)
 *	ks_symtab_finish(t);
 *	struct ks_resolved r;
 *	ks_symtab_lookup(t, 0xffffffff81000010, &r);  -> r.name "_stext", r.offset 0x10
 *
 * Rules (kvmscope-report(1)): a symbol without a size ends where the next
 * symbol begins; the last one covers KS_SYM_LAST_SPAN bytes.  Symbols at the
 * same address are reduced to one: fewest leading underscores, then the
 * smallest name.  A map (module range) hides symbols of other DSOs inside it.
 */
#ifndef KVMSCOPE_SYMBOLS_SYMTAB_H
#define KVMSCOPE_SYMBOLS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"

#define KS_SYM_LAST_SPAN 4096
#define KS_DSO_KERNEL "[kernel.kallsyms]"

struct tep_handle;

struct ks_sym {
	uint64_t start, end;   /* [start, end); end == 0 while unknown */
	const char *name;
	const char *dso;
};

struct ks_resolved {
	const char *name;      /* NULL when no symbol covers the address */
	const char *dso;       /* NULL when no symbol nor map covers it */
	uint64_t offset;       /* address - symbol start */
};

struct ks_symtab;

struct ks_symtab *ks_symtab_new(void);
void ks_symtab_free(struct ks_symtab *t);
/* SIZE 0 = unknown (ends at the next symbol).  Strings are copied. */
int ks_symtab_add(struct ks_symtab *t, uint64_t start, uint64_t size, const char *name,
		  const char *dso);
int ks_symtab_add_map(struct ks_symtab *t, uint64_t start, uint64_t end, const char *dso);
void ks_symtab_finish(struct ks_symtab *t);
size_t ks_symtab_count(const struct ks_symtab *t);
const struct ks_sym *ks_symtab_at(const struct ks_symtab *t, size_t i);
/* The address of NAME (first match, linear search); false if absent. */
bool ks_symtab_addr_of(const struct ks_symtab *t, const char *name, uint64_t *addr);
/* Returns true when a symbol covers ADDR (r->name set). */
bool ks_symtab_lookup(const struct ks_symtab *t, uint64_t addr, struct ks_resolved *r);

/* /proc/kallsyms text: "addr type name [module]".  Absolute ('a'/'A')
 * symbols and names starting with '$' are skipped, as libtraceevent does. */
int ks_kallsyms_parse(struct ks_symtab *t, const char *text, size_t len, const char *path,
		      struct ks_error *err);
int ks_kallsyms_load(struct ks_symtab *t, const char *path, struct ks_error *err);
/* /proc/modules text: "name size refs deps state 0xaddr": one map per module. */
int ks_modules_parse(struct ks_symtab *t, const char *text, size_t len, const char *path,
		     struct ks_error *err);
int ks_modules_load(struct ks_symtab *t, const char *path, struct ks_error *err);
/* The kallsyms text SRC stores (a trace.dat's; ks_source_text()). */
struct ks_source;
int ks_symtab_from_source(struct ks_symtab *t, const struct ks_source *src, struct ks_error *err);

/* ELF symbols (.symtab, else .dynsym; functions and text labels) of PATH.
 * BIAS is added to every value.  *STEXT (may be NULL) receives the ELF's
 * _stext (or _text) value, unbiased, or 0. */
int ks_elf_symbols_load(struct ks_symtab *t, const char *path, uint64_t bias, const char *dso,
			uint64_t *stext, struct ks_error *err);
/* Lowest PT_LOAD virtual address of an ELF (for --guest-binary PATH:ADDR). */
int ks_elf_min_vaddr(const char *path, uint64_t *vaddr, struct ks_error *err);

/* The executable PT_LOAD segments of ELF files, at their load addresses:
 * instruction bytes for the unwinder without asking the guest. */
struct ks_code_seg {
	uint64_t start, end; /* [start, end) guest addresses (bias applied) */
	uint8_t *bytes;
};
struct ks_codemap {
	struct ks_code_seg *seg;
	size_t n;
};
/* Add PATH's executable segments (file bytes only) shifted by BIAS.  At most
 * KS_CODE_MAX bytes per segment (a larger one is an error). */
#define KS_CODE_MAX (256u << 20)
int ks_elf_code_load(struct ks_codemap *m, const char *path, uint64_t bias, struct ks_error *err);
/* LEN bytes at VA, all inside one segment: 0, or -1 when not covered. */
int ks_codemap_read(const struct ks_codemap *m, uint64_t va, void *buf, size_t len);
void ks_codemap_free(struct ks_codemap *m);

/* Read a whole file, NUL-terminated, at most MAX bytes.  Caller frees. */
int ks_read_text_file(const char *path, size_t max, char **buf, size_t *len,
		      struct ks_error *err);

#endif
