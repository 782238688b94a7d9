/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * format_probe.h - the command line's ks_format_probe_fn: formats are parsed
 * in a helper process first (forked once and kept; forked again after a
 * format kills it).  Formats seen before are remembered by fingerprint.
 */
#ifndef KVMSCOPE_CLI_FORMAT_PROBE_H
#define KVMSCOPE_CLI_FORMAT_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "kvmscope/format_probe.h"

bool cli_format_probe(void *ctx, const struct ks_source_format *f, size_t n);
/* How many helper processes this process has started. */
unsigned long cli_format_probe_starts(void);
/* Start the helper now if none is running (it is otherwise started by the
 * first question). */
void cli_format_probe_start(void);

#endif
