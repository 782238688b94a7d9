/*
 * ftrace_text.c - ftrace text reader (placeholder until the reader lands).
 */
#include "source_impl.h"

int ks_ftrace_text_open(struct ks_source **out, const char *path, struct ks_error *err)
{
	*out = NULL;
	return ks_error_at(err, path, 0, "reading ftrace text files is not implemented yet");
}
