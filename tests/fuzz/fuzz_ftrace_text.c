/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_ftrace_text.c - libFuzzer target for the ftrace text reader.
 *
 * Writes the input to a memfd (fuzz_input.h), opens it with ks_ftrace_text_open()
 * (the text reader directly, whatever the bytes look like), pulls every
 * record, touches the payload through libtraceevent and closes.
 *
 *	clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *	      -I/usr/include/traceevent tests/fuzz/fuzz_ftrace_text.c \
 *	      <library objects> -ltraceevent ... -o fuzz_ftrace_text
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "fuzz_input.h"
#include "input/source_impl.h"
#include "kvmscope/source.h"

static void print_record(struct tep_handle *tep, const struct ks_record *r)
{
	struct tep_record tr = { 0 };
	struct trace_seq s;

	if (r->type != KS_REC_EVENT || !r->event)
		return;
	tr.data = (void *)r->data;
	tr.size = (int)r->size;
	tr.ts = r->ts;
	trace_seq_init(&s);
	tep_print_event(tep, &s, &tr, "%s", TEP_PRINT_INFO);
	trace_seq_destroy(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_source *src;
	struct ks_error err;
	struct ks_record rec;
	const char *path = fuzz_input_path(data, size);

	if (!path || ks_ftrace_text_open(&src, path, FUZZ_OPTS, &err) < 0)
		return 0;
	while (ks_source_next(src, &rec, &err) > 0)
		print_record(ks_source_tep(src), &rec);
	ks_source_close(src);
	return 0;
}
