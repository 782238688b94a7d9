/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * timesync.h - map a guest's clock to its host's clock, per vCPU.
 *
 * Two sources of the mapping are supported:
 *
 *  - trace-cmd's TimeShift option of a guest trace.dat: samples of
 *    (guest time, offset, scaling, fraction bits) per vCPU, optionally
 *    interpolated.  With scaling 1 the result is exactly what trace-cmd
 *    computes: host = guest + offset (offset interpolated between samples
 *    when the INTERPOLATE flag is set).  With any other scaling trace-cmd
 *    computes ((guest * scaling) >> frac) + offset, which is not the inverse
 *    of the kernel's relation guest = ((host * ratio) >> frac) + tsc_offset
 *    (TimeShift stores offset = -tsc_offset, scaling = ratio).  kvmscope uses
 *    the exact inverse instead: host = the smallest h with
 *    ((h * ratio) >> frac) >= guest + offset, i.e.
 *    ceil(((guest + offset) << frac) / ratio).
 *
 *  - the host's kvm_write_tsc_offset events (vcpu_id, previous_tsc_offset,
 *    next_tsc_offset): guest TSC = host TSC + offset, the offset changing at
 *    the (host) time of each event; before a vCPU's first event its
 *    previous_tsc_offset is in force.  Fixed offsets (--tsc-offset VCPU=OFF,
 *    or debugfs' tsc-offset of a live guest) can be given for vCPUs without
 *    events.
 *
 * Everything here works on raw counter values (TSC ticks); convert the
 * result to nanoseconds with ks_timesync_tsc2nsec() of the side whose clock
 * conversion applies (trace-cmd uses the guest file's TSC2NSEC after its
 * TimeShift).
 *
 *	struct ks_timesync *ts = ks_timesync_new();
 *	ks_timesync_use_timeshift(ts, ks_source_timeshift(guest_src), &err);
 *	host_raw = ks_timesync_to_host(ts, rec.cpu, rec.raw_ts);
 *	host_ns = ks_timesync_tsc2nsec(ks_source_clock(guest_src), host_raw);
 */
#ifndef KVMSCOPE_TIMESYNC_H
#define KVMSCOPE_TIMESYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "source.h"

struct ks_timesync;

enum ks_timesync_kind {
	KS_TSYNC_NONE = 0,    /* identity: guest time is host time */
	KS_TSYNC_TIMESHIFT,   /* trace.dat TimeShift samples */
	KS_TSYNC_TSC_OFFSET,  /* kvm_write_tsc_offset events / fixed offsets */
};

struct ks_timesync *ks_timesync_new(void);
void ks_timesync_free(struct ks_timesync *ts);
enum ks_timesync_kind ks_timesync_kind(const struct ks_timesync *ts);

/* Use the TimeShift samples of a guest recording (ks_source_timeshift();
 * copied).  Returns 0, or -1 with err set when TSH is NULL. */
int ks_timesync_use_timeshift(struct ks_timesync *ts, const struct ks_source_timeshift *tsh,
			      struct ks_error *err);

/* A kvm_write_tsc_offset event seen at HOST_RAW (host counter) for VCPU.
 * Events must be added in host time order per vCPU. */
int ks_timesync_add_tsc_offset(struct ks_timesync *ts, uint32_t vcpu, uint64_t host_raw,
			       uint64_t previous, uint64_t next);
/* A constant offset for VCPU (used when it has no events). */
int ks_timesync_set_fixed_offset(struct ks_timesync *ts, uint32_t vcpu, uint64_t offset);
/* Number of kvm_write_tsc_offset events added, over all vCPUs. */
uint64_t ks_timesync_nr_offset_events(const struct ks_timesync *ts);

/* What the mapping is made of, for reports (merge --json). */
bool ks_timesync_interpolates(const struct ks_timesync *ts);   /* TimeShift flag */
uint32_t ks_timesync_nr_vcpus(const struct ks_timesync *ts);   /* vCPUs with a mapping */
/* TimeShift: VCPU's samples (valid as long as TS); how many. */
uint32_t ks_timesync_samples(const struct ks_timesync *ts, uint32_t vcpu,
			     const struct ks_source_tsync_sample **out);
/* TSC offsets: guest TSC = host TSC + OFFSET (the kernel's s64) from host
 * counter value START on, until the next piece's START.  A vCPU without
 * pieces uses vCPU 0's. */
struct ks_timesync_offset {
	uint64_t start;
	uint64_t offset;
};
uint32_t ks_timesync_offsets(const struct ks_timesync *ts, uint32_t vcpu,
			     const struct ks_timesync_offset **out);

/* Guest counter value on VCPU -> host counter value. */
uint64_t ks_timesync_to_host(const struct ks_timesync *ts, uint32_t vcpu, uint64_t guest_raw);

/* The pieces, exposed for tests. */
/* trace-cmd's TimeShift conversion for one vCPU's sorted samples. */
uint64_t ks_timesync_timeshift(const struct ks_source_tsync_sample *s, uint32_t n,
			       bool interpolate, uint64_t guest);
/* The exact inverse of guest = ((host * ratio) >> frac) - offset (see above). */
uint64_t ks_timesync_scaled_inverse(uint64_t guest, int64_t offset, uint64_t ratio,
				    uint64_t frac);

/* A trace.dat counter value -> nanoseconds, as the reader converts its
 * record timestamps (TSC2NSEC mult/shift, then the OFFSET options).  Values
 * of files without TSC2NSEC are returned plus the OFFSET options only. */
uint64_t ks_timesync_tsc2nsec(const struct ks_source_clock *clock, uint64_t raw);

/* Parse "VCPU=OFFSET" (decimal or 0x hex; a negative offset is taken as
 * two's complement, as the kernel prints it in debugfs).  Returns 0 or -1. */
int ks_timesync_parse_offset_arg(const char *arg, uint32_t *vcpu, uint64_t *offset);

#endif
