/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_orc.c - libFuzzer target: the bytes are ORC tables (first 2 bytes:
 * number of entries) followed by "guest memory"; build the table in both
 * entry layouts and unwind a kernel stack through the memory (identity
 * mapped via a 1 GB page set up here).
 */
#include <stdint.h>
#include <string.h>

#include "kvmscope/unwind.h"

static const uint8_t *mem;
static size_t mem_len;

/* Physical memory: page tables at 0x0 and 0x1000, then the fuzz bytes at 0x2000. */
static int rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
	uint64_t e = 0;

	(void)ctx;
	if (pa < 0x2000 && len == 8) {
		if (pa == 511 * 8)                  /* PML4[511] -> PDPT at 0x1000 */
			e = 0x1000 | 3;
		else if (pa == 0x1000 + 510 * 8)    /* PDPT[510]: 1 GB page at 0x2000-aligned 0 */
			e = 0x83;
		memcpy(buf, &e, 8);
		return 0;
	}
	if (pa < 0x2000 || pa - 0x2000 >= mem_len || len > mem_len - (pa - 0x2000))
		return -1;
	memcpy(buf, mem + (pa - 0x2000), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint64_t base = 0xffffffff80000000ull;
	struct ks_gmem g = { rd, NULL, NULL, 0 };
	static struct ks_stack s;
	struct ks_vmem v;
	size_t n;

	if (size < 2)
		return 0;
	n = (size_t)(data[0] | data[1] << 8) % 512;
	if (2 + n * 10 > size)
		return 0;
	mem = data;
	mem_len = size;
	for (int layout = 0; layout < 2; layout++) {
		struct ks_orc o;
		struct ks_error err;
		struct ks_unwinder u = { .kernel = KS_KUNWIND_ORC, .user = true, .orc = &o };
		struct ks_x86_regs r = { .rip = base + 0x2000 + 64, .rsp = base + 0x2000 + size / 2,
					 .rbp = base + 0x2000 + size / 3, .cs = 0x10 };
		if (n == 0 || ks_orc_from_tables(&o, data + 2, n * 4, base + 0x2000, data + 2 + n * 4,
						 n * 6, (enum ks_orc_layout)layout, &err) < 0)
			continue;
		ks_vmem_init(&v, &g);
		ks_vmem_reset(&v, 0, 0);
		ks_unwind(&u, &v, &r, &s);
		ks_orc_free(&o);
	}
	return 0;
}
