/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_trace.h - vPMU / LBR MSR traffic of KVM guests, from a trace
 * (`kvmscope pmu -i FILE`).
 *
 *	struct ks_pmu_trace *pt = ks_pmu_trace_new(&cfg, ks_source_info(src));
 *	while (ks_source_next(src, &rec, &err) > 0) ks_pmu_trace_add(pt, &rec);
 *	... ks_pmu_trace_msrs(pt, &rows) / ks_pmu_trace_vcpus(pt, &v) ...
 *	ks_pmu_trace_free(pt);
 *
 * Sources: x86 kvm:kvm_msr (ecx, data, write) gives the MSR and value of
 * every guest RDMSR/WRMSR KVM handles; kvm:kvm_exit gives MSR/RDPMC exit
 * counts even when kvm_msr was not recorded; kvm:kvm_entry binds a host
 * thread to its vCPU and closes an access.  Times follow `perf kvm stat
 * --event msr`: kvm_msr -> next kvm_entry of the same thread ("msr_ns"),
 * plus the whole exit kvm_exit -> kvm_entry around it ("exit_ns").  A
 * thread's events before its first kvm_entry are not counted (as in perf).
 */
#ifndef KVMSCOPE_PMU_TRACE_H
#define KVMSCOPE_PMU_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct ks_source_info;
struct ks_pmu_trace;

struct ks_pmu_trace_config {
	int vcpu;          /* only this vCPU; -1 = all */
	int32_t pid;       /* only this host process; -1 = all */
};

/* One (VM, vCPU, MSR) row. */
struct ks_pmu_msr_row {
	int32_t vm, vcpu;
	uint32_t msr;
	uint64_t reads, writes, faults;   /* faults: kvm_msr exception (#GP) */
	uint64_t timed;                   /* accesses closed by a kvm_entry */
	uint64_t msr_ns, exit_ns;         /* summed handling times */
	uint64_t max_ns;                  /* longest msr_ns */
	uint64_t last_write;              /* value of the last write */
	bool written;
};

/* A distinct counter programming seen on an event-select MSR. */
#define KS_PMU_MAX_PROGS 8
struct ks_pmu_prog {
	uint64_t config;      /* event select with the enable bit cleared */
	uint64_t writes;
};
struct ks_pmu_counter {
	int32_t vm, vcpu;
	uint32_t msr;                       /* PERFEVTSELx / PERF_CTLx */
	uint64_t enables, disables;         /* writes with EN set / clear */
	struct ks_pmu_prog progs[KS_PMU_MAX_PROGS];
	int nprogs;
	uint64_t other_progs;               /* writes beyond KS_PMU_MAX_PROGS configs */
};

/* Per (VM, vCPU) summary. */
struct ks_pmu_vcpu {
	int32_t vm, vcpu;
	uint64_t msr_accesses;     /* every kvm_msr */
	uint64_t pmu_accesses;     /* kvm_msr of PMU kinds (evtsel, counter, fixed, global) */
	uint64_t lbr_accesses;     /* kvm_msr of LBR kind (DEBUGCTL, LBR_*) */
	uint64_t pmu_msr_ns, pmu_exit_ns;   /* time handling PMU + LBR accesses */
	uint64_t msr_exits;        /* kvm_exit with an MSR exit reason */
	uint64_t rdpmc_exits;      /* kvm_exit RDPMC */
	uint64_t lbr_on, lbr_off;  /* DEBUGCTL.LBR / LBR_CTL.LBREn 0->1, 1->0 (start 0) */
	bool lbr_state;
	uint64_t fixed_ctr_ctrl, global_ctrl; /* last written values */
	bool fixed_written, global_written;
};

/* Other tracepoints the trace has that concern the PMU (names with pmu,
 * lbr or pmi, and the host msr:* system), counted but not interpreted. */
struct ks_pmu_source_count {
	char name[64];        /* "system:name" */
	uint64_t count;
};
#define KS_PMU_MAX_SOURCES 16

struct ks_pmu_trace_summary {
	uint64_t first_ts, last_ts;    /* span of all records */
	uint64_t kvm_msr, kvm_exit, kvm_entry;
	uint64_t before_first_entry;   /* ignored events */
	uint64_t msr_exits, rdpmc_exits;
	int isa;                       /* KS_ISA_* used for exit reasons */
	struct ks_pmu_source_count other[KS_PMU_MAX_SOURCES];
	int nother;
};

struct ks_pmu_trace *ks_pmu_trace_new(const struct ks_pmu_trace_config *cfg,
				      const struct ks_source_info *info);
void ks_pmu_trace_add(struct ks_pmu_trace *pt, const struct ks_record *rec);
void ks_pmu_trace_free(struct ks_pmu_trace *pt);

/* Results, sorted by (vm, vcpu, msr).  Arrays belong to pt. */
size_t ks_pmu_trace_msrs(struct ks_pmu_trace *pt, const struct ks_pmu_msr_row **rows);
size_t ks_pmu_trace_vcpus(struct ks_pmu_trace *pt, const struct ks_pmu_vcpu **vcpus);
size_t ks_pmu_trace_counters(struct ks_pmu_trace *pt, const struct ks_pmu_counter **ctrs);
const struct ks_pmu_trace_summary *ks_pmu_trace_summary(const struct ks_pmu_trace *pt);
/* A VM's (host process') name from COMM records, or NULL. */
const char *ks_pmu_trace_comm(const struct ks_pmu_trace *pt, int32_t pid);
/* The guests SRC names (ks_source_guests(): the trace.dat's GUEST option)
 * for the host model that attributes threads to VMs and vCPUs; call before
 * the first record.  0 or -1. */
struct ks_source;
int ks_pmu_trace_set_guests(struct ks_pmu_trace *pt, const struct ks_source *src,
			    struct ks_error *err);
/* 0, or -1 with ERR set ("PATH: offset N: ...") when the run stopped: more
 * threads than the budget, or out of memory. */
int ks_pmu_trace_error(const struct ks_pmu_trace *pt, const char *path, struct ks_error *err);
/* The host model it attributed threads with (its "threads" JSON:
 * host_json.h). */
struct ks_host;
struct ks_host *ks_pmu_trace_host(const struct ks_pmu_trace *pt);

/* Event select decoding (Intel SDM "IA32_PERFEVTSELx", AMD APM "PERF_CTLx"). */
struct ks_evtsel {
	uint32_t event;       /* AMD: bits 35:32 << 8 | bits 7:0 */
	uint32_t umask, cmask;
	bool usr, os, edge, intr, any, en, inv;
	bool host_only, guest_only;   /* AMD */
};
void ks_evtsel_decode(uint64_t value, bool amd, struct ks_evtsel *out);
/* "event=0x3c umask=0x00 usr os int en" */
void ks_evtsel_format(const struct ks_evtsel *e, char *buf, size_t len);
/* True for AMD's PERF_CTL MSRs (layout with 12-bit events). */
bool ks_evtsel_msr_is_amd(uint32_t msr);

#endif
