/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli.h - shared pieces of the kvmscope command line (one file per command).
 */
#ifndef KVMSCOPE_CLI_H
#define KVMSCOPE_CLI_H

#include <stdbool.h>

#include "kvmscope/error.h"
#include "kvmscope/unwind.h"

int cmd_stat(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_unwind(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_pmu(int argc, char **argv);
int cmd_exporter(int argc, char **argv);

/* The run's library context (kvmscope/ctx.h), made by cli_run() before the
 * command runs, with the format probe set (format_probe.h): every input is
 * opened with it. */
struct ks_ctx *cli_ctx(void);
/* The same without starting the format probe's helper, for connections to
 * peers (QMP): its cancel function is the first SIGINT/SIGTERM/SIGHUP
 * caught (cli_live_catch_signals). */
struct ks_ctx *cli_peer_ctx(void);

/* Run FN (a cmd_*) with ARGV in a fresh run context (run.c); its status. */
int cli_run(int (*fn)(int argc, char **argv), int argc, char **argv);
/* Check standard output when the process exits (also after --help's
 * exit(0)): a write error is exit status 1 with one line. */
void cli_check_stdout_at_exit(void);

/* "kvmscope: MSG" on stderr and exit status 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kvmscope: MSG" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a usage error and exit 2: "kvmscope CMD: MSG; see 'kvmscope CMD --help'". */
_Noreturn void usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --kernel-unwind auto|orc|fp|none (index 0, auto: ORC that falls back to
 * frame pointers) and --orc-layout auto|pre-6.4|6.4, shared by sample and
 * unwind: table entries (options.h) of an int index into these. */
extern const char *const kunwind_names[];
extern const enum ks_kunwind kunwind_values[];
extern const char *const orc_layout_names[];
extern const int orc_layout_values[];
#define OPT_KERNEL_UNWIND(idx) OPT_CHOICE(0, "kernel-unwind", (idx), "M", \
	"auto (default), orc, fp or none", kunwind_names)
#define OPT_ORC_LAYOUT(idx) OPT_CHOICE(0, "orc-layout", (idx), "L", \
	"auto (default), pre-6.4 or 6.4", orc_layout_names)

/* Output files (output.c, over kvmscope/outfile.h): written to a temporary
 * file renamed over PATH when complete.  cli_output_check() runs the checks
 * alone (before reading any input); cli_output_open() dies with one line on
 * a refusal or error and registers the temporary file for removal at exit
 * and on SIGINT/SIGTERM/SIGHUP; cli_output_commit() dies on a write error.
 * For a writer that commits by itself (ks_tdw_close), take the slot with
 * cli_output_slot() before and cli_output_release() it after. */
#include "kvmscope/outfile.h"
void cli_output_check(const char *path, const char *const *inputs, unsigned flags);
struct ks_outfile *cli_output_open(const char *path, const char *const *inputs, unsigned flags);
void cli_output_commit(struct ks_outfile *of);
void cli_output_abort(struct ks_outfile *of);
int cli_output_slot(const struct ks_outfile *of);
void cli_output_release(int slot);
/* Remove the registered temporary files on SIGINT/SIGTERM/SIGHUP even when
 * the signal was ignored (record, whose own handlers take them over and
 * chain to these after a second signal). */
void cli_output_catch_signals(void);
/* Standard output written a megabyte at a time (call before any output). */
void cli_stdout_blocks(void);

/* An input named on the command line: "-" is standard input (a pipe is
 * spooled to a temporary file first; the readers seek).  Returns the path
 * to open. */
const char *cli_input(const char *path);
/* ks_source_open_opts() of PATH in the run's context (cli_ctx()), with
 * FLAGS (KS_OPEN_*) and the budgets LIM (NULL: the defaults). */
struct ks_source;
struct ks_limits;
int cli_source_open(struct ks_source **out, const char *path, unsigned flags,
		    const struct ks_limits *lim, struct ks_error *err);
/* What PATH holds (census.h), for an empty answer; dies on read errors. */
struct ks_census;
void cli_census(const char *path, const char *arch, struct ks_census *c);
/* Dies with one line when C counted no KVM event ("PATH: no KVM events
 * WHAT: the file holds N events of other tracepoints; record ..."). */
void cli_require_kvm(const char *path, const struct ks_census *c, const char *what);
/* The same line as a note on stderr, for an answer that goes on empty (a
 * recording of an idle host is a normal input: perf prints its empty table
 * and exits 0); returns whether C counted no KVM event. */
bool cli_note_no_kvm(const char *path, const struct ks_census *c, const char *what);
/* An answer without the WANT it needs ("kvm_exit events"): dies with what
 * PATH holds instead: cli_require_kvm()'s line, or "PATH: no WANT; this
 * file has vmexit (5860), ..." (its KVM event classes). */
_Noreturn void cli_explain_missing(const char *path, const char *want);
/* Live tracing of processes that do not exist would trace nothing,
 * silently: "--pid N: no such process", exit 1. */
void cli_check_pids(const int32_t *pids, int n);
/* The same as a note on stderr (the answer goes on: a legitimate zero). */
void cli_note_missing(const char *path, const char *want);

/* --file-version 6|7 and --compression zstd|zlib|none of the commands that
 * write a trace.dat (convert, record): OPT_TDW_FORMAT(&f) in the table
 * (options.h), then tdw_format_resolve() sets f.version and f.compression
 * (a usage error for a compressed version 6). */
struct tdw_format {
	int version_idx, compression_idx; /* the options' indexes */
	int version;
	const char *compression;
};
#define TDW_FORMAT_INIT { .version_idx = 1 }
extern const char *const tdw_version_names[];
extern const char *const tdw_compression_names[];
#define OPT_TDW_FORMAT(f) \
	OPT_CHOICE(0, "file-version", &(f)->version_idx, "6|7", \
		   "trace.dat file version (default 7)", tdw_version_names), \
	OPT_CHOICE(0, "compression", &(f)->compression_idx, "ALG", \
		   "zstd (default for version 7), zlib or none; version 6\n" \
		   "files are never compressed", tdw_compression_names)
struct opt;
void tdw_format_resolve(const char *cmd, const struct opt *opts, struct tdw_format *f);

/* Inputs of merge and timeline: -i FILE / operands, --tsc-offset, --no-sync,
 * --limit. */
#include "kvmscope/limits.h"
#include "kvmscope/merge.h"
struct merge_inputs {
	const char **specs;
	int n;
	struct ks_merge_offset *offsets;
	struct ks_merge_opts opts;
	struct ks_limits limits;
};
void merge_inputs_init(struct merge_inputs *in, int argc);
/* The table entries of the input options (options.h) for IN. */
const char *merge_take_offset(const char *arg, void *in);
#define MERGE_INPUT_OPTS(in) \
	OPT_CALLBACK(0, "tsc-offset", (in), "V=OFF", \
		     "guest TSC = host TSC + OFF on vCPU V (for guests\n" \
		     "without TimeShift and without offset events); repeatable", \
		     merge_take_offset), \
	OPT_FLAG(0, "no-sync", &(in)->opts.no_sync, "keep guest timestamps as recorded"), \
	OPT_LIMIT(&(in)->limits)
/* Add the operands ARGV[FIRST..ARGC) and open the merge (dies on errors).
 * A guest without any time sync, or whose TimeShift option makes the
 * --tsc-offset values unused, is named in a warning. */
struct ks_merge *merge_inputs_open(struct merge_inputs *in, const char *cmd, int first, int argc,
				   char **argv);
void merge_inputs_free(struct merge_inputs *in);

/* The progress line of the commands that read inputs (progress.c, over
 * kvmscope/progress.h): on when standard error is a terminal and not QUIET
 * (-q), and, for a command that STREAMS its output as it reads, standard
 * output is not a terminal.  It shows past a second, or past
 * KVMSCOPE_PROGRESS_DELAY seconds when set (tests).  cli_progress() is
 * cheap enough for every record. */
#include "kvmscope/progress.h"
void cli_progress_init(struct ks_progress *p, const char *cmd, bool quiet, bool streams);
void cli_progress_sources(struct ks_progress *p, struct ks_source *const *srcs, int n);
void cli_progress_merge(struct ks_progress *p, const struct ks_merge *m);
static inline void cli_progress(struct ks_progress *p, struct ks_source *src)
{
	if (ks_progress_due(p))
		cli_progress_sources(p, &src, 1);
}

/* Live tracing (live_signals.c).  cli_live_track is the ks_live_opts.track
 * hook: the instances it lists are removed at exit and by a second signal.
 * cli_live_catch_signals(): SIGINT / SIGTERM / SIGHUP set the flag that
 * cli_live_interrupted() reads (a second one removes the instances' directories
 * and exits, chaining to the handlers that were there before). */
struct ks_live;
int cli_live_track(void *ctx, struct ks_live *l, const char *dir, bool add);
void cli_live_catch_signals(void);
bool cli_live_interrupted(void);
int cli_live_signal(void);         /* the signal that arrived, 0 = none */

/* The live engines (engine_opt.c): --engine's choices ("auto", "bpf",
 * "tracefs": the order of enum ks_engine_kind), and the engine CFG names
 * opened, or die(); AUTO's fallback is said in one line on stderr. */
struct ks_engine;
struct ks_engine_config;
extern const char *const cli_engine_names[];
struct ks_engine *cli_engine_open(const char *cmd, struct ks_engine_config *cfg);

#endif
