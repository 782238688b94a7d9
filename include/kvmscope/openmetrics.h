/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * openmetrics.h - the Prometheus text exposition formats, written into a
 * memory buffer: Prometheus text 0.0.4 and OpenMetrics 1.0.0 (the one a
 * scraper asks for in its Accept header, see ks_expo_negotiate()).
 *
 *	struct ks_expo e;
 *	ks_expo_init(&e, ks_expo_negotiate(accept_header));
 *	ks_expo_family(&e, "kvmscope_events", KS_EXPO_COUNTER, "Records read.", NULL);
 *	ks_expo_sample(&e, "kvmscope_events_total", NULL, 42);
 *	ks_expo_metrics(&e, &snapshot);       (every exit metric of metrics.h)
 *	ks_expo_finish(&e);                   (OpenMetrics: "# EOF")
 *	send(e.buf, e.len, ks_expo_content_type(e.format)); ks_expo_free(&e);
 *
 * Family names are given without the _total suffix of counters (the
 * writer adds it where the format wants it in # TYPE lines).  Label values
 * are escaped here (backslash, double quote, newline) and made valid UTF-8
 * (U+FFFD for each byte that starts no well-formed sequence).
 */
#ifndef KVMSCOPE_OPENMETRICS_H
#define KVMSCOPE_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ks_metrics_snapshot;

enum ks_expo_format {
	KS_EXPO_PROMETHEUS = 0, /* text/plain; version=0.0.4 */
	KS_EXPO_OPENMETRICS,    /* application/openmetrics-text; version=1.0.0 */
};

enum ks_expo_type { KS_EXPO_COUNTER, KS_EXPO_GAUGE, KS_EXPO_HISTOGRAM, KS_EXPO_UNTYPED };

struct ks_expo {
	enum ks_expo_format format;
	char *buf;
	size_t len, cap;
	bool oom;           /* an allocation failed: the text is incomplete */
};

/* The format a scraper's Accept header (NULL: none) asks for: the media
 * type with the highest q among those supported; Prometheus text when
 * nothing else is acceptable. */
enum ks_expo_format ks_expo_negotiate(const char *accept);
const char *ks_expo_content_type(enum ks_expo_format f);

void ks_expo_init(struct ks_expo *e, enum ks_expo_format f);
/* # HELP / # TYPE (and OpenMetrics # UNIT when UNIT is not NULL: NAME then
 * ends in _UNIT) of a family. */
void ks_expo_family(struct ks_expo *e, const char *name, enum ks_expo_type type,
		    const char *help, const char *unit);
/* One sample: NAME{LABELS} VALUE.  LABELS: NULL-terminated name, value
 * pairs (NULL: none). */
void ks_expo_sample(struct ks_expo *e, const char *name, const char *const *labels, double value);
void ks_expo_sample_u64(struct ks_expo *e, const char *name, const char *const *labels,
			uint64_t value);
/* The same with VALUE already written as the format wants it (exact
 * decimal seconds, "+Inf"). */
void ks_expo_sample_text(struct ks_expo *e, const char *name, const char *const *labels,
			 const char *value);
/* The exit metrics of a snapshot (names in kvmscope-exporter(1)). */
void ks_expo_metrics(struct ks_expo *e, const struct ks_metrics_snapshot *s);
void ks_expo_finish(struct ks_expo *e);
void ks_expo_free(struct ks_expo *e);

#endif
