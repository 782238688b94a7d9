/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_loop.c - the intervals of kvmscope top.  A replay reads the input's
 * records and closes an interval at each -d of trace time (waiting the
 * recorded time unless --fast); live, the records of the tracefs instance
 * or the counts of a live engine are drained and an interval closes every
 * -d seconds of wall time.  Closing one reads the statistics views' VMs
 * (kvmstats_collect.h) when such a view shows, then shows the interval:
 * on the screen, or printed.  Keys are handled while waiting.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/host.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/live.h"
#include "kvmscope/source.h"
#include "kvmscope/tpcount.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the statistics views: reading the VMs (kvmstats_collect.h) */

void top_kvmcol_setup(struct top_state *s)
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

void top_read_kvmstats(struct top_state *s)
{
	top_kvmcol_setup(s);
	ks_kvmcol_read(s->col);
	if (ks_kvmcol_status(s->col)[0])
		snprintf(s->status, sizeof(s->status), "%s", ks_kvmcol_status(s->col));
}

/* ------------------------------------------------------------------ */
/* intervals */

/* One interval: on the screen (unless paused), or printed. */
static void show(struct top_state *s)
{
	if (s->screen) {
		if (!s->paused || s->need_draw)
			top_draw_screen(s);
		s->need_draw = false;
	} else if (s->a->csv) {
		top_print_csv(s);
	} else if (s->a->json) {
		top_print_json(s);
	} else {
		top_print_text(s);
	}
}

/* The engine's counts since the last interval into the views. */
static void engine_interval(struct top_state *s, uint64_t end_ns)
{
	struct ks_engine_snapshot *prev = &s->snap[s->cur], *now = &s->snap[!s->cur];
	uint64_t events = 0, interval;
	struct ks_error err;
	size_t i;

	if (ks_engine_read(s->eng, now, &err) < 0 ||
	    ks_engine_delta(prev, now, &s->delta, &err) < 0) {
		top_screen_end();
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
		top_screen_end();
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
		top_screen_end();
		die("%s", err.msg);
	}
	if (s->tp)
		ks_tpcount_interval(s->tp);
	s->last_secs = s->last_close > 0 ? t - s->last_close : s->a->delay;
	s->last_close = t;
	if (STATS_VIEW(s->a->view) && s->live)
		top_read_kvmstats(s);
	s->end_ns = end_ns;
	s->interval++;
	show(s);
	if (s->a->iterations && s->interval >= s->a->iterations)
		s->quit = true;
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
		top_handle_keys(s);
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
		top_screen_end();
		die("%s", err.msg);
	}
	ks_top_add(s->top, rec);
	ks_tpcount_add(s->tp, rec);
}

void top_replay(struct top_state *s)
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
			top_screen_end();
			die("%s", err.msg);
		}
		if (any)
			close_interval(s, boundary);
		/* the screen stays until q */
		while (s->screen && !s->quit && !cli_live_interrupted())
			sleep_until(s, now_s() + 0.2, NULL);
	}
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
		top_screen_end();
		die("%s", err.msg);
	}
}

void top_live_loop(struct top_state *s, struct ks_live *l)
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
