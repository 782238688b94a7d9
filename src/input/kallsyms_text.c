/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kallsyms_text.c - /proc/kallsyms text into a tep handle (see .h).
 *
 * libtraceevent 1.7 reads each line with
 *	sscanf(line, "%16llx %c %n%*s%n%*1[\t][%n%*s%n", ...)
 * which is most of the cost of opening a trace.dat with a guest's 200k
 * symbols.  The plain shape of every kernel's kallsyms line,
 *	ADDR TYPE NAME[\t[MODULE]]
 * is read here by hand: up to 16 hex digits (no sign, no 0x), blanks, one
 * character, blanks, a name, then a module if a tab and '[' follow.  A line
 * of any other shape (where sscanf's rules would need more care) hands the
 * whole text to tep_parse_kallsyms(), so the result is always the
 * library's.  Lines are split at '\n' and empty ones skipped, as strtok_r
 * does; 'A'/'a' symbols and '$' names are left out, as the library does.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kallsyms_text.h"
#include "util/hex.h"

struct ksym_line {
	unsigned long long addr;
	char type;
	char *func, *func_end;
	char *mod, *mod_end;    /* NULL: none */
};

/* isspace() of the C locale (kvmscope never sets another), inline */
static inline bool blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* LINE (no '\n') in the plain shape: true with L filled. */
static bool read_line(char *p, struct ksym_line *l)
{
	int n = 0, v;

	while (blank(*p))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return false;
	l->addr = 0;
	while ((v = ks_hexval(*p)) >= 0) {
		if (++n > 16)
			return false;
		l->addr = l->addr << 4 | (unsigned long long)v;
		p++;
	}
	if (!n)
		return false;
	while (blank(*p))
		p++;
	if (!*p)
		return false;
	l->type = *p++;
	while (blank(*p))
		p++;
	l->func = p;
	while (*p && !blank(*p))
		p++;
	if (p == l->func)
		return false;
	l->func_end = p;
	l->mod = l->mod_end = NULL;
	if (p[0] == '\t' && p[1] == '[') {
		char *m = p + 2, *e;

		while (blank(*m))
			m++;
		for (e = m; *e && !blank(*e); e++)
			;
		if (e > m) {
			l->mod = p + 2;
			l->mod_end = e - 1; /* the library drops the last character */
		}
	}
	return true;
}

/* A line read in the first pass: its name (and module) end in place. */
struct entry {
	unsigned long long addr;
	uint32_t func, mod;     /* offsets in the copy; mod 0: none */
};

/* Reads every line of COPY (LEN bytes; split and cut in place) into *OUT;
 * false at the first line of another shape. */
static bool read_all(char *copy, size_t len, struct entry **out, size_t *nr)
{
	size_t n = 0, cap = len / 32 + 64; /* lines are longer: no realloc() */
	struct entry *e = NULL;
	char *p = copy;

	while (*p) {
		char *nl = strchr(p, '\n');
		struct ksym_line l;

		if (nl)
			*nl = '\0';
		if (*p) {
			if (!read_line(p, &l))
				goto bad;
			if (l.func[0] != '$' && l.type != 'A' && l.type != 'a') {
				if (!e || n == cap) {
					struct entry *m;

					cap = e ? cap * 2 : cap;
					if (!(m = realloc(e, cap * sizeof(*e))))
						goto bad;
					e = m;
				}
				*l.func_end = '\0';
				if (l.mod)
					*l.mod_end = '\0';
				e[n].addr = l.addr;
				e[n].func = (uint32_t)(l.func - copy);
				e[n++].mod = l.mod ? (uint32_t)(l.mod - copy) : 0;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	*out = e;
	*nr = n;
	return true;
bad:
	free(e);
	return false;
}

int ks_parse_kallsyms(struct tep_handle *tep, const char *text)
{
	size_t len = strlen(text), n, i;
	struct entry *e;
	char *copy;

	if (len >= UINT32_MAX || !(copy = malloc(len + 1)))
		return tep_parse_kallsyms(tep, text);
	memcpy(copy, text, len + 1);
	if (!read_all(copy, len, &e, &n)) {
		free(copy);
		return tep_parse_kallsyms(tep, text);
	}
	for (i = 0; i < n; i++)
		tep_register_function(tep, copy + e[i].func, e[i].addr,
				      e[i].mod ? copy + e[i].mod : NULL);
	free(e);
	free(copy);
	return 0;
}

/* ---- the table without a tep handle ----
 *
 * libtraceevent keeps registered functions in a list (each new one at its
 * head), turns it into an array on the first lookup, in list order (the
 * last registered first), sorts that with qsort() by address only, ends it
 * with an entry of address 0, and bsearch()es it: an address matches the
 * entry whose address it equals or lies between it and the next entry's.
 * glibc's qsort() is a merge sort, stable (it falls back to another sort
 * only when it cannot get a buffer of the array's size): entries of one
 * address keep list order, the later line first.  That order, by address
 * then later line first, is built here by a merge sort of the lines that
 * skips merging runs already in order (kallsyms come in long sorted runs)
 * and compares inline; the same array, searched the same way, gives the
 * same names as trace-cmd prints.  The tests compare every line's address
 * with tep_parse_kallsyms() (tests/input/test_lazy_events.c, and the
 * fuzz_kallsyms target). */
struct fmap {              /* libtraceevent's struct func_map */
	unsigned long long addr;
	char *func;
	char *mod;
};

struct ks_ksym_table {
	char *copy;        /* the text, its names cut in place */
	struct fmap *map;  /* n entries, then the end entry */
	size_t n;
};

/* A before B: a lower address, or the same one and a later line (the
 * name further in the text). */
static inline bool entry_before(const struct entry *a, const struct entry *b)
{
	return a->addr < b->addr || (a->addr == b->addr && a->func > b->func);
}

/* Sort E[0, N) by entry_before (a total order: no two entries are equal);
 * TMP holds N / 2 entries. */
static void sort_entries(struct entry *e, struct entry *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	sort_entries(e, tmp, h);
	sort_entries(e + h, tmp, n - h);
	if (!entry_before(&e[h], &e[h - 1]))
		return; /* the halves are in order already */
	memcpy(tmp, e, h * sizeof(*e));
	while (i < h && j < n)
		e[k++] = entry_before(&e[j], &tmp[i]) ? e[j++] : tmp[i++];
	while (i < h)
		e[k++] = tmp[i++];
}

static int fmap_bcmp(const void *a, const void *b)
{
	const struct fmap *fa = a, *fb = b;

	if (fa->addr == fb->addr || (fa->addr > fb->addr && fa->addr < (fb + 1)->addr))
		return 0;
	if (fa->addr < fb->addr)
		return -1;
	return 1;
}

struct ks_ksym_table *ks_ksym_table_new(const char *text)
{
	size_t len = strlen(text), n, i;
	struct ks_ksym_table *t;
	struct entry *e, *tmp;

	if (len >= UINT32_MAX || len >= INT32_MAX || !(t = calloc(1, sizeof(*t))))
		return NULL;
	if (!(t->copy = malloc(len + 1))) {
		free(t);
		return NULL;
	}
	memcpy(t->copy, text, len + 1);
	if (!read_all(t->copy, len, &e, &n)) {
		ks_ksym_table_free(t);
		return NULL;
	}
	t->map = malloc((n + 1) * sizeof(*t->map));
	tmp = malloc((n / 2 + 1) * sizeof(*tmp));
	if (!t->map || !tmp) {
		free(tmp);
		free(e);
		ks_ksym_table_free(t);
		return NULL;
	}
	sort_entries(e, tmp, n);
	free(tmp);
	for (i = 0; i < n; i++)
		t->map[i] = (struct fmap){
			.addr = e[i].addr,
			.func = t->copy + e[i].func,
			.mod = e[i].mod ? t->copy + e[i].mod : NULL,
		};
	free(e);
	t->map[n] = (struct fmap){ 0 };
	t->n = n;
	return t;
}

const char *ks_ksym_table_find(const struct ks_ksym_table *t, unsigned long long addr,
			       unsigned long long *start)
{
	struct fmap key = { .addr = addr };
	const struct fmap *f = t->n ? bsearch(&key, t->map, t->n, sizeof(*t->map), fmap_bcmp) : NULL;

	if (!f)
		return NULL;
	*start = f->addr;
	return f->func;
}

void ks_ksym_table_free(struct ks_ksym_table *t)
{
	if (!t)
		return;
	free(t->map);
	free(t->copy);
	free(t);
}
