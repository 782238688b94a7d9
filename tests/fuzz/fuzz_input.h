/*
 * fuzz_input.h - hand a fuzz input to a reader that opens files.
 *
 * The bytes go into one memfd per process (rewritten for every input) and
 * the reader opens "/proc/self/fd/N".  A file under /tmp would cost disk
 * I/O per execution: ext4 starts writeback when a truncated file is closed
 * (measured: a third of fuzz_ftrace_text's time was virtio I/O).
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdint.h>

#include "cli/format_probe.h"
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding exactly DATA[0..SIZE), or NULL. */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", 0);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return NULL;
	return path;
}

/* The readers ask the command line's probe about event formats, as in
 * kvmscope itself (a helper process parses them first): libtraceevent's
 * crashes on damaged formats are then contained, not findings. */
__attribute__((constructor)) static void fuzz_set_format_probe(void)
{
	ks_format_probe_set(cli_format_probe, NULL);
}

#endif
