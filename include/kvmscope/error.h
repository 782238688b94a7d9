/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * error.h - one error value for the whole library.
 *
 * Library functions return -1 (or NULL) on failure and fill a
 * caller-provided struct ks_error with a full sentence and a code saying
 * what kind of failure it is, so that a caller can act on it without
 * reading the sentence: a usage mistake (exit 2), a budget to raise
 * (--limit), a cancelled wait (a signal: a clean stop), a peer that failed,
 * a facility this host lacks (fall back).  Errors about input files always
 * read "FILE: offset N: what is wrong" so that the CLI can print them as one
 * line: "kvmscope: FILE: offset N: what is wrong".
 */
#ifndef KVMSCOPE_ERROR_H
#define KVMSCOPE_ERROR_H

#include <stdint.h>

#define KS_ERROR_MAX 512

enum ks_errc {
	KS_E_FAIL = 1,     /* anything else: the sentence says what */
	KS_E_INPUT,        /* an input file's content is wrong or cut (FILE: offset N) */
	KS_E_IO,           /* a read or write failed (errno's message in the sentence) */
	KS_E_NOMEM,        /* out of memory */
	KS_E_LIMIT,        /* a budget of struct ks_limits ran out: raise it (--limit) */
	KS_E_USAGE,        /* the caller's configuration or arguments are invalid */
	KS_E_CANCELLED,    /* the context's cancel function said stop (a signal) */
	KS_E_PEER,         /* a peer (QMP, libvirt, gdbstub) failed, lied or timed out */
	KS_E_UNAVAILABLE,  /* this host lacks it (privileges, kernel support, a library) */
};

struct ks_error {
	char msg[KS_ERROR_MAX];
	enum ks_errc code;  /* set with msg; 0 in an error nobody filled */
};

/* Free-form message (printf format), code KS_E_FAIL.  Returns -1 so callers
 * can write "return ks_error_set(err, ...);" ; a NULL err is allowed. */
int ks_error_set(struct ks_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "FILE: offset OFF: message", code KS_E_INPUT.  Returns -1. */
int ks_error_at(struct ks_error *err, const char *file, uint64_t offset,
		const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same with the code given.  Return -1. */
int ks_error_code(struct ks_error *err, enum ks_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ks_error_code_at(struct ks_error *err, enum ks_errc code, const char *file,
		     uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Its code (KS_E_FAIL for an error filled by hand); "usage", "limit"... */
enum ks_errc ks_error_kind(const struct ks_error *err);
const char *ks_errc_name(enum ks_errc code);

#endif
