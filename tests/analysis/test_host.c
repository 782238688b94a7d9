/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_host.c - the host model (kvmscope/host.h) and the stat engine give
 * the same VM and vCPU to the same threads, and report conflicts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "arch/arch.h"
#include "kvmscope/host.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"

static struct tep_handle *tep;
static struct tep_event *ev_entry, *ev_exit;

static struct tep_event *load_format(const char *name)
{
	return kt_fixture_event(tep, "x86-6.18", "kvm", name);
}

static bool setup(void)
{
	if (tep)
		return ev_entry && ev_exit;
	tep = tep_alloc();
	ev_entry = load_format("kvm_entry");
	ev_exit = load_format("kvm_exit");
	return ev_entry && ev_exit;
}

struct rec {
	struct ks_record r;
	unsigned char buf[128];
};

static void set_field(struct rec *x, const char *name, uint64_t v)
{
	struct tep_format_field *f = tep_find_any_field(x->r.event, name);

	if (f)
		memcpy(x->buf + f->offset, &v, (size_t)f->size); /* little-endian host */
}

/* Feed one record to both the host model and a stat engine. */
static void feed2(struct ks_host *h, struct ks_stat *st, struct rec *x)
{
	x->r.data = x->buf;
	ks_host_observe(h, &x->r);
	ks_stat_add(st, &x->r);
}

static void event(struct ks_host *h, struct ks_stat *st, struct tep_event *ev, uint64_t ts,
		  int32_t tid, int32_t pid, unsigned vcpu)
{
	struct rec x;

	memset(&x, 0, sizeof(x));
	x.r.type = KS_REC_EVENT;
	x.r.event = ev;
	x.r.ts = x.r.raw_ts = ts;
	x.r.tid = tid;
	x.r.pid = pid;
	x.r.size = sizeof(x.buf);
	memcpy(x.buf, &(uint16_t){ (uint16_t)ev->id }, 2);
	memcpy(x.buf + 4, &tid, 4);
	set_field(&x, "vcpu_id", vcpu);
	set_field(&x, "exit_reason", 12);
	set_field(&x, "isa", 1);
	feed2(h, st, &x);
}

static void comm(struct ks_host *h, struct ks_stat *st, int32_t tid, int32_t pid, const char *name)
{
	struct rec x;

	memset(&x, 0, sizeof(x));
	x.r.type = KS_REC_COMM;
	x.r.tid = tid;
	x.r.pid = pid;
	x.r.comm = name;
	feed2(h, st, &x);
}

static struct ks_stat *new_stat(void)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info;
	struct ks_error err;

	memset(&info, 0, sizeof(info));
	snprintf(info.cpuid, sizeof(info.cpuid), "GenuineIntel,6,85,7");
	return ks_stat_new(&cfg, &info, &err);
}

/* Each thread of A is in B with the same VM, vCPU, sources and conflict. */
static void same_threads(struct ks_host *h, struct ks_stat *st)
{
	const struct ks_attr_thread **a, **b;
	size_t na = ks_host_threads(h, &a), nb = ks_stat_attribution(st, &b), i;

	KT_EQ_U64(na, nb);
	for (i = 0; i < na && i < nb; i++) {
		KT_EQ_INT(a[i]->tid, b[i]->tid);
		KT_EQ_INT(a[i]->vm, b[i]->vm);
		KT_EQ_INT(a[i]->vcpu, b[i]->vcpu);
		KT_EQ_INT(a[i]->vm_src, b[i]->vm_src);
		KT_EQ_INT(a[i]->vcpu_src, b[i]->vcpu_src);
		KT_EQ_INT(a[i]->conflict, b[i]->conflict);
	}
}

/* Without pids, "CPU N/KVM" threads are one VM (tid - N), named after
 * nothing (a vCPU name is no VM name). */
static void t_names_group(void)
{
	struct ks_host *h;
	struct ks_stat *st;
	struct ks_error err;
	const struct ks_attr_thread *t;

	if (!setup()) {
		kt_skip("no x86 formats");
		return;
	}
	KT_REQUIRE((h = ks_host_new(&ks_arch_x86, NULL, &err)) && (st = new_stat()));
	comm(h, st, 100, -1, "CPU 0/KVM");
	comm(h, st, 101, -1, "CPU 1/KVM");
	event(h, st, ev_exit, 10, 100, -1, 0);
	event(h, st, ev_exit, 11, 101, -1, 1);
	event(h, st, ev_entry, 12, 100, -1, 0);
	event(h, st, ev_entry, 13, 101, -1, 1);
	t = ks_host_find(h, 101);
	KT_REQUIRE(t);
	KT_EQ_INT(t->vm, 100);
	KT_EQ_INT(t->vcpu, 1);
	KT_EQ_STR(ks_attr_source_name(t->vm_src), "thread-name");
	KT_EQ_STR(ks_attr_source_name(t->vcpu_src), "event-field");
	KT_EXPECT(ks_host_vm_name(h, 100) == NULL);
	same_threads(h, st);
	ks_stat_free(st);
	ks_host_free(h);
}

/* With pids the VM is the process, named after its main thread. */
static void t_tgid_named(void)
{
	struct ks_host *h;
	struct ks_stat *st;
	struct ks_error err;
	const struct ks_attr_thread *t;

	if (!setup()) {
		kt_skip("no x86 formats");
		return;
	}
	KT_REQUIRE((h = ks_host_new(&ks_arch_x86, NULL, &err)) && (st = new_stat()));
	comm(h, st, 500, 500, "qemu-vm1");
	comm(h, st, 507, 500, "CPU 0/KVM");
	event(h, st, ev_entry, 10, 507, 500, 0);
	event(h, st, ev_exit, 11, 507, 500, 0);
	t = ks_host_find(h, 507);
	KT_REQUIRE(t);
	KT_EQ_INT(t->vm, 500);
	KT_EQ_STR(ks_attr_source_name(t->vm_src), "tgid");
	KT_EQ_STR(ks_host_vm_name(h, 500), "qemu-vm1");
	KT_EQ_STR(ks_stat_vm_name(st, 500), "qemu-vm1");
	same_threads(h, st);
	ks_stat_free(st);
	ks_host_free(h);
}

/* A kvm_exit naming another vCPU than the thread's kvm_entry: both say so. */
static void t_exit_disagrees_with_entry(void)
{
	struct ks_host *h;
	struct ks_stat *st;
	struct ks_error err;
	const struct ks_attr_thread *t;

	if (!setup()) {
		kt_skip("no x86 formats");
		return;
	}
	KT_REQUIRE((h = ks_host_new(&ks_arch_x86, NULL, &err)) && (st = new_stat()));
	event(h, st, ev_entry, 10, 300, -1, 2);
	event(h, st, ev_exit, 11, 300, -1, 2);
	t = ks_host_find(h, 300);
	KT_REQUIRE(t);
	KT_EXPECT(!t->conflict);
	event(h, st, ev_entry, 12, 300, -1, 2);
	event(h, st, ev_exit, 13, 300, -1, 3);
	t = ks_host_find(h, 300);
	KT_REQUIRE(t);
	KT_EXPECT(t->conflict);
	same_threads(h, st);
	ks_stat_free(st);
	ks_host_free(h);
}

/* A stat engine given the model (cfg.host) keys its rows by the model's
 * VM and vCPU: one started after the COMM records (top's next interval)
 * still puts the threads in their process, and names it. */
static void t_stat_takes_model(void)
{
	struct ks_stat_config cfg = KS_STAT_CONFIG_INIT;
	struct ks_source_info info;
	struct ks_stat_row **rows;
	struct ks_stat *first, *later, *own;
	struct ks_host *h;
	struct ks_error err;
	size_t n;

	if (!setup()) {
		kt_skip("no x86 formats");
		return;
	}
	memset(&info, 0, sizeof(info));
	snprintf(info.cpuid, sizeof(info.cpuid), "GenuineIntel,6,85,7");
	cfg.views[0] = KS_DIM_VM | KS_DIM_VCPU;
	KT_REQUIRE((h = ks_host_new(&ks_arch_x86, NULL, &err)) && (first = new_stat()));
	comm(h, first, 500, 500, "qemu-vm1");
	comm(h, first, 507, 500, "CPU 0/KVM");
	cfg.host = h;
	KT_REQUIRE((later = ks_stat_new(&cfg, &info, &err)));
	cfg.host = NULL;
	KT_REQUIRE((own = ks_stat_new(&cfg, &info, &err)));
	/* the later events carry no pid (trace.dat): only the COMM said 500 */
	event(h, later, ev_entry, 10, 507, -1, 0);
	event(h, later, ev_exit, 11, 507, -1, 0);
	event(h, later, ev_entry, 12, 507, -1, 0);
	n = ks_stat_rows(later, 0, &rows);
	KT_EQ_U64(n, 1);
	if (n == 1) {
		KT_EQ_INT(rows[0]->vm, 500);
		KT_EQ_INT(rows[0]->vcpu, 0);
	}
	KT_EQ_STR(ks_stat_vm_name(later, 500), "qemu-vm1");
	/* without the model the engine knows the thread alone */
	event(h, own, ev_entry, 10, 507, -1, 0);
	event(h, own, ev_exit, 11, 507, -1, 0);
	event(h, own, ev_entry, 12, 507, -1, 0);
	n = ks_stat_rows(own, 0, &rows);
	KT_EQ_U64(n, 1);
	if (n == 1)
		KT_EQ_INT(rows[0]->vm, 507);
	ks_stat_free(first);
	ks_stat_free(later);
	ks_stat_free(own);
	ks_host_free(h);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_names_group),
		KT_CASE(t_tgid_named),
		KT_CASE(t_exit_disagrees_with_entry),
		KT_CASE(t_stat_takes_model),
		{ 0 },
	};
	int r = kt_main(cases);

	if (tep)
		tep_free(tep);
	return r;
}
