/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch.h - per-architecture knowledge of KVM tracepoints, as data.
 *
 * An architecture lists its event classes (vmexit, mmio, hcall, trap...).
 * A class says which tracepoints begin and end one occurrence, which fields
 * give the row key, which "child" events refine a pending key (s390), and
 * how a key is printed.  The architecture also says which exits halt the
 * vCPU, which are periodic samples, and where the guest address and mode
 * are.  Every engine asks these tables (stat, top, record/live, report,
 * timeline, the host model's vCPU fields, the ftrace text reader's event
 * formats); adding an architecture is adding a file here (x86_kvm.c,
 * arm64_kvm.c, powerpc_kvm.c, s390_kvm.c, riscv_kvm.c, loongarch_kvm.c) and
 * one line in the list of arch_list.c (tests/arch/testarch.c shows a whole
 * one).
 *
 * Rules are written for the "handling" measure (exit -> entry).  The "run"
 * measure (entry -> exit) swaps the begin and end rules of classes that
 * allow it (run_ok).
 */
#ifndef KVMSCOPE_ARCH_H
#define KVMSCOPE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/field.h"

struct tep_handle;
struct ks_text_layout;

/* A code -> name table entry (exit reasons, trap codes, hcalls...). */
struct ks_code_name {
	uint64_t code;
	const char *name;
};

/* NAME of CODE in TABLE (N entries, any order); NULL if absent. */
const char *ks_code_lookup(const struct ks_code_name *table, size_t n, uint64_t code);

/* One tracepoint rule: event SYSTEM:NAME, optionally only when COND_FIELD
 * equals COND_VALUE; KEY_FIELD / INFO_FIELD (NULL = none) give the row key.
 * KEY2_FIELD is a second value handed to the class's compose() (arm64:
 * esr_ec next to the exception type).  TABLE says which of the class's name
 * tables the key is looked up in.  A FALLBACK rule is used only when the
 * input lacks the class's preferred event. */
struct ks_match {
	const char *system;
	const char *name;
	const char *cond_field;
	uint64_t cond_value;
	const char *key_field;
	const char *info_field;
	const char *key2_field;
	bool fallback;
	int32_t table;
};

#define KS_MAX_MATCH 3
#define KS_MAX_CHILD 4

/* How a class prints a key.  PERF_STYLE = exactly as perf does. */
struct ks_key_ctx {
	int isa;                 /* x86 exit-reason table in use: KS_ISA_* */
	int32_t table;           /* the class's name table of this key */
};

typedef void (*ks_key_name_fn)(const struct ks_key_ctx *ctx, uint64_t key, int32_t info,
			       bool perf_style, char *buf, size_t len);

/* Turn a rule's raw values into the row key and its table (arm64: TRAP
 * exits are keyed by EC, others by exception type; s390: an instruction
 * word becomes its opcode key). */
typedef void (*ks_key_compose_fn)(uint64_t *key, uint64_t key2, int32_t *table);

struct ks_event_class {
	const char *name;        /* "vmexit", as given to --event */
	const char *title;       /* perf's column title, "VM-EXIT" */
	struct ks_match begin[KS_MAX_MATCH];
	struct ks_match end[KS_MAX_MATCH];
	ks_key_name_fn key_name;
	/* NULL = every key has a name; else false for keys not in the table. */
	bool (*key_known)(const struct ks_key_ctx *ctx, uint64_t key);
	/* Events that replace the key of the pending occurrence (perf's
	 * child events: s390 instruction, sigp, diag, program intercepts). */
	struct ks_match child[KS_MAX_CHILD];
	ks_key_compose_fn compose;   /* NULL: the key field as is */
	/* perf's keying where it differs from ours (perf_compat, i.e.
	 * --format perf): riscv perf 6.12 keys by the raw scause. NULL: compose. */
	ks_key_compose_fn perf_compose;
	/* When the input has PREFERRED_SYSTEM:PREFERRED_NAME, the fallback
	 * rules are ignored; the two texts say which pair was used. */
	const char *preferred_system, *preferred_name;
	const char *variant_preferred, *variant_fallback;
	bool run_ok;             /* --measure run makes sense (entry -> exit) */
	/* The names of the begin rule's keys (table 0), for name -> code
	 * lookups (report --sample-exits); NULL: not listed. */
	const struct ks_code_name *names;
	size_t nnames;
	/* A child match says the VM's state is protected (x86 SEV-ES/SNP:
	 * its exits go through VMGEXIT, rip and registers are encrypted). */
	bool state_protected;
};

/* One tracepoint's format as tracefs prints it (events/SYSTEM/NAME/format),
 * without the name, ID and common fields: its field lines and print fmt.
 * Readers of text that carries no formats (ftrace text) build their events
 * from these.  BUILD (when BODY is NULL) makes a body at run time, malloc'd,
 * for a print fmt written from the architecture's tables (x86 kvm_exit's
 * two exit-reason tables). */
struct ks_event_format {
	const char *system, *name;
	const char *body;
	char *(*build)(void);
};

/* One field line of a format body (tracefs's layout). */
#define KS_FORMAT_FIELD(decl, off, size, sgn) \
	"\tfield:" decl ";\toffset:" #off ";\tsize:" #size ";\tsigned:" #sgn ";\n"

enum {
	KS_ISA_UNKNOWN = 0,
	KS_ISA_VMX = 1,          /* the values of x86 kvm_exit's isa field */
	KS_ISA_SVM = 2,
};

enum { KS_ARCH_MEASURE_HANDLING = 0, KS_ARCH_MEASURE_RUN = 1 };

/* perf's choices (tools/perf/arch/ARCH/util/kvm-stat.c), which only the
 * perf-compatible layout (stat --format perf) follows. */
struct ks_arch_perf {
	const char *vcpu_field;      /* vcpu_id_str: read from the first entry */
	int measure;                 /* KS_ARCH_MEASURE_* */
	int decode_len;              /* decode_str_len: names are cut at len - 1 */
	int name_width;              /* perf's width of the name column (print_result) */
	/* perf's rows are hist entries keyed by their name (perf 6.3+: the
	 * riscv perf is 6.12): ties sort by name, -k time is total time */
	bool hists;
};

/* What only `kvmscope report` asks: it keys exits by the raw key2 field
 * (BY_KEY2: arm64 esr_ec), printed with KEY2_FORMAT (a printf format of one
 * unsigned long long). */
struct ks_arch_report {
	bool by_key2;
	const char *key2_format;
};

/* What only a live recording (record, top, exporter) asks. */
struct ks_arch_live {
	/* The trace clock it prefers when the kernel offers it (x86
	 * "x86-tsc": guest timestamps sync with it); NULL: "local". */
	const char *trace_clock;
	/* Further events it wants (x86 kvm_write_tsc_offset, for guest time
	 * sync); NULL-terminated "system:name" strings. */
	const char *const *extra_events;
};

struct ks_arch {
	const char *name;            /* "x86", "arm64", "powerpc", "s390", "riscv", "loongarch" */
	const char *entry_system;    /* the event that binds a thread to a vCPU */
	const char *entry_name;
	const char *entry2_name;     /* a second entry event (loongarch kvm_reenter) */
	const char *entry_vcpu_field;/* NULL or absent: the entry names no vCPU */
	const char *exit_vcpu_field; /* vCPU id field of begin events, if any */
	const struct ks_event_class *classes; /* NULL name ends */
	struct ks_arch_perf perf;     /* --format perf only */
	struct ks_arch_live live;     /* live recordings only */
	const char *isa_name;        /* exit-reason table label: "ARM64", "HV", "SIE"... */
	const char *const *machines; /* uname -m / perf ARCH values; NULL ends */
	/* Words of a perf CPUID string that name this architecture's CPUs
	 * ("GenuineIntel,6,85,7", "IBM,3906,..."); NULL ends; NULL: none. */
	const char *const *cpuid_words;
	/* true when the input's events are this architecture's */
	bool (*detect)(struct tep_handle *tep);
	/* Exits as the other engines (timeline, report) see them: the begin
	 * event of the first class ("vmexit") ends guest time; its key and
	 * names are that class's.  ISA_FIELD: the exit's table selector (x86
	 * kvm_exit isa).  GUEST_IP_FIELD: the guest address of the exit. */
	const char *isa_field;
	const char *guest_ip_field;
	/* The vCPU halts (waits for an interrupt) with this exit: x86 HLT,
	 * arm64 WFx traps, s390 wait-state intercepts.  NULL: none known. */
	bool (*exit_halts)(const struct ks_key_ctx *ctx, uint64_t key);
	/* Only a guest whose state is protected takes this exit (x86 SVM
	 * VMGEXIT: SEV-ES/SNP); its exits carry no guest address.  NULL: none. */
	bool (*exit_protected)(const struct ks_key_ctx *ctx, uint64_t key);
	/* The exit is a periodic timer interrupt, a sample of where the guest
	 * runs (powerpc HV_DECREMENTER).  NULL: none. */
	bool (*exit_periodic)(const struct ks_key_ctx *ctx, uint64_t key);
	/* Guest user mode at the exit: (MODE_FIELD & MODE_USER_MASK) ==
	 * MODE_USER_VALUE (powerpc msr, s390 pswmask).  NULL: the guest
	 * address says (kernel addresses have their top bit set). */
	const char *mode_field;
	uint64_t mode_user_mask, mode_user_value;
	/* Name -> code of exit reasons where the class's names do not list
	 * them (x86: both ISAs' tables; arm64: "EC_0xNN").  NULL: the names. */
	bool (*exit_code)(const char *name, int32_t *sel, uint64_t *code);
	struct ks_arch_report report; /* kvmscope report only */
	/* libtraceevent's kvm plugin prints this architecture's exit (its
	 * vmexit class's first begin event, with isa_field and
	 * guest_ip_field) and entry events (x86 kvm_exit, kvm_entry): the
	 * print plans copy what its handlers write. */
	bool tep_kvm_plugin;
	/* An event that by itself says the vCPU halts (arm64 kvm_wfx_arm64). */
	const char *halt_system, *halt_name;
	/* The formats of the architecture's KVM events (the ones of its
	 * kernel, tests/fixtures/ARCH/), which the ftrace text reader reads
	 * lines with; the events of generic code (sched, KVM's common
	 * kvm_mmio...) are the reader's own.  NULL name ends; NULL: none. */
	const struct ks_event_format *formats;
	/* How the printed text of those events reads back into their fields
	 * where their print fmt does not say it (text_layout.h).  NULL name
	 * ends; NULL: none (the print fmts read every line). */
	const struct ks_text_layout *text_layouts;
};

/* The key of one occurrence of rule M from its payload (DATA, SIZE): the
 * rule's KEY field, through COMPOSE with its KEY2 field (the class's
 * compose, or its perf_compose for perf's keying; NULL: the key as is).
 * *TABLE: M's name table, or the one COMPOSE chose.  The one place a key is
 * decoded: stat, tpcount and the exits below (timeline, report) call it. */
static inline uint64_t ks_rule_key(const struct ks_match *m, ks_key_compose_fn compose,
				   const struct ks_field *key, const struct ks_field *key2,
				   const void *data, uint32_t size, int32_t *table)
{
	uint64_t k = ks_field_read(key, data, size, NULL);

	*table = m->table;
	if (compose)
		compose(&k, ks_field_read(key2, data, size, NULL), table);
	return k;
}

/* The exit rule of ARCH resolved on one event format (timeline, report). */
struct ks_arch_exit {
	const struct ks_arch *arch;
	const struct ks_event_class *cls;
	const struct ks_match *m;
	struct ks_field key, key2, isa, ip, mode;
};

/* True when EV is ARCH's exit event (its vmexit class's first begin rule);
 * X is then filled. */
bool ks_arch_exit_resolve(const struct ks_arch *arch, struct tep_event *ev, struct ks_arch_exit *x);
/* The key of one exit record (DATA, SIZE); CTX gets its table and isa
 * (DEFAULT_ISA when the event has no isa field).  *IP: the guest address,
 * 0 if the event has none. */
uint64_t ks_arch_exit_key(const struct ks_arch_exit *x, const void *data, uint32_t size,
			  int default_isa, struct ks_key_ctx *ctx, uint64_t *ip);
/* The raw KEY2 field of the exit (arm64 esr_ec); 0 if none. */
uint64_t ks_arch_exit_key2(const struct ks_arch_exit *x, const void *data, uint32_t size);
/* Whether the exit left guest user mode (see mode_field), given its IP. */
bool ks_arch_exit_user(const struct ks_arch_exit *x, const void *data, uint32_t size, uint64_t ip);
/* The code of exit reason NAME of ARCH (its exit_code hook, else its
 * vmexit class names) and its selector (*SEL: x86 isa, else the name
 * table); false if ARCH has no such name. */
bool ks_arch_exit_code(const struct ks_arch *arch, const char *name, int32_t *sel,
		       uint64_t *code);
/* The reason of one exit as `kvmscope report` keys it: SEL (x86 isa, else
 * the table) and the code; the report.by_key2 architectures use the raw
 * key2 field (arm64 esr_ec), as perf-less tools print it. */
uint64_t ks_arch_report_reason(const struct ks_arch_exit *x, const void *data, uint32_t size,
			       int default_isa, int32_t *sel, struct ks_key_ctx *ctx);
/* The name of a report reason (SEL, CODE) of ARCH, in BUF. */
void ks_arch_report_reason_name(const struct ks_arch *arch, int32_t sel, uint64_t code, char *buf,
				size_t len);
void ks_arch_exit_name(const struct ks_arch_exit *x, const struct ks_key_ctx *ctx, uint64_t key,
		       char *buf, size_t len);
bool ks_arch_exit_halts(const struct ks_arch *arch, const struct ks_key_ctx *ctx, uint64_t key);
bool ks_arch_exit_periodic(const struct ks_arch *arch, const struct ks_key_ctx *ctx, uint64_t key);
/* EV is ARCH's entry event / its halt event. */
bool ks_arch_is_entry(const struct ks_arch *arch, const struct tep_event *ev);
bool ks_arch_is_halt_event(const struct ks_arch *arch, const struct tep_event *ev);
/* "x86, arm64, powerpc, s390, riscv or loongarch" (ks_arches[]), in BUF. */
void ks_arch_name_list(char *buf, size_t len);
/* "vmexit (default); x86: mmio, ioport, msr; arm64: trap; powerpc: hcall":
 * the --event classes of every architecture, in BUF. */
void ks_arch_event_help(char *buf, size_t len);

extern const struct ks_arch ks_arch_x86;
extern const struct ks_arch ks_arch_arm64;
extern const struct ks_arch ks_arch_powerpc;
extern const struct ks_arch ks_arch_s390;
extern const struct ks_arch ks_arch_riscv;
extern const struct ks_arch ks_arch_loongarch;

/* Every architecture, NULL-terminated. */
extern const struct ks_arch *const ks_arches[];

/* The architecture of a source from its perf ARCH / uname machine string
 * ("x86_64", "aarch64", "ppc64le", "s390x", "riscv64", "loongarch64") or
 * its CPUID string; NULL if neither says. */
const struct ks_arch *ks_arch_for(const char *arch, const char *cpuid);
/* The architecture whose KVM events TEP holds; NULL if none matches. */
const struct ks_arch *ks_arch_detect(struct tep_handle *tep);
/* The architecture of an input, and why, for every engine (stat, census,
 * report, timeline, tpcount, the host model), so that they agree on one
 * file.  Most trusted first: NAME (the --arch option; NULL: none), the
 * input's header (MACHINE: perf ARCH / trace.dat uname; CPUID: perf's
 * string), the KVM events TEP's formats hold (ks_arch_detect), else x86,
 * perf kvm's own assumption.  *WHY (may be NULL) gets "option", "header",
 * "events" (also when MACHINE was itself read from the events:
 * MACHINE_FROM_EVENTS, ftrace text) or "default".  NULL only when NAME is
 * no architecture. */
const struct ks_arch *ks_arch_resolve(const char *name, const char *machine, const char *cpuid,
				      bool machine_from_events, struct tep_handle *tep,
				      const char **why);
const struct ks_arch *ks_arch_by_name(const char *name);
/* NAME's architecture, or the default one (x86, as ks_arch_resolve) when
 * NAME is NULL or "" (a live snapshot before its first exit). */
const struct ks_arch *ks_arch_named_or_default(const char *name);
/* The architecture whose events libtraceevent's kvm plugin prints
 * (tep_kvm_plugin); NULL if none. */
const struct ks_arch *ks_arch_tep_kvm_plugin(void);
const struct ks_event_class *ks_arch_class(const struct ks_arch *arch, const char *name);
/* "vmexit, mmio, ioport or msr": the class names of ARCH, in BUF. */
void ks_arch_class_list(const struct ks_arch *arch, char *buf, size_t len);

/* Exit-reason table chosen from a perf CPUID string ("GenuineIntel,..." ->
 * VMX, "AuthenticAMD"/"HygonGenuine" -> SVM), as perf does. */
int ks_x86_isa_from_cpuid(const char *cpuid);
const char *ks_x86_isa_name(int isa);
/* The exit-reason table of an exit whose CPUID and event said ISA
 * (KS_ISA_UNKNOWN: neither): VMX when unknown, as perf decodes them. */
static inline int ks_x86_isa_or_default(int isa)
{
	return isa != KS_ISA_UNKNOWN ? isa : KS_ISA_VMX;
}

/* The body of FORMAT (its text, or what its build() makes): malloc'd, NULL
 * when out of memory. */
char *ks_event_format_body(const struct ks_event_format *format);

/* Helpers for the detect() functions. */
bool ks_arch_has_event(struct tep_handle *tep, const char *system, const char *name);
/* Whether any architecture's table names events of SYSTEM (its KVM
 * events' formats, its entry and halt events): the readers parse those
 * formats at open, so that lookups by name on a handle see them. */
bool ks_arch_names_system(const char *system);
bool ks_arch_event_has_field(struct tep_handle *tep, const char *system, const char *name,
			     const char *field);

#endif
