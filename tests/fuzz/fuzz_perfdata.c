/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data reader.
 *
 * Writes the input to a temporary file (the reader reads files), opens it
 * with ks_perfdata_open() and pulls every record: once one by one, once in
 * batches with a selection of events (as kvmscope stat reads), touching
 * every byte a record points to, with the data section mapped and framed by
 * the prefetch thread 1 KB at a time (as large files are read).  The
 * records also go through the stat engine and its report, in a mode the
 * input's last byte picks (event class, perf's semantics or ours, one view
 * or two, a vCPU or pid filter), as `kvmscope stat` runs them.  Also feeds
 * the bytes to the tracing-data parser directly.  Build:
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     -I/usr/include/traceevent tests/fuzz/fuzz_perfdata.c LIB -ltraceevent ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "fuzz_input.h"
#include "input/source_impl.h"
#include "input/tracing_data.h"
#include "kvmscope/source.h"
#include "kvmscope/stat.h"
#include "kvmscope/stat_report.h"

static bool even_ids(void *ctx, struct tep_event *ev)
{
	(void)ctx;
	return !(ev->id & 1);
}

/* Every byte the record points to (ASan checks each read). */
static unsigned touch(const struct ks_record *r)
{
	const uint8_t *d = r->data;
	unsigned sum = 0;
	uint32_t i;

	for (i = 0; d && i < r->size; i++)
		sum += d[i];
	for (i = 0; r->callchain && i < r->nr_callchain; i++)
		sum += (unsigned)r->callchain[i];
	for (i = 0; r->comm && r->comm[i]; i++)
		sum += (unsigned char)r->comm[i];
	return sum;
}

static void read_selected(const char *path)
{
	struct ks_record recs[7];
	struct ks_source *src;
	struct ks_error err;
	volatile unsigned sink = 0;
	int n, i;

	ks_ctx_perfdata_tune(fuzz_ctx(), 0, 1024);
	if (ks_perfdata_open(&src, path, FUZZ_OPTS, &err) < 0) {
		ks_ctx_perfdata_tune(fuzz_ctx(), KS_PD_MAP_MIN, 0);
		return;
	}
	ks_source_select(src, even_ids, NULL);
	while ((n = ks_source_next_batch(src, recs, 7, &err)) > 0)
		for (i = 0; i < n; i++)
			sink += touch(&recs[i]);
	ks_source_close(src);
	ks_ctx_perfdata_tune(fuzz_ctx(), KS_PD_MAP_MIN, 0);
}

/* The stat configuration of MODE (bits: class, perf_compat, second
 * view, filter). */
static void stat_config(struct ks_stat_config *cfg, struct ks_stat_report_opts *o, uint8_t mode)
{
	static const char *const classes[] = { "vmexit", "mmio", "ioport", "msr" };

	*cfg = (struct ks_stat_config)KS_STAT_CONFIG_INIT;
	*o = (struct ks_stat_report_opts){ .format = KS_STAT_JSON, .vcpu = -1 };
	cfg->event_class = classes[mode & 3];
	cfg->views[0] = KS_DIM_KEY;
	if (mode & 4) {
		cfg->perf_compat = cfg->no_histograms = cfg->no_begin_counts = true;
		o->format = KS_STAT_PERF;
	}
	if (mode & 8)
		cfg->views[1] = KS_DIM_VM | KS_DIM_VCPU;
	if (mode & 16)
		cfg->vcpu = o->vcpu = 1;
	if (mode & 32)
		cfg->pids[cfg->npids++] = (int32_t)(mode >> 6);
}

static void read_stat(const char *path, uint8_t mode)
{
	struct ks_record recs[16];
	struct ks_stat_report_opts o;
	struct ks_stat_config cfg;
	struct ks_source *src;
	struct ks_error err;
	struct ks_stat *st;
	FILE *out;
	int n;

	if (ks_perfdata_open(&src, path, FUZZ_OPTS, &err) < 0)
		return;
	stat_config(&cfg, &o, mode);
	st = ks_stat_new_source(&cfg, src, &err);
	if (st) {
		ks_stat_select(st, src);
		while ((n = ks_source_next_batch(src, recs, 16, &err)) > 0)
			ks_stat_add_batch(st, recs, (size_t)n);
		o.src_info = ks_source_info(src);
		o.src_stats = ks_source_stats(src);
		out = fopen("/dev/null", "w");
		if (out) {
			ks_stat_report(out, st, &o, &err);
			fclose(out);
		}
		ks_stat_free(st);
	}
	ks_source_close(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct tep_handle *tep;
	uint64_t used = 0;
	const char *path = fuzz_input_path(data, size);

	if (!path)
		return 0;
	if (ks_perfdata_open(&src, path, FUZZ_OPTS, &err) == 0) {
		while (ks_source_next(src, &rec, &err) > 0)
			;
		/* the formats and kallsyms no record needed: parsed too */
		ks_source_parse_all(src);
		tep_find_function(ks_source_tep(src), 0xffffffff81000000ull);
		ks_source_close(src);
		read_selected(path);
		read_stat(path, data[size - 1]);
	}
	tep = tep_alloc();
	if (tep) {
		ks_tracing_data_parse_len(fuzz_ctx(), tep, data, size, "fuzz", 0, &used, &err);
		tep_free(tep);
	}
	return 0;
}
