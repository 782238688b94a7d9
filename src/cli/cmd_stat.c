/*
 * cmd_stat.c - kvmscope stat: exit, MMIO, I/O port, MSR, hcall and trap
 * statistics of every architecture perf supports.
 *
 * Reads any input (perf.data, trace.dat, ftrace text), runs the stat engine
 * with one view per --by, prints a table, JSON, CSV or perf's own layout.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/stat_report.h"

#define STAT_BATCH 16 /* records per ks_source_next_batch() */

static const char usage_text[] =
	"usage: kvmscope stat [report] [-i FILE] [options]\n"
	"\n"
	"Exit statistics of KVM guests from a perf.data, trace.dat or ftrace text file\n"
	"(type detected from the content).  The default input is perf.data.guest, as\n"
	"written by 'perf kvm stat record'.\n"
	"\n"
	"  -i, --input FILE       input file\n"
	"      --event CLASS      vmexit (default); x86: mmio, ioport, msr; arm64: trap;\n"
	"                         powerpc: hcall\n"
	"      --measure M        handling (default: exit -> entry) or run (entry -> exit)\n"
	"      --arch ARCH        x86, arm64, powerpc, s390, riscv or loongarch (default:\n"
	"                         from the input's header or events)\n"
	"      --by DIMS          rows by reason (default), vcpu, vm, or a comma list such\n"
	"                         as vm,vcpu,reason; repeat for several tables (max 4)\n"
	"      --vcpu N           only vCPU N\n"
	"  -p, --pid PID[,PID]    only these host processes (VMs)\n"
	"  -k, --key KEY          sort by sample (default), time (total), mean_t, max_t,\n"
	"                         min_t, ev_name or p99\n"
	"      --hist             log2 latency histogram per row\n"
	"      --json             JSON (integer nanoseconds)\n"
	"      --csv              CSV\n"
	"      --format FMT       table (default), json, csv, or perf: exactly the layout\n"
	"                         of perf 6.1's 'perf kvm stat report' (on stdout)\n"
	"      --limit NAME=VAL   raise a budget of the run: memory=SIZE (buffered input),\n"
	"                         threads=N (distinct threads), objects=N\n"
	"  -h, --help             this text\n"
	"\n"
	"Times run from the exit (begin event) to the next entry of the same host thread\n"
	"(--measure run: from the entry to the next exit).  --format perf measures what\n"
	"perf measures on the input's architecture.  Every report says which source\n"
	"mapped each host thread to its VM and vCPU.  See kvmscope-stat(1).\n";

struct stat_args {
	const char *input;
	const char *by[KS_STAT_MAX_VIEWS];
	int nby;
	struct ks_stat_config cfg;
	struct ks_stat_report_opts report;
	bool measure_set;
	struct ks_limits limits;
};

static unsigned parse_dims(const char *arg)
{
	char buf[128], *tok, *save = NULL;
	unsigned dims = 0;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "reason") || !strcmp(tok, "key") || !strcmp(tok, "event"))
			dims |= KS_DIM_KEY;
		else if (!strcmp(tok, "vcpu"))
			dims |= KS_DIM_VCPU;
		else if (!strcmp(tok, "vm") || !strcmp(tok, "pid"))
			dims |= KS_DIM_VM;
		else
			usage_error("stat", "--by takes reason, vcpu and vm, not '%s'", tok);
	}
	if (!dims)
		usage_error("stat", "--by needs at least one of reason, vcpu, vm");
	return dims;
}

static long parse_int(const char *opt, const char *arg, long min)
{
	char *end;
	long v = strtol(arg, &end, 0);

	if (!*arg || *end || v < min)
		usage_error("stat", "%s needs a number >= %ld, not '%s'", opt, min, arg);
	return v;
}

static void parse_pids(struct stat_args *a, const char *arg)
{
	char buf[1024], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->cfg.npids == KS_MAX_PIDS)
			usage_error("stat", "at most %d pids", KS_MAX_PIDS);
		a->cfg.pids[a->cfg.npids++] = (int32_t)parse_int("--pid", tok, 0);
	}
	a->report.pid_arg = arg;
}

static enum ks_stat_format parse_format(const char *arg)
{
	if (!strcmp(arg, "table"))
		return KS_STAT_TABLE;
	if (!strcmp(arg, "json"))
		return KS_STAT_JSON;
	if (!strcmp(arg, "csv"))
		return KS_STAT_CSV;
	if (!strcmp(arg, "perf"))
		return KS_STAT_PERF;
	usage_error("stat", "--format takes table, json, csv or perf, not '%s'", arg);
}

static enum ks_measure parse_measure(const char *arg)
{
	if (!strcmp(arg, "handling"))
		return KS_MEASURE_HANDLING;
	if (!strcmp(arg, "run"))
		return KS_MEASURE_RUN;
	usage_error("stat", "--measure takes handling or run, not '%s'", arg);
}

static void parse_args(struct stat_args *a, int argc, char **argv)
{
	enum { O_EVENT = 256, O_BY, O_VCPU, O_HIST, O_JSON, O_CSV, O_FORMAT, O_MEASURE, O_ARCH, O_LIMIT };
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "event", required_argument, NULL, O_EVENT },
		{ "by", required_argument, NULL, O_BY },
		{ "vcpu", required_argument, NULL, O_VCPU },
		{ "pid", required_argument, NULL, 'p' },
		{ "key", required_argument, NULL, 'k' },
		{ "hist", no_argument, NULL, O_HIST },
		{ "json", no_argument, NULL, O_JSON },
		{ "csv", no_argument, NULL, O_CSV },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "measure", required_argument, NULL, O_MEASURE },
		{ "arch", required_argument, NULL, O_ARCH },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "i:p:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case O_EVENT: a->cfg.event_class = optarg; break;
		case O_BY:
			if (a->nby == KS_STAT_MAX_VIEWS)
				usage_error("stat", "at most %d --by tables", KS_STAT_MAX_VIEWS);
			a->by[a->nby++] = optarg;
			break;
		case O_VCPU: a->cfg.vcpu = (int)parse_int("--vcpu", optarg, 0); break;
		case 'p': parse_pids(a, optarg); break;
		case 'k': a->report.sort_key = optarg; break;
		case O_HIST: a->report.hist = true; break;
		case O_JSON: a->report.format = KS_STAT_JSON; break;
		case O_CSV: a->report.format = KS_STAT_CSV; break;
		case O_FORMAT: a->report.format = parse_format(optarg); break;
		case O_MEASURE: a->cfg.measure = parse_measure(optarg); a->measure_set = true; break;
		case O_ARCH: a->cfg.arch = optarg; break;
		case O_LIMIT: parse_limit("stat", &a->limits, optarg); break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: usage_error("stat", "unknown option");
		}
	}
	if (optind < argc && !strcmp(argv[optind], "report"))
		optind++;
	if (optind < argc && !a->input)
		a->input = argv[optind++];
	if (optind < argc)
		usage_error("stat", "unexpected argument '%s'", argv[optind]);
}

static void setup(struct stat_args *a)
{
	int i;

	if (!a->input)
		a->input = "perf.data.guest";
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

int cmd_stat(int argc, char **argv)
{
	struct stat_args a = { .cfg = KS_STAT_CONFIG_INIT };
	struct ks_source *src;
	static struct ks_record recs[STAT_BATCH];
	struct ks_error err;
	struct ks_stat *st;
	int r;

	a.cfg.views[0] = 0;
	ks_limits_default(&a.limits);
	parse_args(&a, argc, argv);
	setup(&a);
	if (ks_source_open_limits(&src, a.input, KS_OPEN_NO_SYMBOLS, &a.limits, &err) < 0)
		die("%s", err.msg);
	st = ks_stat_new_source(&a.cfg, src, &err);
	if (!st)
		die("%s", err.msg);
	ks_stat_select(st, src); /* fewer records to decode; optional */
	while ((r = ks_source_next_batch(src, recs, STAT_BATCH, &err)) > 0)
		ks_stat_add_batch(st, recs, (size_t)r);
	if (r < 0 || ks_stat_error(st, &err) < 0)
		die("%s", err.msg);
	a.report.src_info = ks_source_info(src);
	a.report.src_stats = ks_source_stats(src);
	if (ks_stat_report(stdout, st, &a.report, &err) < 0)
		die("%s", err.msg);
	ks_stat_free(st);
	ks_source_close(src);
	return 0;
}
