/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-qemudump.c - write a small QEMU dump-guest-memory ELF file (paging
 * off) with known call chains, for tests and as a fuzzing seed.
 *
 *	gen-qemudump -o FILE
 *
 * The file is an x86-64 ELF core: one PT_NOTE segment with a QEMU note
 * (QEMUCPUState, 0x1b8 bytes) per vCPU and a VMCOREINFO note, and one
 * PT_LOAD segment of 64 KB of guest physical memory from address 0 holding
 * 4-level page tables, code pages and stacks.  vCPU 0 stops in user mode
 * inside a frame-pointer chain; vCPU 1 stops in the kernel, whose
 * frame-pointer chain ends in an encoded pointer to pt_regs (bit 0 set) of
 * an interrupted user context, which continues on a second user stack.
 * Standard output gets each vCPU's expected chain, innermost frame first:
 * "vcpu N: 0xADDR 0xADDR ...", the same chains a frame-pointer unwinder
 * must find.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_SIZE 0x10000u
#define PTE_USER 0x7u   /* present, writable, user */
#define PTE_KERNEL 0x3u /* present, writable */
#define STATE_SIZE 0x1b8u
#define NOTE_QEMU_TYPE 0
#define LOAD_OFFSET 0x1000u

#define USER_CODE 0x400000ull
#define USER_STACK0 0x410000ull
#define USER_STACK1 0x411000ull
#define KERNEL_CODE 0xffffffff81000000ull
#define KERNEL_STACK 0xffffffff81010000ull

static uint8_t mem[MEM_SIZE];

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Guest memory at the physical address where virtual address VA lands. */
struct mapping { uint64_t va, pa; };
static const struct mapping pages[] = {
	{ USER_CODE, 0x8000 }, { USER_STACK0, 0x9000 }, { USER_STACK1, 0xd000 },
	{ KERNEL_CODE, 0xb000 }, { KERNEL_STACK, 0xc000 },
};

static uint8_t *at(uint64_t va)
{
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (va >= pages[i].va && va - pages[i].va < 0x1000)
			return mem + pages[i].pa + (va - pages[i].va);
	fprintf(stderr, "gen-qemudump: 0x%llx is not mapped\n", (unsigned long long)va);
	exit(1);
}

static void page_tables(void)
{
	/* PML4 at 0x1000; user: PDPT 0x2000, PD 0x3000, PT 0x4000;
	 * kernel: PDPT 0x6000, PD 0x7000, PT 0xa000. */
	put64(mem + 0x1000 + 0 * 8, 0x2000 | PTE_USER);
	put64(mem + 0x1000 + 511 * 8, 0x6000 | PTE_KERNEL);
	put64(mem + 0x2000 + 0 * 8, 0x3000 | PTE_USER);
	put64(mem + 0x3000 + 2 * 8, 0x4000 | PTE_USER);
	put64(mem + 0x6000 + 510 * 8, 0x7000 | PTE_KERNEL);
	put64(mem + 0x7000 + 8 * 8, 0xa000 | PTE_KERNEL);
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		uint64_t pt = pages[i].va >= KERNEL_CODE ? 0xa000 : 0x4000;
		uint32_t flags = pages[i].va >= KERNEL_CODE ? PTE_KERNEL : PTE_USER;
		put64(mem + pt + ((pages[i].va >> 12) & 511) * 8, pages[i].pa | flags);
	}
	memset(mem + 0x8000, 0x90, 0x1000); /* code: nops (no prologue at any stop) */
	memset(mem + 0xb000, 0x90, 0x1000);
}

/* A frame at BP: saved bp NEXT, return address RET. */
static void frame(uint64_t bp, uint64_t next, uint64_t ret)
{
	put64(at(bp), next);
	put64(at(bp + 8), ret);
}

struct cpu { uint64_t rip, rsp, rbp; uint16_t cs, ss; };

static void stacks(struct cpu *c)
{
	uint64_t regs = KERNEL_STACK + 0xf00;

	/* vCPU 0: user 0x400100 <- 0x400200 <- 0x400300 <- 0x400400 */
	c[0] = (struct cpu){ USER_CODE + 0x100, USER_STACK0 + 0xf00, USER_STACK0 + 0xf10, 0x33, 0x2b };
	frame(USER_STACK0 + 0xf10, USER_STACK0 + 0xf30, USER_CODE + 0x200);
	frame(USER_STACK0 + 0xf30, USER_STACK0 + 0xf50, USER_CODE + 0x300);
	frame(USER_STACK0 + 0xf50, 0, USER_CODE + 0x400);
	/* vCPU 1: kernel 0x..100 <- 0x..200 <- 0x..300, pt_regs -> user 0x400500 <- 0x400600 */
	c[1] = (struct cpu){ KERNEL_CODE + 0x100, KERNEL_STACK + 0xe00, KERNEL_STACK + 0xe10, 0x10,
			     0x18 };
	frame(KERNEL_STACK + 0xe10, KERNEL_STACK + 0xe30, KERNEL_CODE + 0x200);
	frame(KERNEL_STACK + 0xe30, regs | 1, KERNEL_CODE + 0x300);
	put64(at(regs + 32), USER_STACK1 + 0xf10);  /* pt_regs->bp */
	put64(at(regs + 128), USER_CODE + 0x500);   /* ip */
	put64(at(regs + 136), 0x33);                /* cs */
	put64(at(regs + 144), 0x246);               /* flags */
	put64(at(regs + 152), USER_STACK1 + 0xf00); /* sp */
	put64(at(regs + 160), 0x2b);                /* ss */
	frame(USER_STACK1 + 0xf10, 0, USER_CODE + 0x600);
	printf("vcpu 0: 0x%llx 0x%llx 0x%llx 0x%llx\n", USER_CODE + 0x100, USER_CODE + 0x200,
	       USER_CODE + 0x300, USER_CODE + 0x400);
	printf("vcpu 1: 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx\n", KERNEL_CODE + 0x100,
	       KERNEL_CODE + 0x200, KERNEL_CODE + 0x300, USER_CODE + 0x500, USER_CODE + 0x600);
}

/* QEMUCPUState: version, size, 16 GPRs, rip, rflags, 6 segments (cs ds es
 * fs gs ss), ldt tr gdt idt (24 bytes each), cr[5], kernel_gs_base. */
static void cpu_state(uint8_t *p, const struct cpu *c)
{
	static const unsigned seg_order[6] = { 0, 1, 1, 1, 1, 5 }; /* cs, data x4, ss */

	memset(p, 0, STATE_SIZE);
	put32(p, 1);
	put32(p + 4, STATE_SIZE);
	put64(p + 8 + 6 * 8, c->rsp);  /* rax rbx rcx rdx rsi rdi rsp rbp */
	put64(p + 8 + 7 * 8, c->rbp);
	put64(p + 136, c->rip);
	put64(p + 144, 0x246);
	for (unsigned i = 0; i < 6; i++)
		put32(p + 152 + i * 24, seg_order[i] == 0 ? c->cs : c->ss);
	put64(p + 392, 0x80050033); /* cr0: PG PE ... */
	put64(p + 416, 0x1000);     /* cr3 */
	put64(p + 424, 0x20);       /* cr4: PAE */
}

static size_t note(uint8_t *p, const char *name, uint32_t type, const void *desc, uint32_t len)
{
	uint32_t nlen = (uint32_t)strlen(name) + 1, npad = (nlen + 3) & ~3u, dpad = (len + 3) & ~3u;

	put32(p, nlen);
	put32(p + 4, len);
	put32(p + 8, type);
	memcpy(p + 12, name, nlen);
	memcpy(p + 12 + npad, desc, len);
	return 12 + npad + dpad;
}

static void ehdr(uint8_t *p)
{
	static const uint8_t ident[16] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };

	memcpy(p, ident, sizeof(ident));
	put16(p + 16, 4);  /* ET_CORE */
	put16(p + 18, 62); /* EM_X86_64 */
	put32(p + 20, 1);
	put64(p + 32, 64); /* e_phoff */
	put16(p + 52, 64);
	put16(p + 54, 56);
	put16(p + 56, 2);  /* e_phnum */
}

static void phdr(uint8_t *p, uint32_t type, uint64_t off, uint64_t paddr, uint64_t size)
{
	put32(p, type);
	put32(p + 4, type == 1 ? 7 : 0);
	put64(p + 8, off);
	put64(p + 16, 0);
	put64(p + 24, paddr);
	put64(p + 32, size);
	put64(p + 40, size);
	put64(p + 48, type == 1 ? 0x1000 : 4);
}

int main(int argc, char **argv)
{
	static const char vmcoreinfo[] = "OSRELEASE=6.1.0-gen\nPAGESIZE=4096\n"
					 "KERNELOFFSET=0\nSYMBOL(_stext)=ffffffff81000000\n";
	static uint8_t head[LOAD_OFFSET];
	uint8_t state[STATE_SIZE];
	struct cpu cpus[2];
	const char *out = NULL;
	size_t notes = 0, base = 64 + 2 * 56;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "o:h")) != -1) {
		if (c != 'o') {
			fprintf(stderr, "usage: gen-qemudump -o FILE\n");
			return c == 'h' ? 0 : 2;
		}
		out = optarg;
	}
	if (!out) {
		fprintf(stderr, "usage: gen-qemudump -o FILE\n");
		return 2;
	}
	page_tables();
	stacks(cpus);
	for (int i = 0; i < 2; i++) {
		cpu_state(state, &cpus[i]);
		notes += note(head + base + notes, "QEMU", NOTE_QEMU_TYPE, state, STATE_SIZE);
	}
	notes += note(head + base + notes, "VMCOREINFO", 0, vmcoreinfo, sizeof(vmcoreinfo) - 1);
	ehdr(head);
	phdr(head + 64, 4, base, 0, notes);             /* PT_NOTE */
	phdr(head + 64 + 56, 1, LOAD_OFFSET, 0, MEM_SIZE); /* PT_LOAD */
	f = fopen(out, "wb");
	if (!f || fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
	    fwrite(mem, 1, sizeof(mem), f) != sizeof(mem) || fclose(f) != 0) {
		perror(out);
		return 1;
	}
	return 0;
}
