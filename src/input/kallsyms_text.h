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

#endif
