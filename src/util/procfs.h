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

#endif
