/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_keys.c - the keys of kvmscope top's screen (h shows them all): each
 * changes the view, its filters, sorting or scrolling, or the run (pause,
 * interval, reset of the totals), then the screen is redrawn.
 */
#include <curses.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/limits.h"
#include "kvmscope/tpcount.h"

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

/* To VIEW; a statistics view with no VM known reads them at once. */
static void view_switched(struct top_state *s, int view)
{
	size_t nvms;

	s->a->view = view;
	s->scroll = 0;
	top_stats_vms(s, &nvms);
	if (STATS_VIEW(view) && s->live && !nvms)
		top_read_kvmstats(s);
}

/* Each key's action; CH is the key (the view keys read it). */
static void key_quit(struct top_state *s, int ch)
{
	(void)ch;
	s->quit = true;
}

static void key_help(struct top_state *s, int ch)
{
	(void)ch;
	s->help = true;
}

static void key_pause(struct top_state *s, int ch)
{
	(void)ch;
	s->paused = !s->paused;
}

/* 1 2 3 4: the view of that number */
static void key_view(struct top_state *s, int ch)
{
	view_switched(s, ch - '1');
}

static void key_next_view(struct top_state *s, int ch)
{
	(void)ch;
	view_switched(s, (s->a->view + 1) % NR_VIEWS);
}

static void key_children(struct top_state *s, int ch)
{
	(void)ch;
	s->children = !s->children;
}

static void key_skip_zero(struct top_state *s, int ch)
{
	(void)ch;
	s->a->skip_zero = !s->a->skip_zero;
}

static void key_vcpus(struct top_state *s, int ch)
{
	(void)ch;
	s->a->vcpus = !s->a->vcpus;
}

static void key_next_sort(struct top_state *s, int ch)
{
	(void)ch;
	s->a->sort = (s->a->sort + 1) % 4;
}

/* E T P: sort by exits, time or p99 (top_sort_columns' order) */
static void key_sort(struct top_state *s, int ch)
{
	s->a->sort = ch == 'E' ? 0 : ch == 'T' ? 1 : 2;
}

static void key_reset(struct top_state *s, int ch)
{
	(void)ch;
	reset_totals(s);
	snprintf(s->status, sizeof(s->status), "totals reset after interval #%ld", s->interval);
}

static void key_clear(struct top_state *s, int ch)
{
	(void)ch;
	top_set_filter(s, NULL);
	s->guest[0] = 0;
	s->pid_filter = 0;
}

static void key_filter(struct top_state *s, int ch)
{
	char line[128];

	(void)ch;
	if (top_prompt(s, "filter (regex, empty clears): ", line, sizeof(line)))
		top_set_filter(s, line);
	else
		top_set_filter(s, NULL);
}

static void key_guest(struct top_state *s, int ch)
{
	char line[128];

	(void)ch;
	if (top_prompt(s, "guest name (empty for all): ", line, sizeof(line)))
		snprintf(s->guest, sizeof(s->guest), "%.63s", line);
	else
		s->guest[0] = 0;
}

static void key_pid(struct top_state *s, int ch)
{
	char line[128];
	long long v;

	(void)ch;
	if (!top_prompt(s, "pid (empty for all): ", line, sizeof(line)))
		s->pid_filter = 0;
	else if (parse_whole(line, 1, INT32_MAX, &v) == 0)
		s->pid_filter = (int32_t)v;
	else
		snprintf(s->status, sizeof(s->status), "not a process id: '%.40s'", line);
}

static void key_interval(struct top_state *s, int ch)
{
	char line[128];
	double d;

	(void)ch;
	if (!top_prompt(s, "interval in seconds: ", line, sizeof(line)))
		return;
	if (ks_parse_seconds(line, strlen(line), &d) < 0 || !(d >= 0.01) || d > 86400)
		snprintf(s->status, sizeof(s->status), "the interval is 0.01 to 86400 s, not '%.40s'",
			 line);
	else
		s->a->delay = d;
}

/* Up Down PgUp PgDn Home: the first row shown (draw_screen keeps it in
 * range); a page is the screen's height less the title, heads and footer */
static void key_scroll(struct top_state *s, int ch)
{
	int page = LINES - 3 > 1 ? LINES - 3 : 1;

	switch (ch) {
	case KEY_UP: s->scroll--; break;
	case KEY_DOWN: s->scroll++; break;
	case KEY_PPAGE: s->scroll -= page; break;
	case KEY_NPAGE: s->scroll += page; break;
	default: s->scroll = 0; break; /* KEY_HOME */
	}
}

/* a resize: only the redraw */
static void key_redraw(struct top_state *s, int ch)
{
	(void)s;
	(void)ch;
}

static const struct key_binding {
	int key;
	void (*act)(struct top_state *s, int ch);
} key_bindings[] = {
	{ 'q', key_quit }, { 'Q', key_quit }, { 'h', key_help }, { '?', key_help },
	{ ' ', key_pause },
	{ '1', key_view }, { '2', key_view }, { '3', key_view }, { '4', key_view },
	{ '\t', key_next_view },
	{ 'x', key_children }, { 'z', key_skip_zero }, { 'v', key_vcpus },
	{ 'o', key_next_sort }, { 'E', key_sort }, { 'T', key_sort }, { 'P', key_sort },
	{ 'r', key_reset }, { 'c', key_clear }, { 'f', key_filter }, { 'g', key_guest },
	{ 'p', key_pid }, { 's', key_interval },
	{ KEY_UP, key_scroll }, { KEY_DOWN, key_scroll }, { KEY_PPAGE, key_scroll },
	{ KEY_NPAGE, key_scroll }, { KEY_HOME, key_scroll }, { KEY_RESIZE, key_redraw },
};

/* Key CH: any key leaves the help page; a bound key clears the status
 * line, acts and asks for a redraw, another only clears the status. */
static void handle_key(struct top_state *s, int ch)
{
	size_t i;

	if (s->help) {
		s->help = false;
		return;
	}
	s->status[0] = 0;
	for (i = 0; i < sizeof(key_bindings) / sizeof(key_bindings[0]); i++)
		if (key_bindings[i].key == ch) {
			key_bindings[i].act(s, ch);
			s->need_draw = true;
			return;
		}
}

void top_handle_keys(struct top_state *s)
{
	int ch;

	if (!s->screen)
		return;
	while ((ch = getch()) != ERR && !s->quit)
		handle_key(s, ch);
	if (s->need_draw && !s->quit)
		top_draw_screen(s);
	s->need_draw = false;
}
