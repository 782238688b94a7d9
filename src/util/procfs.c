/*
 * procfs.c - read a small file of /proc/PID (see procfs.h).  Used by the
 * live reader (thread -> process) and by top (QEMU process names).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

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

		if (eq >= n && !out[0]) /* the first item without a key */
			snprintf(out, len, "%.*s", (int)n, p);
		else if (eq == 5 && !strncmp(p, "guest", 5))
			snprintf(out, len, "%.*s", (int)(n - 6), p + 6);
		p += n + (p[n] == ',');
	}
}

bool ks_qemu_name(int32_t pid, char *out, size_t len)
{
	char buf[8192], *p, *end;
	ssize_t n;

	out[0] = 0;
	if (pid <= 0 || (n = ks_read_proc(pid, "cmdline", buf, sizeof(buf))) <= 0)
		return false;
	end = buf + n;
	for (p = buf; p < end; p += strlen(p) + 1) {
		const char *opt = p[0] == '-' && p[1] == '-' ? p + 1 : p; /* --name too */

		if (!strcmp(opt, "-name") && p + strlen(p) + 1 < end) {
			ks_qemu_name_of(p + strlen(p) + 1, out, len);
			return out[0] != 0;
		}
	}
	return false;
}
