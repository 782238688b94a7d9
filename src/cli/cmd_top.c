/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top.c - kvmscope top: live KVM activity per VM, refreshed every -d
 * seconds, in three views:
 *   exits        exits per VM -> vCPU -> reason with time, p99 latency and
 *                the total since the start or the r key (top.h), live
 *                from tracefs or replayed from a file;
 *   tracepoints  every event counted per VM, kvm_exit(REASON) children
 *                (tpcount.h; kvm_stat's tracepoint view);
 *   kvmstats     KVM's own statistics per VM and vCPU from QEMU's QMP
 *                query-stats, directly or through libvirt, or debugfs
 *                when readable (kvmstats.h, read by kvmstats_collect.h);
 *   halt         halt polling per VM and vCPU from the same statistics
 *                (kvmstats_halt.h): no tracing needed.
 *
 * On a terminal the screen is ncurses (alternate screen, redrawn on
 * resize; a line never wraps: columns are dropped by priority as the
 * width narrows); --batch prints plain text per interval, --csv CSV.
 * Every view is first built as a list of display rows (struct drow) that
 * the screen, the text and the CSV printers share.
 */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/engine.h"
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/kvmstats_halt.h"
#include "kvmscope/limits.h"
#include "kvmscope/live.h"
#include "kvmscope/slow_log.h"
#include "kvmscope/source.h"
#include "kvmscope/top.h"
#include "kvmscope/tpcount.h"
#include "options.h"
#include "output/csv.h"
#include "util/procfs.h"
#include "util/text.h"

#define MAX_EVENTS 64
#define MAX_PIDS 256
#define MAX_QMP 64
#define SLOW_KEPT 16 /* --than lines kept for the screen */
#define MAX_COLS 5

enum view { VIEW_EXITS, VIEW_TRACEPOINTS, VIEW_KVMSTATS, VIEW_HALT, NR_VIEWS };
static const char *const view_names[] = { "exits", "tracepoints", "kvmstats", "halt", NULL };
/* the views of KVM's statistics: read from the VMs, not traced */
#define STATS_VIEW(v) ((v) == VIEW_KVMSTATS || (v) == VIEW_HALT)
static const char *const sort_columns[] = { "exits", "time", "p99", "name", NULL };

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

struct top_args {
	const char *input;
	bool fast, batch, csv, json, vcpus, once, skip_zero, debugfs;
	double delay;
	long long iterations;
	int sort, view;
	const char *events[MAX_EVENTS];
	int nevents;
	int32_t pids[MAX_PIDS];
	int npids;
	struct ks_limits limits;
	struct time_window time;
	const char *qmp[MAX_QMP];
	int nqmp;
	const char *libvirt;  /* --libvirt's URI; NULL: not given */
	const char *fields, *guest;
	struct duration_arg than;  /* --than: the slow-exit log */
	int engine;                /* --engine: enum ks_engine_kind */
};

/* One line of a view: a label (indented by depth) and its cells. */
struct drow {
	int depth;
	int32_t vm;
	char label[96];
	char cell[MAX_COLS][24];
};

struct col {
	const char *title;
	int width;     /* cell width (right-aligned) in batch text */
	int prio;      /* lower = kept longer as the screen narrows */
	int swidth;    /* on the screen, narrower */
};

struct view_cols {
	const char *label_title;
	int label_width;   /* batch text */
	int ncols;
	struct col cols[MAX_COLS];
};

static const struct view_cols view_cols[NR_VIEWS] = {
	/* TOTAL (since the start or r) is kept the longest after EXITS: it is
	 * kvm_stat's first column and the one figure not of the interval
	 * (EXITS/s is EXITS over the interval's length in the title) */
	[VIEW_EXITS] = { "VM / vCPU / REASON", 44, 5,
			 { { "EXITS", 10, 0, 9 }, { "EXITS/s", 12, 3, 10 }, { "TIME%", 8, 2, 7 },
			   { "P99(us)", 12, 4, 10 }, { "TOTAL", 12, 1, 10 } } },
	[VIEW_TRACEPOINTS] = { "VM / EVENT", 44, 3,
			       { { "COUNT", 12, 0, 10 }, { "COUNT/s", 12, 1, 10 },
				 { "TOTAL", 14, 2, 12 } } },
	[VIEW_KVMSTATS] = { "VM / STATISTIC / vCPU", 44, 2,
			    { { "VALUE", 16, 0, 14 }, { "DELTA/s", 12, 1, 11 } } },
	[VIEW_HALT] = { "VM / vCPU", 44, 5,
			{ { "HALTS/s", 10, 0, 9 }, { "POLLED%", 8, 1, 7 }, { "POLLCPU%", 9, 2, 8 },
			  { "WASTED%", 8, 3, 7 }, { "HALTS", 12, 4, 10 } } },
};

struct top_state {
	struct top_args *a;
	struct ks_top *top;
	struct ks_tpcount *tp;
	struct ks_host *host;      /* threads -> VM, vCPU: one model for the run */
	struct ks_source *src;
	struct ks_live *live_h;
	/* live: the engine (engine.h) and its cumulative snapshots, the
	 * last one read (snap[cur]) and the one before; NULL: records */
	struct ks_engine *eng;
	struct ks_engine_snapshot snap[2], delta;
	int cur;
	char live_what[40];        /* "live (bpf engine)" */
	bool live, screen, quit, paused, children, need_draw, tracing;
	long interval;
	uint64_t end_ns;           /* trace time of the last closed interval's end */
	double last_secs;          /* wall length of the last interval (kvmstats) */
	double last_close;
	regex_t re;
	bool have_re;
	char guest[64];
	int32_t pid_filter;
	char status[160];
	int scroll;
	bool help;
	struct drow *rows;
	size_t nrows, cap;
	struct ks_kvmcol *col;     /* the VMs of the statistics views */
	char events_note[80];
	/* --than: written as they come, or on the screen the last SLOW_KEPT */
	struct ks_slow_log slow;
	char slow_lines[SLOW_KEPT][200];
	unsigned nslow;            /* lines kept, at most SLOW_KEPT */
	bool slow_printed;         /* batch: lines since the last table */
};

static bool screen_on;

/* An exit slower than --than (ks_top_observe): printed (batch, JSON
 * Lines), or kept for the screen's bottom lines. */
static void slow_exit(void *ctx, const struct ks_stat *st, const struct ks_stat_occurrence *occ)
{
	struct top_state *s = ctx;
	FILE *f;

	s->slow.st = st;
	if (!s->screen) {
		ks_slow_log_add(&s->slow, occ);
		s->slow_printed = !s->a->json;
		return;
	}
	if (s->nslow == SLOW_KEPT) {
		memmove(s->slow_lines[0], s->slow_lines[1], sizeof(s->slow_lines[0]) * (SLOW_KEPT - 1));
		s->nslow--;
	}
	f = fmemopen(s->slow_lines[s->nslow], sizeof(s->slow_lines[0]), "w");
	if (!f)
		return;
	s->slow.out = f;
	s->slow.no_heading = true;
	ks_slow_log_add(&s->slow, occ);
	fclose(f);
	s->slow_lines[s->nslow][strcspn(s->slow_lines[s->nslow], "\n")] = '\0';
	if (s->slow_lines[s->nslow][0])
		s->nslow++;
}

static void screen_end(void)
{
	if (screen_on) {
		endwin();
		screen_on = false;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* options */

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

static void parse_args(int argc, char **argv, struct top_args *a)
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
		  .choices = view_names, .excl = "view",
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
		OPT_CHOICE('s', "sort", &a->sort, "COL", "exits (default), time, p99 or name", sort_columns),
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
	if (a->once) {
		a->batch = !a->csv && !a->json;
		a->iterations = 1;
	}
	if (a->than.set && a->csv)
		usage_error("top", "--than lists exits between the tables or JSON, not with --csv");
	if (a->than.set && STATS_VIEW(a->view))
		usage_error("top", "--than needs traced exits, not the %s view", view_names[a->view]);
	if ((a->nqmp || a->libvirt || a->debugfs) && !option_given(opts, "view") &&
	    !option_given(opts, "tracepoints") && !option_given(opts, "halt"))
		a->view = VIEW_KVMSTATS;
}

/* ------------------------------------------------------------------ */
/* VM names: QEMU's -name (live), else what the input says */

static void qemu_name(int32_t pid, char *out, size_t len)
{
	char buf[64];

	if (ks_qemu_name(pid, out, len) || pid <= 0)
		return;
	if (ks_read_proc(pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(out, len, "%.63s", buf);
	}
}

static void vm_name(const struct top_state *s, int32_t vm, const char *known, char *out,
		    size_t len)
{
	out[0] = 0;
	if (s->live)
		qemu_name(vm, out, len);
	if (!out[0] && known)
		snprintf(out, len, "%s", known);
}

static void vm_label(const struct top_state *s, int32_t vm, const char *known, char *out,
		     size_t len)
{
	char name[64], safe[128];

	vm_name(s, vm, known, name, sizeof(name));
	/* the one display name (host.h), safe for a terminal */
	ks_vm_label(out, len, vm, ks_term_escape(safe, sizeof(safe), name));
}

/* The g and p filters. */
static bool vm_wanted(const struct top_state *s, int32_t vm, const char *known)
{
	char name[64];

	if (s->pid_filter > 0 && vm != s->pid_filter)
		return false;
	if (!s->guest[0])
		return true;
	vm_name(s, vm, known, name, sizeof(name));
	return !strcmp(name, s->guest);
}

static bool name_wanted(const struct top_state *s, const char *name)
{
	return !s->have_re || regexec(&s->re, name, 0, NULL, 0) == 0;
}

/* ------------------------------------------------------------------ */
/* building the rows of a view */

static struct drow *add_row(struct top_state *s, int depth, int32_t vm, const char *label)
{
	struct drow *r;

	if (s->nrows == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		struct drow *n = realloc(s->rows, ncap * sizeof(*n));

		if (!n)
			die("out of memory");
		s->rows = n;
		s->cap = ncap;
	}
	r = &s->rows[s->nrows++];
	memset(r, 0, sizeof(*r));
	r->depth = depth;
	r->vm = vm;
	/* names from peers and files (QMP, libvirt, /proc, the input):
	 * no terminal control sequence passes */
	ks_term_escape(r->label, sizeof(r->label), label);
	return r;
}

static void exit_cells(struct drow *d, const struct ks_top_row *r)
{
	snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)r->count);
	snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", r->rate);
	snprintf(d->cell[2], sizeof(d->cell[2]), "%.2f", r->time_pct);
	snprintf(d->cell[3], sizeof(d->cell[3]), "%.2f", (double)r->p99_ns / 1000.0);
	snprintf(d->cell[4], sizeof(d->cell[4]), "%llu", (unsigned long long)r->total);
}

static struct ks_top_row *sorted_copy(const struct top_state *s, enum ks_top_level lv, size_t *n)
{
	const struct ks_top_row *rows;
	struct ks_top_row *c;

	*n = ks_top_rows(s->top, lv, &rows);
	c = calloc(*n + 1, sizeof(*c));
	if (!c)
		die("out of memory");
	if (*n)
		memcpy(c, rows, *n * sizeof(*c));
	ks_top_sort(c, *n, sort_columns[s->a->sort]);
	return c;
}

/* Reason rows of VM (and VCPU >= 0) at DEPTH. */
static void exit_reasons(struct top_state *s, const struct ks_top_row *rs, size_t n, int32_t vm,
			 int32_t vcpu, int depth)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (rs[j].vm != vm || rs[j].vcpu != vcpu || !name_wanted(s, rs[j].name))
			continue;
		if (s->a->skip_zero && !rs[j].count)
			continue;
		exit_cells(add_row(s, depth, vm, rs[j].name), &rs[j]);
	}
}

static void build_exits(struct top_state *s)
{
	size_t nvm, nvc, nrs, nvr, i, j;
	struct ks_top_row *vms, *vcs, *rss, *vrs;
	char label[96];

	if (!s->top)
		return;
	vms = sorted_copy(s, KS_TOP_VM, &nvm);
	vcs = sorted_copy(s, KS_TOP_VCPU, &nvc);
	rss = sorted_copy(s, KS_TOP_REASON, &nrs);
	vrs = sorted_copy(s, KS_TOP_VCPU_REASON, &nvr);

	for (i = 0; i < nvm; i++) {
		if (!vm_wanted(s, vms[i].vm, vms[i].name) || (s->a->skip_zero && !vms[i].count))
			continue;
		vm_label(s, vms[i].vm, vms[i].name, label, sizeof(label));
		exit_cells(add_row(s, 0, vms[i].vm, label), &vms[i]);
		if (!s->a->vcpus) {
			if (s->children)
				exit_reasons(s, rss, nrs, vms[i].vm, -1, 1);
			continue;
		}
		for (j = 0; j < nvc; j++) {
			if (vcs[j].vm != vms[i].vm || (s->a->skip_zero && !vcs[j].count))
				continue;
			snprintf(label, sizeof(label), "vcpu %d", vcs[j].vcpu);
			exit_cells(add_row(s, 1, vms[i].vm, label), &vcs[j]);
			if (s->children)
				exit_reasons(s, vrs, nvr, vms[i].vm, vcs[j].vcpu, 2);
		}
	}
	free(vms);
	free(vcs);
	free(rss);
	free(vrs);
}

struct tp_sorted {
	const struct ks_tpcount_row *r;
	uint32_t index;
};

static int tp_cmp(const void *a, const void *b)
{
	const struct tp_sorted *x = a, *y = b;

	if (x->r->vm != y->r->vm)
		return x->r->vm < y->r->vm ? -1 : 1;
	if (x->r->count != y->r->count)
		return x->r->count > y->r->count ? -1 : 1;
	if (x->r->total != y->r->total)
		return x->r->total > y->r->total ? -1 : 1;
	return strcmp(x->r->name, y->r->name);
}

static void tp_cells(struct drow *d, uint64_t count, uint64_t total, double secs)
{
	snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)count);
	snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", secs > 0 ? (double)count / secs : 0.0);
	snprintf(d->cell[2], sizeof(d->cell[2]), "%llu", (unsigned long long)total);
}

static void build_tracepoints(struct top_state *s)
{
	const struct ks_tpcount_row *rows;
	size_t n, i, j, k;
	double secs;
	struct tp_sorted *v;
	const char *known;
	char label[96];

	if (!s->tp)
		return;
	n = ks_tpcount_rows(s->tp, &rows);
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		die("out of memory");
	for (i = 0; i < n; i++)
		v[i] = (struct tp_sorted){ &rows[i], (uint32_t)i };
	qsort(v, n, sizeof(*v), tp_cmp);
	for (i = 0; i < n; i = j) {
		uint64_t count = 0, total = 0;
		struct drow *vmrow;

		for (j = i; j < n && v[j].r->vm == v[i].r->vm; j++)
			if (!v[j].r->child && name_wanted(s, v[j].r->name)) {
				count += v[j].r->count;
				total += v[j].r->total;
			}
		known = ks_host_vm_name(s->host, v[i].r->vm);
		if (!vm_wanted(s, v[i].r->vm, known) || (s->a->skip_zero && !count))
			continue;
		vm_label(s, v[i].r->vm, known, label, sizeof(label));
		vmrow = add_row(s, 0, v[i].r->vm, label);
		tp_cells(vmrow, count, total, secs);
		for (k = i; k < j; k++) {
			size_t c;

			if (v[k].r->child || !name_wanted(s, v[k].r->name) ||
			    (s->a->skip_zero && !v[k].r->count))
				continue;
			tp_cells(add_row(s, 1, v[k].r->vm, v[k].r->name), v[k].r->count, v[k].r->total, secs);
			for (c = i; s->children && c < j; c++)
				if (v[c].r->child && v[c].r->parent == v[k].index &&
				    !(s->a->skip_zero && !v[c].r->count))
					tp_cells(add_row(s, 2, v[c].r->vm, v[c].r->name), v[c].r->count,
						 v[c].r->total, secs);
		}
	}
	free(v);
}

/* The VM row of a statistics view, its error row below when it failed;
 * NULL when the filters hide it or it failed. */
static struct drow *stats_vm_row(struct top_state *s, const struct ks_kvmcol_vm *vm)
{
	char label[96];
	struct drow *d;

	if (vm->duplicate || !vm_wanted(s, vm->pid, vm->name[0] ? vm->name : NULL))
		return NULL;
	if (vm->pid > 0 || !vm->name[0])
		vm_label(s, vm->pid, vm->name[0] ? vm->name : NULL, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "%.95s", vm->name); /* QEMU not found */
	d = add_row(s, 0, vm->pid, label);
	if (vm->failed) {
		if (s->a->view == VIEW_KVMSTATS)
			snprintf(d->cell[0], sizeof(d->cell[0]), "(error)");
		add_row(s, 1, vm->pid, vm->error);
		return NULL;
	}
	return d;
}

/* The VMs of the statistics views (none before the first reading). */
static struct ks_kvmcol_vm *stats_vms(const struct top_state *s, size_t *n)
{
	*n = 0;
	return s->col ? ks_kvmcol_vms(s->col, n) : NULL;
}

static bool stat_wanted(void *ctx, const char *name)
{
	return name_wanted(ctx, name);
}

/* How many VMs the statistics views show (a VM read twice counts once). */
static size_t stats_vms_shown(const struct top_state *s)
{
	size_t n, i, shown = 0;
	const struct ks_kvmcol_vm *vms = stats_vms(s, &n);

	for (i = 0; i < n; i++)
		shown += !vms[i].duplicate;
	return shown;
}

/* kvmstats: value since the base (r), and the change per second. */
static void build_kvmstats(struct top_state *s)
{
	size_t i, j, n, nvms;
	struct ks_kvmcol_vm *vms = stats_vms(s, &nvms);

	for (i = 0; i < nvms; i++) {
		struct ks_kstat_row *rows;
		struct drow *d = stats_vm_row(s, &vms[i]);

		if (!d)
			continue;
		snprintf(d->cell[0], sizeof(d->cell[0]), "%s", vms[i].now.source);
		if (ks_kvmcol_rows(&vms[i], stat_wanted, s, s->a->skip_zero, s->a->vcpus, &rows, &n) < 0)
			die("out of memory");
		for (j = 0; j < n; j++) {
			const struct ks_kstat_row *r = &rows[j];
			char label[32];

			if (r->depth == 2)
				snprintf(label, sizeof(label), "vcpu %d", r->vcpu);
			d = add_row(s, r->depth, vms[i].pid, r->depth == 2 ? label : r->name);
			if (r->is_bool)
				snprintf(d->cell[0], sizeof(d->cell[0]), "%s", r->value ? "true" : "false");
			else
				snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)r->value);
			if (r->have_rate)
				snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", r->rate);
		}
		free(rows);
	}
}

/* halt: the interval's rates and the halts since the base (r). */
static void halt_cells(struct drow *d, const struct ks_khalt *now, const struct ks_khalt *prev,
		       const struct ks_khalt *base, double secs)
{
	struct ks_khalt_rates r, t;

	ks_khalt_interval(now, base, 0, &t);
	snprintf(d->cell[4], sizeof(d->cell[4]), "%llu", (unsigned long long)t.halts);
	if (!prev)
		return; /* the first reading: no interval yet */
	ks_khalt_interval(now, prev, secs, &r);
	snprintf(d->cell[0], sizeof(d->cell[0]), "%.1f", r.halts_per_s);
	snprintf(d->cell[1], sizeof(d->cell[1]), r.polled_pct < 0 ? "-" : "%.1f", r.polled_pct);
	snprintf(d->cell[2], sizeof(d->cell[2]), r.have_cpu ? "%.2f" : "-", r.poll_cpu_pct);
	snprintf(d->cell[3], sizeof(d->cell[3]), r.have_cpu ? "%.2f" : "-", r.wasted_cpu_pct);
}

static void build_halt(struct top_state *s)
{
	size_t i, j, nvms;
	struct ks_kvmcol_vm *vms = stats_vms(s, &nvms);

	for (i = 0; i < nvms; i++) {
		struct ks_kvmcol_vm *vm = &vms[i];
		struct ks_khalt *now = NULL, *prev = NULL, *base = NULL;
		size_t nn = 0, np = 0, nb = 0;
		double secs = vm->t_now - vm->t_prev;
		struct drow *d = stats_vm_row(s, vm);

		if (!d)
			continue;
		if (ks_khalt_of(&vm->now, &now, &nn) < 0 ||
		    (vm->have_prev && ks_khalt_of(&vm->prev, &prev, &np) < 0) ||
		    (vm->have_base && ks_khalt_of(&vm->base, &base, &nb) < 0))
			die("out of memory");
		if (!nn) {
			add_row(s, 1, vm->pid, "(no halt statistics)");
		} else {
			halt_cells(d, &now[0], ks_khalt_find(prev, np, -1), ks_khalt_find(base, nb, -1), secs);
			for (j = 1; s->a->vcpus && j < nn; j++) {
				char label[32];

				snprintf(label, sizeof(label), "vcpu %d", now[j].vcpu);
				halt_cells(add_row(s, 1, vm->pid, label), &now[j],
					   ks_khalt_find(prev, np, now[j].vcpu),
					   ks_khalt_find(base, nb, now[j].vcpu), secs);
			}
		}
		free(now);
		free(prev);
		free(base);
	}
}

static void build_rows(struct top_state *s)
{
	s->nrows = 0;
	switch (s->a->view) {
	case VIEW_EXITS: build_exits(s); break;
	case VIEW_TRACEPOINTS: build_tracepoints(s); break;
	case VIEW_KVMSTATS: build_kvmstats(s); break;
	case VIEW_HALT: build_halt(s); break;
	}
}

static const char *empty_text(const struct top_state *s)
{
	switch (s->a->view) {
	case VIEW_EXITS:
		return s->tracing ? "(no KVM exits in this interval)" :
				    "(no trace events: started with a KVM statistics view)";
	case VIEW_TRACEPOINTS:
		return s->tracing ? "(no events in this interval)" :
				    "(no trace events: started with a KVM statistics view)";
	default:
		return "(no VM with KVM statistics: give --qmp SOCKET or --libvirt, or mount debugfs)";
	}
}

/* ------------------------------------------------------------------ */
/* the title */

/* ", overflow N (maps full), " when the engine could not count
 * everything in the interval, else ""; static storage. */
static const char *overflow_text(const struct top_state *s)
{
	static char buf[64];
	uint64_t n;

	if (!s->eng)
		return "";
	n = s->delta.overflow_series + s->delta.overflow_threads + s->delta.overflow_procs;
	if (!n)
		return "";
	snprintf(buf, sizeof(buf), "overflow %llu (maps full), ", (unsigned long long)n);
	return buf;
}

static void title(const struct top_state *s, char *buf, size_t len)
{
	double secs;
	uint64_t recs;

	if (STATS_VIEW(s->a->view) || !s->top) {
		size_t nvms = stats_vms_shown(s);

		snprintf(buf, len, "kvmscope top - %s, interval %ld: %.2f s, %zu VMs [sort: %s]",
			 view_names[s->a->view], s->interval, s->last_secs, nvms,
			 s->a->view == VIEW_HALT ? "found" : "delta/s, value");
		return;
	}
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	recs = ks_top_interval_records(s->top);
	snprintf(buf, len, "kvmscope top - %s, interval %ld: %.2f s, %llu events (%.0f/s), lost %llu, "
		 "%s%s%s [sort: %s]",
		 s->live ? s->live_what : ks_source_path(s->src), s->interval, secs,
		 (unsigned long long)recs, secs > 0 ? (double)recs / secs : 0.0,
		 (unsigned long long)ks_top_interval_lost(s->top), overflow_text(s),
		 s->a->view == VIEW_EXITS ? "exits by " : "events per VM",
		 s->a->view == VIEW_EXITS ? ks_top_arch(s->top) : "",
		 s->a->view == VIEW_EXITS ? sort_columns[s->a->sort] : "vm, count");
}

/* The screen's title: the same facts, most important first, short. */
static void screen_title(const struct top_state *s, char *buf, size_t len)
{
	const char *what = s->live ? s->live_what : ks_source_path(s->src);
	const char *slash = s->live ? NULL : strrchr(what, '/');
	double secs;
	uint64_t recs;
	int n;

	if (slash && slash[1])
		what = slash + 1;
	n = snprintf(buf, len, "kvmscope top - %s", what);
	if (s->interval == 0) {
		snprintf(buf + n, len - (size_t)n, ": first interval in %.2f s", s->a->delay);
		return;
	}
	if (STATS_VIEW(s->a->view) || !s->top) {
		size_t nvms = stats_vms_shown(s);

		snprintf(buf + n, len - (size_t)n, " | %s | #%ld %.2fs | %zu VMs", view_names[s->a->view],
			 s->interval, s->last_secs, nvms);
		return;
	}
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	recs = ks_top_interval_records(s->top);
	snprintf(buf + n, len - (size_t)n, " | %s | #%ld %.2fs | %.0f ev/s | lost %llu | %s%s%s",
		 s->a->view == VIEW_EXITS ? "exits" : "tracepoints", s->interval, secs,
		 secs > 0 ? (double)recs / secs : 0.0,
		 (unsigned long long)ks_top_interval_lost(s->top), overflow_text(s),
		 s->a->view == VIEW_EXITS ? ks_top_arch(s->top) : "",
		 s->a->view == VIEW_EXITS ? "" : "by VM");
	if (s->a->view == VIEW_EXITS)
		snprintf(buf + strlen(buf), len - strlen(buf), " | sort %s", sort_columns[s->a->sort]);
}

/* ------------------------------------------------------------------ */

/* A column's title as a CSV / JSON field name: lower case, '/' as '_'
 * ("EXITS/s" -> "exits_s"), into BUF. */
static const char *field_name(const char *title, char *buf, size_t len)
{
	snprintf(buf, len, "%s", title);
	for (size_t k = 0; buf[k]; k++)
		buf[k] = buf[k] == '/' ? '_' : (char)(buf[k] | 0x20);
	return buf;
}

/* batch text and CSV */

static void print_text(struct top_state *s)
{
	const struct view_cols *vc = &view_cols[s->a->view];
	char t[512];
	size_t i;
	int c;

	build_rows(s);
	title(s, t, sizeof(t));
	if (s->slow_printed)
		putchar('\n');
	s->slow_printed = false;
	printf("%s\n", t);
	printf("%-*s", vc->label_width, vc->label_title);
	for (c = 0; c < vc->ncols; c++)
		printf(" %*s", vc->cols[c].width, vc->cols[c].title);
	putchar('\n');
	if (!s->nrows)
		printf("%s\n", empty_text(s));
	for (i = 0; i < s->nrows; i++) {
		char label[128];

		snprintf(label, sizeof(label), "%*s%s", s->rows[i].depth * 2, "", s->rows[i].label);
		for (c = 0; c < vc->ncols && !s->rows[i].cell[c][0]; c++)
			;
		if (c == vc->ncols) { /* a message (a VM's error): whole */
			printf("%s\n", label);
			continue;
		}
		printf("%-*.*s", vc->label_width, vc->label_width, label);
		for (c = 0; c < vc->ncols; c++)
			printf(" %*s", vc->cols[c].width, s->rows[i].cell[c]);
		putchar('\n');
	}
	putchar('\n');
	fflush(stdout);
}

/* The name the VM row of VM has ("" if none): every row level shows it. */
static const char *vm_row_name(const struct top_state *s, int32_t vm)
{
	const struct ks_top_row *rows;
	size_t n = ks_top_rows(s->top, KS_TOP_VM, &rows), i;

	for (i = 0; i < n; i++)
		if (rows[i].vm == vm)
			return rows[i].name;
	return "";
}

static void csv_exit_rows(struct top_state *s, enum ks_top_level lv, const char *level)
{
	size_t n, i;
	struct ks_top_row *rows = sorted_copy(s, lv, &n);
	double end = (double)(s->end_ns - ks_top_first_ts(s->top)) / 1e9;
	char label[128], safe[256];

	for (i = 0; i < n; i++) {
		const struct ks_top_row *r = &rows[i];
		bool reason = lv == KS_TOP_REASON || lv == KS_TOP_VCPU_REASON;

		const char *known = reason ? vm_row_name(s, r->vm) : r->name;

		if (!vm_wanted(s, r->vm, known) || (reason && !name_wanted(s, r->name)))
			continue;
		printf("%ld,%.6f,%s,%d,", s->interval, end, level, r->vm);
		vm_label(s, r->vm, known, label, sizeof(label));
		ks_csv_field(stdout, label);
		printf(",%d,", r->vcpu);
		ks_csv_field(stdout, reason ? ks_term_escape(safe, sizeof(safe), r->name) : "");
		printf(",%llu,%.3f,%.4f,%llu,%llu\n", (unsigned long long)r->count, r->rate, r->time_pct,
		       (unsigned long long)r->p99_ns, (unsigned long long)r->total);
	}
	free(rows);
}

static void print_csv(struct top_state *s)
{
	const struct view_cols *vc = &view_cols[s->a->view];
	size_t i;
	int c;

	if (s->a->view == VIEW_EXITS) {
		if (s->interval == 1)
			printf("interval,end_s,level,vm,vm_name,vcpu,reason,exits,exits_per_s,time_pct,p99_ns,"
			       "total\n");
		csv_exit_rows(s, KS_TOP_VM, "vm");
		csv_exit_rows(s, KS_TOP_VCPU, "vcpu");
		csv_exit_rows(s, KS_TOP_REASON, "reason");
		csv_exit_rows(s, KS_TOP_VCPU_REASON, "vcpu_reason");
		fflush(stdout);
		return;
	}
	/* the other views: their rows; depth 0 = VM, the label path joins */
	if (s->interval == 1) {
		printf("interval,vm,depth,name");
		for (c = 0; c < vc->ncols; c++) {
			char low[24];

			printf(",%s", field_name(vc->cols[c].title, low, sizeof(low)));
		}
		putchar('\n');
	}
	build_rows(s);
	for (i = 0; i < s->nrows; i++) {
		printf("%ld,%d,%d,", s->interval, s->rows[i].vm, s->rows[i].depth);
		ks_csv_field(stdout, s->rows[i].label);
		for (c = 0; c < vc->ncols; c++)
			printf(",%s", s->rows[i].cell[c]);
		putchar('\n');
	}
	fflush(stdout);
}

/* JSON: the CSV's rows as objects, one document per interval and line,
 * with the host model's "threads" (the shape of every command's). */
static void json_vm(struct ks_json *j, const struct top_state *s, int32_t vm)
{
	char name[64];

	vm_name(s, vm, s->host ? ks_host_vm_name(s->host, vm) : NULL, name, sizeof(name));
	ks_json_kv_i64(j, "vm", vm);
	ks_json_key(j, "vm_name");
	if (name[0])
		ks_json_string(j, name);
	else
		ks_json_null(j);
}

static void json_exit_rows(struct ks_json *j, struct top_state *s, enum ks_top_level lv,
			   const char *level)
{
	size_t n, i;
	struct ks_top_row *rows = sorted_copy(s, lv, &n);

	for (i = 0; i < n; i++) {
		const struct ks_top_row *r = &rows[i];
		bool reason = lv == KS_TOP_REASON || lv == KS_TOP_VCPU_REASON;

		if (!vm_wanted(s, r->vm, r->name) || (reason && !name_wanted(s, r->name)))
			continue;
		ks_json_begin_object(j);
		ks_json_kv_string(j, "level", level);
		json_vm(j, s, r->vm);
		ks_json_kv_i64(j, "vcpu", r->vcpu);
		ks_json_key(j, "reason");
		if (reason)
			ks_json_string(j, r->name);
		else
			ks_json_null(j);
		ks_json_kv_u64(j, "exits", r->count);
		ks_json_kv_double(j, "exits_per_s", r->rate);
		ks_json_kv_double(j, "time_pct", r->time_pct);
		ks_json_kv_u64(j, "time_ns", r->time_ns);
		ks_json_kv_u64(j, "p99_ns", r->p99_ns);
		ks_json_kv_u64(j, "total", r->total);
		ks_json_end_object(j);
	}
	free(rows);
}

/* A cell of the other views: a number, true/false, or null when empty. */
static void json_cell(struct ks_json *j, const char *key, const char *cell)
{
	char *end;
	double v = strtod(cell, &end);

	ks_json_key(j, key);
	if (!strcmp(cell, "true") || !strcmp(cell, "false"))
		ks_json_bool(j, cell[0] == 't');
	else if (end != cell && !*end)
		ks_json_double(j, v);
	else
		ks_json_null(j);
}

static void print_json(struct top_state *s)
{
	const struct view_cols *vc = &view_cols[s->a->view];
	struct ks_json j;
	size_t i;
	int c;

	ks_json_init(&j, stdout, false);
	ks_json_begin_object(&j);
	ks_json_kv_i64(&j, "interval", s->interval);
	ks_json_kv_string(&j, "view", view_names[s->a->view]);
	ks_json_key(&j, "input");
	if (s->live)
		ks_json_null(&j);
	else
		ks_json_string(&j, ks_source_path(s->src));
	if (s->top) {
		ks_json_kv_u64(&j, "end_ns", s->end_ns - ks_top_first_ts(s->top));
		ks_json_kv_u64(&j, "interval_ns", ks_top_interval_ns(s->top));
		ks_json_kv_u64(&j, "events", ks_top_interval_records(s->top));
		ks_json_kv_u64(&j, "lost", ks_top_interval_lost(s->top));
		ks_json_kv_string(&j, "arch", ks_top_arch(s->top));
		if (s->eng) {
			ks_json_kv_string(&j, "engine", ks_engine_name(s->eng));
			ks_json_kv_u64(&j, "overflow", s->delta.overflow_series +
				       s->delta.overflow_threads + s->delta.overflow_procs);
		}
	} else {
		ks_json_kv_double(&j, "interval_s", s->last_secs);
	}
	ks_json_key(&j, "rows");
	ks_json_begin_array(&j);
	if (s->a->view == VIEW_EXITS && s->top) {
		json_exit_rows(&j, s, KS_TOP_VM, "vm");
		json_exit_rows(&j, s, KS_TOP_VCPU, "vcpu");
		json_exit_rows(&j, s, KS_TOP_REASON, "reason");
		json_exit_rows(&j, s, KS_TOP_VCPU_REASON, "vcpu_reason");
	} else if (s->a->view != VIEW_EXITS) {
		build_rows(s);
		for (i = 0; i < s->nrows; i++) {
			ks_json_begin_object(&j);
			json_vm(&j, s, s->rows[i].vm);
			ks_json_kv_i64(&j, "depth", s->rows[i].depth);
			ks_json_kv_string(&j, "name", s->rows[i].label);
			for (c = 0; c < vc->ncols; c++) {
				char low[24];

				json_cell(&j, field_name(vc->cols[c].title, low, sizeof(low)),
					  s->rows[i].cell[c]);
			}
			ks_json_end_object(&j);
		}
	}
	ks_json_end_array(&j);
	if (s->host) {
		ks_host_json_threads(s->host, &j);
	} else {
		ks_json_key(&j, "threads");
		ks_json_begin_array(&j);
		ks_json_end_array(&j);
	}
	ks_json_end_object(&j);
	ks_json_finish(&j);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* the screen */

/* Which columns fit in WIDTH next to a label of at least MIN_LABEL. */
static int fit_columns(const struct view_cols *vc, int width, bool show[MAX_COLS])
{
	int used = 16, c, p;

	for (c = 0; c < vc->ncols; c++)
		show[c] = false;
	for (p = 0; p < MAX_COLS; p++)
		for (c = 0; c < vc->ncols; c++)
			if (vc->cols[c].prio == p && used + vc->cols[c].swidth + 1 <= width) {
				show[c] = true;
				used += vc->cols[c].swidth + 1;
			}
	used -= 16;
	return width - used; /* the label's width */
}

/* Write S at (Y, X) clipped to the screen: nothing ever wraps. */
static void put_clipped(int y, int x, const char *str)
{
	int room = COLS - x;

	if (y < 0 || y >= LINES || room <= 0)
		return;
	mvaddnstr(y, x, str, room);
}

static void draw_line(int y, const struct view_cols *vc, const bool show[MAX_COLS], int lw,
		      const char *label, char cells[][24])
{
	char buf[512];
	int len, c;

	len = snprintf(buf, sizeof(buf), "%-*.*s", lw, lw, label);
	for (c = 0; c < vc->ncols && len < (int)sizeof(buf) - 1; c++)
		if (show[c])
			len += snprintf(buf + len, sizeof(buf) - (size_t)len, " %*.*s", vc->cols[c].swidth,
					vc->cols[c].swidth, cells[c]);
	put_clipped(y, 0, buf);
}

static const char *const help_lines[] = {
	"kvmscope top - keys",
	"",
	"  q         quit                      h or ?   this help",
	"  space     pause / resume            r        reset the totals",
	"  1 2 3 4   exits / tracepoints /     Tab      next view",
	"            KVM statistics / halt polling view",
	"  f         filter reasons, events, statistics by regex",
	"  g         only one guest (QEMU -name or comm)",
	"  p         only one VM by process id",
	"  c         clear the filters         s        set the interval",
	"  x         child rows (reasons, kvm_exit(REASON)) on/off",
	"  z         hide rows that are zero in the interval",
	"  v         per-vCPU rows on/off",
	"  o         next sort column          E T P    sort by exits, time, p99",
	"  Up Down PgUp PgDn Home: scroll",
	"",
	"press any key to go back",
};

static void draw_screen(struct top_state *s)
{
	const struct view_cols *vc = &view_cols[s->a->view];
	bool show[MAX_COLS];
	char t[512], hdr[MAX_COLS][24], foot[256];
	int lw = fit_columns(vc, COLS, show), body, y, c;
	size_t i;

	erase();
	if (s->help) {
		for (i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]) && (int)i < LINES; i++)
			put_clipped((int)i, 0, help_lines[i]);
		refresh();
		return;
	}
	build_rows(s);
	screen_title(s, t, sizeof(t));
	if (s->paused)
		strncat(t, " [paused]", sizeof(t) - strlen(t) - 1);
	attron(A_REVERSE);
	mvhline(0, 0, ' ', COLS);
	put_clipped(0, 0, t);
	attroff(A_REVERSE);
	for (c = 0; c < vc->ncols; c++)
		snprintf(hdr[c], sizeof(hdr[c]), "%s", vc->cols[c].title);
	attron(A_BOLD);
	draw_line(1, vc, show, lw, vc->label_title, hdr);
	attroff(A_BOLD);
	body = LINES - 3;
	/* --than: the last slow exits above the footer */
	if (s->nslow) {
		int k, n = (int)s->nslow;

		if (n > LINES / 3)
			n = LINES / 3;
		body -= n + 1;
		snprintf(t, sizeof(t), "Exits slower than %s, the latest last:", s->a->than.text);
		attron(A_BOLD);
		put_clipped(LINES - 2 - n, 0, t);
		attroff(A_BOLD);
		for (k = 0; k < n; k++)
			put_clipped(LINES - 1 - n + k, 0, s->slow_lines[s->nslow - (unsigned)n + (unsigned)k]);
	}
	if (s->scroll > (int)s->nrows - body)
		s->scroll = (int)s->nrows - body;
	if (s->scroll < 0)
		s->scroll = 0;
	if (!s->nrows && s->interval)
		put_clipped(2, 0, empty_text(s));
	for (i = (size_t)s->scroll, y = 2; i < s->nrows && y < 2 + body; i++, y++) {
		char label[128];

		snprintf(label, sizeof(label), "%*s%s", s->rows[i].depth * 2, "", s->rows[i].label);
		if (!s->rows[i].depth)
			attron(A_BOLD);
		draw_line(y, vc, show, lw, label, s->rows[i].cell);
		if (!s->rows[i].depth)
			attroff(A_BOLD);
	}
	if (s->status[0])
		snprintf(foot, sizeof(foot), "%s", s->status);
	else
		snprintf(foot, sizeof(foot), "view %s%s%s%s%s%s | rows %zu%s | h help, q quit",
			 view_names[s->a->view], s->have_re ? " | filter on" : "",
			 s->guest[0] ? " | guest " : "", s->guest,
			 s->pid_filter > 0 ? " | pid set" : "", s->a->vcpus ? " | vCPU rows" : "",
			 s->nrows, s->nrows > (size_t)(body > 0 ? body : 0) ? " (scroll)" : "");
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	put_clipped(LINES - 1, 0, foot);
	attroff(A_REVERSE);
	refresh();
}

static void show(struct top_state *s)
{
	if (s->screen) {
		if (!s->paused || s->need_draw)
			draw_screen(s);
		s->need_draw = false;
	} else if (s->a->csv) {
		print_csv(s);
	} else if (s->a->json) {
		print_json(s);
	} else {
		print_text(s);
	}
}

/* A line typed at the bottom; false when empty or cancelled. */
static bool prompt(struct top_state *s, const char *question, char *out, int len)
{
	int r;

	(void)s;
	move(LINES - 1, 0);
	clrtoeol();
	put_clipped(LINES - 1, 0, question);
	echo();
	curs_set(1);
	timeout(-1);
	r = getnstr(out, len - 1);
	noecho();
	curs_set(0);
	timeout(0);
	return r == OK && out[0];
}

/* ------------------------------------------------------------------ */
/* the statistics views: reading the VMs (kvmstats_collect.h) */

static void kvmcol_setup(struct top_state *s)
{
	if (!s->col) {
		bool chosen = s->a->nqmp || s->a->libvirt;
		/* given sockets or libvirt: those; else debugfs when readable,
		 * else libvirt's domains (when its socket exists) and the QEMU
		 * processes started with -qmp unix:PATH */
		struct ks_kvmcol_opts o = {
			.qmp = s->a->qmp, .nqmp = s->a->nqmp, .libvirt = s->a->libvirt,
			.libvirt_auto = !chosen, .discover = !chosen,
			.debugfs = s->a->debugfs ? KS_KVMCOL_DEBUGFS_ONLY :
				   chosen ? KS_KVMCOL_DEBUGFS_OFF : KS_KVMCOL_DEBUGFS_AUTO,
			.timeout_ms = 2000, .ctx = cli_peer_ctx(),
		};

		s->col = ks_kvmcol_new(&o);
		if (!s->col)
			die("out of memory");
	}
}

static void read_kvmstats(struct top_state *s)
{
	kvmcol_setup(s);
	ks_kvmcol_read(s->col);
	if (ks_kvmcol_status(s->col)[0])
		snprintf(s->status, sizeof(s->status), "%s", ks_kvmcol_status(s->col));
}

/* ------------------------------------------------------------------ */
/* intervals */

/* The engine's counts since the last interval into the views. */
static void engine_interval(struct top_state *s, uint64_t end_ns)
{
	struct ks_engine_snapshot *prev = &s->snap[s->cur], *now = &s->snap[!s->cur];
	uint64_t events = 0, interval;
	struct ks_error err;
	size_t i;

	if (ks_engine_read(s->eng, now, &err) < 0 ||
	    ks_engine_delta(prev, now, &s->delta, &err) < 0) {
		screen_end();
		die("%s", err.msg);
	}
	interval = prev->ts_ns && now->ts_ns > prev->ts_ns ? now->ts_ns - prev->ts_ns :
		   (uint64_t)(s->a->delay * 1e9);
	if (s->a->view == VIEW_TRACEPOINTS)
		for (i = 0; i < s->delta.ntps; i++)
			events += s->delta.tps[i].count;
	else
		for (i = 0; i < s->delta.nexits; i++)
			events += s->delta.exits[i].count;
	if (ks_top_engine_interval(s->top, &s->delta, end_ns, interval, events, &err) < 0) {
		screen_end();
		die("%s", err.msg);
	}
	ks_tpcount_add_engine(s->tp, &s->delta);
	s->cur = !s->cur;
}

static void close_interval(struct top_state *s, uint64_t end_ns)
{
	struct ks_error err;
	double t = now_s();

	if (s->eng)
		engine_interval(s, end_ns);
	else if (s->top && ks_top_interval(s->top, end_ns, &err) < 0) {
		screen_end();
		die("%s", err.msg);
	}
	if (s->tp)
		ks_tpcount_interval(s->tp);
	s->last_secs = s->last_close > 0 ? t - s->last_close : s->a->delay;
	s->last_close = t;
	if (STATS_VIEW(s->a->view) && s->live)
		read_kvmstats(s);
	s->end_ns = end_ns;
	s->interval++;
	show(s);
	if (s->a->iterations && s->interval >= s->a->iterations)
		s->quit = true;
}

/* The r key: every view's totals restart (exits: TOTAL; tracepoints:
 * TOTAL; kvmstats: VALUE; halt: HALTS), from the next interval on. */
static void reset_totals(struct top_state *s)
{
	if (s->top)
		ks_top_reset(s->top);
	if (s->tp)
		ks_tpcount_reset(s->tp);
	if (s->col && ks_kvmcol_reset(s->col) < 0)
		die("out of memory");
}

/* ------------------------------------------------------------------ */
/* keys */

static void set_filter(struct top_state *s, const char *re)
{
	regex_t n;
	int rc;

	if (!re || !*re) {
		if (s->have_re)
			regfree(&s->re);
		s->have_re = false;
		return;
	}
	rc = regcomp(&n, re, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char msg[100];
		regerror(rc, &n, msg, sizeof(msg));
		snprintf(s->status, sizeof(s->status), "bad regex '%.40s': %s", re, msg);
		return;
	}
	if (s->have_re)
		regfree(&s->re);
	s->re = n;
	s->have_re = true;
}

/* To VIEW; a statistics view with no VM known reads them at once. */
static void view_switched(struct top_state *s, int view)
{
	size_t nvms;

	s->a->view = view;
	s->scroll = 0;
	stats_vms(s, &nvms);
	if (STATS_VIEW(view) && s->live && !nvms)
		read_kvmstats(s);
}

static void handle_key(struct top_state *s, int ch)
{
	char line[128];
	int page = LINES - 3 > 1 ? LINES - 3 : 1;

	if (s->help) {
		s->help = false;
		return;
	}
	s->status[0] = 0;
	switch (ch) {
	case 'q': case 'Q': s->quit = true; break;
	case 'h': case '?': s->help = true; break;
	case ' ': s->paused = !s->paused; break;
	case '1': case '2': case '3': case '4':
		view_switched(s, ch - '1');
		break;
	case '\t':
		view_switched(s, (s->a->view + 1) % NR_VIEWS);
		break;
	case 'x': s->children = !s->children; break;
	case 'z': s->a->skip_zero = !s->a->skip_zero; break;
	case 'v': s->a->vcpus = !s->a->vcpus; break;
	case 'o': s->a->sort = (s->a->sort + 1) % 4; break;
	case 'E': s->a->sort = 0; break;
	case 'T': s->a->sort = 1; break;
	case 'P': s->a->sort = 2; break;
	case 'r':
		reset_totals(s);
		snprintf(s->status, sizeof(s->status), "totals reset after interval #%ld",
			 s->interval);
		break;
	case 'c':
		set_filter(s, NULL);
		s->guest[0] = 0;
		s->pid_filter = 0;
		break;
	case 'f':
		if (prompt(s, "filter (regex, empty clears): ", line, sizeof(line)))
			set_filter(s, line);
		else
			set_filter(s, NULL);
		break;
	case 'g':
		if (prompt(s, "guest name (empty for all): ", line, sizeof(line)))
			snprintf(s->guest, sizeof(s->guest), "%.63s", line);
		else
			s->guest[0] = 0;
		break;
	case 'p': {
		long long v;

		if (!prompt(s, "pid (empty for all): ", line, sizeof(line)))
			s->pid_filter = 0;
		else if (parse_whole(line, 1, INT32_MAX, &v) == 0)
			s->pid_filter = (int32_t)v;
		else
			snprintf(s->status, sizeof(s->status), "not a process id: '%.40s'", line);
		break;
	}
	case 's': {
		char *end;
		double d;

		if (!prompt(s, "interval in seconds: ", line, sizeof(line)))
			break;
		d = strtod(line, &end);
		if (*end || !(d >= 0.01) || d > 86400)
			snprintf(s->status, sizeof(s->status), "the interval is 0.01 to 86400 s, not '%.40s'",
				 line);
		else
			s->a->delay = d;
		break;
	}
	case KEY_UP: s->scroll--; break;
	case KEY_DOWN: s->scroll++; break;
	case KEY_PPAGE: s->scroll -= page; break;
	case KEY_NPAGE: s->scroll += page; break;
	case KEY_HOME: s->scroll = 0; break;
	case KEY_RESIZE: break;
	default: return;
	}
	s->need_draw = true;
}

static void handle_keys(struct top_state *s)
{
	int ch;

	if (!s->screen)
		return;
	while ((ch = getch()) != ERR && !s->quit)
		handle_key(s, ch);
	if (s->need_draw && !s->quit)
		draw_screen(s);
	s->need_draw = false;
}

static void setup_screen(struct top_state *s)
{
	s->screen = !s->a->batch && !s->a->csv && !s->a->json && isatty(1) && isatty(0);
	if (!s->screen)
		return;
	if (!newterm(NULL, stdout, stdin)) {
		s->screen = false;
		return;
	}
	screen_on = true;
	atexit(screen_end);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	timeout(0);
	curs_set(0);
	s->need_draw = true;
	draw_screen(s);
}

/* Sleep until wall time T (seconds, monotonic), handling keys. */
static void sleep_until(struct top_state *s, double t, struct ks_live *live)
{
	double left;
	bool ready;

	while (!s->quit && !cli_live_interrupted() && (left = t - now_s()) > 0) {
		int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
		if (s->eng)
			ks_engine_wait(s->eng, s->screen ? 0 : -1, ms, &ready);
		else
			ks_live_wait(live, s->screen ? 0 : -1, ms, &ready);
		handle_keys(s);
		if (live || s->eng)
			return; /* the caller drains the buffers */
	}
}

/* ------------------------------------------------------------------ */
/* replay and live loops */

static void add_record(struct top_state *s, const struct ks_record *rec)
{
	struct ks_error err;

	/* the model first: the views read it for this record */
	if (!ks_host_observe(s->host, rec) &&
	    ks_host_error_at(s->host, ks_source_path(s->src), rec, &err) < 0) {
		screen_end();
		die("%s", err.msg);
	}
	ks_top_add(s->top, rec);
	ks_tpcount_add(s->tp, rec);
}

static void replay(struct top_state *s)
{
	uint64_t start = 0, boundary = 0;
	double wall0 = now_s();
	struct ks_record rec;
	struct ks_error err;
	bool any = false;
	int r = 0;

	while (!s->quit && !cli_live_interrupted() && (r = ks_source_next(s->src, &rec, &err)) > 0) {
		uint64_t period = (uint64_t)(s->a->delay * 1e9);

		if (!start && rec.ts) {
			start = rec.ts;
			boundary = start + period;
		}
		while (rec.ts && rec.ts >= boundary && !s->quit) {
			/* the first interval is shown at once (no blank screen);
			 * the next ones at the recorded speed */
			if (!s->a->fast && s->interval > 0)
				sleep_until(s, wall0 + (double)(boundary - start) / 1e9 - s->a->delay, NULL);
			while (s->paused && !s->quit && !cli_live_interrupted()) {
				double p0 = now_s();
				sleep_until(s, p0 + 0.1, NULL);
				wall0 += now_s() - p0;
			}
			if (s->quit)
				break;
			close_interval(s, boundary);
			boundary += (uint64_t)(s->a->delay * 1e9);
			any = false;
		}
		if (s->quit)
			break;
		add_record(s, &rec);
		any = true;
	}
	if (!s->quit && !cli_live_interrupted()) {
		if (r < 0) {
			screen_end();
			die("%s", err.msg);
		}
		if (any)
			close_interval(s, boundary);
		/* the screen stays until q */
		while (s->screen && !s->quit && !cli_live_interrupted())
			sleep_until(s, now_s() + 0.2, NULL);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void drain(struct top_state *s)
{
	struct ks_record rec;
	struct ks_error err;
	int r;

	if (!s->src)
		return;
	while ((r = ks_source_next(s->src, &rec, &err)) > 0)
		add_record(s, &rec);
	if (r < 0) {
		screen_end();
		die("%s", err.msg);
	}
}

static void live_loop(struct top_state *s, struct ks_live *l)
{
	double next = now_s() + s->a->delay;

	while (!s->quit && !cli_live_interrupted()) {
		drain(s);
		if (now_s() >= next) {
			close_interval(s, mono_ns());
			next += s->a->delay;
			if (next < now_s() || next > now_s() + s->a->delay)
				next = now_s() + s->a->delay;
			continue;
		}
		if (l || s->eng)
			sleep_until(s, next, l);
		else
			sleep_until(s, now_s() + 0.1 < next ? now_s() + 0.1 : next, NULL);
	}
}

static struct ks_live *open_live(struct top_state *s)
{
	static const char *const all_kvm[] = { "kvm:*" };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l;
	struct ks_error err;

	o.events = s->a->nevents ? s->a->events : NULL;
	o.nevents = (size_t)s->a->nevents;
	if (!s->a->nevents && s->a->view == VIEW_TRACEPOINTS) {
		/* kvm_stat's tracepoint view: every kvm:* tracepoint */
		o.events = all_kvm;
		o.nevents = 1;
	}
	o.pids = s->a->pids;
	o.npids = (size_t)s->a->npids;
	o.clock = "mono"; /* trace time == CLOCK_MONOTONIC: intervals end at wall time */
	o.buffer_kb = 4096;
	o.track = cli_live_track;
	o.ctx = cli_ctx();
	if (ks_live_create(&l, &o, &err) < 0)
		die("%s", err.msg);
	if (ks_live_source_open(&s->src, l, &err) < 0 || ks_live_start(l, &err) < 0)
		die("%s", err.msg);
	return l;
}

/* Live exits and tracepoint counts through a live engine (engine.h):
 * every kvm:* event is counted too where the view may change to the
 * tracepoints (on the screen) or starts there. */
static void open_engine(struct top_state *s)
{
	struct ks_engine_config ec = KS_ENGINE_CONFIG_INIT;
	struct ks_error err;

	ec.kind = (enum ks_engine_kind)s->a->engine;
	ec.exits = true;
	ec.tracepoints = s->a->view == VIEW_TRACEPOINTS ||
			 (!s->a->batch && !s->a->csv && !s->a->json);
	ec.max_series = s->a->limits.threads > 65536 ? (uint32_t)s->a->limits.threads : 65536;
	if (s->a->npids == 1)
		ec.pid = s->a->pids[0];
	s->eng = cli_engine_open("top", &ec);
	snprintf(s->live_what, sizeof(s->live_what), "live (%s engine)", ks_engine_name(s->eng));
	/* the start: the first interval's counts are those after it */
	if (ks_engine_read(s->eng, &s->snap[0], &err) < 0)
		die("%s", err.msg);
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { 0 };
	struct top_state s = { .a = &a, .children = true, .live_what = "live" };
	struct ks_live *l = NULL;
	struct ks_error err;

	parse_args(argc, argv, &a);
	if (a.fields)
		set_filter(&s, a.fields);
	if (s.status[0])
		usage_error("top", "-f: %s", s.status);
	if (a.guest)
		snprintf(s.guest, sizeof(s.guest), "%s", a.guest);
	/* a libvirt that --libvirt names but that cannot be reached is an
	 * error at once; later failures show as a row, and it reconnects */
	if (a.libvirt) {
		kvmcol_setup(&s);
		if (ks_kvmcol_open_libvirt(s.col, &err) < 0)
			die("%s", err.msg);
	}
	cli_live_catch_signals();
	if (a.input) {
		if (cli_source_open(&s.src, a.input, KS_OPEN_NO_SYMBOLS, &a.limits, &err) < 0)
			die("%s", err.msg);
		apply_time_window(s.src, a.input, &a.time);
		s.tracing = true;
	} else {
		s.live = true;
		/* the kvmstats view alone needs no tracing (nor root for tracefs) */
		if (!STATS_VIEW(a.view) || a.nevents) {
			if (a.nevents || a.than.set || a.npids > 1)
				l = open_live(&s);
			else
				open_engine(&s);
			s.tracing = true;
		}
	}
	if (s.eng) {
		/* a model that observes nothing: names come from /proc (vm_name) */
		s.host = ks_host_new(NULL, NULL, &err);
		if (!s.host)
			die("%s", err.msg);
		s.top = ks_top_new_engine(NULL, &err);
		s.tp = s.top ? ks_tpcount_new(NULL, NULL, &err) : NULL;
		if (!s.top || !s.tp)
			die("%s", err.msg);
	} else if (s.src) {
		s.host = ks_host_new(NULL, s.src, &err);
		if (!s.host)
			die("%s", err.msg);
		ks_host_set_limits(s.host, ks_source_limits(s.src));
		s.top = ks_top_new(s.src, s.host, &err);
		if (!s.top)
			die("%s", err.msg);
		s.tp = ks_tpcount_new(s.src, s.host, &err);
		if (!s.tp)
			die("%s", err.msg);
		if (a.than.set) {
			s.slow = (struct ks_slow_log){ .out = stdout, .than_ns = a.than.ns,
						       .than_text = a.than.text, .json = a.json };
			if (ks_top_observe(s.top, slow_exit, &s, a.than.ns + 1, &err) < 0)
				die("%s", err.msg);
		}
	}
	setup_screen(&s);
	if (s.live)
		live_loop(&s, l);
	else
		replay(&s);
	screen_end();
	ks_top_free(s.top);
	ks_tpcount_free(s.tp);
	ks_host_free(s.host);
	if (s.src)
		ks_source_close(s.src);
	ks_live_destroy(l);
	ks_kvmcol_free(s.col);
	ks_engine_close(s.eng);
	ks_engine_snapshot_free(&s.snap[0]);
	ks_engine_snapshot_free(&s.snap[1]);
	ks_engine_snapshot_free(&s.delta);
	free(s.rows);
	if (s.have_re)
		regfree(&s.re);
	return 0;
}
