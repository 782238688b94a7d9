/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * error.c - filling struct ks_error.  See include/kvmscope/error.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "kvmscope/error.h"

int ks_error_set(struct ks_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int ks_error_at(struct ks_error *err, const char *file, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return -1;
	n = snprintf(err->msg, sizeof(err->msg), "%s: offset %" PRIu64 ": ", file, offset);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}
