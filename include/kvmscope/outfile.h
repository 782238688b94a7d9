/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * outfile.h - output files that never destroy what they replace.
 *
 * An output is written to a new temporary file in the final file's
 * directory (".NAME.kvmscope-PID-START-PIDNS.XXXXXX", created with O_EXCL:
 * its owner's pid, start time and PID namespace) and renamed over the
 * final name only once everything was written, flushed and fsync'ed.  A
 * failed or interrupted run leaves the final name as it was: the old file,
 * or nothing.  Nothing but temporary files is ever removed: this one, and
 * when an output is opened, those in its directory of this user whose
 * owner is provably gone (a SIGKILLed run's; util/procfs.h).
 *
 *	const char *inputs[] = { "perf.data", NULL };
 *	struct ks_outfile *of;
 *	if (ks_outfile_open(&of, "out.svg", inputs, 0, &err) < 0)
 *		fail(err.msg);                     // refused, or cannot create
 *	fprintf(ks_outfile_stream(of), ...);
 *	if (ks_outfile_commit(of, &err) < 0)   // always frees OF
 *		fail(err.msg);                     // e.g. "out.svg: write error: No space left on device"
 *	// or ks_outfile_abort(of): removes the temporary file, keeps the final name
 *
 * Refused outputs (one-line errors, nothing created, nothing opened):
 *  - a directory, a block device, a socket, a FIFO (open(2) of a FIFO
 *    nobody reads waits for ever; /dev/stdout, /dev/fd/N and
 *    /proc/self/fd/N name a pipe already open and are written in place);
 *  - a final name that is one of the inputs (same device and inode, also
 *    through a hard link or a symbolic link);
 *  - "-" with KS_OUTFILE_NO_STDOUT (outputs that need a seekable file), and
 *    with that flag a device or pipe that cannot seek.
 * An existing character device or open pipe (/dev/null, /dev/full,
 * /dev/stdout on a pipe) is opened without waiting, written in place,
 * checked like standard output, and never renamed over, truncated or
 * removed.  A symbolic link to a
 * regular file is followed: its target is replaced and the link stays.
 *
 * "-" means standard output: ks_outfile_stream() is stdout, commit flushes
 * it and checks for errors, abort does nothing; stdout is never closed here
 * (ks_stdout_close() does that at the end of the program).
 *
 * No process-wide state: a program that wants the temporary file removed on
 * a signal registers ks_outfile_temp_path() with its own handler.
 */
#ifndef KVMSCOPE_OUTFILE_H
#define KVMSCOPE_OUTFILE_H

#include <stdio.h>

#include "error.h"

struct ks_outfile;

enum {
	KS_OUTFILE_NO_STDOUT = 1 << 0, /* refuse "-" (the writer seeks) */
	KS_OUTFILE_KEEP_OLD = 1 << 1,  /* at commit, an existing NAME becomes NAME.old */
};

/* The checks of ks_outfile_open() alone (nothing is created): run them
 * before reading any input.  INPUTS is NULL-terminated (NULL = none); an
 * input that does not exist is ignored, and "FILE@NAME" is tried as FILE. */
int ks_outfile_check(const char *path, const char *const *inputs, unsigned flags,
		     struct ks_error *err);

/* Check, then create the temporary file.  0 or a negative value, err set. */
int ks_outfile_open(struct ks_outfile **out, const char *path, const char *const *inputs,
		    unsigned flags, struct ks_error *err);

/* Where to write (stdout for "-"). */
FILE *ks_outfile_stream(struct ks_outfile *of);
/* The final name as given, and the temporary file's path (NULL for "-"
 * and devices written in place). */
const char *ks_outfile_path(const struct ks_outfile *of);
const char *ks_outfile_temp_path(const struct ks_outfile *of);

/* Flush, check for write errors, fsync, (KEEP_OLD: rename NAME to
 * NAME.old,) rename the temporary file to NAME and fsync the directory.
 * Frees OF; on failure the temporary file is removed and NAME untouched. */
int ks_outfile_commit(struct ks_outfile *of, struct ks_error *err);

/* Remove the temporary file (only it) and free OF (NULL ok). */
void ks_outfile_abort(struct ks_outfile *of);

/* End of the program: flush and close standard output; a write error
 * (earlier or now) gives "standard output: write error: REASON". */
int ks_stdout_close(struct ks_error *err);

#endif
