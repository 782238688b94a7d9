/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter_scrape.c - what a scrape of the exporter serves
 * (cmd_exporter_impl.h): a snapshot of the metrics taken under the lock
 * the ingestion loop holds for each batch (a few memcpy()s), formatted
 * without it with the exporter's own health and KVM's statistics (QMP,
 * libvirt; read at each scrape), into a body that the scrapes of the next
 * second share.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "cmd_exporter_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/kvmstats_expo.h"
#include "kvmscope/metrics.h"
#include "kvmscope/openmetrics.h"

/* ------------------------------------------------------------------ */
/* the exporter's health */

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
void exporter_kvmstats_setup(struct exporter *x)
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

/* ------------------------------------------------------------------ */
/* the shared bodies
 *
 * A scrape is served from a formatted body that every scrape of the same
 * format shares while it is fresh (younger than BODY_FRESH_S): concurrent
 * scrapes format once, and each connection holds a reference, not a copy.
 * A body lives until the last connection sending it lets it go (MHD calls
 * exporter_body_release() when it destroys the response).  At most
 * MAX_BODIES bodies live at once (the latest per format and those still
 * being sent): when clients that do not read hold older ones, a scrape
 * gets the latest body even if stale, so that the bytes in flight stay
 * within MAX_BODIES snapshots however many clients there are. */
#define BODY_FRESH_S 1.0
#define MAX_BODIES 3

static void body_unref_locked(struct exporter *x, struct body *b)
{
	if (--b->refs > 0)
		return;
	x->nbodies--;
	free(b->buf);
	free(b);
}

void exporter_body_release(void *cls)
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

struct body *exporter_body_get(struct exporter *x, enum ks_expo_format f, unsigned *status,
			       char *errmsg, size_t errlen)
{
	struct body *b = body_reuse(x, f);

	if (!b) {
		/* one scrape formats at a time; those that waited for it
		 * take what it made */
		pthread_mutex_lock(&x->format_lock);
		b = body_reuse(x, f);
		if (!b)
			b = body_format(x, f, status, errmsg, errlen);
		pthread_mutex_unlock(&x->format_lock);
		if (!b) {
			pthread_mutex_lock(&x->http_lock);
			x->scrape_errors++;
			pthread_mutex_unlock(&x->http_lock);
			return NULL;
		}
	}
	pthread_mutex_lock(&x->http_lock);
	x->scrapes++;
	pthread_mutex_unlock(&x->http_lock);
	return b;
}

void exporter_bodies_sweep_locked(struct exporter *x, double t)
{
	int f;

	/* a stale body that no connection is sending is not kept (one
	 * that is stays the latest: the bodies stay counted) */
	for (f = 0; f < 2; f++)
		if (x->latest[f] && x->latest[f]->refs == 1 &&
		    t - x->latest[f]->made >= BODY_FRESH_S) {
			body_unref_locked(x, x->latest[f]);
			x->latest[f] = NULL;
		}
}

void exporter_bodies_free(struct exporter *x)
{
	int f;

	for (f = 0; f < 2; f++)
		if (x->latest[f])
			body_unref_locked(x, x->latest[f]);
}
