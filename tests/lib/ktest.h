/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktest.h - the tiny test harness used by every tests/<dir>/test_*.c.
 *
 * A test program lists its cases with KT_CASE and calls kt_main().  Each
 * case prints one line: "ok NAME", "not ok NAME: FILE:LINE: why" or
 * "skip NAME: why".  tests/run.sh adds the lines of all programs up and
 * prints the closing "N passed, N failed, N skipped".
 *
 *	static void t_header(void) { KT_EQ_U64(parse(), 42); }
 *	int main(void) { static const struct kt_case c[] = { KT_CASE(t_header), {0} };
 *			 return kt_main(c); }
 */
#ifndef KTEST_H
#define KTEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct kt_case {
	const char *name;
	void (*fn)(void);
};
#define KT_CASE(f) { #f, f }

int kt_main(const struct kt_case *cases);

void kt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool kt_failed(void);

/* Path of a file under ../shared (or $KS_SHARED); NULL if absent.  The
 * returned string is static storage, valid until the next call. */
const char *kt_shared(const char *rel);
/* Read a whole file (NUL-terminated); NULL on failure.  Caller frees. */
char *kt_read_file(const char *path, size_t *len);
/* The event NAME of SYSTEM parsed into TEP from the fixture
 * tests/fixtures/DIR/NAME.format (run from the project's root); NULL if
 * absent or it does not parse. */
struct tep_handle;
struct tep_event;
struct tep_event *kt_fixture_event(struct tep_handle *tep, const char *dir, const char *system,
				   const char *name);
/* Run a shell command, capture stdout (NUL-terminated, caller frees); the
 * exit status goes to *status.  NULL if it could not run. */
char *kt_run(const char *cmd, int *status);
/* Directory for scratch files of this run (created on demand). */
const char *kt_tmpdir(void);

#define KT_EXPECT(c) do { if (!(c)) kt_fail(__FILE__, __LINE__, "expected %s", #c); } while (0)
#define KT_EQ_U64(a, b) do { uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b); \
	if (_a != _b) kt_fail(__FILE__, __LINE__, "%s == %" PRIu64 ", expected %" PRIu64, #a, _a, _b); } while (0)
#define KT_EQ_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) kt_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, _a, _b); } while (0)
#define KT_EQ_STR(a, b) do { const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b)) kt_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", \
		#a, _a ? _a : "(null)", _b ? _b : "(null)"); } while (0)
#define KT_REQUIRE(c) do { if (!(c)) { kt_fail(__FILE__, __LINE__, "required %s", #c); return; } } while (0)

#endif
