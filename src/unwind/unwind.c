/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind.c - one vCPU's call chain: guest kernel (ORC or frame pointers)
 * through interrupt/exception/syscall frames (pt_regs) into user space
 * (frame pointers).
 *
 * Conservative by design: every value read from the guest is checked
 * (alignment, direction of the stack, kernel/user range) and the walk stops
 * at the first doubt, recording why in ks_stack.stop.  The innermost frame
 * of a context with exact registers gets the prologue case: a stop on
 * "push %rbp" (optionally after endbr64) or on "ret" has its return
 * address at [rsp], a stop on "mov %rsp,%rbp" at [rsp+8].
 */
#include <string.h>

#include "kvmscope/unwind.h"

/* struct pt_regs (x86-64) offsets. */
#define PTREGS_R15 0
#define PTREGS_R13 16
#define PTREGS_BP 32
#define PTREGS_R10 56
#define PTREGS_DX 96
#define PTREGS_DI 112
#define PTREGS_IP 128
#define PTREGS_CS 136
#define PTREGS_SP 152
#define PTREGS_SIZE 168
#define MAX_FRAME_SPAN (16ull << 20)
#define USER_MIN 0x1000ull
#define USER_MAX 0x00007fffffffffffull

struct ustate {
	uint64_t ip, sp, bp;
	uint64_t regs;          /* guest address of pt_regs, 0 = none */
	bool full_regs, signal, exact; /* exact: registers known (first frame) */
	const struct ks_x86_regs *cpu;
};

static const char *const stop_names[KS_STOP_COUNT_] = {
	"end", "bad-read", "loop", "bad-address", "no-orc", "kernel-end", "no-kernel-unwinder",
	"depth",
};

const char *ks_unwind_stop_name(enum ks_unwind_stop s)
{
	return (unsigned)s < KS_STOP_COUNT_ ? stop_names[s] : "?";
}

static bool push(struct ks_stack *s, uint64_t ip)
{
	if (s->n >= KS_MAX_FRAMES) {
		s->stop = KS_STOP_DEPTH;
		return false;
	}
	s->f[s->n].ip = ip;
	s->f[s->n].kernel = ks_is_kernel_addr(ip);
	s->n++;
	return true;
}

static bool user_addr(uint64_t a) { return a >= USER_MIN && a <= USER_MAX; }

/* Where the return address is when stopped at IP (prologue / epilogue). */
static int prologue_ret_slot(struct ks_vmem *v, uint64_t ip, uint64_t sp, uint64_t *slot)
{
	uint8_t c[5];

	if (ks_vmem_read_code(v, ip, c, sizeof(c)) < 0)
		return -1;
	if (c[0] == 0x55 || c[0] == 0xc3 ||
	    (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa && c[4] == 0x55)) {
		*slot = sp;
		return 0;
	}
	if (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5) {
		*slot = sp + 8;
		return 0;
	}
	return -1;
}

/* Frame-pointer chain from BP (both rings); KERNEL selects the range.
 * Returns 1 when a kernel bp with bit 0 set (an encoded pt_regs pointer,
 * ENCODE_FRAME_POINTER) was met: st->regs is then set. */
static int fp_chain(struct ks_vmem *v, struct ks_stack *s, struct ustate *st, bool kernel)
{
	uint64_t bp = st->bp, floor = st->sp;

	if (st->exact) {
		uint64_t slot, ret;
		if (prologue_ret_slot(v, st->ip, st->sp, &slot) == 0) {
			if (ks_vmem_read_u64(v, slot, &ret) < 0) {
				s->stop = KS_STOP_BAD_READ;
				return 0;
			}
			if (kernel ? !ks_is_kernel_addr(ret) : !user_addr(ret)) {
				s->stop = KS_STOP_BAD_ADDR;
				return 0;
			}
			if (!push(s, ret))
				return 0;
		}
	}
	for (;;) {
		uint64_t next, ret;
		if (bp == 0) {
			s->stop = KS_STOP_END;
			return 0;
		}
		if (kernel && (bp & 7) == 1 && ks_is_kernel_addr(bp)) {
			st->regs = bp & ~1ull;
			return 1;
		}
		if ((bp & 7) || bp < floor || bp - floor > MAX_FRAME_SPAN ||
		    (kernel ? !ks_is_kernel_addr(bp) : !user_addr(bp))) {
			s->stop = KS_STOP_BAD_ADDR;
			return 0;
		}
		if (ks_vmem_read_u64(v, bp, &next) < 0 || ks_vmem_read_u64(v, bp + 8, &ret) < 0) {
			s->stop = KS_STOP_BAD_READ;
			return 0;
		}
		if (ret == 0) {
			s->stop = KS_STOP_END;
			return 0;
		}
		if (kernel ? !ks_is_kernel_addr(ret) : !user_addr(ret)) {
			s->stop = KS_STOP_BAD_ADDR;
			return 0;
		}
		if (!push(s, ret))
			return 0;
		if (next != 0 && next <= bp) {
			s->stop = KS_STOP_LOOP;
			return 0;
		}
		floor = bp + 16;
		bp = next;
	}
}

static void user_unwind(struct ks_vmem *v, struct ks_stack *s, struct ustate *st)
{
	(void)fp_chain(v, s, st, false);
}

static int get_reg(struct ks_vmem *v, const struct ustate *st, unsigned off, uint64_t *val)
{
	if (st->regs == 0) {
		if (!st->exact)
			return -1;
		switch (off) {
		case PTREGS_BP: *val = st->cpu->rbp; return 0;
		case PTREGS_R10: *val = st->cpu->r10; return 0;
		case PTREGS_R13: *val = st->cpu->r13; return 0;
		case PTREGS_DI: *val = st->cpu->rdi; return 0;
		case PTREGS_DX: *val = st->cpu->rdx; return 0;
		default: return -1;
		}
	}
	if (!st->full_regs && off < PTREGS_IP)
		return -1;
	return ks_vmem_read_u64(v, st->regs + off, val);
}

static int orc_cfa(struct ks_vmem *v, const struct ustate *st, const struct ks_orc_entry *e,
		   uint64_t *cfa)
{
	uint64_t sp;

	switch (e->sp_reg) {
	case KS_ORC_REG_SP: *cfa = st->sp + (int64_t)e->sp_offset; return 0;
	case KS_ORC_REG_BP: *cfa = st->bp + (int64_t)e->sp_offset; return 0;
	case KS_ORC_REG_SP_INDIRECT:
		if (ks_vmem_read_u64(v, st->sp, &sp) < 0)
			return -1;
		*cfa = sp + (int64_t)e->sp_offset;
		return 0;
	case KS_ORC_REG_BP_INDIRECT:
		return ks_vmem_read_u64(v, st->bp + (int64_t)e->sp_offset, cfa);
	case KS_ORC_REG_R10: return get_reg(v, st, PTREGS_R10, cfa);
	case KS_ORC_REG_R13: return get_reg(v, st, PTREGS_R13, cfa);
	case KS_ORC_REG_DI: return get_reg(v, st, PTREGS_DI, cfa);
	case KS_ORC_REG_DX: return get_reg(v, st, PTREGS_DX, cfa);
	default: return -1;
	}
}

/* Read ip/sp (and cs) of a pt_regs at REGS. */
static int read_iret(struct ks_vmem *v, uint64_t regs, uint64_t *ip, uint64_t *sp, uint64_t *cs)
{
	if (ks_vmem_read_u64(v, regs + PTREGS_IP, ip) < 0 ||
	    ks_vmem_read_u64(v, regs + PTREGS_CS, cs) < 0 ||
	    ks_vmem_read_u64(v, regs + PTREGS_SP, sp) < 0)
		return -1;
	return 0;
}

enum step { STEP_KERNEL, STEP_USER, STEP_STOP };

/* One ORC step: the caller's ip/sp/bp, or a switch to user mode. */
/* The caller's ip, sp and cs from the frame E describes at CFA: a call
 * (return address below the CFA) or saved registers (an interrupt or
 * exception frame).  -1 with s->stop set. */
static int orc_frame(const struct ks_orc_entry *e, struct ks_vmem *v, struct ks_stack *s,
		     struct ustate *st, uint64_t cfa, uint64_t *ip, uint64_t *sp, uint64_t *cs)
{
	uint64_t regs;

	switch (e->type) {
	case KS_ORC_CALL:
		if (cfa <= st->sp || cfa - st->sp > MAX_FRAME_SPAN) {
			s->stop = KS_STOP_LOOP;
			return -1;
		}
		if (ks_vmem_read_u64(v, cfa - 8, ip) < 0) {
			s->stop = KS_STOP_BAD_READ;
			return -1;
		}
		st->regs = 0;
		st->full_regs = false;
		st->signal = e->signal;
		*sp = cfa;
		*cs = 0x10;
		return 0;
	case KS_ORC_REGS:
	case KS_ORC_REGS_PARTIAL:
		regs = e->type == KS_ORC_REGS ? cfa : cfa - PTREGS_IP;
		if (read_iret(v, regs, ip, sp, cs) < 0) {
			s->stop = KS_STOP_BAD_READ;
			return -1;
		}
		st->regs = regs;
		st->full_regs = e->type == KS_ORC_REGS;
		st->signal = true;
		s->via_regs = true;
		return 0;
	default:
		s->stop = KS_STOP_NO_ORC;
		return -1;
	}
}

/* The caller's frame pointer, where E says it was saved.  -1 with
 * s->stop set. */
static int orc_bp(const struct ks_orc_entry *e, struct ks_vmem *v, struct ks_stack *s,
		  struct ustate *st, uint64_t cfa)
{
	uint64_t bp;

	switch (e->bp_reg) {
	case KS_ORC_REG_UNDEFINED:
		if (st->regs && get_reg(v, st, PTREGS_BP, &bp) == 0)
			st->bp = bp;
		return 0;
	case KS_ORC_REG_PREV_SP:
		if (ks_vmem_read_u64(v, cfa + (int64_t)e->bp_offset, &st->bp) < 0)
			break;
		return 0;
	case KS_ORC_REG_BP:
		if (ks_vmem_read_u64(v, st->bp + (int64_t)e->bp_offset, &st->bp) < 0)
			break;
		return 0;
	default:
		return 0;
	}
	s->stop = KS_STOP_BAD_READ;
	return -1;
}

static enum step orc_step(const struct ks_orc *orc, struct ks_vmem *v, struct ks_stack *s,
			  struct ustate *st)
{
	struct ks_orc_entry e;
	uint64_t cfa, ip, sp, cs = 0;

	if (!ks_orc_find(orc, st->signal ? st->ip : st->ip - 1, &e) || e.type == KS_ORC_UNDEFINED) {
		s->stop = KS_STOP_NO_ORC;
		return STEP_STOP;
	}
	if (e.type == KS_ORC_END) {
		s->stop = KS_STOP_KERNEL_ONLY;
		return STEP_STOP;
	}
	if (orc_cfa(v, st, &e, &cfa) < 0) {
		s->stop = KS_STOP_BAD_READ;
		return STEP_STOP;
	}
	if (orc_frame(&e, v, s, st, cfa, &ip, &sp, &cs) < 0)
		return STEP_STOP;
	st->exact = false;
	if (orc_bp(&e, v, s, st, cfa) < 0)
		return STEP_STOP;
	st->ip = ip;
	st->sp = sp;
	if (st->regs && (cs & 3) == 3) {
		if (!user_addr(ip)) {
			s->stop = KS_STOP_BAD_ADDR;
			return STEP_STOP;
		}
		st->exact = st->full_regs;
		return STEP_USER;
	}
	if (!ks_is_kernel_addr(ip)) {
		s->stop = KS_STOP_BAD_ADDR;
		return STEP_STOP;
	}
	return STEP_KERNEL;
}

/* Kernel frames by ORC; true when it ended in user mode (state updated). */
static bool kernel_orc(const struct ks_unwinder *u, struct ks_vmem *v, struct ks_stack *s,
		       struct ustate *st)
{
	for (;;) {
		enum step r = orc_step(u->orc, v, s, st);
		if (r == STEP_STOP)
			return false;
		if (!push(s, st->ip))
			return false;
		if (r == STEP_USER)
			return true;
	}
}

/* Kernel frames by frame pointers; an encoded bp (bit 0) marks pt_regs. */
static bool kernel_fp(struct ks_vmem *v, struct ks_stack *s, struct ustate *st)
{
	uint64_t ip, sp, cs;

	if (fp_chain(v, s, st, true) != 1)
		return false;
	if (read_iret(v, st->regs, &ip, &sp, &cs) < 0) {
		s->stop = KS_STOP_BAD_READ;
		return false;
	}
	st->full_regs = true;
	s->via_regs = true;
	if ((cs & 3) != 3 || !user_addr(ip)) {
		s->stop = KS_STOP_END; /* interrupted kernel code: not followed further */
		return false;
	}
	st->ip = ip;
	st->sp = sp;
	if (get_reg(v, st, PTREGS_BP, &st->bp) < 0)
		st->bp = 0;
	st->exact = true;
	return push(s, ip);
}

int ks_unwind(const struct ks_unwinder *u, struct ks_vmem *v, const struct ks_x86_regs *r,
	      struct ks_stack *s)
{
	struct ustate st = { .ip = r->rip, .sp = r->rsp, .bp = r->rbp, .exact = true,
			     .signal = true, .cpu = r };
	bool in_user;

	memset(s, 0, sizeof(*s));
	s->stop = KS_STOP_END;
	if (!push(s, r->rip))
		return 0;
	in_user = (r->cs & 3) == 3 || !ks_is_kernel_addr(r->rip);
	if (!in_user) {
		if (u->kernel == KS_KUNWIND_ORC && u->orc)
			in_user = kernel_orc(u, v, s, &st);
		else if (u->kernel == KS_KUNWIND_FP)
			in_user = kernel_fp(v, s, &st);
		else
			s->stop = KS_STOP_NO_KUNWIND;
		if (!in_user)
			return 0;
	}
	if (u->user)
		user_unwind(v, s, &st);
	return 0;
}
