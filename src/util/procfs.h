/*
 * procfs.h - read a small file of /proc/PID.
 */
#ifndef KVMSCOPE_UTIL_PROCFS_H
#define KVMSCOPE_UTIL_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read at most SIZE - 1 bytes of /proc/PID/FILE ("status", "cmdline",
 * "comm"...) into BUF and NUL-terminate them.  Returns the bytes read, or
 * -1 if the file cannot be read (the task is gone, or never was). */
ssize_t ks_read_proc(int32_t pid, const char *file, char *buf, size_t size);

#endif
