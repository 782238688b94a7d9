/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmem.h - read-only guest memory: physical reads of a guest (struct
 * ks_gmem: a live gdbstub, or a dump) and virtual reads through the
 * guest's own 4/5-level page tables with a translation cache (struct
 * ks_vmem).  Used by the ORC loader and the unwinder (unwind.h).
 */
#ifndef KVMSCOPE_VMEM_H
#define KVMSCOPE_VMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* x86-64: the upper half of the address space is the kernel's. */
static inline bool ks_is_kernel_addr(uint64_t a) { return a >= 0xffff800000000000ull; }

#endif
