/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter_impl.h - what the exporter's files share: the options
 * (struct exporter_args), the state the ingestion loop and the HTTP
 * threads share (struct exporter, with which lock guards what), and the
 * functions one file gives the others.
 *
 *	cmd_exporter.c         the command: options, start, run, stop
 *	cmd_exporter_http.c    the HTTP server (libmicrohttpd, loaded at start):
 *	                       requests, the connection limits and the
 *	                       deadline of a request's head
 *	cmd_exporter_scrape.c  a scrape: the shared formatted bodies, the
 *	                       exporter's health and KVM's statistics
 *	cmd_exporter_loop.c    the ingestion loops: replay, live records, live
 *	                       engine; the VMs' names
 */
#ifndef KVMSCOPE_CLI_CMD_EXPORTER_IMPL_H
#define KVMSCOPE_CLI_CMD_EXPORTER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "kvmscope/engine.h"
#include "kvmscope/metrics.h"
#include "kvmscope/openmetrics.h"

#define MAX_PIDS 256
#define MAX_QMP 256

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

struct ks_kvmcol;

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

/* A formatted scrape that connections share (cmd_exporter_scrape.c). */
struct body {
	struct exporter *x;
	int refs;                /* under x->http_lock */
	enum ks_expo_format format;
	double made;
	char *buf;
	size_t len;
};

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* cmd_exporter.c: "ADDR:PORT" or "[V6ADDR]:PORT" into SA; dies with a
 * usage error. */
socklen_t exporter_parse_listen(const char *s, struct sockaddr_storage *sa);

/* cmd_exporter_http.c */
struct MHD_Daemon;
/* Load libmicrohttpd (dies when it is not installed). */
void exporter_mhd_load(void);
/* Listen on --listen (the address printed on stderr), with the sweeper
 * thread of the connections' deadlines; dies when it cannot. */
struct MHD_Daemon *exporter_http_start(struct exporter *x);
void exporter_http_stop(struct exporter *x, struct MHD_Daemon *d);

/* cmd_exporter_scrape.c */
/* The body of a scrape of format F, a reference taken (counted in
 * x->scrapes); NULL with *STATUS and ERRMSG set when none could be made
 * (counted in x->scrape_errors). */
struct body *exporter_body_get(struct exporter *x, enum ks_expo_format f, unsigned *status,
			       char *errmsg, size_t errlen);
/* Let a body go (libmicrohttpd's free callback of a response). */
void exporter_body_release(void *cls);
/* Under http_lock: drop the latest bodies that are stale at T and that no
 * connection is sending. */
void exporter_bodies_sweep_locked(struct exporter *x, double t);
/* At the end, the HTTP threads stopped: let the latest bodies go. */
void exporter_bodies_free(struct exporter *x);
/* KVM's statistics (--qmp, --libvirt): the collector set up. */
void exporter_kvmstats_setup(struct exporter *x);

/* cmd_exporter_loop.c: ingestion until SIGTERM or SIGINT (a replay: until
 * its end and --linger). */
struct ks_live;
struct ks_source;
void exporter_replay(struct exporter *x, struct ks_source *src);
void exporter_live(struct exporter *x, struct ks_source *src, struct ks_live *l);
void exporter_live_engine(struct exporter *x);
struct ks_live *exporter_open_live(struct exporter_args *a, struct ks_source **src);
/* The metrics' VM callbacks (live): alive, and its name. */
bool exporter_vm_alive(void *ctx, int32_t pid);
bool exporter_vm_name(void *ctx, int32_t pid, char *out, size_t len);

#endif
