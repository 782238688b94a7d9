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

int ks_source_check_regular(const char *path, int fd, struct ks_error *err)
{
	struct stat st;
	const char *kind;

	if (fstat(fd, &st) < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot stat: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		return ks_error_set(err, "%s: is a directory", path);
	if (S_ISFIFO(st.st_mode))
		kind = "a pipe or FIFO";
	else if (S_ISSOCK(st.st_mode))
		kind = "a socket";
	else if (S_ISCHR(st.st_mode))
		kind = "a character device";
	else if (S_ISBLK(st.st_mode))
		kind = "a block device";
	else
		kind = "not a regular file";
	return ks_error_set(err, "%s: is %s; kvmscope reads regular files only (it seeks in them): "
			    "save the data to a file first", path, kind);
}

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

void ks_source_apply_opts(struct ks_source *src, const struct ks_source_opts *o)
{
	src->limits = *ks_limits_or_default(o ? o->limits : NULL);
	src->ctx = o ? o->ctx : NULL;
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
		return ks_perfdata_open(out, path, o, err);
	if (got >= 10 && memcmp(head, KS_TRACEDAT_MAGIC, 10) == 0)
		return ks_tracedat_open(out, path, o, err);
	if (got == 0)
		return ks_error_at(err, path, 0, "the file is empty");
	return ks_ftrace_text_open(out, path, o, err);
}
