/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * spill.h - append-only logs of fixed-size records that stay in memory up to
 * a budget and go to a temporary file beyond it.
 *
 * What an engine keeps per event of its input (timeline intervals, profile
 * entries past its table) goes to a log (struct ks_rlog).  Records are
 * gathered in chunks; a full chunk stays in memory while the logs of one
 * pool (struct ks_spill) hold less than its budget, else it is written to
 * the pool's file: one temporary file in $TMPDIR (default /tmp), unlinked as
 * soon as it is created, so nothing is left behind however the run ends.
 * Logs are read back in order with a cursor, one chunk at a time.
 *
 *	struct ks_spill sp;  ks_spill_init(&sp, budget);
 *	struct ks_rlog l;    ks_rlog_init(&l, &sp, sizeof(struct rec), 64 << 10);
 *	struct rec *r = ks_rlog_push(&l);          (NULL: out of memory or disk)
 *	struct ks_rlog_cur c; ks_rlog_cur_init(&c, &l);
 *	while ((r = ks_rlog_cur_next(&c))) ...;  ks_rlog_cur_free(&c);
 *	ks_rlog_free(&l); ks_spill_free(&sp);
 */
#ifndef KVMSCOPE_UTIL_SPILL_H
#define KVMSCOPE_UTIL_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"

struct ks_spill {
	uint64_t budget;   /* bytes of chunks the pool's logs may hold in memory */
	uint64_t held;     /* ... held now */
	int fd;            /* the temporary file, -1 until the first spill */
	uint64_t size;     /* bytes written to it */
	int err;           /* errno of the first failure (0: none) */
};

struct ks_spill_chunk {
	void *mem;         /* in memory, or NULL: in the file at OFF */
	uint64_t off;
	uint32_t n;        /* records */
};

struct ks_rlog {
	struct ks_spill *sp;
	size_t rsize;              /* bytes per record */
	uint32_t chunk_recs;       /* records per chunk */
	struct ks_spill_chunk *chunks;
	size_t nchunks, capchunks;
	unsigned char *cur;        /* the chunk being filled (counted in held) */
	uint32_t ncur;
	uint64_t n;                /* records in the log */
};

struct ks_rlog_cur {
	const struct ks_rlog *l;
	size_t chunk;              /* next chunk to load; nchunks: the partial one */
	const unsigned char *p;    /* records of the loaded chunk */
	uint32_t i, n;
	unsigned char *buf;        /* a file chunk read back */
	bool done;
};

void ks_spill_init(struct ks_spill *sp, uint64_t budget);
void ks_spill_free(struct ks_spill *sp);
/* The first failure as "cannot write a temporary file in DIR: REASON"
 * (or "out of memory") into ERR; 0 when there was none. */
int ks_spill_error(const struct ks_spill *sp, struct ks_error *err);

/* A log of RSIZE-byte records in chunks of about CHUNK_BYTES. */
void ks_rlog_init(struct ks_rlog *l, struct ks_spill *sp, size_t rsize, size_t chunk_bytes);
void ks_rlog_free(struct ks_rlog *l);
/* Room for one more record at the end (zeroed), or NULL with sp->err set. */
void *ks_rlog_push(struct ks_rlog *l);
/* The partial chunk too goes to the file when the pool is over its budget
 * (its buffer is freed): for logs that are complete. */
int ks_rlog_seal(struct ks_rlog *l);

void ks_rlog_cur_init(struct ks_rlog_cur *c, const struct ks_rlog *l);
/* The next record, or NULL at the end or on a read error (sp->err). */
const void *ks_rlog_cur_next(struct ks_rlog_cur *c);
void ks_rlog_cur_free(struct ks_rlog_cur *c);

#endif
