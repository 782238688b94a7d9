/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * csv.c - CSV field quoting (see csv.h).
 */
#include <string.h>

#include "output/csv.h"

void ks_csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}
