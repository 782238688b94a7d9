/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmident.c - kvmscope record's task map in a trace.dat option: parse,
 * look up and build it (see kvmscope/vmident.h; src/output/vmident_text.c
 * writes it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/vmident.h"

static int task_cmp(const void *a, const void *b)
{
	const struct ks_vmident_task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static char *dup_clean(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	size_t i;

	if (!d)
		return NULL;
	for (i = 0; i < n; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	d[n] = 0;
	return d;
}

int ks_vmident_add_task(struct ks_vmident *v, int32_t tid, int32_t tgid)
{
	if (v->ntasks == v->task_cap) {
		size_t cap = v->task_cap ? 2 * v->task_cap : 64;
		struct ks_vmident_task *n = realloc(v->tasks, cap * sizeof(*n));

		if (!n)
			return -1;
		v->tasks = n;
		v->task_cap = cap;
	}
	v->tasks[v->ntasks++] = (struct ks_vmident_task){ tid, tgid };
	return 0;
}

const struct ks_source_proc *ks_vmident_proc(const struct ks_vmident *v, int32_t tgid)
{
	size_t i;

	for (i = 0; i < v->nprocs; i++)
		if (v->procs[i].tgid == tgid)
			return &v->procs[i];
	return NULL;
}

static int add_proc_n(struct ks_vmident *v, int32_t tgid, const char *comm, size_t ncomm,
		      const char *name, size_t nname)
{
	struct ks_source_proc *p;

	if (ks_vmident_proc(v, tgid))
		return 0;
	if (v->nprocs == v->proc_cap) {
		size_t cap = v->proc_cap ? 2 * v->proc_cap : 16;
		struct ks_source_proc *n = realloc(v->procs, cap * sizeof(*n));

		if (!n)
			return -1;
		v->procs = n;
		v->proc_cap = cap;
	}
	p = &v->procs[v->nprocs];
	p->tgid = tgid;
	p->comm = dup_clean(comm, ncomm);
	p->name = dup_clean(name, nname);
	if (!p->comm || !p->name) {
		free((char *)p->comm);
		free((char *)p->name);
		return -1;
	}
	v->nprocs++;
	return 0;
}

int ks_vmident_add_proc(struct ks_vmident *v, int32_t tgid, const char *comm, const char *name)
{
	struct ks_source_proc *p = (struct ks_source_proc *)ks_vmident_proc(v, tgid);
	char *c, *n;

	comm = comm ? comm : "";
	name = name ? name : "";
	if (!p)
		return add_proc_n(v, tgid, comm, strlen(comm), name, strlen(name));
	/* renamed (prctl, exec): the latest names */
	c = dup_clean(comm, strlen(comm));
	n = dup_clean(name, strlen(name));
	if (!c || !n) {
		free(c);
		free(n);
		return -1;
	}
	free((char *)p->comm);
	free((char *)p->name);
	p->comm = c;
	p->name = n;
	return 0;
}

int32_t ks_vmident_tgid(const struct ks_vmident *v, int32_t tid)
{
	struct ks_vmident_task key = { tid, 0 }, *t;

	if (!v->ntasks)
		return -1;
	t = bsearch(&key, v->tasks, v->ntasks, sizeof(key), task_cmp);
	return t ? t->tgid : -1;
}

void ks_vmident_free(struct ks_vmident *v)
{
	size_t i;

	for (i = 0; i < v->nprocs; i++) {
		free((char *)v->procs[i].comm);
		free((char *)v->procs[i].name);
	}
	free(v->procs);
	free(v->tasks);
	memset(v, 0, sizeof(*v));
}

/* A positive decimal pid at *P (up to END), then one separator SEP. */
static int pid_at(const char **p, const char *end, char sep, int32_t *out)
{
	int64_t n = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		n = n * 10 + (*s++ - '0');
		if (n > INT32_MAX)
			return -1;
	}
	if (n <= 0 || (sep && (s >= end || *s++ != sep)))
		return -1;
	*p = s;
	*out = (int32_t)n;
	return 0;
}

static int parse_line(struct ks_vmident *v, const char *s, const char *e)
{
	int32_t tid, tgid;
	const char *tab1, *tab2;

	if (e - s >= 2 && s[0] == 't' && s[1] == ' ') {
		s += 2;
		if (pid_at(&s, e, ' ', &tid) < 0 || pid_at(&s, e, 0, &tgid) < 0 || s != e)
			return 1;
		return ks_vmident_add_task(v, tid, tgid) < 0 ? -1 : 0;
	}
	if (e - s >= 2 && s[0] == 'p' && s[1] == ' ') {
		s += 2;
		if (pid_at(&s, e, '\t', &tgid) < 0)
			return 1;
		tab1 = memchr(s, '\t', (size_t)(e - s));
		if (!tab1)
			return 1;
		tab2 = memchr(tab1 + 1, '\t', (size_t)(e - tab1 - 1));
		if (tab2)
			return 1;
		return add_proc_n(v, tgid, s, (size_t)(tab1 - s), tab1 + 1,
				  (size_t)(e - tab1 - 1)) < 0 ? -1 : 0;
	}
	return 0; /* a later version's line kind */
}

int ks_vmident_parse(struct ks_vmident *v, const char *path, uint64_t at, const char *data,
		     size_t size, struct ks_error *err)
{
	static const char magic[] = "kvmscope-vmident 1\n";
	const char *p = data, *end = data + size, *nl;
	size_t i, k;
	int r;

	memset(v, 0, sizeof(*v));
	/* a trailing NUL (options are often strings) is allowed */
	if (size && !data[size - 1])
		end--;
	if ((size_t)(end - p) < sizeof(magic) - 1 || memcmp(p, magic, sizeof(magic) - 1))
		return ks_error_at(err, path, at, "task map option: no \"kvmscope-vmident 1\" line");
	p += sizeof(magic) - 1;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			ks_vmident_free(v);
			return ks_error_at(err, path, at + (uint64_t)(p - data),
					   "task map option: last line has no newline");
		}
		r = parse_line(v, p, nl);
		if (r) {
			ks_vmident_free(v);
			return r < 0 ? ks_error_code_at(err, KS_E_NOMEM, path, at, "out of memory")
				     : ks_error_at(err, path, at + (uint64_t)(p - data),
						   "task map option: malformed line");
		}
		p = nl + 1;
	}
	/* sorted, one entry per tid (the writer writes each tid once) */
	if (v->ntasks > 1)
		qsort(v->tasks, v->ntasks, sizeof(*v->tasks), task_cmp);
	for (i = k = 0; i < v->ntasks; i++) {
		if (!k || v->tasks[k - 1].tid != v->tasks[i].tid)
			v->tasks[k++] = v->tasks[i];
	}
	v->ntasks = k;
	return 0;
}
