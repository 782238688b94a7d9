/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_threads.c - the stat engine's host threads: their table (in chunks
 * that never move, with the direct-mapped cache of stat_impl.h in front),
 * their names (COMM records, a trace.dat's saved cmdlines), their
 * lifetimes (EXIT and FORK records end one) and their VM and vCPU, as the
 * host model or the engine's own attribution says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "stat_impl.h"

static struct comm *comm_slot(struct ks_stat *st, int32_t tid, bool create);

/* A new thread's memory (zeroed), from the chunks; NULL if out of memory. */
static struct thread *thread_alloc(struct ks_stat *st)
{
	size_t i = st->threads_used % THREAD_CHUNK;

	if (i == 0 && st->threads_used / THREAD_CHUNK == st->nchunks) {
		unsigned char **c = realloc(st->chunks, (st->nchunks + 1) * sizeof(*c));

		if (!c)
			return NULL;
		st->chunks = c;
		c[st->nchunks] = calloc(THREAD_CHUNK, st->thread_size);
		if (!c[st->nchunks])
			return NULL;
		st->nchunks++;
	}
	return (struct thread *)(void *)(st->chunks[st->threads_used / THREAD_CHUNK] +
					 i * st->thread_size);
}

static struct thread *thread_at(const struct ks_stat *st, size_t i)
{
	return (struct thread *)(void *)(st->chunks[i / THREAD_CHUNK] +
					 (i % THREAD_CHUNK) * st->thread_size);
}

static void thread_reset(struct ks_stat *st, struct thread *t, int32_t tid)
{
	memset(t, 0, st->thread_size);
	t->tid = tid;
	t->vm = -1;
	t->vcpu = -1;
	ks_attr_thread_init(&t->attr, tid);
}

/* thread_of() behind a cache miss: the table's thread of TID, created
 * if needed (REC: the record asking, for the budget's error); fills the
 * cache SLOT. */
struct thread *stat_thread_lookup(struct ks_stat *st, int32_t tid, const struct ks_record *rec,
				  struct thread **slot)
{
	struct thread **v, *t;
	struct comm *c;
	bool created;
	char hint[96];

	v = ks_hmap_get(&st->threads, (uint32_t)tid);
	if (v)
		return *slot = *v;
	if (st->failed)
		goto spare;
	if (st->threads_used >= st->max_threads) {
		ks_limit_hint(hint, sizeof(hint), "threads", st->max_threads);
		stat_fail(st, rec, "more distinct threads than the budget allows %s", hint);
		goto spare;
	}
	t = thread_alloc(st);
	v = t ? ks_hmap_put(&st->threads, (uint32_t)tid, &created) : NULL;
	if (!v) {
		stat_fail(st, NULL, "%s", "out of memory");
		goto spare;
	}
	*v = t;
	st->threads_used++;
	free(st->attr_sorted); /* lists the threads there were */
	st->attr_sorted = NULL;
	thread_reset(st, t, tid);
	c = comm_slot(st, tid, false);
	if (c)
		ks_attr_set_comm(&t->attr, c->name);
	return *slot = t;
spare:
	/* not cached: the engine has failed and counts nothing more */
	thread_reset(st, st->spare_thread, tid);
	return st->spare_thread;
}

/* Names the input's saved cmdlines know (trace.dat), for threads without
 * a COMM record. */
void stat_comm_from_tep(const struct ks_stat *st, struct thread *t, const struct tep_event *ev)
{
	const char *name;

	if (t->attr.comm[0] || t->reused || !ev || !ev->tep)
		return;
	ks_source_tep_comms(st->src); /* parsed on this first lookup */
	name = tep_data_comm_from_pid(ev->tep, t->tid);
	if (name && strcmp(name, "<...>") && strcmp(name, "<idle>"))
		ks_attr_set_comm(&t->attr, name);
}

/* The thread of TID if it exists (no creation). */
struct thread *stat_thread_find(const struct ks_stat *st, int32_t tid)
{
	struct thread *const *v = ks_hmap_get(&st->threads, (uint32_t)tid);

	return v ? *v : NULL;
}

/* Thread TID ended: keep its attribution as a lifetime, start it afresh. */
static void retire_thread(struct ks_stat *st, int32_t tid)
{
	struct thread *t = tid > 0 ? stat_thread_find(st, tid) : NULL;
	struct comm *c;

	if (!t)
		return;
	if (t->attr.events) {
		if (st->nretired == st->retired_cap) {
			size_t cap = st->retired_cap ? st->retired_cap * 2 : 16;
			struct ks_attr_thread *n = realloc(st->retired, cap * sizeof(*n));

			if (!n) {
				stat_fail(st, NULL, "%s", "out of memory");
				return;
			}
			st->retired = n;
			st->retired_cap = cap;
		}
		st->retired[st->nretired++] = t->attr;
		free(st->attr_sorted);
		st->attr_sorted = NULL;
	}
	thread_reset(st, t, tid);
	t->reused = true;
	c = comm_slot(st, tid, false);
	if (c)
		c->name[0] = '\0';
}

/* The name of TID, created (empty) if CREATE; NULL if absent or out of
 * memory.  Valid until the next creation. */
static struct comm *comm_slot(struct ks_stat *st, int32_t tid, bool create)
{
	struct comm *c;
	bool created;

	if (!create)
		return ks_hmap_get(&st->comms, (uint32_t)tid);
	c = ks_hmap_put(&st->comms, (uint32_t)tid, &created);
	if (!c)
		stat_fail(st, NULL, "%s", "out of memory");
	else
		c->tid = tid;
	return c;
}

const char *ks_stat_comm(const struct ks_stat *st, int32_t tid)
{
	struct comm *c = tid > 0 ? comm_slot((struct ks_stat *)st, tid, false) : NULL;

	return c ? c->name : NULL;
}

/* The thread's VM and vCPU as rows see them: the host model's when the
 * engine has one (cfg.host), else its own. */
void stat_update_attribution(struct ks_stat *st, struct thread *t)
{
	const struct ks_attr_thread *a;

	if (st->cfg.perf_compat)
		return;
	ks_attr_resolve(&t->attr, &st->guests);
	a = st->cfg.host ? ks_host_find(st->cfg.host, t->tid) : NULL;
	if (!a)
		a = &t->attr;
	t->vcpu = a->vcpu;
	t->vm = a->vm;
}

static void handle_comm(struct ks_stat *st, const struct ks_record *rec)
{
	struct comm *c;
	struct thread *t;

	if (rec->tid <= 0 || !rec->comm)
		return;
	c = comm_slot(st, rec->tid, true);
	if (!c)
		return;
	snprintf(c->name, sizeof(c->name), "%s", rec->comm);
	t = thread_of(st, rec, rec->tid);
	ks_attr_set_comm(&t->attr, rec->comm);
	if (rec->pid > 0) {
		t->vm = rec->pid;
		t->attr.tgid = rec->pid;
	}
	stat_update_attribution(st, t);
}

/* Records other than events: names, task lifetimes, losses. */
void stat_add_other(struct ks_stat *st, const struct ks_record *rec)
{
	struct thread *t;

	switch (rec->type) {
	case KS_REC_COMM:
		handle_comm(st, rec);
		break;
	case KS_REC_EXIT:
		/* perf kvm stat report handles no EXIT or FORK record (its tool
		 * has only sample, comm and namespaces): a reused tid goes on as
		 * the same thread there, pending exit and vCPU included. */
		if (!st->cfg.perf_compat)
			retire_thread(st, rec->tid);
		break;
	case KS_REC_FORK:
		t = rec->tid > 0 && !st->cfg.perf_compat ? stat_thread_find(st, rec->tid) : NULL;
		if (t && t->attr.events)
			retire_thread(st, rec->tid); /* tid reused, its EXIT unseen */
		if (rec->tid > 0 && rec->pid > 0) {
			t = thread_of(st, rec, rec->tid);
			t->vm = rec->pid;
			t->attr.tgid = rec->pid;
			stat_update_attribution(st, t);
		}
		break;
	case KS_REC_LOST:
		st->anomalies.lost_events += rec->lost;
		break;
	default:
		break;
	}
}

size_t ks_stat_attribution(const struct ks_stat *cst, const struct ks_attr_thread ***out)
{
	struct ks_stat *st = (struct ks_stat *)cst;
	size_t i;

	if (!st->attr_sorted) {
		st->attr_sorted = stat_calloc(st, st->threads_used + st->nretired + 1,
					    sizeof(*st->attr_sorted));
		st->nattr = 0;
		if (!st->attr_sorted) { /* ks_stat_error() says so */
			*out = NULL;
			return 0;
		}
		for (i = 0; i < st->nretired; i++)
			st->attr_sorted[st->nattr++] = &st->retired[i];
		for (i = 0; i < st->threads_used; i++)
			if (thread_at(st, i)->tid && thread_at(st, i)->attr.events)
				st->attr_sorted[st->nattr++] = &thread_at(st, i)->attr;
		qsort(st->attr_sorted, st->nattr, sizeof(*st->attr_sorted), ks_attr_cmp);
	}
	*out = st->attr_sorted;
	return st->nattr;
}

void ks_stat_open(const struct ks_stat *st, int vi,
		  void (*fn)(void *ctx, const struct ks_stat_row *row, uint64_t begin_ns),
		  void *ctx)
{
	size_t i;

	if (vi < 0 || vi >= st->nviews)
		return;
	for (i = 0; i < st->threads_used; i++) {
		const struct thread *t = thread_at(st, i);

		if (t->tid && t->start && t->pending[vi])
			fn(ctx, t->pending[vi], t->start);
	}
}
