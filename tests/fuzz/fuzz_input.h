/* SPDX-License-Identifier: GPL-2.0-only */
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
#include "kvmscope/ctx.h"
#include "kvmscope/source.h"
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

/* The library context every input of the process is opened with (NULL
 * when out of memory: the readers take that too).  It has the command
 * line's format probe, as kvmscope itself (a helper process parses the
 * formats first): libtraceevent's crashes on damaged formats are then
 * contained, not findings.  And the mutations of one file share its parsed
 * formats, as the files of one setup do in kvmscope. */
static inline struct ks_ctx *fuzz_ctx(void)
{
	static struct ks_ctx *ctx;

	if (!ctx) {
		ctx = ks_ctx_new();
		ks_format_probe_set(ctx, cli_format_probe, NULL);
	}
	return ctx;
}

/* Open options with fuzz_ctx(). */
#define FUZZ_OPTS (&(struct ks_source_opts){ .ctx = fuzz_ctx() })

#endif
