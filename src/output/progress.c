/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * progress.c - the commands' progress line (see include/kvmscope/progress.h).
 *
 * Time left is the elapsed time scaled by the bytes still to read, which
 * holds for readers that go through their input once at an even pace.
 */
#include <time.h>

#include "kvmscope/progress.h"

#define REDRAW_S 0.2
#define CLOCK_EVERY 64u   /* calls of ks_progress_due() per clock read */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ks_progress_init(struct ks_progress *p, FILE *out, const char *what, double delay)
{
	p->out = out;
	p->what = what;
	p->delay = delay;
	p->start = now_s();
	p->next = p->start + delay;
	p->ticks = 0;
	p->shown = false;
}

bool ks_progress_due(struct ks_progress *p)
{
	double t;

	if (!p->out || (p->ticks++ % CLOCK_EVERY))
		return false;
	t = now_s();
	if (t < p->next)
		return false;
	p->next = t + REDRAW_S;
	return true;
}

/* "512.0 MB"-style, into BUF. */
static void size_text(uint64_t v, char *buf, size_t len)
{
	if (v >= 1000000000)
		snprintf(buf, len, "%.2f GB", v / 1e9);
	else if (v >= 1000000)
		snprintf(buf, len, "%.1f MB", v / 1e6);
	else
		snprintf(buf, len, "%.1f kB", v / 1e3);
}

void ks_progress_show(struct ks_progress *p, uint64_t done, uint64_t total, uint64_t events)
{
	double el = now_s() - p->start, rate = el > 0 ? events / el : 0;
	char d[32], t[32], r[40], left[48] = "";

	if (!p->out || el < p->delay)
		return;
	if (total && done > total)
		done = total;
	size_text(done, d, sizeof(d));
	if (rate >= 1e6)
		snprintf(r, sizeof(r), "%.2f M events/s", rate / 1e6);
	else
		snprintf(r, sizeof(r), "%.0f events/s", rate);
	if (total && done) {
		size_text(total, t, sizeof(t));
		snprintf(left, sizeof(left), ", %.0f s left", el * (double)(total - done) / done);
		fprintf(p->out, "\r%s: %s of %s (%.0f%%), %s%s\033[K", p->what, d, t,
			100.0 * done / total, r, left);
	} else {
		fprintf(p->out, "\r%s: %s read, %s\033[K", p->what, d, r);
	}
	fflush(p->out);
	p->shown = true;
}

void ks_progress_phase(struct ks_progress *p, const char *phase)
{
	double el = now_s() - p->start;

	if (!p->out || el < p->delay)
		return;
	fprintf(p->out, "\r%s: %s, %.1f s\033[K", p->what, phase, el);
	fflush(p->out);
	p->shown = true;
}

void ks_progress_end(struct ks_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->shown = false;
}
