/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * openmetrics.c - Prometheus text 0.0.4 and OpenMetrics 1.0.0 exposition
 * (see openmetrics.h).
 *
 * The two formats differ, for what is written here, in: the Content-Type;
 * counters' # TYPE names (OpenMetrics names the family without _total);
 * # UNIT lines (OpenMetrics only); the "# EOF" line that ends OpenMetrics.
 * Sample lines, label escaping and histogram series (_bucket with le,
 * _count, _sum) are the same.  Integer values and seconds computed from
 * nanoseconds are written exactly (no float rounding).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kvmscope/limits.h"
#include "kvmscope/metrics.h"
#include "kvmscope/openmetrics.h"
#include "util/text.h"

/* ------------------------------------------------------------------ */
/* content negotiation */

/* Parse one Accept element "type/sub; p=v; q=0.5": its media type (lower
 * case) into TYPE, its version parameter into VER, its q. */
static void accept_item(const char *s, size_t n, char *type, size_t tlen, char *ver, size_t vlen,
			double *q)
{
	size_t i = 0, t = 0;

	*q = 1.0;
	type[0] = ver[0] = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	while (i < n && s[i] != ';' && !isspace((unsigned char)s[i])) {
		if (t + 1 < tlen)
			type[t++] = (char)tolower((unsigned char)s[i]);
		i++;
	}
	type[t] = 0;
	while (i < n) {
		char key[16], val[32];
		size_t k = 0, v = 0;
		while (i < n && (s[i] == ';' || isspace((unsigned char)s[i])))
			i++;
		while (i < n && s[i] != '=' && s[i] != ';') {
			if (k + 1 < sizeof(key) && !isspace((unsigned char)s[i]))
				key[k++] = (char)tolower((unsigned char)s[i]);
			i++;
		}
		key[k] = 0;
		if (i < n && s[i] == '=')
			i++;
		while (i < n && s[i] != ';') {
			if (v + 1 < sizeof(val) && !isspace((unsigned char)s[i]) && s[i] != '"')
				val[v++] = s[i];
			i++;
		}
		val[v] = 0;
		/* a q that is not a number takes the element out (q 0) */
		if (!strcmp(key, "q") && ks_parse_seconds(val, strlen(val), q) < 0)
			*q = 0;
		else if (!strcmp(key, "version"))
			snprintf(ver, vlen, "%s", val);
	}
}

enum ks_expo_format ks_expo_negotiate(const char *accept)
{
	enum ks_expo_format best = KS_EXPO_PROMETHEUS;
	double best_q = -1;
	const char *p = accept;

	while (p && *p) {
		size_t n = strcspn(p, ",");
		char type[64], ver[32];
		double q;
		int f = -1;

		accept_item(p, n, type, sizeof(type), ver, sizeof(ver), &q);
		if (!strcmp(type, "application/openmetrics-text") &&
		    (!ver[0] || !strcmp(ver, "1.0.0")))
			f = KS_EXPO_OPENMETRICS;
		else if ((!strcmp(type, "text/plain") && (!ver[0] || !strcmp(ver, "0.0.4"))) ||
			 !strcmp(type, "text/*") || !strcmp(type, "*/*"))
			f = KS_EXPO_PROMETHEUS;
		if (f >= 0 && q > 0 && q > best_q) {
			best = (enum ks_expo_format)f;
			best_q = q;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return best;
}

const char *ks_expo_content_type(enum ks_expo_format f)
{
	return f == KS_EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					: "text/plain; version=0.0.4; charset=utf-8";
}

/* ------------------------------------------------------------------ */
/* the buffer */

void ks_expo_init(struct ks_expo *e, enum ks_expo_format f)
{
	memset(e, 0, sizeof(*e));
	e->format = f;
}

static bool reserve(struct ks_expo *e, size_t n)
{
	size_t ncap;
	char *b;

	if (e->oom)
		return false;
	if (e->len + n + 1 <= e->cap)
		return true;
	ncap = e->cap ? e->cap : 65536;
	while (ncap < e->len + n + 1)
		ncap *= 2;
	b = realloc(e->buf, ncap);
	if (!b) {
		e->oom = true;
		return false;
	}
	e->buf = b;
	e->cap = ncap;
	return true;
}

static void put(struct ks_expo *e, const char *s, size_t n)
{
	if (!reserve(e, n))
		return;
	memcpy(e->buf + e->len, s, n);
	e->len += n;
	e->buf[e->len] = 0;
}

static void puts_(struct ks_expo *e, const char *s)
{
	put(e, s, strlen(s));
}

static void put_u64(struct ks_expo *e, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(e, tmp + i, sizeof(tmp) - (size_t)i);
}

/* NS nanoseconds as seconds, exactly: "12.000345678" ("0" for 0). */
static void put_seconds(struct ks_expo *e, uint64_t ns)
{
	char frac[10];
	int i;

	put_u64(e, ns / 1000000000u);
	ns %= 1000000000u;
	if (!ns)
		return;
	for (i = 8; i >= 0; i--, ns /= 10)
		frac[i] = (char)('0' + ns % 10);
	for (i = 9; i > 0 && frac[i - 1] == '0'; i--)
		;
	put(e, ".", 1);
	put(e, frac, (size_t)i);
}

/* A label value, escaped (\\, \", \n) and valid UTF-8 whatever the bytes
 * given: a byte that starts no well-formed sequence becomes U+FFFD
 * (Prometheus refuses a whole scrape with one invalid label value). */
static void put_escaped(struct ks_expo *e, const char *s)
{
	const char *run = s;
	size_t n = strlen(s);

	while (*s) {
		size_t l = ks_utf8_seq((const unsigned char *)s, n);
		const char *esc = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n"
				: !l ? "\xef\xbf\xbd" : NULL;
		if (!esc) {
			s += l;
			n -= l;
			continue;
		}
		put(e, run, (size_t)(s - run));
		puts_(e, esc);
		s++;
		n--;
		run = s;
	}
	put(e, run, (size_t)(s - run));
}

static void put_labels(struct ks_expo *e, const char *const *labels)
{
	int i;

	if (!labels || !labels[0])
		return;
	put(e, "{", 1);
	for (i = 0; labels[i]; i += 2) {
		if (i)
			put(e, ",", 1);
		puts_(e, labels[i]);
		put(e, "=\"", 2);
		put_escaped(e, labels[i + 1] ? labels[i + 1] : "");
		put(e, "\"", 1);
	}
	put(e, "}", 1);
}

static const char *const type_names[] = { "counter", "gauge", "histogram", "untyped" };

void ks_expo_family(struct ks_expo *e, const char *name, enum ks_expo_type type,
		    const char *help, const char *unit)
{
	const char *suffix = type == KS_EXPO_COUNTER && e->format == KS_EXPO_PROMETHEUS ? "_total" : "";
	const char *tname = type_names[type];

	if (type == KS_EXPO_UNTYPED && e->format == KS_EXPO_OPENMETRICS)
		tname = "unknown";
	puts_(e, "# HELP ");
	puts_(e, name);
	puts_(e, suffix);
	put(e, " ", 1);
	puts_(e, help); /* our own texts: no backslash or newline */
	puts_(e, "\n# TYPE ");
	puts_(e, name);
	puts_(e, suffix);
	put(e, " ", 1);
	puts_(e, tname);
	put(e, "\n", 1);
	if (unit && e->format == KS_EXPO_OPENMETRICS) {
		puts_(e, "# UNIT ");
		puts_(e, name);
		put(e, " ", 1);
		puts_(e, unit);
		put(e, "\n", 1);
	}
}

void ks_expo_sample(struct ks_expo *e, const char *name, const char *const *labels, double value)
{
	char v[40];

	puts_(e, name);
	put_labels(e, labels);
	snprintf(v, sizeof(v), " %.17g\n", value);
	puts_(e, v);
}

void ks_expo_sample_u64(struct ks_expo *e, const char *name, const char *const *labels,
			uint64_t value)
{
	puts_(e, name);
	put_labels(e, labels);
	put(e, " ", 1);
	put_u64(e, value);
	put(e, "\n", 1);
}

void ks_expo_sample_text(struct ks_expo *e, const char *name, const char *const *labels,
			 const char *value)
{
	puts_(e, name);
	put_labels(e, labels);
	put(e, " ", 1);
	puts_(e, value);
	put(e, "\n", 1);
}

void ks_expo_finish(struct ks_expo *e)
{
	if (e->format == KS_EXPO_OPENMETRICS)
		puts_(e, "# EOF\n");
}

void ks_expo_free(struct ks_expo *e)
{
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* ------------------------------------------------------------------ */
/* the exit metrics */

/* Label text per VM and reason, escaped once: domain="x" / reason="y". */
struct label_cache {
	struct ks_expo tmp;
	size_t *vm_off, *reason_off; /* offsets of NUL-terminated strings in tmp */
};

static void put_series_labels(struct ks_expo *e, const struct label_cache *c,
			      const struct ks_metrics_series *s, const char *isa_label)
{
	put(e, "{domain=\"", 9);
	puts_(e, c->tmp.buf + c->vm_off[s->vm]);
	put(e, "\",vcpu=\"", 8);
	if (s->vcpu >= 0)
		put_u64(e, (uint64_t)s->vcpu);
	else
		puts_(e, s->vcpu == -2 ? "other" : "unknown");
	put(e, "\",reason=\"", 10);
	puts_(e, c->tmp.buf + c->reason_off[s->reason]);
	puts_(e, isa_label);
}

/* NAME SUFFIX{domain="VM",reason="REASON"ISA_LABEL of histogram H, the
 * brace left open for the caller's last label or "} VALUE". */
static void hist_series(struct ks_expo *e, const char *name, size_t nl, const char *suffix,
			const struct label_cache *c, const struct ks_metrics_hist *h,
			const char *isa_label)
{
	put(e, name, nl);
	puts_(e, suffix);
	put(e, "{domain=\"", 9);
	puts_(e, c->tmp.buf + c->vm_off[h->vm]);
	put(e, "\",reason=\"", 10);
	puts_(e, c->tmp.buf + c->reason_off[h->reason]);
	puts_(e, isa_label);
}

static void hist_family(struct ks_expo *e, const struct ks_metrics_snapshot *s,
			const struct label_cache *c, const char *isa_label, bool halt)
{
	const char *name = halt ? "kvmscope_halt_exit_duration_seconds" : "kvmscope_exit_duration_seconds";
	char le[KS_LAT_NBUCKETS][24];
	size_t i, nl = strlen(name);
	int b;

	for (b = 0; b < KS_LAT_NBUCKETS; b++)
		snprintf(le[b], sizeof(le[b]), "%g", (double)ks_lat_bucket_ns[b] / 1e9);
	ks_expo_family(e, name, KS_EXPO_HISTOGRAM,
		       halt ? "Time from a halt-type exit (HLT, WFx) to the next entry of its vCPU thread."
			    : "Time from an exit to the next entry of its vCPU thread (exit handling).",
		       "seconds");
	for (i = 0; i < s->nhists; i++) {
		const struct ks_metrics_hist *h = &s->hists[i];
		uint64_t cum = 0;
		if (h->halt != halt)
			continue;
		for (b = 0; b <= KS_LAT_NBUCKETS; b++) {
			cum += h->bucket[b];
			hist_series(e, name, nl, "_bucket", c, h, isa_label);
			put(e, ",le=\"", 5);
			puts_(e, b < KS_LAT_NBUCKETS ? le[b] : "+Inf");
			put(e, "\"} ", 3);
			put_u64(e, cum);
			put(e, "\n", 1);
		}
		hist_series(e, name, nl, "_count", c, h, isa_label);
		put(e, "} ", 2);
		put_u64(e, h->count);
		put(e, "\n", 1);
		hist_series(e, name, nl, "_sum", c, h, isa_label);
		put(e, "} ", 2);
		put_seconds(e, h->sum_ns);
		put(e, "\n", 1);
	}
}

/* C's label texts: every VM's domain and every reason, escaped once.
 * -1 when out of memory. */
static int label_cache_init(struct label_cache *c, const struct ks_metrics_snapshot *s,
			    enum ks_expo_format f)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	ks_expo_init(&c->tmp, f);
	c->vm_off = calloc(s->nvms + 1, sizeof(size_t));
	c->reason_off = calloc(s->nreasons + 1, sizeof(size_t));
	if (!c->vm_off || !c->reason_off)
		return -1;
	for (i = 0; i < s->nvms; i++) {
		c->vm_off[i] = c->tmp.len;
		put_escaped(&c->tmp, s->vms[i].domain);
		put(&c->tmp, "", 1);
	}
	for (i = 0; i < s->nreasons; i++) {
		c->reason_off[i] = c->tmp.len;
		put_escaped(&c->tmp, s->reasons[i]);
		put(&c->tmp, "", 1);
	}
	return c->tmp.oom ? -1 : 0;
}

static void label_cache_free(struct label_cache *c)
{
	free(c->vm_off);
	free(c->reason_off);
	ks_expo_free(&c->tmp);
}

/* The counters per (VM, vCPU, reason): exits, and time in exits. */
static void series_families(struct ks_expo *e, const struct ks_metrics_snapshot *s,
			    const struct label_cache *c, const char *isa_label)
{
	size_t i;

	ks_expo_family(e, "kvmscope_exits", KS_EXPO_COUNTER,
		       "Exits measured (exit to next entry), per VM, vCPU and exit reason.", NULL);
	for (i = 0; i < s->nseries; i++) {
		puts_(e, "kvmscope_exits_total");
		put_series_labels(e, c, &s->series[i], isa_label);
		put(e, "} ", 2);
		put_u64(e, s->series[i].count);
		put(e, "\n", 1);
	}
	ks_expo_family(e, "kvmscope_exit_time_seconds", KS_EXPO_COUNTER,
		       "Time in exits (exit to next entry), per VM, vCPU and exit reason.", "seconds");
	for (i = 0; i < s->nseries; i++) {
		puts_(e, "kvmscope_exit_time_seconds_total");
		put_series_labels(e, c, &s->series[i], isa_label);
		put(e, "} ", 2);
		put_seconds(e, s->series[i].total_ns);
		put(e, "\n", 1);
	}
}

static void domain_info_family(struct ks_expo *e, const struct ks_metrics_snapshot *s)
{
	const char *lbl[5];
	size_t i;

	ks_expo_family(e, "kvmscope_domain_info", KS_EXPO_GAUGE,
		       "Host process (pid) of each domain label value; always 1.", NULL);
	for (i = 0; i < s->nvms; i++) {
		char pid[16];
		snprintf(pid, sizeof(pid), "%d", s->vms[i].pid);
		lbl[0] = "domain";
		lbl[1] = s->vms[i].domain;
		lbl[2] = "pid";
		lbl[3] = pid;
		lbl[4] = NULL;
		ks_expo_sample_u64(e, "kvmscope_domain_info", lbl, 1);
	}
}

/* What was not measured: events lost, exits folded under "other", events
 * left unpaired. */
static void unmeasured_families(struct ks_expo *e, const struct ks_metrics_snapshot *s)
{
	const char *lbl[3];

	ks_expo_family(e, "kvmscope_lost_events", KS_EXPO_COUNTER,
		       "Events the input reported lost (LOST records, missed events).", NULL);
	ks_expo_sample_u64(e, "kvmscope_lost_events_total", NULL, s->lost_events);
	ks_expo_family(e, "kvmscope_folded_exits", KS_EXPO_COUNTER,
		       "Exits counted under domain, vcpu and reason \"other\" because a series cap was reached.",
		       NULL);
	ks_expo_sample_u64(e, "kvmscope_folded_exits_total", NULL, s->folded_exits);
	ks_expo_family(e, "kvmscope_unpaired_events", KS_EXPO_COUNTER,
		       "Exit and entry events that could not be paired, by kind.", NULL);
	lbl[0] = "kind";
	lbl[2] = NULL;
	lbl[1] = "end_without_begin";
	ks_expo_sample_u64(e, "kvmscope_unpaired_events_total", lbl, s->end_without_begin);
	lbl[1] = "begin_replaced";
	ks_expo_sample_u64(e, "kvmscope_unpaired_events_total", lbl, s->begin_replaced);
	lbl[1] = "end_before_begin";
	ks_expo_sample_u64(e, "kvmscope_unpaired_events_total", lbl, s->end_before_begin);
}

void ks_expo_metrics(struct ks_expo *e, const struct ks_metrics_snapshot *s)
{
	struct label_cache c;
	char isa_label[48];

	if (label_cache_init(&c, s, e->format) < 0) {
		e->oom = true;
		label_cache_free(&c);
		return;
	}
	/* ",isa=\"VMX\"" (names from our tables: nothing to escape) */
	snprintf(isa_label, sizeof(isa_label), "\",isa=\"%s\"", s->isa[0] ? s->isa : "unknown");
	series_families(e, s, &c, isa_label);
	hist_family(e, s, &c, isa_label, false);
	hist_family(e, s, &c, isa_label, true);
	domain_info_family(e, s);
	unmeasured_families(e, s);
	label_cache_free(&c);
}
