/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_screen.c - kvmscope top's ncurses screen: a title line, the column
 * heads, the rows of the view (scrolled), the latest --than exits and a
 * footer (or the status line), redrawn whole each interval and after a
 * key.  A line never wraps: the columns are dropped by priority as the
 * width narrows (struct ks_top_col's prio), the rest is clipped.  The
 * help page and the prompt of the keys that take a value are here too.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_top_impl.h"
#include "kvmscope/source.h"

static bool screen_on;

void top_screen_end(void)
{
	if (screen_on) {
		endwin();
		screen_on = false;
	}
}

void top_setup_screen(struct top_state *s)
{
	s->screen = !s->a->batch && !s->a->csv && !s->a->json && isatty(1) && isatty(0);
	if (!s->screen)
		return;
	if (!newterm(NULL, stdout, stdin)) {
		s->screen = false;
		return;
	}
	screen_on = true;
	atexit(top_screen_end);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	timeout(0);
	curs_set(0);
	s->need_draw = true;
	top_draw_screen(s);
}

/* The screen's title: the same facts, most important first, short. */
static void screen_title(const struct top_state *s, char *buf, size_t len)
{
	const char *what = s->live ? s->live_what : ks_source_path(s->src);
	const char *slash = s->live ? NULL : strrchr(what, '/');
	double secs;
	uint64_t recs;
	int n;

	if (slash && slash[1])
		what = slash + 1;
	n = snprintf(buf, len, "kvmscope top - %s", what);
	if (s->interval == 0) {
		snprintf(buf + n, len - (size_t)n, ": first interval in %.2f s", s->a->delay);
		return;
	}
	if (STATS_VIEW(s->a->view) || !s->top) {
		size_t nvms = top_stats_vms_shown(s);

		snprintf(buf + n, len - (size_t)n, " | %s | #%ld %.2fs | %zu VMs", top_view_names[s->a->view],
			 s->interval, s->last_secs, nvms);
		return;
	}
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	recs = ks_top_interval_records(s->top);
	snprintf(buf + n, len - (size_t)n, " | %s | #%ld %.2fs | %.0f ev/s | lost %llu | %s%s%s",
		 s->a->view == VIEW_EXITS ? "exits" : "tracepoints", s->interval, secs,
		 secs > 0 ? (double)recs / secs : 0.0,
		 (unsigned long long)ks_top_interval_lost(s->top), top_overflow_text(s),
		 s->a->view == VIEW_EXITS ? ks_top_arch(s->top) : "",
		 s->a->view == VIEW_EXITS ? "" : "by VM");
	if (s->a->view == VIEW_EXITS)
		snprintf(buf + strlen(buf), len - strlen(buf), " | sort %s", top_sort_columns[s->a->sort]);
}

/* Which columns fit in WIDTH next to a label of at least MIN_LABEL. */
static int fit_columns(const struct ks_top_cols *vc, int width, bool show[KS_TOP_MAX_COLS])
{
	int used = 16, c, p;

	for (c = 0; c < vc->ncols; c++)
		show[c] = false;
	for (p = 0; p < KS_TOP_MAX_COLS; p++)
		for (c = 0; c < vc->ncols; c++)
			if (vc->cols[c].prio == p && used + vc->cols[c].swidth + 1 <= width) {
				show[c] = true;
				used += vc->cols[c].swidth + 1;
			}
	used -= 16;
	return width - used; /* the label's width */
}

/* Write S at (Y, X) clipped to the screen: nothing ever wraps. */
static void put_clipped(int y, int x, const char *str)
{
	int room = COLS - x;

	if (y < 0 || y >= LINES || room <= 0)
		return;
	mvaddnstr(y, x, str, room);
}

static void draw_line(int y, const struct ks_top_cols *vc, const bool show[KS_TOP_MAX_COLS], int lw,
		      const char *label, char cells[][24])
{
	char buf[512];
	int len, c;

	len = snprintf(buf, sizeof(buf), "%-*.*s", lw, lw, label);
	for (c = 0; c < vc->ncols && len < (int)sizeof(buf) - 1; c++)
		if (show[c])
			len += snprintf(buf + len, sizeof(buf) - (size_t)len, " %*.*s", vc->cols[c].swidth,
					vc->cols[c].swidth, cells[c]);
	put_clipped(y, 0, buf);
}

static const char *const help_lines[] = {
	"kvmscope top - keys",
	"",
	"  q         quit                      h or ?   this help",
	"  space     pause / resume            r        reset the totals",
	"  1 2 3 4   exits / tracepoints /     Tab      next view",
	"            KVM statistics / halt polling view",
	"  f         filter reasons, events, statistics by regex",
	"  g         only one guest (QEMU -name or comm)",
	"  p         only one VM by process id",
	"  c         clear the filters         s        set the interval",
	"  x         child rows (reasons, kvm_exit(REASON)) on/off",
	"  z         hide rows that are zero in the interval",
	"  v         per-vCPU rows on/off",
	"  o         next sort column          E T P    sort by exits, time, p99",
	"  Up Down PgUp PgDn Home: scroll",
	"",
	"press any key to go back",
};

static void draw_help(void)
{
	size_t i;

	for (i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]) && (int)i < LINES; i++)
		put_clipped((int)i, 0, help_lines[i]);
}

/* The title line (reversed) and the column heads (bold). */
static void draw_heads(const struct top_state *s, const struct ks_top_cols *vc,
		       const bool show[KS_TOP_MAX_COLS], int lw)
{
	char t[512], hdr[KS_TOP_MAX_COLS][24];
	int c;

	screen_title(s, t, sizeof(t));
	if (s->paused)
		strncat(t, " [paused]", sizeof(t) - strlen(t) - 1);
	attron(A_REVERSE);
	mvhline(0, 0, ' ', COLS);
	put_clipped(0, 0, t);
	attroff(A_REVERSE);
	for (c = 0; c < vc->ncols; c++)
		snprintf(hdr[c], sizeof(hdr[c]), "%s", vc->cols[c].title);
	attron(A_BOLD);
	draw_line(1, vc, show, lw, vc->label_title, hdr);
	attroff(A_BOLD);
}

/* --than: the last slow exits above the footer (at most a third of the
 * screen); the lines they take from the table's body. */
static int draw_slow_exits(const struct top_state *s)
{
	char t[512];
	int k, n = (int)s->nslow;

	if (!s->nslow)
		return 0;
	if (n > LINES / 3)
		n = LINES / 3;
	snprintf(t, sizeof(t), "Exits slower than %s, the latest last:", s->a->than.text);
	attron(A_BOLD);
	put_clipped(LINES - 2 - n, 0, t);
	attroff(A_BOLD);
	for (k = 0; k < n; k++)
		put_clipped(LINES - 1 - n + k, 0, s->slow_lines[s->nslow - (unsigned)n + (unsigned)k]);
	return n + 1;
}

/* The rows from s->scroll (kept in range) in BODY lines from line 2;
 * the VM rows bold. */
static void draw_rows(struct top_state *s, const struct ks_top_cols *vc, const bool show[KS_TOP_MAX_COLS],
		      int lw, int body)
{
	size_t i;
	int y;

	if (s->scroll > (int)s->nrows - body)
		s->scroll = (int)s->nrows - body;
	if (s->scroll < 0)
		s->scroll = 0;
	if (!s->nrows && s->interval)
		put_clipped(2, 0, top_empty_text(s));
	for (i = (size_t)s->scroll, y = 2; i < s->nrows && y < 2 + body; i++, y++) {
		char label[128];

		snprintf(label, sizeof(label), "%*s%s", s->rows[i].depth * 2, "", s->rows[i].label);
		if (!s->rows[i].depth)
			attron(A_BOLD);
		draw_line(y, vc, show, lw, label, s->rows[i].cell);
		if (!s->rows[i].depth)
			attroff(A_BOLD);
	}
}

/* The bottom line (reversed): the status, else the view and filters. */
static void draw_footer(const struct top_state *s, int body)
{
	char foot[256];

	if (s->status[0])
		snprintf(foot, sizeof(foot), "%s", s->status);
	else
		snprintf(foot, sizeof(foot), "view %s%s%s%s%s%s | rows %zu%s | h help, q quit",
			 top_view_names[s->a->view], s->have_re ? " | filter on" : "",
			 s->guest[0] ? " | guest " : "", s->guest,
			 s->pid_filter > 0 ? " | pid set" : "", s->a->vcpus ? " | vCPU rows" : "",
			 s->nrows, s->nrows > (size_t)(body > 0 ? body : 0) ? " (scroll)" : "");
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	put_clipped(LINES - 1, 0, foot);
	attroff(A_REVERSE);
}

/* The whole screen, or the help page. */
void top_draw_screen(struct top_state *s)
{
	const struct ks_top_cols *vc = &top_view_cols[s->a->view];
	bool show[KS_TOP_MAX_COLS];
	int lw = fit_columns(vc, COLS, show), body;

	erase();
	if (s->help) {
		draw_help();
		refresh();
		return;
	}
	top_build_rows(s);
	draw_heads(s, vc, show, lw);
	body = LINES - 3 - draw_slow_exits(s);
	draw_rows(s, vc, show, lw, body);
	draw_footer(s, body);
	refresh();
}

/* A line typed at the bottom; false when empty or cancelled. */
bool top_prompt(struct top_state *s, const char *question, char *out, int len)
{
	int r;

	(void)s;
	move(LINES - 1, 0);
	clrtoeol();
	put_clipped(LINES - 1, 0, question);
	echo();
	curs_set(1);
	timeout(-1);
	r = getnstr(out, len - 1);
	noecho();
	curs_set(0);
	timeout(0);
	return r == OK && out[0];
}
