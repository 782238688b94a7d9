/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text.h - strings from peers and files made safe for where they go:
 * cut on UTF-8 character boundaries (never in the middle of a sequence),
 * and escaped for a terminal (no control sequence reaches it).
 *
 * Names come from QEMU command lines, QMP and libvirt replies, trace files:
 * any bytes.  A label value of Prometheus must be valid UTF-8, and a name
 * shown by `top` must not carry ESC ] 0; (terminal title), ESC [ 2J...
 */
#ifndef KVMSCOPE_UTIL_TEXT_H
#define KVMSCOPE_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence at S (N bytes
 * available), or 0 when S does not start one (a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF, a cut one). */
size_t ks_utf8_seq(const unsigned char *s, size_t n);

/* The longest prefix of S[0..N) of at most MAX bytes that does not end
 * inside a well-formed sequence (bytes that start none count as one). */
size_t ks_utf8_cut(const char *s, size_t n, size_t max);

/* SRC into DST (SIZE bytes, NUL-terminated; SIZE > 0), cut on a character
 * boundary when it does not fit.  Returns DST. */
char *ks_utf8_copy(char *dst, size_t size, const char *src);

/* SRC as valid UTF-8 into DST (SIZE > 0): each byte that starts no
 * well-formed sequence becomes U+FFFD; cut on a character boundary. */
char *ks_utf8_sanitize(char *dst, size_t size, const char *src);

/* SRC for a terminal into DST (SIZE > 0): printable UTF-8 is kept; C0
 * controls, DEL and bytes that start no well-formed sequence are written
 * \xHH, C1 controls (U+0080..U+009F) \u00HH (a backslash stays as it
 * is: escaping twice changes nothing).  An escape is never cut.  Returns
 * DST. */
char *ks_term_escape(char *dst, size_t size, const char *src);

/* Whether ks_term_escape() leaves S as it is. */
bool ks_term_safe(const char *s);

#endif
