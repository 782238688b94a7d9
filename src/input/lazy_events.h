/*
 * lazy_events.h - event formats and kallsyms parsed when first needed.
 *
 * A recording stores ~1500 event formats and a few hundred thousand
 * kallsyms lines, and its records use a handful of event ids: parsing all
 * of it at open was most of the cost of opening a file.  A reader hands
 * the texts it keeps (struct ks_source_meta) to ks_lazy_attach(); the
 * formats are indexed by id and name without being parsed, and parsed
 * (through the format guard and the context's probe, as before) by the
 * ks_tep_event*() lookups of kvmscope/source.h the first time a record or
 * a consumer needs them.  The kallsyms text is parsed on the first symbol
 * lookup, through libtraceevent's function resolver.
 */
#ifndef KVMSCOPE_LAZY_EVENTS_H
#define KVMSCOPE_LAZY_EVENTS_H

#include <stddef.h>

#include "kvmscope/source.h"

struct ks_ctx;
struct tep_handle;

/* Defer the N formats F of TEP (the texts must stay until
 * ks_lazy_detach()); KALLSYMS (NUL-terminated, kept as long; NULL or empty:
 * none) is parsed on the first symbol lookup.  Formats that cannot be
 * indexed safely (a name or ID line not in the kernel's plain shape, two
 * formats with one id) are all parsed now, as they always were.  The
 * format with the lowest id is parsed now: libtraceevent reads the common
 * fields of every record from the first event it has.  Returns 0, or -1
 * when out of memory (everything was then parsed now, but the kallsyms). */
int ks_lazy_attach(struct ks_ctx *ctx, struct tep_handle *tep, const struct ks_source_format *f,
		   size_t n, const char *kallsyms);
/* Forget TEP's deferred texts (NULL or a TEP without any: nothing); call
 * before the texts or TEP are freed. */
void ks_lazy_detach(struct tep_handle *tep);
/* One more than the largest event id of TEP's formats, parsed or not (0
 * without any). */
int ks_lazy_id_end(struct tep_handle *tep);

#endif
