/*
 * cmd_top.c - kvmscope top: live exits per VM, vCPU and reason, refreshed
 * every -d seconds; or the same view replayed from a file (-i FILE).
 *
 * Live: a private tracefs instance (live.h) with the KVM events on the
 * "mono" clock, read through the live struct ks_source; replay: any input
 * through ks_source_open.  Both feed the one accounting of top.h.  Output:
 * an ANSI screen with keys on a terminal, or plain text per interval
 * (--batch, like kvm_stat -l) or CSV (--csv, like kvm_stat -c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kvmscope/limits.h"
#include "kvmscope/live.h"
#include "kvmscope/source.h"
#include "kvmscope/top.h"
#include "output/csv.h"
#include "util/procfs.h"

static const char usage_text[] =
	"usage: kvmscope top [-i FILE [--fast]] [options]\n"
	"\n"
	"Exits per VM (QEMU process), vCPU and exit reason, refreshed every -d seconds:\n"
	"exits/s, time in exits (% of the vCPUs' time) and p99 exit handling latency.\n"
	"Live from tracefs (private instance), or replayed from any input file.\n"
	"\n"
	"  -i, --input FILE       replay FILE (perf.data, trace.dat, ftrace text) at its\n"
	"                         recorded speed\n"
	"      --fast             replay as fast as possible\n"
	"  -d, --delay SECS       refresh interval (default 1; fractions allowed)\n"
	"  -n, --iterations N     stop after N intervals\n"
	"  -b, --batch            plain text per interval (no screen control)\n"
	"      --csv              CSV, one line per row and interval\n"
	"  -s, --sort COL         exits (default), time, p99 or name\n"
	"  -v, --vcpus            show the per-vCPU rows\n"
	"  -e, --event SYS:EVENT  live: record these events instead of the KVM set\n"
	"                         (globs allowed; repeat)\n"
	"  -p, --pid PID[,PID]    live: only these processes (set_event_pid)\n"
	"      --limit NAME=VAL   replay: raise a budget of the run: memory=SIZE,\n"
	"                         threads=N (distinct threads), objects=N\n"
	"  -h, --help             this text\n"
	"\n"
	"Keys: q quit, s next sort column, v per-vCPU rows on/off.  See kvmscope-top(1).\n";

#define MAX_EVENTS 64
#define MAX_PIDS 256

static const char *const sort_columns[] = { "exits", "time", "p99", "name" };

struct top_args {
	const char *input;
	bool fast, batch, csv, vcpus;
	double delay;
	long iterations;
	int sort;
	const char *events[MAX_EVENTS];
	size_t nevents;
	int32_t pids[MAX_PIDS];
	size_t npids;
	struct ks_limits limits;
};

struct top_state {
	struct top_args *a;
	struct ks_top *top;
	struct ks_source *src;
	bool live, screen, quit;
	long interval;
	uint64_t end_ns;       /* trace time of the last closed interval's end */
	struct termios saved_tty;
	bool tty_saved;
};

static struct termios *restore_tty;

static void tty_restore(void)
{
	if (restore_tty) {
		tcsetattr(0, TCSANOW, restore_tty);
		fputs("\033[?25h", stdout);
		fflush(stdout);
		restore_tty = NULL;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void parse_pids(struct top_args *a, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL, *end;

	if (!dup)
		die("out of memory");
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v = strtol(tok, &end, 10);
		if (*end || v <= 0 || v > INT32_MAX || a->npids >= MAX_PIDS)
			usage_error("top", "--pid takes process ids, not '%s'", tok);
		a->pids[a->npids++] = (int32_t)v;
	}
	free(dup);
}

static int sort_index(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(sort_columns) / sizeof(sort_columns[0]); i++)
		if (!strcmp(s, sort_columns[i]))
			return (int)i;
	usage_error("top", "--sort takes exits, time, p99 or name, not '%s'", s);
}

static void parse_args(int argc, char **argv, struct top_args *a)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fast", no_argument, NULL, 'F' },
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "csv", no_argument, NULL, 'c' },
		{ "sort", required_argument, NULL, 's' },
		{ "vcpus", no_argument, NULL, 'v' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "limit", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *end;
	int c;

	a->delay = 1.0;
	ks_limits_default(&a->limits);
	while ((c = getopt_long(argc, argv, "i:d:n:bs:ve:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case 'F': a->fast = true; break;
		case 'd':
			a->delay = strtod(optarg, &end);
			if (*end || !(a->delay >= 0.01) || a->delay > 86400)
				usage_error("top", "-d takes seconds (0.01 or more), not '%s'", optarg);
			break;
		case 'n':
			a->iterations = strtol(optarg, &end, 10);
			if (*end || a->iterations <= 0)
				usage_error("top", "-n takes a positive count, not '%s'", optarg);
			break;
		case 'b': a->batch = true; break;
		case 'c': a->csv = true; break;
		case 's': a->sort = sort_index(optarg); break;
		case 'v': a->vcpus = true; break;
		case 'e':
			if (a->nevents >= MAX_EVENTS)
				usage_error("top", "at most %d -e options", MAX_EVENTS);
			a->events[a->nevents++] = optarg;
			break;
		case 'p': parse_pids(a, optarg); break;
		case 'L': parse_limit("top", &a->limits, optarg); break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: usage_error("top", "unknown option");
		}
	}
	if (optind < argc)
		usage_error("top", "unexpected argument '%s'", argv[optind]);
	if (a->fast && !a->input)
		usage_error("top", "--fast needs -i FILE");
	if (a->input && (a->nevents || a->npids))
		usage_error("top", "-e and --pid are for live tracing, not with -i");
}

/* ------------------------------------------------------------------ */
/* VM names: QEMU's -name (live), else what the input says */

/* QEMU process PID's -name ("guest=NAME,..." or NAME), else its comm. */
static void qemu_name(int32_t pid, char *out, size_t len)
{
	char buf[8192], *p, *end;
	ssize_t n;

	out[0] = 0;
	if (pid <= 0)
		return;
	n = ks_read_proc(pid, "cmdline", buf, sizeof(buf));
	if (n <= 0)
		return;
	end = buf + n;
	for (p = buf; p < end; p += strlen(p) + 1) {
		if (strcmp(p, "-name") || p + strlen(p) + 1 >= end)
			continue;
		p += strlen(p) + 1;
		if (!strncmp(p, "guest=", 6))
			p += 6;
		snprintf(out, len, "%.*s", (int)strcspn(p, ","), p);
		return;
	}
	if (ks_read_proc(pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(out, len, "%.63s", buf);
	}
}

static void vm_label(const struct top_state *s, const struct ks_top_row *r, char *out, size_t len)
{
	char name[64] = "";

	if (s->live)
		qemu_name(r->vm, name, sizeof(name));
	if (!name[0])
		snprintf(name, sizeof(name), "%s", r->name);
	if (name[0])
		snprintf(out, len, "%d(%s)", r->vm, name);
	else
		snprintf(out, len, "%d", r->vm);
}

/* ------------------------------------------------------------------ */
/* output */

static void fmt_us(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f", (double)ns / 1000.0);
}

static void text_row(const char *label, const struct ks_top_row *r)
{
	char p99[32];

	fmt_us(r->p99_ns, p99, sizeof(p99));
	printf("%-44.44s %10llu %12.1f %8.2f %12s\n", label, (unsigned long long)r->count, r->rate,
	       r->time_pct, p99);
}

static struct ks_top_row *sorted_copy(const struct top_state *s, enum ks_top_level lv, size_t *n)
{
	const struct ks_top_row *rows;
	struct ks_top_row *c;

	*n = ks_top_rows(s->top, lv, &rows);
	c = calloc(*n + 1, sizeof(*c));
	if (!c)
		die("out of memory");
	memcpy(c, rows, *n * sizeof(*c));
	ks_top_sort(c, *n, sort_columns[s->a->sort]);
	return c;
}

static void print_header(const struct top_state *s)
{
	double secs = (double)ks_top_interval_ns(s->top) / 1e9;
	uint64_t recs = ks_top_interval_records(s->top);

	printf("kvmscope top - %s, interval %ld: %.2f s, %llu events (%.0f/s), lost %llu, "
	       "exits by %s [sort: %s]\n",
	       s->live ? "live" : ks_source_path(s->src), s->interval, secs,
	       (unsigned long long)recs, secs > 0 ? (double)recs / secs : 0.0,
	       (unsigned long long)ks_top_interval_lost(s->top), ks_top_arch(s->top),
	       sort_columns[s->a->sort]);
	printf("%-44s %10s %12s %8s %12s\n", "VM / vCPU / REASON", "EXITS", "EXITS/s", "TIME%",
	       "P99(us)");
}

static void print_text(struct top_state *s)
{
	size_t nvm, nvc, nrs, i, j;
	struct ks_top_row *vms = sorted_copy(s, KS_TOP_VM, &nvm);
	struct ks_top_row *vcs = sorted_copy(s, KS_TOP_VCPU, &nvc);
	struct ks_top_row *rss = sorted_copy(s, KS_TOP_REASON, &nrs);
	char label[128];

	if (s->screen)
		fputs("\033[H\033[2J", stdout);
	print_header(s);
	if (!nvm)
		printf("(no KVM exits in this interval)\n");
	for (i = 0; i < nvm; i++) {
		vm_label(s, &vms[i], label, sizeof(label));
		text_row(label, &vms[i]);
		for (j = 0; s->a->vcpus && j < nvc; j++) {
			if (vcs[j].vm != vms[i].vm)
				continue;
			snprintf(label, sizeof(label), "  vcpu %d", vcs[j].vcpu);
			text_row(label, &vcs[j]);
		}
		for (j = 0; j < nrs; j++) {
			if (rss[j].vm != vms[i].vm)
				continue;
			snprintf(label, sizeof(label), "    %s", rss[j].name);
			text_row(label, &rss[j]);
		}
	}
	if (s->screen)
		printf("\nkeys: q quit, s sort (%s), v vCPU rows (%s)\n", sort_columns[s->a->sort],
		       s->a->vcpus ? "on" : "off");
	else
		putchar('\n');
	fflush(stdout);
	free(vms);
	free(vcs);
	free(rss);
}

static void csv_rows(struct top_state *s, enum ks_top_level lv, const char *level)
{
	size_t n, i;
	struct ks_top_row *rows = sorted_copy(s, lv, &n);
	double end = (double)(s->end_ns - ks_top_first_ts(s->top)) / 1e9;
	char label[128];

	for (i = 0; i < n; i++) {
		const struct ks_top_row *r = &rows[i];
		printf("%ld,%.6f,%s,%d,", s->interval, end, level, r->vm);
		vm_label(s, r, label, sizeof(label));
		ks_csv_field(stdout, lv == KS_TOP_REASON ? "" : label);
		printf(",%d,", r->vcpu);
		ks_csv_field(stdout, lv == KS_TOP_REASON ? r->name : "");
		printf(",%llu,%.3f,%.4f,%llu\n", (unsigned long long)r->count, r->rate, r->time_pct,
		       (unsigned long long)r->p99_ns);
	}
	free(rows);
}

static void print_csv(struct top_state *s)
{
	if (s->interval == 1)
		printf("interval,end_s,level,vm,vm_name,vcpu,reason,exits,exits_per_s,time_pct,p99_ns\n");
	csv_rows(s, KS_TOP_VM, "vm");
	csv_rows(s, KS_TOP_VCPU, "vcpu");
	csv_rows(s, KS_TOP_REASON, "reason");
	fflush(stdout);
}

static void close_interval(struct top_state *s, uint64_t end_ns)
{
	struct ks_error err;

	if (ks_top_interval(s->top, end_ns, &err) < 0)
		die("%s", err.msg);
	s->end_ns = end_ns;
	s->interval++;
	if (s->a->csv)
		print_csv(s);
	else
		print_text(s);
	if (s->a->iterations && s->interval >= s->a->iterations)
		s->quit = true;
}

/* ------------------------------------------------------------------ */
/* keys */

static void setup_screen(struct top_state *s)
{
	struct termios t;

	s->screen = !s->a->batch && !s->a->csv && isatty(1) && isatty(0);
	if (!s->screen || tcgetattr(0, &s->saved_tty) < 0) {
		s->screen = false;
		return;
	}
	t = s->saved_tty;
	t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(0, TCSANOW, &t);
	restore_tty = &s->saved_tty;
	atexit(tty_restore);
	fputs("\033[?25l", stdout);
}

static bool handle_keys(struct top_state *s)
{
	char buf[16];
	ssize_t n, i;
	bool redraw = false;

	if (!s->screen)
		return false;
	n = read(0, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		switch (buf[i]) {
		case 'q': case 'Q': s->quit = true; break;
		case 's': s->a->sort = (s->a->sort + 1) % 4; redraw = true; break;
		case 'v': s->a->vcpus = !s->a->vcpus; redraw = true; break;
		default: break;
		}
	}
	if (redraw && s->interval)
		print_text(s);
	return redraw;
}

/* Sleep until wall time T (seconds, monotonic), handling keys. */
static void sleep_until(struct top_state *s, double t, struct ks_live *live)
{
	double left;
	bool ready;

	while (!s->quit && !cli_live_interrupted() && (left = t - now_s()) > 0) {
		int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
		ks_live_wait(live, s->screen ? 0 : -1, ms, &ready);
		if (ready)
			handle_keys(s);
		if (live)
			return; /* the caller drains the buffers */
	}
}

/* ------------------------------------------------------------------ */
/* replay and live loops */

static void replay(struct top_state *s)
{
	uint64_t period = (uint64_t)(s->a->delay * 1e9), start = 0, boundary = 0;
	double wall0 = now_s();
	struct ks_record rec;
	struct ks_error err;
	bool any = false;
	int r = 0;

	while (!s->quit && !cli_live_interrupted() && (r = ks_source_next(s->src, &rec, &err)) > 0) {
		if (!start && rec.ts) {
			start = rec.ts;
			boundary = start + period;
		}
		while (rec.ts && rec.ts >= boundary && !s->quit) {
			if (!s->a->fast)
				sleep_until(s, wall0 + (double)(boundary - start) / 1e9, NULL);
			close_interval(s, boundary);
			boundary += period;
			any = false;
		}
		if (s->quit)
			break;
		ks_top_add(s->top, &rec);
		any = true;
	}
	if (!s->quit && !cli_live_interrupted()) {
		if (r < 0)
			die("%s", err.msg);
		if (any)
			close_interval(s, boundary);
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

	while ((r = ks_source_next(s->src, &rec, &err)) > 0)
		ks_top_add(s->top, &rec);
	if (r < 0)
		die("%s", err.msg);
}

static void live_loop(struct top_state *s, struct ks_live *l)
{
	double next = now_s() + s->a->delay;

	while (!s->quit && !cli_live_interrupted()) {
		drain(s);
		if (now_s() >= next) {
			close_interval(s, mono_ns());
			next += s->a->delay;
			if (next < now_s())
				next = now_s() + s->a->delay;
			continue;
		}
		sleep_until(s, next, l);
	}
}

static struct ks_live *open_live(struct top_state *s)
{
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l;
	struct ks_error err;

	o.events = s->a->nevents ? s->a->events : NULL;
	o.nevents = s->a->nevents;
	o.pids = s->a->pids;
	o.npids = s->a->npids;
	o.clock = "mono"; /* trace time == CLOCK_MONOTONIC: intervals end at wall time */
	o.buffer_kb = 4096;
	o.track = cli_live_track;
	if (ks_live_create(&l, &o, &err) < 0)
		die("%s", err.msg);
	if (ks_live_source_open(&s->src, l, &err) < 0 || ks_live_start(l, &err) < 0)
		die("%s", err.msg);
	return l;
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { 0 };
	struct top_state s = { .a = &a };
	struct ks_live *l = NULL;
	struct ks_error err;

	parse_args(argc, argv, &a);
	cli_live_catch_signals();
	if (a.input) {
		if (ks_source_open_limits(&s.src, a.input, KS_OPEN_NO_SYMBOLS, &a.limits, &err) < 0)
			die("%s", err.msg);
	} else {
		s.live = true;
		l = open_live(&s);
	}
	s.top = ks_top_new(s.src, &err);
	if (!s.top)
		die("%s", err.msg);
	setup_screen(&s);
	if (s.live) {
		s.interval = 0;
		live_loop(&s, l);
	} else {
		replay(&s);
	}
	tty_restore();
	ks_top_free(s.top);
	ks_source_close(s.src);
	ks_live_destroy(l);
	return 0;
}
