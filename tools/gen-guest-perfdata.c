/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-guest-perfdata - write a synthetic perf.data of guest PMU samples, as
 * `perf kvm record` / `perf record -e cycles:G` would on a KVM host, plus the
 * guest kallsyms the addresses come from and the expected profile.
 *
 * Usage:
 *   gen-guest-perfdata -o OUT --kallsyms KALLSYMS_OUT [--expect EXPECT_OUT] [--modules M]
 *                      [--samples N] [--vms N] [--vcpus N] [--seed N] [--callchain]
 *                      [--round N]
 *
 * The file is written from scratch (no template): header, one cycles attr
 * (sample_type IP|TID|TIME|CPU|PERIOD [|CALLCHAIN], exclude_host), COMM
 * records naming each VM "qemu-vmN" and its vCPU threads "CPU N/KVM", and
 * SAMPLE records with misc = guest kernel (4) or guest user (5); about 5 %
 * are host-kernel samples (misc 1) that a guest report must skip.  With
 * --callchain every sample has a callchain PERF_CONTEXT_GUEST_KERNEL (or
 * _USER), leaf, caller, caller's caller - the layout of the guest callchain
 * patches (seed 001).  The data starts with the guest kernel's
 * PERF_RECORD_MMAP as `perf kvm record` synthesizes it for a guest given by
 * --guestkallsyms: misc GUEST_KERNEL, pid 0 (perf's DEFAULT_GUEST_KERNEL_ID
 * machine, which every guest sample falls back to), file name
 * "[guest.kernel.kallsyms]_stext", pgoff = _stext; so `perf kvm --guest
 * --guestkallsyms=K --guestmodules=M report` can serve as an oracle.
 * --modules writes a guest /proc/modules (one module past _etext, no
 * samples) for --guestmodules.  Guest user addresses are below 2^47.  Addresses are
 * drawn from 64 spots per kernel function and 4096 user spots, so a profile
 * has a realistic number of distinct addresses (~130 k for 16 vCPUs).
 *
 * A PERF_RECORD_FINISHED_ROUND follows every --round samples (default 4096;
 * 0: none), as perf record writes one after each pass over its buffers.
 *
 * EXPECT_OUT lists, independently of any reader, one line per guest sample
 * bucket: "vm_pid mode symbol count" (mode k/u; user symbols are
 * "[unknown]"), and one "host N" line.  Deterministic from --seed.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_IP (1u << 0)
#define ST_TID (1u << 1)
#define ST_TIME (1u << 2)
#define ST_CPU (1u << 7)
#define ST_PERIOD (1u << 8)
#define ST_CALLCHAIN (1u << 5)
#define REC_MMAP 1
#define REC_COMM 3
#define REC_SAMPLE 9
#define MISC_KERNEL 1
#define MISC_GUEST_KERNEL 4
#define MISC_GUEST_USER 5
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER ((uint64_t)-2560)
#define ATTR_SIZE 128
#define NSYMS 64
#define KBASE 0xffffffff81000000ull

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void w64(FILE *f, uint64_t v) { fwrite(&v, 8, 1, f); }
static void w32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void w16(FILE *f, uint16_t v) { fwrite(&v, 2, 1, f); }

struct args {
	const char *out, *kallsyms, *expect, *modules;
	long samples, vms, vcpus, round;
	bool callchain;
};

static uint64_t sym_start(int i) { return KBASE + (uint64_t)i * 0x400; }

static void write_kallsyms(const char *path)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%016llx T _stext\n", (unsigned long long)KBASE);
	for (i = 0; i < NSYMS; i++)
		fprintf(f, "%016llx %c guest_fn_%02d\n", (unsigned long long)sym_start(i),
			i % 3 ? 'T' : 't', i);
	fprintf(f, "%016llx T _etext\n", (unsigned long long)sym_start(NSYMS));
	fclose(f);
}

static void write_modules(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "guest_mod 16384 0 - Live 0x%016llx\n",
		(unsigned long long)(sym_start(NSYMS) + 0x100000));
	fclose(f);
}

/* The guest kernel map, as perf_event__synthesize_kernel_mmap writes it for
 * a guest machine (tools/perf/util/synthetic-events.c). */
static void write_guest_kernel_mmap(FILE *f)
{
	static const char name[] = "[guest.kernel.kallsyms]_stext";
	size_t len = (sizeof(name) + 7) & ~(size_t)7;
	char buf[64] = { 0 };

	memcpy(buf, name, sizeof(name));
	w32(f, REC_MMAP); w16(f, MISC_GUEST_KERNEL); w16(f, (uint16_t)(8 + 8 + 24 + len));
	w32(f, 0); w32(f, 0);                       /* pid, tid: DEFAULT_GUEST_KERNEL_ID */
	w64(f, KBASE);                              /* start */
	w64(f, sym_start(NSYMS) - KBASE);           /* len: up to _etext */
	w64(f, KBASE);                              /* pgoff: _stext */
	fwrite(buf, 1, len, f);
}

static void write_header(FILE *f, uint64_t data_off, uint64_t data_size)
{
	fwrite("PERFILE2", 8, 1, f);
	w64(f, 104);                     /* header size */
	w64(f, ATTR_SIZE + 16);          /* attr entry size */
	w64(f, 104); w64(f, ATTR_SIZE + 16);   /* attrs section */
	w64(f, data_off); w64(f, data_size);   /* data */
	w64(f, 0); w64(f, 0);                  /* event types */
	for (int i = 0; i < 4; i++)
		w64(f, 0);                       /* no feature sections */
}

static void write_attr(FILE *f, bool callchain)
{
	uint8_t a[ATTR_SIZE] = { 0 };
	uint32_t type = 0, size = ATTR_SIZE;
	uint64_t config = 0, period = 100000;
	uint64_t st = ST_IP | ST_TID | ST_TIME | ST_CPU | ST_PERIOD | (callchain ? ST_CALLCHAIN : 0);
	uint64_t flags = 1ull << 19; /* exclude_host */

	memcpy(a, &type, 4);
	memcpy(a + 4, &size, 4);
	memcpy(a + 8, &config, 8);
	memcpy(a + 16, &period, 8);
	memcpy(a + 24, &st, 8);
	memcpy(a + 40, &flags, 8);
	fwrite(a, 1, sizeof(a), f);
	w64(f, 0); w64(f, 0);          /* no ids */
}

static void write_comm(FILE *f, uint32_t pid, uint32_t tid, const char *comm)
{
	size_t len = (strlen(comm) + 1 + 7) & ~(size_t)7;
	char buf[64] = { 0 };

	strncpy(buf, comm, sizeof(buf) - 1);
	w32(f, REC_COMM); w16(f, 0); w16(f, (uint16_t)(8 + 8 + len));
	w32(f, pid); w32(f, tid);
	fwrite(buf, 1, len, f);
}

static void write_sample(FILE *f, uint16_t misc, uint64_t ip, uint32_t pid, uint32_t tid,
			 uint64_t t, uint32_t cpu, const uint64_t *chain, int nchain, bool callchain)
{
	uint16_t size = (uint16_t)(8 + 8 + 8 + 8 + 8 + 8 + (callchain ? 8 + 8 * nchain : 0));

	w32(f, REC_SAMPLE); w16(f, misc); w16(f, size);
	w64(f, ip);
	w32(f, pid); w32(f, tid);
	w64(f, t);
	w32(f, cpu); w32(f, 0);
	w64(f, 100000);
	if (callchain) {
		w64(f, (uint64_t)nchain);
		for (int i = 0; i < nchain; i++)
			w64(f, chain[i]);
	}
}

/* counts[vm][mode][sym] ; mode 0 kernel, 1 user (sym index NSYMS) */
/* perf record writes one after each pass over its ring buffers. */
static void write_finished_round(FILE *f)
{
	w32(f, 68); /* PERF_RECORD_FINISHED_ROUND */
	w16(f, 0);
	w16(f, 8);
}

static void run(const struct args *a)
{
	FILE *f = fopen(a->out, "wb");
	uint64_t (*counts)[2][NSYMS + 1] = calloc((size_t)a->vms, sizeof(*counts));
	uint64_t host = 0, t = 1000000000ull;
	long i, v, c;

	if (!f || !counts) {
		perror(a->out);
		exit(1);
	}
	write_header(f, 0, 0);
	write_attr(f, a->callchain);
	long data_off = ftell(f);
	write_guest_kernel_mmap(f);
	for (v = 0; v < a->vms; v++) {
		char name[32];
		uint32_t pid = 1000 + (uint32_t)v * 100;

		snprintf(name, sizeof(name), "qemu-vm%ld", v);
		write_comm(f, pid, pid, name);
		for (c = 0; c < a->vcpus; c++) {
			snprintf(name, sizeof(name), "CPU %ld/KVM", c);
			write_comm(f, pid, pid + 1 + (uint32_t)c, name);
		}
	}
	for (i = 0; i < a->samples; i++) {
		uint64_t r = rnd(), chain[4];

		if (a->round && i && i % a->round == 0)
			write_finished_round(f);
		uint32_t vm = (uint32_t)(r % (uint64_t)a->vms), vc = (uint32_t)((r >> 8) % (uint64_t)a->vcpus);
		uint32_t pid = 1000 + vm * 100, tid = pid + 1 + vc, cpu = (uint32_t)((r >> 16) % 8);
		unsigned kind = (unsigned)((r >> 24) % 100);
		/* skewed symbol choice: min of two uniforms */
		unsigned s1 = (unsigned)((r >> 32) % NSYMS), s2 = (unsigned)((r >> 40) % NSYMS);
		unsigned sym = s1 < s2 ? s1 : s2;
		uint64_t ip;

		t += 1000 + (r >> 48) % 1000;
		if (kind < 5) {
			write_sample(f, MISC_KERNEL, 0xffffffff90000000ull + (r & 0xfff), pid, tid, t,
				     cpu, chain, 0, a->callchain);
			host++;
		} else if (kind < 80) {
			ip = sym_start((int)sym) + ((r >> 52) % 64) * 16; /* 64 hot spots per function */
			chain[0] = CTX_GUEST_KERNEL;
			chain[1] = ip;
			chain[2] = sym_start((int)((sym + 1) % NSYMS)) + 0x10;
			chain[3] = sym_start(0) + 0x20;
			write_sample(f, MISC_GUEST_KERNEL, ip, pid, tid, t, cpu, chain, 4, a->callchain);
			counts[vm][0][sym]++;
		} else {
			ip = 0x400000 + ((r >> 20) & 0xfff) * 4; /* 4096 user addresses */
			chain[0] = CTX_GUEST_USER;
			chain[1] = ip;
			chain[2] = 0x400100;
			write_sample(f, MISC_GUEST_USER, ip, pid, tid, t, cpu, chain, 3, a->callchain);
			counts[vm][1][NSYMS]++;
		}
	}
	long end = ftell(f);
	fseek(f, 0, SEEK_SET);
	write_header(f, (uint64_t)data_off, (uint64_t)(end - data_off));
	if (fclose(f) != 0) {
		perror(a->out);
		exit(1);
	}
	if (a->expect) {
		FILE *e = fopen(a->expect, "w");

		if (!e) {
			perror(a->expect);
			exit(1);
		}
		for (v = 0; v < a->vms; v++) {
			for (int s = 0; s < NSYMS; s++)
				if (counts[v][0][s])
					fprintf(e, "%ld k guest_fn_%02d %llu\n", 1000 + v * 100, s,
						(unsigned long long)counts[v][0][s]);
			if (counts[v][1][NSYMS])
				fprintf(e, "%ld u [unknown] %llu\n", 1000 + v * 100,
					(unsigned long long)counts[v][1][NSYMS]);
		}
		fprintf(e, "host %llu\n", (unsigned long long)host);
		fclose(e);
	}
	free(counts);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "expect", required_argument, NULL, 'e' },
		{ "modules", required_argument, NULL, 'M' },
		{ "samples", required_argument, NULL, 'n' },
		{ "vms", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "callchain", no_argument, NULL, 'g' },
		{ "round", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct args a = { .samples = 10000, .vms = 2, .vcpus = 2, .round = 4096 };
	int c;

	rng_state = 88172645463325252ull;
	while ((c = getopt_long(argc, argv, "o:k:e:M:n:m:c:s:gr:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a.out = optarg; break;
		case 'k': a.kallsyms = optarg; break;
		case 'e': a.expect = optarg; break;
		case 'M': a.modules = optarg; break;
		case 'n': a.samples = atol(optarg); break;
		case 'm': a.vms = atol(optarg); break;
		case 'c': a.vcpus = atol(optarg); break;
		case 's': rng_state ^= (uint64_t)atoll(optarg) * 0x9e3779b97f4a7c15ull; break;
		case 'g': a.callchain = true; break;
		case 'r': a.round = atol(optarg); break;
		default:
			fprintf(stderr, "usage: gen-guest-perfdata -o OUT --kallsyms K [--expect E] "
				"[--modules M] [--samples N] [--vms N] [--vcpus N] [--seed N] [--callchain]\n"
				"       [--round N]\n");
			return 1;
		}
	}
	if (!a.out || !a.kallsyms || a.samples < 0 || a.vms < 1 || a.vcpus < 1 || a.vms > 1000 ||
	    a.round < 0) {
		fprintf(stderr, "gen-guest-perfdata: -o and --kallsyms are required\n");
		return 1;
	}
	if (!rng_state)
		rng_state = 1;
	write_kallsyms(a.kallsyms);
	if (a.modules)
		write_modules(a.modules);
	run(&a);
	return 0;
}
