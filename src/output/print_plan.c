/*
 * print_plan.c - print formats compiled into steps (see print_plan.h).
 *
 * The compiler walks the format as libtraceevent 1.7's parse_args() does
 * (literal text with \n \t \r \\ escapes and %%, then one conversion per
 * argument) and accepts only conversions whose output it reproduces:
 *	%[-][0][W]{,h,hh,l,ll,z}{d,i,u,x,X} of a plain field (REC->x)
 *	%[-][W]s of __get_str(x), of a char array field,
 *	    of __print_symbolic(REC->x, ...) and __print_flags(REC->x, ...)
 * Anything else (casts, operators, pointers, %p, '#', '*', precisions,
 * helper functions, bprint events, events with a plugin handler) leaves the
 * event to libtraceevent.  The integer rules follow the library: the field
 * is read zero-extended, cut to the conversion's length (hh: 8 bits, h: 16,
 * none: 32, l/ll/z: 64) and printed signed for d/i, unsigned otherwise.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "print_plan.h"

enum step_kind { ST_LIT, ST_INT, ST_STR_DYN, ST_STR_ARRAY, ST_SYMBOL, ST_FLAGS };

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
};

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
	char tmp[24];
	int n = 0, neg = 0, len;

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
		/* constant divisors: multiplications, not divisions */
		while (v >= 10000) {
			unsigned r = (unsigned)(v % 10000);

			v /= 10000;
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + r % 10);
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + r / 10 % 10);
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + r / 100 % 10);
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + r / 1000);
		}
		do {
			tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
	}
	len = n + neg;
	if (left) {
		if ((neg && ks_tbuf_put(b, "-", 1) < 0) ||
		    ks_tbuf_put(b, tmp + sizeof(tmp) - n, (size_t)n) < 0)
			return -1;
		return pad(b, ' ', width - len);
	}
	if (zero) {
		if ((neg && ks_tbuf_put(b, "-", 1) < 0) || pad(b, '0', width - len) < 0)
			return -1;
	} else if (pad(b, ' ', width - len) < 0 || (neg && ks_tbuf_put(b, "-", 1) < 0)) {
		return -1;
	}
	return ks_tbuf_put(b, tmp + sizeof(tmp) - n, (size_t)n);
}

void ks_plan_free(struct ks_plan *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++) {
		free(p->steps[i].lit);
		free(p->steps[i].syms);
	}
	if (p->kvm)
		for (i = 0; i < p->kvm->nr_reasons; i++)
			free(p->kvm->reasons[i].text);
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
 * only plain numbers here (names like HI_SOFTIRQ are left to the library). */
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
		if (!f->value || !f->str || !isdigit((unsigned char)f->value[0]))
			return -1;
		s->syms[s->nr_syms].value = (long long)strtoull(f->value, NULL, 0);
		s->syms[s->nr_syms++].str = f->str;
	}
	return 0;
}

/* One conversion at F ('%'), consuming *ARG.  Returns the position after
 * it, or NULL when the plan cannot take it. */
static const char *compile_conv(struct ks_plan *p, struct tep_event *ev, const char *f,
				struct tep_print_arg **argp)
{
	struct tep_print_arg *arg = *argp;
	int left = 0, zero = 0, width = 0, ls = 0, nl = 0, nh = 0;
	struct tep_format_field *field;
	struct step *s;
	char conv;

	f++;
	for (; *f == '-' || *f == '0'; f++)
		*f == '-' ? (left = 1) : (zero = 1);
	for (; isdigit((unsigned char)*f); f++) {
		width = width * 10 + (*f - '0');
		if (width > 64)
			return NULL;
	}
	for (; *f == 'h' || *f == 'l' || *f == 'z'; f++) {
		if (*f == 'h')
			nh++, ls--;
		else if (*f == 'l')
			nl++, ls++;
		else
			nl = 3, ls = 1;
	}
	if ((nh && nl) || nh > 2 || (nl > 2 && nl != 3))
		return NULL;
	conv = *f++;
	if (!arg)
		return NULL;
	*argp = arg->next;
	if (left)
		zero = 0;
	switch (conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X':
		if (!(field = plain_field(ev, arg)) || !(s = add_step(p, ST_INT)))
			return NULL;
		s->field = field;
		s->bits = ls <= -2 ? 8 : ls == -1 ? 16 : ls == 0 ? 32 : 64;
		s->is_signed = conv == 'd' || conv == 'i';
		s->base = conv == 'x' || conv == 'X' ? 16 : 10;
		s->upper = conv == 'X';
		s->width = width;
		s->zero = zero;
		s->left = left;
		return f;
	case 's':
		if (ls || nh || nl || zero)
			return NULL;
		break;
	default:
		return NULL;
	}
	switch (arg->type) {
	case TEP_PRINT_STRING:
		if (!arg->string.string)
			return NULL;
		field = arg->string.field ? arg->string.field
					  : tep_find_any_field(ev, arg->string.string);
		if (!field || (field->size != 2 && field->size != 4) || !(s = add_step(p, ST_STR_DYN)))
			return NULL;
		break;
	case TEP_PRINT_FIELD:
		field = plain_field(ev, arg);
		/* a pointer-sized non-array is printed as a printk address */
		if (!field || (!(field->flags & TEP_FIELD_IS_ARRAY) &&
			       field->size == tep_get_long_size(ev->tep)))
			return NULL;
		if (!(s = add_step(p, ST_STR_ARRAY)))
			return NULL;
		break;
	case TEP_PRINT_SYMBOL:
		if (!(field = plain_field(ev, arg->symbol.field)) || !(s = add_step(p, ST_SYMBOL)) ||
		    sym_table(s, arg->symbol.symbols) < 0)
			return NULL;
		break;
	case TEP_PRINT_FLAGS:
		if (!(field = plain_field(ev, arg->flags.field)) || !(s = add_step(p, ST_FLAGS)) ||
		    sym_table(s, arg->flags.flags) < 0)
			return NULL;
		s->delim = arg->flags.delim;
		break;
	default:
		return NULL;
	}
	s->field = field;
	s->width = width;
	s->left = left;
	return f;
}

/* A number field the kvm plugin reads with tep_get_field_val(). */
static struct tep_format_field *num_field(struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	return f && (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
	       f->offset >= 0 ? f : NULL;
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
	struct ks_plan *p;
	struct kvm_plan *k;

	if (!ev->system || strcmp(ev->system, "kvm") ||
	    (strcmp(ev->name, "kvm_exit") && strcmp(ev->name, "kvm_entry")))
		return NULL;
	p = calloc(1, sizeof(*p));
	k = calloc(1, sizeof(*k));
	if (!p || !k) {
		free(p);
		free(k);
		return NULL;
	}
	p->tep = ev->tep;
	p->kvm = k;
	k->exit = !strcmp(ev->name, "kvm_exit");
	k->rip = num_field(ev, k->exit ? "guest_rip" : "rip");
	if (k->exit) {
		k->reason = num_field(ev, "exit_reason");
		k->isa = num_field(ev, "isa");
		k->info1 = num_field(ev, "info1");
		k->info2 = num_field(ev, "info2");
		if (!k->info1 || !k->info2)
			k->info1 = k->info2 = NULL;
		if (tep_find_field(ev, "isa") && !k->isa)
			k->rip = NULL; /* the plugin would fail to read it */
	} else {
		k->vcpu = num_field(ev, "vcpu_id");
	}
	if (!k->rip || (k->exit ? !k->reason : !k->vcpu)) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

struct ks_plan *ks_plan_compile(struct tep_event *ev)
{
	struct tep_print_arg *arg;
	struct ks_plan *p;
	const char *f;

	if (ev && ev->tep && ev->handler && !(ev->flags & TEP_EVENT_FL_NOHANDLE) &&
	    !(ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW)))
		return compile_kvm(ev);
	if (!ev || !ev->tep || !ev->print_fmt.format ||
	    (ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW)) ||
	    (ev->handler && !(ev->flags & TEP_EVENT_FL_NOHANDLE)))
		return NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->tep = ev->tep;
	arg = ev->print_fmt.args;
	f = ev->print_fmt.format;
	while (f && *f)
		f = *f == '%' && f[1] != '%' ? compile_conv(p, ev, f, &arg) : compile_literal(p, f);
	if (!f) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
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

static int run_step(const struct ks_plan *p, const struct step *s, const uint8_t *data, int size,
		    struct ks_tbuf *b)
{
	uint64_t v;
	int i, printed;

	switch (s->kind) {
	case ST_LIT:
		return ks_tbuf_put(b, s->lit, s->lit_len);
	case ST_INT:
		if (!inside(s->field, size))
			return -1; /* the library warns and prints 0 */
		v = tep_read_number(p->tep, data + s->field->offset, s->field->size);
		if (s->bits < 64) {
			v &= (1ull << s->bits) - 1;
			if (s->is_signed && (v >> (s->bits - 1)) & 1)
				v |= ~0ull << s->bits;
		}
		return ks_tbuf_int(b, v, s->is_signed, s->base, s->upper, s->width, s->zero,
				   s->left);
	case ST_STR_DYN: {
		unsigned int o, l;
		const uint8_t *end;

		if (!inside(s->field, size))
			return 0; /* the library prints nothing */
		v = tep_read_number(p->tep, data + s->field->offset, s->field->size);
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
		if (!inside(s->field, size))
			return -1;
		v = tep_read_number(p->tep, data + s->field->offset, s->field->size);
		for (i = 0; i < s->nr_syms; i++)
			if (v == (uint64_t)s->syms[i].value)
				return put_str(b, s, s->syms[i].str, strlen(s->syms[i].str));
		return put_hex_ll(b, v);
	case ST_FLAGS:
		if (!inside(s->field, size))
			return -1;
		v = tep_read_number(p->tep, data + s->field->offset, s->field->size);
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

static uint64_t num(const struct ks_plan *p, const struct tep_format_field *f, const uint8_t *data)
{
	return tep_read_number(p->tep, data + f->offset, f->size);
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
	int i;

	if (p->kvm)
		return run_kvm(p, data, size, b);
	for (i = 0; i < p->nr; i++)
		if (run_step(p, &p->steps[i], data, size, b) < 0) {
			b->len = start;
			return -1;
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

static bool int_sized(const struct tep_format_field *f)
{
	return f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
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

	if (!p || p->kvm)
		return -1;
	for (int i = 0; i < p->nr; i++) {
		const struct step *s = &p->steps[i];

		if (s->kind != ST_LIT && (!inside(s->field, size) ||
					  (s->kind != ST_STR_ARRAY && !int_sized(s->field))))
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
