/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procfs.h - read a small file of /proc/PID.
 */
#ifndef KVMSCOPE_UTIL_PROCFS_H
#define KVMSCOPE_UTIL_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read at most SIZE - 1 bytes of /proc/PID/FILE ("status", "cmdline",
 * "comm"...) into BUF and NUL-terminate them.  Returns the bytes read, or
 * -1 if the file cannot be read (the task is gone, or never was). */
ssize_t ks_read_proc(int32_t pid, const char *file, char *buf, size_t size);

/* The VM name in QEMU's -name VALUE ("NAME", "guest=NAME", with other
 * key=value items such as process=... around it) into OUT; "" if none. */
void ks_qemu_name_of(const char *val, char *out, size_t len);

/* The value of QEMU process PID's option OPT ("name" for "-name VALUE",
 * "--name VALUE" or "-name=VALUE") into OUT; false when its command line
 * has none or cannot be read. */
bool ks_qemu_option(int32_t pid, const char *opt, char *out, size_t len);

/* The -name of QEMU process PID (libvirt passes "guest=NAME,...") into OUT;
 * false when it has none or /proc/PID/cmdline cannot be read. */
bool ks_qemu_name(int32_t pid, char *out, size_t len);

/* Who a process is, beyond its pid: pids are reused, and a process in
 * another PID namespace has another pid there.  START is its start time
 * (clock ticks after boot, field 22 of /proc/PID/stat), PIDNS the inode of
 * its /proc/PID/ns/pid.  Leftovers (temporary files, tracefs instances)
 * carry their owner's, so that the next run can tell that the owner is
 * gone. */
struct ks_proc_id {
	int32_t pid;
	uint64_t start, pidns;
};

/* The identity of process PID (0: the caller).  0, or -1 when /proc cannot
 * tell it (gone, or no /proc). */
int ks_proc_id_of(int32_t pid, struct ks_proc_id *id);

/* Whether the owner ID names is provably gone: it was of the caller's PID
 * namespace, and its pid now names no process or one started at another
 * time.  False when it cannot be told (another namespace, no /proc): such
 * leftovers are left alone. */
bool ks_proc_id_dead(const struct ks_proc_id *id);

#endif
