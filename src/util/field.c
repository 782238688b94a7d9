/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * field.c - resolving tracepoint fields once per format (see field.h).
 */
#include <traceevent/event-parse.h>

#include "kvmscope/field.h"

int ks_field_resolve(struct ks_field *f, struct tep_event *ev, const char *name)
{
	struct tep_format_field *tf;
	int host_big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	memset(f, 0, sizeof(*f));
	if (!ev)
		return -1;
	tf = tep_find_any_field(ev, name);
	if (!tf || (tf->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)))
		return -1;
	if (tf->size != 1 && tf->size != 2 && tf->size != 4 && tf->size != 8)
		return -1;
	f->offset = tf->offset;
	f->size = tf->size;
	f->is_signed = (tf->flags & TEP_FIELD_IS_SIGNED) != 0;
	f->swap = ev->tep && tep_is_file_bigendian(ev->tep) != host_big;
	f->present = true;
	return 0;
}
