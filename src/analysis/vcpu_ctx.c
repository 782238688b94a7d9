/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcpu_ctx.c - the KVM events of each vCPU thread since its last entry
 * (see .h).
 */
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/stat.h"
#include "vcpu_ctx.h"

#define CTX_MAX 6          /* remembered events per thread */
#define CTX_PAYLOAD 256    /* payload bytes kept per event (kvm events are small) */

struct ctx_event {
	struct ks_record rec;
	uint8_t data[CTX_PAYLOAD];
};

struct thread_ctx {
	int32_t tid;
	bool seen;             /* noted since the last prune */
	uint32_t n;
	struct ctx_event ev[CTX_MAX];
};

void ks_vcpu_ctx_init(struct ks_vcpu_ctx *c, const struct ks_arch *arch, uint64_t max_threads)
{
	memset(c, 0, sizeof(*c));
	c->arch = arch;
	c->max_threads = max_threads;
	ks_hmap_init(&c->threads, sizeof(struct thread_ctx));
}

void ks_vcpu_ctx_reset(struct ks_vcpu_ctx *c, const struct ks_arch *arch)
{
	uint64_t max = c->max_threads;

	ks_vcpu_ctx_free(c);
	ks_vcpu_ctx_init(c, arch, max);
}

void ks_vcpu_ctx_free(struct ks_vcpu_ctx *c)
{
	ks_hmap_free(&c->threads);
}

static int thread_of(struct ks_vcpu_ctx *c, int32_t tid, bool create, struct thread_ctx **out)
{
	bool created;

	*out = NULL;
	if (tid <= 0)
		return 0;
	if (!create) {
		*out = ks_hmap_get(&c->threads, (uint64_t)tid);
		return 0;
	}
	if (c->max_threads && c->threads.len >= c->max_threads &&
	    !ks_hmap_get(&c->threads, (uint64_t)tid))
		return KS_VCTX_BUDGET;
	*out = ks_hmap_put(&c->threads, (uint64_t)tid, &created);
	if (!*out)
		return KS_VCTX_NOMEM;
	if (created)
		(*out)->tid = tid; /* the rest zeroed */
	return 0;
}

int ks_vcpu_ctx_note(struct ks_vcpu_ctx *c, const struct ks_record *rec)
{
	const struct ks_arch *a = c->arch;
	const struct tep_event *ev = rec->event;
	struct thread_ctx *t;
	struct ctx_event *ce;
	uint32_t size;
	int r;

	if (rec->type != KS_REC_EVENT || !ev || !a)
		return 0;
	/* what the event is, cached by its pointer: this runs for every record */
	{
		size_t k = ((uintptr_t)ev >> 4) % KS_VCTX_KINDS;

		if (c->kinds[k].ev != ev) {
			c->kinds[k].ev = ev;
			c->kinds[k].kvm = !strcmp(ev->system, a->entry_system);
			c->kinds[k].entry = c->kinds[k].kvm &&
					    (!strcmp(ev->name, a->entry_name) ||
					     (a->entry2_name && !strcmp(ev->name, a->entry2_name)));
		}
		if (!c->kinds[k].kvm)
			return 0;
		if ((r = thread_of(c, rec->tid, c->kinds[k].entry, &t)) < 0 || !t)
			return r;
		if (c->kinds[k].entry)
			t->n = 0;
		else if (t->n == CTX_MAX)
			t->n = CTX_MAX - 1; /* keep the entry and the latest ones */
	}
	t->seen = true;
	ce = &t->ev[t->n++];
	size = rec->size < CTX_PAYLOAD ? rec->size : CTX_PAYLOAD;
	ce->rec = *rec;
	memcpy(ce->data, rec->data, size);
	ce->rec.data = ce->data;
	ce->rec.size = size;
	ce->rec.comm = NULL;
	ce->rec.callchain = NULL;
	ce->rec.nr_callchain = 0;
	return 0;
}

void ks_vcpu_ctx_replay(struct ks_vcpu_ctx *c, struct ks_stat *st)
{
	struct thread_ctx *t;
	size_t pos = 0;
	uint64_t tid;

	while ((t = ks_hmap_next(&c->threads, &pos, &tid)))
		for (uint32_t j = 0; j < t->n; j++) {
			t->ev[j].rec.data = t->ev[j].data; /* the table may have moved */
			ks_stat_add(st, &t->ev[j].rec);
		}
}

int ks_vcpu_ctx_prune(struct ks_vcpu_ctx *c, bool (*keep)(void *arg, int32_t tid), void *arg)
{
	struct ks_hmap old = c->threads;
	const struct thread_ctx *o;
	size_t pos = 0;
	uint64_t tid;
	int r = 0;

	ks_hmap_init(&c->threads, sizeof(struct thread_ctx));
	while ((o = ks_hmap_next(&old, &pos, &tid))) {
		struct thread_ctx *t;

		if (!o->seen && keep && !keep(arg, o->tid))
			continue;
		if ((r = thread_of(c, o->tid, true, &t)) < 0)
			break;
		*t = *o;
		t->seen = false;
	}
	ks_hmap_free(&old);
	return r;
}
