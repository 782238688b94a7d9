/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * measure.c - run a command, print its wall time and peak RSS.
 *
 *	measure [-n RUNS] [-o FILE] -- CMD ARGS...
 *
 * Prints "wall_s=<best of RUNS> maxrss_kb=<max over runs> status=<exit>
 * cpu_s=<user+system CPU of the run with the median CPU time>" (the CPU time
 * counts the command's waited-for children too)
 * to stdout.  The command's stdout/stderr go to /dev/null, or to FILE with -o.
 * Used by bench/run.sh to compare kvmscope with perf and trace-cmd in one run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_once(char **argv, const char *out, double *wall, long *rss_kb, double *cpu)
{
	struct rusage ru;
	double t0 = now();
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*wall = now() - t0;
	*rss_kb = ru.ru_maxrss;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = 3, i = 1, st = 0, r;
	const char *out = NULL;
	double best = 1e30, wall, cpu, cpus[64];
	long rss, maxrss = 0;

	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
	}
	if (i + 1 >= argc) {
		fputs("usage: measure [-n RUNS] [-o FILE] -- CMD ARGS...\n", stderr);
		return 2;
	}
	for (r = 0; r < runs; r++) {
		st = run_once(argv + i + 1, out, &wall, &rss, &cpu);
		if (st < 0)
			return 1;
		if (wall < best)
			best = wall;
		if (rss > maxrss)
			maxrss = rss;
		if (r < 64)
			cpus[r] = cpu;
	}
	qsort(cpus, (size_t)(runs < 64 ? runs : 64), sizeof(cpus[0]), cmp_double);
	printf("wall_s=%.4f maxrss_kb=%ld status=%d cpu_s=%.4f\n", best, maxrss, st,
	       runs > 0 ? cpus[(runs < 64 ? runs : 64) / 2] : 0.0);
	return 0;
}
