/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine-hold.c - open the BPF engine, hold it, then print what it counted
 * (tests/input/engine_bpf_test.sh, the nested lab).
 *
 *   engine-hold [--tracepoints] [--no-exits] [--pid PID] [--max-series N]
 *
 * Prints "ready prog ID... link ID..." (the kernel ids of the programs
 * loaded and links held) once attached, then waits until its standard
 * input reaches end of file (or SIGKILL, for the test of what stays
 * attached), reads the engine once and prints one line per series and per
 * event count, then the counters:
 *   exit PID TID VCPU ISA LEVEL REASON COUNT SUM MIN MAX B0 ... B24
 *   tp PID NAME COUNT
 *   stats overflow_threads N overflow_series N overflow_procs N unpaired N
 * Exit 1 with the engine's one-line reason when it cannot open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "input/engine_bpf.h"
#include "input/engine_impl.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	struct ks_engine_config cfg = KS_ENGINE_CONFIG_INIT;
	struct ks_engine_snapshot snap;
	struct ks_engine *e;
	struct ks_error err;
	uint32_t progs[256], links[256];
	size_t np, nl, i;
	char buf[64];
	int k;

	cfg.kind = KS_ENGINE_BPF;
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--tracepoints"))
			cfg.tracepoints = true;
		else if (!strcmp(argv[k], "--no-exits"))
			cfg.exits = false;
		else if (!strcmp(argv[k], "--pid") && k + 1 < argc)
			cfg.pid = atoi(argv[++k]);
		else if (!strcmp(argv[k], "--max-series") && k + 1 < argc)
			cfg.max_series = (uint32_t)atoi(argv[++k]);
		else {
			fprintf(stderr, "usage: engine-hold [--tracepoints] [--no-exits] [--pid PID] [--max-series N]\n");
			return 2;
		}
	}
	libbpf_set_print(quiet);
	if (ks_engine_bpf_open(&e, &cfg, &err) < 0) {
		fprintf(stderr, "engine-hold: %s\n", err.msg);
		return 1;
	}
	if (ks_engine_bpf_ids(e, progs, &np, links, &nl, 256, &err) < 0) {
		fprintf(stderr, "engine-hold: %s\n", err.msg);
		return 1;
	}
	printf("ready");
	for (i = 0; i < np; i++)
		printf(" prog %u", progs[i]);
	for (i = 0; i < nl; i++)
		printf(" link %u", links[i]);
	printf("\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	memset(&snap, 0, sizeof(snap));
	if (e->ops->read(e, &snap, &err) < 0) {
		fprintf(stderr, "engine-hold: %s\n", err.msg);
		return 1;
	}
	for (i = 0; i < snap.nexits; i++) {
		const struct ks_engine_exit *x = &snap.exits[i];

		printf("exit %d %d %d %u %u %llu %llu %llu %llu %llu", x->pid, x->tid, x->vcpu,
		       x->isa, x->level, (unsigned long long)x->reason,
		       (unsigned long long)x->count, (unsigned long long)x->sum_ns,
		       (unsigned long long)x->min_ns, (unsigned long long)x->max_ns);
		for (k = 0; k <= KS_LAT_NBUCKETS; k++)
			printf(" %llu", (unsigned long long)x->bucket[k]);
		printf("\n");
	}
	for (i = 0; i < snap.ntps; i++)
		printf("tp %d %s %llu\n", snap.tps[i].pid, snap.tps[i].name,
		       (unsigned long long)snap.tps[i].count);
	printf("stats overflow_threads %llu overflow_series %llu overflow_procs %llu unpaired %llu arch %s isa %s\n",
	       (unsigned long long)snap.overflow_threads, (unsigned long long)snap.overflow_series,
	       (unsigned long long)snap.overflow_procs, (unsigned long long)snap.unpaired,
	       snap.arch[0] ? snap.arch : "-", snap.isa[0] ? snap.isa : "-");
	free(snap.exits);
	free(snap.tps);
	e->ops->close(e);
	return 0;
}
