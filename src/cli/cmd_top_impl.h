/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_impl.h - what the files of `kvmscope top` share (private to
 * them): the options (cmd_top_options.c), the display rows every view is
 * built into and the VM filters (cmd_top_rows.c), the batch text, CSV and
 * JSON printers (cmd_top_print.c), the ncurses screen (cmd_top_screen.c)
 * and its keys (cmd_top_keys.c), the interval loops of a replay and of
 * live tracing or statistics polling (cmd_top_loop.c), and the command
 * that sets them up (cmd_top.c).
 */
#ifndef KVMSCOPE_CLI_CMD_TOP_IMPL_H
#define KVMSCOPE_CLI_CMD_TOP_IMPL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/engine.h"
#include "kvmscope/limits.h"
#include "kvmscope/slow_log.h"
#include "kvmscope/top.h"
#include "kvmscope/top_report.h"
#include "options.h"

#define MAX_EVENTS 64
#define MAX_PIDS 256
#define MAX_QMP 64
#define SLOW_KEPT 16 /* --than lines kept for the screen */

enum view { VIEW_EXITS, VIEW_TRACEPOINTS, VIEW_KVMSTATS, VIEW_HALT, NR_VIEWS };
/* the views' names (--view), NULL-terminated */
extern const char *const top_view_names[];
/* the views of KVM's statistics: read from the VMs, not traced */
#define STATS_VIEW(v) ((v) == VIEW_KVMSTATS || (v) == VIEW_HALT)
/* the exits view's sort columns (-s), NULL-terminated */
extern const char *const top_sort_columns[];

struct top_args {
	const char *input;
	bool fast, batch, csv, json, vcpus, once, skip_zero, debugfs;
	double delay;
	long long iterations;
	int sort, view;
	const char *events[MAX_EVENTS];
	int nevents;
	int32_t pids[MAX_PIDS];
	int npids;
	struct ks_limits limits;
	struct time_window time;
	const char *qmp[MAX_QMP];
	int nqmp;
	const char *libvirt;  /* --libvirt's URI; NULL: not given */
	const char *fields, *guest;
	struct duration_arg than;  /* --than: the slow-exit log */
	int engine;                /* --engine: enum ks_engine_kind */
};

/* Each view's columns (cmd_top_rows.c). */
extern const struct ks_top_cols top_view_cols[NR_VIEWS];

struct ks_host;
struct ks_kvmcol;
struct ks_kvmcol_vm;
struct ks_live;
struct ks_source;
struct ks_tpcount;

struct top_state {
	struct top_args *a;
	struct ks_top *top;
	struct ks_tpcount *tp;
	struct ks_host *host;      /* threads -> VM, vCPU: one model for the run */
	struct ks_source *src;
	/* live: the engine (engine.h) and its cumulative snapshots, the
	 * last one read (snap[cur]) and the one before; NULL: records */
	struct ks_engine *eng;
	struct ks_engine_snapshot snap[2], delta;
	int cur;
	char live_what[40];        /* "live (bpf engine)" */
	bool live, screen, quit, paused, children, need_draw, tracing;
	long interval;
	uint64_t end_ns;           /* trace time of the last closed interval's end */
	double last_secs;          /* wall length of the last interval (kvmstats) */
	double last_close;
	regex_t re;
	bool have_re;
	char guest[64];
	int32_t pid_filter;
	char status[160];
	int scroll;
	bool help;
	struct ks_top_line *rows;
	size_t nrows, cap;
	struct ks_kvmcol *col;     /* the VMs of the statistics views */
	/* --than: written as they come, or on the screen the last SLOW_KEPT */
	struct ks_slow_log slow;
	char slow_lines[SLOW_KEPT][200];
	unsigned nslow;            /* lines kept, at most SLOW_KEPT */
	bool slow_printed;         /* batch: lines since the last table */
};

/* cmd_top_options.c: the command line into A (usage errors exit 2). */
void top_parse_args(int argc, char **argv, struct top_args *a);

/* cmd_top_rows.c: the VM filters and names, and the rows of the view. */
void top_vm_name(const struct top_state *s, int32_t vm, const char *known, char *out,
		 size_t len);
void top_vm_label(const struct top_state *s, int32_t vm, const char *known, char *out,
		  size_t len);
bool top_vm_wanted(const struct top_state *s, int32_t vm, const char *known);
bool top_name_wanted(const struct top_state *s, const char *name);
/* The f filter (and -f): names matching RE (extended, any case) only;
 * none when RE is empty; a bad RE is said in the status line. */
void top_set_filter(struct top_state *s, const char *re);
struct ks_top_row *top_sorted_copy(const struct top_state *s, enum ks_top_level lv, size_t *n);
struct ks_kvmcol_vm *top_stats_vms(const struct top_state *s, size_t *n);
size_t top_stats_vms_shown(const struct top_state *s);
void top_build_rows(struct top_state *s);
const char *top_empty_text(const struct top_state *s);

/* cmd_top_print.c: batch text, CSV, JSON and the --than lines. */
const char *top_overflow_text(const struct top_state *s);
void top_print_text(struct top_state *s);
void top_print_csv(struct top_state *s);
void top_print_json(struct top_state *s);
void top_slow_exit(void *ctx, const struct ks_stat *st, const struct ks_stat_occurrence *occ);

/* cmd_top_screen.c: the ncurses screen. */
void top_setup_screen(struct top_state *s);
void top_screen_end(void);
void top_draw_screen(struct top_state *s);
bool top_prompt(struct top_state *s, const char *question, char *out, int len);

/* cmd_top_keys.c: the keys typed since the last call. */
void top_handle_keys(struct top_state *s);

/* cmd_top_loop.c: the intervals of a replay or a live run. */
void top_kvmcol_setup(struct top_state *s);
void top_read_kvmstats(struct top_state *s);
void top_replay(struct top_state *s);
void top_live_loop(struct top_state *s, struct ks_live *l);

#endif
