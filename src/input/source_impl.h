/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source_impl.h - what a reader implements to become a struct ks_source.
 *
 * A reader embeds struct ks_source as its FIRST member, fills in ops, path,
 * tep, info and keeps stats up to date.  source_open.c detects the input
 * type and calls the matching *_open function below.
 */
#ifndef KVMSCOPE_SOURCE_IMPL_H
#define KVMSCOPE_SOURCE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/limits.h"
#include "kvmscope/source.h"

/* 0 if FD (opened from PATH) is a regular file; else -1 with err saying
 * what it is ("PATH: is a directory", "PATH: is a pipe or FIFO; ..."):
 * every reader seeks in its input. */
int ks_source_check_regular(const char *path, int fd, struct ks_error *err);

struct ks_source_ops {
	const char *name;
	int (*next)(struct ks_source *src, struct ks_record *rec, struct ks_error *err);
	/* Optional: up to MAX records at once (see ks_source_next_batch). */
	int (*next_batch)(struct ks_source *src, struct ks_record *recs, int max,
			  struct ks_error *err);
	void (*close)(struct ks_source *src); /* frees everything incl. the struct */
	/* Optional: see ks_source_select. */
	int (*select)(struct ks_source *src, bool (*want)(void *ctx, struct tep_event *ev),
		      void *ctx);
	/* Optional: see ks_source_position (default: the furthest record's
	 * offset, of the file's size). */
	void (*position)(const struct ks_source *src, uint64_t *done, uint64_t *total);
};

/* Reads text ID, which the reader left in the file (ks_source_meta_defer_text),
 * into *TEXT (malloc'ed, NUL-terminated after *LEN bytes).  Returns 0, or -1
 * with ERR set ("FILE: offset N: problem"). */
typedef int (*ks_source_text_loader)(void *arg, enum ks_source_text_id id, char **text,
				     size_t *len, struct ks_error *err);

/* What a reader keeps of the input's metadata texts (see
 * ks_source_formats() and ks_source_text()); freed by ks_source_meta_free(),
 * which every reader's close calls. */
struct ks_source_meta {
	struct ks_source_format *formats;
	size_t nr_formats, cap_formats;
	char *text[KS_TEXT_NR];
	size_t text_len[KS_TEXT_NR];
	/* texts left in the file until first asked for (a trace.dat's 15 MB
	 * of kallsyms: most runs print no symbol); loaded once, under
	 * text_lock, by load_text.  A load that fails sets text_failed and
	 * text_err, which the source's next read returns. */
	bool text_deferred[KS_TEXT_NR];
	bool text_lost[KS_TEXT_NR];        /* its load failed */
	ks_source_text_loader load_text;
	void *load_arg;
	bool text_lock_ready;              /* set at open, before any lookup */
	pthread_mutex_t text_lock;
	atomic_bool text_failed;
	struct ks_error text_err;
	struct ks_source_clock clock;      /* name points into the reader's data */
	struct ks_source_guest *guests;    /* owned; names and vCPUs point into
					    * the reader's data */
	size_t nr_guests;
	const struct ks_source_proc *procs; /* the reader's */
	size_t nr_procs;
	struct ks_source_timeshift timeshift; /* cpus point into the reader's data */
	bool has_timeshift;
	const char *const *buffers;        /* the reader's names */
	size_t nr_buffers;
};

struct ks_source {
	const struct ks_source_ops *ops;
	char *path;                  /* owned (strdup) by the reader; freed by close */
	struct tep_handle *tep;      /* owned by the reader */
	struct ks_source_info info;
	struct ks_source_stats stats;
	struct ks_limits limits;     /* the run's budgets (never NULL: defaults) */
	struct ks_ctx *ctx;          /* the library context opened with, or NULL */
	struct ks_lazy *lazy;        /* the formats parsed when first needed, or NULL */
	uint64_t win_start, win_end; /* events outside [start, end] are dropped */
	bool windowed, win_ended;
	uint64_t max_offset;         /* the furthest record delivered (progress) */
	struct ks_source_meta meta;  /* the stored texts (readers of files with them) */
};

/* Keep a copy of format TEXT (LEN bytes) of SYSTEM; TAKE: TEXT is a malloc'ed
 * NUL-terminated buffer that the source takes over (also on failure).
 * Returns 0 or -ENOMEM. */
int ks_source_meta_add_format(struct ks_source_meta *m, const char *system, char *text,
			      size_t len, bool take);
/* The same for text ID (replacing an earlier one). */
int ks_source_meta_set_text(struct ks_source_meta *m, enum ks_source_text_id id, char *text,
			    size_t len, bool take);
/* Leave text ID in the file: LOAD(ARG, ...) reads it when it is first asked
 * for (ks_source_text(), ks_source_meta_text()).  Call while opening, before
 * the source is used.  Returns 0 or -ENOMEM. */
int ks_source_meta_defer_text(struct ks_source_meta *m, enum ks_source_text_id id,
			      ks_source_text_loader load, void *arg);
/* Text ID of M (loaded now if it was deferred), or NULL: none, or its load
 * failed (then M's text_err says why). */
const char *ks_source_meta_text(struct ks_source_meta *m, enum ks_source_text_id id, size_t *len);
/* -1 with ERR set when a text of SRC loaded late failed (every read of
 * the source, records or pages, stops then), else 0. */
int ks_source_late_error(const struct ks_source *src, struct ks_error *err);
/* Whether M has a non-empty text ID, loaded or deferred (without loading
 * it; a reader defers only non-empty texts). */
bool ks_source_meta_has_text(const struct ks_source_meta *m, enum ks_source_text_id id);
/* Free what M holds; M is empty afterwards. */
void ks_source_meta_free(struct ks_source_meta *m);

/* The options' common part into SRC (O NULL: the defaults): the budgets
 * and the context. */
void ks_source_apply_opts(struct ks_source *src, const struct ks_source_opts *o);

/* Each reader: open PATH with the options O (NULL: the defaults).  Returns
 * 0 or a negative value with err set ("FILE: offset N: ..."). */
int ks_perfdata_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err);
int ks_tracedat_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err);
int ks_ftrace_text_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
			struct ks_error *err);
/* For tests and fuzzing, a setting of CTX for the perf.data inputs opened
 * with it afterwards: data sections larger than MIN_MAPPED bytes are mapped
 * (default KS_PD_MAP_MIN) and the prefetch thread populates and frames
 * CHUNK bytes at a time (0: the default, 4 MB), so that small inputs go
 * through the mapped, threaded path with many chunk boundaries; UINT64_MAX
 * maps none (large ones are then read into buffers by the thread).
 * ks_ctx_perfdata_tune(ctx, KS_PD_MAP_MIN, 0) restores the defaults. */
#define KS_PD_MAP_MIN (6ull << 20)
void ks_ctx_perfdata_tune(struct ks_ctx *ctx, uint64_t min_mapped, uint64_t chunk);
/* For tests: how many records of SRC (a perf.data source) were queued as
 * the prefetch thread framed them; the reader frames the others itself. */
uint64_t ks_perfdata_framed_ahead(const struct ks_source *src);

/* Sniff helpers (source_open.c uses them; readers may too). */
#define KS_PERF_MAGIC "PERFILE2"
#define KS_PERF_MAGIC_SWAPPED "2ELIFREP" /* written by a big-endian host */
#define KS_TRACEDAT_MAGIC "\x17\x08\x44tracing"

#endif
