/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_pmu.c - libFuzzer target for the parsers of `kvmscope pmu`: the perf
 * and QEMU command-line parsers (NUL-separated argv as in /proc/PID/cmdline),
 * the CPU list parser, and - for inputs that start with a perf.data or
 * trace.dat magic, or with 'T' (then the rest) - a trace read through
 * ks_source into the vPMU traffic analysis.  Opening a trace sets up
 * libtraceevent, 100x the cost of the command-line parsers: doing it for
 * every input would starve them of executions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "kvmscope/pmu_host.h"
#include "kvmscope/pmu_trace.h"
#include "kvmscope/source.h"

static void fuzz_trace(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_path(data, size);
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct ks_pmu_trace_config cfg = { -1, -1 };

	if (path && ks_source_open_opts(&src, path, FUZZ_OPTS, &err) == 0) {
		struct ks_pmu_trace *pt = ks_pmu_trace_new(&cfg, ks_source_info(src));
		const struct ks_pmu_msr_row *rows;

		while (pt && ks_source_next(src, &rec, &err) > 0)
			ks_pmu_trace_add(pt, &rec);
		if (pt)
			ks_pmu_trace_msrs(pt, &rows);
		ks_pmu_trace_free(pt);
		ks_source_close(src);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_pmu_holder h;
	struct ks_pmu_vm v;
	struct ks_cpuset online, s;
	char *str;

	ks_cpuset_parse(&online, "0-7");
	memset(&h, 0, sizeof(h));
	ks_pmu_parse_perf_cmdline((const char *)data, size, &online, &h);
	memset(&v, 0, sizeof(v));
	ks_pmu_parse_qemu_cmdline((const char *)data, size, &v);
	str = malloc(size + 1);
	if (str) {
		memcpy(str, data, size);
		str[size] = 0;
		ks_cpuset_parse(&s, str);
		free(str);
	}
	if (size >= 8 && (!memcmp(data, "PERFILE2", 8) || !memcmp(data, "\x17\x08\x44tracing", 8)))
		fuzz_trace(data, size);
	else if (size && data[0] == 'T')
		fuzz_trace(data + 1, size - 1);
	return 0;
}
