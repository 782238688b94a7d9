/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source_open.c - ks_source_open(): detect the input type and open it with
 * its reader.
 *
 * The type comes from the first bytes of the file, so a perf.data named
 * "trace.txt" still opens as perf.data.  Everything that is neither perf.data
 * nor trace.dat is handed to the ftrace text reader, which rejects binary
 * garbage with a clear error.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftrace_text.h"
#include "source_impl.h"

static int sniff(const char *path, char *head, size_t len, size_t *got, struct ks_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: no wait */
	ssize_t n;

	if (fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", path, strerror(errno));
	/* before reading: a pipe's first bytes would be gone for the reader */
	if (ks_source_check_regular(path, fd, err) < 0) {
		close(fd);
		return -1;
	}
	n = read(fd, head, len);
	close(fd);
	if (n < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot read: %s", path, strerror(errno));
	*got = (size_t)n;
	return 0;
}

int ks_source_check_head(const char *name, const void *head, size_t len, bool more,
			 struct ks_error *err)
{
	if (len >= 8 && (memcmp(head, KS_PERF_MAGIC, 8) == 0 ||
			 memcmp(head, KS_PERF_MAGIC_SWAPPED, 8) == 0))
		return 0;
	if (len >= 10 && memcmp(head, KS_TRACEDAT_MAGIC, 10) == 0)
		return 0;
	if (len == 0)
		return ks_error_at(err, name, 0, "the input is empty");
	return ks_ftrace_text_check_head(name, head, len, more, err);
}

size_t ks_source_head_size(void)
{
	return ks_ftrace_text_head_size();
}

int ks_source_open(struct ks_source **out, const char *path, struct ks_error *err)
{
	return ks_source_open_opts(out, path, NULL, err);
}

/* RC of opening *OUT with O: the saved cmdlines a reader deferred are
 * registered now unless O says every comm lookup goes through
 * ks_source_tep_comms() (KS_OPEN_COMMS_WHEN_ASKED). */
static int opened(int rc, struct ks_source *const *out, const struct ks_source_opts *o)
{
	if (rc == 0 && !(o && (o->flags & KS_OPEN_COMMS_WHEN_ASKED)))
		ks_source_tep_comms(*out);
	return rc;
}

int ks_source_open_opts(struct ks_source **out, const char *path, const struct ks_source_opts *o,
			struct ks_error *err)
{
	char head[16];
	size_t got = 0;

	*out = NULL;
	if (sniff(path, head, sizeof(head), &got, err) < 0)
		return -1;
	if (got >= 8 && (memcmp(head, KS_PERF_MAGIC, 8) == 0 ||
			 memcmp(head, KS_PERF_MAGIC_SWAPPED, 8) == 0))
		return opened(ks_perfdata_open(out, path, o, err), out, o);
	if (got >= 10 && memcmp(head, KS_TRACEDAT_MAGIC, 10) == 0)
		return opened(ks_tracedat_open(out, path, o, err), out, o);
	if (got == 0)
		return ks_error_at(err, path, 0, "the file is empty");
	return ks_ftrace_text_open(out, path, o, err);
}
