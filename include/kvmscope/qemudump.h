/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qemudump.h - QEMU `dump-guest-memory` ELF files (paging off, ELF format).
 *
 *	struct ks_qemudump *d = ks_qemudump_open("vm.elf", &err);
 *	n = ks_qemudump_vcpus(d);  ks_qemudump_regs(d, i, &regs);   (QEMU notes)
 *	ks_qemudump_mem(d) -> struct ks_gmem over the LOAD segments (physical)
 *	ks_qemudump_vmcoreinfo(d) -> "KERNELOFFSET=..." text or NULL
 *	ks_qemudump_close(d);
 *
 * Per vCPU the "QEMU" note (QEMUCPUState: GPRs, rip, rflags, segments,
 * cr0-cr4) is used; CORE NT_PRSTATUS notes are the fallback (no cr3).
 * All sizes and offsets are checked against the file; errors are
 * "FILE: offset N: what is wrong".
 */
#ifndef KVMSCOPE_QEMUDUMP_H
#define KVMSCOPE_QEMUDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"
#include "kvmscope/gdbproto.h"
#include "kvmscope/unwind.h"

struct ks_qemudump;

struct ks_qemudump *ks_qemudump_open(const char *path, struct ks_error *err);
/* The same from memory (fuzzing); DATA must outlive the handle. */
struct ks_qemudump *ks_qemudump_open_mem(const uint8_t *data, size_t len, const char *name,
					 struct ks_error *err);
void ks_qemudump_close(struct ks_qemudump *d);
size_t ks_qemudump_vcpus(const struct ks_qemudump *d);
/* 0, or -1 when the vCPU has no usable note. */
int ks_qemudump_regs(const struct ks_qemudump *d, size_t vcpu, struct ks_x86_regs *r);
const struct ks_gmem *ks_qemudump_mem(struct ks_qemudump *d);
const char *ks_qemudump_vmcoreinfo(const struct ks_qemudump *d);
/* KEY=value from VMCOREINFO (hex for KERNELOFFSET, phys_base...). */
int ks_qemudump_vmcoreinfo_u64(const struct ks_qemudump *d, const char *key, uint64_t *val);

#endif
