/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host.h - one model of the host: which VM and vCPU each host thread runs.
 *
 * Every command that attributes KVM events to VMs and vCPUs (stat, report,
 * timeline, pmu, top, merge) asks this model, so that they agree.  The
 * model observes the record stream: COMM records and saved cmdlines (thread
 * names), the pid of records (tgid), the vCPU fields the architecture table
 * (src/arch) names on entry and exit events, kvm:vcpu_load / vcpu_put, and
 * the trace.dat GUEST option.  The rules are those of attribution.h.
 *
 *	struct ks_host *h = ks_host_new(arch, src, &err);
 *	while (ks_source_next(src, &rec, &err) > 0) {
 *		const struct ks_attr_thread *t = ks_host_observe(h, &rec);
 *		if (t) use(t->vm, t->vcpu);     (KS_REC_EVENT records)
 *	}
 *	ks_host_json_threads(h, &json);     (host_json.h) "threads": [...]
 *	ks_host_free(h);
 *
 * A pointer returned by ks_host_observe() or ks_host_find() stays valid until
 * the next call that observes or adds a thread.
 */
#ifndef KVMSCOPE_HOST_H
#define KVMSCOPE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "attribution.h"
#include "error.h"
#include "record.h"

struct ks_arch;
struct ks_json;
struct ks_source;
struct ks_host;

/* ARCH: the input's architecture (NULL: detected from the first event's
 * formats by ks_arch_detect()).  SRC: the recording whose guests
 * (ks_source_guests()) are known, NULL if none. */
struct ks_host *ks_host_new(const struct ks_arch *arch, const struct ks_source *src,
			    struct ks_error *err);
void ks_host_free(struct ks_host *h);
/* The budget of distinct threads (limits.threads; default: the defaults'). */
struct ks_limits;
void ks_host_set_limits(struct ks_host *h, const struct ks_limits *lim);

/* Observe REC.  For a KS_REC_EVENT record with a tid: the thread's
 * attribution after the record (its events counted); else NULL.  NULL also
 * when memory or the threads budget ran out (ks_host_error() then says so;
 * the model then takes no new thread). */
const struct ks_attr_thread *ks_host_observe(struct ks_host *h, const struct ks_record *rec);
int ks_host_error(const struct ks_host *h, struct ks_error *err);
/* The same as "FILE: offset N: problem", N the offset of REC. */
int ks_host_error_at(const struct ks_host *h, const char *file, const struct ks_record *rec,
		     struct ks_error *err);

/* The thread TID as known so far (resolved), NULL if never seen. */
const struct ks_attr_thread *ks_host_find(const struct ks_host *h, int32_t tid);
/* The VM's name: the GUEST option's guest, else the name of the process
 * VM (not a vCPU thread's name); NULL if none. */
const char *ks_host_vm_name(const struct ks_host *h, int32_t vm);
const struct ks_attr_guests *ks_host_guests(const struct ks_host *h);

/* The one display name of a VM and of a vCPU, used by every output (stat,
 * report, timeline, flame graphs, top, merge, exporter): "PID(NAME)",
 * "PID" when the VM has no name, "unknown" for VM -1; a vCPU is
 * "PID(NAME) vCPU N".  ks_vm_label() formats it from a name found
 * elsewhere (stat's perf mode, a live exporter's QEMU -name). */
char *ks_vm_label(char *buf, size_t len, int32_t vm, const char *name);
char *ks_host_vm_label(const struct ks_host *h, int32_t vm, char *buf, size_t len);
char *ks_host_vcpu_label(const struct ks_host *h, int32_t vm, int32_t vcpu, char *buf,
			 size_t len);

/* The threads that had KVM events, sorted by VM, vCPU, tid; valid until the
 * next call that observes a record. */
size_t ks_host_threads(struct ks_host *h, const struct ks_attr_thread ***out);

#endif
