/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * progress.h - the one progress line of the commands that read an input:
 * "stat: 120.4 of 512.0 MB (23%), 1.52 M events/s, 6 s left", redrawn in
 * place on a terminal (the caller decides whether there is one) once the
 * run takes longer than a delay (a second), at most five times a second,
 * and erased at the end.
 *
 *	struct ks_progress p;
 *	ks_progress_init(&p, isatty(2) ? stderr : NULL, "stat", 1.0);
 *	while (...read a batch...)
 *		if (ks_progress_due(&p)) {
 *			ks_source_position(src, &done, &total);
 *			ks_progress_show(&p, done, total, ks_source_stats(src)->records);
 *		}
 *	ks_progress_end(&p);
 */
#ifndef KVMSCOPE_PROGRESS_H
#define KVMSCOPE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ks_progress {
	FILE *out;          /* NULL: off */
	const char *what;   /* the command's name, the line's first word */
	double delay;       /* seconds before the first line */
	double start, next; /* monotonic seconds: the start, the next redraw */
	unsigned ticks;     /* calls of ks_progress_due() */
	bool shown;
};

void ks_progress_init(struct ks_progress *p, FILE *out, const char *what, double delay);
/* Whether a line is due: cheap (the clock is read once in 64 calls), for
 * calling once per record or batch. */
bool ks_progress_due(struct ks_progress *p);
/* Draw the line: DONE of TOTAL bytes read (TOTAL 0: unknown), EVENTS so far. */
void ks_progress_show(struct ks_progress *p, uint64_t done, uint64_t total, uint64_t events);
/* Draw a phase without a position ("writing FILE"), if the run is past the
 * delay. */
void ks_progress_phase(struct ks_progress *p, const char *phase);
/* Erase the line (if one was drawn); drawing may start again after. */
void ks_progress_end(struct ks_progress *p);

#endif
