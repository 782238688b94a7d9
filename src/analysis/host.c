/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host.c - the host model: host threads -> VM and vCPU (see kvmscope/host.h).
 *
 * Built on attribution.c (the per-thread rules, shared with the stat
 * engine, which keeps its own per-thread state on its hot path).  What an
 * event says about a vCPU is found through the architecture table: its entry
 * event(s) and their vCPU field, the begin events of its classes (exits) and
 * their vCPU field.  Thread lifetimes follow stat: an EXIT record (or a FORK
 * of a tid that had events) keeps the ended lifetime and starts afresh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "util/hashmap.h"

enum { ROLE_NONE = 0, ROLE_ENTRY = 1, ROLE_EXIT = 2, ROLE_LOAD = 4, ROLE_PUT = 8,
       ROLE_KVM = 16 /* another event of the architecture's classes */ };

struct role {
	unsigned kind;
	struct ks_field vcpu;
};

struct ks_host {
	const struct ks_arch *arch;
	struct tep_handle *tep;          /* the source's: its saved cmdlines */
	struct ks_attr_guests guests;
	struct ks_hmap threads;          /* tid -> struct ks_attr_thread */
	struct ks_hmap roles;            /* struct tep_event * -> struct role */
	struct ks_attr_thread *retired;  /* ended lifetimes that had events */
	size_t nretired, retcap;
	const struct ks_attr_thread **sorted;
	size_t nsorted;
	bool sorted_ok;
	bool arch_tried;                 /* ks_arch_resolve() asked (arch was NULL) */
	char machine[32], cpuid[128];    /* what the source's header says */
	bool machine_from_events;
	uint64_t max_threads;            /* limits.threads: distinct tids kept */
	bool failed, over_budget;
};

struct ks_host *ks_host_new(const struct ks_arch *arch, const struct ks_source *src,
			    struct ks_error *err)
{
	struct ks_host *h = calloc(1, sizeof(*h));
	const struct ks_source_guest *guests = NULL;
	size_t nguests = src ? ks_source_guests(src, &guests) : 0;

	if (!h || ks_attr_guests_init(&h->guests, guests, nguests) < 0) {
		if (h)
			ks_attr_guests_free(&h->guests);
		free(h);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	ks_attr_guests_procs(&h->guests, src);
	h->arch = arch;
	h->tep = src ? ks_source_tep_comms(src) : NULL;
	if (src) {
		const struct ks_source_info *i = ks_source_info(src);

		snprintf(h->machine, sizeof(h->machine), "%s", i->arch);
		snprintf(h->cpuid, sizeof(h->cpuid), "%s", i->cpuid);
		h->machine_from_events = i->arch_from_events;
	}
	h->max_threads = ks_limits_or_default(NULL)->threads;
	ks_hmap_init(&h->threads, sizeof(struct ks_attr_thread));
	ks_hmap_init(&h->roles, sizeof(struct role));
	return h;
}

void ks_host_free(struct ks_host *h)
{
	if (!h)
		return;
	ks_attr_guests_free(&h->guests);
	ks_hmap_free(&h->threads);
	ks_hmap_free(&h->roles);
	free(h->retired);
	free(h->sorted);
	free(h);
}

void ks_host_set_limits(struct ks_host *h, const struct ks_limits *lim)
{
	h->max_threads = ks_limits_or_default(lim)->threads;
}

int ks_host_error_at(const struct ks_host *h, const char *file, const struct ks_record *rec,
		     struct ks_error *err)
{
	struct ks_error e;

	if (ks_host_error(h, &e) == 0)
		return 0;
	return ks_error_at(err, file ? file : "input", rec ? rec->offset : 0, "%s", e.msg);
}

int ks_host_error(const struct ks_host *h, struct ks_error *err)
{
	char hint[96];

	if (!h->failed)
		return 0;
	if (h->over_budget)
		return ks_error_code(err, KS_E_LIMIT, "more distinct threads than the budget allows %s",
				    ks_limit_hint(hint, sizeof(hint), "threads", h->max_threads));
	return ks_error_code(err, KS_E_NOMEM, "out of memory (host model)");
}

const struct ks_attr_guests *ks_host_guests(const struct ks_host *h)
{
	return &h->guests;
}

static bool named(const struct tep_event *ev, const char *system, const char *name)
{
	return system && name && !strcmp(ev->system, system) && !strcmp(ev->name, name);
}

/* ROLE_EXIT if EV begins a class of A, ROLE_KVM if another rule names it. */
static unsigned class_role(const struct ks_arch *a, const struct tep_event *ev)
{
	const struct ks_event_class *c;
	unsigned kind = ROLE_NONE;
	int i;

	for (c = a->classes; c && c->name; c++) {
		for (i = 0; i < KS_MAX_MATCH && c->begin[i].name; i++)
			if (named(ev, c->begin[i].system, c->begin[i].name))
				return ROLE_EXIT;
		for (i = 0; i < KS_MAX_MATCH && c->end[i].name; i++)
			if (named(ev, c->end[i].system, c->end[i].name))
				kind = ROLE_KVM;
		for (i = 0; i < KS_MAX_CHILD && c->child[i].name; i++)
			if (named(ev, c->child[i].system, c->child[i].name))
				kind = ROLE_KVM;
	}
	return kind;
}

static void init_role(const struct ks_host *h, struct role *r, struct tep_event *ev)
{
	const struct ks_arch *a = h->arch;

	memset(r, 0, sizeof(*r));
	if (named(ev, "kvm", "vcpu_load") || named(ev, "kvm", "kvm_vcpu_load")) {
		r->kind = ROLE_LOAD;
		if (ks_field_resolve(&r->vcpu, ev, "vcpu_id") < 0)
			ks_field_resolve(&r->vcpu, ev, "id");
		return;
	}
	if (named(ev, "kvm", "vcpu_put") || named(ev, "kvm", "kvm_vcpu_put")) {
		r->kind = ROLE_PUT;
		return;
	}
	if (!a)
		return;
	if (named(ev, a->entry_system, a->entry_name) ||
	    named(ev, a->entry_system, a->entry2_name)) {
		r->kind = ROLE_ENTRY;
		if (a->entry_vcpu_field)
			ks_field_resolve(&r->vcpu, ev, a->entry_vcpu_field);
	} else if ((r->kind = class_role(a, ev)) == ROLE_EXIT && a->exit_vcpu_field) {
		ks_field_resolve(&r->vcpu, ev, a->exit_vcpu_field);
	}
}

static const struct role *role_of(struct ks_host *h, struct tep_event *ev)
{
	struct role *r = ks_hmap_get(&h->roles, (uint64_t)(uintptr_t)ev);
	bool created;

	if (r)
		return r;
	r = ks_hmap_put(&h->roles, (uint64_t)(uintptr_t)ev, &created);
	if (!r)
		return NULL;
	init_role(h, r, ev);
	return r;
}

static struct ks_attr_thread *thread_get(struct ks_host *h, int32_t tid)
{
	struct ks_attr_thread *t = ks_hmap_get(&h->threads, (uint32_t)tid);
	bool created;

	if (t || h->failed)
		return t;
	if (ks_hmap_len(&h->threads) >= h->max_threads) {
		h->failed = h->over_budget = true;
		return NULL;
	}
	t = ks_hmap_put(&h->threads, (uint32_t)tid, &created);
	if (!t) {
		h->failed = true;
		return NULL;
	}
	ks_attr_thread_init(t, tid);
	h->sorted_ok = false;
	return t;
}

/* The thread's ended lifetime is kept; the tid starts afresh. */
static void retire(struct ks_host *h, int32_t tid)
{
	struct ks_attr_thread *t = ks_hmap_get(&h->threads, (uint32_t)tid);

	if (!t)
		return;
	if (!t->events)
		goto reset;
	if (h->nretired == h->retcap) {
		size_t cap = h->retcap ? 2 * h->retcap : 16;
		struct ks_attr_thread *n = realloc(h->retired, cap * sizeof(*n));

		if (!n) {
			h->failed = true;
			return;
		}
		h->retired = n;
		h->retcap = cap;
	}
	h->retired[h->nretired++] = *t;
	h->sorted_ok = false;
reset:
	ks_attr_thread_init(t, tid);
	t->reused = true;
}

static void comm_from_tep(struct ks_attr_thread *t, const struct tep_event *ev)
{
	const char *name;

	if (t->comm[0] || t->reused || !ev || !ev->tep)
		return;
	name = tep_data_comm_from_pid(ev->tep, t->tid);
	if (name && strcmp(name, "<...>") && strcmp(name, "<idle>"))
		ks_attr_set_comm(t, name);
}

static const struct ks_attr_thread *observe_event(struct ks_host *h, const struct ks_record *rec)
{
	const struct role *r;
	struct ks_attr_thread *t;

	if (!h->arch && !h->arch_tried && rec->event) {
		h->arch_tried = true;
		h->arch = ks_arch_resolve(NULL, h->machine, h->cpuid, h->machine_from_events,
					  rec->event->tep, NULL);
	}
	r = rec->event ? role_of(h, rec->event) : NULL;
	t = thread_get(h, rec->tid);
	bool ok = false;
	int32_t v;

	if (!t || (rec->event && !r))
		return NULL;
	/* KVM events and PMU samples count; other tracepoints only name */
	if (!r || r->kind != ROLE_NONE) {
		if (!t->events)
			h->sorted_ok = false;
		t->events++;
	}
	if (rec->pid > 0)
		t->tgid = rec->pid;
	comm_from_tep(t, rec->event);
	if (r && (r->kind & (ROLE_LOAD | ROLE_PUT))) {
		v = r->kind == ROLE_LOAD ? (int32_t)ks_field_read(&r->vcpu, rec->data, rec->size, &ok)
					 : -1;
		t->load_vcpu = ok ? v : -1;
	} else if (r && r->vcpu.present) {
		v = (int32_t)ks_field_read(&r->vcpu, rec->data, rec->size, &ok);
		if (ok)
			ks_attr_event_vcpu(t, v, r->kind == ROLE_EXIT);
	}
	ks_attr_resolve(t, &h->guests);
	return t;
}

const struct ks_attr_thread *ks_host_observe(struct ks_host *h, const struct ks_record *rec)
{
	struct ks_attr_thread *t;

	switch (rec->type) {
	case KS_REC_EVENT:
		return rec->tid > 0 ? observe_event(h, rec) : NULL;
	case KS_REC_COMM:
		if (rec->tid <= 0 || !rec->comm || !(t = thread_get(h, rec->tid)))
			return NULL;
		ks_attr_set_comm(t, rec->comm);
		if (rec->pid > 0)
			t->tgid = rec->pid;
		ks_attr_resolve(t, &h->guests);
		return NULL;
	case KS_REC_EXIT:
		if (rec->tid > 0)
			retire(h, rec->tid);
		return NULL;
	case KS_REC_FORK:
		if (rec->tid <= 0)
			return NULL;
		retire(h, rec->tid); /* tid reused, its EXIT unseen */
		if (rec->pid > 0 && (t = thread_get(h, rec->tid))) {
			t->tgid = rec->pid;
			ks_attr_resolve(t, &h->guests);
		}
		return NULL;
	default:
		return NULL;
	}
}

const struct ks_attr_thread *ks_host_find(const struct ks_host *h, int32_t tid)
{
	return tid > 0 ? ks_hmap_get(&h->threads, (uint32_t)tid) : NULL;
}

const char *ks_host_vm_name(const struct ks_host *h, int32_t vm)
{
	const struct ks_attr_thread *t;
	const char *name = NULL;
	uint32_t i;

	for (i = 0; i < h->guests.n; i++)
		if (h->guests.g[i].vm == vm)
			return h->guests.g[i].name;
	if (ks_attr_proc_name(&h->guests, vm))
		return ks_attr_proc_name(&h->guests, vm);
	t = ks_host_find(h, vm);
	if (t && t->comm[0])
		name = t->comm;
	else if (h->tep && vm > 0 && tep_is_pid_registered(h->tep, vm))
		name = tep_data_comm_from_pid(h->tep, vm); /* a process without events */
	/* a vCPU thread's name is not the VM's */
	return name && strcmp(name, "<...>") && ks_attr_vcpu_from_name(name) < 0 ? name : NULL;
}

char *ks_vm_label(char *buf, size_t len, int32_t vm, const char *name)
{
	if (vm < 0)
		snprintf(buf, len, "unknown");
	else if (name && *name)
		snprintf(buf, len, "%d(%s)", vm, name);
	else
		snprintf(buf, len, "%d", vm);
	return buf;
}

char *ks_host_vm_label(const struct ks_host *h, int32_t vm, char *buf, size_t len)
{
	return ks_vm_label(buf, len, vm, h && vm > 0 ? ks_host_vm_name(h, vm) : NULL);
}

char *ks_host_vcpu_label(const struct ks_host *h, int32_t vm, int32_t vcpu, char *buf,
			 size_t len)
{
	size_t n;

	ks_host_vm_label(h, vm, buf, len);
	n = strlen(buf);
	if (n < len)
		snprintf(buf + n, len - n, vcpu >= 0 ? " vCPU %d" : " vCPU ?", vcpu);
	return buf;
}

size_t ks_host_threads(struct ks_host *h, const struct ks_attr_thread ***out)
{
	const struct ks_attr_thread *t;
	size_t pos = 0, i;
	uint64_t key;

	if (!h->sorted_ok) {
		free(h->sorted);
		h->nsorted = 0;
		h->sorted = calloc(ks_hmap_len(&h->threads) + h->nretired + 1, sizeof(*h->sorted));
		if (!h->sorted) {
			h->failed = true;
			*out = NULL;
			return 0;
		}
		for (i = 0; i < h->nretired; i++)
			h->sorted[h->nsorted++] = &h->retired[i];
		while ((t = ks_hmap_next(&h->threads, &pos, &key)))
			if (t->events)
				h->sorted[h->nsorted++] = t;
		qsort(h->sorted, h->nsorted, sizeof(*h->sorted), ks_attr_cmp);
		h->sorted_ok = true;
	}
	*out = h->sorted;
	return h->nsorted;
}
