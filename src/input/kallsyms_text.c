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

/* Reads every line of COPY (split and cut in place) into *OUT; false at the
 * first line of another shape. */
static bool read_all(char *copy, struct entry **out, size_t *nr)
{
	size_t n = 0, cap = 0;
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
				if (n == cap) {
					struct entry *m;

					cap = cap ? cap * 2 : 4096;
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
	if (!read_all(copy, &e, &n)) {
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
 * Entries of one address keep whatever order qsort leaves them in; the same
 * array in, the same qsort and comparison give the same order, hence the
 * same names, as trace-cmd prints them. */
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

static int fmap_cmp(const void *a, const void *b)
{
	const struct fmap *fa = a, *fb = b;

	if (fa->addr < fb->addr)
		return -1;
	if (fa->addr > fb->addr)
		return 1;
	return 0;
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
	struct entry *e;

	if (len >= UINT32_MAX || len >= INT32_MAX || !(t = calloc(1, sizeof(*t))))
		return NULL;
	if (!(t->copy = malloc(len + 1))) {
		free(t);
		return NULL;
	}
	memcpy(t->copy, text, len + 1);
	if (!read_all(t->copy, &e, &n)) {
		ks_ksym_table_free(t);
		return NULL;
	}
	if (!(t->map = malloc((n + 1) * sizeof(*t->map)))) {
		free(e);
		ks_ksym_table_free(t);
		return NULL;
	}
	for (i = 0; i < n; i++) /* list order: the last registered first */
		t->map[i] = (struct fmap){
			.addr = e[n - 1 - i].addr,
			.func = t->copy + e[n - 1 - i].func,
			.mod = e[n - 1 - i].mod ? t->copy + e[n - 1 - i].mod : NULL,
		};
	free(e);
	qsort(t->map, n, sizeof(*t->map), fmap_cmp);
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
