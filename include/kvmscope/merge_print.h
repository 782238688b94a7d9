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

struct ks_merge_printer;

/* NULL when out of memory. */
struct ks_merge_printer *ks_merge_printer_new(struct ks_merge *m, bool nsec);
void ks_merge_printer_free(struct ks_merge_printer *p);
void ks_merge_print_headers(struct ks_merge_printer *p, FILE *out);
void ks_merge_print(struct ks_merge_printer *p, const struct ks_merge_rec *r, FILE *out);

#endif
