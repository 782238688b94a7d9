/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data reader.
 *
 * Writes the input to a temporary file (the reader reads files), opens it
 * with ks_perfdata_open() and pulls every record.  Also feeds the bytes to
 * the tracing-data parser directly.  Build:
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
	if (ks_perfdata_open(&src, path, &err) == 0) {
		while (ks_source_next(src, &rec, &err) > 0)
			;
		ks_source_close(src);
	}
	tep = tep_alloc();
	if (tep) {
		ks_tracing_data_parse_len(tep, data, size, "fuzz", 0, &used, &err);
		tep_free(tep);
	}
	return 0;
}
