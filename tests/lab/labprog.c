/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * labprog.c - guest test program of the kvmscope lab (tests/lab/).
 *
 * Built by lab.sh with -O0 -fno-omit-frame-pointer -static and put into the
 * guest's initramfs.  Each mode sits in a known call chain that the lab
 * tests look for in `kvmscope sample` output:
 *   labprog spin   main -> lab_user_a -> lab_user_b -> lab_user_c -> lab_spin_leaf
 *   labprog sys    main -> lab_sys_a -> lab_sys_b -> lab_sys_c -> read(2) of
 *                  /dev/zero (syscall issued inline, so lab_sys_c is the
 *                  user frame under the kernel's pt_regs)
 *   labprog count  like spin, and writes "C <iterations>" lines to
 *                  /dev/ttyS2 every 2^22 iterations (throughput benchmark)
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long counter;
static int count_fd = -1;
static char zero_buf[1 << 16];

NOINLINE void lab_spin_leaf(void)
{
	for (int i = 0; i < 1000; i++)
		counter++;
}

NOINLINE void lab_user_c(void)
{
	for (;;) {
		lab_spin_leaf();
		if (count_fd >= 0 && (counter & ((1ul << 22) - 1)) < 1000) {
			char line[64];
			int n = snprintf(line, sizeof(line), "C %lu\n", counter);
			if (write(count_fd, line, (size_t)n) < 0)
				count_fd = -1;
		}
	}
}

NOINLINE void lab_user_b(void) { lab_user_c(); }
NOINLINE void lab_user_a(void) { lab_user_b(); }

NOINLINE long lab_sys_c(int fd)
{
	long ret;

	for (;;) {
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"(0L), "D"((long)fd), "S"(zero_buf), "d"(sizeof(zero_buf))
				 : "rcx", "r11", "memory");
		counter++;
	}
	return ret;
}

NOINLINE void lab_sys_b(int fd) { lab_sys_c(fd); }
NOINLINE void lab_sys_a(int fd) { lab_sys_b(fd); }

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";

	if (!strcmp(mode, "sys")) {
		int fd = open("/dev/zero", O_RDONLY);
		if (fd < 0)
			return 1;
		lab_sys_a(fd);
	}
	if (!strcmp(mode, "count"))
		count_fd = open("/dev/ttyS2", O_WRONLY);
	lab_user_a();
	return 0;
}
