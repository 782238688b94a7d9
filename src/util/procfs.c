/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procfs.c - read a small file of /proc/PID (see procfs.h).  Used by the
 * live reader (thread -> process) and by top (QEMU process names).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "text.h"

ssize_t ks_read_proc(int32_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (size == 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

void ks_qemu_name_of(const char *val, char *out, size_t len)
{
	const char *p = val;

	out[0] = 0;
	while (*p) {
		size_t n = strcspn(p, ","), eq = strcspn(p, "=");

		/* cut on a character boundary: the name may be any text */
		if (eq >= n && !out[0]) /* the first item without a key */
			snprintf(out, len, "%.*s", (int)ks_utf8_cut(p, n, len - 1), p);
		else if (eq == 5 && !strncmp(p, "guest", 5))
			snprintf(out, len, "%.*s", (int)ks_utf8_cut(p + 6, n - 6, len - 1), p + 6);
		p += n + (p[n] == ',');
	}
}

#define CMDLINE_MAX 65536 /* a QEMU command line of libvirt's is 5-20 KB */

bool ks_qemu_option(int32_t pid, const char *opt, char *out, size_t len)
{
	size_t ol = strlen(opt);
	char *buf, *p, *end;
	ssize_t n;
	bool found = false;

	out[0] = 0;
	if (pid <= 0 || !(buf = malloc(CMDLINE_MAX)))
		return false;
	n = ks_read_proc(pid, "cmdline", buf, CMDLINE_MAX);
	end = buf + (n > 0 ? n : 0);
	for (p = buf; p < end && !found; p += strlen(p) + 1) {
		const char *o = p[0] == '-' ? p + 1 + (p[1] == '-') : NULL;

		if (!o || strncmp(o, opt, ol))
			continue;
		if (o[ol] == '=')
			snprintf(out, len, "%s", o + ol + 1), found = true;
		else if (!o[ol] && p + strlen(p) + 1 < end)
			snprintf(out, len, "%s", p + strlen(p) + 1), found = true;
	}
	free(buf);
	return found;
}

bool ks_qemu_name(int32_t pid, char *out, size_t len)
{
	char val[512];

	out[0] = 0;
	if (!ks_qemu_option(pid, "name", val, sizeof(val)))
		return false;
	ks_qemu_name_of(val, out, len);
	return out[0] != 0;
}

/* Field 22 of /proc/PID/stat (after the ')' ending comm, which may hold
 * spaces and parentheses: field 3 is the first after the last ')'). */
static int start_time(int32_t pid, uint64_t *start)
{
	char buf[1024], *p;
	int field;

	if (ks_read_proc(pid, "stat", buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return -1;
	for (field = 2; field < 22; field++) { /* to the blank before field 22 */
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	return sscanf(p + 1, "%llu", (unsigned long long *)start) == 1 ? 0 : -1;
}

int ks_proc_id_of(int32_t pid, struct ks_proc_id *id)
{
	char path[64];
	struct stat st;

	if (!pid)
		pid = (int32_t)getpid();
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat(path, &st) < 0 || start_time(pid, &id->start) < 0)
		return -1;
	id->pid = pid;
	id->pidns = (uint64_t)st.st_ino;
	return 0;
}

bool ks_proc_id_dead(const struct ks_proc_id *id)
{
	struct ks_proc_id self, now;
	char path[64];
	struct stat st;

	if (id->pid <= 0 || ks_proc_id_of(0, &self) < 0 || self.pidns != id->pidns)
		return false;
	snprintf(path, sizeof(path), "/proc/%d", id->pid);
	if (stat(path, &st) < 0)
		return errno == ENOENT;
	/* the pid is taken: by the owner, or by a process started since */
	return ks_proc_id_of(id->pid, &now) == 0 && now.start != id->start;
}
