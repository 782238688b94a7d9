/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * census.h - what a KVM recording holds, for explaining an empty answer.
 *
 * When a question about an input has no answer (no msr events, no vCPU 7,
 * no process 999, another architecture), the user needs to hear what the
 * input does hold:
 *
 *	kvmscope: host.dat: no msr events; this file has vmexit (5860), mmio (11)
 *
 * ks_census() reads a source once and counts, for one architecture, the
 * begin events of each event class, and lists the vCPUs its KVM events
 * came from.  (Which VM a thread belongs to is the stat engine's
 * attribution: ks_stat_attribution.)
 */
#ifndef KVMSCOPE_CENSUS_H
#define KVMSCOPE_CENSUS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define KS_CENSUS_MAX_CLASSES 8
#define KS_CENSUS_MAX_IDS 4096

struct ks_census {
	const char *arch;            /* the architecture counted for ("x86") */
	const char *detected_arch;   /* the one the events belong to, or NULL */
	uint64_t events;             /* tracepoint events */
	uint64_t kvm_events;         /* events of the architecture's KVM systems */
	bool kvm_defined;            /* the file defines the KVM entry event: KVM
				      * events were recorded, and none happened */
	int nclasses;
	struct {
		const char *name;    /* "vmexit" */
		uint64_t begins;     /* its begin events */
	} classes[KS_CENSUS_MAX_CLASSES];
	int nvcpus;                  /* sorted, distinct; capped at KS_CENSUS_MAX_IDS */
	int32_t vcpus[KS_CENSUS_MAX_IDS];
};

struct ks_source;
/* Count SRC's records (read to the end) for the architecture named ARCH
 * (NULL: from the input's header, else its events, else x86).  Returns 0,
 * or -1 with err set (a read error). */
int ks_census(struct ks_source *src, const char *arch, struct ks_census *c,
	      struct ks_error *err);

/* "vmexit (5860), mmio (11)" (classes with events) into BUF. */
void ks_census_classes(const struct ks_census *c, char *buf, size_t len);
/* "0-1, 4" (a list of ids as ranges) into BUF. */
void ks_census_ids(const int32_t *ids, int n, char *buf, size_t len);

#endif
