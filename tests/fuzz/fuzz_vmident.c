/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_vmident.c - libFuzzer target for kvmscope record's task map option
 * (ks_vmident_parse): any bytes parse or fail with an error, and what
 * parses formats and parses again to the same map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/vmident.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_vmident v, w;
	struct ks_error err;
	size_t i, len;
	char *txt;

	if (ks_vmident_parse(&v, "fuzz", 0, (const char *)data, size, &err) < 0) {
		if (!err.msg[0] || v.tasks || v.procs)
			abort();
		return 0;
	}
	txt = ks_vmident_format(&v, &len);
	if (txt) {
		if (ks_vmident_parse(&w, "fuzz", 0, txt, len, &err) < 0 || w.ntasks != v.ntasks ||
		    w.nprocs != v.nprocs)
			abort();
		for (i = 0; i < v.ntasks; i++)
			if (ks_vmident_tgid(&w, v.tasks[i].tid) != v.tasks[i].tgid)
				abort();
		ks_vmident_free(&w);
		free(txt);
	}
	ks_vmident_free(&v);
	return 0;
}
