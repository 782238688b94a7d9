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
 * Every view is first built as a list of display rows (struct
 * ks_top_line, top_report.h) that the screen, the text, the CSV and the
 * JSON printers share.
 *
 * This file opens what the run reads (the input, the live tracefs
 * instance or engine, the models) and runs the loop; the jobs are in
 * cmd_top_options.c (the command line), cmd_top_rows.c (the rows of each
 * view), cmd_top_print.c (batch text, CSV, JSON, laid out by
 * output/top_report.c), cmd_top_screen.c and cmd_top_keys.c (the ncurses
 * screen and its keys) and cmd_top_loop.c (the intervals), which share
 * cmd_top_impl.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/engine.h"
#include "kvmscope/host.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/live.h"
#include "kvmscope/source.h"
#include "kvmscope/top.h"
#include "kvmscope/tpcount.h"
#include "options.h"

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

/* -f and -g: the filters the screen's f and g keys change later. */
static void set_filters(struct top_state *s)
{
	if (s->a->fields)
		top_set_filter(s, s->a->fields);
	if (s->status[0])
		usage_error("top", "-f: %s", s->status);
	if (s->a->guest)
		snprintf(s->guest, sizeof(s->guest), "%s", s->a->guest);
}

/* A libvirt that --libvirt names but that cannot be reached is an
 * error at once; later failures show as a row, and it reconnects. */
static void check_libvirt(struct top_state *s)
{
	struct ks_error err;

	if (!s->a->libvirt)
		return;
	top_kvmcol_setup(s);
	if (ks_kvmcol_open_libvirt(s->col, &err) < 0)
		die("%s", err.msg);
}

/* What the run reads: the input (-i), or live the tracefs instance
 * (returned) or engine; nothing for a statistics view alone. */
static struct ks_live *open_reading(struct top_state *s)
{
	const struct top_args *a = s->a;
	struct ks_live *l = NULL;
	struct ks_error err;

	if (a->input) {
		if (cli_source_open(&s->src, a->input, KS_OPEN_NO_SYMBOLS, &a->limits, &err) < 0)
			die("%s", err.msg);
		apply_time_window(s->src, a->input, &a->time);
		s->tracing = true;
		return NULL;
	}
	s->live = true;
	/* the kvmstats view alone needs no tracing (nor root for tracefs) */
	if (!STATS_VIEW(a->view) || a->nevents) {
		if (a->nevents || a->than.set || a->npids > 1)
			l = open_live(s);
		else
			open_engine(s);
		s->tracing = true;
	}
	return l;
}

/* The models of a live engine's counts: one that observes nothing
 * (names come from /proc: top_vm_name). */
static void new_engine_models(struct top_state *s)
{
	struct ks_error err;

	s->host = ks_host_new(NULL, NULL, &err);
	if (!s->host)
		die("%s", err.msg);
	s->top = ks_top_new_engine(NULL, &err);
	s->tp = s->top ? ks_tpcount_new(NULL, NULL, &err) : NULL;
	if (!s->top || !s->tp)
		die("%s", err.msg);
}

/* The models of records (a replay, or the tracefs instance), and
 * --than's observer of slow exits. */
static void new_record_models(struct top_state *s)
{
	const struct top_args *a = s->a;
	struct ks_error err;

	s->host = ks_host_new(NULL, s->src, &err);
	if (!s->host)
		die("%s", err.msg);
	ks_host_set_limits(s->host, ks_source_limits(s->src));
	s->top = ks_top_new(s->src, s->host, &err);
	if (!s->top)
		die("%s", err.msg);
	s->tp = ks_tpcount_new(s->src, s->host, &err);
	if (!s->tp)
		die("%s", err.msg);
	if (a->than.set) {
		s->slow = (struct ks_slow_log){ .out = stdout, .than_ns = a->than.ns,
						.than_text = a->than.text, .json = a->json };
		if (ks_top_observe(s->top, top_slow_exit, s, a->than.ns + 1, &err) < 0)
			die("%s", err.msg);
	}
}

static void free_state(struct top_state *s, struct ks_live *l)
{
	ks_top_free(s->top);
	ks_tpcount_free(s->tp);
	ks_host_free(s->host);
	if (s->src)
		ks_source_close(s->src);
	ks_live_destroy(l);
	ks_kvmcol_free(s->col);
	ks_engine_close(s->eng);
	ks_engine_snapshot_free(&s->snap[0]);
	ks_engine_snapshot_free(&s->snap[1]);
	ks_engine_snapshot_free(&s->delta);
	free(s->rows);
	if (s->have_re)
		regfree(&s->re);
}

/* The events the live engine could not count over the whole run (its
 * maps full, and the ring that takes what they refuse): said once at the
 * end, so that a CSV or a screen that showed them per interval is not the
 * only place they stand. */
static void say_overflow(const struct top_state *s)
{
	const struct ks_engine_snapshot *last = &s->snap[s->cur];
	uint64_t n;

	if (!s->eng)
		return;
	n = ks_engine_snapshot_overflow(last);
	if (n)
		warnx_("top: the %s engine could not count %llu events: its maps were full",
		       ks_engine_name(s->eng), (unsigned long long)n);
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { 0 };
	struct top_state s = { .a = &a, .children = true, .live_what = "live" };
	struct ks_live *l;

	top_parse_args(argc, argv, &a);
	set_filters(&s);
	check_libvirt(&s);
	cli_live_catch_signals();
	l = open_reading(&s);
	if (s.eng)
		new_engine_models(&s);
	else if (s.src)
		new_record_models(&s);
	top_setup_screen(&s);
	if (s.live)
		top_live_loop(&s, l);
	else
		top_replay(&s);
	top_screen_end();
	say_overflow(&s);
	free_state(&s, l);
	return 0;
}
