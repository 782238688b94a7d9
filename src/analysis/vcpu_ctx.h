/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcpu_ctx.h - the KVM events of each vCPU thread since its last entry,
 * kept across renewals of a stat engine (top's intervals, the exporter's
 * rotations) and replayed into the new engine: an exit open at the renewal
 * is paired with its entry in the next one, as if the engine had run on.
 */
#ifndef KVMSCOPE_ANALYSIS_VCPU_CTX_H
#define KVMSCOPE_ANALYSIS_VCPU_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "kvmscope/source.h"
#include "util/hashmap.h"

struct ks_arch;
struct ks_stat;
struct tep_event;

#define KS_VCTX_KINDS 64

struct ks_vcpu_ctx {
	const struct ks_arch *arch;   /* its entry events; NULL: nothing is kept */
	uint64_t max_threads;         /* threads kept at most (0: no bound) */
	struct ks_hmap threads;       /* tid -> the thread's events */
	struct {                      /* what an event is, by its tep_event */
		const struct tep_event *ev;
		bool kvm, entry;
	} kinds[KS_VCTX_KINDS];
};

enum { KS_VCTX_BUDGET = -1, KS_VCTX_NOMEM = -2 };

void ks_vcpu_ctx_init(struct ks_vcpu_ctx *c, const struct ks_arch *arch, uint64_t max_threads);
/* Forget every thread; ARCH's entry events from now on. */
void ks_vcpu_ctx_reset(struct ks_vcpu_ctx *c, const struct ks_arch *arch);
void ks_vcpu_ctx_free(struct ks_vcpu_ctx *c);
/* Remember REC if it is an event of the architecture's KVM system (an
 * entry starts the thread's events afresh; events before a thread's first
 * entry are not kept: the engine ignores them too).  0, KS_VCTX_BUDGET
 * when a new thread would pass max_threads, or KS_VCTX_NOMEM. */
int ks_vcpu_ctx_note(struct ks_vcpu_ctx *c, const struct ks_record *rec);
/* Every thread's events into ST, in their order. */
void ks_vcpu_ctx_replay(struct ks_vcpu_ctx *c, struct ks_stat *st);
/* Keep the threads noted since the last prune, and the others KEEP(ARG,
 * TID) says are alive (NULL: all).  0 or KS_VCTX_NOMEM. */
int ks_vcpu_ctx_prune(struct ks_vcpu_ctx *c, bool (*keep)(void *arg, int32_t tid), void *arg);

#endif
