/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_host.h - who holds the host's performance counters, and what that
 * leaves for the guests' virtual PMUs (`kvmscope pmu check`).
 *
 *	struct ks_pmu_host_opts o = { .sysfs_root = "/sys", .proc_root = "/proc" };
 *	struct ks_pmu_host *h;
 *	if (ks_pmu_host_scan(&h, &o, &err) < 0) die(...);
 *	... h->caps, h->holders[], h->vms[] (with verdicts) ...
 *	ks_pmu_host_free(h);
 *
 * Everything is read from files under sysfs_root / proc_root so that tests
 * can point them at fixture trees; CPUID comes from the cpuid instruction or,
 * with cpuid_file, from a text file of "leaf subleaf eax ebx ecx edx" lines
 * (hex), one per leaf.
 */
#ifndef KVMSCOPE_PMU_HOST_H
#define KVMSCOPE_PMU_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define KS_PMU_MAX_CPUS 1024

struct ks_cpuset {
	uint64_t bits[KS_PMU_MAX_CPUS / 64];
};

/* "0-3,8,10-11" -> set.  Returns 0, -1 on a malformed list. */
int ks_cpuset_parse(struct ks_cpuset *s, const char *list);
bool ks_cpuset_test(const struct ks_cpuset *s, int cpu);
int ks_cpuset_count(const struct ks_cpuset *s);
bool ks_cpuset_intersects(const struct ks_cpuset *a, const struct ks_cpuset *b);
/* Back to the "0-3,8" form. */
void ks_cpuset_format(const struct ks_cpuset *s, char *buf, size_t len);

struct ks_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* The host PMU as CPUID and sysfs describe it. */
struct ks_pmu_caps {
	char vendor[16];          /* "GenuineIntel", "AuthenticAMD", ... */
	bool intel, amd;
	bool hypervisor;          /* CPUID.1:ECX[31]: we run in a VM */
	int version;              /* Intel arch perfmon version (0xA EAX[7:0]); AMD: 2 = PerfMonV2 */
	int gp, gp_width;         /* general-purpose counters per logical CPU */
	int fixed, fixed_width;   /* Intel fixed counters */
	int lbr_depth;            /* 0 = unknown / none */
	const char *lbr_source;   /* where lbr_depth came from */
	bool sysfs_cpu_pmu;       /* a core PMU under bus/event_source/devices */
	char sysfs_pmus[128];     /* "cpu" or "cpu_core,cpu_atom"; "" if none */
	char pmu_name[64];        /* caps/pmu_name ("skylake"), "" if absent */
	int branches;             /* caps/branches (LBR depth perf uses), -1 absent */
};

/* Decode CPUID leaf 0xA (Intel SDM vol. 2, "Architectural Performance
 * Monitoring Leaf"). */
void ks_pmu_decode_intel_0xa(const struct ks_cpuid_regs *r, struct ks_pmu_caps *c);
/* Decode AMD: leaf 0x80000022 (AMD APM vol. 3, "PerfMonV2", EBX
 * NumPerfCtrCore, LbrStackSize) when PERFMONV2, else 0x80000001.ECX[23]
 * PerfCtrExtCore (6 counters) or the legacy 4. */
void ks_pmu_decode_amd(const struct ks_cpuid_regs *ext1, const struct ks_cpuid_regs *ext22,
		       bool has_ext22, struct ks_pmu_caps *c);

/* A process holding perf_event file descriptors, or the NMI watchdog. */
struct ks_pmu_holder {
	int32_t pid;              /* 0 for the NMI watchdog */
	char comm[32];
	char cmdline[256];
	int nfds;                 /* perf_event fds */
	bool is_perf;             /* the perf tool: its options were parsed */
	bool system_wide;         /* counts CPUs, not a task (perf -a / -C, or watchdog) */
	bool system_wide_guess;   /* not perf: fds >= online CPUs (a guess) */
	struct ks_cpuset cpus;    /* CPUs it counts on (system-wide) */
	int hw_events;            /* hardware events per CPU it asks for */
	int pinned_events;        /* of those, pinned (":D", or the watchdog) */
	bool lbr;                 /* uses the LBR (perf -b/-j, --call-graph lbr) */
	bool lbr_pinned;
};

/* A VM: a QEMU process (command line) or any process with a kvm-vm fd. */
struct ks_pmu_vm {
	int32_t pid;
	char name[64];            /* -name guest=..., else comm */
	char cpu_model[64];       /* -cpu MODEL ("host"); "" if not given */
	int pmu;                  /* 1 on, 0 off, -1 unknown */
	const char *pmu_why;      /* "pmu=on", "default for -cpu host", ... */
	char lbr_fmt[32];         /* lbr-fmt=..., "" if absent */
	bool lbr_possible;        /* the guest may use the LBR */
	int nvcpus;               /* "CPU n/KVM" threads */
	struct ks_cpuset cpus;    /* where its vCPU threads may run */
	/* verdict */
	int avail_gp, avail_fixed;
	bool may_read_wrong;      /* host pinned users on its CPUs */
	bool lbr_may_be_taken;
	char takers[256];         /* names of the pinned users on its CPUs */
	char verdict[512];
};

struct ks_pmu_kvm {
	bool module;              /* /sys/module/kvm exists */
	bool dev_kvm;             /* /dev/kvm exists */
	int enable_pmu;           /* 1 Y, 0 N, -1 absent */
	char vendor_modules[128]; /* "kvm_intel", "kvm_amd"... loaded */
	char vendor_params[256];  /* their pmu/lbr-related parameters, "name=value ..." */
};

struct ks_pmu_host {
	struct ks_pmu_caps caps;
	struct ks_pmu_kvm kvm;
	int nmi_watchdog;         /* 1 on, 0 off, -1 unknown */
	struct ks_cpuset online;
	int ncpus;
	struct ks_pmu_holder *holders;
	size_t nholders;
	struct ks_pmu_vm *vms;
	size_t nvms;
	int unreadable;           /* processes whose fds could not be read */
	int pinned_gp, pinned_fixed; /* host pinned counters per CPU (worst CPU) */
};

struct ks_pmu_host_opts {
	const char *sysfs_root;   /* default "/sys" */
	const char *proc_root;    /* default "/proc" */
	const char *dev_root;     /* default "/dev" */
	const char *cpuid_file;   /* NULL = the cpuid instruction */
};

int ks_pmu_host_scan(struct ks_pmu_host **out, const struct ks_pmu_host_opts *o,
		     struct ks_error *err);
void ks_pmu_host_free(struct ks_pmu_host *h);

/* Parse a perf command line (argv, NUL-separated, LEN bytes) into H's
 * mode, CPUs, event counts and LBR use.  ONLINE = all CPUs. */
void ks_pmu_parse_perf_cmdline(const char *argv, size_t len, const struct ks_cpuset *online,
			       struct ks_pmu_holder *h);
/* Parse a QEMU command line (argv, NUL-separated) into V's name, cpu
 * model, pmu and lbr-fmt.  Returns false if it is not QEMU. */
bool ks_pmu_parse_qemu_cmdline(const char *argv, size_t len, struct ks_pmu_vm *v);

#endif
