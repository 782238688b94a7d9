/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host_json.c - the "threads" array of every command's JSON: the host
 * model's answer (kvmscope/host.h) of which VM and vCPU each host thread
 * runs (see kvmscope/host_json.h).  The model only answers; this file
 * writes.
 */
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"

void ks_host_json_attr(struct ks_json *j, const struct ks_attr_thread *const *ts, size_t n,
		       const char *(*vm_name)(const void *ctx, int32_t vm), const void *ctx)
{
	size_t i;

	ks_json_key(j, "threads");
	ks_json_begin_array(j);
	for (i = 0; i < n; i++) {
		const struct ks_attr_thread *t = ts[i];
		const char *name = vm_name(ctx, t->vm);

		ks_json_begin_object(j);
		ks_json_kv_i64(j, "tid", t->tid);
		ks_json_key(j, "name");
		if (t->comm[0])
			ks_json_string(j, t->comm);
		else
			ks_json_null(j);
		ks_json_kv_i64(j, "vm", t->vm);
		ks_json_key(j, "vm_name");
		if (name)
			ks_json_string(j, name);
		else
			ks_json_null(j);
		ks_json_kv_string(j, "vm_source", ks_attr_source_name(t->vm_src));
		ks_json_kv_i64(j, "vcpu", t->vcpu);
		ks_json_kv_string(j, "vcpu_source", ks_attr_source_name(t->vcpu_src));
		ks_json_key(j, "sources_disagree");
		ks_json_bool(j, t->conflict);
		ks_json_kv_u64(j, "events", t->events);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static const char *own_vm_name(const void *ctx, int32_t vm)
{
	return ks_host_vm_name(ctx, vm);
}

void ks_host_json_threads(struct ks_host *h, struct ks_json *j)
{
	const struct ks_attr_thread **ts;
	size_t n = ks_host_threads(h, &ts);

	ks_host_json_attr(j, ts, n, own_vm_name, h);
}
