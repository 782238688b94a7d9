/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile_impl.h - what the profile engine's two files share: its state
 * (struct ks_profile: threads, entries, stacks, symbols) and the functions
 * one gives the other.  profile.c takes the records in (threads, entries,
 * stacks, event classification); profile_rows.c turns the entries into
 * rows (symbol resolution, the merge of spilled runs, the --offsets top
 * rows) and folded stacks.
 */
#ifndef KVMSCOPE_PROFILE_IMPL_H
#define KVMSCOPE_PROFILE_IMPL_H

#include <errno.h>
#include <event-parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "arch/arch.h"
#include "kvmscope/host.h"
#include "kvmscope/field.h"
#include "kvmscope/limits.h"
#include "kvmscope/profile.h"
#include "kvmscope/source.h"
#include "symbols/symtab.h"
#include "util/hashmap.h"
#include "util/spill.h"

/* include/uapi/linux/perf_event.h */
#define MISC_CPUMODE_MASK 7
#define MISC_GUEST_KERNEL 4
#define MISC_GUEST_USER 5
#define CTX_GUEST ((uint64_t)-2048)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER ((uint64_t)-2560)
#define CTX_MAX ((uint64_t)-4095)

/* Reason keys: the architecture (index in ks_arches + 1) in bits 40..47,
 * the selector (x86 isa, else the name table) in bits 32..39, the code
 * below (see ks_arch_report_reason()). */
#define RK_NONE UINT64_MAX
#define RK_KIND(k) ((k) >> 40)
#define RK(arch, sel, code) (((uint64_t)(arch) << 40) | ((uint64_t)((sel) & 0xff) << 32) | \
			     ((code) & 0xffffffffull))

enum ev_kind { EV_OTHER = 0, EV_EXIT, EV_ENTRY };

struct ev_info {          /* per tracepoint format, cached by event pointer */
	struct tep_event *ev;
	enum ev_kind kind;
	struct ks_arch_exit x;
};

/* A --sample-exits reason: -1 members match any. */
struct sample_key {
	int32_t arch, sel;
	uint64_t code;
};

struct entry {
	int32_t vm, vcpu;
	uint64_t ip, reason;
	uint8_t mode;
	uint64_t count, handled, time_ns;
	/* resolved at row time */
	const char *dso, *sym;
	uint64_t offset;
};

/* Value of the entry table, keyed by (address, context id: the interned
 * VM, vCPU, mode and reason, so the key is exact without looking at the
 * entry): the entry's index and its count, so that a repeated sample
 * touches one slot. */
struct eslot {
	uint64_t count;
	uint32_t idx;            /* entry index + 1 */
};

struct ctx {
	int32_t vm, vcpu;
	uint8_t mode;
	uint64_t reason;
};

/* Pending-exit state of a host thread; its VM and vCPU come from the host
 * model (kvmscope/host.h). */
struct thread {
	int32_t tid;
	int64_t pending;       /* entry index of the exit waiting for its entry, -1 */
	uint64_t pending_ts;
	/* the pending entry's key and the table generation its index is of
	 * (the table may have been spilled and emptied since) */
	uint64_t pending_ip;
	uint32_t pending_ctx, pending_gen;
	bool used;
};

/* An entry as a spilled run holds it: runs are sorted by (ip, ctx). */
struct erec {
	uint64_t ip;
	uint32_t ctx, pad;
	uint64_t count, handled, time_ns;
};

struct stack {
	int32_t vm;
	uint32_t nframes;
	uint64_t user_mask;    /* bit i: frame i is guest user */
	uint64_t count;
	uint32_t next;         /* next stack of the same hash, index + 1; 0: none */
	uint64_t *frames;      /* leaf first */
};

struct vm_syms {
	int32_t vm;
	const struct ks_symtab *kernel, *user;
};

struct vm_name {
	int32_t vm;
	char *name;
};

struct ks_profile {
	struct ks_profile_config cfg;
	int default_isa;
	const struct ks_arch *arch;  /* ks_arch_resolve(), at the first event */
	bool arch_tried;
	char machine[32], cpuid[128]; /* what the source info says of it */
	bool machine_from_events;
	struct sample_key sample_keys[KS_PROF_MAX_SAMPLE_EXITS];
	int nsample_keys;

	struct ev_info *evs;     /* every event met, classified once (grows) */
	int nevs, evcap;

	struct entry *entries;
	size_t nentries, entcap;
	struct ks_hmap ehash;    /* (ip, ctx id) -> struct eslot */
	struct ctx *ctxs;
	size_t nctxs, ctxcap;
	struct ks_hmap chash;    /* (vm:vcpu, reason, mode) -> uint32_t ctx index */

	struct ks_hmap threads;  /* tid -> struct thread */
	int32_t protected_vms[KS_PROF_MAX_PROTECTED];
	size_t nprotected;
	struct ks_host *host;    /* threads -> VM and vCPU */
	uint64_t max_threads;    /* limits.threads */
	bool failed;             /* over the budget or out of memory: stopped */
	struct ks_error error;

	struct stack *stacks;
	size_t nstacks, stcap;
	struct ks_hmap shash;    /* stack_hash -> first stack index + 1 */

	struct vm_syms *syms;    /* grows: one per VM given symbols */
	int nsyms, symcap;
	struct vm_name *names;
	size_t nnames;
	int32_t *vms;
	size_t nvms;

	struct ks_profile_totals tot;

	/* the budget (limits.tables) and what spilled past it */
	size_t max_entries;      /* entries in the table at most */
	uint32_t gen;            /* times the table was spilled and emptied */
	struct ks_spill sp;      /* the temporary file of the runs and stacks */
	struct ks_rlog *runs;    /* sorted runs of entries */
	size_t nruns;
	uint64_t stack_bytes, max_stack_bytes;
	struct ks_rlog stk;      /* spilled stacks: words vm<<32|n, umask, count, frames */
	uint64_t folded_rows;    /* rows the last ks_profile_rows() folded into [other] */
	size_t max_rows;
};

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* ---- profile.c ---- */
int pf_erec_cmp(const void *a, const void *b);
bool pf_is_sample_reason(const struct ks_profile *p, uint64_t reason);
int pf_spill_entries(struct ks_profile *p);
void pf_spill_failed(struct ks_profile *p);
void pf_sync_counts(struct ks_profile *p);
bool pf_vm_protected(const struct ks_profile *p, int32_t vm);
#endif
