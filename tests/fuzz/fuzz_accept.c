/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_accept.c - libFuzzer target for the HTTP Accept header parser of
 * kvmscope exporter (content negotiation, openmetrics.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/openmetrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	enum ks_expo_format f;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	f = ks_expo_negotiate(s);
	if (f != KS_EXPO_PROMETHEUS && f != KS_EXPO_OPENMETRICS)
		abort();
	free(s);
	return 0;
}
