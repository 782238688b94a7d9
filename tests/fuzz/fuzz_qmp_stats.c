/*
 * fuzz_qmp_stats.c - libFuzzer target for the parser of QMP query-stats
 * replies (kvmstats.h): the bytes are one reply, as QEMU sends it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "kvmscope/kvmstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int32_t vcpu_of(void *ctx, const char *qom)
{
	(void)ctx;
	return qom[0] == '/' ? -1 : 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_kstats s = { 0 };
	struct ks_error err;

	ks_qmp_parse_stats((const char *)data, size, &s, vcpu_of, NULL, &err);
	if (s.n)
		ks_kstats_find(&s, s.v[0].name, s.v[0].vcpu);
	ks_kstats_free(&s);
	return 0;
}
