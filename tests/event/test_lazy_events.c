/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_lazy_events.c - a recording's event formats and kallsyms are parsed
 * when first needed (src/event/lazy_events.h, src/input/source_events.c): opening a trace.dat parses
 * one format and those of the systems the architecture tables name (kvm),
 * reading it parses the formats of the events it has, a lookup by name
 * through the source parses that event, plugin handlers registered before an
 * event is parsed apply to it, and symbols resolve as when the whole
 * kallsyms text was parsed at open.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
#include "input/kallsyms_text.h"
#include "event/lazy_events.h"
#include "kvmscope/ctx.h"
#include "kvmscope/source.h"

#define HIP "data/hip24/"

static struct ks_source *open_rel(const char *rel, unsigned flags)
{
	struct ks_source_opts o = { .flags = flags };
	const char *p = kt_shared(rel);
	struct ks_source *src = NULL;
	struct ks_error err;

	if (!p)
		kt_skip("%s is absent", rel);
	else if (ks_source_open_opts(&src, p, &o, &err) < 0)
		kt_fail(__FILE__, __LINE__, "open: %s", err.msg);
	return src;
}

static int handler_calls;

static int test_handler(struct trace_seq *s, struct tep_record *record, struct tep_event *event,
			void *context)
{
	(void)s, (void)record, (void)event, (void)context;
	handler_calls++;
	return 0;
}

/* Only the formats of the events present are parsed; by-name lookups of
 * events absent from the records still work. */
static void t_formats_parsed_on_demand(void)
{
	struct ks_source *src = open_rel(HIP "guest-tsync.trace.dat", 0);
	const struct ks_source_format *f;
	bool seen[65536] = { false };
	size_t nfmt, distinct = 0, at_open;
	struct ks_record rec;
	struct ks_error err;
	struct tep_event *ev;
	int r;

	if (!src)
		return;
	nfmt = ks_source_formats(src, &f);
	KT_EXPECT(nfmt > 1000);
	at_open = ks_source_formats_parsed(src);
	{
		size_t named = 0; /* the lowest id (the common fields) and the kvm formats */

		for (size_t i = 0; i < nfmt; i++)
			named += !strcmp(f[i].system, "kvm");
		KT_EXPECT(named > 10);
		KT_EXPECT(at_open >= named && at_open <= named + 1);
	}
	KT_EXPECT(ks_tep_event(ks_source_tep(src), "kvm", "kvm_exit") != NULL);
	KT_EXPECT(ks_tep_event(ks_source_tep(src), "module", "module_load") == NULL);
	/* a handler registered now applies when its event is parsed */
	tep_register_event_handler(ks_source_tep(src), -1, "module", "module_load", test_handler,
				   NULL);
	while ((r = ks_source_next(src, &rec, &err)) > 0)
		if (rec.type == KS_REC_EVENT && rec.event && rec.event->id >= 0 &&
		    rec.event->id < 65536 && !seen[rec.event->id]) {
			seen[rec.event->id] = true;
			distinct++;
		}
	KT_EQ_INT(r, 0);
	KT_EXPECT(distinct > 0);
	KT_EXPECT(ks_source_formats_parsed(src) <= distinct + at_open);
	KT_EXPECT(ks_source_formats_parsed(src) >= distinct);
	KT_EXPECT(ks_source_formats_parsed(src) < nfmt / 10);
	KT_EQ_U64(ks_source_stats(src)->unknown_events, 0);

	/* an event without records: parsed when asked for, once */
	at_open = ks_source_formats_parsed(src);
	ev = ks_source_event(src, "module", "module_load");
	KT_REQUIRE(ev);
	KT_EXPECT(!seen[ev->id]);
	KT_EXPECT(ev->handler == test_handler); /* libtraceevent kept the handler */
	KT_EQ_U64(ks_source_formats_parsed(src), at_open + 1);
	at_open = ks_source_formats_parsed(src);
	KT_EXPECT(ks_source_event(src, "module", "module_load") == ev);
	KT_EXPECT(ks_source_event_by_id(src, ev->id) == ev);
	KT_EXPECT(ks_tep_event(ev->tep, NULL, "module_load") == ev);
	KT_EQ_U64(ks_source_formats_parsed(src), at_open);
	KT_EXPECT(ks_source_event(src, "kvm", "no_such_event") == NULL);
	KT_EXPECT(ks_source_event(src, "no_such_system", "kvm_exit") == NULL);
	KT_EQ_U64(ks_source_formats_parsed(src), at_open);

	/* listing: everything */
	ks_source_parse_all(src);
	KT_EQ_U64(ks_source_formats_parsed(src), nfmt);
	KT_EXPECT((size_t)tep_get_events_count(ks_source_tep(src)) > nfmt / 2);
	ks_source_close(src);
}

/* Symbols resolve through the deferred kallsyms exactly as through a
 * handle that registered all of them. */
static void t_kallsyms_on_demand(void)
{
	struct ks_source *src = open_rel(HIP "host-tsync.trace.dat", 0);
	struct ks_source *nosym = src ? open_rel(HIP "host-tsync.trace.dat", KS_OPEN_NO_SYMBOLS) : NULL;
	struct tep_handle *eager;
	const char *text, *p;
	size_t len;
	int checked = 0;

	if (!nosym) {
		ks_source_close(src);
		return;
	}
	text = ks_source_text(src, KS_TEXT_KALLSYMS, &len);
	KT_REQUIRE(text && len > 100000);
	KT_EXPECT(ks_source_text(nosym, KS_TEXT_KALLSYMS, NULL) == NULL);
	eager = tep_alloc();
	KT_REQUIRE(eager);
	KT_EQ_INT(ks_parse_kallsyms(eager, text), 0);
	/* every 997th line's address, and one past it */
	for (p = text; p && *p && checked < 2000; checked++) {
		unsigned long long a = strtoull(p, NULL, 16);

		for (int k = 0; k < 2; k++, a++) {
			const char *want = tep_find_function(eager, a);
			const char *got = tep_find_function(ks_source_tep(src), a);

			KT_REQUIRE(!want == !got);
			if (want) {
				KT_EQ_STR(got, want);
				KT_EQ_U64(tep_find_function_address(ks_source_tep(src), a),
					  tep_find_function_address(eager, a));
			}
			KT_EXPECT(tep_find_function(ks_source_tep(nosym), a) == NULL);
		}
		for (int line = 0; line < 997 && p; line++)
			if ((p = strchr(p, '\n')))
				p++;
	}
	KT_EXPECT(checked > 100);
	tep_free(eager);
	ks_source_close(nosym);
	ks_source_close(src);
}

/* Opened with KS_OPEN_EVENTS_BY_RECORD: one format at open (the lowest
 * id), none of the kvm system; its events come with their records and
 * through the source, and records read as they do with the default open. */
static void t_events_by_record(void)
{
	struct ks_source *src = open_rel(HIP "host-allkvm-rawtsc.trace.dat", KS_OPEN_EVENTS_BY_RECORD);
	struct ks_source *all = src ? open_rel(HIP "host-allkvm-rawtsc.trace.dat", 0) : NULL;
	struct ks_record a, b;
	struct ks_error err;
	uint64_t n = 0, kvm = 0;
	int ra, rb;

	if (!all) {
		ks_source_close(src);
		return;
	}
	KT_EQ_U64(ks_source_formats_parsed(src), 1);
	KT_EXPECT(ks_source_formats_parsed(all) > 10);
	KT_EXPECT(ks_tep_event(ks_source_tep(src), "kvm", "kvm_exit") == NULL);
	for (;;) {
		ra = ks_source_next(src, &a, &err);
		rb = ks_source_next(all, &b, &err);
		KT_REQUIRE(ra == rb);
		if (ra <= 0)
			break;
		n++;
		KT_REQUIRE(a.type == b.type && a.ts == b.ts && a.cpu == b.cpu && a.tid == b.tid);
		KT_REQUIRE(!a.event == !b.event);
		if (a.event) {
			KT_REQUIRE(a.event->id == b.event->id && !strcmp(a.event->name, b.event->name));
			kvm += !strcmp(a.event->system, "kvm");
		}
	}
	KT_EQ_INT(ra, 0);
	KT_EXPECT(n > 1000 && kvm > 1000);
	/* the kvm events met in the records, and only these */
	KT_EXPECT(ks_tep_event(ks_source_tep(src), "kvm", "kvm_exit") != NULL);
	KT_EXPECT(ks_source_formats_parsed(src) < ks_source_formats_parsed(all));
	KT_EXPECT(ks_source_event(src, "kvm", "kvm_vcpu_wakeup") != NULL ||
		  ks_source_event(all, "kvm", "kvm_vcpu_wakeup") == NULL);
	ks_source_close(all);
	ks_source_close(src);
}

/* The resolver's table (ks_ksym_table_new) finds what libtraceevent finds
 * after tep_parse_kallsyms() of the same text, for the address of every
 * line, one before and one past it: names of one address (aliases) in
 * libtraceevent's order too. */
static void ksym_table_case(const char *rel)
{
	struct ks_source *src = open_rel(rel, 0);
	struct ks_ksym_table *t;
	struct tep_handle *lib;
	const char *text, *p;
	unsigned long long prev = 0;
	size_t len, lines = 0, aliases = 0;

	if (!src)
		return;
	text = ks_source_text(src, KS_TEXT_KALLSYMS, &len);
	KT_REQUIRE(text && len > 100000);
	t = ks_ksym_table_new(text);
	lib = tep_alloc();
	KT_REQUIRE(t && lib);
	KT_EQ_INT(tep_parse_kallsyms(lib, text), 0);
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long a = strtoull(p, NULL, 16);

		lines++;
		aliases += a == prev;
		prev = a;
		for (unsigned long long x = a ? a - 1 : a; x <= a + 1; x++) {
			const char *want = tep_find_function(lib, x);
			unsigned long long start = 0;
			const char *got = ks_ksym_table_find(t, x, &start);

			KT_REQUIRE(!want == !got);
			if (want) {
				KT_REQUIRE(!strcmp(got, want));
				KT_REQUIRE(start == tep_find_function_address(lib, x));
			}
		}
	}
	KT_EXPECT(lines > 10000);
	KT_EXPECT(aliases > 10); /* the order among aliases was put to the test */
	ks_ksym_table_free(t);
	tep_free(lib);
	ks_source_close(src);
}

static void t_ksym_table_host(void)
{
	ksym_table_case(HIP "host-tsync.trace.dat");
}

static void t_ksym_table_guest(void)
{
	ksym_table_case(HIP "guest-tsync.trace.dat");
}

/* A small format of event NAME with id ID (as text after "ID: "). */
static char *format_text(const char *name, const char *id)
{
	char *t = NULL;

	if (asprintf(&t, "name: %s\nID: %s\nformat:\n"
		     "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		     "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		     "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		     "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		     "\tfield:u32 val;\toffset:8;\tsize:4;\tsigned:0;\n\n"
		     "print fmt: \"val=%%u\", REC->val\n", name, id) < 0)
		return NULL;
	return t;
}

/* Formats are deferred only when the index reads them as libtraceevent
 * does and no id is taken twice (which event libtraceevent then finds
 * depends on all of them): otherwise every one is parsed at attach. */
static void t_unindexable_parsed_at_once(void)
{
	static const struct {
		const char *ids[3];
		size_t parsed_at_attach;
	} cases[] = {
		{ { "12", "10", "11" }, 1 },   /* the plain shape: the lowest id now */
		{ { "12", "10", "12" }, 3 },   /* an id twice */
		{ { "12", "010", "11" }, 3 },  /* octal to libtraceevent */
		{ { "12", "1x", "11" }, 3 },   /* not a number */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		static const char *const names[3] = { "ev_a", "ev_b", "ev_c" };
		struct ks_source_format f[3];
		struct tep_handle *tep = tep_alloc();

		KT_REQUIRE(tep);
		for (int i = 0; i < 3; i++) {
			f[i].system = "test";
			f[i].text = format_text(names[i], cases[c].ids[i]);
			KT_REQUIRE(f[i].text);
			f[i].len = strlen(f[i].text);
		}
		struct ks_lazy *l = ks_lazy_attach(KS_GUARD_NO_PROBE, tep, f, 3, NULL, true);

		KT_REQUIRE(l);
		KT_EQ_U64(ks_lazy_formats_parsed(l, tep), cases[c].parsed_at_attach);
		if (c == 0) {
			KT_EQ_INT(ks_lazy_id_end(l, tep), 13);
			KT_EXPECT(tep_find_event(tep, 10) != NULL);
			KT_EXPECT(tep_find_event(tep, 12) == NULL);
			KT_EXPECT(ks_lazy_event_by_id(l, tep, 12) != NULL);
			KT_EXPECT(ks_lazy_event_by_id(l, tep, 13) == NULL);
			KT_EXPECT(ks_tep_event(tep, "test", "ev_c") == NULL); /* not parsed yet */
			KT_EXPECT(ks_lazy_event(l, tep, "test", "ev_c") != NULL);
			KT_EQ_U64(ks_lazy_formats_parsed(l, tep), 3);
		}
		ks_lazy_detach(l);
		tep_free(tep);
		for (int i = 0; i < 3; i++)
			free((char *)f[i].text);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_formats_parsed_on_demand),
		KT_CASE(t_kallsyms_on_demand),
		KT_CASE(t_events_by_record),
		KT_CASE(t_ksym_table_host),
		KT_CASE(t_ksym_table_guest),
		KT_CASE(t_unindexable_parsed_at_once),
		{ 0 },
	};

	return kt_main(cases);
}
