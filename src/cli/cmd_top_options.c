/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_options.c - kvmscope top's command line: the option table (its
 * --help text too) and the rules between options (what a replay, live
 * tracing and the statistics views each take).
 */
#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/kvmstats_collect.h"

static const struct opt_cmd top_cmd = {
	.name = "top",
	.synopsis = "[-i FILE [--fast]] [options]",
	.intro = "KVM activity per VM (QEMU process), refreshed every -d seconds, in four views:\n"
		 "  exits        exits per VM, vCPU and reason: exits/s, time in exits (% of\n"
		 "               the vCPUs' time), p99 exit handling latency and the total\n"
		 "               since the start (or the r key);\n"
		 "  tracepoints  every kvm:* event counted per VM, kvm_exit(REASON) below\n"
		 "               kvm_exit (kvm_stat's tracepoint view);\n"
		 "  kvmstats     KVM's statistics per VM and vCPU (exits, halt polling,\n"
		 "               insn_emulation, io/mmio exits...) from QEMU's QMP\n"
		 "               query-stats (directly, or libvirt's domains through\n"
		 "               libvirt), or debugfs when readable;\n"
		 "  halt         halt polling per VM and vCPU from the same statistics:\n"
		 "               halts/s, % of wake-ups while polling, CPU % polling and\n"
		 "               of it wasted (polls that ran out), halts since the start.\n"
		 "Live from tracefs (private instance), or replayed from any input file.\n",
	.outro = "Keys: h help, q quit, space pause, 1/2/3/4 or Tab view, f filter (regex),\n"
		 "g guest, p pid, c clear filters, r reset totals, s interval, x child rows,\n"
		 "z zero rows, v vCPU rows, o next sort column, E/T/P sort by exits/time/p99,\n"
		 "arrows and PgUp/PgDn scroll.  See kvmscope-top(1).\n",
};

static const char *take_pids(const char *arg, void *value)
{
	struct top_args *a = value;

	return parse_pid_list(arg, a->pids, MAX_PIDS, &a->npids) < 0 ?
	       "takes process ids PID[,PID...]" : NULL;
}

static const char *take_libvirt(const char *arg, void *value)
{
	struct top_args *a = value;

	a->libvirt = arg && *arg ? arg : KS_LIBVIRT_URI;
	return NULL;
}

/* What a replay (-i) takes and what live tracing or the statistics
 * views take: an option of the other kind is a usage error. */
static void check_sources(const struct opt *opts, const struct top_args *a)
{
	if (a->fast && !a->input)
		usage_error("top", "--fast needs -i FILE");
	if (!a->input && a->time.set)
		usage_error("top", "--time is for a replay (-i FILE)");
	cli_check_pids(a->pids, a->npids);
	if (a->input && (a->nevents || a->npids))
		usage_error("top", "-e and --pid are for live tracing, not with -i");
	if (a->input && option_given(opts, "engine"))
		usage_error("top", "--engine is for live tracing, not with -i");
	if (a->engine != KS_ENGINE_AUTO && (a->nevents || a->than.set || a->npids > 1))
		usage_error("top", "-e, --than and several --pid need every event, which only "
			    "top's own tracefs reader gives: not with --engine");
	if (a->input && (STATS_VIEW(a->view) || a->nqmp || a->libvirt || a->debugfs))
		usage_error("top", "the kvmstats and halt views read running VMs, not a file (-i)");
}

/* -1 (kvm_stat's: one interval, batch text unless CSV or JSON), where
 * --than's lines can go, and the view: the statistics options given
 * alone mean the kvmstats view. */
static void settle_output(const struct opt *opts, struct top_args *a)
{
	if (a->once) {
		a->batch = !a->csv && !a->json;
		a->iterations = 1;
	}
	if (a->than.set && a->csv)
		usage_error("top", "--than lists exits between the tables or JSON, not with --csv");
	if (a->than.set && STATS_VIEW(a->view))
		usage_error("top", "--than needs traced exits, not the %s view", top_view_names[a->view]);
	if ((a->nqmp || a->libvirt || a->debugfs) && !option_given(opts, "view") &&
	    !option_given(opts, "tracepoints") && !option_given(opts, "halt"))
		a->view = VIEW_KVMSTATS;
}

/* The option table; the rules between options after it. */
void top_parse_args(int argc, char **argv, struct top_args *a)
{
	const struct opt opts[] = {
		OPT_INPUT('i', "input", &a->input, "replay FILE (perf.data, trace.dat, ftrace text) at its\n"
			  "recorded speed", NULL),
		OPT_FLAG(0, "fast", &a->fast, "replay as fast as possible"),
		OPT_SECONDS('d', "delay", &a->delay, "refresh interval (default 1; fractions allowed)",
			    10, 86400000),
		OPT_INT('n', "iterations", &a->iterations, "N", "stop after N intervals", 1, 1LL << 40),
		OPT_FLAG('1', "once", &a->once, "one interval in batch mode (kvm_stat -1)"),
		OPT_FLAG('b', "batch", &a->batch, "plain text per interval (no screen control)"),
		{ .type = OPT_T_FLAG, .long_name = "csv", .value = &a->csv, .excl = "format",
		  .help = "CSV, one line per row and interval" },
		{ .type = OPT_T_FLAG, .long_name = "json", .value = &a->json, .excl = "format",
		  .help = "JSON, one document (one line) per interval: its rows\n"
			  "and the host threads' VM and vCPU (\"threads\")" },
		{ .type = OPT_T_CHOICE, .long_name = "view", .value = &a->view, .argh = "VIEW",
		  .choices = top_view_names, .excl = "view",
		  .help = "exits (default), tracepoints, kvmstats or halt" },
		OPT_SET('t', "tracepoints", &a->view, VIEW_TRACEPOINTS,
			"the tracepoint view: every kvm:* event per VM", "view"),
		OPT_SET(0, "kvmstats", &a->view, VIEW_KVMSTATS,
			"the KVM statistics view (QMP query-stats, debugfs)", "view"),
		OPT_SET(0, "halt", &a->view, VIEW_HALT,
			"the halt polling view (from the KVM statistics)", "view"),
		OPT_LIST(0, "qmp", a->qmp, &a->nqmp, MAX_QMP, "SOCKET",
			 "kvmstats, halt: QEMU's QMP unix socket (repeat; default:\n"
			 "the sockets of running QEMU processes' -qmp unix:PATH)"),
		{ .type = OPT_T_CALLBACK, .long_name = "libvirt", .value = a, .argh = "URI",
		  .cb = take_libvirt, .optional_arg = true,
		  .help = "kvmstats, halt: libvirt's domains (default URI\n"
			  "qemu:///system; without --qmp, also when its socket exists)" },
		OPT_FLAG(0, "debugfs", &a->debugfs, "kvmstats, halt: read /sys/kernel/debug/kvm instead"),
		OPT_CHOICE('s', "sort", &a->sort, "COL", "exits (default), time, p99 or name", top_sort_columns),
		OPT_FLAG('v', "vcpus", &a->vcpus, "show the per-vCPU rows"),
		OPT_STRING('f', "fields", &a->fields, "REGEX",
			   "only reasons, events and statistics matching REGEX"),
		OPT_STRING('g', "guest", &a->guest, "NAME", "only the VM named NAME (QEMU -name or comm)"),
		OPT_FLAG('z', "skip-zero", &a->skip_zero, "omit rows that are zero in the interval"),
		OPT_CALLBACK(0, "than", &a->than, "TIME",
			     "list every exit slower than TIME (ns, us, ms or s: 1ms)\n"
			     "as it ends: in batch mode before the interval's table,\n"
			     "on the screen the latest at the bottom", take_duration),
		OPT_LIST('e', "event", a->events, &a->nevents, MAX_EVENTS, "SYS:EVENT",
			 "live: record these events instead of the KVM set\n"
			 "(globs allowed; repeat)"),
		OPT_CALLBACK('p', "pid", a, "PID[,PID]", "live: only these processes (set_event_pid)",
			     take_pids),
		OPT_CHOICE(0, "engine", &a->engine, "auto|bpf|tracefs",
			   "live: auto (default: bpf where it loads, else\n"
			   "tracefs), bpf or tracefs", cli_engine_names),
		OPT_LIMIT(&a->limits),
		OPT_TIME(&a->time),
		OPT_END(),
	};
	int first;

	a->delay = 1.0;
	ks_limits_default(&a->limits);
	first = parse_options(&top_cmd, opts, argc, argv);
	if (first < argc)
		usage_error("top", "unexpected argument '%s'", argv[first]);
	check_sources(opts, a);
	settle_output(opts, a);
}
