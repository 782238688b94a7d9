/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_unwind.c - page walk, ORC decoding and the unwinders on a synthetic
 * guest: a flat "physical memory" with page tables built here, stacks and
 * code bytes placed by hand, so that every expected frame is known by
 * construction.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/guestsyms.h"
#include "kvmscope/unwind.h"
#include "symbols/symtab.h"
#include "../lib/ktest.h"

#define PHYS_SIZE (1u << 22) /* 4 MB */
static uint8_t phys[PHYS_SIZE];
static uint64_t next_page = 0x10000;

static int flat_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	(void)ctx;
	if (pa >= PHYS_SIZE || len > PHYS_SIZE - pa)
		return -1;
	memcpy(buf, phys + pa, len);
	return 0;
}

static const struct ks_gmem flat = { flat_read, NULL, NULL, 0 };

static void put64(uint64_t pa, uint64_t v) { memcpy(phys + pa, &v, 8); }
static uint64_t get64(uint64_t pa) { uint64_t v; memcpy(&v, phys + pa, 8); return v; }
static uint64_t alloc_page(void) { uint64_t p = next_page; next_page += 4096; memset(phys + p, 0, 4096); return p; }

/* Map VA -> PA in the tables under PGD; LEAF_LEVEL 1 (4K), 2 (2M), 3 (1G). */
static void map(uint64_t pgd, int levels, uint64_t va, uint64_t pa, int leaf_level)
{
	uint64_t table = pgd;

	for (int level = levels; level > leaf_level; level--) {
		uint64_t slot = table + ((va >> (12 + 9 * (level - 1))) & 511) * 8, e = get64(slot);
		if (!(e & 1)) {
			e = alloc_page() | 0x7;
			put64(slot, e);
		}
		table = e & 0x000ffffffffff000ull;
	}
	put64(table + ((va >> (12 + 9 * (leaf_level - 1))) & 511) * 8,
	      pa | 0x7 | (leaf_level > 1 ? 0x80 : 0));
}

static void t_pgwalk_levels_and_large_pages(void)
{
	uint64_t pgd = alloc_page(), pgd5 = alloc_page(), pa;

	map(pgd, 4, 0x7ffff000ull, 0x200000, 1);
	map(pgd, 4, 0xffffffff81000000ull, 0x200000, 2);          /* 2 MB page */
	map(pgd, 4, 0xffff888000000000ull, 0, 3);                 /* 1 GB page */
	map(pgd5, 5, 0xff11000000001000ull, 0x3000, 1);           /* 57-bit address */
	KT_EQ_INT(ks_pgwalk(&flat, pgd, false, 0x7ffff123ull, &pa), 0);
	KT_EQ_U64(pa, 0x200123);
	KT_EQ_INT(ks_pgwalk(&flat, pgd, false, 0xffffffff81012345ull, &pa), 0);
	KT_EQ_U64(pa, 0x212345);
	KT_EQ_INT(ks_pgwalk(&flat, pgd, false, 0xffff888000345678ull, &pa), 0);
	KT_EQ_U64(pa, 0x345678);
	KT_EXPECT(ks_pgwalk(&flat, pgd, false, 0x1000, &pa) < 0);            /* not mapped */
	KT_EXPECT(ks_pgwalk(&flat, pgd, false, 0x0000800000000000ull, &pa) < 0); /* non-canonical */
	KT_EQ_INT(ks_pgwalk(&flat, pgd5, true, 0xff11000000001010ull, &pa), 0);
	KT_EQ_U64(pa, 0x3010);
	KT_EXPECT(ks_pgwalk(&flat, pgd5, false, 0xff11000000001010ull, &pa) < 0);
}

static void t_pti_pair_and_cache(void)
{
	/* 8 KB aligned pair: kernel PGD even page, user PGD odd page. */
	uint64_t kpgd, upgd, pa;
	struct ks_vmem v;

	next_page = (next_page + 0x1fff) & ~0x1fffull;
	kpgd = alloc_page();
	upgd = alloc_page();
	map(kpgd, 4, 0xffffc90000004000ull, 0x5000, 1);  /* kernel stack: kernel PGD only */
	map(upgd, 4, 0x7ffff000ull, 0x6000, 1);
	ks_vmem_init(&v, &flat);
	ks_vmem_reset(&v, upgd | 0x801 /* PCID bits */, 0);
	KT_EQ_INT(ks_vmem_translate(&v, 0xffffc90000004008ull, &pa), 0);
	KT_EQ_U64(pa, 0x5008);
	KT_EQ_INT(ks_vmem_translate(&v, 0x7ffff010ull, &pa), 0);
	KT_EQ_U64(pa, 0x6010);
	KT_EQ_INT(ks_vmem_translate(&v, 0x7ffff018ull, &pa), 0);
	KT_EQ_U64(v.st.tlb_hits, 1);
	put64(upgd, 0); /* tables change: only a reset makes it visible */
	KT_EQ_INT(ks_vmem_translate(&v, 0x7ffff020ull, &pa), 0);
	ks_vmem_reset(&v, upgd, 0);
	KT_EXPECT(ks_vmem_translate(&v, 0x7ffff020ull, &pa) < 0);
}

/* A stub's virtual read that answers only for addresses below VIRT_LIMIT
 * (0x1000 bytes of 0xab) and counts its calls; physical reads are counted. */
#define VIRT_LIMIT 0x10000000ull
static unsigned virt_calls, phys_calls;

static int counting_virt(void *ctx, uint64_t va, void *buf, size_t len)
{
	(void)ctx;
	virt_calls++;
	if (va >= VIRT_LIMIT)
		return -1;
	memset(buf, 0xab, len);
	return 0;
}

static int counting_phys(void *ctx, uint64_t pa, void *buf, size_t len)
{
	phys_calls++;
	return flat_read(ctx, pa, buf, len);
}

/* Read one byte at VA in MODE; *nv and *np get the virtual and physical
 * read calls it took. */
static int mode_read(enum ks_vmem_mode mode, uint64_t pgd, uint64_t va, uint8_t *byte,
		     unsigned *nv, unsigned *np)
{
	static const struct ks_gmem both = { counting_phys, counting_virt, NULL, 0 };
	struct ks_vmem v;
	int rc;

	ks_vmem_init(&v, &both);
	ks_vmem_reset(&v, pgd, 0);
	v.mode = mode;
	virt_calls = phys_calls = 0;
	*byte = 0;
	rc = ks_vmem_read(&v, va, byte, 1);
	*nv = virt_calls;
	*np = phys_calls;
	return rc;
}

static void t_vmem_modes(void)
{
	/* MAPPED: in the page tables, refused by the stub; LOW: not in the
	 * tables, answered by the stub; NOWHERE: neither. */
	uint64_t pgd = alloc_page(), mapped = 0x7ffff000ull, low = 0x1000, nowhere = 0x20000000ull;
	unsigned nv, np;
	uint8_t b;

	map(pgd, 4, mapped, 0x7000, 1);
	phys[0x7000] = 0x11;
	/* default: own walk, the stub's virtual read where the walk fails */
	KT_EQ_INT(mode_read(KS_VMEM_WALK, pgd, mapped, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0x11);
	KT_EQ_INT(nv, 0);
	KT_EQ_INT(mode_read(KS_VMEM_WALK, pgd, low, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0xab);
	KT_EQ_INT(mode_read(KS_VMEM_WALK, pgd, nowhere, &b, &nv, &np), -1);
	/* own walk only: never the stub's translation */
	KT_EQ_INT(mode_read(KS_VMEM_WALK_ONLY, pgd, low, &b, &nv, &np), -1);
	KT_EQ_INT(nv, 0);
	KT_EQ_INT(mode_read(KS_VMEM_WALK_ONLY, pgd, mapped, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0x11);
	/* virtual first: the stub, then the walk where the stub refuses */
	KT_EQ_INT(mode_read(KS_VMEM_VIRT_FIRST, pgd, low, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0xab);
	KT_EQ_INT(np, 0);
	KT_EQ_INT(mode_read(KS_VMEM_VIRT_FIRST, pgd, mapped, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0x11);
	KT_EQ_INT(nv, 1);
	KT_EQ_INT(mode_read(KS_VMEM_VIRT_FIRST, pgd, nowhere, &b, &nv, &np), -1);
	/* virtual only: never a physical read */
	KT_EQ_INT(mode_read(KS_VMEM_VIRT_ONLY, pgd, mapped, &b, &nv, &np), -1);
	KT_EQ_INT(np, 0);
	KT_EQ_INT(mode_read(KS_VMEM_VIRT_ONLY, pgd, low, &b, &nv, &np), 0);
	KT_EQ_INT(b, 0xab);
}

/* ---- an address space with a user program and a kernel ---- */

#define UTEXT 0x401000ull
#define USTACK 0x7ffe0000ull
#define KTEXT 0xffffffff81000000ull
#define KSTACK 0xffffc90000010000ull

static uint64_t space(void)
{
	uint64_t pgd = alloc_page();

	map(pgd, 4, UTEXT, 0x300000, 1);
	map(pgd, 4, USTACK, 0x301000, 1);
	map(pgd, 4, USTACK + 0x1000, 0x302000, 1);
	map(pgd, 4, KTEXT, 0x304000, 1);
	map(pgd, 4, KSTACK, 0x305000, 1);
	return pgd;
}

static uint64_t pa_of(uint64_t va)
{
	if (va >= KSTACK) return 0x305000 + (va - KSTACK);
	if (va >= KTEXT) return 0x304000 + (va - KTEXT);
	if (va >= USTACK) return 0x301000 + (va - USTACK);
	return 0x300000 + (va - UTEXT);
}

static void vput(uint64_t va, uint64_t v) { put64(pa_of(va), v); }

/* User chain: frames at USTACK+0x100 -> +0x200 -> +0x300 (bp 0 ends). */
static void user_frames(void)
{
	vput(USTACK + 0x100, USTACK + 0x200); vput(USTACK + 0x108, UTEXT + 0x50);
	vput(USTACK + 0x200, USTACK + 0x300); vput(USTACK + 0x208, UTEXT + 0x60);
	vput(USTACK + 0x300, 0);              vput(USTACK + 0x308, UTEXT + 0x70);
}

static void t_fp_user_and_prologue(void)
{
	struct ks_vmem v;
	struct ks_unwinder u = { .kernel = KS_KUNWIND_NONE, .user = true };
	struct ks_x86_regs r = { .rip = UTEXT + 0x10, .rsp = USTACK + 0xf0, .rbp = USTACK + 0x100,
				 .cs = 0x33 };
	static struct ks_stack s;

	r.cr3 = space();
	user_frames();
	phys[pa_of(UTEXT + 0x10)] = 0x90; /* nop: body of a function */
	ks_vmem_init(&v, &flat);
	ks_vmem_reset(&v, r.cr3, 0);
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_U64(s.n, 4);
	KT_EQ_U64(s.f[1].ip, UTEXT + 0x50);
	KT_EQ_U64(s.f[3].ip, UTEXT + 0x70);
	KT_EQ_INT(s.stop, KS_STOP_END);
	/* stopped on "push %rbp": the return address is at [rsp] */
	phys[pa_of(UTEXT + 0x10)] = 0x55;
	vput(USTACK + 0xf0, UTEXT + 0x40);
	ks_vmem_reset(&v, r.cr3, 0);
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_U64(s.n, 5);
	KT_EQ_U64(s.f[1].ip, UTEXT + 0x40);
	KT_EQ_U64(s.f[2].ip, UTEXT + 0x50);
	/* a loop (bp pointing down) stops cleanly */
	vput(USTACK + 0x200, USTACK + 0x100);
	ks_vmem_reset(&v, r.cr3, 0);
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_INT(s.stop, KS_STOP_LOOP);
	/* an unmapped bp stops with bad-read */
	r.rbp = USTACK + 0x5000;
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_INT(s.stop, KS_STOP_BAD_READ);
	KT_EQ_U64(s.n, 2);
}

/* Code bytes from a --guest-binary file: used once a 1 KB block matched the
 * guest's memory in that address space; on a mismatch the guest's bytes win. */
static void t_code_bytes_from_binary(void)
{
	struct ks_vmem v;
	struct ks_unwinder u = { .kernel = KS_KUNWIND_NONE, .user = true };
	struct ks_x86_regs r = { .rip = UTEXT + 0x10, .rsp = USTACK + 0xf0, .rbp = USTACK + 0x100,
				 .cs = 0x33 };
	static struct ks_stack s;
	static uint8_t text[4096];
	struct ks_code_seg seg = { UTEXT, UTEXT + sizeof(text), text };
	struct ks_codemap map = { &seg, 1 };
	struct ks_guestcode code = { .map = &map }, fresh = { .map = &map };

	r.cr3 = space();
	user_frames();
	phys[pa_of(UTEXT + 0x10)] = 0x55; /* the guest stopped on "push %rbp" */
	vput(USTACK + 0xf0, UTEXT + 0x40);
	memcpy(text, phys + pa_of(UTEXT), sizeof(text));
	ks_vmem_init(&v, &flat);
	v.read_code = ks_guestcode_read;
	v.code_ctx = &code;
	for (int i = 0; i < 2; i++) {
		ks_vmem_reset(&v, r.cr3, 0);
		ks_unwind(&u, &v, &r, &s);
		KT_EQ_U64(s.n, 5);
		KT_EQ_U64(s.f[1].ip, UTEXT + 0x40);
	}
	KT_EQ_U64(code.checks, 1);     /* one comparison for the address space */
	KT_EQ_U64(code.from_file, 2);
	KT_EQ_U64(code.mismatches, 0);
	/* a file whose bytes differ from the guest's is not believed */
	text[0x10] = 0x90;
	v.code_ctx = &fresh;
	ks_vmem_reset(&v, r.cr3, 0);
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_U64(s.n, 5);
	KT_EQ_U64(s.f[1].ip, UTEXT + 0x40);
	KT_EQ_U64(fresh.mismatches, 1);
	KT_EQ_U64(fresh.from_file, 0);
	phys[pa_of(UTEXT + 0x10)] = 0x90;
}

static void orc_raw(uint8_t *e, int16_t sp_off, int16_t bp_off, int sp_reg, int bp_reg, int type,
		    int end, enum ks_orc_layout layout)
{
	e[0] = (uint8_t)sp_off; e[1] = (uint8_t)((uint16_t)sp_off >> 8);
	e[2] = (uint8_t)bp_off; e[3] = (uint8_t)((uint16_t)bp_off >> 8);
	e[4] = (uint8_t)(sp_reg | bp_reg << 4);
	if (layout == KS_ORC_PRE_6_4)
		e[5] = (uint8_t)(type | end << 2);  /* type: 0 call 1 regs 2 partial */
	else
		e[5] = (uint8_t)type;               /* 0 undef 1 end 2 call 3 regs 4 partial */
}

static void t_orc_decode_layouts(void)
{
	uint8_t e[6];
	struct ks_orc_entry d;

	orc_raw(e, 16, -16, KS_ORC_REG_SP, KS_ORC_REG_PREV_SP, 0, 0, KS_ORC_PRE_6_4);
	ks_orc_decode(e, KS_ORC_PRE_6_4, &d);
	KT_EQ_INT(d.sp_offset, 16); KT_EQ_INT(d.bp_offset, -16);
	KT_EQ_INT(d.sp_reg, KS_ORC_REG_SP); KT_EQ_INT(d.bp_reg, KS_ORC_REG_PREV_SP);
	KT_EQ_INT(d.type, KS_ORC_CALL);
	orc_raw(e, 0, 0, KS_ORC_REG_UNDEFINED, 0, 0, 1, KS_ORC_PRE_6_4);
	ks_orc_decode(e, KS_ORC_PRE_6_4, &d);
	KT_EQ_INT(d.type, KS_ORC_END);
	orc_raw(e, 8, 0, KS_ORC_REG_SP, 0, 3, 0, KS_ORC_6_4);
	ks_orc_decode(e, KS_ORC_6_4, &d);
	KT_EQ_INT(d.type, KS_ORC_REGS);
	orc_raw(e, 8, 0, KS_ORC_REG_SP, 0, 1, 0, KS_ORC_6_4);
	ks_orc_decode(e, KS_ORC_6_4, &d);
	KT_EQ_INT(d.type, KS_ORC_END);
	enum ks_orc_layout l;
	KT_EQ_INT(ks_orc_layout_from_banner("Linux version 6.1.0-56-amd64 (x)", &l), 0);
	KT_EQ_INT(l, KS_ORC_PRE_6_4);
	KT_EQ_INT(ks_orc_layout_from_banner("Linux version 6.12.9 (x)", &l), 0);
	KT_EQ_INT(l, KS_ORC_6_4);
}

/*
 * Kernel: fn_inner [KTEXT+0x100, +0x200) CALL, cfa = sp+16, bp at cfa-16;
 * fn_outer [+0x200, +0x300) CALL, cfa = sp+8; entry [+0x300, +0x400) REGS
 * at sp+0 (pt_regs holding the user state); [+0x400...) undefined.
 */
static void build_orc(struct ks_orc *o, enum ks_orc_layout layout)
{
	uint64_t ips[4] = { KTEXT + 0x100, KTEXT + 0x200, KTEXT + 0x300, KTEXT + 0x400 };
	uint8_t ipt[16], orc[24];
	struct ks_error err;
	int call = layout == KS_ORC_PRE_6_4 ? 0 : 2, regs = layout == KS_ORC_PRE_6_4 ? 1 : 3;

	for (int i = 0; i < 4; i++) {
		int32_t rel = (int32_t)(ips[i] - (KTEXT + 0x1000 + 4 * (uint64_t)i));
		memcpy(ipt + 4 * i, &rel, 4);
	}
	orc_raw(orc, 16, -16, KS_ORC_REG_SP, KS_ORC_REG_PREV_SP, call, 0, layout);
	orc_raw(orc + 6, 8, 0, KS_ORC_REG_SP, KS_ORC_REG_UNDEFINED, call, 0, layout);
	orc_raw(orc + 12, 0, 0, KS_ORC_REG_SP, KS_ORC_REG_UNDEFINED, regs, 0, layout);
	orc_raw(orc + 18, 0, 0, KS_ORC_REG_UNDEFINED, 0, layout == KS_ORC_PRE_6_4 ? 0 : 0, 0, layout);
	KT_EQ_INT(ks_orc_from_tables(o, ipt, 16, KTEXT + 0x1000, orc, 24, layout, &err), 0);
}

static void orc_case(enum ks_orc_layout layout)
{
	struct ks_orc o;
	struct ks_vmem v;
	struct ks_unwinder u = { .kernel = KS_KUNWIND_ORC, .user = true };
	struct ks_x86_regs r = { .rip = KTEXT + 0x150, .rsp = KSTACK + 0x100, .rbp = 0x1234,
				 .cs = 0x10 };
	static struct ks_stack s;
	uint64_t regs = KSTACK + 0x118;

	build_orc(&o, layout);
	u.orc = &o;
	r.cr3 = space();
	user_frames();
	phys[pa_of(UTEXT + 0x20)] = 0x90;
	/* fn_inner frame: saved bp at sp+0, return into fn_outer at sp+8 */
	vput(KSTACK + 0x100, 0x5678);
	vput(KSTACK + 0x108, KTEXT + 0x250);
	/* fn_outer: cfa = sp(0x110) + 8 -> return into entry at 0x110 */
	vput(KSTACK + 0x110, KTEXT + 0x310);
	/* entry: pt_regs at cfa 0x118: user ip/cs/sp/bp */
	vput(regs + 32, USTACK + 0x100); /* bp */
	vput(regs + 128, UTEXT + 0x20);  /* ip */
	vput(regs + 136, 0x33);          /* cs */
	vput(regs + 152, USTACK + 0xf8); /* sp */
	ks_vmem_init(&v, &flat);
	ks_vmem_reset(&v, r.cr3, 0);
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_U64(s.n, 7); /* 3 kernel + user ip + 3 user frames */
	KT_EQ_U64(s.f[1].ip, KTEXT + 0x250);
	KT_EQ_U64(s.f[2].ip, KTEXT + 0x310);
	KT_EQ_U64(s.f[3].ip, UTEXT + 0x20);
	KT_EXPECT(!s.f[3].kernel);
	KT_EQ_U64(s.f[4].ip, UTEXT + 0x50);
	KT_EQ_U64(s.f[6].ip, UTEXT + 0x70);
	KT_EXPECT(s.via_regs);
	KT_EQ_INT(s.stop, KS_STOP_END);
	/* an ip past the last entry has no ORC data */
	r.rip = KTEXT + 0x480;
	ks_unwind(&u, &v, &r, &s);
	KT_EQ_INT(s.stop, KS_STOP_NO_ORC);
	ks_orc_free(&o);
}

static void t_orc_unwind_pre_6_4(void) { orc_case(KS_ORC_PRE_6_4); }
static void t_orc_unwind_6_4(void) { orc_case(KS_ORC_6_4); }

static void t_orc_bad_tables(void)
{
	struct ks_orc o;
	struct ks_error err;
	uint8_t b[12] = { 0 };

	KT_EXPECT(ks_orc_from_tables(&o, b, 8, KTEXT, b, 6, KS_ORC_PRE_6_4, &err) < 0);
	KT_EXPECT(ks_orc_from_tables(&o, b, 3, KTEXT, b, 0, KS_ORC_PRE_6_4, &err) < 0);
}

/* ks_orc_load reads both tables out of guest memory in pieces: 5,000
 * entries (ips out of order at the piece boundary, so they are sorted),
 * mapped at 0xffffffff90000000 over scattered physical pages, give the
 * table ks_orc_from_tables makes of the same bytes; bounds that do not
 * match, exceed KS_ORC_MAX_ENTRIES or the memory's size, or whose ends are
 * not mapped are refused before anything is read. */
static void t_orc_load_from_memory(void)
{
	enum { N = 5000 };
	const uint64_t tab = 0xffffffff90000000ull, orc_at = tab + 4 * N;
	static uint8_t ipt[4 * N], orc[6 * N];
	struct ks_gmem sized = flat;
	struct ks_orc a, b;
	struct ks_vmem v;
	struct ks_error err;
	uint64_t pgd = alloc_page(), pa[16];
	int i;

	for (i = 0; i < 16; i++) { /* scattered: every other page */
		pa[i] = alloc_page();
		alloc_page();
		map(pgd, 4, tab + 4096 * (uint64_t)i, pa[i], 1);
	}
	for (i = 0; i < N; i++) {
		/* entry i at KTEXT + 16 * i, but 4096 and 4095 swapped */
		int k = i == 4096 ? 4095 : i == 4095 ? 4096 : i;
		int32_t rel = (int32_t)(KTEXT + 16 * (uint64_t)k - (tab + 4 * (uint64_t)i));

		memcpy(ipt + 4 * i, &rel, 4);
		for (int j = 0; j < 6; j++)
			orc[6 * i + j] = (uint8_t)(i * 7 + j);
	}
	for (i = 0; i < 4 * N + 6 * N; i++) {
		uint64_t va = tab + (uint64_t)i;

		phys[pa[(va - tab) / 4096] + (va & 4095)] = i < 4 * N ? ipt[i] : orc[i - 4 * N];
	}
	ks_vmem_init(&v, &flat);
	ks_vmem_reset(&v, pgd, 0);
	KT_EQ_INT(ks_orc_load(&a, &v, tab, orc_at, orc_at, orc_at + 6 * N, KS_ORC_6_4, &err), 0);
	KT_EQ_INT(ks_orc_from_tables(&b, ipt, sizeof(ipt), tab, orc, sizeof(orc), KS_ORC_6_4, &err),
		  0);
	KT_EQ_U64(a.n, N);
	KT_EXPECT(a.n == b.n && !memcmp(a.ips, b.ips, N * 8) && !memcmp(a.entries, b.entries, 6 * N));
	KT_EQ_U64(a.ips[4095], KTEXT + 16 * 4095);
	ks_orc_free(&a);
	ks_orc_free(&b);
	/* refused before reading: entries that do not match the ips */
	KT_EXPECT(ks_orc_load(&a, &v, tab, orc_at, orc_at, orc_at + 6 * N - 6, KS_ORC_6_4, &err) < 0);
	KT_EXPECT(strstr(err.msg, "do not match") != NULL);
	/* past the cap */
	KT_EXPECT(ks_orc_load(&a, &v, tab, tab + 4ull * (KS_ORC_MAX_ENTRIES + 1),
			      tab + 4ull * (KS_ORC_MAX_ENTRIES + 1),
			      tab + 10ull * (KS_ORC_MAX_ENTRIES + 1), KS_ORC_6_4, &err) < 0);
	KT_EXPECT(strstr(err.msg, "(limit 4194304)") != NULL);
	/* larger than the memory */
	sized.size = 10 * N - 1;
	ks_vmem_init(&v, &sized);
	ks_vmem_reset(&v, pgd, 0);
	KT_EXPECT(ks_orc_load(&a, &v, tab, orc_at, orc_at, orc_at + 6 * N, KS_ORC_6_4, &err) < 0);
	KT_EXPECT(strstr(err.msg, "bytes of memory") != NULL);
	/* the last entry's page not mapped */
	ks_vmem_init(&v, &flat);
	ks_vmem_reset(&v, pgd, 0);
	KT_EXPECT(ks_orc_load(&a, &v, tab, orc_at, orc_at, orc_at + 6 * (N + 1000), KS_ORC_6_4,
			      &err) < 0);
	KT_EXPECT(a.ips == NULL && a.entries == NULL);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_pgwalk_levels_and_large_pages), KT_CASE(t_pti_pair_and_cache),
		KT_CASE(t_vmem_modes),
		KT_CASE(t_fp_user_and_prologue), KT_CASE(t_code_bytes_from_binary),
		KT_CASE(t_orc_decode_layouts),
		KT_CASE(t_orc_unwind_pre_6_4), KT_CASE(t_orc_unwind_6_4), KT_CASE(t_orc_bad_tables),
		KT_CASE(t_orc_load_from_memory),
		{ 0 },
	};
	return kt_main(cases);
}
