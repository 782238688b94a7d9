/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * csv.h - the one CSV field writer every --csv output goes through.
 *
 * RFC 4180: a field holding a comma, a double quote, a carriage return or
 * a newline is written between double quotes, with each double quote
 * doubled; any other field is written as it is.
 */
#ifndef KVMSCOPE_OUTPUT_CSV_H
#define KVMSCOPE_OUTPUT_CSV_H

#include <stdio.h>

void ks_csv_field(FILE *out, const char *s);

#endif
