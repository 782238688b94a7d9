/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * timeline.c - vCPU state machine over a merged host+guest stream (see
 * timeline.h).  Used by `kvmscope timeline`; the outputs are in
 * src/output/perfetto.c and src/output/timeline_html.c.
 *
 * Host kvm_entry/kvm_exit/sched_switch drive the vCPU states; the guests'
 * sched_switch events (already on host time) tell which guest task is on
 * each vCPU, and every other guest event becomes an instant event.
 *
 * The intervals, CPU slices and guest tasks go to record logs (one per
 * list) that stay in memory up to limits.tables and spill to a temporary
 * file past it, so the memory of a timeline does not grow with its input.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "kvmscope/timeline.h"
#include "kvmscope/tracedat.h"
#include "util/hashmap.h"
#include "util/spill.h"

enum ev_kind { EV_OTHER, EV_ENTRY, EV_EXIT, EV_SWITCH, EV_WFX };

/* Fields of one event format, resolved once. */
struct ev_info {
	const struct tep_event *ev;
	int input;
	enum ev_kind kind;
	struct ks_field a, b, c;   /* switch: prev_pid, prev_state, next_pid */
	struct ks_arch_exit x;     /* exit: the architecture's exit rule */
	int32_t next_comm_off, next_comm_len;
};

struct tl_priv {
	struct ev_info *ev;
	uint32_t nr_ev, cap_ev;
	const struct ks_arch *arch; /* the host input's: entry, exit, halt events */
	int host_isa;
	struct ks_hmap vcpu_of;  /* host tid -> index into tl->vcpus (uint32_t) */
	struct ks_hmap vm_of;    /* host VM key -> index into tl->vms (uint32_t) */
	struct ks_host *host;    /* host threads -> VM, vCPU, names: the merge's */
	uint64_t max_threads;    /* limits.threads: vCPU threads tracked */
	bool failed;             /* over a budget (error), or out of memory */
	struct ks_error error;
	struct ks_spill sp;      /* the lists' budget and temporary file */
	struct ks_rlog lists[3]; /* enum ks_tl_list */
};

#define LIST_CHUNK (256u << 10)

static const size_t list_rsize[3] = {
	sizeof(struct ks_tl_interval), sizeof(struct ks_tl_cpu_slice),
	sizeof(struct ks_tl_guest_item),
};

struct ks_tl_cursor {
	struct ks_rlog_cur c;
};

struct ks_tl_cursor *ks_tl_cursor_new(const struct ks_timeline *tl, enum ks_tl_list which)
{
	const struct tl_priv *p = tl->priv;
	struct ks_tl_cursor *c = malloc(sizeof(*c));

	if (c)
		ks_rlog_cur_init(&c->c, &p->lists[which]);
	return c;
}

const void *ks_tl_cursor_next(struct ks_tl_cursor *c)
{
	return c ? ks_rlog_cur_next(&c->c) : NULL;
}

void ks_tl_cursor_free(struct ks_tl_cursor *c)
{
	if (c)
		ks_rlog_cur_free(&c->c);
	free(c);
}

/* Room for one more item of list WHICH; NULL when the run failed (out of
 * memory or disk: tl->oom, the reason in the pool). */
static void *list_push(struct ks_timeline *tl, enum ks_tl_list which)
{
	struct tl_priv *p = tl->priv;
	void *r;

	if (tl->oom)
		return NULL;
	r = ks_rlog_push(&p->lists[which]);
	if (!r)
		tl->oom = true;
	return r;
}

static const char *const state_names[KS_VS_COUNT] = {
	"RUNNING", "IDLE", "HOST", "HALTED", "PREEMPTED", "BLOCKED",
};

const char *ks_vstate_name(enum ks_vstate s)
{
	return (unsigned)s < KS_VS_COUNT ? state_names[s] : "?";
}

/* Grow an array of N elements of SIZE to hold one more. */
static void *grow(struct ks_timeline *tl, void *arr, uint64_t n, uint64_t *cap, size_t size)
{
	void *p;
	uint64_t c;

	if (n < *cap)
		return arr;
	if (tl->oom) /* the run ends at the first failure, no retry per event */
		return NULL;
	c = *cap ? *cap * 2 : 256;
	p = realloc(arr, c * size);
	if (!p) {
		tl->oom = true;
		return NULL;
	}
	*cap = c;
	return p;
}

static uint32_t intern(struct ks_timeline *tl, char ***arr, uint32_t *n, uint32_t *cap,
		       const char *s)
{
	uint32_t i;
	uint64_t c = *cap;
	void *p;

	if (tl->oom)
		return 0;
	for (i = *n; i-- > 0;)
		if (!strcmp((*arr)[i], s))
			return i;
	p = grow(tl, *arr, *n, &c, sizeof(char *));
	if (!p)
		return 0;
	*arr = p;
	*cap = (uint32_t)c;
	(*arr)[*n] = strdup(s);
	if (!(*arr)[*n]) {
		tl->oom = true;
		return 0;
	}
	return (*n)++;
}

static uint32_t name_id(struct ks_timeline *tl, const char *s)
{
	return intern(tl, &tl->names, &tl->nr_names, &tl->cap_names, s);
}

static uint16_t reason_id(struct ks_timeline *tl, const char *s)
{
	uint32_t id = intern(tl, &tl->reasons, &tl->nr_reasons, &tl->cap_reasons, s);
	return id > 0xffff ? 0 : (uint16_t)id;
}

struct ks_timeline *ks_timeline_new(struct ks_merge *m)
{
	struct ks_timeline *tl = calloc(1, sizeof(*tl));
	struct tl_priv *p = calloc(1, sizeof(*p));
	const struct ks_source_info *info;

	if (!tl || !p) {
		free(tl);
		free(p);
		return NULL;
	}
	p->host = ks_merge_host(m);
	tl->merge = m;
	tl->priv = p;
	ks_hmap_init(&p->vcpu_of, sizeof(uint32_t));
	ks_hmap_init(&p->vm_of, sizeof(uint32_t));
	p->max_threads = ks_source_limits(ks_merge_source(m, 0))->threads;
	ks_spill_init(&p->sp, ks_source_limits(ks_merge_source(m, 0))->tables);
	for (int k = 0; k < 3; k++)
		ks_rlog_init(&p->lists[k], &p->sp, list_rsize[k], LIST_CHUNK);
	tl->spill = &p->sp;
	tl->max_gevents = 100000;
	reason_id(tl, "");
	tl->no_data = name_id(tl, "(no guest data)");
	tl->no_task = name_id(tl, "(guest task unknown)");
	info = ks_source_info(ks_merge_source(m, 0));
	p->host_isa = ks_x86_isa_or_default(ks_x86_isa_from_cpuid(info->cpuid));
	p->arch = ks_arch_resolve(NULL, info->arch, info->cpuid, info->arch_from_events,
				  ks_source_tep(ks_merge_source(m, 0)), NULL);
	return tl;
}

void ks_timeline_free(struct ks_timeline *tl)
{
	uint32_t i;
	struct tl_priv *p;

	if (!tl)
		return;
	p = tl->priv;
	ks_hmap_free(&p->vcpu_of);
	ks_hmap_free(&p->vm_of);
	for (i = 0; i < tl->nr_names; i++)
		free(tl->names[i]);
	for (i = 0; i < tl->nr_reasons; i++)
		free(tl->reasons[i]);
	free(tl->names);
	free(tl->reasons);
	for (i = 0; i < tl->nr_vcpus; i++)
		free(tl->vcpus[i].pend);
	free(tl->vcpus);
	free(tl->vms);
	free(tl->gevents);
	free(tl->costs);
	if (p) {
		for (i = 0; i < 3; i++)
			ks_rlog_free(&p->lists[i]);
		ks_spill_free(&p->sp);
		free(p->ev);
	}
	free(p);
	free(tl);
}

/* ------------------------------------------------------------------ */
/* event formats */

static struct ev_info *ev_info(struct ks_timeline *tl, int input, const struct tep_event *ev)
{
	struct tl_priv *p = tl->priv;
	struct ev_info *e;
	uint64_t cap = p->cap_ev;
	uint32_t i;

	for (i = 0; i < p->nr_ev; i++)
		if (p->ev[i].ev == ev && p->ev[i].input == input)
			return &p->ev[i];
	e = grow(tl, p->ev, p->nr_ev, &cap, sizeof(*e));
	if (!e)
		return NULL;
	p->ev = e;
	p->cap_ev = (uint32_t)cap;
	e = &p->ev[p->nr_ev++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	e->input = input;
	e->next_comm_off = -1;
	if (!strcmp(ev->name, "sched_switch")) {
		struct tep_format_field *f = tep_find_field((struct tep_event *)ev, "next_comm");
		e->kind = EV_SWITCH;
		ks_field_resolve(&e->a, (struct tep_event *)ev, "prev_pid");
		ks_field_resolve(&e->b, (struct tep_event *)ev, "prev_state");
		ks_field_resolve(&e->c, (struct tep_event *)ev, "next_pid");
		if (f) {
			e->next_comm_off = f->offset;
			e->next_comm_len = f->size;
		}
	} else if (input == 0 && ks_arch_is_entry(p->arch, ev)) {
		e->kind = EV_ENTRY;
		if (p->arch->entry_vcpu_field)
			ks_field_resolve(&e->a, (struct tep_event *)ev, p->arch->entry_vcpu_field);
	} else if (input == 0 && ks_arch_exit_resolve(p->arch, (struct tep_event *)ev, &e->x)) {
		e->kind = EV_EXIT;
	} else if (input == 0 && ks_arch_is_halt_event(p->arch, ev)) {
		e->kind = EV_WFX;
	}
	return e;
}

/* ------------------------------------------------------------------ */
/* vCPUs and VMs */

static int find_vcpu(const struct ks_timeline *tl, int32_t tid)
{
	const struct tl_priv *p = tl->priv;
	const uint32_t *i = ks_hmap_get(&p->vcpu_of, (uint32_t)tid);

	return i ? (int)*i : -1;
}

/* The guest input whose GUEST option names TID, and its vCPU number. */
static int guest_of(const struct ks_timeline *tl, int32_t tid, uint32_t *vcpu)
{
	int i, n = ks_merge_nr_inputs(tl->merge);
	uint32_t v;

	for (i = 1; i < n; i++)
		for (v = 0; v < ks_merge_nr_vcpus(tl->merge, i); v++)
			if (ks_merge_vcpu_tid(tl->merge, i, v) == tid) {
				*vcpu = v;
				return i;
			}
	return -1;
}

/* "VM " and the host model's name of the VM (host.h: the one every
 * output uses); a guest trace the host does not name: its file name. */
static void vm_label(const struct ks_timeline *tl, struct ks_tl_vm *vm)
{
	const struct tl_priv *p = tl->priv;
	int32_t key = vm->key > 0 && vm->key <= INT32_MAX ? (int32_t)vm->key : -1;
	const char *name = key > 0 ? ks_host_vm_name(p->host, key) : NULL;
	char label[90];

	if (!name && vm->guest_input >= 0)
		name = ks_merge_name(tl->merge, vm->guest_input);
	ks_vm_label(label, sizeof(label), key, name);
	snprintf(vm->name, sizeof(vm->name), "VM %s", label);
}

static uint32_t vm_for(struct ks_timeline *tl, int guest, int64_t key)
{
	struct tl_priv *p = tl->priv;
	uint64_t cap = tl->nr_vms;
	struct ks_tl_vm *vm;
	uint32_t i, *slot = NULL;
	bool created;

	if (guest >= 0) { /* a few guest inputs */
		for (i = 0; i < tl->nr_vms; i++)
			if (tl->vms[i].guest_input == guest)
				return i;
	} else { /* one a host process: as many as the threads */
		slot = ks_hmap_put(&p->vm_of, (uint64_t)key, &created);
		if (!slot) {
			tl->oom = true;
			return 0;
		}
		if (!created)
			return *slot;
	}
	vm = realloc(tl->vms, (cap + 1) * sizeof(*vm));
	if (!vm) {
		if (slot)
			ks_hmap_del(&p->vm_of, (uint64_t)key);
		tl->oom = true;
		return 0;
	}
	if (slot)
		*slot = tl->nr_vms;
	tl->vms = vm;
	vm = &tl->vms[tl->nr_vms];
	memset(vm, 0, sizeof(*vm));
	vm->guest_input = guest;
	vm->key = key;
	vm_label(tl, vm);
	return tl->nr_vms++;
}

/* A new vCPU thread TID, seen in input IN at offset OFF. */
static int add_vcpu(struct ks_timeline *tl, int32_t tid, int64_t vcpu_id, int in, uint64_t off)
{
	struct tl_priv *p = tl->priv;
	struct tep_handle *tep = ks_source_tep_comms(ks_merge_source(tl->merge, 0));
	const struct ks_attr_thread *a;
	struct ks_tl_vcpu *v;
	const char *comm;
	uint32_t gv = 0, *slot;
	bool created;
	int g;

	if (tl->oom || p->failed)
		return -1;
	if (tl->nr_vcpus >= p->max_threads) {
		char hint[96];

		ks_error_code_at(&p->error, KS_E_LIMIT, ks_source_path(ks_merge_source(tl->merge, in)), off,
			    "more distinct vCPU threads than the budget allows %s",
			    ks_limit_hint(hint, sizeof(hint), "threads", p->max_threads));
		p->failed = true;
		return -1;
	}
	v = realloc(tl->vcpus, (tl->nr_vcpus + 1) * sizeof(*v));
	slot = v ? ks_hmap_put(&p->vcpu_of, (uint32_t)tid, &created) : NULL;
	if (v)
		tl->vcpus = v;
	if (!slot) {
		tl->oom = true;
		return -1;
	}
	*slot = tl->nr_vcpus;
	/* VM, vCPU and name as the host model has them; a thread seen only
	 * in a guest's stream keeps the vCPU the merge gives */
	a = ks_host_find(p->host, tid);
	comm = a && a->comm[0] ? a->comm : tep ? tep_data_comm_from_pid(tep, tid) : NULL;
	if (a && a->vcpu >= 0)
		vcpu_id = a->vcpu;
	g = guest_of(tl, tid, &gv);
	v = &tl->vcpus[tl->nr_vcpus];
	memset(v, 0, sizeof(*v));
	v->tid = tid;
	v->vcpu_id = g >= 0 ? gv : (uint32_t)(vcpu_id < 0 ? 0 : vcpu_id);
	v->gtask = -1;
	v->exit_task = -1;
	v->pend_task = -1;
	v->guest_cpu = -1;
	snprintf(v->comm, sizeof(v->comm), "%s", comm ? comm : "?");
	v->vm = vm_for(tl, g, a ? a->vm : (int64_t)tid - (int64_t)v->vcpu_id);
	return (int)tl->nr_vcpus++;
}

/* ------------------------------------------------------------------ */
/* intervals */

static void push_interval(struct ks_timeline *tl, uint32_t vi, uint64_t start, uint64_t end,
			  uint16_t state, uint16_t reason)
{
	struct ks_tl_vcpu *v = &tl->vcpus[vi];
	struct ks_tl_interval *iv;
	uint64_t dur = end - start;

	v->state_ns[state] += dur;
	if (dur > v->longest[state].dur) {
		v->longest[state].dur = dur;
		v->longest[state].start = start;
	}
	if (state == KS_VS_IDLE) {
		struct ks_tl_vm *vm = &tl->vms[v->vm];

		if (!vm->idle_seen || start > vm->idle_last)
			vm->idle_last = start;
		vm->idle_seen = true;
	}
	iv = list_push(tl, KS_TL_INTERVALS);
	if (!iv)
		return;
	tl->nr_iv++;
	iv->start = start;
	iv->end = end;
	iv->vcpu = vi;
	iv->state = state;
	iv->reason = reason;
}

static void set_state(struct ks_timeline *tl, uint32_t vi, uint64_t ts, uint16_t state,
		      uint16_t reason)
{
	struct ks_tl_vcpu *v = &tl->vcpus[vi];

	if (v->has_state && v->cur_state == state && v->cur_reason == reason)
		return;
	if (v->has_state && ts > v->since)
		push_interval(tl, vi, v->since, ts, v->cur_state, v->cur_reason);
	v->has_state = true;
	v->cur_state = state;
	v->cur_reason = reason;
	v->since = ts;
}

static uint16_t in_guest_state(const struct ks_tl_vcpu *v)
{
	return v->gtask >= 0 && v->gtask_idle ? KS_VS_IDLE : KS_VS_RUNNING;
}

static void add_cost(struct ks_timeline *tl, int32_t task, uint16_t reason, uint64_t ns,
		     uint64_t count)
{
	uint64_t cap = tl->cap_costs;
	struct ks_tl_cost *c;
	uint32_t i;

	if (task < 0)
		return;
	for (i = 0; i < tl->nr_costs; i++)
		if (tl->costs[i].task == (uint32_t)task && tl->costs[i].reason == reason) {
			tl->costs[i].ns += ns;
			tl->costs[i].count += count;
			return;
		}
	c = grow(tl, tl->costs, tl->nr_costs, &cap, sizeof(*c));
	if (!c)
		return;
	tl->costs = c;
	tl->cap_costs = (uint32_t)cap;
	c = &tl->costs[tl->nr_costs++];
	c->task = (uint32_t)task;
	c->reason = reason;
	c->ns = ns;
	c->count = count;
}

/* The pending costs of vCPU V go to TASK (its own task once the guest's
 * data went on past them, "(no guest data)" when it did not). */
static void settle(struct ks_timeline *tl, struct ks_tl_vcpu *v, int32_t task)
{
	uint32_t i;

	for (i = 0; i < v->nr_pend; i++)
		add_cost(tl, task, v->pend[i].reason, v->pend[i].ns, v->pend[i].count);
	v->nr_pend = 0;
	v->pend_task = -1;
}

/* The exit of vCPU VI from START to END (host ns) cost its guest task
 * what of it lies in the --time window.  The task is known only if the
 * guest's trace goes on past END: held until its next event says so. */
static void exit_cost(struct ks_timeline *tl, uint32_t vi, uint64_t start, uint64_t end)
{
	struct ks_tl_vcpu *v = &tl->vcpus[vi];
	const struct ks_tl_vm *vm = &tl->vms[v->vm];
	uint64_t cap = v->cap_pend;
	struct ks_tl_pend *pd;
	uint32_t i;

	/* an exit counts if it overlaps the window (one of no length if it
	 * lies in it), with the part inside */
	if ((tl->win_end && start >= tl->win_end) ||
	    (start < end ? end <= tl->win_start : start < tl->win_start))
		return;
	if (start < tl->win_start)
		start = tl->win_start;
	if (tl->win_end && end > tl->win_end)
		end = tl->win_end;
	if (vm->guest_input < 0)
		return; /* no guest trace, no task */
	if (v->exit_task == (int32_t)tl->no_data) {
		add_cost(tl, v->exit_task, v->exit_reason, end - start, 1);
		return;
	}
	if (v->nr_pend && v->pend_task != v->exit_task)
		settle(tl, v, v->pend_task);
	v->pend_task = v->exit_task;
	for (i = 0; i < v->nr_pend; i++)
		if (v->pend[i].reason == v->exit_reason) {
			v->pend[i].ns += end - start;
			v->pend[i].count++;
			return;
		}
	pd = grow(tl, v->pend, v->nr_pend, &cap, sizeof(*pd));
	if (!pd)
		return;
	tl->vms[v->vm].pending = true;
	v->pend = pd;
	v->cap_pend = (uint32_t)cap;
	pd = &v->pend[v->nr_pend++];
	pd->reason = v->exit_reason;
	pd->ns = end - start;
	pd->count = 1;
}

void ks_timeline_set_window(struct ks_timeline *tl, uint64_t start, uint64_t end)
{
	tl->win_start = start;
	tl->win_end = end;
}

static void push_cpu_slice(struct ks_timeline *tl, struct ks_tl_vcpu *v, uint32_t vi,
			   uint64_t end)
{
	struct ks_tl_cpu_slice *s = list_push(tl, KS_TL_CPU_SLICES);

	if (!s)
		return;
	tl->nr_cpu++;
	s->start = v->guest_since;
	s->end = end;
	s->cpu = v->guest_cpu;
	s->vcpu = vi;
}

/* ------------------------------------------------------------------ */
/* host events */

static void on_entry(struct ks_timeline *tl, const struct ev_info *e, const struct ks_record *rec)
{
	int vi = find_vcpu(tl, rec->tid);
	struct ks_tl_vcpu *v;

	if (vi < 0)
		vi = add_vcpu(tl, rec->tid, e->a.present ? (int64_t)ks_field_u64(&e->a, rec) : 0, 0,
			      rec->offset);
	if (vi < 0)
		return;
	v = &tl->vcpus[vi];
	/* a halt is the guest's own choice, not time it lost */
	if (v->exit_ts && !v->in_guest && !v->halted && rec->ts >= v->exit_ts)
		exit_cost(tl, (uint32_t)vi, v->exit_ts, rec->ts);
	v->exit_ts = 0;
	v->in_guest = true;
	v->halted = false;
	v->guest_since = rec->ts;
	v->guest_cpu = rec->cpu;
	set_state(tl, (uint32_t)vi, rec->ts, in_guest_state(v), 0);
}

/* The exit's reason name and whether it halts the vCPU, from src/arch. */
static const char *exit_name(const struct ks_timeline *tl, const struct ev_info *e,
			     const struct ks_record *rec, char *buf, size_t size, bool *halts,
			     bool *protected)
{
	const struct tl_priv *p = tl->priv;
	struct ks_key_ctx ctx;
	uint64_t key = ks_arch_exit_key(&e->x, rec->data, rec->size, p->host_isa, &ctx, NULL);

	ks_arch_exit_name(&e->x, &ctx, key, buf, size);
	*halts = ks_arch_exit_halts(p->arch, &ctx, key);
	*protected = p->arch && p->arch->exit_protected && p->arch->exit_protected(&ctx, key);
	return buf;
}

static void on_exit_event(struct ks_timeline *tl, const struct ev_info *e,
			  const struct ks_record *rec)
{
	int vi = find_vcpu(tl, rec->tid);
	struct ks_tl_vcpu *v;
	char buf[64];
	const char *name;
	bool halts, protected;

	if (vi < 0)
		return; /* an exit before the thread's first entry: state unknown */
	v = &tl->vcpus[vi];
	name = exit_name(tl, e, rec, buf, sizeof(buf), &halts, &protected);
	if (protected)
		tl->vms[v->vm].state_protected = true;
	if (v->in_guest)
		push_cpu_slice(tl, v, (uint32_t)vi, rec->ts);
	v->in_guest = false;
	v->exit_ts = rec->ts;
	v->exit_task = v->gtask >= 0 ? v->gtask
		     : (int32_t)(tl->vms[v->vm].guest_seen ? tl->no_task : tl->no_data);
	v->exit_reason = reason_id(tl, name);
	v->halted = halts;
	set_state(tl, (uint32_t)vi, rec->ts, v->halted ? KS_VS_HALTED : KS_VS_HOST, v->exit_reason);
}

static void on_wfx(struct ks_timeline *tl, const struct ks_record *rec)
{
	int vi = find_vcpu(tl, rec->tid);

	if (vi < 0)
		return;
	tl->vcpus[vi].halted = true;
	set_state(tl, (uint32_t)vi, rec->ts, KS_VS_HALTED, reason_id(tl, rec->event->name));
}

static void on_host_switch(struct ks_timeline *tl, const struct ev_info *e,
			   const struct ks_record *rec)
{
	int prev = find_vcpu(tl, (int32_t)ks_field_u64(&e->a, rec));
	int next = find_vcpu(tl, (int32_t)ks_field_u64(&e->c, rec));

	if (prev >= 0 && !tl->vcpus[prev].in_guest && !tl->vcpus[prev].halted) {
		bool runnable = (ks_field_u64(&e->b, rec) & 0xff) == 0;
		set_state(tl, (uint32_t)prev, rec->ts, runnable ? KS_VS_PREEMPTED : KS_VS_BLOCKED,
			  tl->vcpus[prev].exit_reason);
	}
	if (next >= 0 && !tl->vcpus[next].in_guest && !tl->vcpus[next].halted)
		set_state(tl, (uint32_t)next, rec->ts, KS_VS_HOST, tl->vcpus[next].exit_reason);
}

/* ------------------------------------------------------------------ */
/* guest events */

static void push_gitem(struct ks_timeline *tl, struct ks_tl_guest_item **arr, uint64_t *n,
		       uint64_t *cap, uint32_t vi, uint64_t start, uint64_t end, uint32_t name)
{
	struct ks_tl_guest_item *g = grow(tl, *arr, *n, cap, sizeof(*g));

	if (!g)
		return;
	*arr = g;
	g = &(*arr)[(*n)++];
	g->start = start;
	g->end = end;
	g->vcpu = vi;
	g->name = name;
}

static void push_gtask(struct ks_timeline *tl, uint32_t vi, uint64_t start, uint64_t end,
		       uint32_t name)
{
	struct ks_tl_guest_item *g = list_push(tl, KS_TL_GUEST_TASKS);

	if (!g)
		return;
	tl->nr_gtasks++;
	g->start = start;
	g->end = end;
	g->vcpu = vi;
	g->name = name;
}

static void on_guest_switch(struct ks_timeline *tl, uint32_t vi, const struct ev_info *e,
			    const struct ks_record *rec)
{
	struct ks_tl_vcpu *v = &tl->vcpus[vi];
	char name[64], comm[32] = "";
	uint32_t pid = (uint32_t)ks_field_u64(&e->c, rec);

	if (e->next_comm_off >= 0 && e->next_comm_len > 0 &&
	    (uint64_t)e->next_comm_off + (uint64_t)e->next_comm_len <= rec->size) {
		size_t n = (size_t)e->next_comm_len < sizeof(comm) - 1 ? (size_t)e->next_comm_len
								      : sizeof(comm) - 1;
		memcpy(comm, (const char *)rec->data + e->next_comm_off, n);
		comm[n] = 0;
	}
	if (v->gtask >= 0 && rec->ts > v->gtask_since)
		push_gtask(tl, vi, v->gtask_since, rec->ts, (uint32_t)v->gtask);
	snprintf(name, sizeof(name), "%s-%u", comm[0] ? comm : "?", pid);
	v->gtask = (int32_t)name_id(tl, name);
	v->gtask_idle = pid == 0;
	v->gtask_since = rec->ts;
	if (v->in_guest)
		set_state(tl, vi, rec->ts, in_guest_state(v), 0);
}

/* Events of VM's guest trace went on to TS: the tasks of the exits held
 * are known. */
static void guest_data(struct ks_timeline *tl, uint32_t vm, uint64_t ts)
{
	struct ks_tl_vm *m = &tl->vms[vm];
	uint32_t i;

	m->guest_seen = true;
	m->guest_last = ts;
	if (!m->pending)
		return;
	for (i = 0; i < tl->nr_vcpus; i++)
		if (tl->vcpus[i].vm == vm && tl->vcpus[i].nr_pend)
			settle(tl, &tl->vcpus[i], tl->vcpus[i].pend_task);
	m->pending = false;
}

/* The guest's vCPU VI lost events before TS: its task is unknown from its
 * last event on until its next sched_switch. */
static void guest_lost(struct ks_timeline *tl, uint32_t vi)
{
	struct ks_tl_vcpu *v = &tl->vcpus[vi];

	settle(tl, v, (int32_t)tl->no_data);
	if (v->gtask >= 0 && v->glast > v->gtask_since)
		push_gtask(tl, vi, v->gtask_since, v->glast, (uint32_t)v->gtask);
	v->gtask = -1;
	v->gtask_idle = false;
	if (v->in_guest)
		set_state(tl, vi, v->glast > v->since ? v->glast : v->since, KS_VS_RUNNING, 0);
}

static void on_guest(struct ks_timeline *tl, const struct ks_merge_rec *r, struct ev_info *e)
{
	int vi = r->host_tid >= 0 ? find_vcpu(tl, r->host_tid) : -1;

	if (vi < 0 && r->host_tid >= 0)
		vi = add_vcpu(tl, r->host_tid, r->vcpu, r->input, r->rec->offset);
	if (vi < 0)
		return;
	if (r->rec->type == KS_REC_LOST) {
		guest_lost(tl, (uint32_t)vi);
		return;
	}
	guest_data(tl, tl->vcpus[vi].vm, r->rec->ts);
	tl->vcpus[vi].glast = r->rec->ts;
	if (e->kind == EV_SWITCH) {
		on_guest_switch(tl, (uint32_t)vi, e, r->rec);
		return;
	}
	if (tl->nr_gevents >= tl->max_gevents) {
		tl->dropped_gevents++;
		return;
	}
	push_gitem(tl, &tl->gevents, &tl->nr_gevents, &tl->cap_gevents, (uint32_t)vi, r->rec->ts,
		   r->rec->ts, name_id(tl, e->ev->name));
}

void ks_timeline_feed(struct ks_timeline *tl, const struct ks_merge_rec *r)
{
	const struct ks_record *rec = r->rec;
	struct tl_priv *p = tl->priv;
	struct ev_info *e;

	/* the merge's host model has seen REC already */
	if (rec->type == KS_REC_LOST && r->input > 0 && !tl->oom && !p->failed) {
		on_guest(tl, r, NULL);
		return;
	}
	if (rec->type != KS_REC_EVENT || !rec->event || tl->oom || p->failed)
		return;
	if (!tl->have_ts) {
		tl->first_ts = rec->ts;
		tl->have_ts = true;
	}
	if (rec->ts > tl->last_ts)
		tl->last_ts = rec->ts;
	e = ev_info(tl, r->input, rec->event);
	if (!e)
		return;
	if (r->input > 0) {
		on_guest(tl, r, e);
		return;
	}
	switch (e->kind) {
	case EV_ENTRY: on_entry(tl, e, rec); break;
	case EV_EXIT: on_exit_event(tl, e, rec); break;
	case EV_SWITCH:
		tl->host_switches++;
		on_host_switch(tl, e, rec);
		break;
	case EV_WFX: on_wfx(tl, rec); break;
	default: break;
	}
}

/* Cuts [*s, *e) to [lo, hi); false when nothing is left. */
static bool clip(uint64_t *s, uint64_t *e, uint64_t lo, uint64_t hi)
{
	if (*s < lo)
		*s = lo;
	if (*e > hi)
		*e = hi;
	return *s < *e;
}

/* Copies list K into a new log, each item cut to [LO, HI) and those with
 * nothing left dropped: the lists spill to a file, so they are rewritten,
 * not changed in place.  For the intervals the per-vCPU state times and
 * longest intervals are counted again from what is kept, and IDLE_AFTER
 * makes RUNNING the IDLE intervals that begin at or after their guest
 * trace's end (ks_timeline_finish()). */
static void rewrite_list(struct ks_timeline *tl, int k, uint64_t lo, uint64_t hi,
			 bool idle_after)
{
	struct tl_priv *p = tl->priv;
	uint64_t *nr = k == KS_TL_INTERVALS ? &tl->nr_iv :
		       k == KS_TL_CPU_SLICES ? &tl->nr_cpu : &tl->nr_gtasks;
	struct ks_rlog out;
	struct ks_rlog_cur c;
	const void *item;
	uint64_t n = 0;
	uint32_t v;

	if (k == KS_TL_INTERVALS)
		for (v = 0; v < tl->nr_vcpus; v++) {
			memset(tl->vcpus[v].state_ns, 0, sizeof(tl->vcpus[v].state_ns));
			memset(tl->vcpus[v].longest, 0, sizeof(tl->vcpus[v].longest));
		}
	ks_rlog_init(&out, &p->sp, list_rsize[k], LIST_CHUNK);
	ks_rlog_cur_init(&c, &p->lists[k]);
	while (!tl->oom && (item = ks_rlog_cur_next(&c))) {
		uint64_t s, e;
		void *o;

		/* the three start with start, end */
		memcpy(&s, item, sizeof(s));
		memcpy(&e, (const char *)item + sizeof(s), sizeof(e));
		if (!clip(&s, &e, lo, hi))
			continue;
		if (!(o = ks_rlog_push(&out))) {
			tl->oom = true;
			break;
		}
		memcpy(o, item, list_rsize[k]);
		memcpy(o, &s, sizeof(s));
		memcpy((char *)o + sizeof(s), &e, sizeof(e));
		n++;
		if (k == KS_TL_INTERVALS) {
			struct ks_tl_interval *iv = o;
			struct ks_tl_vcpu *vc = &tl->vcpus[iv->vcpu];
			const struct ks_tl_vm *vm = &tl->vms[vc->vm];

			if (idle_after && iv->state == KS_VS_IDLE && vm->guest_input >= 0 &&
			    (!vm->guest_seen || iv->start >= vm->guest_last))
				iv->state = KS_VS_RUNNING;
			vc->state_ns[iv->state] += e - s;
			if (e - s > vc->longest[iv->state].dur) {
				vc->longest[iv->state].dur = e - s;
				vc->longest[iv->state].start = s;
			}
		}
	}
	ks_rlog_cur_free(&c);
	if (ks_spill_error(&p->sp, NULL) < 0)
		tl->oom = true;
	ks_rlog_free(&p->lists[k]);
	p->lists[k] = out;
	*nr = n;
}

void ks_timeline_finish(struct ks_timeline *tl)
{
	bool idle_after = false;
	uint32_t i;

	/* names as the whole input told the host model */
	for (i = 0; i < tl->nr_vms; i++)
		vm_label(tl, &tl->vms[i]);

	for (i = 0; i < tl->nr_vcpus; i++) {
		struct ks_tl_vcpu *v = &tl->vcpus[i];
		const struct ks_tl_vm *vm = &tl->vms[v->vm];
		/* a guest task ends with its guest trace's data */
		uint64_t gend = vm->guest_input >= 0 && vm->guest_seen && vm->guest_last < tl->last_ts
					? vm->guest_last : tl->last_ts;

		if (v->has_state && tl->last_ts > v->since)
			push_interval(tl, i, v->since, tl->last_ts, v->cur_state, v->cur_reason);
		v->has_state = false;
		if (v->in_guest)
			push_cpu_slice(tl, v, i, tl->last_ts);
		if (v->gtask >= 0 && gend > v->gtask_since)
			push_gtask(tl, i, v->gtask_since, gend, (uint32_t)v->gtask);
		v->gtask = -1;
		/* what no guest event followed is not known to be the task's */
		settle(tl, v, (int32_t)tl->no_data);
	}
	/* after its guest trace's end a vCPU in guest mode is RUNNING: its
	 * guest's idle task is not known to be current (an interval that
	 * began before the end keeps its state).  The guest's end is known
	 * only now: the intervals log is rewritten, and only when an IDLE
	 * interval of such a VM begins at or after it. */
	for (i = 0; i < tl->nr_vms; i++) {
		const struct ks_tl_vm *vm = &tl->vms[i];

		if (vm->guest_input >= 0 && vm->idle_seen &&
		    (!vm->guest_seen || vm->idle_last >= vm->guest_last))
			idle_after = true;
	}
	if (idle_after && !tl->oom)
		rewrite_list(tl, KS_TL_INTERVALS, 0, UINT64_MAX, true);
}

/* ------------------------------------------------------------------ */
/* text summary */

static int cost_cmp(const void *a, const void *b)
{
	const struct ks_tl_cost *x = a, *y = b;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static void print_costs(const struct ks_timeline *tl, FILE *out)
{
	struct ks_tl_cost *c;
	uint32_t i;

	if (!tl->nr_costs)
		return;
	c = malloc(tl->nr_costs * sizeof(*c));
	if (!c)
		return;
	memcpy(c, tl->costs, tl->nr_costs * sizeof(*c));
	qsort(c, tl->nr_costs, sizeof(*c), cost_cmp);
	fprintf(out, "\nExit cost per guest task (host time of the exits taken while the task was\n"
		"current on its vCPU; HLT exits are not counted; \"(no guest data)\": outside\n"
		"the guest trace's data or in its lost events; \"(guest task unknown)\": before\n"
		"the vCPU's first task switch in the data, or its first after lost events):\n");
	for (i = 0; i < tl->nr_costs && i < 40; i++)
		fprintf(out, "  guest task %s lost %.3f us to %llu exits of reason %s while running\n",
			tl->names[c[i].task], c[i].ns / 1000.0, (unsigned long long)c[i].count,
			tl->reasons[c[i].reason]);
	free(c);
}

void ks_timeline_print_summary(const struct ks_timeline *tl, FILE *out)
{
	uint32_t i;
	int s;

	fprintf(out, "vCPU timeline: %u vCPUs in %u VMs over %.6f s\n", tl->nr_vcpus, tl->nr_vms,
		tl->have_ts ? (tl->last_ts - tl->first_ts) / 1e9 : 0.0);
	for (i = 0; i < tl->nr_vcpus; i++) {
		const struct ks_tl_vcpu *v = &tl->vcpus[i];
		uint64_t total = 0;

		for (s = 0; s < KS_VS_COUNT; s++)
			total += v->state_ns[s];
		fprintf(out, "\n%s%s vCPU %u (host thread %s-%d): %.3f ms traced\n",
			tl->vms[v->vm].name, tl->vms[v->vm].state_protected ?
			" (confidential: guest state protected)" : "", v->vcpu_id, v->comm, v->tid,
			total / 1e6);
		fprintf(out, "  %-10s %14s %8s %14s %20s\n", "state", "time (us)", "%",
			"longest (us)", "longest at (s)");
		for (s = 0; s < KS_VS_COUNT; s++) {
			if (!v->state_ns[s])
				continue;
			fprintf(out, "  %-10s %14.3f %7.2f%% %14.3f %20.9f\n", state_names[s],
				v->state_ns[s] / 1e3, total ? 100.0 * (double)v->state_ns[s] / (double)total : 0.0,
				v->longest[s].dur / 1e3, v->longest[s].start / 1e9);
		}
	}
	if (tl->nr_vcpus && !tl->host_switches)
		fprintf(out, "\nNo host sched_switch events: PREEMPTED and BLOCKED cannot be told apart;\n"
			"the time a vCPU thread spent out of guest mode shows as HOST (record\n"
			"sched:sched_switch too to split it).\n");
	print_costs(tl, out);
	if (tl->dropped_gevents)
		fprintf(out, "\n%llu guest events not kept as instant events (limit %llu)\n",
			(unsigned long long)tl->dropped_gevents, (unsigned long long)tl->max_gevents);
}

void ks_timeline_clip(struct ks_timeline *tl, uint64_t start, uint64_t end)
{
	uint64_t i, n;
	int k;

	if (!end)
		end = UINT64_MAX;
	if (!tl->have_ts)
		return;
	if (start < tl->first_ts)
		start = tl->first_ts;
	if (end > tl->last_ts)
		end = tl->last_ts;
	if (start >= end) { /* nothing of the trace in the window */
		end = start = start < tl->last_ts ? start : tl->last_ts;
	}
	/* each list is copied, what is left of it, into a new one */
	for (k = 0; k < 3; k++)
		rewrite_list(tl, k, start, end, false);
	for (i = n = 0; i < tl->nr_gevents; i++)
		if (tl->gevents[i].start >= start && tl->gevents[i].start < end)
			tl->gevents[n++] = tl->gevents[i];
	tl->nr_gevents = n;
	tl->first_ts = start;
	tl->last_ts = end;
}

int ks_timeline_exit_rates(const struct ks_timeline *tl, struct ks_tl_rates *out)
{
	uint64_t span = tl->have_ts ? tl->last_ts - tl->first_ts : 0, i;
	const struct ks_tl_interval *v;
	struct ks_tl_cursor *c;
	uint16_t *prev;

	memset(out, 0, sizeof(*out));
	out->bucket_ns = 1000000;
	while (span / out->bucket_ns >= KS_TL_MAX_BUCKETS && out->bucket_ns < 1000000000)
		out->bucket_ns *= 10;
	out->nr_buckets = span / out->bucket_ns + 1;
	if (out->nr_buckets > KS_TL_MAX_BUCKETS) /* longer than 10000 s: 1 s buckets, clipped */
		out->nr_buckets = KS_TL_MAX_BUCKETS;
	out->nr_vms = tl->nr_vms;
	out->count = calloc((size_t)out->nr_buckets * (tl->nr_vms ? tl->nr_vms : 1), sizeof(uint64_t));
	prev = malloc((tl->nr_vcpus + 1) * sizeof(*prev));
	if (!out->count || !prev) {
		free(prev);
		ks_tl_rates_free(out);
		return -1;
	}
	for (i = 0; i < tl->nr_vcpus; i++)
		prev[i] = KS_VS_RUNNING;
	/* intervals are in time order per vCPU */
	c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	if (!c) {
		free(prev);
		ks_tl_rates_free(out);
		return -1;
	}
	while ((v = ks_tl_cursor_next(c))) {
		uint64_t b = (v->start - tl->first_ts) / out->bucket_ns;

		if ((v->state == KS_VS_HOST || v->state == KS_VS_HALTED) &&
		    (prev[v->vcpu] == KS_VS_RUNNING || prev[v->vcpu] == KS_VS_IDLE) &&
		    b < out->nr_buckets)
			out->count[(uint64_t)tl->vcpus[v->vcpu].vm * out->nr_buckets + b]++;
		prev[v->vcpu] = v->state;
	}
	ks_tl_cursor_free(c);
	free(prev);
	return 0;
}

void ks_tl_rates_free(struct ks_tl_rates *r)
{
	free(r->count);
	r->count = NULL;
}

int ks_timeline_error(const struct ks_timeline *tl, struct ks_error *err)
{
	const struct tl_priv *p = tl->priv;

	if (p->failed) {
		if (err)
			*err = p->error;
		return -1;
	}
	if (tl->oom) {
		if (ks_spill_error(&p->sp, err) < 0)
			return -1;
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	if (ks_spill_error(&p->sp, err) < 0)
		return -1;
	return 0;
}

struct ks_host *ks_timeline_host(const struct ks_timeline *tl)
{
	return ((struct tl_priv *)tl->priv)->host;
}
