/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gdbmem.c - struct ks_gmem over a QEMU gdbstub connection.
 *
 * Physical reads use QEMU's Qqemu.PhyMemMode:1, virtual reads (translated by
 * QEMU with the vCPU's own MMU state) switch it off.  Both go through a
 * block cache (aligned blocks of 512 bytes, 1 KB virtual) that the sampler
 * clears for every sample, so neighbouring stack slots and page-table entries cost one round
 * trip.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/gdbmem.h"

#define PBLOCK 512u  /* sizeof(blk[0].data) */
#define VBLOCK 1024u /* sizeof(vblk[0].data) */

void ks_gdbmem_init(struct ks_gdbmem *gm, struct ks_gdb *g)
{
	memset(gm, 0, sizeof(*gm));
	gm->g = g;
	gm->mem.read_phys = ks_gdbmem_read_phys;
	gm->mem.read_virt = ks_gdbmem_read_virt;
	gm->mem.ctx = gm;
}

void ks_gdbmem_reset(struct ks_gdbmem *gm)
{
	for (unsigned i = 0; i < KS_GDBMEM_BLOCKS; i++)
		gm->blk[i].valid = gm->vblk[i].valid = false;
}

static int fetch(struct ks_gdbmem *gm, bool phys, uint64_t addr, void *buf, size_t len)
{
	struct ks_error err;

	gm->reads++;
	if (ks_gdb_set_phys(gm->g, phys, &err) < 0)
		return -1;
	return ks_gdb_read_mem(gm->g, addr, buf, len, &err) < 0 ? -1 : 0;
}

/* The cached block at BASE of the physical or the virtual space.  A
 * virtual block never crosses a page, so it is readable whenever the byte
 * asked for is. */
static int block_of(struct ks_gdbmem *gm, bool phys, uint64_t base, const uint8_t **data)
{
	unsigned slot = (unsigned)((base / (phys ? PBLOCK : VBLOCK)) % KS_GDBMEM_BLOCKS);
	bool *valid = phys ? &gm->blk[slot].valid : &gm->vblk[slot].valid;
	uint64_t *at = phys ? &gm->blk[slot].base : &gm->vblk[slot].base;
	uint8_t *d = phys ? gm->blk[slot].data : gm->vblk[slot].data;

	if (*valid && *at == base) {
		gm->hits++;
		*data = d;
		return 0;
	}
	if (fetch(gm, phys, base, d, phys ? PBLOCK : VBLOCK) < 0)
		return -1;
	*at = base;
	*valid = true;
	*data = d;
	return 0;
}

static int read_cached(struct ks_gdbmem *gm, bool phys, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	size_t block = phys ? PBLOCK : VBLOCK;

	if (len >= block)
		return fetch(gm, phys, addr, buf, len);
	while (len) {
		uint64_t base = addr & ~(uint64_t)(block - 1);
		size_t off = (size_t)(addr - base), n = block - off < len ? block - off : len;
		const uint8_t *d;

		if (block_of(gm, phys, base, &d) < 0)
			return -1;
		memcpy(out, d + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int ks_gdbmem_read_phys(void *ctx, uint64_t pa, void *buf, size_t len)
{
	return read_cached(ctx, true, pa, buf, len);
}

int ks_gdbmem_read_virt(void *ctx, uint64_t va, void *buf, size_t len)
{
	return read_cached(ctx, false, va, buf, len);
}
