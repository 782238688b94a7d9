/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_live_page.c - libFuzzer target for the live source's page decoder
 * (ks_live_decode_page): the input is one raw ring-buffer page as read from
 * trace_pipe_raw, decoded with the kernel's 64-bit header page layout and
 * one event format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kvmscope/live.h"
#include "kvmscope/record.h"

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char event_format[] =
	"name: demo\nID: 1\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int value;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"value=%u\", REC->value\n";

static void sink(void *ctx, const struct ks_record *rec)
{
	const uint8_t *p = rec->data;
	uint32_t i;

	for (i = 0; i < rec->size; i++)
		*(uint32_t *)ctx += p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tep_handle *tep;
	uint8_t page[4096];
	uint32_t acc = 0;
	uint64_t missed;

	if (!tep) {
		tep = tep_alloc();
		tep_set_long_size(tep, 8);
		tep_set_page_size(tep, 4096);
		tep_parse_header_page(tep, (char *)header_page, sizeof(header_page) - 1, 8);
		tep_parse_event(tep, event_format, sizeof(event_format) - 1, "demo");
	}
	memset(page, 0, sizeof(page));
	memcpy(page, data, size < sizeof(page) ? size : sizeof(page));
	ks_live_decode_page(tep, 0, page, sizeof(page), sink, &acc, &missed);
	return (int)(acc & 0);
}
