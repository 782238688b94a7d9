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
#include "kvmscope/orc.h"
#include "kvmscope/vmem.h"

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
int ks_unwind(const struct ks_unwinder *u, struct ks_vmem *v, const struct ks_x86_regs *r,
	      struct ks_stack *s);

#endif
