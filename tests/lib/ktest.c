/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktest.c - see ktest.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "ktest.h"

static bool cur_failed, cur_skipped;
static char cur_msg[1024];

void kt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cur_failed)	/* keep the first reason, count the case once */
		return;
	cur_failed = true;
	n = snprintf(cur_msg, sizeof(cur_msg), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(cur_msg + n, sizeof(cur_msg) - (size_t)n, fmt, ap);
	va_end(ap);
}

void kt_skip(const char *fmt, ...)
{
	va_list ap;

	cur_skipped = true;
	va_start(ap, fmt);
	vsnprintf(cur_msg, sizeof(cur_msg), fmt, ap);
	va_end(ap);
}

bool kt_failed(void)
{
	return cur_failed;
}

int kt_main(const struct kt_case *cases)
{
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (; cases->name; cases++) {
		cur_failed = cur_skipped = false;
		cur_msg[0] = 0;
		cases->fn();
		if (cur_failed) {
			printf("not ok %s: %s\n", cases->name, cur_msg);
			failed++;
		} else if (cur_skipped) {
			printf("skip %s: %s\n", cases->name, cur_msg);
		} else {
			printf("ok %s\n", cases->name);
		}
	}
	return failed ? 1 : 0;
}

const char *kt_shared(const char *rel)
{
	static char path[4096];
	const char *root = getenv("KS_SHARED");

	snprintf(path, sizeof(path), "%s/%s", root && *root ? root : "../shared", rel);
	return access(path, R_OK) == 0 ? path : NULL;
}

char *kt_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap * 2 + 65537);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + 65536;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

char *kt_run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	int st;

	if (!p)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap * 2 + 65537);
			if (!nb)
				break;
			buf = nb;
			cap = cap * 2 + 65536;
		}
		r = fread(buf + n, 1, cap - n, p);
		n += r;
	} while (r > 0);
	st = pclose(p);
	if (!buf)
		return NULL;
	buf[n] = 0;
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return buf;
}

const char *kt_tmpdir(void)
{
	static char dir[4096];
	const char *base = getenv("KS_TMP");

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s", base && *base ? base : "/tmp/kvmscope-test");
		mkdir(dir, 0700);
	}
	return dir;
}

struct tep_event *kt_fixture_event(struct tep_handle *tep, const char *dir, const char *system,
				   const char *name)
{
	char path[256];
	size_t len;
	char *text;
	struct tep_event *ev = NULL;

	snprintf(path, sizeof(path), "tests/fixtures/%s/%s.format", dir, name);
	text = kt_read_file(path, &len);
	if (!text)
		return NULL;
	if (tep_parse_event(tep, text, len, system) == 0)
		ev = tep_find_event_by_name(tep, system, name);
	free(text);
	return ev;
}
