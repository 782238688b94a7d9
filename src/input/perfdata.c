/*
 * perfdata.c - perf.data reader (placeholder until the reader lands).
 */
#include "source_impl.h"

int ks_perfdata_open(struct ks_source **out, const char *path, struct ks_error *err)
{
	*out = NULL;
	return ks_error_at(err, path, 0, "reading perf.data files is not implemented yet");
}
