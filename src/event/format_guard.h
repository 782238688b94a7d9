/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * format_guard.h - hand libtraceevent only text it can parse safely.
 *
 * libtraceevent 1.7 trusts the metadata it parses: a print fmt that names a
 * field the format does not have (REC->0rev_state) or a printk-format line
 * without its ':' makes it read out of bounds or crash.  Traces come from
 * other machines and may be damaged, so every reader passes event formats and
 * printk formats through these wrappers instead of calling tep_* directly.
 * The guard is part of the event layer (src/event): it asks the program's
 * probe through what the reader hands it, never through the reader.
 */
#ifndef KVMSCOPE_FORMAT_GUARD_H
#define KVMSCOPE_FORMAT_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"
#include "kvmscope/event_format.h"

struct tep_event;
struct tep_handle;

/* The program's probe (kvmscope/format_probe.h) as the guard asks it: FN
 * with ARG; FN NULL: none, the guard's own checks only.  The guard knows no
 * library context: a reader passes its context's (ks_ctx_guard_probe(),
 * src/input/source_events.h). */
struct ks_guard_probe {
	ks_format_probe_fn fn;
	void *arg;
};
#define KS_GUARD_NO_PROBE ((struct ks_guard_probe){ .fn = NULL, .arg = NULL })

/* tep_parse_event() on a checked copy of BUF: a print fmt that references a
 * missing field or has unbalanced quotes/parentheses is replaced by an empty
 * one (the fields still decode; only the printed text is lost); PROBE is
 * asked before.  Returns what tep_parse_event returns, or -1 when BUF is
 * not a format at all. */
int ks_guard_parse_event(struct ks_guard_probe probe, struct tep_handle *tep, const char *buf,
			 size_t size, const char *sys);

/* Whether printing EV cannot divide by zero: every division in its parsed
 * print fmt is by a number other than 0 and -1.  ks_guard_parse_event()
 * marks an event that fails it TEP_EVENT_FL_FAILED (its fields print, not
 * its print fmt). */
bool ks_guard_divisions_safe(const struct tep_event *ev);

/* Formats collected while a file's metadata is read and parsed together:
 * PROBE (that of the context the file is opened with) is asked about them
 * all at once (a damaged file falls back to one question per format), so a
 * file with thousands of formats costs the probe one round. */
struct ks_guard_batch;
struct ks_guard_batch *ks_guard_batch_new(struct ks_guard_probe probe);
/* Copies BUF.  Returns 0 or -1 (out of memory). */
int ks_guard_batch_add(struct ks_guard_batch *b, const char *buf, size_t size, const char *sys);
/* Parse every collected format into TEP (those that would crash it are
 * dropped or lose their print fmt), then empty the batch. */
void ks_guard_batch_parse(struct ks_guard_batch *b, struct tep_handle *tep);
void ks_guard_batch_free(struct ks_guard_batch *b);

/* ---- the memory of a parse, from the text ----
 *
 * libtraceevent keeps every field of a format it parses (some 150 bytes
 * each with 1.7, measured; counted as KS_FORMAT_FIELD_COST), so a format
 * of millions of fields (a 95 KB zstd section inflates to 150 MB of them)
 * would take hundreds of MB outside any budget.  Every reader counts a
 * format's fields from its text when it reads it, before anything parses
 * it, and refuses the file past KS_FORMAT_MAX_FIELDS fields in one format
 * (real kernels' largest have a few dozen) or past what the run's memory
 * budget leaves. */
#define KS_FORMAT_FIELD_COST 256u
#define KS_FORMAT_MAX_FIELDS 4096u

/* The fields libtraceevent would parse in the format TEXT (LEN bytes), at
 * most: every "field" word before its "print fmt". */
uint64_t ks_guard_count_fields(const char *text, size_t len);

/* Check the format TEXT (LEN bytes, read at offset AT of PATH) before it
 * is kept or parsed: at most KS_FORMAT_MAX_FIELDS fields, and at most ROOM
 * (what the memory budget of MEMORY bytes leaves, in fields).  Returns 0
 * with *FIELDS its field count, or -1 with ERR "PATH: offset AT: format of
 * EVENT has N fields (limit M...)". */
int ks_guard_format_budget(const char *text, size_t len, uint64_t room, uint64_t memory,
			   const char *path, uint64_t at, uint64_t *fields, struct ks_error *err);

/* tep_parse_printk_formats() on TEXT without the lines it cannot parse
 * ("ADDR : \"STRING\"" is the only accepted shape). */
int ks_guard_parse_printk(struct tep_handle *tep, const char *text);

#endif
