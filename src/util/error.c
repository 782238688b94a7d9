/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * error.c - filling struct ks_error.  See include/kvmscope/error.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "kvmscope/error.h"

static int vset(struct ks_error *err, enum ks_errc code, const char *file, uint64_t offset,
		const char *fmt, va_list ap)
{
	int n = 0;

	if (!err)
		return -1;
	err->code = code;
	if (file) {
		n = snprintf(err->msg, sizeof(err->msg), "%s: offset %" PRIu64 ": ", file, offset);
		if (n < 0 || (size_t)n >= sizeof(err->msg))
			return -1;
	}
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	return -1;
}

int ks_error_set(struct ks_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, KS_E_FAIL, NULL, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int ks_error_at(struct ks_error *err, const char *file, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, KS_E_INPUT, file, offset, fmt, ap);
	va_end(ap);
	return -1;
}

int ks_error_code(struct ks_error *err, enum ks_errc code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, code, NULL, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int ks_error_code_at(struct ks_error *err, enum ks_errc code, const char *file,
		     uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, code, file, offset, fmt, ap);
	va_end(ap);
	return -1;
}

enum ks_errc ks_error_kind(const struct ks_error *err)
{
	return err && err->code >= KS_E_FAIL && err->code <= KS_E_UNAVAILABLE ? err->code
									    : KS_E_FAIL;
}

const char *ks_errc_name(enum ks_errc code)
{
	static const char *const names[] = {
		[KS_E_FAIL] = "fail", [KS_E_INPUT] = "input", [KS_E_IO] = "io",
		[KS_E_NOMEM] = "nomem", [KS_E_LIMIT] = "limit", [KS_E_USAGE] = "usage",
		[KS_E_CANCELLED] = "cancelled", [KS_E_PEER] = "peer",
		[KS_E_UNAVAILABLE] = "unavailable",
	};

	return code >= KS_E_FAIL && code <= KS_E_UNAVAILABLE ? names[code] : "fail";
}
