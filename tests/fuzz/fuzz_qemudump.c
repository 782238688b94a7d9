/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_qemudump.c - libFuzzer target: the bytes are a QEMU dump-guest-memory
 * ELF file; open it from memory and unwind every vCPU through its LOAD
 * segments (frame pointers: no symbols needed).
 */
#include <stdint.h>
#include <stdlib.h>

#include "kvmscope/qemudump.h"
#include "kvmscope/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_error err;
	struct ks_qemudump *d = ks_qemudump_open_mem(data, size, "fuzz", &err);
	struct ks_unwinder u = { .kernel = KS_KUNWIND_FP, .user = true };
	static struct ks_stack s;
	struct ks_vmem v;
	uint64_t off;

	if (!d)
		return 0;
	ks_qemudump_vmcoreinfo_u64(d, "KERNELOFFSET", &off);
	ks_vmem_init(&v, ks_qemudump_mem(d));
	for (size_t i = 0; i < ks_qemudump_vcpus(d) && i < 8; i++) {
		struct ks_x86_regs r;
		if (ks_qemudump_regs(d, i, &r) == 0) {
			ks_vmem_reset(&v, r.cr3, r.cr4);
			ks_unwind(&u, &v, &r, &s);
		}
	}
	ks_qemudump_close(d);
	return 0;
}
