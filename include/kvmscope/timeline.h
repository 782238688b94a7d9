/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * timeline.h - vCPU states over time, from a host trace and its guests.
 *
 *	struct ks_timeline *tl = ks_timeline_new(m);   // m: an open ks_merge
 *	while (ks_merge_next(m, &r, &err) > 0) ks_timeline_feed(tl, &r);
 *	ks_timeline_finish(tl);
 *	ks_timeline_print_summary(tl, stdout);
 *	ks_timeline_write_json(tl, out);   // perfetto.c
 *	ks_timeline_write_html(tl, out);   // timeline_html.c
 *
 * States, computed the way Trace Compass's virtual machine analysis does:
 *  RUNNING    in the guest (kvm_entry .. kvm_exit) with a guest task running
 *  IDLE       in the guest while the guest runs its idle task (needs the
 *             guest's sched_switch events)
 *  HOST       in the host handling an exit (the interval carries the reason)
 *  HALTED     after an HLT (VMX/SVM) exit, until the next kvm_entry
 *  PREEMPTED  switched out by the host scheduler while runnable, not in guest
 *  BLOCKED    switched out sleeping, not in guest and not halted
 * A guest task is known only inside its guest trace's data: an exit of a
 * VM with a guest trace is charged to its task only if an event of that
 * trace comes after the exit with no lost-events marker of the vCPU
 * between (else to "(no guest data)", as every exit before the trace's
 * first event or after its last), and only from the vCPU's first guest
 * sched_switch on, or its first after lost events (before: "(guest task
 * unknown)").  A guest task's slice ends at its trace's last event.
 * A vCPU is a host thread that ran kvm_entry; its VM is the guest trace
 * whose GUEST option names that thread, else the threads whose tid minus
 * vcpu_id are equal (vCPU threads are created one after the other).
 */
#ifndef KVMSCOPE_TIMELINE_H
#define KVMSCOPE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "merge.h"

enum ks_vstate {
	KS_VS_RUNNING,
	KS_VS_IDLE,
	KS_VS_HOST,
	KS_VS_HALTED,
	KS_VS_PREEMPTED,
	KS_VS_BLOCKED,
	KS_VS_COUNT
};

const char *ks_vstate_name(enum ks_vstate s);

struct ks_tl_interval {
	uint64_t start, end;   /* host ns */
	uint32_t vcpu;         /* index in tl->vcpus */
	uint16_t state;        /* enum ks_vstate */
	uint16_t reason;       /* index in tl->reasons (HOST/HALTED), else 0 */
};

/* What ran on a host CPU: a vCPU in guest mode. */
struct ks_tl_cpu_slice {
	uint64_t start, end;
	int32_t cpu;
	uint32_t vcpu;
};

/* A guest task running on a vCPU, or a guest event (end == start). */
struct ks_tl_guest_item {
	uint64_t start, end;
	uint32_t vcpu;
	uint32_t name;         /* index in tl->names */
};

struct ks_tl_longest {
	uint64_t dur, start;
};

struct ks_tl_vcpu {
	int32_t tid;
	uint32_t vcpu_id;
	uint32_t vm;           /* index in tl->vms */
	char comm[32];
	uint64_t state_ns[KS_VS_COUNT];
	struct ks_tl_longest longest[KS_VS_COUNT];
	/* state machine */
	uint16_t cur_state, cur_reason;
	bool has_state, in_guest, halted;
	uint64_t since;
	uint64_t guest_since;  /* kvm_entry time while in guest */
	int32_t guest_cpu;
	uint64_t exit_ts;      /* start of the current exit */
	uint16_t exit_reason;
	int32_t gtask;         /* current guest task (index in names), -1 */
	bool gtask_idle;
	uint64_t gtask_since;
	int32_t exit_task;     /* guest task at the current exit, -1 */
	uint64_t glast;        /* last guest event on this vCPU (host ns) */
	/* exit costs of task pend_task since the guest's last event: the
	 * guest's data must go on past them for the task to be known */
	int32_t pend_task;
	struct ks_tl_pend { uint16_t reason; uint64_t ns, count; } *pend;
	uint32_t nr_pend, cap_pend;
};

struct ks_tl_vm {
	char name[96];
	int guest_input;       /* merge input of its trace, or -1 */
	int64_t key;
	bool guest_seen;       /* an event of its guest trace went by */
	bool pending;          /* a vCPU of it holds exit costs (ks_tl_vcpu.pend) */
	uint64_t guest_last;   /* host time of the last one */
	bool state_protected;  /* a confidential guest (it exited via VMGEXIT) */
	bool idle_seen;        /* an IDLE interval of a vCPU of it was logged */
	uint64_t idle_last;    /* the latest start of one */
};

/* Exit cost per (guest task, reason). */
struct ks_tl_cost {
	uint32_t task;         /* index in names */
	uint16_t reason;
	uint64_t ns, count;
};

/* The lists that grow with the input (intervals, CPU slices, guest tasks)
 * are kept in memory up to the budget limits.tables and in a temporary
 * file beyond it (util/spill.h); they are read in the order they were
 * built with a cursor:
 *
 *	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
 *	const struct ks_tl_interval *iv;
 *	while ((iv = ks_tl_cursor_next(c))) ...;
 *	ks_tl_cursor_free(c);
 *
 * A cursor that cannot read (or be made) ends early: ks_timeline_error()
 * then says why. */
enum ks_tl_list { KS_TL_INTERVALS, KS_TL_CPU_SLICES, KS_TL_GUEST_TASKS };
struct ks_tl_cursor;
struct ks_spill;

struct ks_timeline {
	struct ks_merge *merge;
	struct ks_tl_vcpu *vcpus; uint32_t nr_vcpus;
	struct ks_tl_vm *vms; uint32_t nr_vms;
	uint64_t nr_iv, nr_cpu, nr_gtasks;  /* items of the lists */
	struct ks_spill *spill; /* the lists' memory budget and file, for the outputs' own */
	struct ks_tl_guest_item *gevents; uint64_t nr_gevents, cap_gevents;
	uint64_t max_gevents;  /* guest instant events kept (default 100000) */
	uint64_t dropped_gevents;
	struct ks_tl_cost *costs; uint32_t nr_costs, cap_costs;
	char **names; uint32_t nr_names, cap_names;     /* strings: tasks, events */
	char **reasons; uint32_t nr_reasons, cap_reasons; /* [0] = "" */
	uint64_t first_ts, last_ts;
	uint64_t host_switches; /* host sched_switch events seen */
	uint64_t win_start, win_end; /* exit costs counted in [start, end) */
	uint32_t no_data;      /* index in names of "(no guest data)" */
	uint32_t no_task;      /* ... of "(guest task unknown)" */
	bool have_ts;
	bool oom;
	void *priv;
};

struct ks_timeline *ks_timeline_new(struct ks_merge *m);
/* A cursor at the first item of list WHICH (NULL when out of memory). */
struct ks_tl_cursor *ks_tl_cursor_new(const struct ks_timeline *tl, enum ks_tl_list which);
/* The next item (a struct ks_tl_interval, ks_tl_cpu_slice or
 * ks_tl_guest_item), or NULL at the end (or on a read error). */
const void *ks_tl_cursor_next(struct ks_tl_cursor *c);
void ks_tl_cursor_free(struct ks_tl_cursor *c);
void ks_timeline_free(struct ks_timeline *tl);
void ks_timeline_feed(struct ks_timeline *tl, const struct ks_merge_rec *r);
/* Closes every open interval at the last timestamp seen. */
void ks_timeline_finish(struct ks_timeline *tl);
/* 0, or -1 with ERR filled once the timeline stopped: out of memory (the
 * first failed allocation ends it), or more vCPU threads than the source's
 * limits.threads ("FILE: offset N: ...").  Feeding more records then does
 * nothing. */
struct ks_error;
int ks_timeline_error(const struct ks_timeline *tl, struct ks_error *err);

/* Limits the finished timeline to the window [START, END) of host ns (for
 * --time): intervals, CPU slices and guest tasks are cut at its edges, the
 * rest dropped; guest events outside it dropped; per-vCPU state times and
 * longest intervals recomputed; first_ts / last_ts become the window's part
 * of the trace.  The states at the window's start are those the whole
 * input led to (the machine ran from the start).  END 0 = no end. */
void ks_timeline_clip(struct ks_timeline *tl, uint64_t start, uint64_t end);
/* Counts exit costs per guest task only for the part of each exit inside
 * [START, END) (END 0 = no end); call before the first ks_timeline_feed(),
 * with the window later given to ks_timeline_clip(). */
void ks_timeline_set_window(struct ks_timeline *tl, uint64_t start, uint64_t end);

/* Per vCPU: time and % in each state, longest interval of each; then the
 * exit cost per guest task. */
void ks_timeline_print_summary(const struct ks_timeline *tl, FILE *out);

/* Exits per second of each VM, in buckets of bucket_ns (1 ms, 10 ms, ...:
 * at most KS_TL_MAX_BUCKETS over the span) starting at first_ts: an exit
 * is a HOST or HALTED interval entered from guest mode (or first).  The
 * same numbers go to the JSON and the Perfetto protobuf counters. */
#define KS_TL_MAX_BUCKETS 10000
struct ks_tl_rates {
	uint64_t bucket_ns, nr_buckets;
	uint32_t nr_vms;
	uint64_t *count;       /* exits in bucket b of VM v: [v * nr_buckets + b] */
};
/* 0, or -1 when out of memory. */
int ks_timeline_exit_rates(const struct ks_timeline *tl, struct ks_tl_rates *out);
void ks_tl_rates_free(struct ks_tl_rates *r);
/* Value of a counter sample: exits per second. */
static inline uint64_t ks_tl_rate_per_s(const struct ks_tl_rates *r, uint64_t count)
{
	return count * (1000000000ull / r->bucket_ns);
}

/* Chrome / Perfetto trace-event JSON (perfetto.c). */
void ks_timeline_write_json(const struct ks_timeline *tl, FILE *out);
/* Perfetto's own protobuf trace (perfetto_pb.c, schema perfetto_trace.proto):
 * one process per VM with a thread track per vCPU (state slices) and per
 * guest-task row, an "exits/s" counter track per VM, a "Host CPUs" process
 * with a thread track per CPU.  The slices, instants and counters are those
 * of the JSON, timestamps in host ns.  0, or -1 when out of memory. */
int ks_timeline_write_perfetto(const struct ks_timeline *tl, FILE *out);
/* A self-contained HTML page drawing the timeline (timeline_html.c): its
 * size is bounded (levels of detail, see there), not proportional to the
 * input.  0, or -1 when out of memory. */
int ks_timeline_write_html(const struct ks_timeline *tl, FILE *out);

/* The host model the timeline attributed threads with (thread -> VM,
 * vCPU; its "threads" JSON: host_json.h). */
struct ks_host;
struct ks_host *ks_timeline_host(const struct ks_timeline *tl);

#endif
