/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_report.c - `kvmscope pmu`'s text and JSON: the host's counters and
 * who holds them (pmu_host.h), and the vPMU / LBR MSR traffic of guests in
 * a trace (pmu_trace.h).  The analyses are in src/analysis/pmu_host.c and
 * pmu_trace.c; the command line (src/cli/cmd_pmu.c) only picks the view.
 */
#include <stdio.h>

#include "arch/arch.h"
#include "arch/x86_msr.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/pmu_report.h"

/* ---- check: text ---- */
static const char *tri(int v, const char *yes, const char *no)
{
	return v < 0 ? "unknown" : v ? yes : no;
}

static void print_caps(FILE *out, const struct ks_pmu_host *h)
{
	const struct ks_pmu_caps *c = &h->caps;

	fprintf(out, "Host PMU\n");
	fprintf(out, "  vendor:            %s%s\n", c->vendor[0] ? c->vendor : "unknown",
	       c->hypervisor ? " (this host is itself a virtual machine)" : "");
	if (c->sysfs_cpu_pmu)
		fprintf(out, "  perf core PMU:     %s%s%s%s\n", c->sysfs_pmus, c->pmu_name[0] ? " (" : "",
		       c->pmu_name, c->pmu_name[0] ? ")" : "");
	else
		fprintf(out, "  perf core PMU:     none: no hardware PMU is exposed (no cpu under "
		       "bus/event_source/devices); perf has software events only\n");
	fprintf(out, "  counters (CPUID):  %d general-purpose (%d bits), %d fixed (%d bits), "
	       "version %d\n", c->gp, c->gp_width, c->fixed, c->fixed_width, c->version);
	if (c->lbr_depth)
		fprintf(out, "  LBR depth:         %d (%s)\n", c->lbr_depth, c->lbr_source);
	else
		fprintf(out, "  LBR depth:         unknown / none\n");
	fprintf(out, "KVM\n");
	fprintf(out, "  module:            %s%s\n", h->kvm.module ? "loaded" : "not loaded",
	       h->kvm.dev_kvm ? "" : " (no /dev/kvm: no KVM)");
	fprintf(out, "  enable_pmu:        %s\n", tri(h->kvm.enable_pmu, "Y", "N"));
	fprintf(out, "  vendor modules:    %s\n", h->kvm.vendor_modules[0] ? h->kvm.vendor_modules : "none");
	if (h->kvm.vendor_params[0])
		fprintf(out, "  pmu/lbr params:    %s\n", h->kvm.vendor_params);
}

static void print_holders(FILE *out, const struct ks_pmu_host *h)
{
	size_t i;
	char cpus[128];

	fprintf(out, "Host counter holders (%d online CPUs; NMI watchdog %s)\n", h->ncpus,
	       tri(h->nmi_watchdog, "on", "off"));
	if (!h->nholders)
		fprintf(out, "  none\n");
	for (i = 0; i < h->nholders; i++) {
		const struct ks_pmu_holder *o = &h->holders[i];
		const char *mode = o->system_wide ? "system-wide" :
				   o->system_wide_guess ? "system-wide? (one fd per CPU)" : "per-task";

		ks_cpuset_format(&o->cpus, cpus, sizeof(cpus));
		fprintf(out, "  %-7d %-16s %-12s fds %-4d hw events/CPU %d, pinned %d%s%s%s%s\n", o->pid,
		       o->comm, mode, o->nfds, o->hw_events, o->pinned_events,
		       o->lbr ? ", LBR" : "", o->system_wide ? ", CPUs " : "",
		       o->system_wide ? cpus : "", o->is_perf ? "" : " (not perf: mode guessed)");
		if (o->pid)
			fprintf(out, "          %s\n", o->cmdline);
	}
	if (h->unreadable)
		fprintf(out, "  (%d processes could not be inspected: permission)\n", h->unreadable);
}

static void print_vms(FILE *out, const struct ks_pmu_host *h)
{
	size_t i;
	char cpus[128];

	fprintf(out, "VMs\n");
	if (!h->nvms)
		fprintf(out, "  none\n");
	for (i = 0; i < h->nvms; i++) {
		const struct ks_pmu_vm *v = &h->vms[i];

		ks_cpuset_format(&v->cpus, cpus, sizeof(cpus));
		fprintf(out, "  %-7d %s: -cpu %s, vPMU %s (%s)%s%s, %d vCPUs on CPUs %s\n", v->pid, v->name,
		       v->cpu_model[0] ? v->cpu_model : "(default)", tri(v->pmu, "on", "off"),
		       v->pmu_why, v->lbr_fmt[0] ? ", lbr-fmt=" : "", v->lbr_fmt, v->nvcpus, cpus);
		fprintf(out, "          verdict: %s\n", v->verdict);
	}
}

/* ---- check: JSON ---- */
static void json_cpuset(struct ks_json *j, const char *key, const struct ks_cpuset *s)
{
	char buf[256];

	ks_cpuset_format(s, buf, sizeof(buf));
	ks_json_kv_string(j, key, buf);
}

static void json_caps(struct ks_json *j, const struct ks_pmu_host *h)
{
	const struct ks_pmu_caps *c = &h->caps;

	ks_json_key(j, "pmu");
	ks_json_begin_object(j);
	ks_json_kv_string(j, "vendor", c->vendor);
	ks_json_key(j, "hypervisor");
	ks_json_bool(j, c->hypervisor);
	ks_json_key(j, "hardware_pmu");
	ks_json_bool(j, c->sysfs_cpu_pmu);
	ks_json_kv_string(j, "sysfs_pmus", c->sysfs_pmus);
	ks_json_kv_string(j, "pmu_name", c->pmu_name);
	ks_json_kv_i64(j, "version", c->version);
	ks_json_kv_i64(j, "gp_counters", c->gp);
	ks_json_kv_i64(j, "gp_width", c->gp_width);
	ks_json_kv_i64(j, "fixed_counters", c->fixed);
	ks_json_kv_i64(j, "fixed_width", c->fixed_width);
	ks_json_kv_i64(j, "lbr_depth", c->lbr_depth);
	ks_json_kv_string(j, "lbr_source", c->lbr_source ? c->lbr_source : "");
	ks_json_end_object(j);
	ks_json_key(j, "kvm");
	ks_json_begin_object(j);
	ks_json_key(j, "module");
	ks_json_bool(j, h->kvm.module);
	ks_json_key(j, "dev_kvm");
	ks_json_bool(j, h->kvm.dev_kvm);
	ks_json_kv_i64(j, "enable_pmu", h->kvm.enable_pmu);
	ks_json_kv_string(j, "vendor_modules", h->kvm.vendor_modules);
	ks_json_kv_string(j, "vendor_params", h->kvm.vendor_params);
	ks_json_end_object(j);
}

static void json_holders(struct ks_json *j, const struct ks_pmu_host *h)
{
	size_t i;

	ks_json_key(j, "holders");
	ks_json_begin_array(j);
	for (i = 0; i < h->nholders; i++) {
		const struct ks_pmu_holder *o = &h->holders[i];

		ks_json_begin_object(j);
		ks_json_kv_i64(j, "pid", o->pid);
		ks_json_kv_string(j, "comm", o->comm);
		ks_json_kv_string(j, "cmdline", o->cmdline);
		ks_json_kv_i64(j, "perf_fds", o->nfds);
		ks_json_key(j, "is_perf");
		ks_json_bool(j, o->is_perf);
		ks_json_key(j, "system_wide");
		ks_json_bool(j, o->system_wide);
		ks_json_key(j, "system_wide_guess");
		ks_json_bool(j, o->system_wide_guess);
		json_cpuset(j, "cpus", &o->cpus);
		ks_json_kv_i64(j, "hw_events", o->hw_events);
		ks_json_kv_i64(j, "pinned_events", o->pinned_events);
		ks_json_key(j, "lbr");
		ks_json_bool(j, o->lbr);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static void json_vms(struct ks_json *j, const struct ks_pmu_host *h)
{
	size_t i;

	ks_json_key(j, "vms");
	ks_json_begin_array(j);
	for (i = 0; i < h->nvms; i++) {
		const struct ks_pmu_vm *v = &h->vms[i];

		ks_json_begin_object(j);
		ks_json_kv_i64(j, "pid", v->pid);
		ks_json_kv_string(j, "name", v->name);
		ks_json_kv_string(j, "cpu_model", v->cpu_model);
		ks_json_kv_i64(j, "pmu", v->pmu);
		ks_json_kv_string(j, "pmu_why", v->pmu_why);
		ks_json_kv_string(j, "lbr_fmt", v->lbr_fmt);
		ks_json_kv_i64(j, "vcpus", v->nvcpus);
		json_cpuset(j, "cpus", &v->cpus);
		ks_json_kv_i64(j, "available_gp", v->avail_gp);
		ks_json_kv_i64(j, "available_fixed", v->avail_fixed);
		ks_json_key(j, "may_read_wrong_values");
		ks_json_bool(j, v->may_read_wrong);
		ks_json_key(j, "lbr_may_be_taken");
		ks_json_bool(j, v->lbr_may_be_taken);
		ks_json_kv_string(j, "pinned_users", v->takers);
		ks_json_kv_string(j, "verdict", v->verdict);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

/* ---- report ---- */
static const char *msr_label(uint32_t msr, char *buf, size_t len)
{
	const char *n = ks_x86_msr_name(msr, buf, len);

	if (n != buf)
		snprintf(buf, len, "%s", n ? n : "?");
	return buf;
}

static double span_s(const struct ks_pmu_trace_summary *s)
{
	return s->last_ts > s->first_ts ? (double)(s->last_ts - s->first_ts) / 1e9 : 0;
}

static void print_sources(FILE *out, const struct ks_pmu_trace_summary *s)
{
	int i;

	fprintf(out, "Sources: kvm:kvm_msr %llu, kvm:kvm_exit %llu (%llu MSR exits, %llu RDPMC exits, %s "
	       "reasons), kvm:kvm_entry %llu\n", (unsigned long long)s->kvm_msr,
	       (unsigned long long)s->kvm_exit, (unsigned long long)s->msr_exits,
	       (unsigned long long)s->rdpmc_exits, ks_x86_isa_name(s->isa),
	       (unsigned long long)s->kvm_entry);
	for (i = 0; i < s->nother; i++)
		fprintf(out, "         %s %llu (seen, not interpreted)\n", s->other[i].name,
		       (unsigned long long)s->other[i].count);
	if (!s->kvm_msr)
		fprintf(out, "No kvm:kvm_msr events: MSR numbers are unknown; only exit counts are "
		       "shown.\n");
	fprintf(out, "Span: %.6f s; %llu events before a thread's first kvm_entry ignored\n",
	       span_s(s), (unsigned long long)s->before_first_entry);
}

static void print_vcpus(FILE *out, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_vcpu *v;
	size_t n = ks_pmu_trace_vcpus(pt, &v), i;
	double sp = span_s(ks_pmu_trace_summary(pt));

	fprintf(out, "\nPer vCPU: PMU = PERFEVTSEL/PMC/FIXED/GLOBAL MSRs, LBR = DEBUGCTL/LBR MSRs\n");
	fprintf(out, "%8s %5s %10s %10s %8s %12s %12s %10s %8s %8s %6s %6s\n", "VM", "vCPU", "msr",
	       "pmu+lbr", "/s", "handle_ns", "exit_ns", "msr_exits", "rdpmc", "lbr_acc", "lbr_on",
	       "off");
	for (i = 0; i < n; i++)
		fprintf(out, "%8d %5d %10llu %10llu %8.1f %12llu %12llu %10llu %8llu %8llu %6llu %6llu\n",
		       v[i].vm, v[i].vcpu, (unsigned long long)v[i].msr_accesses,
		       (unsigned long long)(v[i].pmu_accesses + v[i].lbr_accesses),
		       sp > 0 ? (double)(v[i].pmu_accesses + v[i].lbr_accesses) / sp : 0.0,
		       (unsigned long long)v[i].pmu_msr_ns, (unsigned long long)v[i].pmu_exit_ns,
		       (unsigned long long)v[i].msr_exits, (unsigned long long)v[i].rdpmc_exits,
		       (unsigned long long)v[i].lbr_accesses, (unsigned long long)v[i].lbr_on,
		       (unsigned long long)v[i].lbr_off);
}

static void print_msrs(FILE *out, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_msr_row *r;
	size_t n = ks_pmu_trace_msrs(pt, &r), i;
	char name[48];

	fprintf(out, "\nMSRs (handle_ns: kvm_msr -> kvm_entry, as perf kvm stat --event msr)\n");
	fprintf(out, "%8s %5s %10s %-28s %9s %9s %12s %10s %12s\n", "VM", "vCPU", "MSR", "name", "reads",
	       "writes", "handle_ns", "mean_ns", "exit_ns");
	for (i = 0; i < n; i++)
		fprintf(out, "%8d %5d %#10x %-28s %9llu %9llu %12llu %10.0f %12llu\n", r[i].vm, r[i].vcpu,
		       r[i].msr, msr_label(r[i].msr, name, sizeof(name)),
		       (unsigned long long)r[i].reads, (unsigned long long)r[i].writes,
		       (unsigned long long)r[i].msr_ns,
		       r[i].timed ? (double)r[i].msr_ns / (double)r[i].timed : 0.0,
		       (unsigned long long)r[i].exit_ns);
}

static void print_counters(FILE *out, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_counter *c;
	size_t n = ks_pmu_trace_counters(pt, &c), i;
	char name[48], sel[160];
	int k;

	if (!n)
		return;
	fprintf(out, "\nCounters the guests program (event-select writes with EN set)\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "%8d %5d %-20s enables %llu, disables %llu\n", c[i].vm, c[i].vcpu,
		       msr_label(c[i].msr, name, sizeof(name)), (unsigned long long)c[i].enables,
		       (unsigned long long)c[i].disables);
		for (k = 0; k < c[i].nprogs; k++) {
			struct ks_evtsel e;

			ks_evtsel_decode(c[i].progs[k].config | (1ULL << 22),
					 ks_evtsel_msr_is_amd(c[i].msr), &e);
			ks_evtsel_format(&e, sel, sizeof(sel));
			fprintf(out, "%16s %-52s x%llu\n", "", sel, (unsigned long long)c[i].progs[k].writes);
		}
		if (c[i].other_progs)
			fprintf(out, "%16s (other configurations) x%llu\n", "",
			       (unsigned long long)c[i].other_progs);
	}
}

static void json_sources(struct ks_json *j, const struct ks_pmu_trace_summary *s)
{
	int k;

	ks_json_key(j, "sources");
	ks_json_begin_object(j);
	ks_json_kv_u64(j, "kvm_msr", s->kvm_msr);
	ks_json_kv_u64(j, "kvm_exit", s->kvm_exit);
	ks_json_kv_u64(j, "kvm_entry", s->kvm_entry);
	ks_json_kv_u64(j, "msr_exits", s->msr_exits);
	ks_json_kv_u64(j, "rdpmc_exits", s->rdpmc_exits);
	ks_json_kv_string(j, "isa", ks_x86_isa_name(s->isa));
	for (k = 0; k < s->nother; k++)
		ks_json_kv_u64(j, s->other[k].name, s->other[k].count);
	ks_json_end_object(j);
	ks_json_kv_u64(j, "span_ns", s->last_ts > s->first_ts ? s->last_ts - s->first_ts : 0);
	ks_json_kv_u64(j, "before_first_entry", s->before_first_entry);
}

static void json_vcpus(struct ks_json *j, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_trace_summary *s = ks_pmu_trace_summary(pt);
	const struct ks_pmu_vcpu *v;
	size_t nv = ks_pmu_trace_vcpus(pt, &v), i;

	ks_json_key(j, "vcpus");
	ks_json_begin_array(j);
	for (i = 0; i < nv; i++) {
		ks_json_begin_object(j);
		ks_json_kv_i64(j, "vm", v[i].vm);
		ks_json_key(j, "vm_name");
		if (ks_pmu_trace_comm(pt, v[i].vm))
			ks_json_string(j, ks_pmu_trace_comm(pt, v[i].vm));
		else
			ks_json_null(j);
		ks_json_kv_i64(j, "vcpu", v[i].vcpu);
		ks_json_kv_u64(j, "msr_accesses", v[i].msr_accesses);
		ks_json_kv_u64(j, "pmu_accesses", v[i].pmu_accesses);
		ks_json_kv_u64(j, "lbr_accesses", v[i].lbr_accesses);
		ks_json_kv_double(j, "pmu_lbr_per_sec", span_s(s) > 0 ?
				  (double)(v[i].pmu_accesses + v[i].lbr_accesses) / span_s(s) : 0);
		ks_json_kv_u64(j, "pmu_handle_ns", v[i].pmu_msr_ns);
		ks_json_kv_u64(j, "pmu_exit_ns", v[i].pmu_exit_ns);
		ks_json_kv_u64(j, "msr_exits", v[i].msr_exits);
		ks_json_kv_u64(j, "rdpmc_exits", v[i].rdpmc_exits);
		ks_json_kv_u64(j, "lbr_on", v[i].lbr_on);
		ks_json_kv_u64(j, "lbr_off", v[i].lbr_off);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static void json_msrs(struct ks_json *j, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_msr_row *r;
	size_t nr = ks_pmu_trace_msrs(pt, &r), i;
	char name[48];

	ks_json_key(j, "msrs");
	ks_json_begin_array(j);
	for (i = 0; i < nr; i++) {
		ks_json_begin_object(j);
		ks_json_kv_i64(j, "vm", r[i].vm);
		ks_json_kv_i64(j, "vcpu", r[i].vcpu);
		ks_json_kv_u64(j, "msr", r[i].msr);
		ks_json_kv_string(j, "name", msr_label(r[i].msr, name, sizeof(name)));
		ks_json_kv_u64(j, "reads", r[i].reads);
		ks_json_kv_u64(j, "writes", r[i].writes);
		ks_json_kv_u64(j, "timed", r[i].timed);
		ks_json_kv_u64(j, "handle_ns", r[i].msr_ns);
		ks_json_kv_u64(j, "exit_ns", r[i].exit_ns);
		ks_json_kv_u64(j, "max_ns", r[i].max_ns);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static void json_programs(struct ks_json *j, const struct ks_pmu_counter *c)
{
	char sel[160];
	int k;

	ks_json_key(j, "programs");
	ks_json_begin_array(j);
	for (k = 0; k < c->nprogs; k++) {
		struct ks_evtsel e;

		ks_evtsel_decode(c->progs[k].config | (1ULL << 22), ks_evtsel_msr_is_amd(c->msr),
				 &e);
		ks_evtsel_format(&e, sel, sizeof(sel));
		ks_json_begin_object(j);
		ks_json_kv_u64(j, "event", e.event);
		ks_json_kv_u64(j, "umask", e.umask);
		ks_json_key(j, "usr");
		ks_json_bool(j, e.usr);
		ks_json_key(j, "os");
		ks_json_bool(j, e.os);
		ks_json_kv_string(j, "decoded", sel);
		ks_json_kv_u64(j, "writes", c->progs[k].writes);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static void json_counters(struct ks_json *j, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_counter *c;
	size_t nc = ks_pmu_trace_counters(pt, &c), i;
	char name[48];

	ks_json_key(j, "counters");
	ks_json_begin_array(j);
	for (i = 0; i < nc; i++) {
		ks_json_begin_object(j);
		ks_json_kv_i64(j, "vm", c[i].vm);
		ks_json_kv_i64(j, "vcpu", c[i].vcpu);
		ks_json_kv_string(j, "msr", msr_label(c[i].msr, name, sizeof(name)));
		ks_json_kv_u64(j, "enables", c[i].enables);
		ks_json_kv_u64(j, "disables", c[i].disables);
		json_programs(j, &c[i]);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

/* ---- the public entry points ---- */
void ks_pmu_host_print(FILE *out, const struct ks_pmu_host *h)
{
	print_caps(out, h);
	print_holders(out, h);
	print_vms(out, h);
}

void ks_pmu_host_json(FILE *out, const struct ks_pmu_host *h)
{
	struct ks_json j;

	ks_json_init(&j, out, true);
	ks_json_begin_object(&j);
	json_caps(&j, h);
	ks_json_kv_i64(&j, "online_cpus", h->ncpus);
	ks_json_kv_i64(&j, "nmi_watchdog", h->nmi_watchdog);
	ks_json_kv_i64(&j, "host_pinned_gp", h->pinned_gp);
	ks_json_kv_i64(&j, "host_pinned_fixed", h->pinned_fixed);
	ks_json_kv_i64(&j, "unreadable_processes", h->unreadable);
	json_holders(&j, h);
	json_vms(&j, h);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

void ks_pmu_trace_print(FILE *out, struct ks_pmu_trace *pt, const char *input,
			const char *format)
{
	fprintf(out, "Input: %s (%s)\n", input, format);
	print_sources(out, ks_pmu_trace_summary(pt));
	print_vcpus(out, pt);
	print_msrs(out, pt);
	print_counters(out, pt);
}

void ks_pmu_trace_json(FILE *out, struct ks_pmu_trace *pt)
{
	struct ks_json j;

	ks_json_init(&j, out, true);
	ks_json_begin_object(&j);
	json_sources(&j, ks_pmu_trace_summary(pt));
	json_vcpus(&j, pt);
	json_msrs(&j, pt);
	json_counters(&j, pt);
	ks_host_json_threads(ks_pmu_trace_host(pt), &j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}
