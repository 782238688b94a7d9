/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_scan.c - printed text read back into a record: the inverse of
 * ks_plan_run(), for the plans of fields, strings and symbols
 * (ks_plan_scannable()).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "print_plan_impl.h"

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
