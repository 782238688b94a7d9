/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_pmu.c - MSR names, event-select decoding, CPUID decoding, cpu sets
 * and the perf / QEMU command-line parsers of `kvmscope pmu`.
 *
 * Oracles: MSR numbers are read from the kernel's msr-index.h / apicdef.h
 * (the linux-source-6.1 tree in $KS_LINUX, which scripts/install-deps.sh
 * unpacks; skipped if absent, a failure in CI) and from a real
 * trace: the kvm_apic register names the kernel printed (trace-cmd's
 * expected report of hip24/host-allkvm-rawtsc) must match our x2APIC MSR
 * names for the same registers.  Bit-field expectations are recomputed in
 * the test from the SDM/APM layouts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "arch/x86_msr.h"
#include "kvmscope/field.h"
#include "kvmscope/pmu_host.h"
#include "kvmscope/pmu_trace.h"
#include "kvmscope/source.h"

/* under $KS_LINUX (default: where scripts/install-deps.sh unpacks them) */
#define KS_LINUX_DEFAULT "/var/cache/kvmscope-linux/linux-source-6.1"
#define MSR_INDEX "arch/x86/include/asm/msr-index.h"
#define PERF_EVENT_H "arch/x86/include/asm/perf_event.h"
#define KVM_PARA_H "arch/x86/include/uapi/asm/kvm_para.h"

/* The value of "#define NAME 0x..." in TEXT, or -1. */
static long long kernel_define(const char *text, const char *name)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, "#define "))) {
		p += 8;
		if (!strncmp(p, name, n) && (p[n] == ' ' || p[n] == '\t'))
			return strtoll(p + n, NULL, 0);
	}
	return -1;
}

static void t_names_from_kernel_headers(void)
{
	static const struct { const char *file, *macro, *ours; } m[] = {
		{ PERF_EVENT_H, "MSR_ARCH_PERFMON_EVENTSEL0", "IA32_PERFEVTSEL0" },
		{ PERF_EVENT_H, "MSR_ARCH_PERFMON_EVENTSEL1", "IA32_PERFEVTSEL1" },
		{ PERF_EVENT_H, "MSR_ARCH_PERFMON_PERFCTR0", "IA32_PMC0" },
		{ MSR_INDEX, "MSR_IA32_PMC0", "IA32_A_PMC0" },
		{ MSR_INDEX, "MSR_CORE_PERF_FIXED_CTR0", "IA32_FIXED_CTR0" },
		{ MSR_INDEX, "MSR_CORE_PERF_FIXED_CTR2", "IA32_FIXED_CTR2" },
		{ MSR_INDEX, "MSR_CORE_PERF_FIXED_CTR_CTRL", "IA32_FIXED_CTR_CTRL" },
		{ MSR_INDEX, "MSR_CORE_PERF_GLOBAL_STATUS", "IA32_PERF_GLOBAL_STATUS" },
		{ MSR_INDEX, "MSR_CORE_PERF_GLOBAL_CTRL", "IA32_PERF_GLOBAL_CTRL" },
		{ MSR_INDEX, "MSR_CORE_PERF_GLOBAL_OVF_CTRL", "IA32_PERF_GLOBAL_OVF_CTRL" },
		{ MSR_INDEX, "MSR_IA32_DEBUGCTLMSR", "IA32_DEBUGCTL" },
		{ MSR_INDEX, "MSR_LBR_SELECT", "MSR_LBR_SELECT" },
		{ MSR_INDEX, "MSR_LBR_TOS", "MSR_LBR_TOS" },
		{ MSR_INDEX, "MSR_LBR_NHM_FROM", "MSR_LASTBRANCH_0_FROM_IP" },
		{ MSR_INDEX, "MSR_LBR_NHM_TO", "MSR_LASTBRANCH_0_TO_IP" },
		{ MSR_INDEX, "MSR_LBR_INFO_0", "MSR_LBR_INFO_0" },
		{ MSR_INDEX, "MSR_ARCH_LBR_CTL", "IA32_LBR_CTL" },
		{ MSR_INDEX, "MSR_F15H_PERF_CTL", "AMD_PERF_CTL0" },
		{ MSR_INDEX, "MSR_F15H_PERF_CTR", "AMD_PERF_CTR0" },
		{ MSR_INDEX, "MSR_K7_EVNTSEL0", "MSR_K7_EVNTSEL0" },
		{ MSR_INDEX, "MSR_K7_PERFCTR3", "MSR_K7_PERFCTR3" },
		{ MSR_INDEX, "MSR_AMD64_PERF_CNTR_GLOBAL_CTL", "AMD_PERF_CNTR_GLOBAL_CTL" },
		{ MSR_INDEX, "MSR_IA32_TSC_DEADLINE", "IA32_TSC_DEADLINE" },
		{ MSR_INDEX, "MSR_IA32_SPEC_CTRL", "IA32_SPEC_CTRL" },
		{ MSR_INDEX, "MSR_IA32_APICBASE", "IA32_APIC_BASE" },
		{ MSR_INDEX, "MSR_EFER", "IA32_EFER" },
		{ MSR_INDEX, "MSR_STAR", "IA32_STAR" },
		{ MSR_INDEX, "MSR_LSTAR", "IA32_LSTAR" },
		{ MSR_INDEX, "MSR_KERNEL_GS_BASE", "IA32_KERNEL_GS_BASE" },
		{ MSR_INDEX, "MSR_TSC_AUX", "IA32_TSC_AUX" },
		{ MSR_INDEX, "MSR_IA32_MISC_ENABLE", "IA32_MISC_ENABLE" },
		{ KVM_PARA_H, "MSR_KVM_SYSTEM_TIME_NEW", "MSR_KVM_SYSTEM_TIME_NEW" },
		{ KVM_PARA_H, "MSR_KVM_STEAL_TIME", "MSR_KVM_STEAL_TIME" },
		{ KVM_PARA_H, "MSR_KVM_PV_EOI_EN", "MSR_KVM_PV_EOI_EN" },
	};
	const char *linux_dir = getenv("KS_LINUX");
	char path[4096], nb[KS_MSR_NAME_MAX];
	size_t i;
	int checked = 0;

	if (!linux_dir || !*linux_dir)
		linux_dir = KS_LINUX_DEFAULT;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		char *text;
		long long v;

		snprintf(path, sizeof(path), "%s/%s", linux_dir, m[i].file);
		text = kt_read_file(path, NULL);

		if (!text)
			continue;
		v = kernel_define(text, m[i].macro);
		free(text);
		if (v < 0) {
			kt_fail(__FILE__, __LINE__, "%s not in %s", m[i].macro, path);
			continue;
		}
		KT_EQ_STR(ks_x86_msr_name((uint32_t)v, nb, sizeof(nb)), m[i].ours);
		checked++;
	}
	if (!checked)
		kt_skip("kernel headers under %s are absent (linux-source-6.1)", linux_dir);
}

static void t_kinds_and_families(void)
{
	char want[40], nb[KS_MSR_NAME_MAX];
	unsigned i;

	for (i = 0; i < 8; i++) {
		snprintf(want, sizeof(want), "IA32_PERFEVTSEL%u", i);
		KT_EQ_STR(ks_x86_msr_name(0x186 + i, nb, sizeof(nb)), want);
		KT_EQ_INT(ks_x86_msr_kind(0x186 + i), KS_MSR_PMU_EVTSEL);
		snprintf(want, sizeof(want), "IA32_A_PMC%u", i);
		KT_EQ_STR(ks_x86_msr_name(0x4c1 + i, nb, sizeof(nb)), want);
		KT_EQ_INT(ks_x86_msr_kind(0x4c1 + i), KS_MSR_PMU_COUNTER);
	}
	/* AMD core extension: CTL at even, CTR at odd addresses from 0xc0010200 */
	for (i = 0; i < 6; i++) {
		snprintf(want, sizeof(want), "AMD_PERF_CTL%u", i);
		KT_EQ_STR(ks_x86_msr_name(0xc0010200 + 2 * i, nb, sizeof(nb)), want);
		KT_EQ_INT(ks_x86_msr_kind(0xc0010200 + 2 * i), KS_MSR_PMU_EVTSEL);
		snprintf(want, sizeof(want), "AMD_PERF_CTR%u", i);
		KT_EQ_STR(ks_x86_msr_name(0xc0010201 + 2 * i, nb, sizeof(nb)), want);
		KT_EQ_INT(ks_x86_msr_kind(0xc0010201 + 2 * i), KS_MSR_PMU_COUNTER);
	}
	KT_EQ_INT(ks_x86_msr_kind(0x38f), KS_MSR_PMU_GLOBAL);
	KT_EQ_INT(ks_x86_msr_kind(0x309), KS_MSR_PMU_FIXED);
	KT_EQ_INT(ks_x86_msr_kind(0x1d9), KS_MSR_LBR);
	KT_EQ_INT(ks_x86_msr_kind(0x6e0), KS_MSR_OTHER);
	KT_EQ_STR(ks_x86_msr_name(0x830, nb, sizeof(nb)), "X2APIC_ICR");
	KT_EQ_STR(ks_x86_msr_name(0x80b, nb, sizeof(nb)), "X2APIC_EOI");
	KT_EQ_STR(ks_x86_msr_name(0x838, nb, sizeof(nb)), "X2APIC_TMICT");
	KT_EQ_STR(ks_x86_msr_name(0x811, nb, sizeof(nb)), "X2APIC_ISR1");
	KT_EXPECT(ks_x86_msr_name(0x12345678, nb, sizeof(nb)) == NULL);
	KT_EXPECT(ks_x86_msr_name(0x801, nb, sizeof(nb)) == NULL);
}

/* kvm_apic's reg field + the kernel's printed name (APIC_TMICT) must map to
 * our x2APIC MSR name (0x800 + reg/16 -> X2APIC_TMICT). */
static void t_x2apic_names_vs_real_trace(void)
{
	char path[512], exp[512];
	const char *p1 = kt_shared("data/hip24/host-allkvm-rawtsc.trace.dat");
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct ks_field reg = { 0 };
	struct tep_event *apic = NULL;
	uint64_t ours_tmict = 0, other = 0;
	char cmd[600], *out;
	int st;

	const char *p2;

	if (!p1) {
		kt_skip("hip24 recordings are absent");
		return;
	}
	snprintf(path, sizeof(path), "%s", p1);
	p2 = kt_shared("data/hip24/expected/host-allkvm-rawtsc.report-ns.txt.gz");
	if (!p2) {
		kt_skip("hip24 expected reports are absent");
		return;
	}
	snprintf(exp, sizeof(exp), "%s", p2);
	if (ks_source_open(&src, path, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "%s", err.msg);
		return;
	}
	while (ks_source_next(src, &rec, &err) > 0) {
		char nb[KS_MSR_NAME_MAX];
		const char *n;
		uint64_t r;

		if (!rec.event || strcmp(rec.event->name, "kvm_apic"))
			continue;
		if (apic != rec.event) {
			apic = rec.event;
			ks_field_resolve(&reg, apic, "reg");
		}
		r = ks_field_u64(&reg, &rec);
		n = ks_x86_msr_name(0x800 + (uint32_t)(r >> 4), nb, sizeof(nb));
		if (n && !strcmp(n, "X2APIC_TMICT"))
			ours_tmict++;
		else
			other++;
	}
	ks_source_close(src);
	snprintf(cmd, sizeof(cmd), "zcat '%s' | grep -c 'kvm_apic: .*APIC_TMICT'", exp);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out);
	KT_EQ_U64(ours_tmict, strtoull(out, NULL, 10));
	free(out);
	snprintf(cmd, sizeof(cmd), "zcat '%s' | grep 'kvm_apic:' | grep -vc 'APIC_TMICT'", exp);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out);
	KT_EQ_U64(other, strtoull(out, NULL, 10));
	free(out);
}

static void t_evtsel_decode(void)
{
	struct ks_evtsel e;
	char buf[160];
	/* Intel: event 0x3c umask 0x00, USR(16) OS(17) INT(20) EN(22) */
	uint64_t v = 0x3c | 1ULL << 16 | 1ULL << 17 | 1ULL << 20 | 1ULL << 22;

	ks_evtsel_decode(v, false, &e);
	KT_EQ_INT(e.event, 0x3c);
	KT_EQ_INT(e.umask, 0);
	KT_EXPECT(e.usr && e.os && e.intr && e.en && !e.edge && !e.inv);
	ks_evtsel_format(&e, buf, sizeof(buf));
	KT_EQ_STR(buf, "event=0x3c umask=0x00 usr os int en");
	/* AMD: event bits 35:32 extend the event to 12 bits; 40 guest, 41 host only */
	v = 0xc0 | 0x1ULL << 32 | 0x02 << 8 | 1ULL << 16 | 1ULL << 22 | 1ULL << 40;
	ks_evtsel_decode(v, true, &e);
	KT_EQ_INT(e.event, 0x1c0);
	KT_EQ_INT(e.umask, 2);
	KT_EXPECT(e.usr && !e.os && e.en && e.guest_only && !e.host_only);
	KT_EXPECT(ks_evtsel_msr_is_amd(0xc0010200) && !ks_evtsel_msr_is_amd(0x186));
}

static void t_cpuid_decode(void)
{
	struct ks_pmu_caps c;
	/* Leaf 0xA: EAX = version | gp << 8 | width << 16 | ebx_len << 24,
	 * EDX = fixed | fixed_width << 5 (Intel SDM vol. 2, CPUID leaf 0AH) */
	struct ks_cpuid_regs a = { 4 | 4 << 8 | 48 << 16 | 7u << 24, 0, 0, 3 | 48 << 5 };
	struct ks_cpuid_regs e1 = { 0, 0, 1u << 23, 0 }, e22 = { 0x3, 6 | 16 << 4 | 4 << 10, 0, 0 };

	memset(&c, 0, sizeof(c));
	ks_pmu_decode_intel_0xa(&a, &c);
	KT_EQ_INT(c.version, 4);
	KT_EQ_INT(c.gp, 4);
	KT_EQ_INT(c.gp_width, 48);
	KT_EQ_INT(c.fixed, 3);
	KT_EQ_INT(c.fixed_width, 48);
	memset(&c, 0, sizeof(c));
	ks_pmu_decode_amd(&e1, &e22, true, &c);
	KT_EQ_INT(c.gp, 6);
	KT_EQ_INT(c.lbr_depth, 16);
	memset(&c, 0, sizeof(c));
	ks_pmu_decode_amd(&e1, &e22, false, &c);
	KT_EQ_INT(c.gp, 6);      /* PerfCtrExtCore */
	e1.ecx = 0;
	ks_pmu_decode_amd(&e1, &e22, false, &c);
	KT_EQ_INT(c.gp, 4);      /* legacy K7 counters */
}

static void t_cpuset(void)
{
	struct ks_cpuset a, b;
	char buf[64];

	KT_EQ_INT(ks_cpuset_parse(&a, "0-3,8,10-11\n"), 0);
	KT_EQ_INT(ks_cpuset_count(&a), 7);
	ks_cpuset_format(&a, buf, sizeof(buf));
	KT_EQ_STR(buf, "0-3,8,10-11");
	KT_EQ_INT(ks_cpuset_parse(&b, "4-7"), 0);
	KT_EXPECT(!ks_cpuset_intersects(&a, &b));
	KT_EQ_INT(ks_cpuset_parse(&b, "9-8"), -1);
	KT_EQ_INT(ks_cpuset_parse(&b, "x"), -1);
	/* strtol() took these: space, a sign, a number too big for a long */
	KT_EQ_INT(ks_cpuset_parse(&b, " 1"), -1);
	KT_EQ_INT(ks_cpuset_parse(&b, "+1"), -1);
	KT_EQ_INT(ks_cpuset_parse(&b, "1-+3"), -1);
	KT_EQ_INT(ks_cpuset_parse(&b, "1- 3"), -1);
	KT_EQ_INT(ks_cpuset_parse(&b, "0-99999999999999999999"), -1);
}

static void perf_argv(const char *const *args, char *buf, size_t *len)
{
	size_t n = 0;

	for (; *args; args++) {
		size_t l = strlen(*args) + 1;

		memcpy(buf + n, *args, l);
		n += l;
	}
	*len = n;
}

static void t_perf_cmdline(void)
{
	static const char *const rec[] = { "/usr/bin/perf_6.1", "record", "-b", "-a", "-e",
					   "cycles:D,instructions,cpu-clock", "-o", "x", "--",
					   "sleep", "9", NULL };
	static const char *const stat[] = { "perf", "stat", "-C", "2-3", "-e",
					    "{cycles,cpu/event=0x3c,umask=0/}:D", "sleep", "1", NULL };
	static const char *const task[] = { "perf", "stat", "-e", "sched:sched_switch",
					    "ls", "-a", NULL };
	struct ks_cpuset online;
	struct ks_pmu_holder h;
	char buf[512], cpus[32];
	size_t len;

	ks_cpuset_parse(&online, "0-3");
	memset(&h, 0, sizeof(h));
	perf_argv(rec, buf, &len);
	ks_pmu_parse_perf_cmdline(buf, len, &online, &h);
	KT_EXPECT(h.system_wide && h.lbr && h.lbr_pinned);
	KT_EQ_INT(h.hw_events, 2);
	KT_EQ_INT(h.pinned_events, 1);
	KT_EQ_INT(ks_cpuset_count(&h.cpus), 4);

	memset(&h, 0, sizeof(h));
	perf_argv(stat, buf, &len);
	ks_pmu_parse_perf_cmdline(buf, len, &online, &h);
	KT_EXPECT(h.system_wide && !h.lbr);
	KT_EQ_INT(h.hw_events, 2);
	KT_EQ_INT(h.pinned_events, 2);
	ks_cpuset_format(&h.cpus, cpus, sizeof(cpus));
	KT_EQ_STR(cpus, "2-3");

	memset(&h, 0, sizeof(h));
	perf_argv(task, buf, &len);
	ks_pmu_parse_perf_cmdline(buf, len, &online, &h);
	KT_EXPECT(!h.system_wide);   /* "-a" belongs to the workload "ls" */
	KT_EQ_INT(h.hw_events, 0);
}

static void t_qemu_cmdline(void)
{
	static const char *const q1[] = { "/usr/bin/qemu-system-x86_64", "-enable-kvm", "-name",
					  "guest=web1,debug-threads=on", "-cpu",
					  "Skylake-Server,pmu=on,lbr-fmt=0x5", NULL };
	static const char *const q2[] = { "qemu-kvm", "-cpu", "host", NULL };
	static const char *const q3[] = { "qemu-kvm", "-cpu", "host,-pmu", NULL };
	static const char *const q4[] = { "qemu-kvm", "-cpu", "EPYC", NULL };
	static const char *const nq[] = { "cloud-hypervisor", "--cpus", "boot=2", NULL };
	struct ks_pmu_vm v;
	char buf[512];
	size_t len;

	memset(&v, 0, sizeof(v));
	perf_argv(q1, buf, &len);
	KT_EXPECT(ks_pmu_parse_qemu_cmdline(buf, len, &v));
	KT_EQ_STR(v.name, "web1");
	KT_EQ_STR(v.cpu_model, "Skylake-Server");
	KT_EQ_INT(v.pmu, 1);
	KT_EQ_STR(v.lbr_fmt, "0x5");
	memset(&v, 0, sizeof(v));
	perf_argv(q2, buf, &len);
	KT_EXPECT(ks_pmu_parse_qemu_cmdline(buf, len, &v));
	KT_EQ_INT(v.pmu, 1);
	memset(&v, 0, sizeof(v));
	perf_argv(q3, buf, &len);
	ks_pmu_parse_qemu_cmdline(buf, len, &v);
	KT_EQ_INT(v.pmu, 0);
	memset(&v, 0, sizeof(v));
	perf_argv(q4, buf, &len);
	ks_pmu_parse_qemu_cmdline(buf, len, &v);
	KT_EQ_INT(v.pmu, 0);
	perf_argv(nq, buf, &len);
	KT_EXPECT(!ks_pmu_parse_qemu_cmdline(buf, len, &v));
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_names_from_kernel_headers),
		KT_CASE(t_kinds_and_families),
		KT_CASE(t_x2apic_names_vs_real_trace),
		KT_CASE(t_evtsel_decode),
		KT_CASE(t_cpuid_decode),
		KT_CASE(t_cpuset),
		KT_CASE(t_perf_cmdline),
		KT_CASE(t_qemu_cmdline),
		{ 0 },
	};
	return kt_main(cases);
}
