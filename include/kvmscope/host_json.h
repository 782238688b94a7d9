/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host_json.h - the "threads" array every command's JSON carries: the host
 * model's threads (kvmscope/host.h) with their VM and vCPU, in the shape
 * of kvmscope stat's: tid, name, vm, vm_name, vm_source, vcpu,
 * vcpu_source, sources_disagree, events.
 *
 *	ks_host_json_threads(h, &json);     "threads": [{tid, vm, vm_name, ...}]
 */
#ifndef KVMSCOPE_HOST_JSON_H
#define KVMSCOPE_HOST_JSON_H

#include <stddef.h>
#include <stdint.h>

struct ks_attr_thread;
struct ks_host;
struct ks_json;

/* The "threads" key and array of the N threads TS; VM_NAME(CTX, vm) names
 * a VM. */
void ks_host_json_attr(struct ks_json *j, const struct ks_attr_thread *const *ts, size_t n,
		       const char *(*vm_name)(const void *ctx, int32_t vm), const void *ctx);
/* The same of H's threads (ks_host_threads), named by H. */
void ks_host_json_threads(struct ks_host *h, struct ks_json *j);

#endif
