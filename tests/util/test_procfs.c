/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_procfs.c - ks_read_proc() against this process's own /proc files.
 */
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
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

/* QEMU's -name forms: the name alone, libvirt's guest=NAME first or among
 * other items, and none at all */
static void t_qemu_name_of(void)
{
	char out[64];

	ks_qemu_name_of("vm1", out, sizeof(out));
	KT_EQ_STR(out, "vm1");
	ks_qemu_name_of("guest=web,debug-threads=on", out, sizeof(out));
	KT_EQ_STR(out, "web");
	ks_qemu_name_of("process=qemu-db,guest=db", out, sizeof(out));
	KT_EQ_STR(out, "db");
	ks_qemu_name_of("mail,process=qemu-mail", out, sizeof(out));
	KT_EQ_STR(out, "mail");
	ks_qemu_name_of("debug-threads=on", out, sizeof(out));
	KT_EQ_STR(out, "");
}

/* the -name of a live process, read from its /proc/PID/cmdline */
static void t_qemu_name_of_process(void)
{
	char out[64];
	pid_t pid = fork();

	KT_REQUIRE(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "sleep 5; true", "-name", "guest=lab,debug-threads=on",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && !ks_qemu_name(pid, out, sizeof(out)); i++)
		usleep(10000); /* until the child has exec'd */
	KT_EQ_STR(out, "lab");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	KT_EXPECT(!ks_qemu_name(getpid(), out, sizeof(out)));
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_reads_own_status),
		KT_CASE(t_cuts_to_buffer),
		KT_CASE(t_missing),
		KT_CASE(t_qemu_name_of),
		KT_CASE(t_qemu_name_of_process),
		{ 0 },
	};
	return kt_main(cases);
}
