/*
 * fuzz_qmp_stats.c - libFuzzer target for the QMP reply parser (kvmscope
 * exporter --qmp): the bytes up to the first NUL are a query-stats-schemas
 * reply, the rest a query-stats reply (target vcpu when the first byte is
 * odd); both must parse or fail cleanly.
 */
#include <stdint.h>
#include <string.h>

#include "kvmscope/qmp_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nul = memchr(s, 0, size);
	size_t first = nul ? (size_t)(nul - s) : size;
	struct ks_qmpx_schema sch = { 0 };
	struct ks_qmpx_stats st = { 0 };
	struct ks_error err;

	ks_qmpx_parse_schemas(&sch, s, first, &err);
	if (nul)
		ks_qmpx_parse_stats(&st, &sch, size && (data[0] & 1), nul + 1, size - first - 1, &err);
	ks_qmpx_stats_free(&st);
	ks_qmpx_schema_free(&sch);
	return 0;
}
