/*
 * arch.h - per-architecture knowledge of KVM tracepoints, as data.
 *
 * An architecture lists its event classes (vmexit, mmio, ...).  A class says
 * which tracepoints begin and end one occurrence, which fields give the row
 * key, and how a key is printed.  The stat engine (src/analysis/stat.c)
 * interprets these tables; adding an architecture is adding a file here.
 */
#ifndef KVMSCOPE_ARCH_H
#define KVMSCOPE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tracepoint rule: event SYSTEM:NAME, optionally only when COND_FIELD
 * equals COND_VALUE; KEY_FIELD / INFO_FIELD (NULL = none) give the row key. */
struct ks_match {
	const char *system;
	const char *name;
	const char *cond_field;
	uint64_t cond_value;
	const char *key_field;
	const char *info_field;
};

#define KS_MAX_MATCH 2

/* How a class prints a key.  PERF_STYLE = exactly as perf 6.1 does. */
struct ks_key_ctx {
	int isa;                 /* exit-reason table in use: KS_ISA_* */
};

typedef void (*ks_key_name_fn)(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			       bool perf_style, char *buf, size_t len);

struct ks_event_class {
	const char *name;        /* "vmexit", as given to --event */
	const char *title;       /* perf's column title, "VM-EXIT" */
	struct ks_match begin[KS_MAX_MATCH];
	struct ks_match end[KS_MAX_MATCH];
	ks_key_name_fn key_name;
	/* NULL = every key has a name; else false for keys not in the table. */
	bool (*key_known)(const struct ks_key_ctx *ctx, uint64_t key);
};

enum {
	KS_ISA_UNKNOWN = 0,
	KS_ISA_VMX = 1,          /* the values of x86 kvm_exit's isa field */
	KS_ISA_SVM = 2,
};

struct ks_arch {
	const char *name;            /* "x86" */
	const char *entry_system;    /* the event that binds a thread to a vCPU */
	const char *entry_name;
	const char *entry_vcpu_field;
	const struct ks_event_class *classes; /* NULL name ends */
};

extern const struct ks_arch ks_arch_x86;

/* The architecture for a source ("x86_64", cpuid string...); NULL if none. */
const struct ks_arch *ks_arch_for(const char *arch, const char *cpuid);
const struct ks_event_class *ks_arch_class(const struct ks_arch *arch, const char *name);

/* Exit-reason table chosen from a perf CPUID string ("GenuineIntel,..." ->
 * VMX, "AuthenticAMD"/"HygonGenuine" -> SVM), as perf does. */
int ks_x86_isa_from_cpuid(const char *cpuid);
const char *ks_x86_isa_name(int isa);

#endif
