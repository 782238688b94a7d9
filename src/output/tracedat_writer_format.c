/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_writer_format.c - an event's format text, as the kernel prints
 * it in events/SYSTEM/NAME/format, rebuilt from libtraceevent's parse
 * (for inputs that carry no format text: perf.data) (tracedat_writer_impl.h).
 */
#include "kvmscope/limits.h"
#include "tracedat_writer_impl.h"

/* ------------------------------------------------------------------ */
/* format text regenerated from libtraceevent's parse */

static bool is_number(const char *s)
{
	uint64_t u;
	int64_t i;
	size_t n = strlen(s);

	return ks_parse_u64(s, n, 0, &u) == 0 || ks_parse_i64(s, n, 0, &i) == 0;
}

/* libtraceevent keeps string tokens as written (escapes included), so they
 * go back between quotes unchanged. */
static void put_quoted(FILE *f, const char *s)
{
	fprintf(f, "\"%s\"", s);
}

static int put_arg(FILE *f, const struct tep_print_arg *a);

static void put_syms(FILE *f, const struct tep_print_flag_sym *s)
{
	for (; s; s = s->next) {
		fprintf(f, ", { %s, ", s->value);
		put_quoted(f, s->str);
		fputs(" }", f);
	}
}

static int put_args3(FILE *f, const char *fn, const struct tep_print_arg *a,
		     const struct tep_print_arg *b, const struct tep_print_arg *c)
{
	int r;

	fprintf(f, "%s(", fn);
	r = put_arg(f, a);
	if (b) {
		fputs(", ", f);
		r |= put_arg(f, b);
	}
	if (c) {
		fputs(", ", f);
		r |= put_arg(f, c);
	}
	fputc(')', f);
	return r;
}

static int put_op(FILE *f, const struct tep_print_arg_op *op)
{
	int r = 0;
	bool unary = !op->left || op->left->type == TEP_PRINT_NULL;

	if (!strcmp(op->op, "[")) {
		r |= put_arg(f, op->left);
		fputc('[', f);
		r |= put_arg(f, op->right);
		fputc(']', f);
		return r;
	}
	fputc('(', f);
	if (!strcmp(op->op, "?") && op->right && op->right->type == TEP_PRINT_OP &&
	    !strcmp(op->right->op.op, ":")) {
		r |= put_arg(f, op->left);
		fputs(" ? ", f);
		r |= put_arg(f, op->right->op.left);
		fputs(" : ", f);
		r |= put_arg(f, op->right->op.right);
	} else if (unary) {
		fputs(op->op, f);
		r |= put_arg(f, op->right);
	} else {
		r |= put_arg(f, op->left);
		fprintf(f, " %s ", op->op);
		r |= put_arg(f, op->right);
	}
	fputc(')', f);
	return r;
}

static const char *field_name(const struct tep_format_field *fl)
{
	return fl && fl->name ? fl->name : "";
}

/* Writes A in C syntax; returns -1 for what cannot be written back. */
static int put_arg(FILE *f, const struct tep_print_arg *a)
{
	if (!a)
		return -1;
	switch (a->type) {
	case TEP_PRINT_NULL:
		return 0;
	case TEP_PRINT_ATOM:
		if (is_number(a->atom.atom))
			fputs(a->atom.atom, f);
		else
			put_quoted(f, a->atom.atom);
		return 0;
	case TEP_PRINT_FIELD:
		fprintf(f, "REC->%s", a->field.name);
		return 0;
	case TEP_PRINT_FLAGS:
		fputs("__print_flags(", f);
		if (put_arg(f, a->flags.field) < 0)
			return -1;
		fputs(", ", f);
		put_quoted(f, a->flags.delim ? a->flags.delim : "");
		put_syms(f, a->flags.flags);
		fputc(')', f);
		return 0;
	case TEP_PRINT_SYMBOL:
		fputs("__print_symbolic(", f);
		if (put_arg(f, a->symbol.field) < 0)
			return -1;
		put_syms(f, a->symbol.symbols);
		fputc(')', f);
		return 0;
	case TEP_PRINT_HEX:
		return put_args3(f, "__print_hex", a->hex.field, a->hex.size, NULL);
	case TEP_PRINT_HEX_STR:
		return put_args3(f, "__print_hex_str", a->hex.field, a->hex.size, NULL);
	case TEP_PRINT_INT_ARRAY:
		return put_args3(f, "__print_array", a->int_array.field, a->int_array.count,
				 a->int_array.el_size);
	case TEP_PRINT_TYPE:
		fprintf(f, "((%s)", a->typecast.type);
		if (put_arg(f, a->typecast.item) < 0)
			return -1;
		fputc(')', f);
		return 0;
	case TEP_PRINT_STRING:
		fprintf(f, "__get_str(%s)", a->string.field ? field_name(a->string.field)
							    : a->string.string);
		return 0;
	case TEP_PRINT_BSTRING:
		put_quoted(f, a->string.string ? a->string.string : "");
		return 0;
	case TEP_PRINT_BITMASK:
		fprintf(f, "__get_bitmask(%s)", a->bitmask.field ? field_name(a->bitmask.field)
								 : a->bitmask.bitmask);
		return 0;
	case TEP_PRINT_CPUMASK:
		fprintf(f, "__get_cpumask(%s)", a->bitmask.field ? field_name(a->bitmask.field)
								 : a->bitmask.bitmask);
		return 0;
	case TEP_PRINT_DYNAMIC_ARRAY:
		fprintf(f, "__get_dynamic_array(%s)", field_name(a->dynarray.field));
		return 0;
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		fprintf(f, "__get_dynamic_array_len(%s)", field_name(a->dynarray.field));
		return 0;
	case TEP_PRINT_OP:
		return put_op(f, &a->op);
	default: /* TEP_PRINT_FUNC: the handler's name is not public */
		return -1;
	}
}

static void put_field(FILE *f, const struct tep_format_field *fl)
{
	const char *type = fl->type ? fl->type : "int";
	const char *br = strchr(type, '[');
	bool dyn = !strncmp(type, "__data_loc", 10) || !strncmp(type, "__rel_loc", 9);

	if (br && !dyn)
		fprintf(f, "\tfield:%.*s %s%s;", (int)(br - type), type, fl->name, br);
	else
		fprintf(f, "\tfield:%s %s;", type, fl->name);
	fprintf(f, "\toffset:%d;\tsize:%d;\tsigned:%d;\n", fl->offset, fl->size,
		(fl->flags & TEP_FIELD_IS_SIGNED) ? 1 : 0);
}

char *ks_tdw_format_text(const struct tep_event *ev)
{
	const struct tep_format_field *fl;
	const struct tep_print_arg *a;
	char *text = NULL;
	size_t len = 0;
	int bad = 0;
	FILE *f;

	if (!ev || !ev->name)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "name: %s\nID: %d\nformat:\n", ev->name, ev->id);
	for (fl = ev->format.common_fields; fl; fl = fl->next)
		put_field(f, fl);
	fputc('\n', f);
	for (fl = ev->format.fields; fl; fl = fl->next)
		put_field(f, fl);
	fputs("\nprint fmt: ", f);
	put_quoted(f, ev->print_fmt.format ? ev->print_fmt.format : "");
	for (a = ev->print_fmt.args; a; a = a->next) {
		fputs(", ", f);
		if (put_arg(f, a) < 0)
			bad = 1;
	}
	fputc('\n', f);
	if (fclose(f) != 0 || bad) {
		free(text);
		return NULL;
	}
	return text;
}

int ks_tdw_add_tep_formats(struct ks_tdw *w, struct tep_handle *tep, struct ks_error *err)
{
	struct tep_event **evs;
	size_t i;

	if (tdw_check_usable(w, err) < 0)
		return -1;
	evs = tep ? tep_list_events(tep, TEP_EVENT_SORT_ID) : NULL;
	for (i = 0; evs && evs[i]; i++) {
		char *text = ks_tdw_format_text(evs[i]);
		int r;
		if (!text)
			continue; /* not representable: the event stays unknown */
		r = ks_tdw_add_event_format(w, evs[i]->system, text, strlen(text), err);
		free(text);
		if (r < 0)
			return -1;
	}
	return 0;
}

