/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_stat.c - kvmscope stat: exit, MMIO, I/O port, MSR, hcall and trap
 * statistics of every architecture perf supports.
 *
 * Reads any input (perf.data, trace.dat, ftrace text), runs the stat engine
 * with one view per --by, prints a table, JSON, CSV or perf's own layout.
 * The engine's observer feeds the slow-exit log (--than, printed as the
 * exits end) and the latency heatmap (--heatmap, --heatmap-json,
 * --heatmap-text), both in fixed memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "cli.h"
#include "options.h"
#include "arch/arch.h"
#include "kvmscope/attribution.h"
#include "kvmscope/census.h"
#include "kvmscope/engine.h"
#include "kvmscope/guestsyms.h"
#include "kvmscope/heatmap.h"
#include "kvmscope/heatmap_report.h"
#include "kvmscope/halt.h"
#include "kvmscope/limits.h"
#include "kvmscope/slow_log.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/stat_report.h"

#define STAT_BATCH 64 /* records per ks_source_next_batch() */
/* How stat opens its input: no kernel symbols, and the saved cmdlines
 * parsed only when a thread is named by them (stat asks through
 * ks_source_tep_comms()) */
#define STAT_OPEN (KS_OPEN_NO_SYMBOLS | KS_OPEN_COMMS_WHEN_ASKED)

static const struct opt_cmd stat_cmd = {
	.name = "stat",
	.synopsis = "[report] [-i FILE] [options]",
	.intro = "Exit statistics of KVM guests from a perf.data, trace.dat or ftrace text file\n"
		 "(type detected from the content).  The default input is perf.data.guest, as\n"
		 "written by 'perf kvm stat record'.\n",
	.outro = "Times run from the exit (begin event) to the next entry of the same host thread\n"
		 "(--measure run: from the entry to the next exit).  --format perf measures what\n"
		 "perf measures on the input's architecture.  Every report says which source\n"
		 "mapped each host thread to its VM and vCPU.  The sort key may also be given\n"
		 "as -s/--sort, the spelling of kvmscope report.  See kvmscope-stat(1).\n",
};

static const char *const measure_names[] = { "handling", "run", NULL };
static const char *const format_names[] = { "table", "json", "csv", "perf", NULL };
static const enum ks_stat_format format_values[] = { KS_STAT_TABLE, KS_STAT_JSON, KS_STAT_CSV,
						     KS_STAT_PERF };

struct stat_args {
	const char *input;
	const char *by[KS_STAT_MAX_VIEWS];
	int nby;
	long long vcpu;
	int measure, format;
	bool hist, measure_set;
	struct time_window time;
	struct ks_limits limits;
	struct ks_stat_config cfg;
	struct ks_stat_report_opts report;
	struct duration_arg than;      /* --than: the slow-exit log */
	const char *heatmap_svg, *heatmap_json;
	bool heatmap_text;
	bool quiet;
	const char *guest_kallsyms;    /* --guest-kallsyms: names for the log */
	double poll_budget;        /* --event halt: % of the VM's vCPU time */
	bool live;                 /* --live: this host, through a live engine */
	double duration;           /* --live -d SECS (0: until SIGINT) */
	int engine;                /* --engine: enum ks_engine_kind */
};

/* What the engine's observer feeds (cfg.observe): the slow-exit log and
 * the heatmap, both streamed. */
struct observers {
	struct ks_slow_log *log;
	struct ks_heatmap *hm;
	bool hm_full;                  /* an occurrence the heatmap could not take */
};

static void observe(void *ctx, const struct ks_stat_occurrence *occ)
{
	struct observers *o = ctx;

	if (o->hm && ks_heatmap_add(o->hm, occ->row, occ->begin_ts, occ->ns) < 0)
		o->hm_full = true;
	if (o->log)
		ks_slow_log_add(o->log, occ);
}

static unsigned parse_dims(const char *arg)
{
	static const char *const names[] = { "reason", "key", "event", "vcpu", "vm", "pid", NULL };
	static const unsigned bits[] = { KS_DIM_KEY, KS_DIM_KEY, KS_DIM_KEY, KS_DIM_VCPU,
					 KS_DIM_VM, KS_DIM_VM };
	unsigned dims;

	if (parse_name_set(arg, names, bits, &dims) < 0)
		usage_error("stat", "--by takes reason, vcpu and vm separated by commas, not '%s'",
			    arg);
	return dims;
}

static const char *take_pids(const char *arg, void *value)
{
	struct stat_args *a = value;

	if (parse_pid_list(arg, a->cfg.pids, KS_MAX_PIDS, &a->cfg.npids) < 0)
		return "takes process ids separated by commas (at most 64)";
	a->report.pid_arg = arg;
	return NULL;
}

static const char *take_budget(const char *arg, void *value)
{
	double v;

	if (ks_parse_seconds(arg, strlen(arg), &v) < 0 || !(v >= 0 && v <= 100))
		return "takes a percentage from 0 to 100";
	*(double *)value = v;
	return NULL;
}

/* Break TEXT at spaces into lines of at most WIDTH characters. */
static void wrap(char *text, size_t width)
{
	char *line = text, *space = NULL, *p;

	for (p = text; *p; p++) {
		if (*p == ' ')
			space = p;
		if ((size_t)(p - line) >= width && space) {
			*space = '\n';
			line = space + 1;
			space = NULL;
		}
	}
}

static void check_live(const struct stat_args *a, const struct opt *opts, bool more);

/* --help's texts of --event and --arch, from src/arch's tables. */
struct stat_help {
	char event[256], arch[256];
};

static void help_texts(struct stat_help *h)
{
	char names[160];

	/* the architectures and their classes, from the table (src/arch) */
	ks_arch_event_help(h->event, sizeof(h->event));
	/* halt polling is KVM's generic code, on every architecture */
	strncat(h->event, "; any: halt (halt polling)", sizeof(h->event) - strlen(h->event) - 1);
	wrap(h->event, 56);
	ks_arch_name_list(names, sizeof(names));
	snprintf(h->arch, sizeof(h->arch), "%s (default: from the input's header or events)",
		 names);
	wrap(h->arch, 56);
}

/* The operands after the options: "report" (perf's spelling), then at
 * most one input file. */
static void take_operands(struct stat_args *a, const struct opt *opts, int first, int argc,
			  char **argv)
{
	if (first < argc && !strcmp(argv[first], "report"))
		first++;
	if (a->live)
		check_live(a, opts, first < argc);
	if (first < argc && !a->input)
		a->input = argv[first++];
	else if (first < argc && a->input)
		usage_error("stat", "takes one input file ('%s' and '%s' were given)", a->input,
			    argv[first]);
	if (first < argc)
		usage_error("stat", "unexpected argument '%s'", argv[first]);
}

/* The engine's configuration and the report's options from the parsed
 * values. */
static void take_values(struct stat_args *a, const struct opt *opts)
{
	if (a->report.sort_key && !ks_stat_sort_key_valid(a->report.sort_key))
		usage_error("stat", "--key takes sample, time, mean_t, max_t, min_t, ev_name or "
			    "p99, not '%s'", a->report.sort_key);
	a->cfg.vcpu = (int)a->vcpu;
	a->cfg.measure = a->measure == 1 ? KS_MEASURE_RUN : KS_MEASURE_HANDLING;
	a->report.format = format_values[a->format];
	a->report.hist = a->hist;
	a->measure_set = option_given(opts, "measure");
}

/* Options an output format (or --event halt's view) has no place for. */
static void check_format(const struct stat_args *a)
{
	enum ks_stat_format f = a->report.format;

	if (f == KS_STAT_PERF && a->nby)
		usage_error("stat", "--format perf prints perf's one table by reason; --by cannot "
			    "be used with it");
	if (a->hist && (f == KS_STAT_PERF || f == KS_STAT_CSV))
		usage_error("stat", "--hist adds histograms to the table and JSON outputs, not to %s",
			    f == KS_STAT_CSV ? "CSV" : "--format perf");
	if (a->cfg.event_class && !strcmp(a->cfg.event_class, "halt") &&
	    (a->nby || a->hist || f == KS_STAT_PERF || f == KS_STAT_CSV || a->measure_set ||
	     a->report.sort_key))
		usage_error("stat", "--event halt prints its own view per VM and vCPU (table or "
			    "--json); --by, --hist, --measure, -k, --csv and --format perf do not "
			    "apply");
}

/* Options that go with another one. */
static void check_pairs(const struct stat_args *a, const struct opt *opts)
{
	if (!a->live && (option_given(opts, "duration") || option_given(opts, "engine")))
		usage_error("stat", "-d and --engine go with --live");
	if (option_given(opts, "poll-budget") &&
	    (!a->cfg.event_class || strcmp(a->cfg.event_class, "halt")))
		usage_error("stat", "--poll-budget goes with --event halt");
	if (a->guest_kallsyms && !a->than.set)
		usage_error("stat", "--guest-kallsyms names the addresses of the --than log; give "
			    "--than too");
}

/* Where the slow-exit log and the heatmap can go. */
static void check_observers(const struct stat_args *a)
{
	enum ks_stat_format f = a->report.format;

	if (a->than.set && (f == KS_STAT_PERF || f == KS_STAT_CSV))
		usage_error("stat", "--than logs exits before the table or JSON, not with %s",
			    f == KS_STAT_CSV ? "CSV" : "--format perf");
	if (a->heatmap_text && f != KS_STAT_TABLE)
		usage_error("stat", "--heatmap-text prints after the table; use --heatmap-json "
			    "with other formats");
	if (a->heatmap_svg && a->heatmap_json && !strcmp(a->heatmap_svg, a->heatmap_json))
		usage_error("stat", "--heatmap and --heatmap-json name the same file '%s'",
			    a->heatmap_svg);
}

static void parse_args(struct stat_args *a, int argc, char **argv)
{
	struct stat_help h;

	help_texts(&h);
	const struct opt opts[] = {
		OPT_INPUT('i', "input", &a->input, "input file",
			  "for a host and a guest recording use 'kvmscope merge' or 'kvmscope report -i HOST -i GUEST'"),
		OPT_STRING(0, "event", &a->cfg.event_class, "CLASS", h.event),
		OPT_CHOICE(0, "measure", &a->measure, "M",
			   "handling (default: exit -> entry) or run (entry -> exit)", measure_names),
		OPT_STRING(0, "arch", &a->cfg.arch, "ARCH", h.arch),
		OPT_LIST(0, "by", a->by, &a->nby, KS_STAT_MAX_VIEWS, "DIMS",
			 "rows by reason (default), vcpu, vm, or a comma list such\n"
			 "as vm,vcpu,reason; repeat for several tables (max 4)"),
		OPT_INT(0, "vcpu", &a->vcpu, "N", "only vCPU N", 0, 1 << 20),
		OPT_CALLBACK('p', "pid", a, "PID[,PID]", "only these host processes (VMs)", take_pids),
		OPT_STRING('k', "key", &a->report.sort_key, "KEY",
			   "sort by sample (default), time (total), mean_t, max_t,\n"
			   "min_t, ev_name or p99"),
		OPT_ALIAS('s', "sort", "key"),
		OPT_TIME(&a->time),
		OPT_LIMIT(&a->limits),
		OPT_FLAG('q', "quiet", &a->quiet, "no progress line on stderr"),
		OPT_FLAG(0, "hist", &a->hist, "log2 latency histogram per row"),
		OPT_CALLBACK(0, "than", &a->than, "TIME",
			     "first list every exit slower than TIME (ns, us, ms or\n"
			     "s: 1ms) as it ends: time, VM, vCPU, thread, reason,\n"
			     "guest address, detail, duration", take_duration),
		OPT_STRING(0, "guest-kallsyms", &a->guest_kallsyms, "F",
			   "guest /proc/kallsyms: --than names the guest address\n"
			   "(for every VM)"),
		OPT_STRING(0, "heatmap", &a->heatmap_svg, "FILE",
			   "write a latency heatmap (time x latency per row of the\n"
			   "first --by) as a standalone SVG picture"),
		OPT_STRING(0, "heatmap-json", &a->heatmap_json, "FILE",
			   "write the heatmap's cells as JSON"),
		OPT_FLAG(0, "heatmap-text", &a->heatmap_text,
			 "print the heatmap in shade blocks after the table"),
		OPT_CALLBACK(0, "poll-budget", &a->poll_budget, "PCT",
			     "--event halt: the share of a VM's vCPU time polling\n"
			     "may cost in the recommended halt_poll_ns (default 10)",
			     take_budget),
		OPT_FLAG(0, "live", &a->live,
			 "this host's exits, live (perf kvm stat live): the table\n"
			 "over -d SECS or until SIGINT; no file is written"),
		OPT_SECONDS('d', "duration", &a->duration, "--live: stop after SECS seconds",
			    10, 86400000),
		OPT_CHOICE(0, "engine", &a->engine, "auto|bpf|tracefs",
			   "--live: auto (default: bpf where it loads, else\n"
			   "tracefs), bpf or tracefs", cli_engine_names),
		OPT_SET(0, "json", &a->format, 1, "JSON (integer nanoseconds)", "format"),
		OPT_SET(0, "csv", &a->format, 2, "CSV", "format"),
		{ .type = OPT_T_CHOICE, .long_name = "format", .value = &a->format, .argh = "FMT",
		  .choices = format_names, .excl = "format",
		  .help = "table (default), json, csv, or perf: exactly the layout\n"
			  "of perf 6.1's 'perf kvm stat report' (on stdout)" },
		OPT_END(),
	};

	take_operands(a, opts, parse_options(&stat_cmd, opts, argc, argv), argc, argv);
	take_values(a, opts);
	check_format(a);
	check_pairs(a, opts);
	check_observers(a);
	/* the slow lines and the report as one stream of JSON Lines */
	a->report.compact = a->than.set && a->report.format == KS_STAT_JSON;
}

/* --live: what applies to an engine's aggregates (no events of its own:
 * no slow-exit log, heatmap, other class or perf's byte-exact layout). */
static void check_live(const struct stat_args *a, const struct opt *opts, bool more)
{
	static const char *const offline[] = { "input", "measure", "than", "guest-kallsyms",
					       "heatmap", "heatmap-json", "heatmap-text",
					       "poll-budget", "hist", "time", NULL };
	int i;

	if (more)
		usage_error("stat", "--live reads this host, not a file");
	for (i = 0; offline[i]; i++)
		if (option_given(opts, offline[i]))
			usage_error("stat", "--%s is for a recording, not with --live", offline[i]);
	if (a->format == 3)
		usage_error("stat", "--format perf is perf's report of a recording; with --live "
			    "use table, json or csv");
	if (a->cfg.event_class && strcmp(a->cfg.event_class, "vmexit"))
		usage_error("stat", "--live counts exits (vmexit), not --event %s",
			    a->cfg.event_class);
}

/* Write the heatmap to PATH (SVG or JSON), replaced only when complete. */
static void write_heatmap(const char *path, const char *input, const struct ks_heatmap *hm,
			  const struct ks_stat *st, bool json)
{
	const char *inputs[2] = { input, NULL };
	struct ks_outfile *of = cli_output_open(path, inputs, 0);
	int r = json ? ks_heatmap_write_json(ks_outfile_stream(of), hm, st, input)
		     : ks_heatmap_write_svg(ks_outfile_stream(of), hm, st, input);

	if (r < 0)
		die("out of memory");
	cli_output_commit(of);
}

static void setup(struct stat_args *a)
{
	int i;

	if (!a->input)
		a->input = "perf.data.guest";
	a->input = cli_input(a->input);
	a->report.vcpu = a->cfg.vcpu;
	a->report.input = a->input;
	if (a->report.format == KS_STAT_PERF) {
		/* perf's accounting and one table by key. */
		a->cfg.perf_compat = true;
		a->cfg.no_histograms = true;
		a->cfg.no_begin_counts = true;
		a->cfg.views[0] = KS_DIM_KEY;
		if (!a->measure_set)
			a->cfg.measure = KS_MEASURE_PERF;
		return;
	}
	for (i = 0; i < a->nby; i++)
		a->cfg.views[i] = parse_dims(a->by[i]);
	if (!a->nby)
		a->cfg.views[0] = KS_DIM_KEY;
}

/* Whether ST counted nothing at all: no begin event passed the filters. */
static bool empty_answer(const struct ks_stat *st)
{
	struct ks_stat_row **rows;

	return ks_stat_rows(st, KS_STAT_BEGINS, &rows) == 0 && ks_stat_rows(st, 0, &rows) == 0;
}

static bool has_id(const int32_t *ids, int n, int32_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* An empty answer: say what the input does hold.  A question the input
 * cannot answer (a class, vCPU, process or architecture it does not have)
 * is an error; a legitimate zero (nothing in the time window) a note. */
static void explain_empty(const struct stat_args *a, const struct ks_stat *st)
{
	static int32_t vms[KS_CENSUS_MAX_IDS];
	const struct ks_attr_thread **threads;
	static struct ks_census c;
	size_t nthreads = ks_stat_attribution(st, &threads);
	int nvms = 0;
	char have[512];
	int i;

	cli_census(a->input, a->cfg.arch, &c);
	if (cli_note_no_kvm(a->input, &c, NULL))
		return; /* an idle host: an empty answer, not an error */
	if (a->cfg.arch && c.detected_arch && strcmp(c.detected_arch, a->cfg.arch))
		die("%s: --arch %s, but the file's KVM events are %s's", a->input, a->cfg.arch,
		    c.detected_arch);
	ks_census_classes(&c, have, sizeof(have));
	for (i = 0; i < c.nclasses; i++)
		if (!strcmp(c.classes[i].name, a->cfg.event_class) && !c.classes[i].begins)
			die("%s: no %s events; this file has %s", a->input, a->cfg.event_class,
			    have[0] ? have : "no events of any class");
	if (a->cfg.vcpu >= 0 && c.nvcpus && !has_id(c.vcpus, c.nvcpus, a->cfg.vcpu)) {
		ks_census_ids(c.vcpus, c.nvcpus, have, sizeof(have));
		die("%s: no vCPU %d; this file has vCPU%s %s", a->input, a->cfg.vcpu,
		    c.nvcpus == 1 ? "" : "s", have);
	}
	for (size_t t = 0; t < nthreads; t++) /* sorted by VM */
		if (threads[t]->vm >= 0 && (!nvms || vms[nvms - 1] != threads[t]->vm) &&
		    nvms < KS_CENSUS_MAX_IDS)
			vms[nvms++] = threads[t]->vm;
	for (i = 0; i < a->cfg.npids; i++)
		if (has_id(vms, nvms, a->cfg.pids[i]))
			break;
	if (a->cfg.npids && i == a->cfg.npids) {
		ks_census_ids(vms, nvms, have, sizeof(have));
		die("%s: no KVM events of process %s; this file has the VM process%s %s", a->input,
		    a->report.pid_arg, nvms == 1 ? "" : "es", nvms ? have : "(none known)");
	}
	warnx_("%s: no %s events match%s", a->input, a->cfg.event_class,
	       a->time.set ? " in the time window" : " the filters");
}

/* --by vm or vcpu where the input cannot tell: say so rather than print
 * rows that look like an answer.  A text of exits alone (no end events) is
 * counted by reason only; a thread without a process id (no tgid, no
 * "CPU N/KVM" group, no GUEST option) is a VM of its own; a thread without
 * a vCPU id is its own row. */
static void note_dims(const struct stat_args *a, const struct ks_stat *st)
{
	const struct ks_attr_thread **threads;
	size_t n = ks_stat_attribution(st, &threads), novm = 0, novcpu = 0;
	struct ks_stat_row **rows;
	unsigned dims = 0;
	int i;

	for (i = 0; i < a->nby; i++)
		dims |= a->cfg.views[i];
	dims &= KS_DIM_VM | KS_DIM_VCPU;
	if (!dims || a->report.format == KS_STAT_PERF)
		return;
	if (ks_stat_rows(st, 0, &rows) == 0 && ks_stat_rows(st, KS_STAT_BEGINS, &rows)) {
		warnx_("%s: --by %s: the input has no end events; its exits are counted by "
		       "reason only", a->input, dims == KS_DIM_VM ? "vm" : dims == KS_DIM_VCPU ?
		       "vcpu" : "vm,vcpu");
		return;
	}
	for (size_t t = 0; t < n; t++) {
		novm += threads[t]->vm_src == KS_SRC_THREAD || threads[t]->vm < 0;
		novcpu += threads[t]->vcpu < 0;
	}
	if ((dims & KS_DIM_VM) && novm)
		warnx_("%s: --by vm: the input names no process (VM) for %zu of its %zu vCPU "
		       "threads (no tgid, no 'CPU N/KVM' name, no GUEST option): each is "
		       "taken for a VM of its own", a->input, novm, n);
	if ((dims & KS_DIM_VCPU) && novcpu)
		warnx_("%s: --by vcpu: the input gives no vCPU id for %zu of its %zu vCPU "
		       "threads: their rows are by host thread", a->input, novcpu, n);
}

/* --event nested in a table or JSON: the nested-l1 class (L1's handling of
 * the exits reflected to it) counted beside it, over the same records and
 * views; NULL for other classes and formats, or where the architecture has
 * no such class. */
static struct ks_stat *nested_companion(const struct stat_args *a, struct ks_source *src)
{
	struct ks_stat_config cfg = a->cfg;
	struct ks_error err;

	if (!a->cfg.event_class || strcmp(a->cfg.event_class, "nested") ||
	    (a->report.format != KS_STAT_TABLE && a->report.format != KS_STAT_JSON))
		return NULL;
	cfg.event_class = "nested-l1";
	cfg.observe = NULL;
	cfg.observe_ctx = NULL;
	return ks_stat_new_source(&cfg, src, &err);
}

/* --event halt: halt polling per VM and vCPU (halt.h), a generic KVM
 * class (kvm_vcpu_wakeup, kvm_halt_poll_ns) outside the exit tables. */
static int stat_halt(struct stat_args *a)
{
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct ks_halt *h;
	const struct ks_halt_vcpu *const *vs;
	struct ks_census c;
	int r;

	if (ks_source_open_opts(&src, a->input,
				&(struct ks_source_opts){ .flags = KS_OPEN_NO_SYMBOLS,
							  .limits = &a->limits, .ctx = cli_ctx(),
							  .arch = a->cfg.arch }, &err) < 0)
		die("%s", err.msg);
	apply_time_window(src, a->input, &a->time);
	h = ks_halt_new(src, &err);
	if (!h)
		die("%s", err.msg);
	while ((r = ks_source_next(src, &rec, &err)) > 0 && ks_halt_error(h, NULL) == 0)
		ks_halt_add(h, &rec);
	if (r < 0 || ks_halt_error(h, &err) < 0)
		die("%s", err.msg);
	if (!ks_halt_vcpus(h, &vs)) {
		cli_census(a->input, a->cfg.arch, &c);
		cli_require_kvm(a->input, &c, NULL);
		die("%s: no kvm_vcpu_wakeup or kvm_halt_poll_ns events; record kvm:kvm_vcpu_wakeup "
		    "and kvm:kvm_halt_poll_ns", a->input);
	}
	ks_halt_print(stdout, h, &(struct ks_halt_print_opts){
		.input = a->input, .json = a->report.format == KS_STAT_JSON,
		.budget_pct = a->poll_budget });
	ks_halt_free(h);
	ks_source_close(src);
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --live: the engine counts for -d SECS (or until SIGINT), then its
 * cumulative series become the stat engine's rows and the usual report. */
static int stat_live(struct stat_args *a)
{
	struct ks_engine_config ec = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot snap = { 0 };
	struct ks_source_info info = { .format = "live" };
	struct ks_source_stats stats = { 0 };
	struct ks_engine *e;
	struct ks_error err;
	struct ks_stat *st;
	struct utsname u;
	char label[64];
	double end;
	int i;

	ec.kind = (enum ks_engine_kind)a->engine;
	ec.exits = true;
	ec.max_series = a->limits.threads > 65536 ? (uint32_t)a->limits.threads : 65536;
	if (a->cfg.npids == 1)
		ec.pid = a->cfg.pids[0];
	cli_live_catch_signals();
	e = cli_engine_open("stat", &ec);
	end = a->duration > 0 ? mono_s() + a->duration : 0;
	while (!cli_live_interrupted()) {
		double left = end > 0 ? end - mono_s() : 1;

		if (left <= 0)
			break;
		ks_engine_wait(e, -1, left > 0.1 ? 100 : (int)(left * 1000) + 1, NULL);
	}
	if (ks_engine_read(e, &snap, &err) < 0)
		die("%s", err.msg);
	ks_engine_close(e);
	if (snap.arch[0])
		a->cfg.arch = snap.arch;
	else if (uname(&u) == 0)
		snprintf(info.arch, sizeof(info.arch), "%.31s", u.machine);
	a->cfg.no_begin_counts = true;
	for (i = 0; i < a->nby; i++)
		a->cfg.views[i] = parse_dims(a->by[i]);
	if (!a->nby)
		a->cfg.views[0] = KS_DIM_KEY;
	st = ks_stat_new(&a->cfg, &info, &err);
	if (!st)
		die("%s", err.msg);
	ks_engine_to_stat(&snap, st);
	if (ks_stat_error(st, &err) < 0)
		die("%s", err.msg);
	/* what the engine could not count is said, never dropped silently */
	if (snap.lost)
		warnx_("stat --live: the kernel lost %llu events (%s engine): counts are low",
		       (unsigned long long)snap.lost, snap.engine);
	/* exits only: overflow_procs counts the engine's other events */
	stats.not_counted = snap.overflow_series + snap.overflow_threads;
	if (stats.not_counted)
		warnx_("stat --live: %llu exits not counted: the %s engine's maps were full "
		       "(series %llu, threads %llu)",
		       (unsigned long long)stats.not_counted,
		       snap.engine, (unsigned long long)snap.overflow_series,
		       (unsigned long long)snap.overflow_threads);
	stats.lost_events = snap.lost;
	snprintf(label, sizeof(label), "live (%s engine)", snap.engine);
	a->report.input = label;
	a->report.vcpu = a->cfg.vcpu;
	a->report.src_info = &info;
	a->report.src_stats = &stats;
	if (ks_stat_report(stdout, st, &a->report, &err) < 0)
		die("%s", err.msg);
	ks_stat_free(st);
	ks_engine_snapshot_free(&snap);
	return 0;
}

/* --than and the heatmaps: the engine's observer (cfg.observe) fed by
 * OBS, into LOG (names from GSYMS) and OBS->hm.  Their output files are
 * checked before the input is read. */
static void setup_observers(struct stat_args *a, struct observers *obs, struct ks_slow_log *log,
			    struct ks_guestsyms *gsyms)
{
	const char *inputs[2] = { a->input, NULL };
	struct ks_error err;

	if (a->heatmap_svg)
		cli_output_check(a->heatmap_svg, inputs, 0);
	if (a->heatmap_json)
		cli_output_check(a->heatmap_json, inputs, 0);
	if (a->guest_kallsyms) {
		struct ks_guestsyms_opts go = { .kallsyms = a->guest_kallsyms };

		if (ks_guestsyms_load(gsyms, &go, &err) < 0)
			die("%s", err.msg);
		log->guest_syms = gsyms;
	}
	if (a->than.set) {
		log->than_ns = a->than.ns;
		log->than_text = a->than.text;
		log->json = a->report.format == KS_STAT_JSON;
		obs->log = log;
	}
	if (a->heatmap_svg || a->heatmap_json || a->heatmap_text) {
		obs->hm = ks_heatmap_new();
		if (!obs->hm)
			die("out of memory");
	}
	if (obs->log || obs->hm) {
		a->cfg.observe = observe;
		a->cfg.observe_ctx = obs;
		/* the log wants more than the threshold; the heatmap all */
		a->cfg.observe_min_ns = obs->hm ? 0 : a->than.ns + 1;
	}
}

/* Every record of SRC through ST, and L1 (the nested companion) if any. */
static void count_records(const struct stat_args *a, struct ks_source *src, struct ks_stat *st,
			  struct ks_stat *l1)
{
	static struct ks_record recs[STAT_BATCH];
	struct ks_progress prog;
	struct ks_error err;
	int r;

	cli_progress_init(&prog, "stat", a->quiet, a->than.set);
	while ((r = ks_source_next_batch(src, recs, STAT_BATCH, &err)) > 0) {
		ks_stat_add_batch(st, recs, (size_t)r);
		if (l1)
			ks_stat_add_batch(l1, recs, (size_t)r);
		cli_progress(&prog, src);
	}
	ks_progress_end(&prog);
	if (r < 0 || ks_stat_error(st, &err) < 0 || (l1 && ks_stat_error(l1, &err) < 0))
		die("%s", err.msg);
}

/* The report of ST (with L1 beside it) on stdout, after the notes on what
 * the input could not tell and the slow-exit log's end; then the heatmaps. */
static void print_results(struct stat_args *a, struct ks_source *src, const struct ks_stat *st,
			  const struct ks_stat *l1, const struct observers *obs,
			  struct ks_slow_log *log)
{
	struct ks_error err;

	a->report.companion = l1;
	a->report.companion_key = "l1_handling";
	a->report.companion_title = "L1's handling of reflected L2 exits (kvm_nested_vmexit_inject -> "
				    "L1's next kvm_nested_vmenter, L1's own exits included)";
	if (obs->hm_full)
		die("%s: the heatmap has more than %d rows; ask for fewer (--by, --vcpu, --pid)",
		    a->input, KS_HEATMAP_MAX_SERIES);
	if (empty_answer(st))
		explain_empty(a, st);
	else
		note_dims(a, st);
	if (obs->log)
		ks_slow_log_end(log);
	a->report.src_info = ks_source_info(src);
	a->report.src_stats = ks_source_stats(src);
	if (ks_stat_report(stdout, st, &a->report, &err) < 0)
		die("%s", err.msg);
	if (a->heatmap_text) {
		fputc('\n', stdout);
		if (ks_heatmap_print_text(stdout, obs->hm, st) < 0)
			die("out of memory");
	}
	if (a->heatmap_svg)
		write_heatmap(a->heatmap_svg, a->input, obs->hm, st, false);
	if (a->heatmap_json)
		write_heatmap(a->heatmap_json, a->input, obs->hm, st, true);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args a = { .cfg = KS_STAT_CONFIG_INIT, .vcpu = -1 };
	struct ks_source *src;
	struct ks_error err;
	struct ks_stat *st, *l1;
	struct ks_slow_log log = { .out = stdout };
	struct observers obs = { 0 };
	struct ks_guestsyms gsyms = { 0 };

	a.cfg.views[0] = 0;
	ks_limits_default(&a.limits);
	a.poll_budget = 10;
	parse_args(&a, argc, argv);
	if (a.live)
		return stat_live(&a);
	setup(&a);
	if (a.cfg.event_class && !strcmp(a.cfg.event_class, "halt"))
		return stat_halt(&a);
	setup_observers(&a, &obs, &log, &gsyms);
	if (ks_source_open_opts(&src, a.input,
				&(struct ks_source_opts){ .flags = STAT_OPEN, .limits = &a.limits,
							  .ctx = cli_ctx(), .arch = a.cfg.arch },
				&err) < 0)
		die("%s", err.msg);
	apply_time_window(src, a.input, &a.time);
	st = ks_stat_new_source(&a.cfg, src, &err);
	if (!st)
		die("%s", err.msg);
	log.st = st;
	l1 = nested_companion(&a, src);
	if (!l1)
		ks_stat_select(st, src); /* fewer records to decode; optional */
	count_records(&a, src, st, l1);
	print_results(&a, src, st, l1, &obs, &log);
	ks_heatmap_free(obs.hm);
	ks_guestsyms_free(&gsyms);
	ks_stat_free(l1);
	ks_stat_free(st);
	ks_source_close(src);
	return 0;
}
