/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * error.h - one error value for the whole library.
 *
 * Library functions return a negative errno-style value on failure and fill
 * a caller-provided struct ks_error with a full sentence.  Errors about input
 * files always read "FILE: offset N: what is wrong" so that the CLI can print
 * them as one line: "kvmscope: FILE: offset N: what is wrong".
 */
#ifndef KVMSCOPE_ERROR_H
#define KVMSCOPE_ERROR_H

#include <stdint.h>

#define KS_ERROR_MAX 512

struct ks_error {
	char msg[KS_ERROR_MAX];
};

/* Free-form message (printf format).  Returns -1 so callers can write
 * "return ks_error_set(err, ...);" ; a NULL err is allowed. */
int ks_error_set(struct ks_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "FILE: offset OFF: message".  Returns -1. */
int ks_error_at(struct ks_error *err, const char *file, uint64_t offset,
		const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
