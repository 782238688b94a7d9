/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guestsyms.h - symbols and kernel unwind data shared by `kvmscope sample`
 * and `kvmscope unwind`.
 *
 *	struct ks_guestsyms gs = {0};
 *	ks_guestsyms_load(&gs, &opts, &err);           kallsyms, modules, vmlinux, binaries
 *	ks_guest_orc_setup(&orc, &vm, gs.kernel, KS_ORC_AUTO, &info, &err);
 *	ks_guestsyms_name(&gs, ip, buf, sizeof(buf));   "vfs_read", "[unknown]"
 */
#ifndef KVMSCOPE_GUESTSYMS_H
#define KVMSCOPE_GUESTSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kvmscope/error.h"
#include "kvmscope/unwind.h"

struct ks_symtab;

#define KS_GUESTSYMS_MAX_BINARIES 16

struct ks_guestsyms_opts {
	const char *kallsyms, *modules, *vmlinux;
	uint64_t kaslr_offset;
	const char *binaries[KS_GUESTSYMS_MAX_BINARIES]; /* PATH or PATH:LOADADDR */
	int nbinaries;
};

struct ks_codemap;

struct ks_guestsyms {
	struct ks_symtab *kernel, *user;  /* NULL when not given */
	struct ks_codemap *user_code;     /* --guest-binary code bytes, NULL when none */
};

int ks_guestsyms_load(struct ks_guestsyms *gs, const struct ks_guestsyms_opts *o,
		      struct ks_error *err);
void ks_guestsyms_free(struct ks_guestsyms *gs);
/* Instruction bytes of the --guest-binary programs for the unwinder, from
 * the files (as perf reads binaries from disk) instead of one more read of
 * guest memory per sample.  A file is trusted for an address space (PGD)
 * only after a 1 KB block of it matched guest memory there, and the check
 * is repeated every KS_CODE_RECHECK_S seconds (a PGD may be reused by another
 * process).  Use as struct ks_vmem read_code with CTX = struct ks_guestcode. */
#define KS_CODE_SPACES 64
#define KS_CODE_RECHECK_S 1.0
struct ks_guestcode {
	const struct ks_codemap *map;   /* NULL: never answers */
	struct { uint64_t pgd; double at; int8_t ok; } space[KS_CODE_SPACES];
	uint64_t from_file, checks, mismatches;
};
int ks_guestcode_read(void *ctx, struct ks_vmem *v, uint64_t va, void *buf, size_t len);
/* Symbol name of IP ("[unknown]" when none); OFFSETS adds "+0x12". */
const char *ks_guestsyms_name(const struct ks_guestsyms *gs, uint64_t ip, bool offsets,
			      char *buf, size_t size);

/* Folded form of a stack, root first: "main;foo;vfs_read".  ANNOTATE adds
 * "_[g.k]" / "_[g.u]" to every frame.  Returns the length or -1 if cut. */
int ks_stack_fold(const struct ks_guestsyms *gs, const struct ks_stack *s, bool annotate,
		  char *buf, size_t size);
/* "  #N 0xADDR name+0xOFF [k|u]" per frame, innermost first. */
void ks_stack_print(FILE *out, const struct ks_guestsyms *gs, const struct ks_stack *s);

enum ks_orc_choice { KS_ORC_AUTO = -1 };

struct ks_orc_info {
	bool layout_from_banner;
	char banner[128];
	enum ks_orc_layout layout;
};

/* Whether KERNEL (kallsyms) belongs to the kernel behind VM, read through
 * the page tables of CR3/CR4 (and, for a user CR3 of a KPTI kernel, its
 * kernel half): the guest's linux_banner must read "Linux version ", and
 * with GUEST_STEXT (the guest's own _stext, e.g. from VMCOREINFO; 0: not
 * known) _stext must be there.  0, or -1 with err "these kallsyms are not
 * of the running guest kernel (...)".  Symbols without linux_banner and
 * _stext are not checked.  VM is left reset to CR3/CR4. */
int ks_guestsyms_check_kernel(const struct ks_symtab *kernel, struct ks_vmem *vm, uint64_t cr3,
			      uint64_t cr4, uint64_t guest_stext, struct ks_error *err);

/* Read the ORC tables located by KERNEL's __start_orc_unwind_ip and co.
 * LAYOUT KS_ORC_AUTO: from linux_banner (read from guest memory), else
 * from the presence of __start_orc_header (6.4+). */
int ks_guest_orc_setup(struct ks_orc *orc, struct ks_vmem *vm, const struct ks_symtab *kernel,
		       int layout, struct ks_orc_info *info, struct ks_error *err);

#endif
