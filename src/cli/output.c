/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * output.c - the command line's side of output files (outfile.h).
 *
 * Every command that writes a file opens it with cli_output_open(): the
 * checks (not a device, not an input) run first, then the library creates a
 * temporary file next to the final name.  Its path is kept here so that
 * die()/exit() (an atexit handler) and SIGINT/SIGTERM/SIGHUP remove it: a
 * run that does not finish leaves no stray file and the final name as it
 * was.  (SIGKILL cannot be caught: a ".NAME.kvmscope-PID-START-NS.XXXXXX"
 * file may then stay, the final name still untouched, until the next run
 * writing to that directory removes it: outfile.h.)
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"

#define MAX_TEMPS 8
static char *temps[MAX_TEMPS];
static volatile sig_atomic_t in_use[MAX_TEMPS];
static bool hooks_done;

static void remove_temps(void)
{
	int i;

	for (i = 0; i < MAX_TEMPS; i++)
		if (in_use[i] && temps[i])
			unlink(temps[i]);
}

static void on_exit_remove(void)
{
	remove_temps();
}

/* Remove the temporary files, then die of the signal as if not caught. */
static void on_signal(int sig)
{
	remove_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_hooks(bool even_ignored)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	if (!hooks_done)
		atexit(on_exit_remove);
	hooks_done = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		/* a signal ignored by the caller (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    (old.sa_handler == SIG_DFL || (even_ignored && old.sa_handler == SIG_IGN)))
			sigaction(sigs[i], &sa, NULL);
}

void cli_output_catch_signals(void)
{
	install_hooks(true);
}

static void remember(const char *temp)
{
	int i;

	if (!temp)
		return;
	install_hooks(false);
	for (i = 0; i < MAX_TEMPS; i++)
		if (!in_use[i]) {
			free(temps[i]);
			temps[i] = strdup(temp);
			if (!temps[i])
				die("out of memory");
			in_use[i] = 1;
			return;
		}
	die("too many output files at once");
}

/* glibc's setvbuf takes a size only with a buffer: without one, standard
 * output to a file or pipe is written 4 KB at a time. */
void cli_stdout_blocks(void)
{
	static char buf[1 << 20];

	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}

void cli_output_check(const char *path, const char *const *inputs, unsigned flags)
{
	struct ks_error err;

	if (ks_outfile_check(path, inputs, flags, &err) < 0)
		die("%s", err.msg);
}

struct ks_outfile *cli_output_open(const char *path, const char *const *inputs, unsigned flags)
{
	struct ks_outfile *of;
	struct ks_error err;

	if (ks_outfile_open(&of, path, inputs, flags, &err) < 0)
		die("%s", err.msg);
	remember(ks_outfile_temp_path(of));
	return of;
}

int cli_output_slot(const struct ks_outfile *of)
{
	const char *temp = ks_outfile_temp_path(of);
	int i;

	for (i = 0; temp && i < MAX_TEMPS; i++)
		if (in_use[i] && temps[i] && !strcmp(temps[i], temp))
			return i;
	return -1;
}

void cli_output_release(int slot)
{
	if (slot >= 0 && slot < MAX_TEMPS)
		in_use[slot] = 0;
}

void cli_output_commit(struct ks_outfile *of)
{
	struct ks_error err;
	int slot = cli_output_slot(of);

	/* the slot stays until the rename: a signal meanwhile removes the
	 * temporary file (after the rename its name is gone, unlink fails) */
	if (ks_outfile_commit(of, &err) < 0) {
		cli_output_release(slot);
		die("%s", err.msg);
	}
	cli_output_release(slot);
}

void cli_output_abort(struct ks_outfile *of)
{
	if (!of)
		return;
	cli_output_release(cli_output_slot(of));
	ks_outfile_abort(of);
}

const char *const tdw_version_names[] = { "6", "7", NULL };
const char *const tdw_compression_names[] = { "zstd", "zlib", "none", NULL };

void tdw_format_resolve(const char *cmd, const struct opt *opts, struct tdw_format *f)
{
	f->version = f->version_idx ? 7 : 6;
	if (option_given(opts, "compression"))
		f->compression = tdw_compression_names[f->compression_idx];
	else
		f->compression = f->version == 7 ? "zstd" : "none";
	if (f->version == 6 && strcmp(f->compression, "none"))
		usage_error(cmd, "--file-version 6 files cannot be compressed (--compression %s)",
			    f->compression);
}
