/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ringpage.h - check a ring-buffer page before libtraceevent's kbuffer walks it.
 *
 * kbuffer trusts the event headers of a page: a padding event whose length
 * wraps the 32-bit index (or a data event whose length field is below 4)
 * sends its next_event() back to an earlier event, forever (found by
 * fuzz_live_page).  Every reader that hands pages to kbuffer checks them
 * here first.
 */
#ifndef KVMSCOPE_RINGPAGE_H
#define KVMSCOPE_RINGPAGE_H

#include <stdbool.h>
#include <stdint.h>

/* Walk the events in DATA[0, COMMIT) (the page after its header; DATA_SIZE
 * bytes readable) as kbuffer does.  BIG: the page was written big-endian;
 * SWAP: its byte order differs from this machine's.  Returns -1 when every
 * event moves forward and its header lies inside DATA, else the offset in
 * DATA of the first event that does not. */
long ks_ringpage_check(const uint8_t *data, uint32_t commit, uint32_t data_size, bool big,
		       bool swap);
/* The same walk, counting the data events (not padding or time entries)
 * into *EVENTS. */
long ks_ringpage_count(const uint8_t *data, uint32_t commit, uint32_t data_size, bool big,
		       bool swap, uint32_t *events);

#endif
