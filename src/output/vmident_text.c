/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmident_text.c - the text of kvmscope record's task map option (see
 * kvmscope/vmident.h; src/input/vmident.c reads it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "kvmscope/vmident.h"

char *ks_vmident_format(const struct ks_vmident *v, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, i;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	fputs("kvmscope-vmident 1\n", f);
	for (i = 0; i < v->ntasks; i++)
		fprintf(f, "t %" PRId32 " %" PRId32 "\n", v->tasks[i].tid, v->tasks[i].tgid);
	for (i = 0; i < v->nprocs; i++)
		fprintf(f, "p %" PRId32 "\t%s\t%s\n", v->procs[i].tgid, v->procs[i].comm,
			v->procs[i].name);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}
