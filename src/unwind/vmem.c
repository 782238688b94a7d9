/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmem.c - guest virtual reads through an x86-64 page walk of our own.
 *
 * ks_pgwalk() walks 4- or 5-level tables (1 GB and 2 MB pages included)
 * with physical reads only; ks_vmem_* add a small direct-mapped translation
 * cache that the sampler resets for every sample and vCPU (page tables may
 * change while the guest runs), and handle PTI: with page-table isolation
 * the user PGD is the odd page of an 8 KB pair and lacks most kernel
 * mappings, so kernel addresses are walked from cr3 & ~0x1fff first.
 */
#include <string.h>

#include "kvmscope/vmem.h"

#define PTE_PRESENT 1ull
#define PTE_PS (1ull << 7)
#define PHYS_MASK 0x000ffffffffff000ull
#define CR4_LA57 (1ull << 12)

static bool canonical(uint64_t va, bool la57)
{
	int bits = la57 ? 57 : 48;
	int64_t s = (int64_t)(va << (64 - bits)) >> (64 - bits);

	return (uint64_t)s == va;
}

int ks_pgwalk(const struct ks_gmem *m, uint64_t pgd, bool la57, uint64_t va, uint64_t *pa)
{
	int levels = la57 ? 5 : 4;
	uint64_t table = pgd & PHYS_MASK;

	if (!canonical(va, la57))
		return -1;
	for (int level = levels; level >= 1; level--) {
		int shift = 12 + 9 * (level - 1);
		uint64_t idx = (va >> shift) & 511, e;

		if (m->read_phys(m->ctx, table + idx * 8, &e, 8) < 0)
			return -1;
		if (!(e & PTE_PRESENT))
			return -1;
		if (level == 1 || ((level == 2 || level == 3) && (e & PTE_PS))) {
			uint64_t mask = (1ull << shift) - 1;
			uint64_t base = e & PHYS_MASK & ~mask;
			*pa = base | (va & mask);
			return 0;
		}
		table = e & PHYS_MASK;
	}
	return -1;
}

void ks_vmem_init(struct ks_vmem *v, const struct ks_gmem *m)
{
	memset(v, 0, sizeof(*v));
	v->m = m;
	v->mode = KS_VMEM_WALK;
}

void ks_vmem_reset(struct ks_vmem *v, uint64_t cr3, uint64_t cr4)
{
	v->cr3 = cr3;
	v->la57 = (cr4 & CR4_LA57) != 0;
	for (int i = 0; i < KS_TLB_SIZE; i++)
		v->tlb[i].valid = false;
}

static int walk_pti(struct ks_vmem *v, uint64_t va, uint64_t *pa)
{
	uint64_t pgd = v->cr3 & PHYS_MASK;

	if (ks_is_kernel_addr(va) && (pgd & 0x1000)) {
		if (ks_pgwalk(v->m, pgd & ~0x1fffull, v->la57, va, pa) == 0)
			return 0;
	}
	return ks_pgwalk(v->m, pgd, v->la57, va, pa);
}

int ks_vmem_translate(struct ks_vmem *v, uint64_t va, uint64_t *pa)
{
	uint64_t vpage = va >> 12;
	unsigned slot = (unsigned)(vpage % KS_TLB_SIZE);
	uint64_t p;

	if (v->tlb[slot].valid && v->tlb[slot].vpage == vpage) {
		v->st.tlb_hits++;
		*pa = v->tlb[slot].ppage << 12 | (va & 0xfff);
		return 0;
	}
	v->st.tlb_misses++;
	if (walk_pti(v, va, &p) < 0) {
		v->st.walk_failures++;
		return -1;
	}
	v->tlb[slot].vpage = vpage;
	v->tlb[slot].ppage = p >> 12;
	v->tlb[slot].valid = true;
	*pa = p;
	return 0;
}

static int read_virt(struct ks_vmem *v, uint64_t va, void *buf, size_t len)
{
	if (!v->m->read_virt || v->m->read_virt(v->m->ctx, va, buf, len) < 0) {
		v->st.virt_failures++;
		return -1;
	}
	v->st.virt_reads++;
	return 0;
}

int ks_vmem_read(struct ks_vmem *v, uint64_t va, void *buf, size_t len)
{
	uint8_t *out = buf;

	if (v->mode == KS_VMEM_VIRT_FIRST || v->mode == KS_VMEM_VIRT_ONLY) {
		if (read_virt(v, va, buf, len) == 0)
			return 0;
		if (v->mode == KS_VMEM_VIRT_ONLY)
			return -1;
	}
	while (len) {
		size_t in_page = 4096 - (va & 0xfff), n = len < in_page ? len : in_page;
		uint64_t pa;
		int rc = ks_vmem_translate(v, va, &pa);

		if (rc == 0)
			rc = v->m->read_phys(v->m->ctx, pa, out, n);
		if (rc < 0) {
			if (v->mode != KS_VMEM_WALK || !v->m->read_virt)
				return -1;
			v->st.fallback_reads++;
			if (read_virt(v, va, out, n) < 0)
				return -1;
		}
		out += n;
		va += n;
		len -= n;
	}
	return 0;
}

int ks_vmem_read_code(struct ks_vmem *v, uint64_t va, void *buf, size_t len)
{
	if (v->read_code && v->read_code(v->code_ctx, v, va, buf, len) == 0)
		return 0;
	return ks_vmem_read(v, va, buf, len);
}

int ks_vmem_read_u64(struct ks_vmem *v, uint64_t va, uint64_t *val)
{
	uint8_t b[8];

	if (ks_vmem_read(v, va, b, 8) < 0)
		return -1;
	*val = 0;
	for (int i = 7; i >= 0; i--)
		*val = *val << 8 | b[i];
	return 0;
}
