/*
 * fuzz_print_plan.c - libFuzzer target for the compiled print formats
 * (src/output/print_plan.c), differential against libtraceevent.
 *
 * The input is a print format, a NUL, then a record: the format follows a
 * fixed field list (every field kind the plan knows) and is parsed through
 * the format guard with the command line's probe, as kvmscope parses (a
 * helper process parses first: libtraceevent's crashes while parsing a
 * damaged print fmt, such as a division by zero it folds, are contained;
 * the textual checks alone, all a library user without a probe has, are
 * tested in tests/input/test_format_guard.c); when a plan compiles and formats the record, its text
 * must equal tep_print_event(TEP_PRINT_INFO)'s, else the target aborts; the
 * text is then read back (ks_plan_scan) for the sanitizers to watch.
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     -I/usr/include/traceevent tests/fuzz/fuzz_print_plan.c LIBOBJS... -ltraceevent
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "fuzz_input.h"
#include "input/format_guard.h"
#include "output/print_plan.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t flen = nul ? (size_t)(nul - data) : size, hlen = strlen(HEAD);
	struct tep_handle *tep;
	struct tep_event *ev;
	struct ks_plan *plan;
	char *text;

	if (flen > 4096)
		return 0;
	text = malloc(hlen + flen + 2);
	tep = tep_alloc();
	if (!text || !tep) {
		free(text);
		tep_free(tep);
		return 0;
	}
	memcpy(text, HEAD, hlen);
	memcpy(text + hlen, data, flen);
	text[hlen + flen] = '\n';
	text[hlen + flen + 1] = '\0';
	tep_set_long_size(tep, 8);
	ks_guard_parse_event(fuzz_ctx(), tep, text, hlen + flen + 1, "demo");
	ev = tep_find_event(tep, 7);
	plan = ev ? ks_plan_compile(ev) : NULL;
	if (plan) {
		/* the record: the bytes after the NUL, at least the common fields */
		size_t rsize = nul ? size - flen - 1 : 0;
		uint8_t *rec = calloc(1, rsize > 8 ? rsize : 8);
		struct ks_tbuf b = { 0 };

		if (rec) {
			if (rsize)
				memcpy(rec, nul + 1, rsize);
			if (rsize < 8)
				rsize = 8;
			rec[0] = 7, rec[1] = 0;
			if (ks_plan_run(plan, rec, (int)rsize, &b) == 0) {
				struct tep_record tr = { .data = rec, .size = (int)rsize,
							 .record_size = (int)rsize };
				struct trace_seq s;

				trace_seq_init(&s);
				tep_print_event(tep, &s, &tr, "%s", TEP_PRINT_INFO);
				trace_seq_terminate(&s);
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
	tep_free(tep);
	free(text);
	return 0;
}
