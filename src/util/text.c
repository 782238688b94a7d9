/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text.c - UTF-8 cuts and terminal escapes (see text.h).
 *
 * Well-formed UTF-8 as Unicode's table 3-7 has it: the second byte's range
 * depends on the first (E0: A0..BF, ED: 80..9F, F0: 90..BF, F4: 80..8F),
 * so that overlong forms, surrogates and code points above U+10FFFF are
 * refused as Prometheus (Go's utf8.ValidString) refuses them.
 */
#include <stdio.h>
#include <string.h>

#include "util/text.h"

size_t ks_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (!n)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

size_t ks_utf8_cut(const char *s, size_t n, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	if (n <= max)
		return n;
	while (i < max) {
		size_t l = ks_utf8_seq(u + i, n - i);

		if (!l)
			l = 1;
		if (i + l > max)
			break;
		i += l;
	}
	return i;
}

char *ks_utf8_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src), k = ks_utf8_cut(src, n, size - 1);

	memmove(dst, src, k);
	dst[k] = 0;
	return dst;
}

char *ks_utf8_sanitize(char *dst, size_t size, const char *src)
{
	const unsigned char *u = (const unsigned char *)src;
	size_t n = strlen(src), i = 0, o = 0;

	while (i < n) {
		size_t l = ks_utf8_seq(u + i, n - i);
		const char *p = src + i;

		if (!l) {
			p = "\xef\xbf\xbd"; /* U+FFFD */
			l = 3;
			i++;
		} else {
			i += l;
		}
		if (o + l + 1 > size)
			break;
		memcpy(dst + o, p, l);
		o += l;
	}
	dst[o] = 0;
	return dst;
}

char *ks_term_escape(char *dst, size_t size, const char *src)
{
	const unsigned char *u = (const unsigned char *)src;
	size_t n = strlen(src), i = 0, o = 0;

	while (i < n) {
		size_t l = ks_utf8_seq(u + i, n - i);
		char esc[8];
		const char *p = src + i;
		size_t w = l;

		if (!l || u[i] < 0x20 || u[i] == 0x7f) {
			w = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", u[i]);
			p = esc;
			l = 1;
		} else if (l == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
			w = (size_t)snprintf(esc, sizeof(esc), "\\u00%02x", u[i + 1]);
			p = esc;
		}
		if (o + w + 1 > size)
			break;
		memcpy(dst + o, p, w);
		o += w;
		i += l;
	}
	dst[o] = 0;
	return dst;
}

bool ks_term_safe(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t l = ks_utf8_seq(u + i, n - i);

		if (!l || u[i] < 0x20 || u[i] == 0x7f || (l == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0))
			return false;
		i += l;
	}
	return true;
}
