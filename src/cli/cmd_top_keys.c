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

#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/kvmstats_collect.h"
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
		top_set_filter(s, NULL);
		s->guest[0] = 0;
		s->pid_filter = 0;
		break;
	case 'f':
		if (top_prompt(s, "filter (regex, empty clears): ", line, sizeof(line)))
			top_set_filter(s, line);
		else
			top_set_filter(s, NULL);
		break;
	case 'g':
		if (top_prompt(s, "guest name (empty for all): ", line, sizeof(line)))
			snprintf(s->guest, sizeof(s->guest), "%.63s", line);
		else
			s->guest[0] = 0;
		break;
	case 'p': {
		long long v;

		if (!top_prompt(s, "pid (empty for all): ", line, sizeof(line)))
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

		if (!top_prompt(s, "interval in seconds: ", line, sizeof(line)))
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
