/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter.c - kvmscope exporter: KVM exit metrics over HTTP for
 * Prometheus (text 0.0.4 or OpenMetrics 1.0, by the scraper's Accept).
 *
 * Live: a private tracefs instance with the KVM events (live.h) read
 * through the live struct ks_source, or a live engine (engine.h); replay:
 * any input file (-i) at its recorded speed, a multiple of it, a fixed
 * event rate or as fast as possible.  Both feed one struct ks_metrics
 * (metrics.h).  This file holds the command: its options, the start, the
 * run and the stop; cmd_exporter_impl.h lists the files that do the rest
 * (the HTTP server, a scrape's body, the ingestion loops).
 */
#include <malloc.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cli.h"
#include "cmd_exporter_impl.h"
#include "options.h"
#include "kvmscope/engine.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/limits.h"
#include "kvmscope/live.h"
#include "kvmscope/metrics.h"
#include "kvmscope/source.h"

#define DEFAULT_LISTEN "127.0.0.1:9843"

static const struct opt_cmd exporter_cmd = {
	.name = "exporter",
	.synopsis = "[--listen ADDR:PORT] [-i FILE [--speed X|max | --rate N]] [options]",
	.intro = "Serve KVM exit metrics at http://ADDR:PORT/metrics for Prometheus: exits and time\n"
		 "in exits per VM (domain), vCPU and exit reason, exit-latency histograms per VM and\n"
		 "reason (250 ns .. 10 s), lost events and the exporter's own health.  Prometheus\n"
		 "text 0.0.4 or OpenMetrics 1.0.0, as the scraper's Accept header asks.  Live from\n"
		 "tracefs (private instance, needs root), or replayed from any input file (-i).\n",
	.outro = "Watch a host from Prometheus:\n"
		 "  kvmscope exporter --listen 127.0.0.1:9843\n"
		 "  prometheus.yml:  scrape_configs: [{job_name: kvmscope,\n"
		 "                    static_configs: [{targets: ['127.0.0.1:9843']}]}]\n"
		 "Metric names, labels and the systemd unit: see kvmscope-exporter(1).\n",
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* options */

static const char *take_speed(const char *arg, void *value)
{
	double *speed = value;

	if (!strcmp(arg, "max")) {
		*speed = 0;
		return NULL;
	}
	if (ks_parse_seconds(arg, strlen(arg), speed) < 0 || !(*speed >= 0.001) || *speed > 1e6)
		return "takes a factor of the recorded speed (0.001 to 1000000) or 'max'";
	return NULL;
}

static const char *take_pids(const char *arg, void *value)
{
	struct exporter_args *a = value;

	if (parse_pid_list(arg, a->pids, MAX_PIDS, &a->npids) < 0)
		return "takes process ids separated by commas (at most 256)";
	return NULL;
}

static const char *take_libvirt(const char *arg, void *value)
{
	struct exporter_args *a = value;

	a->libvirt = arg && *arg ? arg : KS_LIBVIRT_URI;
	return NULL;
}

/* The options that conflict, or that need -i or live tracing. */
static void check_args(struct exporter_args *a, const struct opt *opts)
{
	struct sockaddr_storage sa;

	a->linger_set = option_given(opts, "linger");
	if (!a->input) {
		const char *o = option_given(opts, "speed") ? "--speed"
			      : option_given(opts, "rate")  ? "--rate"
			      : option_given(opts, "loop")  ? "--loop"
			      : a->linger_set               ? "--linger"
			      : option_given(opts, "hold")  ? "--hold" : NULL;
		if (o)
			usage_error("exporter", "%s is for a replay (-i FILE)", o);
	} else if (a->npids) {
		usage_error("exporter", "--pid is for live tracing, not with -i");
	}
	if (a->input && option_given(opts, "engine"))
		usage_error("exporter", "--engine is for live tracing, not with -i");
	if (a->engine != KS_ENGINE_AUTO && a->npids > 1)
		usage_error("exporter", "several --pid need the exporter's own tracefs reader: "
			    "not with --engine");
	if (option_given(opts, "speed") && a->rate)
		usage_error("exporter", "--speed and --rate cannot be used together");
	if (!a->listen)
		a->listen = DEFAULT_LISTEN;
	exporter_parse_listen(a->listen, &sa);
}

static void parse_args(struct exporter_args *a, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_STRING('l', "listen", &a->listen, "ADDR:PORT",
			   "serve HTTP here (default 127.0.0.1:9843; [::1]:PORT for\n"
			   "IPv6; port 0 picks a free one, printed on stderr)"),
		OPT_INPUT('i', "input", &a->input, "replay FILE (perf.data, trace.dat, ftrace text)\n"
			  "instead of tracing live", NULL),
		OPT_CALLBACK(0, "speed", &a->speed, "X|max",
			     "replay at X times the recorded speed (default 1), or\n"
			     "'max': as fast as possible", take_speed),
		OPT_INT(0, "rate", &a->rate, "N", "replay at N events per second instead", 1,
			1000000000),
		OPT_INT(0, "loop", &a->loops, "N", "replay the file N times (default 1)", 1, 1000000),
		OPT_SECONDS(0, "linger", &a->linger,
			    "after the replay, serve SECS more, then exit (default:\n"
			    "serve until SIGTERM or SIGINT)", 0, 86400000),
		OPT_SECONDS(0, "hold", &a->hold,
			    "before the replay, read FILE once to learn its series\n"
			    "and serve them at zero for SECS (a scraper's first\n"
			    "sample is then 0: increase() covers the whole replay)", 0, 86400000),
		OPT_CALLBACK('p', "pid", a, "PID[,PID]", "live: only these host processes (VMs)",
			     take_pids),
		OPT_CHOICE(0, "engine", &a->engine, "auto|bpf|tracefs",
			   "live: auto (default: bpf where it loads, else\n"
			   "tracefs), bpf or tracefs", cli_engine_names),
		OPT_LIST(0, "qmp", a->qmp, &a->nqmp, MAX_QMP, "PATH",
			 "also export KVM's statistics of the QEMU with this QMP\n"
			 "socket (query-stats, QEMU 7.1 or later); repeatable"),
		{ .type = OPT_T_CALLBACK, .long_name = "libvirt", .value = a, .argh = "URI",
		  .cb = take_libvirt, .optional_arg = true,
		  .help = "also export KVM's statistics of libvirt's domains\n"
			  "(default URI qemu:///system; live and without --qmp,\n"
			  "also done when libvirt's socket exists)" },
		OPT_INT(0, "rotate", &a->rotate, "N",
			"renew the exit/entry pairing state every N events, so\n"
			"that it does not grow with every thread that ran\n"
			"(default 16777216 live, never in a replay; pending exits\n"
			"are kept); VMs that are gone are dropped then", 1, 1LL << 40),
		OPT_INT(0, "max-vms", &a->max_vms, "N",
			"at most N VMs (default 1024); exits of more VMs count\n"
			"under domain \"other\"", 1, 1 << 20),
		OPT_INT(0, "max-series", &a->max_series, "N",
			"at most N (VM, vCPU, reason) series (default 65536)", 1, 1 << 24),
		OPT_INT(0, "max-histograms", &a->max_hists, "N",
			"at most N (VM, reason) histograms (default 16384)", 1, 1 << 22),
		OPT_INT(0, "max-connections", &a->max_conns, "N",
			"serve at most N connections at once (default 512)", 1, 100000),
		OPT_INT(0, "max-per-address", &a->max_per_addr, "N",
			"at most N connections from one client address\n"
			"(default 16)", 1, 100000),
		OPT_SECONDS(0, "head-timeout", &a->head_timeout,
			    "close a connection whose request head (request line\n"
			    "and headers) is not read whole SECS after the\n"
			    "connection or the previous response, or that\n"
			    "makes no progress for SECS (default 10)", 100, 3600000),
		OPT_END(),
	};
	int first;

	a->speed = 1;
	a->loops = 1;
	a->max_conns = 512;
	a->max_per_addr = 16;
	a->head_timeout = 10;
	first = parse_options(&exporter_cmd, opts, argc, argv);
	if (first < argc)
		usage_error("exporter", "unexpected argument '%s'", argv[first]);
	check_args(a, opts);
}

/* ------------------------------------------------------------------ */
/* the listening address */

socklen_t exporter_parse_listen(const char *s, struct sockaddr_storage *sa)
{
	char host[256];
	const char *colon = strrchr(s, ':'), *port;
	struct addrinfo hints = { 0 }, *res = NULL;
	long long p;
	socklen_t len;
	size_t n;

	if (!colon || colon == s)
		usage_error("exporter", "--listen takes ADDR:PORT (e.g. 127.0.0.1:9843), not '%s'", s);
	port = colon + 1;
	if (parse_whole(port, 0, 65535, &p) < 0)
		usage_error("exporter", "--listen: the port is a number from 0 to 65535, not '%s'",
			    port);
	n = (size_t)(colon - s);
	if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n >= sizeof(host))
		usage_error("exporter", "--listen: address too long");
	memcpy(host, s, n);
	host[n] = 0;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
		usage_error("exporter", "--listen: '%s' is not an address of this host", host);
	len = res->ai_addrlen;
	memcpy(sa, res->ai_addr, len);
	freeaddrinfo(res);
	return len;
}


/* ------------------------------------------------------------------ */
/* the run */

/* The locks and the start time that the scrapes and the loops share. */
static void exporter_init(struct exporter *x)
{
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	x->start_wall = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->format_lock, NULL);
	pthread_mutex_init(&x->http_lock, NULL);
	pthread_cond_init(&x->sweeper_cv, NULL);
}

/* Live, one process or all: the engine (bpf or tracefs), with its first
 * reading (the counts before the start are not exported). */
static void open_engine(struct exporter *x)
{
	const struct exporter_args *a = x->a;
	struct ks_engine_config ec = KS_ENGINE_CONFIG_INIT;
	struct ks_error err;

	ec.kind = (enum ks_engine_kind)a->engine;
	ec.exits = true;
	ec.tracepoints = true; /* kvmscope_events_total */
	ec.max_series = a->max_series ? (uint32_t)a->max_series : 65536;
	ec.max_procs = a->max_vms ? (uint32_t)a->max_vms : 1024;
	if (a->npids == 1)
		ec.pid = a->pids[0];
	x->eng = cli_engine_open("exporter", &ec);
	if (ks_engine_read(x->eng, &x->esnap[0], &err) < 0)
		die("%s", err.msg);
}

/* What feeds the metrics (the file to replay, the live tracefs reader of
 * several --pid, or the live engine), and the metrics.  The records'
 * source (NULL for the engine), with *L the live reader (several --pid). */
static struct ks_source *open_input(struct exporter *x, struct ks_live **l)
{
	const struct exporter_args *a = x->a;
	struct ks_metrics_config cfg = KS_METRICS_CONFIG_INIT;
	struct ks_source *src = NULL;
	struct ks_error err;

	cfg.max_vms = (uint32_t)a->max_vms;
	cfg.max_series = (uint32_t)a->max_series;
	cfg.max_histograms = (uint32_t)a->max_hists;
	if (a->input) {
		if (cli_source_open(&src, a->input, KS_OPEN_NO_SYMBOLS, NULL, &err) < 0)
			die("%s", err.msg);
		x->replay = true;
	} else {
		cfg.vm_name = exporter_vm_name;
		cfg.vm_alive = exporter_vm_alive;
		cfg.rotate_records = 16777216;
		if (a->npids > 1)
			*l = exporter_open_live(x->a, &src);
		else
			open_engine(x);
	}
	if (a->rotate)
		cfg.rotate_records = (uint64_t)a->rotate;
	x->m = x->eng ? ks_metrics_new_engine(&cfg, &err) : ks_metrics_new(&cfg, src, &err);
	if (!x->m)
		die("%s", err.msg);
	return src;
}

/* KVMSCOPE_EXPORTER_STATS: what the run cost, on stderr (the benchmark
 * reads it). */
static void print_stats(struct exporter *x, double cpu0, double t0)
{
	struct ks_metrics_snapshot s = { 0 };
	struct ks_error err;

	if (ks_metrics_snapshot(x->m, &s, &err) == 0)
		fprintf(stderr, "kvmscope exporter: %llu records, %.3f s CPU, %.3f s wall, "
			"%llu scrapes, last scrape %.6f s\n", (unsigned long long)s.records,
			cpu_s() - cpu0, now_s() - t0, (unsigned long long)x->scrapes,
			x->last_scrape_s);
	ks_metrics_snapshot_free(&s);
}

static void exporter_free(struct exporter *x, struct ks_source *src, struct ks_live *l)
{
	ks_metrics_snapshot_free(&x->snap);
	ks_kvmcol_free(x->col);
	ks_metrics_free(x->m);
	if (!x->a->input && !x->eng) {
		ks_source_close(src);
		ks_live_destroy(l);
	}
	ks_engine_close(x->eng);
	ks_engine_snapshot_free(&x->esnap[0]);
	ks_engine_snapshot_free(&x->esnap[1]);
	ks_engine_snapshot_free(&x->edelta);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->format_lock);
	pthread_mutex_destroy(&x->http_lock);
	pthread_cond_destroy(&x->sweeper_cv);
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter_args a = { 0 };
	struct exporter x = { .a = &a };
	struct ks_source *src;
	struct ks_live *l = NULL;
	struct MHD_Daemon *d;
	double cpu0, t0;

	parse_args(&a, argc, argv);
	/* the bodies (megabytes) are mapped and given back when the last
	 * connection lets them go: without a fixed threshold glibc raises it
	 * after the first free, and each HTTP thread's arena then keeps the
	 * largest body it ever formatted */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	exporter_mhd_load();
	signal(SIGPIPE, SIG_IGN);
	cli_live_catch_signals();
	exporter_init(&x);
	exporter_kvmstats_setup(&x);
	src = open_input(&x, &l);
	d = exporter_http_start(&x);
	cpu0 = cpu_s();
	t0 = now_s();
	if (a.input)
		exporter_replay(&x, src);
	else if (x.eng)
		exporter_live_engine(&x);
	else
		exporter_live(&x, src, l);
	exporter_http_stop(&x, d);
	if (getenv("KVMSCOPE_EXPORTER_STATS"))
		print_stats(&x, cpu0, t0);
	exporter_free(&x, src, l);
	return 0;
}
