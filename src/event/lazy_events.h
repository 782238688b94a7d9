/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lazy_events.h - event formats parsed when first needed.
 *
 * A recording stores ~1500 event formats and a few hundred thousand
 * kallsyms lines, and its records use a handful of event ids: parsing all
 * of it at open was most of the cost of opening a file.  A reader hands
 * the formats it keeps to ks_lazy_attach() (src/input/source_events.c
 * does, for a source); the formats are indexed by id and name without
 * being parsed, and parsed (through the format guard and the program's
 * probe, as before) by the ks_tep_event*() lookups of kvmscope/source.h
 * the first time a record or a consumer needs them.  The symbols are the
 * reader's: it hands a function resolver that reads them when first asked
 * (struct ks_lazy_syms), which lives as long as the deferred formats.
 * Its saved cmdlines (thousands of "PID COMM" lines) too: registered on
 * the handle when ks_lazy_comms() first asks.
 */
#ifndef KVMSCOPE_LAZY_EVENTS_H
#define KVMSCOPE_LAZY_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "kvmscope/event_format.h"
#include "format_guard.h"

struct tep_event;
struct tep_handle;

struct ks_lazy;

/* The recording's symbols, resolved when first asked: RESOLVE is
 * libtraceevent's function resolver (tep_set_function_resolver) with PRIV,
 * set on the handle at attach and reset at detach, when DONE(PRIV) (NULL:
 * nothing) frees what it holds. */
struct ks_lazy_syms {
	char *(*resolve)(void *priv, unsigned long long *addrp, char **modp);
	void *priv;
	void (*done)(void *priv);
	/* The recording's saved cmdlines, registered on TEP by COMMS(PRIV,
	 * TEP) once, when ks_lazy_comms() first asks (NULL: none deferred;
	 * RESOLVE may then be NULL too: no symbols). */
	void (*comms)(void *priv, struct tep_handle *tep);
};

/* Defer the N formats F of TEP (the texts must stay until
 * ks_lazy_detach()), each parsed through the format guard with PROBE;
 * SYMS (NULL: none) resolves TEP's function addresses.  Formats that
 * cannot be indexed safely (a name or ID line not in the kernel's plain
 * shape, two formats with one id) are all parsed now, as they always were.
 * Parsed now too: the format with the lowest id (libtraceevent reads the
 * common fields of every record from the first event it has) and, with
 * NAMES, those of the systems the architecture tables name
 * (ks_arch_names_system(): what ks_tep_event() may be asked for; a source
 * opened with KS_OPEN_EVENTS_BY_RECORD is asked for none).  Returns the
 * state, which the source keeps (ks_source.lazy), or NULL when out of
 * memory (everything was then parsed now, SYMS's cmdlines registered,
 * and SYMS is done with). */
struct ks_lazy *ks_lazy_attach(struct ks_guard_probe probe, struct tep_handle *tep,
			       const struct ks_source_format *f, size_t n,
			       const struct ks_lazy_syms *syms, bool names);
/* The saved cmdlines of L's SYMS registered on its handle (parsed now if
 * not yet; L NULL: nothing).  Every consumer of the handle's comms
 * (tep_data_comm_from_pid(), tep_register_comm()...) asks first, so they
 * all see the pid table they saw when it was filled at open. */
void ks_lazy_comms(struct ks_lazy *l);
/* Forget L (NULL: nothing); call before its texts or handle are freed. */
void ks_lazy_detach(struct ks_lazy *l);
/* One more than the largest event id of the formats, parsed or not (L
 * NULL: of those TEP has; 0 without any). */
int ks_lazy_id_end(struct ks_lazy *l, struct tep_handle *tep);
/* The event of ID / of SYSTEM (NULL: any) and NAME in TEP, its format
 * parsed now if it was deferred in L (NULL: TEP's own only). */
struct tep_event *ks_lazy_event_by_id(struct ks_lazy *l, struct tep_handle *tep, int id);
struct tep_event *ks_lazy_event(struct ks_lazy *l, struct tep_handle *tep, const char *system,
				const char *name);
/* Every deferred format, parsed now (one question to the probe). */
void ks_lazy_parse_all(struct ks_lazy *l);
/* How many formats were parsed (for tests). */
size_t ks_lazy_formats_parsed(struct ks_lazy *l, struct tep_handle *tep);

#endif
