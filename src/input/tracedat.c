/*
 * tracedat.c - trace.dat reader (placeholder until the reader lands).
 */
#include "source_impl.h"

int ks_tracedat_open(struct ks_source **out, const char *path, struct ks_error *err)
{
	*out = NULL;
	return ks_error_at(err, path, 0, "reading trace.dat files is not implemented yet");
}
