/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_bpf.h - the BPF engine's doors for its tests and tools (not part
 * of the public interface, engine.h): open it with the synthetic-event
 * program loaded and without attaching, feed it events, and list the ids
 * of the programs and links it holds (tests/input/engine_bpf_test.sh checks
 * that the kernel's lists lose them when the holder is killed).
 */
#ifndef KVMSCOPE_ENGINE_BPF_H
#define KVMSCOPE_ENGINE_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/engine_types.h"
#include "bpf/exits_bpf.h"

struct ks_engine_bpf_opts {
	bool test_prog;     /* also load the SEC("syscall") program ks_test_feed */
	bool no_attach;     /* attach nothing (synthetic events only) */
	bool spill_all;     /* no new element is ever had: every exit and event
			     * of a new series goes through the ring "spilled",
			     * as when the kernel cannot allocate one */
};

int ks_engine_bpf_open_opts(struct ks_engine **out, const struct ks_engine_config *cfg,
			    const struct ks_engine_bpf_opts *o, struct ks_error *err);

/* Run one synthetic event through the engine's handlers (BPF_PROG_TEST_RUN
 * of ks_test_feed; opened with test_prog).  0 or -1 with err set. */
int ks_engine_bpf_feed(struct ks_engine *e, const struct ks_bpf_test_ev *ev, struct ks_error *err);

/* The offsets the loader gave the program: the running kernel's layout of
 * the exit's reason, ISA, vCPU and the entry's vCPU (size 0: absent). */
void ks_engine_bpf_fields(const struct ks_engine *e, struct ks_bpf_field *reason,
			  struct ks_bpf_field *isa, struct ks_bpf_field *exit_vcpu,
			  struct ks_bpf_field *entry_vcpu);

/* The kernel ids of the loaded programs and of the links the engine holds
 * (at most MAX of each); returns 0 or -1 with err set. */
int ks_engine_bpf_ids(const struct ks_engine *e, uint32_t *prog_ids, size_t *nprogs,
		      uint32_t *link_ids, size_t *nlinks, size_t max, struct ks_error *err);

/* The kvm:* events counted (cfg.tracepoints): the cookie of event I is I. */
size_t ks_engine_bpf_ntp(const struct ks_engine *e);
const char *ks_engine_bpf_tp_name(const struct ks_engine *e, size_t i);

#endif
