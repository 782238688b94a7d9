/* SPDX-License-Identifier: GPL-2.0-only */
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
 * die (kvmscope's command line does, see src/cli/format_probe.c).  The
 * probe is a setting of a library context (ctx.h): inputs opened with that
 * context are checked with it, others are not.
 *
 *	static bool probe(void *arg, const struct ks_source_format *f, size_t n);
 *	struct ks_ctx *ctx = ks_ctx_new();
 *	ks_format_probe_set(ctx, probe, NULL);   // before opening inputs with ctx
 */
#ifndef KVMSCOPE_FORMAT_PROBE_H
#define KVMSCOPE_FORMAT_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "event_format.h"

struct tep_handle;

/* The probe's type, ks_format_probe_fn, is in event_format.h. */

/* Set CTX's probe (FN NULL: none, the cheap checks only; CTX NULL: nothing
 * to do).  Set it before opening inputs with CTX and leave it. */
struct ks_ctx;
void ks_format_probe_set(struct ks_ctx *ctx, ks_format_probe_fn fn, void *arg);

/* What a probe runs on each format: the library's own checks, then
 * tep_parse_event() (a print fmt that fails the checks is replaced by an
 * empty one).  Returns what tep_parse_event returns, or -1. */
int ks_format_parse_checked(struct tep_handle *tep, const char *text, size_t len,
			    const char *system);

#endif
