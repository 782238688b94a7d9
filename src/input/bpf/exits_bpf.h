/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exits_bpf.h - what the BPF engine's program (exits.bpf.c) and its loader
 * (engine_bpf.c) share: the layout of the maps' keys and values, of the
 * configuration the loader writes into the program's .rodata, and of the
 * synthetic events the test program takes.  Included by clang -target bpf
 * and by the C compiler, so only fixed-width types and no padding the two
 * could lay out differently (every struct is a multiple of 8 bytes, fields
 * in decreasing alignment, explicit pad members).
 */
#ifndef KVMSCOPE_EXITS_BPF_H
#define KVMSCOPE_EXITS_BPF_H

#include <linux/types.h>

/* ks_lat_bucket_ns's count (metrics.h); checked against it at build
 * time in engine_bpf.c. */
#define KS_BPF_NBUCKETS 24

/* One tracepoint field as the running kernel's format file places it:
 * SIZE 0 = the event has no such field (reads as NOVALUE). */
struct ks_bpf_field {
	__u16 off;
	__u8 size;        /* 1, 2, 4 or 8 */
	__u8 is_signed;
};

/* The pending exit of one vCPU thread (map "pending", keyed by tid). */
struct ks_bpf_pending {
	__u64 ts;
	__u64 reason;
	__s32 pid;
	__s32 vcpu;
	__u16 isa;
	__u8 level;
	__u8 pad[5];
};

/* One exit series (map "series", per-CPU). */
struct ks_bpf_exit_key {
	__u64 reason;
	__s32 pid, tid, vcpu;
	__u16 isa;
	__u8 level;
	__u8 pad;
};

struct ks_bpf_exit_val {
	__u64 count, sum_ns, min_ns, max_ns;
	__u64 bucket[KS_BPF_NBUCKETS + 1];
};

/* One process's count of one kvm:* event (map "tp_counts", per-CPU):
 * IDX is the BPF cookie of the attachment, the loader's event index. */
struct ks_bpf_tp_key {
	__s32 pid;
	__u32 idx;
};

/* An exit or an event the kernel could not give an element for (a
 * per-CPU hash's element is allocated when first used, and the allocator's
 * per-CPU cache can be empty for a moment: -ENOMEM, or -EBUSY while
 * another program of the same CPU holds the bucket), sent through the ring
 * "spilled" instead; the loader adds it to what it reads from the maps.
 * A full map (-E2BIG) is an overflow, never spilled. */
enum { KS_BPF_SPILL_EXIT = 1, KS_BPF_SPILL_TP = 2 };

struct ks_bpf_spill {
	__u32 kind;
	__u32 bucket;                /* KS_BPF_SPILL_EXIT: the time's bucket */
	__u64 ns;                    /* KS_BPF_SPILL_EXIT: the handling time */
	struct ks_bpf_exit_key exit; /* KS_BPF_SPILL_EXIT */
	struct ks_bpf_tp_key tp;     /* KS_BPF_SPILL_TP */
};

/* The per-CPU counters (map "stats", an array indexed by these). */
enum {
	KS_BPF_OVF_THREADS = 0,   /* an exit not kept: "pending" full */
	KS_BPF_OVF_SERIES,        /* an exit not counted: "series" full */
	KS_BPF_OVF_PROCS,         /* an event not counted: "tp_counts" full */
	KS_BPF_UNPAIRED,          /* an entry with no pending exit */
	KS_BPF_NSTATS,
};

/* Synthetic events for the test program (SEC("syscall"), run with
 * BPF_PROG_TEST_RUN): KIND says which handler gets REC, laid out as the
 * running kernel's record of that event. */
enum { KS_BPF_EV_EXIT = 1, KS_BPF_EV_ENTRY = 2, KS_BPF_EV_NESTED = 3, KS_BPF_EV_TP = 4 };
#define KS_BPF_REC_MAX 256

struct ks_bpf_test_ev {
	__u64 ts;
	__u32 kind;
	__s32 pid;
	__s32 tid;
	__u32 tp_idx;
	__u8 rec[KS_BPF_REC_MAX];
};

#endif
