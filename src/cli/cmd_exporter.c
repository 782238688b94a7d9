/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter.c - kvmscope exporter: KVM exit metrics over HTTP for
 * Prometheus (text 0.0.4 or OpenMetrics 1.0, by the scraper's Accept).
 *
 * Live: a private tracefs instance with the KVM events (live.h) read
 * through the live struct ks_source; replay: any input file (-i) at its
 * recorded speed, a multiple of it, a fixed event rate or as fast as
 * possible.  Both feed one struct ks_metrics (metrics.h).  The HTTP server
 * is libmicrohttpd's, a pool of threads: a scrape takes a snapshot of the
 * metrics under the mutex the ingestion loop holds for each batch of
 * records (a few memcpy()s), then formats it without the lock, into a body
 * that the scrapes of the next second share (see "the shared bodies").
 * Clients are treated as hostile: connections are limited in all and per
 * address, and a request head must arrive whole within --head-timeout.
 * libmicrohttpd is loaded (dlopen) when the exporter starts, not linked:
 * with the TLS libraries it needs, it cost every kvmscope command ~1 ms
 * of start-up.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/engine.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/kvmstats_expo.h"
#include "kvmscope/live.h"
#include "kvmscope/metrics.h"
#include "kvmscope/openmetrics.h"
#include "kvmscope/source.h"
#include "util/procfs.h"

#define DEFAULT_LISTEN "127.0.0.1:9843"
#define BATCH 64
#define MAX_PIDS 256
#define MAX_QMP 256
#define HTTP_THREADS 4

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

struct exporter_args {
	const char *input;
	const char *listen;
	double speed;         /* 0 = as fast as possible */
	long long rate;       /* events/s; 0 = off */
	long long loops;
	double linger, hold;
	bool linger_set;
	long long max_vms, max_series, max_hists, rotate;
	int32_t pids[MAX_PIDS];
	int npids;
	const char *qmp[MAX_QMP];
	int nqmp;
	const char *libvirt;  /* --libvirt's URI; NULL: not given */
	long long max_conns, max_per_addr;
	double head_timeout;
	int engine;           /* --engine: enum ks_engine_kind */
};

/* What the HTTP thread and the ingestion loop share. */
struct exporter {
	struct exporter_args *a;
	pthread_mutex_t lock;
	struct ks_metrics *m;            /* under lock */
	uint64_t overruns;               /* under lock: kernel ring-buffer losses */
	double events_per_s;             /* under lock */
	bool replay, replay_done;        /* under lock */
	/* live through an engine (engine.h); NULL: records (replay, -p) */
	struct ks_engine *eng;
	struct ks_engine_snapshot esnap[2], edelta;
	int ecur;
	uint64_t overflow[3];            /* under lock: series, threads, procs */
	/* the HTTP threads': what formats a scrape, under format_lock (one
	 * at a time) */
	pthread_mutex_t format_lock;
	struct ks_metrics_snapshot snap;
	double last_scrape_s;
	double start_wall;
	/* under http_lock: the bodies, the connections, the counts */
	pthread_mutex_t http_lock;
	struct body *latest[2];          /* per format (enum ks_expo_format) */
	int nbodies;                     /* alive, the latest included */
	struct conn_info *conns;
	uint64_t scrapes, scrape_errors;
	pthread_cond_t sweeper_cv;
	pthread_t sweeper_thread;
	bool sweeper_running, sweeper_stop;
	struct ks_kvmcol *col;           /* KVM statistics: QMP, libvirt */
	bool lv_auto;                    /* libvirt once its socket exists */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	char *end;

	if (!strcmp(arg, "max")) {
		*speed = 0;
		return NULL;
	}
	errno = 0;
	*speed = strtod(arg, &end);
	if (errno || end == arg || *end || !(*speed >= 0.001) || *speed > 1e6)
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

static socklen_t parse_listen(const char *s, struct sockaddr_storage *sa);

static void parse_args(struct exporter_args *a, int argc, char **argv)
{
	struct sockaddr_storage sa;

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
	parse_listen(a->listen, &sa);
}

/* ------------------------------------------------------------------ */
/* VM names: QEMU's -name (libvirt: "guest=NAME,..."), else the process
 * name of a VMM that is not QEMU (a QEMU without -name is named
 * "qemu-system-..." like every other: its pid says more), live only */

static bool vm_alive(void *ctx, int32_t pid)
{
	(void)ctx;
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static bool qemu_name(void *ctx, int32_t pid, char *out, size_t len)
{
	char comm[64];

	(void)ctx;
	if (ks_qemu_name(pid, out, len))
		return true;
	if (ks_read_proc(pid, "comm", comm, sizeof(comm)) <= 0)
		return false;
	comm[strcspn(comm, "\n")] = 0;
	if (!comm[0] || !strncmp(comm, "qemu", 4) || !strncmp(comm, "kvm", 3))
		return false;
	snprintf(out, len, "%s", comm);
	return true;
}

/* ------------------------------------------------------------------ */
/* HTTP */

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>kvmscope exporter</title></head>\n"
	"<body><h1>kvmscope exporter</h1>\n"
	"<p>KVM exit metrics: <a href=\"/metrics\">/metrics</a></p>\n"
	"<p>See kvmscope-exporter(1).</p></body></html>\n";

static void health(struct ks_expo *e, struct exporter *x, uint64_t overruns, double eps,
		   bool replay, bool done)
{
	struct rusage ru;
	char buf[64];
	long rss_pages = 0;
	uint64_t scrapes;
	FILE *f;

	ks_expo_family(e, "kvmscope_events", KS_EXPO_COUNTER, "Records read from the input.", NULL);
	ks_expo_sample_u64(e, "kvmscope_events_total", NULL, x->snap.records);
	ks_expo_family(e, "kvmscope_events_per_second", KS_EXPO_GAUGE,
		       "Records read per second over the last second.", NULL);
	ks_expo_sample(e, "kvmscope_events_per_second", NULL, eps);
	ks_expo_family(e, "kvmscope_ringbuffer_overruns", KS_EXPO_COUNTER,
		       "Events the kernel's trace ring buffers overwrote or dropped (live).", NULL);
	ks_expo_sample_u64(e, "kvmscope_ringbuffer_overruns_total", NULL, overruns);
	ks_expo_family(e, "kvmscope_scrapes", KS_EXPO_COUNTER, "Scrapes of /metrics served.", NULL);
	pthread_mutex_lock(&x->http_lock);
	scrapes = x->scrapes;
	pthread_mutex_unlock(&x->http_lock);
	ks_expo_sample_u64(e, "kvmscope_scrapes_total", NULL, scrapes);
	ks_expo_family(e, "kvmscope_scrape_duration_seconds", KS_EXPO_GAUGE,
		       "Time the previous scrape took to snapshot and format the metrics.", "seconds");
	ks_expo_sample(e, "kvmscope_scrape_duration_seconds", NULL, x->last_scrape_s);
	if (x->eng) {
		static const char *const maps[3] = { "series", "threads", "procs" };
		const char *lbl[3] = { "engine", ks_engine_name(x->eng), NULL };
		uint64_t over[3];

		pthread_mutex_lock(&x->lock);
		memcpy(over, x->overflow, sizeof(over));
		pthread_mutex_unlock(&x->lock);

		ks_expo_family(e, "kvmscope_engine_info", KS_EXPO_GAUGE,
			       "The live engine in use (bpf: in-kernel pairing; tracefs).", NULL);
		ks_expo_sample_u64(e, "kvmscope_engine_info", lbl, 1);
		ks_expo_family(e, "kvmscope_engine_overflow", KS_EXPO_COUNTER,
			       "Events the live engine could not count: its map was full.", NULL);
		for (int i = 0; i < 3; i++) {
			lbl[0] = "map";
			lbl[1] = maps[i];
			ks_expo_sample_u64(e, "kvmscope_engine_overflow_total", lbl, over[i]);
		}
	}
	if (replay) {
		ks_expo_family(e, "kvmscope_replay_finished", KS_EXPO_GAUGE,
			       "1 once the replayed input was read to its end.", NULL);
		ks_expo_sample_u64(e, "kvmscope_replay_finished", NULL, done);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		ks_expo_family(e, "process_cpu_seconds", KS_EXPO_COUNTER,
			       "User and system CPU time of the exporter.", "seconds");
		ks_expo_sample(e, "process_cpu_seconds_total", NULL,
			       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	}
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%*d %ld", &rss_pages) == 1) {
			ks_expo_family(e, "process_resident_memory_bytes", KS_EXPO_GAUGE,
				       "Resident memory of the exporter.", "bytes");
			ks_expo_sample(e, "process_resident_memory_bytes", NULL,
				       (double)rss_pages * (double)sysconf(_SC_PAGESIZE));
		}
		fclose(f);
	}
	ks_expo_family(e, "process_start_time_seconds", KS_EXPO_GAUGE,
		       "Start of the exporter, seconds since the epoch.", "seconds");
	ks_expo_sample(e, "process_start_time_seconds", NULL, x->start_wall);
}

/* ------------------------------------------------------------------ */
/* KVM statistics over QMP and from libvirt, read at each scrape */

/* libvirt's domains: with --libvirt (a daemon not (yet) there is
 * retried at each scrape: kvmscope_libvirt_up 0); live and without
 * --qmp, also once libvirt's socket exists, looked for at each scrape
 * (the exporter may start before libvirt).  QMP connections are kept
 * open, their VMs' names asked once. */
static void kvmstats_setup(struct exporter *x)
{
	const struct exporter_args *a = x->a;
	struct ks_kvmcol_opts co = { .qmp = a->qmp, .nqmp = a->nqmp, .libvirt = a->libvirt,
				     .keep_open = true, .timeout_ms = 1000, .ctx = cli_peer_ctx() };
	struct ks_error err;

	x->lv_auto = !a->libvirt && !a->input && !a->nqmp;
	x->col = ks_kvmcol_new(&co);
	if (!x->col)
		die("out of memory");
	if (a->libvirt) {
		if (!ks_libvirt_installed(&err))
			die("%s", err.msg);
		if (ks_kvmcol_open_libvirt(x->col, &err) < 0)
			fprintf(stderr, "kvmscope exporter: %s (retried at each scrape)\n", err.msg);
	}
}

static void kvm_stat_metrics(struct ks_expo *e, struct exporter *x)
{
	if (x->lv_auto && ks_libvirt_socket_exists()) {
		struct ks_error err;

		x->lv_auto = false;
		if (ks_libvirt_installed(&err)) {
			ks_kvmcol_set_libvirt(x->col, KS_LIBVIRT_URI);
			fprintf(stderr, "kvmscope exporter: libvirt's socket exists: KVM statistics of "
				"its domains too (%s)\n", KS_LIBVIRT_URI);
		} else {
			fprintf(stderr, "kvmscope exporter: libvirt's socket exists, but %s\n", err.msg);
		}
	}
	if (!x->a->nqmp && !ks_kvmcol_libvirt_uri(x->col))
		return;
	ks_kvmcol_read(x->col);
	ks_expo_kvmstats(e, x->col, x->a->nqmp);
}

/* ---- libmicrohttpd, loaded at start ---- */

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls) *create_response_shared;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} mhd;

static void mhd_load(void)
{
#define MHD_SYM(f, n) { "MHD_" #n, offsetof(__typeof__(mhd), f) }
	static const struct {
		const char *name;
		size_t at;
	} syms[] = {
		MHD_SYM(start_daemon, start_daemon), MHD_SYM(stop_daemon, stop_daemon),
		MHD_SYM(get_daemon_info, get_daemon_info),
		MHD_SYM(get_connection_info, get_connection_info),
		MHD_SYM(create_response_from_buffer, create_response_from_buffer),
		MHD_SYM(create_response_shared, create_response_from_buffer_with_free_callback_cls),
		MHD_SYM(add_response_header, add_response_header),
		MHD_SYM(queue_response, queue_response), MHD_SYM(destroy_response, destroy_response),
		MHD_SYM(lookup_connection_value, lookup_connection_value),
	};
#undef MHD_SYM
	void *dl = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!dl)
		die("the exporter needs %s: %s (apt-get install libmicrohttpd12)", MHD_SONAME,
		    dlerror());
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(dl, syms[i].name);

		if (!f)
			die("%s has no %s", MHD_SONAME, syms[i].name);
		memcpy((char *)&mhd + syms[i].at, &f, sizeof(f));
	}
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, "Content-Type", type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, "Allow", "GET, HEAD");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* ---- the shared bodies ----
 *
 * A scrape is served from a formatted body that every scrape of the same
 * format shares while it is fresh (younger than BODY_FRESH_S): concurrent
 * scrapes format once, and each connection holds a reference, not a copy.
 * A body lives until the last connection sending it lets it go (MHD calls
 * body_release() when it destroys the response).  At most MAX_BODIES bodies
 * live at once (the latest per format and those still being sent): when
 * clients that do not read hold older ones, a scrape gets the latest body
 * even if stale, so that the bytes in flight stay within MAX_BODIES
 * snapshots however many clients there are. */
#define BODY_FRESH_S 1.0
#define MAX_BODIES 3

struct body {
	struct exporter *x;
	int refs;                /* under x->http_lock */
	enum ks_expo_format format;
	double made;
	char *buf;
	size_t len;
};

static void body_unref_locked(struct exporter *x, struct body *b)
{
	if (--b->refs > 0)
		return;
	x->nbodies--;
	free(b->buf);
	free(b);
}

static void body_release(void *cls)
{
	struct body *b = cls;
	struct exporter *x = b->x;

	pthread_mutex_lock(&x->http_lock);
	body_unref_locked(x, b);
	pthread_mutex_unlock(&x->http_lock);
}

/* The latest body of format F if it may be served now (a reference taken),
 * else NULL. */
static struct body *body_reuse(struct exporter *x, enum ks_expo_format f)
{
	struct body *b;

	pthread_mutex_lock(&x->http_lock);
	b = x->latest[f];
	if (b && (now_s() - b->made < BODY_FRESH_S || x->nbodies >= MAX_BODIES))
		b->refs++;
	else
		b = NULL;
	pthread_mutex_unlock(&x->http_lock);
	return b;
}

/* Format a new snapshot (under x->format_lock); NULL with *STATUS and
 * ERRMSG set when it could not be made. */
static struct body *body_format(struct exporter *x, enum ks_expo_format f, unsigned *status,
				char *errmsg, size_t errlen)
{
	struct ks_expo e;
	struct ks_error err;
	struct body *b, *old;
	double t0 = now_s(), eps;
	uint64_t overruns;
	bool replay, done;
	int r;

	pthread_mutex_lock(&x->lock);
	r = ks_metrics_snapshot(x->m, &x->snap, &err);
	overruns = x->overruns;
	eps = x->events_per_s;
	replay = x->replay;
	done = x->replay_done;
	pthread_mutex_unlock(&x->lock);
	*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	if (r < 0) {
		snprintf(errmsg, errlen, "%s\n", err.msg);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(errmsg, errlen, "out of memory\n");
		return NULL;
	}
	ks_expo_init(&e, f);
	ks_expo_metrics(&e, &x->snap);
	health(&e, x, overruns, eps, replay, done);
	kvm_stat_metrics(&e, x);
	ks_expo_finish(&e);
	x->last_scrape_s = now_s() - t0;
	if (e.oom) {
		ks_expo_free(&e);
		free(b);
		snprintf(errmsg, errlen, "out of memory\n");
		return NULL;
	}
	b->x = x;
	b->format = f;
	b->made = now_s();
	b->buf = e.buf;
	b->len = e.len;
	b->refs = 2; /* x->latest[f] and the caller */
	pthread_mutex_lock(&x->http_lock);
	old = x->latest[f];
	x->latest[f] = b;
	x->nbodies++;
	if (old)
		body_unref_locked(x, old);
	pthread_mutex_unlock(&x->http_lock);
	return b;
}

static enum MHD_Result serve_metrics(struct exporter *x, struct MHD_Connection *conn)
{
	const char *accept = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	enum ks_expo_format f = ks_expo_negotiate(accept);
	struct MHD_Response *r;
	struct body *b = body_reuse(x, f);
	enum MHD_Result ret;

	if (!b) {
		char msg[sizeof(((struct ks_error *)0)->msg) + 2];
		unsigned status;

		/* one scrape formats at a time; those that waited for it
		 * take what it made */
		pthread_mutex_lock(&x->format_lock);
		b = body_reuse(x, f);
		if (!b)
			b = body_format(x, f, &status, msg, sizeof(msg));
		pthread_mutex_unlock(&x->format_lock);
		if (!b) {
			pthread_mutex_lock(&x->http_lock);
			x->scrape_errors++;
			pthread_mutex_unlock(&x->http_lock);
			return reply(conn, status, "text/plain; charset=utf-8", msg, strlen(msg),
				     MHD_RESPMEM_MUST_COPY);
		}
	}
	pthread_mutex_lock(&x->http_lock);
	x->scrapes++;
	pthread_mutex_unlock(&x->http_lock);
	r = mhd.create_response_shared(b->len, b->buf, body_release, b);
	if (!r) {
		body_release(b);
		return MHD_NO;
	}
	mhd.add_response_header(r, "Content-Type", ks_expo_content_type(b->format));
	ret = mhd.queue_response(conn, MHD_HTTP_OK, r);
	mhd.destroy_response(r);
	return ret;
}

/* ---- connections: the deadline of a request's head ----
 *
 * libmicrohttpd's connection timeout restarts with every byte received: a
 * client sending one header line every few seconds would keep its
 * connection for ever.  Each connection is listed here from its accept()
 * on, with the time its current request began to be awaited (the accept,
 * or the end of the previous request); the sweeper thread shuts down
 * every connection whose request head has not been read whole
 * head_timeout seconds after that, whatever it sent meanwhile.
 * libmicrohttpd then closes it (its read fails).  An entry is unlinked
 * when libmicrohttpd says the connection is closed, before it closes the
 * socket, under http_lock as is the sweeper's shutdown(): the descriptor
 * shut down is never one reused by another connection. */
struct conn_info {
	struct conn_info *prev, *next;
	int fd;
	double since;            /* awaiting the request head since */
	bool in_request;         /* the head was read; a response is on its way */
	bool shut;
};

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct exporter *x = cls;
	struct conn_info *ci = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		ci = calloc(1, sizeof(*ci));
		if (!ci)
			return; /* not listed: the idle timeout still applies */
		ci->fd = i ? i->connect_fd : -1;
		ci->since = now_s();
		pthread_mutex_lock(&x->http_lock);
		ci->next = x->conns;
		if (x->conns)
			x->conns->prev = ci;
		x->conns = ci;
		pthread_mutex_unlock(&x->http_lock);
		*socket_context = ci;
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_CLOSED || !ci)
		return;
	pthread_mutex_lock(&x->http_lock);
	if (ci->prev)
		ci->prev->next = ci->next;
	else
		x->conns = ci->next;
	if (ci->next)
		ci->next->prev = ci->prev;
	pthread_mutex_unlock(&x->http_lock);
	free(ci);
	*socket_context = NULL;
}

static struct conn_info *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct exporter *x = cls;
	struct conn_info *ci = conn_of(conn);

	(void)con_cls;
	(void)toe;
	if (!ci)
		return;
	pthread_mutex_lock(&x->http_lock);
	ci->in_request = false;
	ci->since = now_s();
	pthread_mutex_unlock(&x->http_lock);
}

static void *sweeper(void *arg)
{
	struct exporter *x = arg;

	pthread_mutex_lock(&x->http_lock);
	while (!x->sweeper_stop) {
		struct timespec ts;
		struct conn_info *ci;
		double t = now_s();
		int f;

		/* a stale body that no connection is sending is not kept (one
		 * that is stays the latest: the bodies stay counted) */
		for (f = 0; f < 2; f++)
			if (x->latest[f] && x->latest[f]->refs == 1 &&
			    t - x->latest[f]->made >= BODY_FRESH_S) {
				body_unref_locked(x, x->latest[f]);
				x->latest[f] = NULL;
			}
		for (ci = x->conns; ci; ci = ci->next)
			if (!ci->in_request && !ci->shut && ci->fd >= 0 &&
			    t - ci->since > x->a->head_timeout) {
				shutdown(ci->fd, SHUT_RDWR);
				ci->shut = true;
			}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&x->sweeper_cv, &x->http_lock, &ts);
	}
	pthread_mutex_unlock(&x->http_lock);
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static char not_found[] = "not found: try /metrics\n";
	static char not_allowed[] = "method not allowed: GET or HEAD\n";
	struct exporter *x = cls;

	(void)version;
	(void)upload;
	if (!*con_cls) { /* first call: the head is read */
		struct conn_info *ci = conn_of(conn);

		*con_cls = (void *)1;
		if (ci) {
			pthread_mutex_lock(&x->http_lock);
			ci->in_request = true;
			pthread_mutex_unlock(&x->http_lock);
		}
		/* other methods are refused before their body is read (the
		 * connection is then closed after the reply) */
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				     not_allowed, sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
		return MHD_YES;
	}
	if (*upload_size) { /* a GET with a body: ignored */
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics"))
		return serve_metrics(x, conn);
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)index_page,
			     sizeof(index_page) - 1, MHD_RESPMEM_PERSISTENT);
	return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
		     sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);
}

/* Parse "ADDR:PORT" or "[V6ADDR]:PORT" into SA; dies with a usage error. */
static socklen_t parse_listen(const char *s, struct sockaddr_storage *sa)
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

static struct MHD_Daemon *start_http(struct exporter *x)
{
	struct sockaddr_storage sa;
	socklen_t len = parse_listen(x->a->listen, &sa);
	/* a pool of threads, each polling its share of the connections: a
	 * scrape being formatted holds up only its thread's other clients */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t block, old;
	char host[NI_MAXHOST] = "";
	unsigned timeout = (unsigned)ceil(x->a->head_timeout);

	(void)len;
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* the HTTP threads take no signals: they go to the main loop */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = mhd.start_daemon(flags, 0, NULL, NULL, handle, x, MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&sa,
			     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)x->a->max_conns,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)x->a->max_per_addr,
			     /* idle or not reading: closed after this long without progress */
			     MHD_OPTION_CONNECTION_TIMEOUT, timeout ? timeout : 1u,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, x,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, x,
			     MHD_OPTION_END);
	if (d && pthread_create(&x->sweeper_thread, NULL, sweeper, x) == 0)
		x->sweeper_running = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d)
		die("cannot listen on %s: %s", x->a->listen,
		    errno ? strerror(errno) : "the HTTP server did not start");
	if (!x->sweeper_running)
		die("cannot start the HTTP server's sweeper thread");
	info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	getnameinfo((struct sockaddr *)&sa, sizeof(sa), host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	fprintf(stderr, "kvmscope exporter: listening on http://%s%s%s:%u/metrics\n",
		sa.ss_family == AF_INET6 ? "[" : "", host, sa.ss_family == AF_INET6 ? "]" : "",
		info ? (unsigned)info->port : 0);
	return d;
}

static void stop_http(struct exporter *x, struct MHD_Daemon *d)
{
	int f;

	mhd.stop_daemon(d);
	pthread_mutex_lock(&x->http_lock);
	x->sweeper_stop = true;
	pthread_cond_signal(&x->sweeper_cv);
	pthread_mutex_unlock(&x->http_lock);
	pthread_join(x->sweeper_thread, NULL);
	for (f = 0; f < 2; f++)
		if (x->latest[f])
			body_unref_locked(x, x->latest[f]);
}

/* ------------------------------------------------------------------ */
/* ingestion */

/* Once a second: the event rate (and, live, the kernel's losses). */
struct rate_clock {
	double t;
	uint64_t records;
};

static void tick(struct exporter *x, struct rate_clock *rc, struct ks_live *l, uint64_t records)
{
	double t = now_s();
	uint64_t lost;

	if (t - rc->t < 1.0)
		return;
	lost = l ? ks_live_kernel_lost(l) : 0;
	pthread_mutex_lock(&x->lock);
	x->events_per_s = (double)(records - rc->records) / (t - rc->t);
	if (l)
		x->overruns = lost;
	pthread_mutex_unlock(&x->lock);
	rc->t = t;
	rc->records = records;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void replay_once(struct exporter *x, struct ks_source *src, struct rate_clock *rc,
			uint64_t *total)
{
	struct ks_record recs[BATCH];
	struct ks_error err;
	double wall0 = now_s();
	uint64_t ts0 = 0, n = 0;
	int r, i;

	while (!cli_live_interrupted() && (r = ks_source_next_batch(src, recs, BATCH, &err)) > 0) {
		double target = 0;
		if (!ts0)
			for (i = 0; i < r && !ts0; i++)
				ts0 = recs[i].ts;
		n += (uint64_t)r;
		if (x->a->rate)
			target = wall0 + (double)n / (double)x->a->rate;
		else if (x->a->speed > 0 && recs[r - 1].ts > ts0)
			target = wall0 + (double)(recs[r - 1].ts - ts0) / 1e9 / x->a->speed;
		if (target - now_s() > 0.002)
			sleep_s(target - now_s());
		pthread_mutex_lock(&x->lock);
		for (i = 0; i < r; i++)
			ks_metrics_add(x->m, &recs[i]);
		pthread_mutex_unlock(&x->lock);
		*total += (uint64_t)r;
		tick(x, rc, NULL, *total);
	}
	if (r < 0 && !cli_live_interrupted())
		die("%s", err.msg);
}

static void replay(struct exporter *x, struct ks_source *src)
{
	struct rate_clock rc = { now_s(), 0 };
	struct ks_error err;
	uint64_t total = 0;
	long long pass;
	double end;

	if (x->a->hold > 0) {
		struct ks_record rec;
		int r;

		/* learn the series, then show them at zero */
		pthread_mutex_lock(&x->lock);
		while ((r = ks_source_next(src, &rec, &err)) > 0)
			ks_metrics_add(x->m, &rec);
		if (r < 0)
			die("%s", err.msg);
		ks_source_close(src);
		if (cli_source_open(&src, x->a->input, KS_OPEN_NO_SYMBOLS, NULL, &err) < 0 ||
		    ks_metrics_restart(x->m, src, &err) < 0)
			die("%s", err.msg);
		ks_metrics_zero(x->m);
		pthread_mutex_unlock(&x->lock);
		end = now_s() + x->a->hold;
		while (!cli_live_interrupted() && now_s() < end)
			sleep_s(fmin(0.1, end - now_s()));
	}
	for (pass = 0; pass < x->a->loops && !cli_live_interrupted(); pass++) {
		if (pass) {
			ks_source_close(src);
			if (cli_source_open(&src, x->a->input, KS_OPEN_NO_SYMBOLS, NULL, &err) < 0)
				die("%s", err.msg);
			pthread_mutex_lock(&x->lock);
			if (ks_metrics_restart(x->m, src, &err) < 0)
				die("%s", err.msg);
			pthread_mutex_unlock(&x->lock);
		}
		replay_once(x, src, &rc, &total);
	}
	ks_source_close(src);
	pthread_mutex_lock(&x->lock);
	x->replay_done = !cli_live_interrupted();
	x->events_per_s = 0;
	pthread_mutex_unlock(&x->lock);
	end = now_s() + (x->a->linger_set ? x->a->linger : 1e18);
	while (!cli_live_interrupted() && now_s() < end)
		sleep_s(fmin(0.1, end - now_s()));
}

static void live(struct exporter *x, struct ks_source *src, struct ks_live *l)
{
	struct rate_clock rc = { now_s(), 0 };
	struct ks_record recs[BATCH];
	struct ks_error err;
	uint64_t total = 0;
	int r, i;

	while (!cli_live_interrupted()) {
		while ((r = ks_source_next_batch(src, recs, BATCH, &err)) > 0) {
			pthread_mutex_lock(&x->lock);
			for (i = 0; i < r; i++)
				ks_metrics_add(x->m, &recs[i]);
			pthread_mutex_unlock(&x->lock);
			total += (uint64_t)r;
			tick(x, &rc, l, total);
		}
		if (r < 0)
			die("%s", err.msg);
		tick(x, &rc, l, total);
		ks_live_wait(l, -1, 100, NULL);
	}
}

/* Live through the engine: its counts since the last reading into the
 * metrics every quarter of a second (a scrape sees them that fresh). */
static void live_engine(struct exporter *x)
{
	struct rate_clock rc = { now_s(), 0 };
	uint64_t total = 0;
	struct ks_error err;
	double next = now_s();

	while (!cli_live_interrupted()) {
		struct ks_engine_snapshot *prev = &x->esnap[x->ecur], *cur = &x->esnap[!x->ecur];
		uint64_t events = 0;
		size_t i;

		ks_engine_wait(x->eng, -1, 100, NULL);
		if (now_s() < next)
			continue;
		next = now_s() + 0.25;
		if (ks_engine_read(x->eng, cur, &err) < 0 ||
		    ks_engine_delta(prev, cur, &x->edelta, &err) < 0)
			die("%s", err.msg);
		/* the events counted: every kvm:* tracepoint */
		for (i = 0; i < x->edelta.ntps; i++)
			events += x->edelta.tps[i].count;
		pthread_mutex_lock(&x->lock);
		ks_metrics_add_engine(x->m, &x->edelta, events);
		x->overruns = cur->lost;
		x->overflow[0] = cur->overflow_series;
		x->overflow[1] = cur->overflow_threads;
		x->overflow[2] = cur->overflow_procs;
		pthread_mutex_unlock(&x->lock);
		x->ecur = !x->ecur;
		total += events;
		tick(x, &rc, NULL, total);
	}
}

static struct ks_live *open_live(struct exporter_args *a, struct ks_source **src)
{
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct ks_live *l;
	struct ks_error err;

	o.pids = a->pids;
	o.npids = (size_t)a->npids;
	o.clock = "mono";
	o.buffer_kb = 4096;
	o.track = cli_live_track;
	o.ctx = cli_ctx();
	if (ks_live_create(&l, &o, &err) < 0)
		die("%s", err.msg);
	if (ks_live_source_open(src, l, &err) < 0 || ks_live_start(l, &err) < 0)
		die("%s", err.msg);
	return l;
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter_args a = { 0 };
	struct exporter x = { .a = &a };
	struct ks_metrics_config cfg = KS_METRICS_CONFIG_INIT;
	struct ks_source *src = NULL;
	struct ks_live *l = NULL;
	struct MHD_Daemon *d;
	struct ks_error err;
	struct timespec wall;
	double cpu0, t0;

	parse_args(&a, argc, argv);
	/* the bodies (megabytes) are mapped and given back when the last
	 * connection lets them go: without a fixed threshold glibc raises it
	 * after the first free, and each HTTP thread's arena then keeps the
	 * largest body it ever formatted */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mhd_load();
	signal(SIGPIPE, SIG_IGN);
	cli_live_catch_signals();
	clock_gettime(CLOCK_REALTIME, &wall);
	x.start_wall = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
	pthread_mutex_init(&x.lock, NULL);
	pthread_mutex_init(&x.format_lock, NULL);
	pthread_mutex_init(&x.http_lock, NULL);
	pthread_cond_init(&x.sweeper_cv, NULL);
	cfg.max_vms = (uint32_t)a.max_vms;
	cfg.max_series = (uint32_t)a.max_series;
	cfg.max_histograms = (uint32_t)a.max_hists;
	kvmstats_setup(&x);
	if (a.input) {
		if (cli_source_open(&src, a.input, KS_OPEN_NO_SYMBOLS, NULL, &err) < 0)
			die("%s", err.msg);
		x.replay = true;
	} else {
		cfg.vm_name = qemu_name;
		cfg.vm_alive = vm_alive;
		cfg.rotate_records = 16777216;
		if (a.npids > 1) {
			l = open_live(&a, &src);
		} else {
			struct ks_engine_config ec = KS_ENGINE_CONFIG_INIT;

			ec.kind = (enum ks_engine_kind)a.engine;
			ec.exits = true;
			ec.tracepoints = true; /* kvmscope_events_total */
			ec.max_series = a.max_series ? (uint32_t)a.max_series : 65536;
			ec.max_procs = a.max_vms ? (uint32_t)a.max_vms : 1024;
			if (a.npids == 1)
				ec.pid = a.pids[0];
			x.eng = cli_engine_open("exporter", &ec);
			if (ks_engine_read(x.eng, &x.esnap[0], &err) < 0)
				die("%s", err.msg);
		}
	}
	if (a.rotate)
		cfg.rotate_records = (uint64_t)a.rotate;
	x.m = x.eng ? ks_metrics_new_engine(&cfg, &err) : ks_metrics_new(&cfg, src, &err);
	if (!x.m)
		die("%s", err.msg);
	d = start_http(&x);
	cpu0 = cpu_s();
	t0 = now_s();
	if (a.input)
		replay(&x, src);
	else if (x.eng)
		live_engine(&x);
	else
		live(&x, src, l);
	stop_http(&x, d);
	if (getenv("KVMSCOPE_EXPORTER_STATS")) {
		struct ks_metrics_snapshot s = { 0 };
		if (ks_metrics_snapshot(x.m, &s, &err) == 0)
			fprintf(stderr, "kvmscope exporter: %llu records, %.3f s CPU, %.3f s wall, "
				"%llu scrapes, last scrape %.6f s\n", (unsigned long long)s.records,
				cpu_s() - cpu0, now_s() - t0, (unsigned long long)x.scrapes,
				x.last_scrape_s);
		ks_metrics_snapshot_free(&s);
	}
	ks_metrics_snapshot_free(&x.snap);
	ks_kvmcol_free(x.col);
	ks_metrics_free(x.m);
	if (!a.input && !x.eng) {
		ks_source_close(src);
		ks_live_destroy(l);
	}
	ks_engine_close(x.eng);
	ks_engine_snapshot_free(&x.esnap[0]);
	ks_engine_snapshot_free(&x.esnap[1]);
	ks_engine_snapshot_free(&x.edelta);
	pthread_mutex_destroy(&x.lock);
	pthread_mutex_destroy(&x.format_lock);
	pthread_mutex_destroy(&x.http_lock);
	pthread_cond_destroy(&x.sweeper_cv);
	return 0;
}
