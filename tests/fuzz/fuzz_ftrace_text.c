/*
 * fuzz_ftrace_text.c - libFuzzer target for the ftrace text reader.
 *
 * Writes the input to a temp file, opens it with ks_ftrace_text_open()
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

#include "input/source_impl.h"
#include "kvmscope/source.h"

static char tmp_path[64];

static int write_input(const uint8_t *data, size_t size)
{
	int fd;

	if (!tmp_path[0]) {
		snprintf(tmp_path, sizeof(tmp_path), "/tmp/fuzz_ftrace_text.%d", (int)getpid());
	}
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

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

	if (write_input(data, size) < 0)
		return 0;
	if (ks_ftrace_text_open(&src, tmp_path, &err) < 0)
		return 0;
	while (ks_source_next(src, &rec, &err) > 0)
		print_record(ks_source_tep(src), &rec);
	ks_source_close(src);
	return 0;
}
