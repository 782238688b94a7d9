/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_compile.c - an event's print format compiled into steps.
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
 * handlers of a few plugins (kvm, sched, hrtimer, tlb, kmem: their own
 * files) and events whose format failed to parse ("[FAILED TO PARSE]" and
 * the fields: ks_plan_compile_failed()) are planned too.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "atom.h"
#include "print_plan_impl.h"

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
	ks_plan_expr_free(e);
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
/* A conversion's flags, width, precision and length, as
 * parse_arg_format() reads them. */
struct conv_spec {
	int left, zero, alt, width, prec;
	int ls;            /* length: hh -2, h -1, none 0, l z Z 1, ll L 2 */
	bool has_len;      /* any length modifier (%s takes none) */
	char conv;
};

/* The flags, width, precision and length modifier at F (after the '%')
 * into *C: the position of the conversion's letter, or NULL when the plan
 * cannot take them. */
static const char *conv_spec(const char *f, struct conv_spec *c)
{
	const char *lm;

	for (; *f == '-' || *f == '0' || *f == '#'; f++)
		*f == '-' ? (c->left = 1) : *f == '0' ? (c->zero = 1) : (c->alt = 1);
	for (; isdigit((unsigned char)*f); f++) {
		c->width = c->width * 10 + (*f - '0');
		if (c->width > 64)
			return NULL;
	}
	if (*f == '.') {
		for (c->prec = 0, f++; isdigit((unsigned char)*f); f++) {
			c->prec = c->prec * 10 + (*f - '0');
			if (c->prec > 64)
				return NULL;
		}
	}
	/* one of printf's length modifiers: h hh l ll L z Z (what glibc does
	 * with others differs from the library's ls) */
	lm = f;
	for (; *f == 'h' || *f == 'l' || *f == 'z' || *f == 'Z' || *f == 'L'; f++) {
		if (*f == 'h')
			c->ls--;
		else if (*f == 'l')
			c->ls++;
		else if (*f == 'L')
			c->ls = 2;
		else
			c->ls = 1;
	}
	if (f - lm > 2 || (f - lm == 2 && lm[0] != lm[1]) || (f - lm == 2 && lm[0] != 'h' && lm[0] != 'l'))
		return NULL;
	c->has_len = f > lm;
	return f;
}

/* %d %i %u %x %X %o of ARG (the conversion's text from START to F): a
 * number step. */
static const char *compile_int_conv(struct ks_plan *p, struct tep_event *ev,
				    struct tep_print_arg *arg, const struct conv_spec *c,
				    const char *start, const char *f)
{
	struct step *s;

	if (!(s = add_step(p, ST_INT)) || !(s->ex = compile_expr(ev, arg, 0)))
		return NULL;
	s->bits = c->ls <= -2 ? 8 : c->ls == -1 ? 16 : c->ls == 0 ? 32 : 64;
	if (c->alt || c->prec >= 0 || c->conv == 'o') {
		/* rare: printf itself, with the library's argument */
		s->kind = ST_PRINTF;
		s->bits = c->ls;
		if (!(s->fmt = strndup(start, (size_t)(f - start))))
			return NULL;
		p->extended = true;
		return f;
	}
	if (s->ex->kind == EX_FIELD)
		s->field = (struct tep_format_field *)s->ex->field;
	else
		p->extended = true;
	s->is_signed = c->conv == 'd' || c->conv == 'i';
	s->base = c->conv == 'x' || c->conv == 'X' ? 16 : 10;
	s->upper = c->conv == 'X';
	s->width = c->width;
	s->zero = c->zero;
	s->left = c->left;
	return f;
}

/* %p of ARG, or %ps %pS %pf %pF (F: after the 'p'). */
static const char *compile_ptr_conv(struct ks_plan *p, struct tep_event *ev,
				    struct tep_print_arg *arg, const char *f)
{
	struct step *s;

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
}

/* %[-][W]s of ARG. */
static const char *compile_str_conv(struct ks_plan *p, struct tep_event *ev,
				    struct tep_print_arg *arg, const struct conv_spec *c,
				    const char *f)
{
	struct step *s;

	if (c->has_len || c->zero || c->alt || c->prec >= 0 || !(s = add_step(p, ST_LIT)))
		return NULL;
	s->kind = ST_LIT; /* until compile_str says */
	s->width = c->width;
	s->left = c->left;
	return compile_str(p, ev, arg, s, true, 0) < 0 ? NULL : f;
}

/* One conversion at F ('%'), consuming *ARG, as parse_arg_format() reads
 * it.  Returns the position after it, or NULL when the plan cannot take it. */
static const char *compile_conv(struct ks_plan *p, struct tep_event *ev, const char *f,
				struct tep_print_arg **argp)
{
	struct tep_print_arg *arg = *argp;
	struct conv_spec c = { .prec = -1 };
	const char *start = f;

	if (!(f = conv_spec(f + 1, &c)))
		return NULL;
	c.conv = *f++;
	/* the library cuts a longer conversion to 31 bytes (and fails) */
	if (!arg || f - start > 30)
		return NULL;
	*argp = arg->next;
	if (c.left)
		c.zero = 0;
	switch (c.conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
		return compile_int_conv(p, ev, arg, &c, start, f);
	case 'p':
		return compile_ptr_conv(p, ev, arg, f);
	case 's':
		return compile_str_conv(p, ev, arg, &c, f);
	default:
		return NULL;
	}
}

/* The print format of EV into P's steps: 0, or -1 if the plan cannot take it. */
int ks_plan_compile_steps(struct ks_plan *p, struct tep_event *ev)
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
int ks_plan_compile_failed(struct ks_plan *p, struct tep_event *ev)
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
