/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kallsyms_text.h - a trace.dat's /proc/kallsyms text into a tep handle.
 */
#ifndef KVMSCOPE_KALLSYMS_TEXT_H
#define KVMSCOPE_KALLSYMS_TEXT_H

struct tep_handle;

/* What tep_parse_kallsyms(TEP, TEXT) does, with the same
 * tep_register_function() calls in the same order, without sscanf per line;
 * text in a shape the fast parse does not know goes to the library. */
int ks_parse_kallsyms(struct tep_handle *tep, const char *text);

/* The functions of TEXT as libtraceevent finds them after
 * ks_parse_kallsyms(): the same table (the lines in the same order, sorted
 * by the same qsort() with the same comparison) searched the same way, but
 * without a tep handle, its allocation per symbol and its list.  NULL when
 * a line is not in the shape the fast parse knows (use
 * ks_parse_kallsyms() then) or out of memory. */
struct ks_ksym_table;
struct ks_ksym_table *ks_ksym_table_new(const char *text);
/* What tep_find_function() returns for ADDR (NULL: none), *START what
 * tep_find_function_address() returns (set when found). */
const char *ks_ksym_table_find(const struct ks_ksym_table *t, unsigned long long addr,
			       unsigned long long *start);
void ks_ksym_table_free(struct ks_ksym_table *t);

#endif
