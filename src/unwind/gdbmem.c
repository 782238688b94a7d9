/*
 * gdbmem.c - struct ks_gmem over a QEMU gdbstub connection.
 *
 * Physical reads use QEMU's Qqemu.PhyMemMode:1 and go through a block cache
 * (512-byte aligned blocks) that the sampler clears for every sample, so
 * neighbouring stack slots and page-table entries cost one round trip.
 * Virtual reads (the fallback) switch the mode off for that read.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/gdbmem.h"

#define BLOCK 512u

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
		gm->blk[i].valid = false;
}

static int fetch(struct ks_gdbmem *gm, uint64_t pa, void *buf, size_t len)
{
	struct ks_error err;

	gm->reads++;
	if (ks_gdb_set_phys(gm->g, true, &err) < 0)
		return -1;
	return ks_gdb_read_mem(gm->g, pa, buf, len, &err) < 0 ? -1 : 0;
}

static int block_of(struct ks_gdbmem *gm, uint64_t base, const uint8_t **data)
{
	unsigned slot = (unsigned)((base / BLOCK) % KS_GDBMEM_BLOCKS);

	if (gm->blk[slot].valid && gm->blk[slot].base == base) {
		gm->hits++;
		*data = gm->blk[slot].data;
		return 0;
	}
	if (fetch(gm, base, gm->blk[slot].data, BLOCK) < 0)
		return -1;
	gm->blk[slot].base = base;
	gm->blk[slot].valid = true;
	*data = gm->blk[slot].data;
	return 0;
}

int ks_gdbmem_read_phys(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct ks_gdbmem *gm = ctx;
	uint8_t *out = buf;

	if (len >= BLOCK)
		return fetch(gm, pa, buf, len);
	while (len) {
		uint64_t base = pa & ~(uint64_t)(BLOCK - 1);
		size_t off = (size_t)(pa - base), n = BLOCK - off < len ? BLOCK - off : len;
		const uint8_t *d;

		if (block_of(gm, base, &d) < 0)
			return -1;
		memcpy(out, d + off, n);
		out += n;
		pa += n;
		len -= n;
	}
	return 0;
}

int ks_gdbmem_read_virt(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct ks_gdbmem *gm = ctx;
	struct ks_error err;

	gm->reads++;
	if (ks_gdb_set_phys(gm->g, false, &err) < 0)
		return -1;
	return ks_gdb_read_mem(gm->g, va, buf, len, &err) < 0 ? -1 : 0;
}
