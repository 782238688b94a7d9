/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_ringpage.c - the ring-buffer page check in front of kbuffer
 * (src/input/ringpage.c), and the live page decoder on the page that made
 * libtraceevent's kbuffer loop forever (fuzz_live_page finding).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>

#include "../lib/ktest.h"
#include "input/ringpage.h"
#include "kvmscope/live.h"

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void t_good_events(void)
{
	uint8_t d[64] = { 0 };

	put32(d, 2);            /* type_len 2: 8 bytes of payload */
	put32(d + 12, 30);      /* time extend: 8 bytes in all */
	put32(d + 20, 0);       /* type_len 0: length word 12 -> 8 bytes */
	put32(d + 24, 12);
	KT_EQ_INT(ks_ringpage_check(d, 36, sizeof(d), false, false), -1);
	/* the same header big-endian: type_len in the top 5 bits */
	put32(d, __builtin_bswap32(2u << 27));
	put32(d + 12, __builtin_bswap32(30u << 27));
	put32(d + 20, 0);
	put32(d + 24, __builtin_bswap32(12));
	KT_EQ_INT(ks_ringpage_check(d, 36, sizeof(d), true, true), -1);
}

static void t_bad_events(void)
{
	uint8_t d[64] = { 0 };

	put32(d, 29);                 /* padding whose length wraps to itself */
	put32(d + 4, 0xfffffffcu);
	KT_EQ_INT(ks_ringpage_check(d, 10, sizeof(d), false, false), 0);
	put32(d, 1);                  /* 4 bytes, then a type 0 event of length 2 */
	put32(d + 8, 0);
	put32(d + 12, 2);
	KT_EQ_INT(ks_ringpage_check(d, 40, sizeof(d), false, false), 8);
	put32(d + 8, 3);              /* 12 bytes fine, then a header past the data */
	KT_EQ_INT(ks_ringpage_check(d, 64, 24, false, false), 24);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "not ok t_live_page_loop: ks_live_decode_page hangs\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void t_live_page_loop(void)
{
	static const char header_page[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
	struct tep_handle *tep = tep_alloc();
	uint8_t page[4096];
	FILE *f = fopen("tests/fuzz/regress/fuzz_live_page/kbuffer-padding-wrap.bin", "rb");
	size_t n;

	KT_REQUIRE(tep && f);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	KT_EQ_INT(tep_parse_header_page(tep, (char *)header_page, sizeof(header_page) - 1, 8), 0);
	memset(page, 0, sizeof(page));
	n = fread(page, 1, sizeof(page), f);
	fclose(f);
	KT_EXPECT(n > 16);
	signal(SIGALRM, on_alarm);
	alarm(10);
	KT_EQ_INT(ks_live_decode_page(tep, 0, page, sizeof(page), NULL, NULL, NULL), -1);
	alarm(0);
	tep_free(tep);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_good_events), KT_CASE(t_bad_events), KT_CASE(t_live_page_loop), { 0 },
	};
	return kt_main(cases);
}
