/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event_format.h - one event format as an input stores it, and the type of
 * the program's verdict on a set of them (format_probe.h).
 *
 * Types only: the readers (source.h), the format guard and the deferred
 * formats of the event layer (src/event) and the program's probe share
 * them.
 */
#ifndef KVMSCOPE_EVENT_FORMAT_H
#define KVMSCOPE_EVENT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

/* The text of one format, as the recording machine's tracefs gave it
 * (see "Metadata as the input stores it" in source.h). */
struct ks_source_format {
	const char *system;      /* "ftrace" for ftrace's own formats */
	const char *text;
	size_t len;
};

/* True when libtraceevent parses all N formats (each through
 * ks_format_parse_checked into a fresh tep) without crashing.  ARG is what
 * ks_format_probe_set() was given.  Inputs opened on several threads with
 * one context may call it from those threads at once. */
typedef bool (*ks_format_probe_fn)(void *arg, const struct ks_source_format *f, size_t n);

#endif
