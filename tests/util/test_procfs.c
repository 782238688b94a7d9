/*
 * test_procfs.c - ks_read_proc() against this process's own /proc files.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/ktest.h"
#include "util/procfs.h"

static void t_reads_own_status(void)
{
	char buf[4096];
	ssize_t n = ks_read_proc(getpid(), "status", buf, sizeof(buf));
	const char *tgid;

	KT_REQUIRE(n > 0);
	KT_EQ_U64(strlen(buf), (uint64_t)n); /* NUL-terminated */
	tgid = strstr(buf, "\nTgid:");
	KT_REQUIRE(tgid);
	KT_EQ_INT(strtol(tgid + 6, NULL, 10), getpid());
}

static void t_cuts_to_buffer(void)
{
	char buf[8];

	KT_EQ_INT(ks_read_proc(getpid(), "status", buf, sizeof(buf)), 7);
	KT_EQ_STR(buf, "Name:\tt");
	KT_EQ_INT(ks_read_proc(getpid(), "status", buf, 0), -1);
}

static void t_missing(void)
{
	char buf[64];

	KT_EQ_INT(ks_read_proc(getpid(), "no-such-file", buf, sizeof(buf)), -1);
	KT_EQ_INT(ks_read_proc(-5, "status", buf, sizeof(buf)), -1);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_reads_own_status),
		KT_CASE(t_cuts_to_buffer),
		KT_CASE(t_missing),
		{ 0 },
	};
	return kt_main(cases);
}
