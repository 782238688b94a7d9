/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_run.c - a plan's steps run on a record: its text, as
 * libtraceevent 1.7 prints it, into a growable buffer.
 *
 * The hot path of `kvmscope dump` and of the ftrace text reader: one call
 * of ks_plan_run() a record, every step through ks_plan_run_step(), the
 * numbers through ks_tbuf_int() (no printf).  The steps' helpers are
 * static (inlined); keep them so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "print_plan_impl.h"

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
/* ST_INT: the number cut to its conversion's length, sign-extended from
 * there for %d, as the library prints it. */
static inline int run_int(const struct ks_plan *p, const struct step *s, const uint8_t *data,
			  int size, struct ks_tbuf *b)
{
	uint64_t v;

	if (eval(p, s->ex, data, size, &v) < 0)
		return -1; /* the library warns and prints 0 */
	if (s->bits < 64) {
		v &= (1ull << s->bits) - 1;
		if (s->is_signed && (v >> (s->bits - 1)) & 1)
			v |= ~0ull << s->bits;
	}
	return ks_tbuf_int(b, v, s->is_signed, s->base, s->upper, s->width, s->zero, s->left);
}

/* ST_PRINTK: the printk string at the record's address, if learnt; 1: the
 * library prints it and the plan learns it (while there is room). */
static inline int run_printk(const struct ks_plan *p, const struct step *s, const uint8_t *data,
			     int size, struct ks_tbuf *b)
{
	uint64_t v;
	int i;

	if (!inside(s->field, size))
		return -1; /* the library reads on past the record */
	memcpy(&v, data + s->field->offset, 8);
	for (i = 0; i < p->nr_printk; i++)
		if (p->printk[i].addr == v)
			return ks_tbuf_put(b, p->printk[i].text, p->printk[i].len);
	return p->state >= 0 && p->nr_printk < PRINTK_CACHE ? 1 : -1;
}

/* ST_STR_DYN: __get_str(), the string where the field's offset (and
 * length) word says. */
static inline int run_str_dyn(const struct ks_plan *p, const struct step *s, const uint8_t *data,
			      int size, struct ks_tbuf *b)
{
	unsigned int o, l;
	const uint8_t *end;
	uint64_t v;

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

/* ST_STR_ARRAY: a char array field, up to its NUL. */
static inline int run_str_array(const struct step *s, const uint8_t *data, int size,
				struct ks_tbuf *b)
{
	const uint8_t *str = data + s->field->offset, *end;

	if (!inside(s->field, size))
		return -1;
	end = memchr(str, 0, (size_t)s->field->size);
	return put_str(b, s, (const char *)str, end ? (size_t)(end - str) : (size_t)s->field->size);
}

/* ST_SYMBOL: __print_symbolic() of V: the entry's name, else 0x... */
static inline int put_symbol(struct ks_tbuf *b, const struct step *s, uint64_t v)
{
	int i;

	for (i = 0; i < s->nr_syms; i++)
		if (v == (uint64_t)s->syms[i].value)
			return put_str(b, s, s->syms[i].str, strlen(s->syms[i].str));
	return put_hex_ll(b, v);
}

/* ST_FLAGS: __print_flags() of V: the names of its flags between the
 * delimiters, then what is left in hex (a value of 0: a name for it). */
static inline int put_flags(struct ks_tbuf *b, const struct step *s, uint64_t v)
{
	int i, printed = 0;

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

/* The steps that print their number's value V. */
static inline int put_value(const struct ks_plan *p, const struct step *s, uint64_t v,
			    struct ks_tbuf *b)
{
	switch (s->kind) {
	case ST_PRINTF:
		return put_printf(b, s, v);
	case ST_PTR:
		return put_ptr(b, v);
	case ST_FUNC:
		return put_func(p, b, v, s->offset);
	case ST_SYMBOL:
		return put_symbol(b, s, v);
	case ST_FLAGS:
		return put_flags(b, s, v);
	default:
		return -1;
	}
}

int ks_plan_run_step(const struct ks_plan *p, const struct step *s, const uint8_t *data, int size,
		     struct ks_tbuf *b)
{
	uint64_t v;

	switch (s->kind) {
	case ST_LIT:
		return ks_tbuf_put(b, s->lit, s->lit_len);
	case ST_INT:
		return run_int(p, s, data, size, b);
	case ST_STR_DYN:
		return run_str_dyn(p, s, data, size, b);
	case ST_STR_ARRAY:
		return run_str_array(s, data, size, b);
	case ST_PRINTK:
		return run_printk(p, s, data, size, b);
	case ST_STR_COND:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return ks_plan_run_step(p, v ? s->yes : s->no, data, size, b);
	case ST_PRINTF:
	case ST_PTR:
	case ST_FUNC:
	case ST_SYMBOL:
	case ST_FLAGS:
		if (eval(p, s->ex, data, size, &v) < 0)
			return -1;
		return put_value(p, s, v, b);
	}
	return -1;
}

int ks_plan_run(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	size_t start = b->len;
	int i, r;

	if (p->kvm)
		return ks_plan_run_kvm(p, data, size, b);
	if (p->handler) {
		if (p->state <= 0)
			return p->state < 0 ? -1 : 1;
		if (ks_plan_run_handler(p, data, size, b) < 0) {
			b->len = start;
			return -1;
		}
		return 0;
	}
	if (p->state < 0)
		return -1;
	for (i = 0; i < p->nr; i++)
		if ((r = ks_plan_run_step(p, &p->steps[i], data, size, b)) != 0) {
			b->len = start;
			return r < 0 ? -1 : 1;
		}
	return 0;
}
