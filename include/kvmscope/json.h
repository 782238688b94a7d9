/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json.h - the one JSON writer every --json output goes through.
 *
 *	struct ks_json j;
 *	ks_json_init(&j, stdout);
 *	ks_json_begin_object(&j);
 *	ks_json_key(&j, "samples"); ks_json_u64(&j, 42);
 *	ks_json_end_object(&j);
 *	ks_json_finish(&j);    (newline)
 *
 * Commas, nesting and string escaping are handled here; callers never
 * print braces themselves.  Times are integer nanoseconds by convention.
 */
#ifndef KVMSCOPE_JSON_H
#define KVMSCOPE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define KS_JSON_MAX_DEPTH 32

struct ks_json {
	FILE *out;
	int depth;
	bool need_comma[KS_JSON_MAX_DEPTH];
	bool after_key;
	bool pretty;
	int flat_depth;
};

void ks_json_init(struct ks_json *j, FILE *out, bool pretty);
/* Pretty output whose values nested deeper than DEPTH (the root object's
 * members are at 1) stay on their parent's line, compact: one line per
 * element of a long array at DEPTH.  0 (the default) = no limit. */
void ks_json_set_flat_depth(struct ks_json *j, int depth);
void ks_json_begin_object(struct ks_json *j);
void ks_json_end_object(struct ks_json *j);
void ks_json_begin_array(struct ks_json *j);
void ks_json_end_array(struct ks_json *j);
void ks_json_key(struct ks_json *j, const char *key);
void ks_json_string(struct ks_json *j, const char *s);
void ks_json_u64(struct ks_json *j, uint64_t v);
void ks_json_i64(struct ks_json *j, int64_t v);
void ks_json_double(struct ks_json *j, double v); /* non-finite -> null */
/* V / 10^DECIMALS written exactly, e.g. (123456, 3) -> 123.456: for
 * microsecond timestamps with nanosecond precision.  DECIMALS <= 9. */
void ks_json_decimal(struct ks_json *j, int64_t v, unsigned decimals);
void ks_json_bool(struct ks_json *j, bool v);
void ks_json_null(struct ks_json *j);
void ks_json_finish(struct ks_json *j);

/* Key + value in one call. */
void ks_json_kv_string(struct ks_json *j, const char *key, const char *s);
void ks_json_kv_u64(struct ks_json *j, const char *key, uint64_t v);
void ks_json_kv_i64(struct ks_json *j, const char *key, int64_t v);
void ks_json_kv_double(struct ks_json *j, const char *key, double v);

#endif
