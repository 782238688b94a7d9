/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_pmu.c - kvmscope pmu: who holds the host's performance counters
 * (`pmu check`, live host), and the vPMU / LBR MSR traffic of guests in a
 * trace (`pmu -i FILE`).  Analyses are in src/analysis/pmu_host.c and
 * pmu_trace.c, their text and JSON in src/output/pmu_report.c; this file
 * parses options and picks the view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/tracedat.h"
#include "kvmscope/pmu_host.h"
#include "kvmscope/pmu_report.h"
#include "kvmscope/pmu_trace.h"
#include "kvmscope/source.h"

static const struct opt_cmd pmu_cmd = {
	.name = "pmu",
	.synopsis = "check [--json] [--sysfs-root DIR] [--proc-root DIR]\n"
		    "                          [--dev-root DIR] [--cpuid FILE]\n"
		    "       kvmscope pmu [report] -i FILE [--json] [--vcpu N] [-p PID]",
	.intro = "check: the host PMU (vendor, counters, LBR depth), KVM's enable_pmu, who holds\n"
		 "counters on the host (NMI watchdog, processes with perf_event fds, which are\n"
		 "system-wide and pinned), the VMs with a vPMU, and per VM a verdict.\n"
		 "report: PMU and LBR MSR accesses of guests from a perf.data, trace.dat or\n"
		 "ftrace text file with kvm:kvm_msr (and kvm_exit/kvm_entry) events.\n",
	.outro = "See kvmscope-pmu(1).\n",
};

struct pmu_args {
	bool check, json, quiet;
	const char *input;
	long long vcpu, pid;
	struct time_window time;
	struct ks_pmu_host_opts host;
	struct ks_pmu_trace_config trace;
};

static void parse_args(struct pmu_args *a, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_INPUT('i', "input", &a->input, "trace to read (report; - for standard input)",
			  "pmu reads one trace at a time"),
		OPT_INT(0, "vcpu", &a->vcpu, "N", "only vCPU N (report)", 0, 1 << 20),
		OPT_INT('p', "pid", &a->pid, "PID", "only this host process / VM (report)", 1,
			INT32_MAX),
		OPT_TIME(&a->time),
		OPT_FLAG(0, "json", &a->json, "JSON output (integer nanoseconds)"),
		OPT_FLAG('q', "quiet", &a->quiet, "no progress line on stderr (report)"),
		OPT_STRING(0, "sysfs-root", &a->host.sysfs_root, "DIR",
			   "read sysfs from DIR instead of /sys (check)"),
		OPT_STRING(0, "proc-root", &a->host.proc_root, "DIR",
			   "read procfs from DIR instead of /proc (check)"),
		OPT_STRING(0, "dev-root", &a->host.dev_root, "DIR",
			   "look for kvm in DIR instead of /dev (check)"),
		OPT_STRING(0, "cpuid", &a->host.cpuid_file, "FILE",
			   "CPUID values from FILE (\"leaf subleaf eax ebx ecx edx\",\n"
			   "hex, one line per leaf) instead of the cpuid instruction"),
		OPT_END(),
	};
	int first;

	a->vcpu = -1;
	a->pid = -1;
	first = parse_options(&pmu_cmd, opts, argc, argv);
	a->trace.vcpu = (int)a->vcpu;
	a->trace.pid = (int32_t)a->pid;
	if (first < argc && !strcmp(argv[first], "check")) {
		a->check = true;
		first++;
	} else if (first < argc && !strcmp(argv[first], "report")) {
		first++;
	}
	if (first < argc && !a->check && !a->input)
		a->input = argv[first++];
	if (first < argc)
		usage_error("pmu", "unexpected argument '%s'", argv[first]);
	if (!a->check && !a->input)
		usage_error("pmu", "give 'check' or an input file (-i FILE)");
	if (a->check && (a->input || a->vcpu >= 0 || a->pid >= 0 || a->time.set))
		usage_error("pmu", "-i, --vcpu, --pid and --time are for 'pmu report', not 'pmu "
			    "check'");
	if (!a->check && (a->host.sysfs_root || a->host.proc_root || a->host.dev_root ||
			  a->host.cpuid_file))
		usage_error("pmu", "--sysfs-root, --proc-root, --dev-root and --cpuid are for "
			    "'pmu check'");
}

static int run_check(const struct pmu_args *a)
{
	struct ks_pmu_host *h;
	struct ks_error err;

	if (ks_pmu_host_scan(&h, &a->host, &err) < 0)
		die("%s", err.msg);
	if (a->json)
		ks_pmu_host_json(stdout, h);
	else
		ks_pmu_host_print(stdout, h);
	ks_pmu_host_free(h);
	return 0;
}

/* ---- report ---- */
/* Nothing the report reads: say what the input holds instead. */
static void explain_empty(const struct pmu_args *a, const struct ks_pmu_trace_summary *s)
{
	if (s->kvm_msr || s->kvm_exit || s->kvm_entry)
		return;
	if (a->time.set) {
		warnx_("%s: no kvm_msr, kvm_exit or kvm_entry events in the time window", a->input);
	} else {
		/* a recording of another architecture's KVM events (no MSRs):
		 * the threads and VMs are still reported, with a note */
		cli_note_missing(a->input, "kvm_msr events (x86's vPMU MSR accesses)");
	}
}

static int run_report(const struct pmu_args *a)
{
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct ks_pmu_trace *pt;
	struct ks_progress prog;
	int r;

	if (cli_source_open(&src, a->input, 0, NULL, &err) < 0)
		die("%s", err.msg);
	apply_time_window(src, a->input, &a->time);
	pt = ks_pmu_trace_new(&a->trace, ks_source_info(src));
	if (!pt)
		die("out of memory");
	if (ks_pmu_trace_set_guests(pt, src, &err) < 0)
		die("%s", err.msg);
	cli_progress_init(&prog, "pmu", a->quiet, false);
	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		ks_pmu_trace_add(pt, &rec);
		cli_progress(&prog, src);
	}
	ks_progress_end(&prog);
	if (r < 0 || ks_pmu_trace_error(pt, a->input, &err) < 0)
		die("%s", err.msg);
	explain_empty(a, ks_pmu_trace_summary(pt));
	if (a->json)
		ks_pmu_trace_json(stdout, pt);
	else
		ks_pmu_trace_print(stdout, pt, a->input, ks_source_info(src)->format);
	ks_pmu_trace_free(pt);
	ks_source_close(src);
	return 0;
}

int cmd_pmu(int argc, char **argv)
{
	struct pmu_args a;

	memset(&a, 0, sizeof(a));
	parse_args(&a, argc, argv);
	a.input = cli_input(a.input);
	return a.check ? run_check(&a) : run_report(&a);
}
