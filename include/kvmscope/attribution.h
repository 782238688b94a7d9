/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * attribution.h - which VM and which vCPU a host thread's KVM events belong to.
 *
 * Sources of a thread's vCPU, in the order they are trusted:
 *   1. a vCPU id field in the entry/exit events (x86 vcpu_id, powerpc
 *      vcpu_id, s390 id, loongarch vcpu_id);
 *   2. kvm:vcpu_load / kvm:vcpu_put events: a load binds the thread to a
 *      vCPU until the next put (one thread may drive several vCPUs in turn);
 *   3. the thread's name: QEMU names vCPU threads "CPU N/KVM", Firecracker
 *      "fc_vcpu N", Cloud Hypervisor "vcpuN", crosvm "crosvm_vcpuN", kvmtool
 *      "kvm-vcpu-N" (COMM records, trace.dat saved cmdlines; the table is
 *      host.c's);
 *   4. the trace.dat GUEST option (vCPU -> host tid);
 *   5. otherwise the host thread itself (vcpu -1, rows keyed by the tid).
 * A thread's VM: its tgid when the input has it (perf.data); else the guest
 * of the GUEST option naming the thread; else vCPU-named threads are
 * grouped by tid - N (the VMMs create vCPU threads one after the other, so
 * the threads of one VM share it); else the thread alone.  Without a tgid the
 * VM id is that group's lowest tid.  VM names come from the GUEST option
 * (the guest's name, or "guest <trace id>") or the tgid's COMM.
 *
 *	struct ks_attr_thread t;
 *	ks_attr_thread_init(&t, tid);
 *	ks_attr_set_comm(&t, "CPU 1/KVM");
 *	ks_attr_resolve(&t, guests);       -> t.vcpu 1, t.vcpu_src KS_SRC_THREAD_NAME
 *
 * The stat engine keeps these per thread on its hot path; every other
 * command asks the host model (host.h), which applies the same functions.
 */
#ifndef KVMSCOPE_ATTRIBUTION_H
#define KVMSCOPE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ks_tracedat_meta;

enum ks_attr_source {
	KS_SRC_NONE = 0,
	KS_SRC_EVENT_FIELD,   /* vCPU: the id field of the entry/exit events */
	KS_SRC_VCPU_LOAD,     /* vCPU: kvm:vcpu_load binding */
	KS_SRC_THREAD_NAME,   /* vCPU: "CPU N/KVM"; VM: tid - N grouping */
	KS_SRC_GUEST_OPTION,  /* vCPU or VM: trace.dat GUEST option */
	KS_SRC_THREAD,        /* vCPU or VM: only the host thread is known */
	KS_SRC_TGID,          /* VM: the process id of the input */
};

/* "event-field", "vcpu-load", "thread-name", "guest-option", "thread", "tgid". */
const char *ks_attr_source_name(enum ks_attr_source src);

/* The GUEST options of a trace.dat, flattened for lookups. */
struct ks_attr_guest {
	char name[64];           /* the guest's name, or "guest <trace id>" */
	int32_t vm;              /* lowest host tid of its vCPUs */
	uint32_t nr;
	uint32_t *vcpus, *tids;
};

struct ks_source_proc;
struct ks_attr_guests {
	uint32_t n;
	struct ks_attr_guest *g;
	/* the processes the recording names (ks_source_procs()), borrowed */
	const struct ks_source_proc *procs;
	size_t nprocs;
};

/* Build from the NR_GUESTS guests a recording names (ks_source_guests()).
 * Returns 0 or -1 (out of memory). */
struct ks_source_guest;
int ks_attr_guests_init(struct ks_attr_guests *gs, const struct ks_source_guest *guests,
			size_t nr_guests);
void ks_attr_guests_free(struct ks_attr_guests *gs);
/* Also take the processes the recording SRC names (NULL: none). */
struct ks_source;
void ks_attr_guests_procs(struct ks_attr_guests *gs, const struct ks_source *src);
/* The VM name of process TGID as the recording names it (QEMU's -name,
 * else the process name), or NULL. */
const char *ks_attr_proc_name(const struct ks_attr_guests *gs, int32_t tgid);

struct ks_attr_thread {
	int32_t tid;
	int32_t tgid;            /* -1 = unknown */
	char comm[32];           /* "" = unknown */
	/* what each source says; -1 = nothing */
	int32_t field_vcpu;
	int32_t load_vcpu;
	int32_t name_vcpu;
	int32_t guest_vcpu;
	int32_t guest;           /* index into the guests, -1 = none */
	int32_t entry_vcpu;      /* vCPU of the thread's last entry event, -1 */
	/* the result of ks_attr_resolve() */
	int32_t vcpu;            /* -1 = unknown: rows use the thread */
	int32_t vm;              /* -1 = unknown */
	uint8_t vcpu_src, vm_src;/* enum ks_attr_source */
	uint8_t seen_src;        /* bit mask (1 << source) of every source used */
	bool guest_looked_up;
	bool reused;             /* a later lifetime of its tid: the input's saved
				  * names (trace.dat cmdlines) were the earlier one's */
	bool conflict;           /* a less trusted source disagreed */
	uint64_t events;         /* KVM events of this thread */
};

void ks_attr_thread_init(struct ks_attr_thread *t, int32_t tid);
/* The vCPU number in a vCPU thread's name, from the table of the VMMs'
 * names ("CPU 3/KVM" QEMU, "fc_vcpu 3" Firecracker, "vcpu3" Cloud
 * Hypervisor, "crosvm_vcpu3" crosvm, "kvm-vcpu-3" kvmtool), and *VMM (may
 * be NULL) the VMM's; -1 for other names. */
int32_t ks_host_vcpu_from_name(const char *comm, const char **vmm);
/* "CPU 3/KVM" -> 3, and the other VMMs' vCPU thread names
 * (ks_host_vcpu_from_name); -1 for other names. */
int32_t ks_attr_vcpu_from_name(const char *comm);
void ks_attr_set_comm(struct ks_attr_thread *t, const char *comm);
/* A vCPU id read from an event field: from an entry (IS_EXIT false) or
 * from an exit.  An exit naming another vCPU than the thread's last entry
 * is a conflict (KVM enters and exits one vCPU per run).  Returns true when
 * the thread's field vCPU changed (then call ks_attr_resolve()). */
static inline bool ks_attr_event_vcpu(struct ks_attr_thread *t, int32_t v, bool is_exit)
{
	bool changed = v != t->field_vcpu;

	if (!is_exit)
		t->entry_vcpu = v;
	else if (t->entry_vcpu >= 0 && v != t->entry_vcpu)
		t->conflict = true;
	t->field_vcpu = v;
	return changed;
}

/* Recompute vcpu/vm from the sources (cheap: call after any change). */
void ks_attr_resolve(struct ks_attr_thread *t, const struct ks_attr_guests *gs);

/* qsort() order of an array of struct ks_attr_thread pointers: by VM,
 * vCPU, tid (the order every report lists threads in). */
int ks_attr_cmp(const void *a, const void *b);

#endif
