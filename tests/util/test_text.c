/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_text.c - UTF-8 cuts and terminal escapes (util/text.h), against
 * the table of well-formed sequences in the Unicode standard (3.9, table
 * 3-7), the sanitised forms written out by hand: one U+FFFD per byte that
 * starts no well-formed sequence.
 */
#include <string.h>

#include "../lib/ktest.h"
#include "util/text.h"

static void t_seq(void)
{
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"a", 1), 1);
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xc3\xa9", 2), 2);      /* é */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xe2\x82\xac", 3), 3);  /* € */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xe2\x82", 2), 0);      /* cut */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xc0\xaf", 2), 0);      /* overlong */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xe0\x80\xaf", 3), 0);  /* overlong */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3), 0);  /* surrogate */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\x80", 1), 0);
	KT_EQ_U64(ks_utf8_seq((const unsigned char *)"\xff", 1), 0);
}

static void t_cut(void)
{
	char out[8];

	/* "aé€" is 1 + 2 + 3 bytes: 5 bytes of room keep "aé" */
	KT_EQ_U64(ks_utf8_cut("a\xc3\xa9\xe2\x82\xac", 6, 5), 3);
	KT_EQ_U64(ks_utf8_cut("a\xc3\xa9\xe2\x82\xac", 6, 6), 6);
	KT_EQ_U64(ks_utf8_cut("a\xc3\xa9", 3, 2), 1);
	KT_EQ_U64(ks_utf8_cut("\xff\xff\xff", 3, 2), 2); /* invalid bytes count as one */
	KT_EQ_STR(ks_utf8_copy(out, sizeof(out), "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"),
		  "\xe2\x82\xac\xe2\x82\xac");
	KT_EQ_STR(ks_utf8_copy(out, 3, "ab\xc3\xa9"), "ab");
	KT_EQ_STR(ks_utf8_copy(out, 4, "ab\xc3\xa9"), "ab");
	KT_EQ_STR(ks_utf8_copy(out, 5, "ab\xc3\xa9"), "ab\xc3\xa9");
}

static void t_sanitize(void)
{
	char out[32];

	/* a, U+FFFD for 0xff, b, U+FFFD for each byte of the cut sequence */
	KT_EQ_STR(ks_utf8_sanitize(out, sizeof(out), "a\xff" "b\xe2\x82"),
		  "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");
	KT_EQ_STR(ks_utf8_sanitize(out, sizeof(out), "ok \xc3\xa9"), "ok \xc3\xa9");
	KT_EQ_STR(ks_utf8_sanitize(out, 5, "a\xff"), "a\xef\xbf\xbd");
	KT_EQ_STR(ks_utf8_sanitize(out, 4, "a\xff"), "a"); /* never a cut U+FFFD */
}

static void t_term_escape(void)
{
	char out[64];

	KT_EQ_STR(ks_term_escape(out, sizeof(out), "x\x1b]0;t\x07\x1b[2J"),
		  "x\\x1b]0;t\\x07\\x1b[2J");
	KT_EQ_STR(ks_term_escape(out, sizeof(out), "\xc2\x9b" "1m \xc3\xa9 \x7f \xff"),
		  "\\u009b1m \xc3\xa9 \\x7f \\xff");
	KT_EQ_STR(ks_term_escape(out, sizeof(out), "a\\b"), "a\\b");
	/* escaping twice changes nothing */
	ks_term_escape(out, sizeof(out), "\x1b[2J");
	{
		char again[64];

		KT_EQ_STR(ks_term_escape(again, sizeof(again), out), out);
	}
	KT_EQ_STR(ks_term_escape(out, 6, "\x1b\x1b"), "\\x1b"); /* an escape is never cut */
	KT_EXPECT(ks_term_safe("plain \xc3\xa9"));
	KT_EXPECT(!ks_term_safe("\x1b"));
	KT_EXPECT(!ks_term_safe("\xc2\x85"));
	KT_EXPECT(!ks_term_safe("\xff"));
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_seq),
		KT_CASE(t_cut),
		KT_CASE(t_sanitize),
		KT_CASE(t_term_escape),
		{ 0 },
	};
	return kt_main(cases);
}
