/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind.h - read-only guest memory access and x86-64 guest stack unwinding.
 *
 * Layers (each usable alone, all in src/unwind/):
 *   struct ks_gmem    physical reads of a guest (live gdbstub, or a dump)
 *   struct ks_vmem    virtual reads: own 4/5-level page walk from cr3 with a
 *                     translation cache (reset per sample), PTI's PGD pair,
 *                     optional fallback to the source's own virtual reads
 *   struct ks_orc     the kernel's ORC tables (pre-6.4 or 6.4+ entry layout)
 *   ks_unwind()       kernel frames (ORC or frame pointers) through pt_regs
 *                     into user frames (frame pointers, prologue case)
 *
 *	struct ks_vmem vm;  ks_vmem_init(&vm, &gmem);  ks_vmem_reset(&vm, regs.cr3, regs.cr4);
 *	struct ks_unwinder u = { .kernel = KS_KUNWIND_ORC, .orc = &orc };
 *	struct ks_stack s;  ks_unwind(&u, &vm, &regs, &s);
 *
 * Unwinding never writes anything and stops at the first unreadable
 * address, loop or implausible value; s.stop says why.
 */
#ifndef KVMSCOPE_UNWIND_H
#define KVMSCOPE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"
#include "kvmscope/gdbproto.h"

/* ---- guest memory ---- */

struct ks_gmem {
	/* Physical read; 0 or negative.  Required. */
	int (*read_phys)(void *ctx, uint64_t pa, void *buf, size_t len);
	/* Virtual read in the current vCPU's context; may be NULL. */
	int (*read_virt)(void *ctx, uint64_t va, void *buf, size_t len);
	void *ctx;
	/* bytes of guest memory behind read_phys (a dump's LOAD segments);
	 * 0: not known (a gdbstub).  No table read out of the guest can be
	 * larger: crafted page tables can alias one page at every address. */
	uint64_t size;
};

#define KS_TLB_SIZE 64

struct ks_vmem_stats {
	uint64_t tlb_hits, tlb_misses, walk_failures, fallback_reads;
	uint64_t virt_reads, virt_failures; /* virtual reads answered, refused by the stub */
};

/* How ks_vmem_read() finds guest memory. */
enum ks_vmem_mode {
	KS_VMEM_WALK,       /* own page walk; the stub's virtual read where it fails (default) */
	KS_VMEM_WALK_ONLY,  /* own page walk only */
	KS_VMEM_VIRT_FIRST, /* the stub's virtual read; the own page walk where it fails */
	KS_VMEM_VIRT_ONLY,  /* the stub's virtual read only */
};

struct ks_vmem {
	const struct ks_gmem *m;
	uint64_t cr3;
	bool la57;
	enum ks_vmem_mode mode; /* virtual reads need m->read_virt */
	/* optional: instruction bytes from elsewhere (binaries on disk); -1 =
	 * not known there, read guest memory */
	int (*read_code)(void *ctx, struct ks_vmem *v, uint64_t va, void *buf, size_t len);
	void *code_ctx;
	struct { uint64_t vpage, ppage; bool valid; } tlb[KS_TLB_SIZE];
	struct ks_vmem_stats st;
};

void ks_vmem_init(struct ks_vmem *v, const struct ks_gmem *m);
/* New address space / new sample: forget every cached translation. */
void ks_vmem_reset(struct ks_vmem *v, uint64_t cr3, uint64_t cr4);
/* One page walk from PGD (physical).  0, or -1 when not mapped/unreadable. */
int ks_pgwalk(const struct ks_gmem *m, uint64_t pgd, bool la57, uint64_t va, uint64_t *pa);
int ks_vmem_translate(struct ks_vmem *v, uint64_t va, uint64_t *pa);
int ks_vmem_read(struct ks_vmem *v, uint64_t va, void *buf, size_t len);
/* Instruction bytes: through read_code when set and it knows VA. */
int ks_vmem_read_code(struct ks_vmem *v, uint64_t va, void *buf, size_t len);
int ks_vmem_read_u64(struct ks_vmem *v, uint64_t va, uint64_t *val);

/* ---- ORC ---- */

enum ks_orc_layout { KS_ORC_PRE_6_4 = 0, KS_ORC_6_4 = 1 };
enum ks_orc_type { KS_ORC_UNDEFINED, KS_ORC_END, KS_ORC_CALL, KS_ORC_REGS, KS_ORC_REGS_PARTIAL };
enum ks_orc_reg {
	KS_ORC_REG_UNDEFINED = 0, KS_ORC_REG_PREV_SP = 1, KS_ORC_REG_DX = 2, KS_ORC_REG_DI = 3,
	KS_ORC_REG_BP = 4, KS_ORC_REG_SP = 5, KS_ORC_REG_R10 = 6, KS_ORC_REG_R13 = 7,
	KS_ORC_REG_BP_INDIRECT = 8, KS_ORC_REG_SP_INDIRECT = 9,
};

struct ks_orc_entry {
	int16_t sp_offset, bp_offset;
	uint8_t sp_reg, bp_reg, type, signal;
};

struct ks_orc {
	uint64_t *ips;        /* absolute, sorted */
	uint8_t *entries;     /* 6 bytes each */
	size_t n;
	enum ks_orc_layout layout;
	uint64_t text_end;    /* ips past this have no entry (0 = unknown) */
};

/* From the raw sections: IP_TAB holds N s32 offsets relative to each slot,
 * the first slot at guest address IP_BASE; ORC_TAB holds N 6-byte entries. */
int ks_orc_from_tables(struct ks_orc *o, const uint8_t *ip_tab, size_t ip_len, uint64_t ip_base,
		       const uint8_t *orc_tab, size_t orc_len, enum ks_orc_layout layout,
		       struct ks_error *err);
/* Read both tables out of guest memory.  The bounds are checked before
 * anything is allocated: N = (STOP_IP - START_IP) / 4 entries, at most
 * KS_ORC_MAX_ENTRIES (real kernels have under a million), 6 * N entry
 * bytes, 10 * N bytes in all within the guest memory's size (when known),
 * and the first and last bytes of both tables readable. */
#define KS_ORC_MAX_ENTRIES (4u << 20)
int ks_orc_load(struct ks_orc *o, struct ks_vmem *v, uint64_t start_ip, uint64_t stop_ip,
		uint64_t start_orc, uint64_t stop_orc, enum ks_orc_layout layout,
		struct ks_error *err);
void ks_orc_free(struct ks_orc *o);
bool ks_orc_find(const struct ks_orc *o, uint64_t ip, struct ks_orc_entry *e);
void ks_orc_decode(const uint8_t raw[6], enum ks_orc_layout layout, struct ks_orc_entry *e);
/* "Linux version 6.1.0 ..." -> layout by version (6.4+ is new). */
int ks_orc_layout_from_banner(const char *banner, enum ks_orc_layout *layout);

/* ---- unwinding ---- */

#define KS_MAX_FRAMES 128

enum ks_kunwind { KS_KUNWIND_NONE, KS_KUNWIND_ORC, KS_KUNWIND_FP };

enum ks_unwind_stop {
	KS_STOP_END,          /* a clean end: user chain ends (bp 0) */
	KS_STOP_BAD_READ,     /* memory not mapped or unreadable */
	KS_STOP_LOOP,         /* stack pointer did not move up */
	KS_STOP_BAD_ADDR,     /* implausible return address or frame pointer */
	KS_STOP_NO_ORC,       /* kernel ip without ORC data */
	KS_STOP_KERNEL_ONLY,  /* ORC end of stack in kernel (kernel thread) */
	KS_STOP_NO_KUNWIND,   /* kernel frame but no kernel unwinder */
	KS_STOP_DEPTH,        /* KS_MAX_FRAMES reached */
	KS_STOP_COUNT_
};

struct ks_frame {
	uint64_t ip;
	bool kernel;
};

struct ks_stack {
	struct ks_frame f[KS_MAX_FRAMES];
	unsigned n;
	enum ks_unwind_stop stop;
	bool via_regs;        /* crossed an interrupt/exception/syscall frame */
};

struct ks_unwinder {
	enum ks_kunwind kernel;
	const struct ks_orc *orc;
	bool user;            /* continue into user space (default true via init) */
};

const char *ks_unwind_stop_name(enum ks_unwind_stop s);
static inline bool ks_is_kernel_addr(uint64_t a) { return a >= 0xffff800000000000ull; }
int ks_unwind(const struct ks_unwinder *u, struct ks_vmem *v, const struct ks_x86_regs *r,
	      struct ks_stack *s);

#endif
