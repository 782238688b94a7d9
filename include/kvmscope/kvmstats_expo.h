/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_expo.h - the exporter's metrics of KVM's statistics, as the
 * collector (kvmstats_collect.h) last read them:
 *   kvmscope_qmp_up{socket,domain}, kvmscope_libvirt_up{uri};
 *   kvm_stat_NAME{domain[,vcpu]}: every statistic as QEMU names it (units
 *   in the name: _seconds, _bytes; _total for counters; no histograms);
 *   the halt polling metrics (kvmstats_halt.h), per VM and vCPU:
 *     kvmscope_halt_exits_total
 *     kvmscope_halt_wakeups_total{result="polled|slept"}
 *     kvmscope_halt_poll_attempts_total, kvmscope_halt_poll_invalid_total
 *     kvmscope_halt_poll_seconds_total{result="success|fail"}
 *     kvmscope_halt_wait_seconds_total
 *   and per VM (vCPUs summed, as the exit histograms) the histograms
 *     kvmscope_halt_poll_duration_seconds{result="success|fail"}
 *     kvmscope_halt_wait_duration_seconds
 *   whose le bounds are KVM's log2 buckets in seconds (0, 1e-09, 3e-09,
 *   7e-09, ... (2^30 - 1) ns, +Inf).
 */
#ifndef KVMSCOPE_KVMSTATS_EXPO_H
#define KVMSCOPE_KVMSTATS_EXPO_H

#include "kvmstats_collect.h"
#include "openmetrics.h"

void ks_expo_kvmstats(struct ks_expo *e, struct ks_kvmcol *c, int nqmp);

#endif
