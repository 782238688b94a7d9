/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-merge-pair - write a host and a guest trace.dat that belong together,
 * as `trace-cmd record --proxy`/agent tracing makes them, for the merge
 * benchmark and tests.
 *
 *	gen-merge-pair FORMAT_DIR OUT_DIR [EVENTS [zstd|zlib|none]]
 *
 * FORMAT_DIR holds real event formats (kvm_entry, kvm_exit, kvm_pio,
 * kvm_msr .format files, e.g. tests/fixtures/x86-6.18).  OUT_DIR receives:
 *   host.dat   EVENTS kvm_exit/kvm_entry events (default 5,000,000) of the
 *              4 vCPU threads of one guest, on 4 CPUs; TRACEID, and a GUEST
 *              option naming the guest's trace id and vCPU -> thread map;
 *   guest.dat  EVENTS kvm_pio/kvm_msr events on the guest's 4 CPUs, its own
 *              TRACEID and a TimeShift option (peer: the host) whose samples
 *              move each vCPU's clock by its own offset, interpolated
 *              between samples.
 * Both v7, compressed as asked (default zstd: what Debian's trace-cmd
 * reads), clock "local".  The oracle is trace-cmd report -i host -i guest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/tracedat_writer.h"
#include "tdgen.h"

#define NR_VCPUS 4
#define HOST_ID 0x1d2c3b4a59687766ull
#define GUEST_ID 0x0123456789abcdefull
#define TID0 4242
#define OPT_TIME_SHIFT 12
#define OPT_GUEST 13

static struct ks_tdw *create(const char *dir, const char *name, const char *comp, uint64_t id,
			     const struct fmt *fmts, int nfmts)
{
	struct ks_tdw_opts o = { .file_version = 7, .compression = comp, .nr_cpus = NR_VCPUS,
				 .clock = "local", .uname = "Linux gen 6.1.0 #1 SMP x86_64",
				 .has_trace_id = true, .trace_id = id };

	return create_with(dir, name, &o, fmts, nfmts);
}

/* Host: exit/entry pairs of each vCPU thread, on the CPU of its number. */
static void write_host(const char *dir, const char *comp, uint64_t events, const struct fmt *f)
{
	struct ks_tdw *w = create(dir, "host.dat", comp, HOST_ID, f, 2);
	uint8_t guest[64], *p = guest;
	struct ks_error err;
	uint32_t nv = NR_VCPUS, i;
	uint64_t n, ts = 1000000000ull;

	memcpy(p, "guest1", 7), p += 7;
	memcpy(p, &(uint64_t){ GUEST_ID }, 8), p += 8;
	memcpy(p, &nv, 4), p += 4;
	for (i = 0; i < NR_VCPUS; i++, p += 8) {
		uint32_t tid = TID0 + i;
		memcpy(p, &i, 4);
		memcpy(p + 4, &tid, 4);
	}
	if (ks_tdw_add_option(w, OPT_GUEST, guest, (uint32_t)(p - guest), &err) < 0)
		die("cannot add the GUEST option", &err);
	for (i = 0; i < NR_VCPUS; i++) {
		char comm[16];
		snprintf(comm, sizeof(comm), "CPU %u/KVM", i);
		if (ks_tdw_add_cmdline(w, (int32_t)(TID0 + i), comm, &err) < 0)
			die("cannot add a cmdline", &err);
	}
	for (n = 0; n < events; n++) {
		uint32_t cpu = (uint32_t)((n / 2) % NR_VCPUS);
		ts += 150 + (n % 7) * 40;
		add_event(w, 0, cpu, ts, f[n % 2].ev, (int32_t)(TID0 + cpu), n / 2);
	}
	finish(w);
}

/* Guest: its own events on each vCPU; clock behind the host's by an offset
 * per vCPU that drifts between three samples. */
static void write_guest(const char *dir, const char *comp, uint64_t events, const struct fmt *f)
{
	struct ks_tdw *w = create(dir, "guest.dat", comp, GUEST_ID, f, 2);
	uint64_t span = events * 250 + 1000000, n, ts = 1000;
	uint32_t ns = 3, c, k, flags = 1 /* interpolate */, nc = NR_VCPUS;
	uint8_t opt[16 + NR_VCPUS * (4 + 3 * 24)], *p = opt;
	struct ks_error err;

	memcpy(p, &(uint64_t){ HOST_ID }, 8), p += 8;
	memcpy(p, &flags, 4), p += 4;
	memcpy(p, &nc, 4), p += 4;
	for (c = 0; c < NR_VCPUS; c++) {
		memcpy(p, &ns, 4), p += 4;
		for (k = 0; k < 3; k++, p += 8) /* times */
			memcpy(p, &(uint64_t){ k * span / 2 }, 8);
		for (k = 0; k < 3; k++, p += 8) /* offsets */
			memcpy(p, &(int64_t){ 999990000ll + c * 1000 + k * 37 }, 8);
		for (k = 0; k < 3; k++, p += 8) /* scaling */
			memcpy(p, &(uint64_t){ 1 }, 8);
	}
	if (ks_tdw_add_option(w, OPT_TIME_SHIFT, opt, (uint32_t)(p - opt), &err) < 0)
		die("cannot add the TimeShift option", &err);
	if (ks_tdw_add_cmdline(w, 700, "guest-worker", &err) < 0 ||
	    ks_tdw_add_cmdline(w, 701, "guest-io", &err) < 0)
		die("cannot add a cmdline", &err);
	for (n = 0; n < events; n++) {
		uint32_t cpu = (uint32_t)(n % NR_VCPUS);
		ts += 200 + (n % 5) * 25;
		add_event(w, 0, cpu, ts, f[n % 3 == 0].ev, 700 + (int32_t)(n % 2), n);
	}
	finish(w);
}

int main(int argc, char **argv)
{
	struct fmt host[2], guest[2];
	uint64_t events = 5000000;
	const char *comp = "zstd";

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: gen-merge-pair FORMAT_DIR OUT_DIR [EVENTS [zstd|zlib|none]]\n");
		return 2;
	}
	if (argc > 3 && (events = strtoull(argv[3], NULL, 10)) == 0)
		die("EVENTS must be a positive number", NULL);
	if (argc > 4)
		comp = argv[4];
	tep = tep_alloc();
	if (!tep)
		die("out of memory", NULL);
	load_format(argv[1], "kvm_exit", &host[0]);
	load_format(argv[1], "kvm_entry", &host[1]);
	load_format(argv[1], "kvm_pio", &guest[0]);
	load_format(argv[1], "kvm_msr", &guest[1]);
	write_host(argv[2], comp, events, host);
	write_guest(argv[2], comp, events, guest);
	for (int i = 0; i < 2; i++) {
		free(host[i].text);
		free(guest[i].text);
	}
	tep_free(tep);
	return 0;
}
