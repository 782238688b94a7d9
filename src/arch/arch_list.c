/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch_list.c - the list of architectures (see arch.h), alone in its file.
 *
 * Adding an architecture is adding its file (src/arch/NAME_kvm.c) and one
 * line here.  Being alone, this definition can be replaced: a program that
 * defines ks_arches[] itself links without this object (tests/arch/
 * testarch.c lists a test-only architecture next to these six and builds a
 * kvmscope binary with it).  The list is read-only: no registration at run
 * time, no process-wide mutable state.
 */
#include <stddef.h>

#include "arch.h"

const struct ks_arch *const ks_arches[] = {
	&ks_arch_x86, &ks_arch_arm64, &ks_arch_powerpc, &ks_arch_s390,
	&ks_arch_riscv, &ks_arch_loongarch, NULL,
};
