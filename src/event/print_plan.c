/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan.c - print formats compiled into steps (see print_plan.h).
 *
 * The compiler walks the format as libtraceevent 1.7's parse_args() does
 * (literal text with \n \t \r \\ escapes and %%, then one conversion per
 * argument) and accepts only conversions whose output it reproduces:
 *	%[-][0][W]{,h,hh,l,ll,L,z,Z}{d,i,u,x,X} of a number: a field, a
 *	    constant, a cast, an array element (REC->a[N]), arithmetic,
 *	    comparisons and ?: over them, as eval_num_arg() computes them
 *	    (and, with '#' or a precision, or %o: through snprintf)
 *	%p of a number ("(nil)" or 0x...), %ps %pS %pf %pF (kernel functions)
 *	%[-][W]s of a quoted string, __get_str(x), a char array field,
 *	    __print_symbolic(N, ...) and __print_flags(N, ...) of a number,
 *	    COND ? A : B of those, and one pointer field a format (a printk
 *	    string, learnt from the library's text: ks_plan_learn)
 * Anything else ('*', ' ', '+', %c, %pM and the like, helper functions,
 * symbols by name in arguments, bprint events) leaves the event to
 * libtraceevent.  The integer rules follow the library: the value is read
 * zero-extended, cut to the conversion's length (hh: 8 bits, h: 16, none:
 * 32, l/ll/L/z: 64) and printed signed for d/i, unsigned otherwise.  The
 * handlers of a few plugins (kvm, sched, hrtimer, tlb, kmem) and events
 * whose format failed to parse ("[FAILED TO PARSE]" and the fields) are
 * planned too: see compile_kvm(), compile_handler(), compile_failed().
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "atom.h"
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

/* Plugin handlers whose text the plan writes (see compile_handler()). */
enum handler_kind { H_NONE, H_SCHED_SWITCH, H_SCHED_WAKEUP, H_HRTIMER_START,
		    H_HRTIMER_EXPIRE, H_TLB_FLUSH, H_KMEM };

#define PRINTK_CACHE 32
struct printk_text {
	uint64_t addr;
	char *text;
	size_t len;
};

/* kvm plugin handlers (kvm_entry, kvm_exit), learnt from the handler's own
 * text: see compile_kvm(). */
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

static struct ks_plan *new_plan(struct tep_handle *tep)
{
	struct ks_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tep = tep;
	p->printk_step = -1;
	p->swap = tep_is_file_bigendian(tep) != tep_is_local_bigendian(tep);
	return p;
}

int ks_tbuf_reserve(struct ks_tbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	while (cap - b->len < more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int pad(struct ks_tbuf *b, char c, int n)
{
	if (n <= 0)
		return 0;
	if (b->cap - b->len < (size_t)n + 1 && ks_tbuf_reserve(b, (size_t)n + 1) < 0)
		return -1;
	memset(b->p + b->len, c, (size_t)n);
	b->len += (size_t)n;
	return 0;
}

int ks_tbuf_int(struct ks_tbuf *b, uint64_t v, int is_signed, int base, int upper,
		int width, int zero, int left)
{
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	const char *dig = upper ? up : lo;
	char tmp[24], *o;
	int n = 0, neg = 0, len, total;

	if (is_signed && (int64_t)v < 0) {
		neg = 1;
		v = -v;
	}
	if (base == 16) {
		do {
			tmp[sizeof(tmp) - 1 - n++] = dig[v & 15];
			v >>= 4;
		} while (v);
	} else {
		/* two digits at a time; constant divisors: multiplications */
		static const char d2[] = "00010203040506070809101112131415161718192021222324"
					 "25262728293031323334353637383940414243444546474849"
					 "50515253545556575859606162636465666768697071727374"
					 "75767778798081828384858687888990919293949596979899";

		while (v >= 100) {
			unsigned r = (unsigned)(v % 100);

			v /= 100;
			tmp[sizeof(tmp) - 1 - n++] = d2[2 * r + 1];
			tmp[sizeof(tmp) - 1 - n++] = d2[2 * r];
		}
		if (v >= 10) {
			tmp[sizeof(tmp) - 1 - n++] = d2[2 * v + 1];
			tmp[sizeof(tmp) - 1 - n++] = d2[2 * v];
		} else {
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v);
		}
	}
	/* one reservation, then the text in place */
	len = n + neg;
	total = width > len ? width : len;
	if (b->cap - b->len < (size_t)total + 1 && ks_tbuf_reserve(b, (size_t)total + 1) < 0)
		return -1;
	o = b->p + b->len;
	if (left) {
		if (neg)
			*o++ = '-';
		memcpy(o, tmp + sizeof(tmp) - n, (size_t)n);
		if (total > len)
			memset(o + n, ' ', (size_t)(total - len));
	} else {
		if (!zero && total > len) {
			memset(o, ' ', (size_t)(total - len));
			o += total - len;
		}
		if (neg)
			*o++ = '-';
		if (zero && total > len) {
			memset(o, '0', (size_t)(total - len));
			o += total - len;
		}
		memcpy(o, tmp + sizeof(tmp) - n, (size_t)n);
	}
	b->len += (size_t)total;
	return 0;
}


static void free_expr(struct expr *e)
{
	if (!e)
		return;
	free_expr(e->a);
	free_expr(e->b);
	free_expr(e->c);
	free(e);
}

static void free_step(struct step *s)
{
	if (!s)
		return;
	free(s->lit);
	free(s->syms);
	free(s->fmt);
	free_expr(s->ex);
	free_step(s->yes);
	free(s->yes);
	free_step(s->no);
	free(s->no);
}

void ks_plan_free(struct ks_plan *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		free_step(&p->steps[i]);
	if (p->kvm)
		for (i = 0; i < p->kvm->nr_reasons; i++)
			free(p->kvm->reasons[i].text);
	for (i = 0; i < p->nr_printk; i++)
		free(p->printk[i].text);
	free(p->kvm);
	free(p->steps);
	free(p);
}

static struct step *add_step(struct ks_plan *p, enum step_kind kind)
{
	struct step *s = realloc(p->steps, (size_t)(p->nr + 1) * sizeof(*s));

	if (!s)
		return NULL;
	p->steps = s;
	s = &p->steps[p->nr++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

/* Literal text up to the next conversion, as parse_arg_string() builds it.
 * Returns the position after it, or NULL when the plan cannot take it. */
static const char *compile_literal(struct ks_plan *p, const char *f)
{
	struct step *s;
	size_t n = 0;
	char *out = malloc(strlen(f) + 1);

	if (!out)
		return NULL;
	for (; *f; f++) {
		if (*f == '\\') {
			f++;
			switch (*f) {
			case 'n': out[n++] = '\n'; break;
			case 't': out[n++] = '\t'; break;
			case 'r': out[n++] = '\r'; break;
			case '\0': free(out); return NULL; /* the library reads past the end */
			default: out[n++] = *f; break;
			}
		} else if (*f == '%') {
			if (f[1] != '%')
				break;
			out[n++] = '%';
			f++;
		} else {
			out[n++] = *f;
		}
	}
	if (!(s = add_step(p, ST_LIT))) {
		free(out);
		return NULL;
	}
	s->lit = out;
	s->lit_len = n;
	return f;
}

/* A plain field argument (REC->x) of EV, else NULL. */
static struct tep_format_field *plain_field(struct tep_event *ev, struct tep_print_arg *arg)
{
	struct tep_format_field *f;

	if (!arg || arg->type != TEP_PRINT_FIELD || !arg->field.name)
		return NULL;
	f = arg->field.field ? arg->field.field : tep_find_any_field(ev, arg->field.name);
	if (!f || f->size <= 0 || f->offset < 0)
		return NULL;
	return f;
}

/* "value" of a __print_symbolic/__print_flags entry as eval_flag() reads it:
 * a number, one of the few names the library knows, else -1. */
static long long flag_value(const char *v)
{
	static const struct {
		const char *name;
		long long value;
	} names[] = {
		{ "HI_SOFTIRQ", 0 }, { "TIMER_SOFTIRQ", 1 }, { "NET_TX_SOFTIRQ", 2 },
		{ "NET_RX_SOFTIRQ", 3 }, { "BLOCK_SOFTIRQ", 4 }, { "IRQ_POLL_SOFTIRQ", 5 },
		{ "TASKLET_SOFTIRQ", 6 }, { "SCHED_SOFTIRQ", 7 }, { "HRTIMER_SOFTIRQ", 8 },
		{ "RCU_SOFTIRQ", 9 }, { "HRTIMER_NORESTART", 0 }, { "HRTIMER_RESTART", 1 },
	};

	if (isdigit((unsigned char)v[0]))
		return (long long)ks_atom_value(v);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, v))
			return names[i].value;
	return -1;
}

static int sym_table(struct step *s, struct tep_print_flag_sym *list)
{
	struct tep_print_flag_sym *f;
	int n = 0;

	for (f = list; f; f = f->next)
		n++;
	s->syms = calloc((size_t)(n ? n : 1), sizeof(*s->syms));
	if (!s->syms)
		return -1;
	for (f = list; f; f = f->next) {
		if (!f->value || !f->str)
			return -1;
		if (!isdigit((unsigned char)f->value[0]))
			s->named = true;
		s->syms[s->nr_syms].value = flag_value(f->value);
		s->syms[s->nr_syms++].str = f->str;
	}
	return 0;
}

/* A field read as a number: 1, 2, 4 or 8 bytes. */
static struct tep_format_field *int_field(struct tep_event *ev, struct tep_print_arg *arg)
{
	struct tep_format_field *f = plain_field(ev, arg);

	return f && int_size(f->size) ? f : NULL;
}

/* What eval_type_str() keeps of a value cast to TYPE: a mask. */
static uint64_t cast_mask(const char *type)
{
	size_t len = strlen(type);

	if (len < 2 || type[len - 1] == '*' || !strncmp(type, "struct", 6))
		return ~0ull;
	if (!strcmp(type, "u8") || !strcmp(type, "s8"))
		return 0xff;
	if (!strcmp(type, "u16") || !strcmp(type, "s16"))
		return 0xffff;
	if (!strcmp(type, "u32") || !strcmp(type, "s32"))
		return 0xffffffff;
	if (!strncmp(type, "unsigned ", 9))
		type += 9;
	if (!strcmp(type, "char"))
		return 0xff;
	if (!strcmp(type, "short"))
		return 0xffff;
	if (!strcmp(type, "int"))
		return 0xffffffff;
	return ~0ull;
}

static struct expr *new_expr(enum expr_kind kind)
{
	struct expr *e = calloc(1, sizeof(*e));

	if (e)
		e->kind = kind;
	return e;
}

static const char *const binary_ops[] = {
	"!", "!=", "~", "|", "||", "&", "&&", "<", "<<", "<=", ">", ">>", ">=", "==",
	"-", "+", "/", "%", "*",
};

/* ARG as eval_num_arg() evaluates it, or NULL when the plan cannot take
 * it (symbols, helper functions, strings, dynamic arrays...). */
static struct expr *compile_expr(struct tep_event *ev, struct tep_print_arg *arg, int depth)
{
	struct tep_format_field *f;
	struct expr *e = NULL;
	size_t i;

	if (!arg || depth > 32)
		return NULL;
	switch (arg->type) {
	case TEP_PRINT_NULL:
		return new_expr(EX_CONST);
	case TEP_PRINT_ATOM:
		/* names are looked up among the kernel's functions: not here */
		if (!arg->atom.atom || !isdigit((unsigned char)arg->atom.atom[0]) ||
		    !(e = new_expr(EX_CONST)))
			return NULL;
		e->val = ks_atom_value(arg->atom.atom);
		return e;
	case TEP_PRINT_FIELD:
		if (!(f = int_field(ev, arg)) || !(e = new_expr(EX_FIELD)))
			return NULL;
		e->field = f;
		return e;
	case TEP_PRINT_TYPE:
		if (!arg->typecast.type || !(e = new_expr(EX_MASK)))
			return NULL;
		e->val = cast_mask(arg->typecast.type);
		if (!(e->a = compile_expr(ev, arg->typecast.item, depth + 1)))
			break;
		return e;
	case TEP_PRINT_OP:
		if (!arg->op.op || !arg->op.left || !arg->op.right)
			return NULL;
		if (!strcmp(arg->op.op, "[")) {
			struct tep_print_arg *l = arg->op.left;

			f = l->type == TEP_PRINT_FIELD && l->field.name ?
			    (l->field.field ? l->field.field : tep_find_any_field(ev, l->field.name)) : NULL;
			if (!f || !(f->flags & TEP_FIELD_IS_ARRAY) || f->offset < 0 ||
			    !int_size(f->elementsize) || !(e = new_expr(EX_INDEX)))
				return NULL;
			e->field = f;
			if (!(e->a = compile_expr(ev, arg->op.right, depth + 1)))
				break;
			return e;
		}
		if (!strcmp(arg->op.op, "?")) {
			if (arg->op.right->type != TEP_PRINT_OP || !(e = new_expr(EX_COND)))
				return NULL;
			if (!(e->a = compile_expr(ev, arg->op.left, depth + 1)) ||
			    !(e->b = compile_expr(ev, arg->op.right->op.left, depth + 1)) ||
			    !(e->c = compile_expr(ev, arg->op.right->op.right, depth + 1)))
				break;
			return e;
		}
		for (i = 0; i < sizeof(binary_ops) / sizeof(binary_ops[0]); i++)
			if (!strcmp(arg->op.op, binary_ops[i]))
				break;
		if (i == sizeof(binary_ops) / sizeof(binary_ops[0]) || !(e = new_expr(EX_OP)))
			return NULL;
		memcpy(e->op, arg->op.op, strlen(arg->op.op) + 1);
		if (!(e->a = compile_expr(ev, arg->op.left, depth + 1)) ||
		    !(e->b = compile_expr(ev, arg->op.right, depth + 1)))
			break;
		return e;
	default:
		return NULL;
	}
	free_expr(e);
	return NULL;
}

/* A padded copy of STR, as "%[-]Ws" prints it. */
static char *padded(const char *str, int width, int left, size_t *n)
{
	size_t len = strlen(str), w = width > 0 && (size_t)width > len ? (size_t)width : len;
	char *out = malloc(w + 1);

	if (!out)
		return NULL;
	memset(out, ' ', w);
	memcpy(out + (left ? 0 : w - len), str, len);
	out[w] = '\0';
	*n = w;
	return out;
}

/* The %s of ARG into S (its width and side set), as print_str_arg() prints
 * it.  TOP: a conversion of its own (not a branch of a ?:). */
static int compile_str(struct ks_plan *p, struct tep_event *ev, struct tep_print_arg *arg,
		       struct step *s, bool top, int depth)
{
	struct tep_format_field *field = NULL;

	if (!arg || depth > 16)
		return -1;
	switch (arg->type) {
	case TEP_PRINT_ATOM:
		if (!arg->atom.atom || !(s->lit = padded(arg->atom.atom, s->width, s->left, &s->lit_len)))
			return -1;
		s->kind = ST_LIT;
		return 0;
	case TEP_PRINT_STRING:
		if (!arg->string.string)
			return -1;
		field = arg->string.field ? arg->string.field
					  : tep_find_any_field(ev, arg->string.string);
		if (!field || (field->size != 2 && field->size != 4))
			return -1;
		s->kind = ST_STR_DYN;
		break;
	case TEP_PRINT_FIELD:
		if (!(field = plain_field(ev, arg)))
			return -1;
		if (!(field->flags & TEP_FIELD_IS_ARRAY) && field->size == tep_get_long_size(ev->tep)) {
			/* a pointer: the printk format at that address, learnt
			 * from the library (one such step a plan) */
			if (!top || p->handler || p->printk_step >= 0 || field->size != 8)
				return -1;
			s->kind = ST_PRINTK;
			p->extended = true;
			p->printk_step = p->nr - 1;
			break;
		}
		s->kind = ST_STR_ARRAY;
		break;
	case TEP_PRINT_SYMBOL:
		if (!(s->ex = compile_expr(ev, arg->symbol.field, 0)) || sym_table(s, arg->symbol.symbols) < 0)
			return -1;
		s->kind = ST_SYMBOL;
		break;
	case TEP_PRINT_FLAGS:
		if (!(s->ex = compile_expr(ev, arg->flags.field, 0)) || sym_table(s, arg->flags.flags) < 0)
			return -1;
		s->kind = ST_FLAGS;
		s->delim = arg->flags.delim;
		break;
	case TEP_PRINT_OP:
		if (!arg->op.op || arg->op.op[0] != '?' || !arg->op.right ||
		    arg->op.right->type != TEP_PRINT_OP || !(s->ex = compile_expr(ev, arg->op.left, 0)) ||
		    !(s->yes = calloc(1, sizeof(*s->yes))) || !(s->no = calloc(1, sizeof(*s->no))))
			return -1;
		s->kind = ST_STR_COND;
		s->yes->width = s->no->width = s->width;
		s->yes->left = s->no->left = s->left;
		p->extended = true;
		return compile_str(p, ev, arg->op.right->op.left, s->yes, false, depth + 1) < 0 ||
		       compile_str(p, ev, arg->op.right->op.right, s->no, false, depth + 1) < 0 ? -1 : 0;
	default:
		return -1;
	}
	if (s->ex && s->ex->kind == EX_FIELD)
		field = (struct tep_format_field *)s->ex->field;
	else if (s->ex)
		p->extended = true;
	if (s->named)
		p->extended = true;
	s->field = field;
	return 0;
}

/* One conversion at F ('%'), consuming *ARG, as parse_arg_format() reads
 * it.  Returns the position after it, or NULL when the plan cannot take it. */
static const char *compile_conv(struct ks_plan *p, struct tep_event *ev, const char *f,
				struct tep_print_arg **argp)
{
	struct tep_print_arg *arg = *argp;
	int left = 0, zero = 0, alt = 0, width = 0, prec = -1, ls = 0, nl = 0, nh = 0, nL = 0;
	const char *start = f, *lm;
	struct step *s;
	char conv;

	f++;
	for (; *f == '-' || *f == '0' || *f == '#'; f++)
		*f == '-' ? (left = 1) : *f == '0' ? (zero = 1) : (alt = 1);
	for (; isdigit((unsigned char)*f); f++) {
		width = width * 10 + (*f - '0');
		if (width > 64)
			return NULL;
	}
	if (*f == '.') {
		for (prec = 0, f++; isdigit((unsigned char)*f); f++) {
			prec = prec * 10 + (*f - '0');
			if (prec > 64)
				return NULL;
		}
	}
	/* one of printf's length modifiers: h hh l ll L z Z (what glibc does
	 * with others differs from the library's ls) */
	lm = f;
	for (; *f == 'h' || *f == 'l' || *f == 'z' || *f == 'Z' || *f == 'L'; f++) {
		if (*f == 'h')
			ls--;
		else if (*f == 'l')
			ls++;
		else if (*f == 'L')
			ls = 2;
		else
			ls = 1;
	}
	if (f - lm > 2 || (f - lm == 2 && lm[0] != lm[1]) || (f - lm == 2 && lm[0] != 'h' && lm[0] != 'l'))
		return NULL;
	nl = lm[0] == 'l' || lm[0] == 'z' || lm[0] == 'Z';
	nh = lm[0] == 'h';
	nL = lm[0] == 'L';
	conv = *f++;
	/* the library cuts a longer conversion to 31 bytes (and fails) */
	if (!arg || f - start > 30)
		return NULL;
	*argp = arg->next;
	if (left)
		zero = 0;
	switch (conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
		if (!(s = add_step(p, ST_INT)) || !(s->ex = compile_expr(ev, arg, 0)))
			return NULL;
		s->bits = ls <= -2 ? 8 : ls == -1 ? 16 : ls == 0 ? 32 : 64;
		if (alt || prec >= 0 || conv == 'o') {
			/* rare: printf itself, with the library's argument */
			s->kind = ST_PRINTF;
			s->bits = ls;
			if (!(s->fmt = strndup(start, (size_t)(f - start))))
				return NULL;
			p->extended = true;
			return f;
		}
		if (s->ex->kind == EX_FIELD)
			s->field = (struct tep_format_field *)s->ex->field;
		else
			p->extended = true;
		s->is_signed = conv == 'd' || conv == 'i';
		s->base = conv == 'x' || conv == 'X' ? 16 : 10;
		s->upper = conv == 'X';
		s->width = width;
		s->zero = zero;
		s->left = left;
		return f;
	case 'p':
		/* the width is not used; %p and the function lookups only */
		if (arg->type == TEP_PRINT_BSTRING || (*f && strchr("MmIiUh", *f)))
			return NULL;
		if (!(s = add_step(p, ST_PTR)) || !(s->ex = compile_expr(ev, arg, 0)))
			return NULL;
		if (*f && strchr("FfSs", *f)) {
			s->kind = ST_FUNC;
			s->offset = *f == 'F' || *f == 'S';
			f++;
		}
		p->extended = true;
		return f;
	case 's':
		if (ls || nh || nl || nL || zero || alt || prec >= 0)
			return NULL;
		break;
	default:
		return NULL;
	}
	if (!(s = add_step(p, ST_LIT)))
		return NULL;
	s->kind = ST_LIT; /* until compile_str says */
	s->width = width;
	s->left = left;
	return compile_str(p, ev, arg, s, true, 0) < 0 ? NULL : f;
}

/* A number field the kvm plugin reads with tep_get_field_val(). */
static struct tep_format_field *num_field(struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	return f && int_size(f->size) && f->offset >= 0 ? f : NULL;
}

/*
 * libtraceevent's kvm plugin prints kvm_entry as " vcpu %u rip 0x%llx" and
 * kvm_exit as "reason NAME rip 0x%llx[ info %llx %llx]", NAME from its
 * tables by (isa, exit_reason) (a function name after the rip only when the
 * application provides one: kvmscope does not).  The plan takes that shape
 * but trusts it only as far as the handler confirms it: the first kvm_entry,
 * and the first kvm_exit of every (isa, exit_reason), are printed by the
 * handler (ks_plan_run says 1) and handed back to ks_plan_learn(), which
 * keeps NAME, or drops the plan for good if the text is not what the plan
 * would have written.
 */
static struct ks_plan *compile_kvm(struct tep_event *ev)
{
	const struct ks_arch *a = ks_arch_tep_kvm_plugin(); /* its events, from the tables */
	const struct ks_match *x = a ? &a->classes[0].begin[0] : NULL;
	struct ks_plan *p;
	struct kvm_plan *k;

	if (!x || !ev->system || strcmp(ev->system, x->system) ||
	    (strcmp(ev->name, x->name) && strcmp(ev->name, a->entry_name)))
		return NULL;
	p = new_plan(ev->tep);
	k = calloc(1, sizeof(*k));
	if (!p || !k) {
		free(p);
		free(k);
		return NULL;
	}
	p->kvm = k;
	k->exit = !strcmp(ev->name, x->name);
	k->rip = num_field(ev, k->exit ? a->guest_ip_field : "rip");
	if (k->exit) {
		k->reason = num_field(ev, x->key_field);
		k->isa = num_field(ev, a->isa_field);
		k->info1 = num_field(ev, "info1");
		k->info2 = num_field(ev, "info2");
		if (!k->info1 || !k->info2)
			k->info1 = k->info2 = NULL;
		if (tep_find_field(ev, a->isa_field) && !k->isa)
			k->rip = NULL; /* the plugin would fail to read it */
	} else {
		k->vcpu = num_field(ev, a->entry_vcpu_field);
	}
	if (!k->rip || (k->exit ? !k->reason : !k->vcpu)) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

/* The print format of EV into P's steps: 0, or -1 if the plan cannot take it. */
static int compile_steps(struct ks_plan *p, struct tep_event *ev)
{
	struct tep_print_arg *arg = ev->print_fmt.args;
	const char *f = ev->print_fmt.format;

	if (!f || (ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW)))
		return -1;
	while (f && *f)
		f = *f == '%' && f[1] != '%' ? compile_conv(p, ev, f, &arg) : compile_literal(p, f);
	return f ? 0 : -1;
}

/* An event whose print format the library failed to parse: it prints
 * "[FAILED TO PARSE]" and each field as print_field_raw() does; number
 * fields only. */
static int compile_failed(struct ks_plan *p, struct tep_event *ev)
{
	struct tep_format_field *f;
	struct step *s;
	char lit[256];

	if (!(s = add_step(p, ST_LIT)) || !(s->lit = strdup("[FAILED TO PARSE]")))
		return -1;
	s->lit_len = strlen(s->lit);
	for (f = ev->format.fields; f; f = f->next) {
		unsigned long fl = f->flags;
		bool sig = !(fl & TEP_FIELD_IS_POINTER) && (fl & TEP_FIELD_IS_SIGNED);
		/* pointers 0x%llx; signed: 0x%x (int) for a 4-byte long, %d
		 * (int), %2d (short), %1d (char), %lld; unsigned: 0x%llx for a
		 * long, else %llu */
		bool hex = (fl & TEP_FIELD_IS_POINTER) ||
			   ((fl & TEP_FIELD_IS_LONG) && (!sig || f->size == 4));
		int n;

		if (!f->name || f->offset < 0 || (fl & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
		    !int_size(f->size))
			return -1;
		n = snprintf(lit, sizeof(lit), " %s=%s", f->name, hex ? "0x" : "");
		if (n < 0 || (size_t)n >= sizeof(lit) || !(s = add_step(p, ST_LIT)) ||
		    !(s->lit = strdup(lit)))
			return -1;
		s->lit_len = (size_t)n;
		if (!(s = add_step(p, ST_INT)) || !(s->ex = new_expr(EX_FIELD)))
			return -1;
		s->ex->field = f;
		s->base = hex ? 16 : 10;
		s->bits = sig ? f->size * 8 : 64;
		s->is_signed = sig && !hex;
		s->width = sig && f->size <= 2 ? f->size : 0;
	}
	p->extended = true;
	return 0;
}

/* A field the plugins read with tep_read_number_field(): NULL if EV has
 * none named NAME (ANY: tep_find_any_field), *BAD if it has one that
 * cannot be read so. */
static struct tep_format_field *hfield(struct tep_event *ev, const char *name, bool any, bool *bad)
{
	struct tep_format_field *f = any ? tep_find_any_field(ev, name) : tep_find_field(ev, name);

	if (f && (f->offset < 0 || !int_size(f->size))) {
		*bad = true;
		return NULL;
	}
	return f;
}

/* A comm field the sched_switch plugin prints with "%.*s". */
static struct tep_format_field *comm_field(struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_any_field(ev, name);

	return f && f->offset >= 0 && f->size > 0 && f->size <= 64 ? f : NULL;
}

/*
 * The handlers of libtraceevent's plugins that kvmscope's recordings meet
 * most (sched_switch, sched_wakeup[_new], hrtimer_start,
 * hrtimer_expire_entry, tlb_flush and the kmem events' call site prefix),
 * written as the plugins write them.  As for the kvm plugin (compile_kvm),
 * the plan trusts its text only once the handler confirmed it: the first
 * record is printed by the handler and compared (ks_plan_learn); any
 * difference leaves the event to the handler for good.
 */
static struct ks_plan *compile_handler(struct tep_event *ev)
{
	static const struct {
		const char *system, *name;
		enum handler_kind kind;
	} known[] = {
		{ "sched", "sched_switch", H_SCHED_SWITCH },
		{ "sched", "sched_wakeup", H_SCHED_WAKEUP },
		{ "sched", "sched_wakeup_new", H_SCHED_WAKEUP },
		{ "timer", "hrtimer_start", H_HRTIMER_START },
		{ "timer", "hrtimer_expire_entry", H_HRTIMER_EXPIRE },
		{ "tlb", "tlb_flush", H_TLB_FLUSH },
		{ "kmem", "kfree", H_KMEM },
		{ "kmem", "kmalloc", H_KMEM },
		{ "kmem", "kmalloc_node", H_KMEM },
		{ "kmem", "kmem_cache_alloc", H_KMEM },
		{ "kmem", "kmem_cache_alloc_node", H_KMEM },
		{ "kmem", "kmem_cache_free", H_KMEM },
	};
	struct tep_format_field **h;
	struct ks_plan *p;
	bool bad = false, ok = true;
	size_t i;

	if (!ev->system || !ev->name)
		return NULL;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(ev->system, known[i].system) && !strcmp(ev->name, known[i].name))
			break;
	if (i == sizeof(known) / sizeof(known[0]) || !(p = new_plan(ev->tep)))
		return NULL;
	p->extended = true;
	p->handler = known[i].kind;
	h = p->hf;
	switch (p->handler) {
	case H_SCHED_SWITCH:
		h[0] = hfield(ev, "prev_pid", false, &bad);
		h[1] = comm_field(ev, "prev_comm");
		h[2] = hfield(ev, "prev_prio", false, &bad);
		h[3] = hfield(ev, "prev_state", false, &bad);
		h[4] = hfield(ev, "next_pid", false, &bad);
		h[5] = comm_field(ev, "next_comm");
		h[6] = hfield(ev, "next_prio", false, &bad);
		ok = h[0] && h[1] && h[2] && h[3] && h[4] && h[5] && h[6];
		break;
	case H_SCHED_WAKEUP:
		h[0] = hfield(ev, "pid", false, &bad);
		h[1] = comm_field(ev, "comm");
		h[2] = hfield(ev, "prio", false, &bad);
		h[3] = hfield(ev, "success", false, &bad);
		h[4] = hfield(ev, "target_cpu", false, &bad);
		ok = h[0] && h[1] && h[2];
		break;
	case H_HRTIMER_START:
	case H_HRTIMER_EXPIRE:
		/* "timer", else "hrtimer"; "function" only when it reads */
		h[0] = hfield(ev, "timer", false, &bad);
		if (!h[0]) {
			bad = false;
			h[0] = hfield(ev, "hrtimer", false, &bad);
		}
		h[1] = hfield(ev, "function", false, &bad);
		h[2] = hfield(ev, p->handler == H_HRTIMER_START ? "expires" : "now", false, &bad);
		h[3] = p->handler == H_HRTIMER_START ? hfield(ev, "softexpires", false, &bad) : NULL;
		ok = h[0] && h[2] && (p->handler == H_HRTIMER_EXPIRE || h[3]);
		break;
	case H_TLB_FLUSH:
		h[0] = hfield(ev, "pages", false, &bad);
		h[1] = hfield(ev, "reason", false, &bad);
		ok = h[0] && h[1];
		break;
	case H_KMEM:
		/* the handler adds "(FUNC+0xOFF) " and asks for the format */
		h[0] = hfield(ev, "call_site", false, &bad);
		ok = compile_steps(p, ev) == 0;
		break;
	default:
		ok = false;
	}
	if (!ok || bad) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

struct ks_plan *ks_plan_compile(struct tep_event *ev)
{
	struct ks_plan *p;

	if (!ev || !ev->tep)
		return NULL;
	if (ev->handler && !(ev->flags & TEP_EVENT_FL_NOHANDLE)) {
		if (ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW))
			return NULL;
		return (p = compile_kvm(ev)) ? p : compile_handler(ev);
	}
	if (!(p = new_plan(ev->tep)))
		return NULL;
	if ((ev->flags & TEP_EVENT_FL_FAILED) && !(ev->flags & TEP_EVENT_FL_PRINTRAW) ?
	    compile_failed(p, ev) < 0 : compile_steps(p, ev) < 0) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

bool ks_plan_scannable(const struct ks_plan *p)
{
	return p && !p->extended;
}

/* The field's bytes lie inside the record. */
static bool inside(const struct tep_format_field *f, int size)
{
	return f->offset + f->size <= size;
}

static int put_str(struct ks_tbuf *b, const struct step *s, const char *str, size_t n)
{
	if (!s->left && pad(b, ' ', s->width - (int)n) < 0)
		return -1;
	if (ks_tbuf_put(b, str, n) < 0)
		return -1;
	return s->left ? pad(b, ' ', s->width - (int)n) : 0;
}

static int put_hex_ll(struct ks_tbuf *b, uint64_t v)
{
	return ks_tbuf_put(b, "0x", 2) < 0 ? -1 : ks_tbuf_int(b, v, 0, 16, 0, 0, 0, 0);
}

/* E's value as eval_num_arg() computes it: 0, or -1 where the library
 * would warn (a field beyond the record) or fail (a division by zero). */
static int eval(const struct ks_plan *p, const struct expr *e, const uint8_t *data, int size,
		uint64_t *v)
{
	uint64_t l, r;

	switch (e->kind) {
	case EX_CONST:
		*v = e->val;
		return 0;
	case EX_FIELD:
		if (!inside(e->field, size))
			return -1;
		*v = rd(p, data + e->field->offset, e->field->size);
		return 0;
	case EX_INDEX: {
		uint64_t es = e->field->elementsize, o;

		if (eval(p, e->a, data, size, &r) < 0 || r > (uint64_t)size)
			return -1;
		o = (uint64_t)e->field->offset + r * es;
		if (o + es > (uint64_t)size)
			return -1;
		*v = rd(p, data + o, (int)es);
		return 0;
	}
	case EX_MASK:
		if (eval(p, e->a, data, size, v) < 0)
			return -1;
		*v &= e->val;
		return 0;
	case EX_COND:
		if (eval(p, e->a, data, size, &l) < 0)
			return -1;
		return eval(p, l ? e->b : e->c, data, size, v);
	case EX_OP:
		if (eval(p, e->a, data, size, &l) < 0 || eval(p, e->b, data, size, &r) < 0)
			return -1;
		switch (e->op[0]) {
		case '!': *v = e->op[1] ? l != r : !r; return 0;
		case '~': *v = ~r; return 0;
		case '|': *v = e->op[1] ? l || r : (l | r); return 0;
		case '&': *v = e->op[1] ? l && r : (l & r); return 0;
		case '=': *v = l == r; return 0;
		case '-': *v = l - r; return 0;
		case '+': *v = l + r; return 0;
		case '*': *v = l * r; return 0;
		case '/':
		case '%':
			if (!r)
				return -1;
			*v = e->op[0] == '/' ? l / r : l % r;
			return 0;
		case '<':
		case '>':
			if (e->op[1] == e->op[0]) {
				if (r >= 64)
					return -1;
				*v = e->op[0] == '<' ? l << r : l >> r;
			} else if (e->op[1] == '=') {
				*v = e->op[0] == '<' ? l <= r : l >= r;
			} else {
				*v = e->op[0] == '<' ? l < r : l > r;
			}
			return 0;
		}
		return -1;
	}
	return -1;
}

/* "%p" as glibc prints it. */
static int put_ptr(struct ks_tbuf *b, uint64_t v)
{
	return v ? put_hex_ll(b, v) : ks_tbuf_put(b, "(nil)", 5);
}

/* print_function(): the name (and "+0x" offset), else the address. */
static int put_func(const struct ks_plan *p, struct ks_tbuf *b, uint64_t v, bool offset)
{
	unsigned long long start;
	const char *name;

	if (!tep_find_function_info(p->tep, v, &name, &start, NULL) || !name)
		return put_hex_ll(b, v);
	if (ks_tbuf_put(b, name, strlen(name)) < 0)
		return -1;
	return offset ? (ks_tbuf_put(b, "+", 1) < 0 ? -1 : put_hex_ll(b, v - start)) : 0;
}

/* A number through snprintf, cast as print_arg_number() casts it. */
static int put_printf(struct ks_tbuf *b, const struct step *s, uint64_t v)
{
	char tmp[192];
	int n;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	switch (s->bits) {
	case -2: n = snprintf(tmp, sizeof(tmp), s->fmt, (char)v); break;
	case -1: n = snprintf(tmp, sizeof(tmp), s->fmt, (short)v); break;
	case 0: n = snprintf(tmp, sizeof(tmp), s->fmt, (int)v); break;
	case 1: n = snprintf(tmp, sizeof(tmp), s->fmt, (long)v); break;
	default: n = snprintf(tmp, sizeof(tmp), s->fmt, (long long)v); break;
	}
#pragma GCC diagnostic pop
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	return ks_tbuf_put(b, tmp, (size_t)n);
}

/* Runs step S: 0; -1: the library prints the event; 1: the library
 * prints it and ks_plan_learn() learns from it (a printk string). */
static int run_step(const struct ks_plan *p, const struct step *s, const uint8_t *data, int size,
		    struct ks_tbuf *b)
{
	uint64_t v;
	int i, printed;

	switch (s->kind) {
	case ST_LIT:
		return ks_tbuf_put(b, s->lit, s->lit_len);
	case ST_INT:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1; /* the library warns and prints 0 */
		if (s->bits < 64) {
			v &= (1ull << s->bits) - 1;
			if (s->is_signed && (v >> (s->bits - 1)) & 1)
				v |= ~0ull << s->bits;
		}
		return ks_tbuf_int(b, v, s->is_signed, s->base, s->upper, s->width, s->zero,
				   s->left);
	case ST_PRINTF:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return put_printf(b, s, v);
	case ST_PTR:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return put_ptr(b, v);
	case ST_FUNC:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return put_func(p, b, v, s->offset);
	case ST_STR_COND:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return run_step(p, v ? s->yes : s->no, data, size, b);
	case ST_PRINTK:
		if (!inside(s->field, size))
			return -1; /* the library reads on past the record */
		memcpy(&v, data + s->field->offset, 8);
		for (i = 0; i < p->nr_printk; i++)
			if (p->printk[i].addr == v)
				return ks_tbuf_put(b, p->printk[i].text, p->printk[i].len);
		return p->state >= 0 && p->nr_printk < PRINTK_CACHE ? 1 : -1;
	case ST_STR_DYN: {
		unsigned int o, l;
		const uint8_t *end;

		if (!inside(s->field, size))
			return 0; /* the library prints nothing */
		v = rd(p, data + s->field->offset, s->field->size);
		o = (unsigned int)(v & 0xffff);
		l = s->field->size == 2 ? (unsigned int)size - o : (unsigned int)((v >> 16) & 0xffff);
		if (o + l > (unsigned int)size || !l)
			return 0;
		if (s->field->flags & TEP_FIELD_IS_RELATIVE)
			o += (unsigned int)(s->field->offset + s->field->size);
		if (o >= (unsigned int)size || !(end = memchr(data + o, 0, (size_t)size - o)))
			return -1; /* the library reads on past the record */
		return put_str(b, s, (const char *)data + o, (size_t)(end - (data + o)));
	}
	case ST_STR_ARRAY: {
		const uint8_t *str = data + s->field->offset, *end;

		if (!inside(s->field, size))
			return -1;
		end = memchr(str, 0, (size_t)s->field->size);
		return put_str(b, s, (const char *)str,
			       end ? (size_t)(end - str) : (size_t)s->field->size);
	}
	case ST_SYMBOL:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		for (i = 0; i < s->nr_syms; i++)
			if (v == (uint64_t)s->syms[i].value)
				return put_str(b, s, s->syms[i].str, strlen(s->syms[i].str));
		return put_hex_ll(b, v);
	case ST_FLAGS:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		printed = 0;
		for (i = 0; i < s->nr_syms; i++) {
			long long fval = s->syms[i].value;

			if (!v && fval < 0)
				return put_str(b, s, s->syms[i].str, strlen(s->syms[i].str));
			if (fval > 0 && (v & (uint64_t)fval) == (uint64_t)fval) {
				if (printed && s->delim && ks_tbuf_put(b, s->delim, strlen(s->delim)) < 0)
					return -1;
				if (put_str(b, s, s->syms[i].str, strlen(s->syms[i].str)) < 0)
					return -1;
				printed = 1;
				v &= ~(uint64_t)fval;
			}
		}
		if (v) {
			if (printed && s->delim && ks_tbuf_put(b, s->delim, strlen(s->delim)) < 0)
				return -1;
			return put_hex_ll(b, v);
		}
		return 0;
	}
	return -1;
}

/* ---- plugin handlers (compile_handler) ---- */

/* The comm field F printed "%.*s" and registered for PID, as the
 * sched_switch plugin's write_and_save_comm() does. */
static int put_comm(const struct ks_plan *p, const struct tep_format_field *f, const uint8_t *data,
		    uint64_t pid, struct ks_tbuf *b)
{
	char comm[65];
	size_t n = strnlen((const char *)data + f->offset, (size_t)f->size);

	memcpy(comm, data + f->offset, n);
	comm[n] = '\0';
	tep_register_comm(p->tep, comm, (int)pid);
	return ks_tbuf_put(b, comm, n);
}

/* write_state(): the bits of "SDTtZXxW", else R. */
static int put_state(struct ks_tbuf *b, uint64_t v)
{
	static const char states[] = "SDTtZXxW";
	char out[16];
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		if (!(v & (1u << i)))
			continue;
		if (n)
			out[n++] = '|';
		out[n++] = states[i];
	}
	if (!n)
		out[n++] = 'R';
	return ks_tbuf_put(b, out, n);
}

/* tep_print_func_field(" function=%s"): "NAME/0x(start - v)" cut to 127
 * characters, else "0x%08llx". */
static int put_func_field(const struct ks_plan *p, struct ks_tbuf *b, uint64_t v)
{
	unsigned long long start;
	const char *name;
	char tmp[128];
	int n;

	if (ks_tbuf_put(b, " function=", 10) < 0)
		return -1;
	if (!tep_find_function_info(p->tep, v, &name, &start, NULL) || !name)
		return ks_tbuf_put(b, "0x", 2) < 0 ? -1 : ks_tbuf_int(b, v, 0, 16, 0, 8, 1, 0);
	n = snprintf(tmp, sizeof(tmp), "%s/0x%llx", name, start - v);
	if (n < 0)
		return -1;
	return ks_tbuf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static int put_dec(struct ks_tbuf *b, const char *lit, uint64_t v, int is_signed)
{
	return ks_tbuf_put(b, lit, strlen(lit)) < 0 ? -1 : ks_tbuf_int(b, v, is_signed, 10, 0, 0, 0, 0);
}

static int run_handler(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	static const char *const tlb_reasons[] = {
		" reason=flush on task switch", " reason=remote shootdown",
		" reason=local shootdown", " reason=local mm shootdown",
	};
	struct tep_format_field *const *h = p->hf;
	uint64_t v[8] = { 0 };
	unsigned long long start;
	const char *name;
	char tmp[160];
	int i, n;

	for (i = 0; i < 8; i++)
		if (h[i]) {
			if (!inside(h[i], size))
				return -1;
			v[i] = rd(p, data + h[i]->offset, h[i]->size);
		}
	switch (p->handler) {
	case H_SCHED_SWITCH:
		if (put_comm(p, h[1], data, v[0], b) < 0 || put_dec(b, ":", v[0], 1) < 0 ||
		    put_dec(b, " [", (uint64_t)(int64_t)(int32_t)v[2], 1) < 0 ||
		    ks_tbuf_put(b, "] ", 2) < 0 || put_state(b, v[3]) < 0 ||
		    ks_tbuf_put(b, " ==> ", 5) < 0 || put_comm(p, h[5], data, v[4], b) < 0 ||
		    put_dec(b, ":", v[4], 1) < 0 ||
		    put_dec(b, " [", (uint64_t)(int64_t)(int32_t)v[6], 1) < 0)
			return -1;
		return ks_tbuf_put(b, "]", 1);
	case H_SCHED_WAKEUP:
		if (put_comm(p, h[1], data, v[0], b) < 0 || put_dec(b, ":", v[0], 1) < 0 ||
		    put_dec(b, " [", v[2], 1) < 0 || ks_tbuf_put(b, "]", 1) < 0 ||
		    (h[3] && put_dec(b, " success=", v[3], 1) < 0))
			return -1;
		if (h[4] && (ks_tbuf_put(b, " CPU:", 5) < 0 || ks_tbuf_int(b, v[4], 0, 10, 0, 3, 1, 0) < 0))
			return -1;
		return 0;
	case H_HRTIMER_START:
	case H_HRTIMER_EXPIRE:
		if (ks_tbuf_put(b, "hrtimer=", 8) < 0 || put_hex_ll(b, v[0]) < 0)
			return -1;
		if (p->handler == H_HRTIMER_EXPIRE)
			return put_dec(b, " now=", v[2], 0) < 0 || (h[1] && put_func_field(p, b, v[1]) < 0) ? -1 : 0;
		if ((h[1] && put_func_field(p, b, v[1]) < 0) || put_dec(b, " expires=", v[2], 0) < 0)
			return -1;
		return put_dec(b, " softexpires=", v[3], 0);
	case H_TLB_FLUSH:
		if (put_dec(b, "pages=", v[0], 1) < 0 ||
		    (v[1] < 4 && ks_tbuf_put(b, tlb_reasons[v[1]], strlen(tlb_reasons[v[1]])) < 0) ||
		    (v[1] >= 4 && ks_tbuf_put(b, " reason=", 8) < 0) || put_dec(b, " (", v[1], 1) < 0)
			return -1;
		return ks_tbuf_put(b, ")", 1);
	case H_KMEM:
		if (h[0] && tep_find_function_info(p->tep, v[0], &name, &start, NULL) && name) {
			n = snprintf(tmp, sizeof(tmp), "(%s+0x%x) ", name, (unsigned)(int)(v[0] - start));
			if (n < 0 || (size_t)n >= sizeof(tmp) || ks_tbuf_put(b, tmp, (size_t)n) < 0)
				return -1;
		}
		for (i = 0; i < p->nr; i++)
			if (run_step(p, &p->steps[i], data, size, b) != 0)
				return -1;
		return 0;
	default:
		return -1;
	}
}

/* The printk string at the address in the record, learnt from TEXT (what
 * the library printed): the steps around it must print what it starts and
 * ends with. */
static void learn_printk(struct ks_plan *p, const uint8_t *data, int size, const char *text,
			 size_t len)
{
	struct ks_tbuf pre = { 0 }, post = { 0 };
	const struct step *s = &p->steps[p->printk_step];
	uint64_t addr;
	int i, r = 0;

	if (!inside(s->field, size) || p->nr_printk >= PRINTK_CACHE)
		return;
	memcpy(&addr, data + s->field->offset, 8);
	for (i = 0; i < p->nr_printk; i++)
		if (p->printk[i].addr == addr)
			return;
	for (i = 0; i < p->nr && r == 0; i++)
		if (i != p->printk_step)
			r = run_step(p, &p->steps[i], data, size, i < p->printk_step ? &pre : &post);
	if (r != 0) {
		/* the plan cannot print this record anyway */
	} else if (pre.len + post.len <= len && (!pre.len || !memcmp(text, pre.p, pre.len)) &&
	    (!post.len || !memcmp(text + len - post.len, post.p, post.len)) &&
	    !memchr(text + pre.len, '\0', len - pre.len - post.len) &&
	    (p->printk[p->nr_printk].text = strndup(text + pre.len, len - pre.len - post.len))) {
		p->printk[p->nr_printk].addr = addr;
		p->printk[p->nr_printk++].len = len - pre.len - post.len;
	} else {
		p->state = -1; /* not what the plan would print: the library's for good */
	}
	free(pre.p);
	free(post.p);
}

static uint64_t num(const struct ks_plan *p, const struct tep_format_field *f, const uint8_t *data)
{
	return rd(p, data + f->offset, f->size);
}

/* The text after "reason NAME" (kvm_exit) or all of it (kvm_entry). */
static int kvm_tail(const struct ks_plan *p, const uint8_t *data, struct ks_tbuf *b)
{
	const struct kvm_plan *k = p->kvm;

	if (!k->exit && (ks_tbuf_put(b, " vcpu ", 6) < 0 ||
			 ks_tbuf_int(b, (uint32_t)num(p, k->vcpu, data), 0, 10, 0, 0, 0, 0) < 0))
		return -1;
	if (ks_tbuf_put(b, " rip 0x", 7) < 0 || ks_tbuf_int(b, num(p, k->rip, data), 0, 16, 0, 0, 0, 0) < 0)
		return -1;
	if (k->info1 && (ks_tbuf_put(b, " info ", 6) < 0 ||
			 ks_tbuf_int(b, num(p, k->info1, data), 0, 16, 0, 0, 0, 0) < 0 ||
			 ks_tbuf_put(b, " ", 1) < 0 ||
			 ks_tbuf_int(b, num(p, k->info2, data), 0, 16, 0, 0, 0, 0) < 0))
		return -1;
	return 0;
}

static bool kvm_inside(const struct kvm_plan *k, int size)
{
	const struct tep_format_field *f[] = { k->vcpu, k->rip, k->reason, k->isa, k->info1, k->info2 };
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] && !inside(f[i], size))
			return false;
	return true;
}

static void kvm_key(const struct ks_plan *p, const uint8_t *data, uint64_t *isa, uint64_t *val)
{
	*isa = p->kvm->isa ? num(p, p->kvm->isa, data) : 1;
	*val = num(p, p->kvm->reason, data);
}

static int run_kvm(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	const struct kvm_plan *k = p->kvm;
	size_t start = b->len;
	uint64_t isa, val;
	int i;

	if (k->state < 0 || !kvm_inside(k, size))
		return -1;
	if (!k->exit) {
		if (k->state == 0)
			return 1;
	} else {
		kvm_key(p, data, &isa, &val);
		for (i = 0; i < k->nr_reasons; i++)
			if (k->reasons[i].isa == isa && k->reasons[i].val == val)
				break;
		if (i == k->nr_reasons)
			return k->nr_reasons < KVM_REASONS ? 1 : -1;
		if (ks_tbuf_put(b, "reason ", 7) < 0 ||
		    ks_tbuf_put(b, k->reasons[i].text, strlen(k->reasons[i].text)) < 0) {
			b->len = start;
			return -1;
		}
	}
	if (kvm_tail(p, data, b) < 0) {
		b->len = start;
		return -1;
	}
	return 0;
}

void ks_plan_learn(struct ks_plan *p, const uint8_t *data, int size, const char *text, size_t len)
{
	struct kvm_plan *k = p->kvm;
	struct ks_tbuf tail = { 0 };
	size_t n;
	uint64_t isa, val;

	if (p->handler) {
		/* a record the plan cannot print (cut short) says nothing */
		if (p->state == 0 && run_handler(p, data, size, &tail) == 0)
			p->state = tail.len == len && (!len || !memcmp(tail.p, text, len)) ? 1 : -1;
		free(tail.p);
		return;
	}
	if (p->printk_step >= 0) {
		if (p->state >= 0)
			learn_printk(p, data, size, text, len);
		return;
	}
	if (!k || k->state < 0 || !kvm_inside(k, size))
		return;
	if (kvm_tail(p, data, &tail) < 0) {
		free(tail.p);
		return;
	}
	if (!k->exit) {
		k->state = tail.len == len && !memcmp(tail.p, text, len) ? 1 : -1;
		free(tail.p);
		return;
	}
	/* "reason " NAME TAIL, NAME without the tail's " rip 0x" */
	if (len < 7 + tail.len || memcmp(text, "reason ", 7) ||
	    memcmp(text + len - tail.len, tail.p, tail.len) ||
	    (n = len - 7 - tail.len) == 0 || memmem(text + 7, n, " rip 0x", 7) ||
	    memchr(text + 7, '\0', n) || k->nr_reasons >= KVM_REASONS) {
		k->state = -1;
		free(tail.p);
		return;
	}
	free(tail.p);
	kvm_key(p, data, &isa, &val);
	if (!(k->reasons[k->nr_reasons].text = strndup(text + 7, n)))
		return;
	k->reasons[k->nr_reasons].isa = isa;
	k->reasons[k->nr_reasons++].val = val;
	k->state = 1;
}

int ks_plan_run(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	size_t start = b->len;
	int i, r;

	if (p->kvm)
		return run_kvm(p, data, size, b);
	if (p->handler) {
		if (p->state <= 0)
			return p->state < 0 ? -1 : 1;
		if (run_handler(p, data, size, b) < 0) {
			b->len = start;
			return -1;
		}
		return 0;
	}
	if (p->state < 0)
		return -1;
	for (i = 0; i < p->nr; i++)
		if ((r = run_step(p, &p->steps[i], data, size, b)) != 0) {
			b->len = start;
			return r < 0 ? -1 : 1;
		}
	return 0;
}

/* ---- reading printed text back (ks_plan_scan) ---- */

static void store(const struct ks_plan *p, const struct tep_format_field *f, uint8_t *data,
		  uint64_t v)
{
	bool big = tep_is_file_bigendian(p->tep);

	for (int i = 0; i < f->size; i++)
		data[f->offset + i] = (uint8_t)(v >> (8 * (big ? f->size - 1 - i : i)));
}

static const char *skip_pad(const char *t, const struct step *s)
{
	if (s->width && !s->left)
		while (*t == ' ')
			t++;
	return t;
}

/* After a left-justified item that started at START: its padding. */
static const char *skip_left_pad(const char *t, const char *start, const struct step *s)
{
	if (s->left)
		while (*t == ' ' && t - start < s->width)
			t++;
	return t;
}

static int digit_value(char c, int base)
{
	int d = isdigit((unsigned char)c) ? c - '0' :
		(c >= 'a' && c <= 'f') ? c - 'a' + 10 :
		(c >= 'A' && c <= 'F') ? c - 'A' + 10 : 99;

	return d < base ? d : -1;
}

/* Digits of BASE at T: *V, the position after them; NULL if none or too big. */
static const char *scan_digits(const char *t, int base, uint64_t *v)
{
	const char *start = t;
	int d;

	*v = 0;
	for (; (d = digit_value(*t, base)) >= 0; t++) {
		if (*v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return NULL;
		*v = *v * (uint64_t)base + (uint64_t)d;
	}
	return t == start ? NULL : t;
}

static const char *scan_int(const struct step *s, const char *t, uint64_t *v)
{
	const char *start = t = skip_pad(t, s);
	bool neg = s->is_signed && *t == '-';

	if (!(t = scan_digits(t + neg, s->base, v)))
		return NULL;
	if (s->is_signed) {
		uint64_t max = s->bits == 64 ? 1ull << 63 : 1ull << (s->bits - 1);

		if (*v > max - !neg)
			return NULL;
		*v = neg ? -*v : *v;
	} else if (s->bits < 64 && *v >> s->bits) {
		return NULL;
	}
	return skip_left_pad(t, start, s);
}

/* The longest entry of S's table printed at T whose value passes (values
 * > 0 only when POSITIVE); NULL if none. */
static const struct sym *scan_sym(const struct step *s, const char *t, bool positive)
{
	const struct sym *best = NULL;
	size_t best_len = 0;

	for (int i = 0; i < s->nr_syms; i++) {
		size_t n = strlen(s->syms[i].str);

		if ((!positive || s->syms[i].value > 0) && (!best || n > best_len) &&
		    !strncmp(t, s->syms[i].str, n)) {
			best = &s->syms[i];
			best_len = n;
		}
	}
	return best;
}

/* What put_hex_ll() prints: "0x" and hex digits. */
static const char *scan_hex_ll(const char *t, uint64_t *v)
{
	return strncmp(t, "0x", 2) ? NULL : scan_digits(t + 2, 16, v);
}

static const char *scan_flags(const struct step *s, const char *t, uint64_t *v)
{
	size_t dl = s->delim ? strlen(s->delim) : 0;
	const struct sym *y;
	uint64_t rest;
	const char *e;
	bool any = false;

	*v = 0;
	while ((y = scan_sym(s, t, true)) != NULL) {
		*v |= (uint64_t)y->value;
		t += strlen(y->str);
		any = true;
		if (!dl)
			continue;
		/* the delimiter belongs to the flags only when more follow */
		if (strncmp(t, s->delim, dl) || (!scan_sym(s, t + dl, true) && strncmp(t + dl, "0x", 2)))
			return t;
		t += dl;
	}
	if ((e = scan_hex_ll(t, &rest)) != NULL) {
		*v |= rest;
		return e;
	}
	if (!any && (y = scan_sym(s, t, false)) != NULL && y->value < 0)
		return t + strlen(y->str); /* the name of a zero value */
	return t; /* no flag at all: 0 */
}

/* The text of a string step ends where the next literal starts (or at the
 * end of the text after the last step). */
static const char *scan_string(const struct ks_plan *p, int i, const char *t, size_t *len)
{
	const struct step *s = &p->steps[i], *next = i + 1 < p->nr ? &p->steps[i + 1] : NULL;
	const char *end;

	t = skip_pad(t, s);
	if (!next)
		end = t + strlen(t);
	else if (next->kind == ST_LIT && next->lit_len)
		end = memmem(t, strlen(t), next->lit, next->lit_len);
	else
		return NULL;
	if (!end)
		return NULL;
	*len = (size_t)(end - t);
	while (s->left && *len && t[*len - 1] == ' ')
		(*len)--;
	return t;
}

int ks_plan_scan(const struct ks_plan *p, const char *text, uint8_t *data, int size)
{
	const char *t = text, *str;
	const struct sym *y;
	uint64_t v;
	size_t len;

	if (!p || p->kvm || p->extended)
		return -1;
	for (int i = 0; i < p->nr; i++) {
		const struct step *s = &p->steps[i];

		if (s->kind != ST_LIT && (!inside(s->field, size) ||
					  (s->kind != ST_STR_ARRAY && !int_size(s->field->size))))
			return -1;
		switch (s->kind) {
		case ST_LIT:
			if (strncmp(t, s->lit, s->lit_len))
				return -1;
			t += s->lit_len;
			break;
		case ST_INT:
			if (!(t = scan_int(s, t, &v)))
				return -1;
			store(p, s->field, data, v);
			break;
		case ST_SYMBOL:
			str = skip_pad(t, s);
			if ((y = scan_sym(s, str, false)) != NULL) {
				t = str + strlen(y->str);
				v = (uint64_t)y->value;
			} else if (!(t = scan_hex_ll(str, &v))) {
				return -1;
			}
			t = skip_left_pad(t, str, s);
			store(p, s->field, data, v);
			break;
		case ST_FLAGS:
			str = skip_pad(t, s);
			if (!(t = scan_flags(s, str, &v)))
				return -1;
			t = skip_left_pad(t, str, s);
			store(p, s->field, data, v);
			break;
		case ST_STR_ARRAY:
			if (!(str = scan_string(p, i, t, &len)) || len > (size_t)s->field->size ||
			    memchr(str, '\0', len))
				return -1;
			memset(data + s->field->offset, 0, (size_t)s->field->size);
			memcpy(data + s->field->offset, str, len);
			t = skip_left_pad(str + len, str, s);
			break;
		default:
			return -1; /* dynamic strings: no room is planned for them */
		}
	}
	while (*t == ' ' || *t == '\t')
		t++;
	return *t ? -1 : 0;
}
