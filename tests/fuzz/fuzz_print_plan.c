/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_print_plan.c - libFuzzer target for the compiled print formats
 * (src/event/print_plan*.c), differential against libtraceevent.
 *
 * The input is a print format, a NUL, then a record: the format follows a
 * fixed field list (every field kind the plan knows; or, when the format
 * starts with "@NAME\n", the fields of one of the events below: those
 * whose libtraceevent plugin handler the plan writes itself, loaded here,
 * and "tick", numbers only, for formats the library fails to parse) and
 * is parsed through
 * the format guard with the command line's probe, as kvmscope parses (a
 * helper process parses first: libtraceevent's crashes while parsing a
 * damaged print fmt, such as a division by zero it folds, are contained;
 * the textual checks alone, all a library user without a probe has, are
 * tested in tests/event/test_format_guard.c); when a plan compiles and formats the record, its text
 * must equal tep_print_event(TEP_PRINT_INFO)'s, else the target aborts (a
 * plan that asks to learn, ks_plan_run() > 0, is given the library's text
 * and run again); the handle knows a few kernel functions and printk
 * strings, for %pS and %s of a pointer.  The text is then read back
 * (ks_plan_scan) for the sanitizers to watch.
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     -I/usr/include/traceevent tests/fuzz/fuzz_print_plan.c LIBOBJS... -ltraceevent
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "fuzz_input.h"
#include "input/source_events.h"
#include "event/print_plan.h"

#define HEAD "name: demo\nID: 7\nformat:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" \
	"\tfield:u8 b;\toffset:8;\tsize:1;\tsigned:0;\n" \
	"\tfield:s16 h;\toffset:10;\tsize:2;\tsigned:1;\n" \
	"\tfield:int i;\toffset:12;\tsize:4;\tsigned:1;\n" \
	"\tfield:u64 q;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:char comm[8];\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:__data_loc char[] s;\toffset:32;\tsize:4;\tsigned:0;\n" \
	"\tfield:__rel_loc char[] r;\toffset:36;\tsize:4;\tsigned:0;\n" \
	"\tfield:unsigned long p;\toffset:40;\tsize:8;\tsigned:0;\n\n" \
	"print fmt: "

#define COMMON "format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* "@NAME\n" events: system, then the head up to "print fmt: " */
static const struct {
	const char *name, *system, *head;
} shapes[] = {
	{ "sched_switch", "sched", "name: sched_switch\nID: 7\n" COMMON
	  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\nprint fmt: " },
	{ "sched_wakeup", "sched", "name: sched_wakeup\nID: 7\n" COMMON
	  "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	  "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:int success;\toffset:32;\tsize:4;\tsigned:1;\n"
	  "\tfield:int target_cpu;\toffset:36;\tsize:4;\tsigned:1;\n\nprint fmt: " },
	{ "hrtimer_start", "timer", "name: hrtimer_start\nID: 7\n" COMMON
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:s64 expires;\toffset:24;\tsize:8;\tsigned:1;\n"
	  "\tfield:s64 softexpires;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:enum hrtimer_mode mode;\toffset:40;\tsize:4;\tsigned:0;\n\nprint fmt: " },
	{ "hrtimer_expire_entry", "timer", "name: hrtimer_expire_entry\nID: 7\n" COMMON
	  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n\nprint fmt: " },
	{ "tlb_flush", "tlb", "name: tlb_flush\nID: 7\n" COMMON
	  "\tfield:int reason;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:unsigned long pages;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: " },
	{ "kmalloc", "kmem", "name: kmalloc\nID: 7\n" COMMON
	  "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long gfp_flags;\toffset:32;\tsize:8;\tsigned:0;\n\nprint fmt: " },
	{ "tick", "cobalt", "name: tick\nID: 7\n" COMMON
	  "\tfield:u8 a;\toffset:8;\tsize:1;\tsigned:0;\n"
	  "\tfield:char c;\toffset:9;\tsize:1;\tsigned:1;\n"
	  "\tfield:s16 h;\toffset:10;\tsize:2;\tsigned:1;\n"
	  "\tfield:int i;\toffset:12;\tsize:4;\tsigned:1;\n"
	  "\tfield:long l;\toffset:16;\tsize:8;\tsigned:1;\n"
	  "\tfield:unsigned long ul;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:void * ptr;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:long l4;\toffset:40;\tsize:4;\tsigned:1;\n"
	  "\tfield:unsigned int u;\toffset:44;\tsize:4;\tsigned:0;\n\nprint fmt: " },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reading the printed text back (the ftrace text reader's use) stays
 * inside a record of SIZE bytes, whatever the format. */
static void scan_back(const struct ks_plan *plan, struct ks_tbuf *b, int size)
{
	uint8_t *back = calloc(1, (size_t)size);

	if (back && ks_tbuf_put(b, "", 0) == 0) {
		b->p[b->len] = '\0';
		ks_plan_scan(plan, b->p, back, size);
	}
	free(back);
}

/* What libtraceevent prints of the record REC (RSIZE bytes) into S. */
static void library_text(struct tep_handle *tep, uint8_t *rec, size_t rsize, struct trace_seq *s)
{
	struct tep_record tr = { .data = rec, .size = (int)rsize, .record_size = (int)rsize };

	trace_seq_init(s);
	tep_print_event(tep, s, &tr, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t flen = nul ? (size_t)(nul - data) : size, hlen;
	const char *head = HEAD, *system = "demo";
	bool plugin_shape = false;
	const uint8_t *fmt = data;
	struct tep_plugin_list *plugins = NULL;
	struct tep_handle *tep;
	struct tep_event *ev;
	struct ks_plan *plan;
	char *text;

	if (flen > 4096)
		return 0;
	if (flen && data[0] == '@') {
		const uint8_t *eol = memchr(data, '\n', flen);
		size_t k, n = eol ? (size_t)(eol - data) - 1 : 0;

		for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
			if (n == strlen(shapes[k].name) && !memcmp(data + 1, shapes[k].name, n))
				break;
		if (k == sizeof(shapes) / sizeof(shapes[0]))
			return 0;
		head = shapes[k].head;
		system = shapes[k].system;
		plugin_shape = strcmp(system, "cobalt") != 0;
		fmt = eol + 1;
		flen -= (size_t)(fmt - data);
	}
	hlen = strlen(head);
	text = malloc(hlen + flen + 2);
	tep = tep_alloc();
	if (!text || !tep) {
		free(text);
		tep_free(tep);
		return 0;
	}
	memcpy(text, head, hlen);
	memcpy(text + hlen, fmt, flen);
	text[hlen + flen] = '\n';
	text[hlen + flen + 1] = '\0';
	tep_set_long_size(tep, 8);
	/* for %pS, %s of a pointer and the plugins' function names */
	tep_register_function(tep, "func_a", 0x1000, NULL);
	tep_register_function(tep, "func_b", 0x1040, "mod");
	tep_register_print_string(tep, "\"Start context switch\"", 0x1000);
	tep_register_print_string(tep, "\"End\"", 0x1048);
	ks_guard_parse_event(ks_ctx_guard_probe(fuzz_ctx()), tep, text, hlen + flen + 1, system);
	if (plugin_shape)
		plugins = tep_load_plugins(tep);
	/* the comms are looked up before the first record, as dump does */
	tep_data_comm_from_pid(tep, 1);
	ev = tep_find_event(tep, 7);
	plan = ev ? ks_plan_compile(ev) : NULL;
	if (plan) {
		/* the record: the bytes after the NUL, at least the common fields */
		size_t rsize = nul ? size - (size_t)(nul - data) - 1 : 0;
		uint8_t *rec = calloc(1, rsize > 8 ? rsize : 8);
		struct ks_tbuf b = { 0 };
		int r;

		if (rec) {
			if (rsize)
				memcpy(rec, nul + 1, rsize);
			if (rsize < 8)
				rsize = 8;
			rec[0] = 7, rec[1] = 0;
			r = ks_plan_run(plan, rec, (int)rsize, &b);
			if (r > 0) {
				/* the library's text, learnt; then the plan's */
				struct trace_seq s;

				library_text(tep, rec, rsize, &s);
				ks_plan_learn(plan, rec, (int)rsize, s.buffer, s.len);
				trace_seq_destroy(&s);
				b.len = 0;
				r = ks_plan_run(plan, rec, (int)rsize, &b);
			}
			if (r == 0) {
				struct trace_seq s;

				library_text(tep, rec, rsize, &s);
				if (b.len != s.len || (b.len && memcmp(b.p, s.buffer, b.len))) {
					fprintf(stderr, "plan \"%.*s\" vs library \"%s\"\n", (int)b.len,
						b.p ? b.p : "", s.buffer);
					abort();
				}
				trace_seq_destroy(&s);
				scan_back(plan, &b, (int)rsize);
			}
			free(b.p);
			free(rec);
		}
		ks_plan_free(plan);
	}
	if (plugins)
		tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(text);
	return 0;
}
