/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_kvmstats_halt.c - halt polling from KVM's statistics
 * (src/analysis/kvmstats_halt.c) on query-stats replies in QEMU 7.2's exact
 * form, and on the shapes the other sources give: debugfs (the VM's sums,
 * no vCPU), libvirt (per vCPU, no histograms, *_ns without a schema).
 * The expected numbers are KVM's definitions worked by hand: a value v
 * goes to log2 bucket fls64(v) (0 -> 0, 1 -> 1, 2..3 -> 2, 20000 -> 15),
 * the last bucket taking the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "kvmscope/kvmstats_halt.h"

static int parse(const char *text, struct ks_kstats *s)
{
	struct ks_error err;

	return ks_qmp_parse_stats(text, strlen(text), s, NULL, NULL, &err);
}

/* Two vCPUs as QEMU 7.2 lists them (no schema: plain values). */
static void t_qmp_two_vcpus(void)
{
	static const char vcpu[] =
		"{\"return\": [{\"provider\": \"kvm\", \"qom-path\": \"/machine/unattached/device[0]\", "
		"\"stats\": [{\"name\": \"halt_exits\", \"value\": 10}, "
		"{\"name\": \"halt_successful_poll\", \"value\": 6}, "
		"{\"name\": \"halt_wakeup\", \"value\": 3}, "
		"{\"name\": \"halt_attempted_poll\", \"value\": 8}, "
		"{\"name\": \"halt_poll_invalid\", \"value\": 1}, "
		"{\"name\": \"halt_poll_success_ns\", \"value\": 120000}, "
		"{\"name\": \"halt_poll_fail_ns\", \"value\": 400000}, "
		"{\"name\": \"halt_wait_ns\", \"value\": 3000000}, "
		"{\"name\": \"halt_poll_success_hist\", \"value\": [0, 1, 2, 0, 3]}, "
		"{\"name\": \"exits\", \"value\": 99}]}, "
		"{\"provider\": \"kvm\", \"qom-path\": \"/machine/unattached/device[1]\", "
		"\"stats\": [{\"name\": \"halt_exits\", \"value\": 5}, "
		"{\"name\": \"halt_poll_success_hist\", \"value\": [4, 0, 0, 0, 1]}]}]}";
	struct ks_kstats s = { 0 };
	struct ks_khalt *h;
	size_t n;

	KT_REQUIRE(parse(vcpu, &s) == 0);
	KT_REQUIRE(ks_khalt_of(&s, &h, &n) == 0);
	KT_REQUIRE(n == 3);
	/* the VM: the sum of its vCPUs */
	KT_EQ_INT(h[0].vcpu, -1);
	KT_EQ_U64(h[0].exits, 15);
	KT_EQ_U64(h[0].polled, 6);
	KT_EQ_U64(h[0].poll_fail_ns, 400000);
	KT_EQ_U64(h[0].nbuckets[KS_KHALT_POLL_OK], 5);
	KT_EQ_U64(h[0].buckets[KS_KHALT_POLL_OK][0], 4);
	KT_EQ_U64(h[0].buckets[KS_KHALT_POLL_OK][4], 4);
	KT_EQ_U64(h[0].hist_count[KS_KHALT_POLL_OK], 11);
	KT_EQ_U64(h[0].nbuckets[KS_KHALT_WAIT], 0); /* not given */
	KT_EQ_INT(h[1].vcpu, 0);
	KT_EQ_INT(h[2].vcpu, 1);
	KT_EQ_U64(h[1].exits, 10);
	KT_EQ_U64(h[2].exits, 5);
	KT_EXPECT(!(h[2].have & KS_KHALT_HAVE_POLLED));
	KT_EXPECT(h[1].have & KS_KHALT_HAVE_WAIT_NS);
	KT_EXPECT(ks_khalt_find(h, n, -1) == &h[0]);
	KT_EXPECT(ks_khalt_find(h, n, 1) == &h[2]);
	KT_EXPECT(ks_khalt_find(h, n, 0) == &h[1]);
	KT_EXPECT(!ks_khalt_find(h, n, 2) && !ks_khalt_find(NULL, 0, 0));
	free(h);
	ks_kstats_free(&s);
}

/* debugfs: the VM directory has the sums; a vcpuN directory has no halt
 * statistic; a *_hist file there is one number (no buckets). */
static void t_debugfs_vm_only(void)
{
	struct ks_kstats s = { 0 };
	struct ks_khalt *h;
	size_t n;

	ks_kstats_add(&s, "halt_exits", -1)->value = 7;
	ks_kstats_add(&s, "halt_wakeup", -1)->value = 2;
	ks_kstats_add(&s, "halt_wait_hist", -1)->value = 3;
	ks_kstats_add(&s, "lapic_timer_advance_ns", 0)->value = 1000;
	KT_REQUIRE(ks_khalt_of(&s, &h, &n) == 0);
	KT_REQUIRE(n == 1);
	KT_EQ_U64(h[0].exits, 7);
	KT_EQ_U64(h[0].wakeups, 2);
	KT_EQ_U64(h[0].nbuckets[KS_KHALT_WAIT], 0);
	free(h);
	ks_kstats_free(&s);
}

/* No halt statistic: nothing, no allocation. */
static void t_none(void)
{
	struct ks_kstats s = { 0 };
	struct ks_khalt *h = (struct ks_khalt *)&s;
	size_t n = 9;

	ks_kstats_add(&s, "exits", 0)->value = 1;
	KT_REQUIRE(ks_khalt_of(&s, &h, &n) == 0);
	KT_EXPECT(n == 0 && h == NULL);
	ks_kstats_free(&s);
}

/* The schema's scale is followed: a time in microseconds (10^-6 s). */
static void t_scaled_time(void)
{
	struct ks_kstats s = { 0 };
	struct ks_kstat *k = ks_kstats_add(&s, "halt_wait_ns", 0);
	struct ks_khalt *h;
	size_t n;

	k->value = 5;
	snprintf(k->unit, sizeof(k->unit), "seconds");
	k->base = 10;
	k->exponent = -6;
	k = ks_kstats_add(&s, "halt_poll_fail_ns", 0);
	k->value = 5;
	snprintf(k->unit, sizeof(k->unit), "seconds");
	k->exponent = -9;
	KT_REQUIRE(ks_khalt_of(&s, &h, &n) == 0 && n == 2);
	KT_EQ_U64(h[1].wait_ns, 5000);
	KT_EQ_U64(h[1].poll_fail_ns, 5);
	free(h);
	ks_kstats_free(&s);
}

/* KVM's log2 buckets: bucket i holds 2^(i-1) .. 2^i - 1 ns. */
static void t_bucket_bounds(void)
{
	KT_EQ_U64(ks_khalt_bucket_max_ns(0, 32), 0);
	KT_EQ_U64(ks_khalt_bucket_max_ns(1, 32), 1);
	KT_EQ_U64(ks_khalt_bucket_max_ns(2, 32), 3);
	KT_EQ_U64(ks_khalt_bucket_max_ns(15, 32), 32767); /* 20000 ns: fls64 15 */
	KT_EQ_U64(ks_khalt_bucket_max_ns(30, 32), 1073741823);
	KT_EQ_U64(ks_khalt_bucket_max_ns(31, 32), UINT64_MAX);
	KT_EQ_U64(ks_khalt_bucket_max_ns(4, 5), UINT64_MAX);
}

/* The interval's numbers. */
static void t_interval(void)
{
	struct ks_khalt prev = { .have = KS_KHALT_HAVE_EXITS | KS_KHALT_HAVE_POLL_OK_NS |
					 KS_KHALT_HAVE_POLL_FAIL_NS,
				 .exits = 100, .polled = 10, .wakeups = 10, .poll_ok_ns = 1000,
				 .poll_fail_ns = 2000 };
	struct ks_khalt now = prev;
	struct ks_khalt_rates r;

	now.exits = 300;           /* 200 halts in 2 s */
	now.polled = 40;           /* 30 polled, 10 slept: 75% */
	now.wakeups = 20;
	now.poll_ok_ns += 100000000;  /* 0.1 s + 0.3 s of CPU in 2 s: 20% */
	now.poll_fail_ns += 300000000; /* 15% wasted */
	ks_khalt_interval(&now, &prev, 2.0, &r);
	KT_EQ_U64(r.halts, 200);
	KT_EXPECT(r.halts_per_s == 100.0);
	KT_EXPECT(r.polled_pct == 75.0);
	KT_EXPECT(r.have_cpu && r.poll_cpu_pct > 19.999 && r.poll_cpu_pct < 20.001);
	KT_EXPECT(r.wasted_cpu_pct > 14.999 && r.wasted_cpu_pct < 15.001);
	/* since the start: totals, no rate */
	ks_khalt_interval(&now, NULL, 0, &r);
	KT_EQ_U64(r.halts, 300);
	KT_EXPECT(!r.have_cpu);
	/* no wake-up: no share; a counter that went back (a new VM): 0 */
	ks_khalt_interval(&prev, &prev, 1.0, &r);
	KT_EXPECT(r.polled_pct < 0);
	prev.exits = 1000;
	ks_khalt_interval(&now, &prev, 1.0, &r);
	KT_EQ_U64(r.halts, 0);
	/* no halt_exits (not x86): the wake-ups are the halts */
	now.have &= ~KS_KHALT_HAVE_EXITS;
	prev.exits = 100;
	ks_khalt_interval(&now, &prev, 1.0, &r);
	KT_EQ_U64(r.halts, 40);
	/* libvirt: no poll times */
	now.have = KS_KHALT_HAVE_POLLED | KS_KHALT_HAVE_WAKEUPS;
	ks_khalt_interval(&now, &prev, 1.0, &r);
	KT_EXPECT(!r.have_cpu);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_qmp_two_vcpus), KT_CASE(t_debugfs_vm_only), KT_CASE(t_none),
		KT_CASE(t_scaled_time), KT_CASE(t_bucket_bounds), KT_CASE(t_interval),
		{ 0 },
	};
	return kt_main(cases);
}
