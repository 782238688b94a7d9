/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_impl.h - what the files of the print plans share (private to
 * src/event/print_plan*.c; the interface is print_plan.h).
 *
 * A plan is a list of steps, each one piece of the text: a literal, a
 * number, a string, a symbol.  The files, one job each:
 *	print_plan.c          a plan's life: compile (which kind of plan),
 *	                      learn from the library's text, free
 *	print_plan_compile.c  the print format parsed into steps
 *	print_plan_run.c      the steps run on a record (the hot path of
 *	                      dump and of the ftrace text reader)
 *	print_plan_kvm.c      the kvm plugin's kvm_entry / kvm_exit text
 *	print_plan_plugins.c  the other plugins' handlers (sched, hrtimer,
 *	                      tlb, kmem)
 *	print_plan_scan.c     printed text read back into a record
 */
#ifndef KVMSCOPE_PRINT_PLAN_IMPL_H
#define KVMSCOPE_PRINT_PLAN_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <event-parse.h>

#include "util/byteorder.h"
#include "print_plan.h"

enum step_kind {
	ST_LIT, ST_INT, ST_STR_DYN, ST_STR_ARRAY, ST_SYMBOL, ST_FLAGS,
	ST_PRINTF,      /* a number through snprintf (flags '#' or '.') */
	ST_PTR,         /* %p: "(nil)" or 0x... */
	ST_FUNC,        /* %ps/%pS: the kernel function, or 0x... */
	ST_STR_COND,    /* %s of COND ? A : B */
	ST_PRINTK,      /* %s of a pointer: the printk string, learnt */
};

/* A number as eval_num_arg() computes it. */
enum expr_kind { EX_CONST, EX_FIELD, EX_INDEX, EX_MASK, EX_OP, EX_COND };

struct expr {
	enum expr_kind kind;
	char op[3];
	uint64_t val;      /* EX_CONST: the value; EX_MASK: the mask */
	const struct tep_format_field *field;
	struct expr *a, *b, *c;
};

struct sym {
	long long value;
	const char *str;
};

struct step {
	enum step_kind kind;
	/* literal */
	char *lit;
	size_t lit_len;
	/* field */
	struct tep_format_field *field;
	int bits;          /* 8, 16, 32, 64 */
	int is_signed, base, upper, width, zero, left;
	/* symbols / flags */
	struct sym *syms;
	int nr_syms;
	const char *delim;
	/* the number (a plain field also in FIELD) */
	struct expr *ex;
	char *fmt;         /* ST_PRINTF: the conversion as written */
	bool offset;       /* ST_FUNC: "+0x..." after the name (%pS, %pF) */
	bool named;        /* symbols: a value given by name (not read back) */
	struct step *yes, *no; /* ST_STR_COND */
};

/* Plugin handlers whose text the plan writes (print_plan_plugins.c). */
enum handler_kind { H_NONE, H_SCHED_SWITCH, H_SCHED_WAKEUP, H_HRTIMER_START,
		    H_HRTIMER_EXPIRE, H_TLB_FLUSH, H_KMEM };

#define PRINTK_CACHE 32
struct printk_text {
	uint64_t addr;
	char *text;
	size_t len;
};

/* kvm plugin handlers (kvm_entry, kvm_exit), learnt from the handler's own
 * text: see print_plan_kvm.c. */
#define KVM_REASONS 128
struct kvm_reason {
	uint64_t isa, val;
	char *text;        /* what follows "reason " */
};

struct kvm_plan {
	bool exit;         /* kvm_exit, else kvm_entry */
	int state;         /* -1: the handler says otherwise; 0: not checked; 1: checked */
	struct tep_format_field *vcpu, *rip, *reason, *isa, *info1, *info2;
	struct kvm_reason reasons[KVM_REASONS];
	int nr_reasons;
};

struct ks_plan {
	struct tep_handle *tep;
	struct step *steps;
	int nr;
	struct kvm_plan *kvm;
	bool extended;     /* steps ks_plan_scan cannot read back */
	/* plugin handlers: the fields they read; state as in struct kvm_plan */
	enum handler_kind handler;
	int state;
	struct tep_format_field *hf[8];
	/* the one ST_PRINTK step, and the strings learnt for it */
	int printk_step;
	struct printk_text printk[PRINTK_CACHE];
	int nr_printk;
	bool swap;         /* the file's byte order is not this machine's */
};

/* A size rd() reads: an integer of 1, 2, 4 or 8 bytes. */
static inline bool int_size(int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

/* tep_read_number(), without the call. */
static inline uint64_t rd(const struct ks_plan *p, const uint8_t *ptr, int size)
{
	return ks_load_n(ptr, size, p->swap);
}

/* The field's bytes lie inside the record. */
static inline bool inside(const struct tep_format_field *f, int size)
{
	return f->offset + f->size <= size;
}

static inline int pad(struct ks_tbuf *b, char c, int n)
{
	if (n <= 0)
		return 0;
	if (b->cap - b->len < (size_t)n + 1 && ks_tbuf_reserve(b, (size_t)n + 1) < 0)
		return -1;
	memset(b->p + b->len, c, (size_t)n);
	b->len += (size_t)n;
	return 0;
}

static inline int put_str(struct ks_tbuf *b, const struct step *s, const char *str, size_t n)
{
	if (!s->left && pad(b, ' ', s->width - (int)n) < 0)
		return -1;
	if (ks_tbuf_put(b, str, n) < 0)
		return -1;
	return s->left ? pad(b, ' ', s->width - (int)n) : 0;
}

static inline int put_hex_ll(struct ks_tbuf *b, uint64_t v)
{
	return ks_tbuf_put(b, "0x", 2) < 0 ? -1 : ks_tbuf_int(b, v, 0, 16, 0, 0, 0, 0);
}

/* print_plan.c: a plan of no step yet, for an event of TEP; an expression
 * freed with its operands. */
struct ks_plan *ks_plan_new(struct tep_handle *tep);
void ks_plan_expr_free(struct expr *e);

/* print_plan_compile.c: the print format of EV into P's steps, or the
 * fields of an event whose format failed to parse: 0, or -1 if the plan
 * cannot take it. */
int ks_plan_compile_steps(struct ks_plan *p, struct tep_event *ev);
int ks_plan_compile_failed(struct ks_plan *p, struct tep_event *ev);

/* print_plan_run.c: runs step S: 0; -1: the library prints the event; 1:
 * the library prints it and ks_plan_learn() learns from it. */
int ks_plan_run_step(const struct ks_plan *p, const struct step *s, const uint8_t *data, int size,
		     struct ks_tbuf *b);

/* print_plan_kvm.c: the plan of the kvm plugin's EV (NULL: not one),
 * run, and taught by the handler's text. */
struct ks_plan *ks_plan_compile_kvm(struct tep_event *ev);
int ks_plan_run_kvm(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b);
void ks_plan_learn_kvm(struct ks_plan *p, const uint8_t *data, int size, const char *text,
		       size_t len);

/* print_plan_plugins.c: the same for the other plugins' handlers. */
struct ks_plan *ks_plan_compile_handler(struct tep_event *ev);
int ks_plan_run_handler(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b);
void ks_plan_learn_handler(struct ks_plan *p, const uint8_t *data, int size, const char *text,
			   size_t len);

#endif
