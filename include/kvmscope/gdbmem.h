/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gdbmem.h - guest memory (struct ks_gmem) read through a QEMU gdbstub.
 *
 *	struct ks_gdbmem gm;  ks_gdbmem_init(&gm, g);
 *	ks_vmem_init(&vm, &gm.mem);
 *	per sample: ks_gdbmem_reset(&gm);  (drops the block caches)
 */
#ifndef KVMSCOPE_GDBMEM_H
#define KVMSCOPE_GDBMEM_H

#include "kvmscope/gdbproto.h"
#include "kvmscope/unwind.h"

#define KS_GDBMEM_BLOCKS 64

struct ks_gdbmem {
	struct ks_gmem mem;
	struct ks_gdb *g;
	/* per-sample caches of aligned blocks: physical (512 bytes: page-table
	 * entries and stack slots), virtual (1 KB: stack walks are the main
	 * virtual reads, one round trip for most user stacks) */
	struct { uint64_t base; bool valid; uint8_t data[512]; } blk[KS_GDBMEM_BLOCKS];
	struct { uint64_t base; bool valid; uint8_t data[1024]; } vblk[KS_GDBMEM_BLOCKS];
	uint64_t reads, hits;
};

void ks_gdbmem_init(struct ks_gdbmem *gm, struct ks_gdb *g);
void ks_gdbmem_reset(struct ks_gdbmem *gm);
int ks_gdbmem_read_phys(void *ctx, uint64_t pa, void *buf, size_t len);
int ks_gdbmem_read_virt(void *ctx, uint64_t va, void *buf, size_t len);

#endif
