/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * syscall-load - a paced event source for the record benchmark: THREADS
 * threads together make RATE getppid() calls per second for SECONDS
 * seconds (1 ms slots; a slot that falls behind is not made up, so the
 * rate is a ceiling).  Prints the calls made and the achieved rate.
 *
 *	syscall-load RATE SECONDS [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct load {
	double per_ms, seconds;
	unsigned long calls;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
	struct load *l = arg;
	double start = now_s(), owed = 0;

	for (unsigned long slot = 0;; slot++) {
		double slot_end = start + (double)(slot + 1) * 1e-3, t;

		if (slot_end - start > l->seconds)
			break;
		owed += l->per_ms;
		for (; owed >= 1 && now_s() < slot_end; owed -= 1) {
			syscall(SYS_getppid);
			l->calls++;
		}
		if (owed > l->per_ms)
			owed = 0; /* behind: drop the backlog */
		t = slot_end - now_s();
		if (t > 0) {
			struct timespec ts = { 0, (long)(t * 1e9) };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double rate, seconds, t0, t1;
	unsigned long total = 0;
	int threads, i;
	pthread_t th[64];
	struct load l[64];

	if (argc < 3) {
		fprintf(stderr, "usage: syscall-load RATE SECONDS [THREADS]\n");
		return 1;
	}
	rate = atof(argv[1]);
	seconds = atof(argv[2]);
	threads = argc > 3 ? atoi(argv[3]) : 1;
	if (rate <= 0 || seconds <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "syscall-load: bad arguments\n");
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < threads; i++) {
		l[i] = (struct load){ rate / threads / 1000.0, seconds, 0 };
		if (pthread_create(&th[i], NULL, run, &l[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		total += l[i].calls;
	}
	t1 = now_s();
	printf("calls=%lu rate=%.0f\n", total, (double)total / (t1 - t0));
	return 0;
}
