/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - guest profile from the host (kvmscope report).
 *
 * Guest instruction pointers come from perf PMU samples taken in guest mode
 * (cpumode from the misc bits, callchains split at PERF_CONTEXT_GUEST*
 * markers) and from exit tracepoints (x86 kvm_exit guest_rip, powerpc
 * kvm_hv:kvm_guest_exit pc, arm64 kvm_exit vcpu_pc).  Exits also get their
 * handling time (exit -> next entry of the same host thread, the stat engine's
 * rule).  Symbols are per VM (symbols/symtab.h) and resolved once per
 * distinct address at the end.
 *
 *	struct ks_profile *p = ks_profile_new(&cfg, ks_source_info(src), &err);
 *	ks_profile_set_guests(p, src, &err);              (optional, GUEST option)
 *	while (ks_source_next(src, &rec, &err) > 0) ks_profile_add(p, &rec);
 *	ks_profile_set_symbols(p, vm, kernel_symtab, user_symtab);
 *	n = ks_profile_rows(p, KS_PROF_SYM | KS_PROF_VM, true, &rows);
 */
#ifndef KVMSCOPE_PROFILE_H
#define KVMSCOPE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"

struct ks_limits;

struct ks_source_info;
struct ks_symtab;
struct ks_profile;

#define KS_PROF_MAX_SAMPLE_EXITS 32
#define KS_PROF_MAX_FRAMES 64

struct ks_profile_config {
	/* Only these exit reasons are samples (names as in the trace, e.g.
	 * "HLT"); 0 = every exit (x86, arm64) or HV_DECREMENTER (powerpc). */
	int nsample_exits;
	const char *sample_exits[KS_PROF_MAX_SAMPLE_EXITS];
	bool stacks;      /* keep stacks for --folded / --flamegraph */
	/* the run's budgets (limits.threads: distinct threads); NULL = the
	 * defaults; PATH names the input in errors (may be NULL) */
	const struct ks_limits *limits;
	const char *path;
};

/* Row dimensions (bit mask) for ks_profile_rows(). */
enum {
	KS_PROF_VM = 1,
	KS_PROF_VCPU = 2,
	KS_PROF_SYM = 4,     /* mode + DSO + symbol */
	KS_PROF_DSO = 8,     /* mode + DSO */
	KS_PROF_REASON = 16, /* exit reason */
	KS_PROF_ADDR = 32,   /* exact address (symbol+offset) */
};

enum { KS_MODE_GUEST_KERNEL = 1, KS_MODE_GUEST_USER = 2 };

#define KS_SYM_UNKNOWN "[unknown]"
/* The row of what a table per address folded (ks_profile_rows_folded()). */
#define KS_SYM_OTHER "[other]"
#define KS_DSO_GUEST_USER "[guest user]"
/* A confidential guest's exit (rip 0, state encrypted: SEV-ES/SNP). */
#define KS_SYM_PROTECTED "[guest state protected]"
#define KS_DSO_PROTECTED "[confidential]"

struct ks_profile_row {
	int32_t vm, vcpu;        /* -1 unless in the dimensions */
	int mode;                /* KS_MODE_*; 0 unless SYM/DSO/ADDR */
	const char *dso;         /* NULL unless SYM/DSO/ADDR */
	const char *sym;         /* NULL unless SYM/ADDR */
	uint64_t addr, offset;   /* ADDR only */
	bool has_reason;
	uint64_t reason;         /* REASON only; name via ks_profile_reason_name */
	uint64_t samples;        /* sample rows: samples; exit rows: exits */
	uint64_t handled;        /* exits with a matching entry */
	uint64_t time_ns;        /* their total handling time */
};

struct ks_profile *ks_profile_new(const struct ks_profile_config *cfg,
				  const struct ks_source_info *info, struct ks_error *err);
void ks_profile_free(struct ks_profile *p);
/* Host thread TID runs vCPU VCPU of VM (GUEST option of a trace.dat). */
/* The guests SRC names (ks_source_guests(), e.g. a trace.dat's GUEST
 * option): their vCPU threads, VMs and names, for
 * the host model (kvmscope/host.h) that attributes threads.  Call before
 * the first record.  Returns 0, or -1 with ERR set. */
struct ks_source;
struct ks_host;
int ks_profile_set_guests(struct ks_profile *p, const struct ks_source *src,
			  struct ks_error *err);
/* The host model of the profile (threads -> VM, vCPU; "threads" JSON). */
struct ks_host *ks_profile_host(const struct ks_profile *p);
void ks_profile_set_vm_name(struct ks_profile *p, int32_t vm, const char *name);
void ks_profile_add(struct ks_profile *p, const struct ks_record *rec);
/* 0, or -1 with ERR filled once the profile stopped counting: more
 * distinct threads than limits.threads ("FILE: offset N: ..."), or out
 * of memory.  Check it after the last record. */
int ks_profile_error(const struct ks_profile *p, struct ks_error *err);

/* Symbols of VM (tables stay owned by the caller; NULL = none).  VM -1 =
 * the default for VMs without their own.  Returns 0, or -ENOMEM (the
 * profile has then failed: ks_profile_error()). */
int ks_profile_set_symbols(struct ks_profile *p, int32_t vm, const struct ks_symtab *kernel,
			   const struct ks_symtab *user);

/* VMs seen (ids), their names (COMM of the VM or GUEST name; may be NULL). */
size_t ks_profile_vms(const struct ks_profile *p, const int32_t **vms);
const char *ks_profile_vm_name(const struct ks_profile *p, int32_t vm);
/* VMs whose state is protected (they exited through the architecture's
 * exit_protected exit, x86 VMGEXIT); at most KS_PROF_MAX_PROTECTED. */
#define KS_PROF_MAX_PROTECTED 256
size_t ks_profile_protected_vms(const struct ks_profile *p, const int32_t **vms);

/* Aggregated rows, sorted by samples (descending), then keys.  EXITS =
 * rows of exit-tracepoint entries (all exits, counts and times); otherwise
 * sample rows.  The array is malloc'd (free it); strings belong to p or the
 * symbol tables. */
size_t ks_profile_rows(struct ks_profile *p, unsigned dims, bool exits,
		       struct ks_profile_row **rows);
void ks_profile_reason_name(const struct ks_profile *p, uint64_t reason, char *buf, size_t len);
/* Rows the last ks_profile_rows() folded into its last row (symbol
 * KS_SYM_OTHER, no VM, vCPU or address), 0 when none: rows per address
 * past the budget (limits.tables) of an input with more distinct guest
 * addresses than it holds.  The totals stay exact. */
uint64_t ks_profile_rows_folded(const struct ks_profile *p);

/* Totals: samples, host-mode samples skipped, exits seen. */
struct ks_profile_totals {
	uint64_t samples, exits, host_samples, pmu_samples, exit_samples;
};
void ks_profile_totals(const struct ks_profile *p, struct ks_profile_totals *t);

/* Folded stacks ("vm;frame;...;leaf COUNT" per line, root first), one call
 * per distinct stack (counts of identical stacks merged), sorted by stack.
 * Guest kernel frames end in "_[k]".  0, or -1 when out of memory. */
typedef void (*ks_folded_fn)(void *ctx, const char *stack, uint64_t count);
int ks_profile_folded(struct ks_profile *p, ks_folded_fn fn, void *ctx);

#endif
