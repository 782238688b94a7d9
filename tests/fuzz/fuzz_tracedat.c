/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_tracedat.c - libFuzzer target for the trace.dat reader.
 *
 * The input bytes are written to a memfd (the reader works on files;
 * fuzz_input.h), opened with ks_tracedat_open(), read to the end (asking every
 * record's buffer instance; the latency text if any), its remaining formats
 * and its kallsyms parsed (they wait until needed) and closed; then opened
 * again and its pages walked as convert copies them (ks_tracedat_pages).  Build:
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     -I/usr/include/traceevent tests/fuzz/fuzz_tracedat.c LIBOBJS... \
 *     -ltraceevent -lz -lzstd
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <event-parse.h>

#include "fuzz_input.h"
#include "input/source_impl.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int page_sum(void *arg, uint32_t cpu, const void *page, uint32_t size, uint32_t events,
		    struct ks_error *err)
{
	(void)err;
	*(size_t *)arg += cpu + events + ((const uint8_t *)page)[size - 1];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_path(data, size);
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	int n = 0;

	if (!path)
		return 0;
	if (ks_tracedat_open(&src, path, FUZZ_OPTS, &err) == 0) {
		size_t len = 0;
		const char *text = ks_tracedat_latency_text(src, &len);
		volatile size_t sink = text && len ? (size_t)text[len - 1] : 0;

		while (n++ < 1000000 && ks_source_next(src, &rec, &err) > 0) {
			const char *b = ks_tracedat_record_buffer(src, &rec);
			sink += b ? (size_t)b[0] : 0;
		}
		(void)sink;
		ks_source_parse_all(src);
		tep_find_function(ks_source_tep(src), 0xffffffff81000000ull);
		ks_source_close(src);
	}
	if (ks_tracedat_open(&src, path, FUZZ_OPTS, &err) == 0) {
		volatile size_t sum = 0;
		size_t s = 0;

		(void)ks_tracedat_pages(src, page_sum, &s, &err);
		sum = s;
		(void)sum;
		ks_source_close(src);
	}
	return 0;
}
