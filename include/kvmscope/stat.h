/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat.h - exit / MMIO / I/O port / MSR accounting (kvmscope stat).
 *
 * The accounting is the one `perf kvm stat report` does, so numbers can be
 * compared one to one: an event class (vmexit, mmio, ioport, msr) has begin
 * and end tracepoints per architecture; the time of one occurrence runs from
 * its begin to the next end on the same host thread, and is keyed by what the
 * begin (or end) event says (exit reason, guest physical address, port, MSR).
 *
 *	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
 *	cfg.event_class = "vmexit";
 *	struct ks_stat *st = ks_stat_new(&cfg, ks_source_info(src), &err);
 *	while (ks_source_next(src, &rec, &err) > 0) ks_stat_add(st, &rec);
 *	ks_stat_finish(st);  ... ks_stat_rows(st, view, ...) ... ks_stat_free(st);
 *
 * Rows are kept per "view": a set of dimensions (VM, vCPU, key) chosen before
 * the run, updated in event order, so a view over "key" alone has exactly
 * perf's floating-point statistics.
 */
#ifndef KVMSCOPE_STAT_H
#define KVMSCOPE_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"

struct ks_host;
struct ks_limits;
struct ks_source;
struct ks_stat;
struct ks_stat_row;
struct ks_stat_occurrence;

/* Dimensions of a view (bit mask). */
enum {
	KS_DIM_VM = 1,    /* host process (tgid) */
	KS_DIM_VCPU = 2,  /* vCPU id */
	KS_DIM_KEY = 4,   /* exit reason / address / port / MSR */
};

#define KS_STAT_MAX_VIEWS 4
#define KS_MAX_PIDS 64

enum ks_measure {
	KS_MEASURE_HANDLING, /* begin (exit) -> end (entry): time in the host */
	KS_MEASURE_RUN,      /* entry -> exit (guest run time), keyed by the exit */
	KS_MEASURE_PERF,     /* what perf does on the input's architecture:
			      * run on arm64 and riscv, handling elsewhere */
};

/* One occurrence measured (cfg.observe): its begin and end times (the
 * source's clock, as ks_record.ts), its host thread and the VM and vCPU the
 * rows saw it in, its row of view 0, and what the events said of it. */
struct ks_stat_occurrence {
	uint64_t begin_ts, end_ts, ns;
	int32_t tid, vm, vcpu;
	const struct ks_stat_row *row;   /* its row of view 0 */
	uint64_t key;                    /* its key (exit reason...), as rows key it */
	int32_t info, table;
	bool has_ip;
	uint64_t ip;                     /* the guest address of the exit */
	/* an event of another class in the occurrence (x86: the MMIO address
	 * of a kvm_mmio, the port of a kvm_pio, the MSR of a kvm_msr), named
	 * by ks_stat_occurrence_detail(); DETAIL_CLASS NULL = none */
	const char *detail_class;        /* "mmio", "ioport", "msr" */
	uint64_t detail_key;
	int32_t detail_info;
};

struct ks_stat_config {
	const char *event_class;    /* "vmexit" (default), "mmio", "ioport", "msr" */
	int vcpu;                   /* only this vCPU; -1 = all */
	int npids;                  /* only these host processes; 0 = all */
	int32_t pids[KS_MAX_PIDS];
	unsigned views[KS_STAT_MAX_VIEWS]; /* KS_DIM_* masks; 0 ends the list */
	bool no_histograms;         /* skip percentiles (perf's layout has none) */
	bool no_begin_counts;       /* skip KS_STAT_BEGINS (perf's layout has none) */
	bool perf_compat;           /* perf 6.1 semantics where they differ:
				     * a thread's vCPU is fixed by its first kvm_entry */
	enum ks_measure measure;    /* KS_MEASURE_HANDLING (default) */
	const char *arch;           /* "arm64"...: force the tables; NULL = from the input */
	/* the run's budgets (limits.threads: distinct threads tracked); NULL =
	 * the source's (ks_stat_new_source) or the defaults */
	const struct ks_limits *limits;
	/* The host model (host.h) whose attribution rows take: each thread's
	 * VM and vCPU are the model's, read whenever the engine would revise
	 * its own.  The caller gives the model every record before this
	 * engine (ks_host_observe, then ks_stat_add), so a model that has
	 * seen earlier records (COMM, vcpu_load) than this engine attributes
	 * as over the whole stream.  NULL = the engine's own attribution.
	 * Ignored in perf_compat mode. */
	const struct ks_host *host;
	/* Called for every occurrence measured, after the rows were updated:
	 * ROW is the occurrence's row of view 0, NS its time.  NULL = none. */
	void (*on_occurrence)(void *ctx, const struct ks_stat_row *row, uint64_t ns);
	void *on_occurrence_ctx;
	/* Called for every occurrence measured that took OBSERVE_MIN_NS or
	 * more, after the rows were updated, with what is known of it (struct
	 * ks_stat_occurrence): the slow-exit log, the heatmap.  While it is
	 * set, the engine also reads the guest address of each begin and
	 * follows the other classes' events (kvm_mmio, kvm_pio, kvm_msr) on a
	 * thread in an occurrence, for the occurrence's detail.  NULL = none. */
	void (*observe)(void *ctx, const struct ks_stat_occurrence *occ);
	void *observe_ctx;
	uint64_t observe_min_ns;
	/* Called for an open keyed occurrence that another begin replaced at
	 * TS (its end was not traced; it is not measured): ROWS are its rows
	 * of each view (NULL where unknown), BEGIN its start.  Context:
	 * on_occurrence_ctx.  NULL = none. */
	void (*on_replaced)(void *ctx, struct ks_stat_row *const *rows, uint64_t begin,
			    uint64_t ts);
};

#define KS_STAT_CONFIG_INIT { .event_class = "vmexit", .vcpu = -1, .views = { KS_DIM_KEY } }

/* Statistics of one row.  Welford's running mean/M2 in doubles, exactly as
 * perf's update_stats(), so that perf-format output matches perf. */
struct ks_stat_row {
	int32_t vm;          /* -1 unless the view has KS_DIM_VM (or unknown) */
	int32_t vcpu;        /* -1 unless the view has KS_DIM_VCPU (or unknown) */
	uint64_t key;
	int32_t info;        /* read/write flag of mmio, ioport, msr keys */
	int32_t table;       /* the class's name table of the key (arm64: type or EC) */
	int32_t thread;      /* host tid when the view has KS_DIM_VCPU and the
			      * vCPU is unknown; else -1 */
	uint64_t seq;        /* creation order (perf's tie order) */
	uint64_t count;
	uint64_t total_ns;
	uint64_t min_ns, max_ns;
	double n, mean, m2;  /* Welford */
	uint32_t *hist[64];  /* log-linear latency histogram, chunks on demand */
};

/* Counters of unmatched and odd events, for the report's footer. */
struct ks_stat_anomalies {
	uint64_t before_first_entry;  /* a thread's events before its first kvm_entry */
	uint64_t end_without_begin;   /* end event with no begin pending */
	uint64_t begin_replaced;      /* a keyed begin overwritten by another begin */
	uint64_t end_before_begin;    /* end timestamp earlier than its begin */
	uint64_t short_payloads;      /* payloads too short for the fields read */
	uint64_t lost_events;         /* LOST records seen in the stream */
	/* not an anomaly: the occurrences measured whose begin had a key (the
	 * keyed begin counts, KS_STAT_BEGINS, count those begins; an MMIO
	 * read's begin, an unkeyed exit, is not among them) */
	uint64_t keyed_ends;
};

/* INFO: what the input says about its machine (arch, CPUID), used to pick
 * the architecture's tables. */
struct ks_source_info;
struct ks_stat *ks_stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
			    struct ks_error *err);
/* Same, for an opened source: the architecture is also detected from the
 * events present, and trace.dat GUEST options feed the vCPU attribution. */
struct ks_stat *ks_stat_new_source(const struct ks_stat_config *cfg, struct ks_source *src,
				   struct ks_error *err);
void ks_stat_add(struct ks_stat *st, const struct ks_record *rec);
/* Ask SRC for the events that play a part only (ks_source_select).  For a
 * source that feeds this engine alone.  Returns 0, or -1 when SRC does not
 * select (nothing changes). */
int ks_stat_select(struct ks_stat *st, struct ks_source *src);
/* The same for N records (from ks_source_next_batch). */
void ks_stat_add_batch(struct ks_stat *st, const struct ks_record *recs, size_t n);
void ks_stat_free(struct ks_stat *st);
/* Occurrences measured elsewhere (a live engine's series, engine.h),
 * added to every view's rows as if ks_stat_add() had measured them: COUNT
 * occurrences of KEY (name table TABLE; ISA: the x86 exit table, 0 =
 * unknown) on thread TID of VM, vCPU VCPU.  Their histogram is BUCKETS
 * (NBUCKETS: counts of values <= BOUNDS[i], the last one the rest),
 * each counted at its bound; the rows' deviation is unknown (0). */
struct ks_stat_aggregate {
	int32_t vm, vcpu, tid, table;
	int isa;
	uint64_t key;
	uint64_t count, sum_ns, min_ns, max_ns;
	const uint64_t *buckets, *bounds;
	unsigned nbuckets;
};
void ks_stat_add_aggregate(struct ks_stat *st, const struct ks_stat_aggregate *a);
/* 0 while the engine counts; -1 with ERR filled once it stopped: more
 * distinct threads than limits.threads ("FILE: offset N: ..."), or out of
 * memory.  Records added after that are ignored; check it after the last. */
int ks_stat_error(const struct ks_stat *st, struct ks_error *err);

/* The class in use: its name ("vmexit") and perf's column title ("VM-EXIT"). */
const char *ks_stat_class_name(const struct ks_stat *st);
const char *ks_stat_class_title(const struct ks_stat *st);
/* The exit-reason table chosen ("VMX", "SVM", "arm64", "HV", "SIE"...). */
const char *ks_stat_isa_name(const struct ks_stat *st);
/* The architecture ("x86", "arm64"...) and how it was chosen ("header",
 * "events", "option", "default"). */
const char *ks_stat_arch_name(const struct ks_stat *st);
const char *ks_stat_arch_source(const struct ks_stat *st);
/* "handling" (exit -> entry) or "run" (entry -> exit): the measure in use. */
const char *ks_stat_measure_name(const struct ks_stat *st);
/* Which begin/end events a class with alternatives used (arm64 trap:
 * "kvm_trap_enter -> kvm_trap_exit" or the kvm_exit fallback); NULL if the
 * class has no alternatives. */
const char *ks_stat_variant(const struct ks_stat *st);
/* perf's decode_str_len for the architecture: perf cuts names at len - 1. */
int ks_stat_perf_decode_len(const struct ks_stat *st);
/* The width of perf's name column (the event title and each row's name)
 * in the perf version --format perf follows for the architecture. */
int ks_stat_perf_name_width(const struct ks_stat *st);

/* Attribution of the host threads that had KVM events, sorted by VM, vCPU,
 * tid (see attribution.h).  The array belongs to st. */
struct ks_attr_thread;
size_t ks_stat_attribution(const struct ks_stat *st, const struct ks_attr_thread ***threads);
/* A VM's name: its guest name (trace.dat GUEST option) or the COMM of its
 * process (the model's, with cfg.host); NULL if unknown. */
const char *ks_stat_vm_name(const struct ks_stat *st, int32_t vm);

/* Human name of a row's key: exit reason ("HLT", "UNKNOWN(0x1234)"), or
 * "0xfee00000:W" style keys.  PERF_STYLE prints what perf 6.1 prints
 * ("UNKNOWN" for unknown exit codes). */
void ks_stat_key_name(const struct ks_stat *st, const struct ks_stat_row *row,
		      bool perf_style, char *buf, size_t len);

/* The key of an occurrence (cfg.observe) as ks_stat_key_name() names a
 * row's ("HLT", "0xfee00000:W"), in BUF. */
void ks_stat_occurrence_key(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			    char *buf, size_t len);
/* The detail of an occurrence (cfg.observe) as its class names its keys
 * ("0xfee00000:W", "0x80:POUT", "0x6e0:W IA32_TSC_DEADLINE"), in BUF;
 * false (BUF empty) when it has none. */
bool ks_stat_occurrence_detail(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			       char *buf, size_t len);

/* Number of views and the KS_DIM_* mask of view V. */
int ks_stat_nviews(const struct ks_stat *st);
unsigned ks_stat_view_dims(const struct ks_stat *st, int view);

/* The rows of view V (index into cfg.views) with count > 0, in perf's
 * iteration order.  The array belongs to st.  V = KS_STAT_BEGINS gives the
 * count of keyed begin events (every kvm_exit by reason, matched or not):
 * rows with count only, no times. */
#define KS_STAT_BEGINS (-1)
size_t ks_stat_rows(const struct ks_stat *st, int view, struct ks_stat_row ***rows);
/* Each occurrence still open (its begin seen, its end not yet) whose row
 * in VIEW is known: FN(CTX, row, begin timestamp).  The row may have no
 * occurrence measured yet (count 0). */
void ks_stat_open(const struct ks_stat *st, int view,
		  void (*fn)(void *ctx, const struct ks_stat_row *row, uint64_t begin_ns),
		  void *ctx);

/* False when the row's key (exit code) is not in the architecture's table. */
bool ks_stat_key_known(const struct ks_stat *st, const struct ks_stat_row *row);
/* Whether ROW's key (an exit of the vmexit class) is one its architecture's
 * table says halts the vCPU: x86 HLT, arm64 WFx, s390's wait state,
 * loongarch's IDLE... */
bool ks_stat_row_halts(const struct ks_stat *st, const struct ks_stat_row *row);

/* Sort ROWS by KEY: sample, time, mean_t, max_t, min_t, ev_name, p99 (all
 * descending but ev_name); ties keep their order.  In perf_compat mode
 * "time" means mean time, as in perf 6.1. */
/* Whether KEY is a sort key of ks_stat_sort() (for a usage error first). */
bool ks_stat_sort_key_valid(const char *key);
int ks_stat_sort(const struct ks_stat *st, struct ks_stat_row **rows, size_t n, const char *key,
		 struct ks_error *err);

const struct ks_stat_anomalies *ks_stat_anomalies(const struct ks_stat *st);

/* The VMs (process ids) whose guest state is protected, as far as the
 * class's events tell (--event vmgexit: SEV-ES/SNP guests, which exit
 * through VMGEXIT); *VMS is valid while ST lives.  At most
 * KS_STAT_MAX_PROTECTED are listed. */
#define KS_STAT_MAX_PROTECTED 256
size_t ks_stat_protected_vms(const struct ks_stat *st, const int32_t **vms);
/* Whether the class can tell a protected VM (then an empty list means none). */
bool ks_stat_state_protected(const struct ks_stat *st);

/* A VM's or thread's name as learnt from COMM records; NULL if unknown. */
const char *ks_stat_comm(const struct ks_stat *st, int32_t tid);

/* Row statistics. */
double ks_stat_row_stddev_pct(const struct ks_stat_row *row); /* perf's "+-" */
/* Q in [0,1]; value within 1% (log-linear buckets of 1/128 relative width). */
uint64_t ks_stat_row_quantile(const struct ks_stat_row *row, double q);
/* log2 histogram: counts of values in [2^i, 2^(i+1)) ns, i = 0..63. */
void ks_stat_row_log2_hist(const struct ks_stat_row *row, uint64_t out[64]);

#endif
