/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * merge_print.h - print a merged stream (merge.h) like `trace-cmd report
 * -i HOST -i GUEST`: every input's "cpus=N" line, then each record in
 * trace-cmd's layout, prefixed with its file's name when there are several.
 *
 *	struct ks_merge_printer *p = ks_merge_printer_new(m, nsec);
 *	ks_merge_print_headers(p, stdout);
 *	while ((rc = ks_merge_next(m, &r, &err)) > 0)
 *		ks_merge_print(p, &r, stdout);
 *	ks_merge_printer_free(p);
 *
 * Or as one JSON document (--json), whose events carry the same texts:
 *
 *	ks_merge_json_begin(p, &json);          {"inputs": [...], "events": [
 *	while ((rc = ks_merge_next(m, &r, &err)) > 0)
 *		ks_merge_json_event(p, &json, &r);
 *	ks_merge_json_end(p, &json);            ], "threads": [...], "sync_quality": {...}}
 *
 * Event texts come from libtraceevent (ks_dump_format) with its plugins;
 * guest function names after kvm_entry / kvm_exit rips are the kvm plugin's,
 * given by the program's tep_plugin_kvm_get_func hook
 * (ks_merge_guest_function()).
 */
#ifndef KVMSCOPE_MERGE_PRINT_H
#define KVMSCOPE_MERGE_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "merge.h"

struct ks_json;
struct ks_merge_printer;

/* NULL when out of memory. */
struct ks_merge_printer *ks_merge_printer_new(struct ks_merge *m, bool nsec);
void ks_merge_printer_free(struct ks_merge_printer *p);
void ks_merge_print_headers(struct ks_merge_printer *p, FILE *out);
void ks_merge_print(struct ks_merge_printer *p, const struct ks_merge_rec *r, FILE *out);

/* JSON.  inputs: each input's name, path, role (host, guest), cpus and, for
 * a guest, how its clock was synced (sync: timeshift, tsc-offset-events,
 * tsc-offset-option, none) and per vCPU its host thread and clock offsets
 * (raw counter values: TimeShift samples guest_tsc, offset, scaling,
 * fraction; or TSC offsets host_tsc, offset: guest TSC = host TSC + offset
 * from host_tsc on).  events: input, ts (host time, ns), cpu, tid, event
 * ("system:name"), the host model's vm, vm_name and vcpu for an event of a
 * host thread with KVM events or of a guest (whose vcpu is its own, with
 * its host_tid), text (the line of the text output, without the prefix);
 * a LOST record has lost instead of tid and event.  threads: the host
 * model's (ks_host_json_threads), sync_quality: ks_merge_quality(). */
void ks_merge_json_begin(struct ks_merge_printer *p, struct ks_json *j);
void ks_merge_json_event(struct ks_merge_printer *p, struct ks_json *j,
			 const struct ks_merge_rec *r);
void ks_merge_json_end(struct ks_merge_printer *p, struct ks_json *j);

#endif
