/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * attribution.c - VM and vCPU of host threads (see kvmscope/attribution.h).
 *
 * Pure per-thread logic: the stat engine keeps one struct ks_attr_thread in
 * each of its threads, feeds it (event vCPU fields, vcpu_load/put, names)
 * and calls ks_attr_resolve() after a change.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/attribution.h"
#include "kvmscope/source.h"

const char *ks_attr_source_name(enum ks_attr_source src)
{
	switch (src) {
	case KS_SRC_EVENT_FIELD: return "event-field";
	case KS_SRC_VCPU_LOAD: return "vcpu-load";
	case KS_SRC_THREAD_NAME: return "thread-name";
	case KS_SRC_GUEST_OPTION: return "guest-option";
	case KS_SRC_THREAD: return "thread";
	case KS_SRC_TGID: return "tgid";
	default: return "none";
	}
}

int ks_attr_guests_init(struct ks_attr_guests *gs, const struct ks_source_guest *guests,
			size_t nr_guests)
{
	uint32_t i, k;

	memset(gs, 0, sizeof(*gs));
	if (!nr_guests)
		return 0;
	gs->g = calloc(nr_guests, sizeof(*gs->g));
	if (!gs->g)
		return -1;
	gs->n = (uint32_t)nr_guests;
	for (i = 0; i < gs->n; i++) {
		const struct ks_source_guest *src = &guests[i];
		struct ks_attr_guest *g = &gs->g[i];

		if (src->name && *src->name)
			snprintf(g->name, sizeof(g->name), "%s", src->name);
		else
			snprintf(g->name, sizeof(g->name), "guest %" PRIx64, src->trace_id);
		g->vm = -1;
		g->vcpus = calloc(src->nr_vcpus + 1, sizeof(*g->vcpus));
		g->tids = calloc(src->nr_vcpus + 1, sizeof(*g->tids));
		if (!g->vcpus || !g->tids)
			return -1;
		g->nr = src->nr_vcpus;
		for (k = 0; k < g->nr; k++) {
			g->vcpus[k] = src->vcpus[k].vcpu;
			g->tids[k] = src->vcpus[k].host_tid;
			if (g->vm < 0 || (int32_t)g->tids[k] < g->vm)
				g->vm = (int32_t)g->tids[k];
		}
	}
	return 0;
}

void ks_attr_guests_free(struct ks_attr_guests *gs)
{
	uint32_t i;

	for (i = 0; gs->g && i < gs->n; i++) {
		free(gs->g[i].vcpus);
		free(gs->g[i].tids);
	}
	free(gs->g);
	memset(gs, 0, sizeof(*gs));
}

void ks_attr_guests_procs(struct ks_attr_guests *gs, const struct ks_source *src)
{
	gs->nprocs = src ? ks_source_procs(src, &gs->procs) : 0;
}

const char *ks_attr_proc_name(const struct ks_attr_guests *gs, int32_t tgid)
{
	size_t i;

	for (i = 0; tgid > 0 && i < gs->nprocs; i++)
		if (gs->procs[i].tgid == tgid)
			return gs->procs[i].name[0] ? gs->procs[i].name
			       : gs->procs[i].comm[0] ? gs->procs[i].comm : NULL;
	return NULL;
}

void ks_attr_thread_init(struct ks_attr_thread *t, int32_t tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->tgid = -1;
	t->field_vcpu = t->load_vcpu = t->name_vcpu = t->guest_vcpu = -1;
	t->entry_vcpu = -1;
	t->guest = -1;
	t->vcpu = t->vm = -1;
}

/* How VMMs name their vCPU threads: PREFIX, the vCPU number (decimal),
 * SUFFIX, as each sets it (the kernel keeps 15 bytes of a name).  A VMM
 * not listed, or QEMU without -name debug-threads=on (every thread is
 * "qemu-system-x86"), names no vCPU: the events' vCPU field says, or the
 * thread stands for itself. */
struct vcpu_name {
	const char *vmm, *prefix, *suffix;
};

static const struct vcpu_name vcpu_names[] = {
	/* accel/kvm/kvm-accel-ops.c: "CPU %d/KVM" */
	{ .vmm = "QEMU", .prefix = "CPU ", .suffix = "/KVM" },
	/* src/vmm/src/vstate/vcpu: format!("fc_vcpu {}", index) */
	{ .vmm = "Firecracker", .prefix = "fc_vcpu ", .suffix = "" },
	/* vmm/src/cpu.rs: format!("vcpu{vcpu_id}") */
	{ .vmm = "Cloud Hypervisor", .prefix = "vcpu", .suffix = "" },
	/* src/crosvm/sys/linux/vcpu.rs: format!("crosvm_vcpu{}", cpu_id) */
	{ .vmm = "crosvm", .prefix = "crosvm_vcpu", .suffix = "" },
	/* builtin-run.c: "kvm-vcpu-%lu" */
	{ .vmm = "kvmtool", .prefix = "kvm-vcpu-", .suffix = "" },
};

int32_t ks_host_vcpu_from_name(const char *comm, const char **vmm)
{
	for (size_t i = 0; comm && i < sizeof(vcpu_names) / sizeof(vcpu_names[0]); i++) {
		const struct vcpu_name *v = &vcpu_names[i];
		size_t pl = strlen(v->prefix);
		const char *p = comm + pl, *d = p;
		int64_t n = 0;

		if (strncmp(comm, v->prefix, pl))
			continue;
		while (*d >= '0' && *d <= '9' && n <= INT32_MAX)
			n = n * 10 + (*d++ - '0');
		if (d == p || n > INT32_MAX || (d - p > 1 && *p == '0') || strcmp(d, v->suffix))
			continue;
		if (vmm)
			*vmm = v->vmm;
		return (int32_t)n;
	}
	return -1;
}

int32_t ks_attr_vcpu_from_name(const char *comm)
{
	return ks_host_vcpu_from_name(comm, NULL);
}

void ks_attr_set_comm(struct ks_attr_thread *t, const char *comm)
{
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	t->name_vcpu = ks_attr_vcpu_from_name(t->comm);
}

static void lookup_guest(struct ks_attr_thread *t, const struct ks_attr_guests *gs)
{
	uint32_t i, k;

	t->guest_looked_up = true;
	for (i = 0; gs && i < gs->n; i++)
		for (k = 0; k < gs->g[i].nr; k++)
			if ((int32_t)gs->g[i].tids[k] == t->tid) {
				t->guest = (int32_t)i;
				t->guest_vcpu = (int32_t)gs->g[i].vcpus[k];
				return;
			}
}

static void resolve_vcpu(struct ks_attr_thread *t)
{
	const int32_t said[] = { t->field_vcpu, t->load_vcpu, t->name_vcpu, t->guest_vcpu };
	const uint8_t src[] = { KS_SRC_EVENT_FIELD, KS_SRC_VCPU_LOAD, KS_SRC_THREAD_NAME,
				KS_SRC_GUEST_OPTION };
	size_t i;

	t->vcpu = -1;
	t->vcpu_src = KS_SRC_THREAD;
	for (i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		if (said[i] < 0)
			continue;
		if (t->vcpu < 0) {
			t->vcpu = said[i];
			t->vcpu_src = src[i];
		} else if (said[i] != t->vcpu && src[i] != KS_SRC_VCPU_LOAD) {
			/* a load binding may legitimately differ from a name */
			t->conflict = true;
		}
	}
	t->seen_src |= (uint8_t)(1u << t->vcpu_src);
}

static void resolve_vm(struct ks_attr_thread *t, const struct ks_attr_guests *gs)
{
	if (t->tgid > 0) {
		t->vm = t->tgid;
		t->vm_src = KS_SRC_TGID;
	} else if (t->guest >= 0 && gs && (uint32_t)t->guest < gs->n) {
		t->vm = gs->g[t->guest].vm;
		t->vm_src = KS_SRC_GUEST_OPTION;
	} else if (t->name_vcpu >= 0 && t->tid - t->name_vcpu > 0) {
		t->vm = t->tid - t->name_vcpu;
		t->vm_src = KS_SRC_THREAD_NAME;
	} else {
		t->vm = t->tid;
		t->vm_src = KS_SRC_THREAD;
	}
}

void ks_attr_resolve(struct ks_attr_thread *t, const struct ks_attr_guests *gs)
{
	if (!t->guest_looked_up)
		lookup_guest(t, gs);
	resolve_vcpu(t);
	resolve_vm(t, gs);
}

int ks_attr_cmp(const void *a, const void *b)
{
	const struct ks_attr_thread *x = *(const struct ks_attr_thread *const *)a;
	const struct ks_attr_thread *y = *(const struct ks_attr_thread *const *)b;

	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}
