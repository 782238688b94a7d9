/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter_loop.c - the exporter's ingestion (cmd_exporter_impl.h):
 * the records of a replay (at the recorded speed, a multiple of it, a
 * fixed event rate or as fast as possible) or of live tracing, or the
 * live engine's counts, into the metrics under the lock that a scrape's
 * snapshot takes, one batch at a time; the event rate once a second; and
 * the VMs' names, live.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_exporter_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/live.h"
#include "kvmscope/metrics.h"
#include "kvmscope/source.h"
#include "util/procfs.h"

#define BATCH 64

/* ------------------------------------------------------------------ */
/* VM names: QEMU's -name (libvirt: "guest=NAME,..."), else the process
 * name of a VMM that is not QEMU (a QEMU without -name is named
 * "qemu-system-..." like every other: its pid says more), live only */

bool exporter_vm_alive(void *ctx, int32_t pid)
{
	(void)ctx;
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool exporter_vm_name(void *ctx, int32_t pid, char *out, size_t len)
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

void exporter_replay(struct exporter *x, struct ks_source *src)
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

void exporter_live(struct exporter *x, struct ks_source *src, struct ks_live *l)
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
void exporter_live_engine(struct exporter *x)
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

struct ks_live *exporter_open_live(struct exporter_args *a, struct ks_source **src)
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

