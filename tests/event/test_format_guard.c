/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_format_guard.c - damaged metadata that crashes libtraceevent 1.7 is
 * defused by src/event/format_guard.c, and good metadata passes unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "../lib/ktest.h"
/* the command line's probe (a helper process), which the library has not:
 * compiled in here, as the test programs link the library only */
#include "cli/format_probe.c"
#include "event/format_guard.h"

/* The command line's probe, as a reader hands it to the guard. */
static const struct ks_guard_probe probing = { .fn = cli_format_probe };

static const char good[] =
	"name: demo\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:16;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"state=%ld comm=%s\\n\", REC->prev_state, REC->comm\n";

static char *with(const char *from, const char *to)
{
	const char *at = strstr(good, from);
	char *s = malloc(sizeof(good) + strlen(to));

	memcpy(s, good, (size_t)(at - good));
	strcpy(s + (at - good), to);
	strcat(s, at + strlen(from));
	return s;
}

static const char *printed(struct tep_handle *tep)
{
	static char out[256];
	struct tep_event *ev = tep_find_event(tep, 7);
	unsigned char data[32] = { 7, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'a', 'b' };
	struct tep_record rec = { .data = data, .size = sizeof(data) };
	struct trace_seq s;

	if (!ev)
		return NULL;
	trace_seq_init(&s);
	tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	snprintf(out, sizeof(out), "%s", s.buffer);
	trace_seq_destroy(&s);
	return out;
}

static void t_good_format_unchanged(void)
{
	struct tep_handle *tep = tep_alloc();

	KT_EQ_INT(ks_guard_parse_event(probing, tep, good, strlen(good), "demo"), 0);
	KT_EQ_STR(printed(tep), "state=5 comm=ab\n");
	tep_free(tep);
}

static void t_unknown_field_defused(void)
{
	const char *bad[] = { "REC->prev_state, REC->comm", "REC->0rev_state, REC->comm",
			      "REC->prev_state, REC->nosuch", "REC->prev_state, (REC->comm",
			      "REC->prev_state$ REC->comm" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tep_handle *tep = tep_alloc();
		char *text = with("REC->prev_state, REC->comm", bad[i]);

		ks_guard_parse_event(probing, tep, text, strlen(text), "demo");
		/* fields decode; the first (intact) one also prints */
		KT_EXPECT(tep_find_event(tep, 7) != NULL);
		KT_EXPECT(tep_find_any_field(tep_find_event(tep, 7), "prev_state") != NULL);
		if (i == 0)
			KT_EQ_STR(printed(tep), "state=5 comm=ab\n");
		else
			KT_EXPECT(printed(tep) != NULL);
		free(text);
		tep_free(tep);
	}
}

/* A damaged field declaration (NUL, bracket garbage, missing offset) made
 * libtraceevent crash even with the print fmt blanked: such formats are
 * refused as a whole. */
static void t_bad_field_line_refused(void)
{
	const char *bad[] = { "\tfield:long pr[ev_state;", "\tfield:long prev_state[x;",
			      "\tfield:long prev\001state;" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tep_handle *tep = tep_alloc();
		char *text = with("\tfield:long prev_state;", bad[i]);

		KT_EQ_INT(ks_guard_parse_event(probing, tep, text, strlen(text), "demo"), -1);
		KT_EXPECT(tep_find_event(tep, 7) == NULL);
		free(text);
		tep_free(tep);
	}
	{
		struct tep_handle *tep = tep_alloc();
		char *text = with("\toffset:8;", "\toffset:;");

		KT_EQ_INT(ks_guard_parse_event(probing, tep, text, strlen(text), "demo"), -1);
		free(text);
		tep_free(tep);
	}
}

/* A print fmt that kills libtraceevent's parser (". REC->" after a string,
 * found by fuzz_perfdata) loses its print fmt; the checking process that
 * died is replaced, so the next batch and the next file still parse. */
static void t_parser_crash_contained(void)
{
	char *bad = with("REC->prev_state, REC->comm",
			 "REC->prev_state ? \"+\" : \"\". REC->comm");
	char *other = with("ID: 7", "ID: 8");
	char *third = with("ID: 7", "ID: 9");
	struct tep_handle *tep = tep_alloc();
	struct ks_guard_batch *b = ks_guard_batch_new(probing);

	KT_REQUIRE(bad && other && third && tep && b);
	KT_EQ_INT(ks_guard_batch_add(b, bad, strlen(bad), "demo"), 0);
	KT_EQ_INT(ks_guard_batch_add(b, other, strlen(other), "demo"), 0);
	ks_guard_batch_parse(b, tep);
	KT_EXPECT(tep_find_event(tep, 7) != NULL);   /* fields kept */
	KT_EQ_STR(printed(tep), "");                 /* print fmt dropped */
	KT_EXPECT(tep_find_event(tep, 8) != NULL);
	KT_EQ_INT(ks_guard_batch_add(b, third, strlen(third), "demo"), 0);
	ks_guard_batch_parse(b, tep);
	KT_EXPECT(tep_find_event(tep, 9) != NULL);
	ks_guard_batch_free(b);
	tep_free(tep);
	free(bad);
	free(other);
	free(third);
}

static void t_printk_without_colon(void)
{
	struct tep_handle *tep = tep_alloc();

	/* libtraceevent reads past the line on the last three (a crash under
	 * ASan); the guard passes only the first one on. */
	KT_EQ_INT(ks_guard_parse_printk(tep, "0xffffffff81000000 : \"hello\"\nno colon here\n"
					      "0x1234\n:\n"), 0);
	/* texts of 0 and 1 characters: libtraceevent reads before the string
	 * (fuzz_perfdata finding); the 2-character one is kept */
	KT_EQ_INT(ks_guard_parse_printk(tep, "0x10 : \"\"\n0x20 : \"a\"\n0x30 : \"ab\"\n"), 0);
	tep_free(tep);
}

/* Crash handlers the checking process inherits (a fuzzer's saves the input
 * as a crash artifact) must not run when it dies: they write to a pipe. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
static int handler_pipe[2] = { -1, -1 };

static void inherited_handler(int sig)
{
	(void)sig;
	if (write(handler_pipe[1], "h", 1) < 0)
		_exit(3);
	_exit(3);
}

static void inherited_death(void)
{
	inherited_handler(0);
}

static void t_helper_dies_without_inherited_handlers(void)
{
	char *bad = with("REC->prev_state, REC->comm",
			 "REC->prev_state ? \"+\" : \"\". REC->comm");
	struct tep_handle *tep = tep_alloc();
	struct ks_guard_batch *b = ks_guard_batch_new(probing);
	char c;
	int i;

	KT_REQUIRE(bad && tep && b && pipe2(handler_pipe, O_NONBLOCK) == 0);
	signal(SIGSEGV, inherited_handler);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(inherited_death);
	for (i = 0; i < 2; i++) { /* the 2nd helper is forked after the handlers were set */
		KT_EQ_INT(ks_guard_batch_add(b, bad, strlen(bad), "demo"), 0);
		ks_guard_batch_parse(b, tep);
	}
	signal(SIGSEGV, SIG_DFL);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(NULL);
	KT_EXPECT(tep_find_event(tep, 7) != NULL);
	KT_EXPECT(read(handler_pipe[0], &c, 1) < 0 && errno == EAGAIN);
	close(handler_pipe[0]);
	close(handler_pipe[1]);
	ks_guard_batch_free(b);
	tep_free(tep);
	free(bad);
}

/* A format that killed a checking process is not sent to another one: the
 * same file again (a fuzzer's mutation elsewhere in it) costs no fork. */
static void t_crashing_format_checked_once(void)
{
	char *bad = with("REC->prev_state, REC->comm",
			 "REC->prev_state ? \"-\" : \"\". REC->comm");
	char *other = with("ID: 7", "ID: 8");
	unsigned long before;
	int round;

	KT_REQUIRE(bad && other);
	for (round = 0; round < 3; round++) {
		struct tep_handle *tep = tep_alloc();
		struct ks_guard_batch *b = ks_guard_batch_new(probing);

		KT_REQUIRE(tep && b);
		before = cli_format_probe_starts();
		KT_EQ_INT(ks_guard_batch_add(b, bad, strlen(bad), "demo"), 0);
		KT_EQ_INT(ks_guard_batch_add(b, other, strlen(other), "demo"), 0);
		ks_guard_batch_parse(b, tep);
		KT_EXPECT(tep_find_event(tep, 7) != NULL);
		KT_EQ_STR(printed(tep), "");
		KT_EXPECT(tep_find_event(tep, 8) != NULL);
		if (round) /* the 1st round forked for the batch and for the probe */
			KT_EQ_U64(cli_format_probe_starts(), before);
		ks_guard_batch_free(b);
		tep_free(tep);
	}
	free(bad);
	free(other);
}

/* Texts are not NUL-terminated: nothing may be read after their last byte
 * (fuzz_perfdata finding: "REC->" compared at a print fmt ending in "RE").
 * Each text ends at a page followed by an inaccessible one. */
static void t_text_end_not_read_past(void)
{
	static const char *const texts[] = {
		"name: demo\nID: 7\nformat:\n"
		"\tfield:int x;\toffset:0;\tsize:4;\tsigned:1;\n\nprint fmt: \"%d\", RE",
		"name: demo\nID: 7\nformat:\n\tfield:int x;\toffset:0;\tsize:4;\tsig",
	};
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	size_t i;

	KT_REQUIRE(map != MAP_FAILED && mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t len = strlen(texts[i]);
		char *at = map + pg - len;
		struct tep_handle *tep = tep_alloc();

		KT_REQUIRE(tep);
		memcpy(at, texts[i], len);
		ks_guard_parse_event(probing, tep, at, len, "demo"); /* must not fault */
		tep_free(tep);
	}
	munmap(map, (size_t)pg * 2);
}

/* Without the program's probe (the library alone starts no process), the
 * library's own checks defuse the crashes the fuzzers found: a '.' after a
 * string in the print fmt, and a "print fmt :" line they would not check. */
static void t_no_probe_checks(void)
{
	char *dot = with("REC->prev_state, REC->comm", "REC->prev_state ? \"-\" : \"\". REC->comm");
	char *spaced = with("print fmt:", "print fmt :");
	struct tep_handle *tep = tep_alloc();

	KT_REQUIRE(dot && spaced && tep);
	KT_EQ_INT(ks_guard_parse_event(KS_GUARD_NO_PROBE, tep, dot, strlen(dot), "demo"), 0);
	KT_EQ_STR(printed(tep), ""); /* its print fmt dropped, its fields kept */
	KT_EQ_INT(ks_guard_parse_event(KS_GUARD_NO_PROBE, tep, spaced, strlen(spaced), "demo"), -1);
	tep_free(tep);
	free(dot);
	free(spaced);
}

/* libtraceevent divides unchecked, folding constants while it parses and
 * evaluating the print fmt for each record: a divisor that can be zero (a
 * field, an expression, an identifier) drops the print fmt, with or without
 * the probe (which sees parsing only); a nonzero literal divisor is kept. */
static void t_division_checked(void)
{
	static const char *const unsafe[] = {
		"REC->prev_state / (REC->prev_state - 5), REC->comm", /* 0 for this record */
		"REC->prev_state %% REC->prev_state, REC->comm",
		"REC->prev_state / 0x0, REC->comm",
		"REC->prev_state / -1, REC->comm",
		"6zuR %% lh6rh, REC->comm", /* the fuzzer's: 6 %% 0 while parsing */
		"REC->prev_state %% 2_c2, REC->comm", /* the fuzzer's: split "2" "_c2" */
		"REC->prev_state / 08, REC->comm",
		"aza %% 2 zd22aza %% 2, REC->comm", /* the fuzzer's: "2 zd22aza" one atom */
		"REC->prev_state / sizeof(int), REC->comm", /* libtraceevent's use after free */
		"zdatn g_c %% 2 %% 2, REC->comm", /* the fuzzer's: x %% (2 %% 2) */
		"REC->prev_state / 10 * 0, REC->comm", /* REC->prev_state / (10 * 0) */
	};
	size_t i;
	int probe;

	for (probe = 0; probe < 2; probe++) {
		struct ks_guard_probe pr = probe ? probing : KS_GUARD_NO_PROBE;

		for (i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++) {
			char expr[96];
			char *text;
			struct tep_handle *tep = tep_alloc();

			snprintf(expr, sizeof(expr), unsafe[i], 0);
			text = with("REC->prev_state, REC->comm", expr);
			KT_EQ_INT(ks_guard_parse_event(pr, tep, text, strlen(text), "demo"), 0);
			KT_EQ_STR(printed(tep), ""); /* dropped: no SIGFPE */
			tep_free(tep);
			free(text);
		}
	}
	/* the shapes of real kernels' formats are kept (timer:itimer_state,
	 * xfs: "/ 1000L", "% 64") */
	for (i = 0; i < 3; i++) {
		static const char *const safe[][2] = {
			{ "REC->prev_state / 2, REC->comm", "state=2 comm=ab\n" },
			{ "REC->prev_state / 1000L, REC->comm", "state=0 comm=ab\n" },
			{ "REC->prev_state % 0x4, REC->comm", "state=1 comm=ab\n" },
		};
		char *text = with("REC->prev_state, REC->comm", safe[i][0]);
		struct tep_handle *tep = tep_alloc();

		KT_EQ_INT(ks_guard_parse_event(probing, tep, text, strlen(text), "demo"), 0);
		KT_EQ_STR(printed(tep), safe[i][1]);
		tep_free(tep);
		free(text);
	}
}

/* The check on the parse itself (whatever the text looked like): formats
 * parsed by libtraceevent alone, then judged. */
static void t_parsed_divisions_judged(void)
{
	static const struct {
		const char *expr;
		bool safe;
	} cases[] = {
		{ "REC->prev_state / 2, REC->comm", true },
		{ "REC->prev_state %% 0x10, REC->comm", true },
		{ "REC->prev_state / REC->prev_state, REC->comm", false },
		{ "REC->prev_state %% (REC->prev_state - 5), REC->comm", false },
		{ "REC->prev_state / 0, REC->comm", false },
		{ "REC->prev_state / -1, REC->comm", false },
		{ "REC->prev_state ? (long)(REC->prev_state / REC->prev_state) : 0, REC->comm", false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char expr[128];
		char *text;
		struct tep_handle *tep = tep_alloc();
		struct tep_event *ev = NULL;

		snprintf(expr, sizeof(expr), cases[i].expr, 0);
		text = with("REC->prev_state, REC->comm", expr);
		KT_REQUIRE(tep_parse_format(tep, &ev, text, strlen(text), "demo") == 0 && ev);
		if (ks_guard_divisions_safe(ev) != cases[i].safe)
			kt_fail(__FILE__, __LINE__, "%s: judged %s", expr,
				cases[i].safe ? "unsafe" : "safe");
		tep_free(tep);
		free(text);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_good_format_unchanged), KT_CASE(t_unknown_field_defused),
		KT_CASE(t_printk_without_colon), KT_CASE(t_bad_field_line_refused),
		KT_CASE(t_parser_crash_contained), KT_CASE(t_helper_dies_without_inherited_handlers),
		KT_CASE(t_crashing_format_checked_once),
		KT_CASE(t_text_end_not_read_past), KT_CASE(t_no_probe_checks),
		KT_CASE(t_division_checked), KT_CASE(t_parsed_divisions_judged),
		{ 0 },
	};

	return kt_main(cases);
}
