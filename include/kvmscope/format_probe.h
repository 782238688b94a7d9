/*
 * format_probe.h - let the program decide whether event formats are safe
 * to hand to libtraceevent.
 *
 * libtraceevent 1.7 crashes on some malformed print fmts that no cheap
 * check rules out.  The readers check every format themselves (fields,
 * quotes, parentheses, REC->field names) and, when the program has set a
 * probe, ask it about the formats of each file before parsing them: a
 * format the probe rejects loses its print fmt or is left out.  The library
 * starts no process; a probe usually parses the formats in a child that may
 * die (kvmscope's command line does, see src/cli/format_probe.c).
 *
 *	static bool probe(void *ctx, const struct ks_source_format *f, size_t n);
 *	ks_format_probe_set(probe, NULL);   // once, before opening inputs
 */
#ifndef KVMSCOPE_FORMAT_PROBE_H
#define KVMSCOPE_FORMAT_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

struct tep_handle;

/* True when libtraceevent parses all N formats (each through
 * ks_format_parse_checked into a fresh tep) without crashing. */
typedef bool (*ks_format_probe_fn)(void *ctx, const struct ks_source_format *f, size_t n);

/* Set the program's probe (NULL: none, the cheap checks only).  The one
 * setting the library keeps for the process: set it before opening inputs
 * and leave it. */
void ks_format_probe_set(ks_format_probe_fn fn, void *ctx);

/* What a probe runs on each format: the library's own checks, then
 * tep_parse_event() (a print fmt that fails the checks is replaced by an
 * empty one).  Returns what tep_parse_event returns, or -1. */
int ks_format_parse_checked(struct tep_handle *tep, const char *text, size_t len,
			    const char *system);

#endif
