/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exits.bpf.c - the BPF engine's kernel side (src/input/engine_bpf.c loads
 * it): each vCPU thread's exit is kept in "pending" until the thread's
 * next entry, which adds the handling time to its series in "series"
 * (count, sum, min, max, histogram), per CPU; every kvm:* event is counted
 * per process in "tp_counts" by one program attached to each with the
 * event's index as BPF cookie.
 *
 * Portability (one object for every kernel): the program reads no kernel
 * structure.  What it needs of a tracepoint record, the offset, size and
 * sign of the exit's reason, ISA and vCPU fields and of the entry's vCPU,
 * the loader reads from the running kernel's own format files
 * (events/kvm/NAME/format, through libtraceevent, as the tracefs engine
 * does) and the architecture tables (src/arch: which events are the exit,
 * the entry and the nested-exit markers, which fields hold what), and
 * writes into .rodata before the load; the verifier then sees them as
 * constants and drops the branches for absent fields.  The record is read
 * with bpf_probe_read_kernel at those offsets.  So nothing depends on
 * vmlinux.h, kernel BTF or a struct layout: the object needs only the
 * tracepoint program type, BPF cookies (Linux 5.15) and the syscall
 * program type of the test program (5.14; not loaded in production).
 *
 * Pairing as the stat engine pairs kvm_exit -> kvm_entry (vmexit class):
 * the exit saves (ts, pid, reason, isa, vCPU, level 1) under the thread
 * id; a nested-exit marker of the architecture's "nested" class
 * (x86 kvm_nested_vmexit, kvm_nested_vmexit_inject: KVM traces them right
 * after the kvm_exit of an exit of the L2 guest) sets level 2 on the
 * thread's pending exit; the entry looks the exit up, deletes it and
 * counts.  An entry with no pending exit (or one of another process: a
 * reused thread id) is counted in KS_BPF_UNPAIRED.  Full maps are counted
 * in the KS_BPF_OVF_* counters, never dropped silently; an element the
 * kernel cannot allocate at the moment (under load, or slow virtual CPUs)
 * sends the exit or event through the ring "spilled", whose reader adds
 * it in (exits_bpf.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "exits_bpf.h"

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

/* ---- configuration, written by the loader before load ---- */
const volatile __s32 cfg_pid = 0;              /* only this process; 0 = all */
const volatile __u8 cfg_spill_all = 0;         /* tests: no element is ever had */
const volatile __u16 cfg_default_isa = 0;      /* when the exit has no ISA field */
const volatile struct ks_bpf_field f_exit_reason = { 0 };
const volatile struct ks_bpf_field f_exit_isa = { 0 };
const volatile struct ks_bpf_field f_exit_vcpu = { 0 };
const volatile struct ks_bpf_field f_entry_vcpu = { 0 };
/* ks_lat_bucket_ns (metrics.h) */
const volatile __u64 bounds[KS_BPF_NBUCKETS] = { 0 };

/* ---- maps (max_entries set by the loader from the engine's config) ---- */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_bpf_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct ks_bpf_exit_key);
	__type(value, struct ks_bpf_exit_val);
} series SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct ks_bpf_tp_key);
	__type(value, __u64);
} tp_counts SEC(".maps");

/* the exits and events no element could be had for (exits_bpf.h) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} spilled SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KS_BPF_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		(*v)++;
}

/* Field F of the record at REC (the verifier knows F: .rodata is frozen). */
static __always_inline __u64 rd(const void *rec, const volatile struct ks_bpf_field *f)
{
	const char *p = (const char *)rec + f->off;

	if (f->size == 8) {
		__u64 v = 0;
		bpf_probe_read_kernel(&v, 8, p);
		return v;
	}
	if (f->size == 4) {
		__u32 v = 0;
		bpf_probe_read_kernel(&v, 4, p);
		return f->is_signed ? (__u64)(__s64)(__s32)v : v;
	}
	if (f->size == 2) {
		__u16 v = 0;
		bpf_probe_read_kernel(&v, 2, p);
		return f->is_signed ? (__u64)(__s64)(__s16)v : v;
	}
	if (f->size == 1) {
		__u8 v = 0;
		bpf_probe_read_kernel(&v, 1, p);
		return f->is_signed ? (__u64)(__s64)(__s8)v : v;
	}
	return 0;
}

/* The bucket of NS: the first bound >= NS, or KS_BPF_NBUCKETS (the +Inf
 * bucket): the binary search of metrics.c's bucket_of, five halvings of
 * [0, 24] being enough. */
static __always_inline __u32 bucket_of(__u64 ns)
{
	__u32 lo = 0, hi = KS_BPF_NBUCKETS;

#pragma unroll
	for (int i = 0; i < 5; i++) {
		if (lo < hi) {
			__u32 mid = (lo + hi) / 2;

			if (mid >= KS_BPF_NBUCKETS)
				break;
			if (bounds[mid] >= ns)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	return lo;
}

static __always_inline int filtered(__u64 pid_tgid)
{
	return cfg_pid && (__s32)(pid_tgid >> 32) != cfg_pid;
}

static __always_inline int do_exit(const void *rec, __u64 pid_tgid, __u64 ts)
{
	__u32 tid = (__u32)pid_tgid;
	struct ks_bpf_pending p = {};

	if (filtered(pid_tgid))
		return 0;
	p.ts = ts;
	p.pid = (__s32)(pid_tgid >> 32);
	p.reason = rd(rec, &f_exit_reason);
	p.isa = f_exit_isa.size ? (__u16)rd(rec, &f_exit_isa) : cfg_default_isa;
	p.vcpu = f_exit_vcpu.size ? (__s32)rd(rec, &f_exit_vcpu) : -1;
	p.level = 1;
	if (bpf_map_update_elem(&pending, &tid, &p, BPF_ANY))
		stat_inc(KS_BPF_OVF_THREADS);
	return 0;
}

static __always_inline int do_nested(__u64 pid_tgid)
{
	__u32 tid = (__u32)pid_tgid;
	struct ks_bpf_pending *p;

	if (filtered(pid_tgid))
		return 0;
	p = bpf_map_lookup_elem(&pending, &tid);
	if (p)
		p->level = 2;
	return 0;
}

/* Count NS in this CPU's copy V.  A copy with no count yet has min 0: the
 * kernel zeroes the other CPUs' copies of an element one CPU created. */
static __always_inline void add(struct ks_bpf_exit_val *v, __u64 ns, __u32 b)
{
	if (!v->count || ns < v->min_ns)
		v->min_ns = ns;
	if (ns > v->max_ns)
		v->max_ns = ns;
	v->count++;
	v->sum_ns += ns;
	if (b <= KS_BPF_NBUCKETS)
		v->bucket[b]++;
}

/* The exit KEY of NS (bucket B) through the ring (exits_bpf.h); nonzero
 * when the ring is full too. */
static __always_inline long spill_exit(const struct ks_bpf_exit_key *key, __u64 ns, __u32 b)
{
	struct ks_bpf_spill sp = { .kind = KS_BPF_SPILL_EXIT, .bucket = b, .ns = ns };

	sp.exit = *key;
	return bpf_ringbuf_output(&spilled, &sp, sizeof(sp), 0);
}

static __always_inline int do_entry(const void *rec, __u64 pid_tgid, __u64 ts)
{
	__u32 tid = (__u32)pid_tgid, b;
	struct ks_bpf_pending *pp, p;
	struct ks_bpf_exit_key key = {};
	struct ks_bpf_exit_val *v, nv = {};
	__u64 ns;
	long err;

	if (filtered(pid_tgid))
		return 0;
	pp = bpf_map_lookup_elem(&pending, &tid);
	if (!pp) {
		stat_inc(KS_BPF_UNPAIRED);
		return 0;
	}
	p = *pp;   /* copied: the element may be reused once deleted */
	bpf_map_delete_elem(&pending, &tid);
	if (p.pid != (__s32)(pid_tgid >> 32)) {
		stat_inc(KS_BPF_UNPAIRED);
		return 0;
	}
	ns = ts > p.ts ? ts - p.ts : 0;
	key.reason = p.reason;
	key.pid = p.pid;
	key.tid = (__s32)tid;
	key.vcpu = p.vcpu >= 0 ? p.vcpu : f_entry_vcpu.size ? (__s32)rd(rec, &f_entry_vcpu) : -1;
	key.isa = p.isa;
	key.level = p.level;
	b = bucket_of(ns);
	v = bpf_map_lookup_elem(&series, &key);
	if (v) {
		add(v, ns, b);
		return 0;
	}
	add(&nv, ns, b);
	err = cfg_spill_all ? -12 : bpf_map_update_elem(&series, &key, &nv, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* another CPU made it meanwhile: this CPU's copy is zero */
		v = bpf_map_lookup_elem(&series, &key);
		if (v) {
			add(v, ns, b);
			return 0;
		}
	}
	if (err && (err == -E2BIG || spill_exit(&key, ns, b)))
		stat_inc(KS_BPF_OVF_SERIES);
	return 0;
}

static __always_inline int do_count(__u64 pid_tgid, __u32 idx)
{
	struct ks_bpf_tp_key key = { .pid = (__s32)(pid_tgid >> 32), .idx = idx };
	__u64 *v, one = 1;
	long err;

	if (filtered(pid_tgid))
		return 0;
	v = bpf_map_lookup_elem(&tp_counts, &key);
	if (v) {
		(*v)++;
		return 0;
	}
	err = cfg_spill_all ? -12 : bpf_map_update_elem(&tp_counts, &key, &one, BPF_NOEXIST);
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(&tp_counts, &key);
		if (v) {
			(*v)++;
			return 0;
		}
	}
	if (err && err != -E2BIG) {
		struct ks_bpf_spill sp = { .kind = KS_BPF_SPILL_TP, .tp = key };

		if (!bpf_ringbuf_output(&spilled, &sp, sizeof(sp), 0))
			return 0;
	}
	if (err)
		stat_inc(KS_BPF_OVF_PROCS);
	return 0;
}

/* ---- the programs (attached by the loader to the events the tables name) ----
 * A tracepoint program's return value says whether the kernel still hands
 * the event to the perf events open on it: 0 would hide every kvm:* event
 * from a `perf kvm stat record` or `perf stat` running beside the engine
 * (perf_trace_run_bpf_submit), so they all return 1. */
SEC("tracepoint")
int ks_exit(void *ctx)
{
	do_exit(ctx, bpf_get_current_pid_tgid(), bpf_ktime_get_ns());
	return 1;
}

SEC("tracepoint")
int ks_entry(void *ctx)
{
	do_entry(ctx, bpf_get_current_pid_tgid(), bpf_ktime_get_ns());
	return 1;
}

SEC("tracepoint")
int ks_nested(void *ctx)
{
	(void)ctx;
	do_nested(bpf_get_current_pid_tgid());
	return 1;
}

SEC("tracepoint")
int ks_count(void *ctx)
{
	do_count(bpf_get_current_pid_tgid(), (__u32)bpf_get_attach_cookie(ctx));
	return 1;
}

/* The unit tests' door (tests/input/test_engine_bpf.c): one synthetic
 * event through the same handlers, by BPF_PROG_TEST_RUN. */
SEC("syscall")
int ks_test_feed(struct ks_bpf_test_ev *ev)
{
	__u64 pid_tgid = ((__u64)(__u32)ev->pid << 32) | (__u32)ev->tid;

	switch (ev->kind) {
	case KS_BPF_EV_EXIT:
		return do_exit(ev->rec, pid_tgid, ev->ts);
	case KS_BPF_EV_ENTRY:
		return do_entry(ev->rec, pid_tgid, ev->ts);
	case KS_BPF_EV_NESTED:
		return do_nested(pid_tgid);
	case KS_BPF_EV_TP:
		return do_count(pid_tgid, ev->tp_idx);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
