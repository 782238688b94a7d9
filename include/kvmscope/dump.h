/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dump.h - print records in trace-cmd report's text layout.
 *
 *	struct ks_dump *d = ks_dump_new(src, &(struct ks_dump_opts){ .nsec = true });
 *	ks_dump_print_header(d, stdout, NULL);          // "cpus=N"
 *	while (ks_source_next(src, &rec, &err) > 0)
 *		ks_dump_print_record(d, &rec, stdout, NULL);
 *	ks_dump_free(d);
 *
 * Event text comes from libtraceevent (the source's tep, with the
 * libtraceevent plugins loaded), task names from the input's saved cmdlines
 * and from KS_REC_COMM records.  Works for every kind of ks_source.
 */
#ifndef KVMSCOPE_DUMP_H
#define KVMSCOPE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "record.h"

struct ks_source;
struct ks_dump;

struct ks_dump_opts {
	bool nsec;      /* nanosecond timestamps (trace-cmd report -t) */
	bool no_plugins; /* do not load libtraceevent plugins */
};

/* NULL when out of memory. */
struct ks_dump *ks_dump_new(struct ks_source *src, const struct ks_dump_opts *opts);
void ks_dump_free(struct ks_dump *d);

/* The text trace-cmd report prints for REC (without the final newline; a
 * dropped-events notice is a line of its own before the event).  Returns
 * NULL for records that print nothing (COMM, FORK, ...; COMM updates the
 * task names).  The text stays valid until the next call. */
const char *ks_dump_format(struct ks_dump *d, const struct ks_record *rec, size_t *len);

/* Print "cpus=N" / the record, each line preceded by PREFIX if not NULL. */
void ks_dump_print_header(struct ks_dump *d, FILE *out, const char *prefix);
void ks_dump_print_record(struct ks_dump *d, const struct ks_record *rec, FILE *out,
			  const char *prefix);

#endif
