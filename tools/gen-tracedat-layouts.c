/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-tracedat-layouts - write trace.dat files with buffer instances and
 * with the latency layout, for the tests of the trace.dat reader.
 *
 *	gen-tracedat-layouts FORMAT_DIR OUT_DIR
 *
 * FORMAT_DIR holds real event formats (kvm_entry.format, kvm_exit.format,
 * e.g. tests/fixtures/x86-6.18).  OUT_DIR receives:
 *   inst-v6.dat inst-v7.dat inst-v7-zstd.dat inst-v7-zlib.dat
 *	top-level buffer plus the instances "guest1" and "a_longer_name",
 *	kvm_exit/kvm_entry events on 2 CPUs, with timestamps that tie across
 *	buffers and CPUs (to check the merge order against trace-cmd report);
 *   inst-counts.txt  "BUFFER EVENTS" per buffer ("-" is the top-level one);
 *   lat-v6.dat lat-v7.dat lat-v7-zstd.dat lat-v7-zlib.dat  latency layout
 *	holding the text of lat.txt (a tracefs "trace" file with kvm lines).
 * Everything is written with kvmscope's trace.dat writer; the oracle is
 * trace-cmd report on the same files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/tracedat_writer.h"
#include "tdgen.h"

static const char *const instance_names[] = { "guest1", "a_longer_name" };

static struct ks_tdw *create(const char *dir, const char *name, int version, const char *comp,
			     const struct fmt *fmts, int nfmts)
{
	struct ks_tdw_opts o = { .file_version = version, .compression = comp, .nr_cpus = 2,
				 .clock = "local", .uname = "Linux gen 6.1.0 #1 SMP x86_64" };
	struct ks_tdw *w = create_with(dir, name, &o, fmts, nfmts);
	struct ks_error err;

	if (ks_tdw_add_cmdline(w, 4242, "CPU 0/KVM", &err) < 0 ||
	    ks_tdw_add_cmdline(w, 4243, "CPU 1/KVM", &err) < 0 ||
	    ks_tdw_add_cmdline(w, 5150, "qemu-guest1", &err) < 0)
		die("cannot add a cmdline", &err);
	return w;
}

/* Instance files: the same events in each, counted per buffer. */
static void write_instances(const char *dir, const char *name, int version, const char *comp,
			    const struct fmt *fmts, uint64_t counts[3])
{
	struct ks_tdw *w = create(dir, name, version, comp, fmts, 2);
	struct ks_error err;
	uint32_t inst[2];
	uint64_t n, ts = 1000000000ull;
	int i;

	for (i = 0; i < 2; i++)
		if (ks_tdw_add_instance(w, instance_names[i], &inst[i], &err) < 0)
			die("cannot add an instance", &err);
	memset(counts, 0, 3 * sizeof(*counts));
	for (n = 0; n < 400; n++) {
		uint32_t cpu = (uint32_t)(n % 2);
		uint32_t b = (uint32_t)(n % 7 == 0 ? 1 : n % 5 == 0 ? 2 : 0);
		struct tep_event *ev = fmts[n % 2].ev;
		/* every 4th step keeps the time: ties across buffers and CPUs */
		if (n % 4)
			ts += 1000 + (n % 11) * 37;
		add_event(w, b, cpu, ts, ev, b == 1 ? 5150 : 4242 + (int32_t)cpu, n);
		counts[b]++;
		if (n % 13 == 0) { /* the same moment in another buffer */
			add_event(w, (b + 1) % 3, cpu, ts, fmts[1].ev, 4242 + (int32_t)cpu, n + 1);
			counts[(b + 1) % 3]++;
		}
	}
	finish(w);
}

static const char latency_text[] =
	"# tracer: nop\n"
	"#\n"
	"# entries-in-buffer/entries-written: 4/4   #P:2\n"
	"#\n"
	"#                                _-----=> irqs-off/BH-disabled\n"
	"#                               / _----=> need-resched\n"
	"#                              | / _---=> hardirq/softirq\n"
	"#                              || / _--=> preempt-depth\n"
	"#                              ||| / _-=> migrate-disable\n"
	"#                              |||| /     delay\n"
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	"#              | |         |   |||||     |         |\n"
	"       CPU 0/KVM-4242    [000] d..1.   100.000001: kvm_exit: vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff81000000 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000fd error_code 0x00000000\n"
	"       CPU 0/KVM-4242    [000] d..1.   100.000003: kvm_entry: vcpu 0, rip 0xffffffff81000000\n"
	"       CPU 1/KVM-4243    [001] d..1.   100.000004: kvm_exit: vcpu 1 reason HLT rip 0xffffffff81000010 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000\n"
	"       CPU 1/KVM-4243    [001] d..1.   100.000009: kvm_entry: vcpu 1, rip 0xffffffff81000011\n";

static void write_latency(const char *dir, const char *name, int version, const char *comp,
			  const struct fmt *fmts)
{
	struct ks_tdw *w = create(dir, name, version, comp, fmts, 2);
	struct ks_error err;

	if (ks_tdw_set_latency_text(w, latency_text, strlen(latency_text), &err) < 0)
		die("cannot set the latency text", &err);
	finish(w);
}

int main(int argc, char **argv)
{
	static const struct { const char *suffix; int version; const char *comp; } kinds[] = {
		{ "v6", 6, "none" }, { "v7", 7, "none" }, { "v7-zstd", 7, "zstd" },
		{ "v7-zlib", 7, "zlib" },
	};
	struct fmt fmts[2];
	uint64_t counts[3];
	char name[64], path[4096];
	FILE *f;
	size_t i;

	if (argc != 3) {
		fputs("usage: gen-tracedat-layouts FORMAT_DIR OUT_DIR\n", stderr);
		return 2;
	}
	tep = tep_alloc();
	if (!tep)
		die("out of memory", NULL);
	load_format(argv[1], "kvm_exit", &fmts[0]);
	load_format(argv[1], "kvm_entry", &fmts[1]);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(name, sizeof(name), "inst-%s.dat", kinds[i].suffix);
		write_instances(argv[2], name, kinds[i].version, kinds[i].comp, fmts, counts);
		snprintf(name, sizeof(name), "lat-%s.dat", kinds[i].suffix);
		write_latency(argv[2], name, kinds[i].version, kinds[i].comp, fmts);
	}
	snprintf(path, sizeof(path), "%s/inst-counts.txt", argv[2]);
	f = fopen(path, "w");
	if (!f)
		die(path, NULL);
	fprintf(f, "- %llu\n%s %llu\n%s %llu\n", (unsigned long long)counts[0], instance_names[0],
		(unsigned long long)counts[1], instance_names[1], (unsigned long long)counts[2]);
	fclose(f);
	snprintf(path, sizeof(path), "%s/lat.txt", argv[2]);
	f = fopen(path, "w");
	if (!f || fwrite(latency_text, 1, strlen(latency_text), f) != strlen(latency_text))
		die(path, NULL);
	fclose(f);
	for (i = 0; i < 2; i++)
		free(fmts[i].text);
	tep_free(tep);
	return 0;
}
