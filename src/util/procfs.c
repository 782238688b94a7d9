/*
 * procfs.c - read a small file of /proc/PID (see procfs.h).  Used by the
 * live reader (thread -> process) and by top (QEMU process names).
 */
#include <fcntl.h>
#include <stdio.h>
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
