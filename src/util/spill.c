/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * spill.c - record logs in memory up to a budget, the rest in an unlinked
 * temporary file.  See spill.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/spill.h"

void ks_spill_init(struct ks_spill *sp, uint64_t budget)
{
	memset(sp, 0, sizeof(*sp));
	sp->budget = budget;
	sp->fd = -1;
}

void ks_spill_free(struct ks_spill *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

int ks_spill_error(const struct ks_spill *sp, struct ks_error *err)
{
	if (!sp->err)
		return 0;
	if (sp->err == ENOMEM)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	return ks_error_set(err, "cannot write a temporary file in %s: %s", tmp_dir(),
			    strerror(sp->err));
}

static int fail(struct ks_spill *sp, int e)
{
	if (!sp->err)
		sp->err = e ? e : EIO;
	return -1;
}

/* LEN bytes of BUF at the end of the pool's file; their offset in *OFF. */
static int spill_write(struct ks_spill *sp, const void *buf, size_t len, uint64_t *off)
{
	const char *p = buf;

	if (sp->err)
		return -1;
	if (sp->fd < 0) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/kvmscope-spill-XXXXXX", tmp_dir());
		sp->fd = mkstemp(path);
		if (sp->fd < 0)
			return fail(sp, errno);
		/* unlinked at once: the space goes back however the run ends */
		unlink(path);
	}
	*off = sp->size;
	while (len) {
		ssize_t w = pwrite(sp->fd, p, len, (off_t)sp->size);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(sp, w < 0 ? errno : ENOSPC);
		p += w;
		len -= (size_t)w;
		sp->size += (uint64_t)w;
	}
	return 0;
}

static int spill_read(struct ks_spill *sp, uint64_t off, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(sp->fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail(sp, r < 0 ? errno : EIO);
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

void ks_rlog_init(struct ks_rlog *l, struct ks_spill *sp, size_t rsize, size_t chunk_bytes)
{
	memset(l, 0, sizeof(*l));
	l->sp = sp;
	l->rsize = rsize;
	l->chunk_recs = (uint32_t)(chunk_bytes / rsize ? chunk_bytes / rsize : 1);
}

static size_t chunk_bytes(const struct ks_rlog *l)
{
	return (size_t)l->chunk_recs * l->rsize;
}

void ks_rlog_free(struct ks_rlog *l)
{
	size_t i;

	for (i = 0; i < l->nchunks; i++) {
		if (l->chunks[i].mem) {
			free(l->chunks[i].mem);
			l->sp->held -= chunk_bytes(l);
		}
	}
	if (l->cur) {
		free(l->cur);
		l->sp->held -= chunk_bytes(l);
	}
	free(l->chunks);
	memset(l, 0, sizeof(*l));
}

/* The chunk being filled (NCUR records) joins the log: kept in memory while
 * the pool is within its budget (or FORCE_MEM), else written to the file. */
static int seal(struct ks_rlog *l, bool may_keep)
{
	struct ks_spill *sp = l->sp;
	struct ks_spill_chunk *c;

	if (!l->ncur)
		return 0;
	if (l->nchunks == l->capchunks) {
		size_t cap = l->capchunks ? l->capchunks * 2 : 16;
		struct ks_spill_chunk *n = realloc(l->chunks, cap * sizeof(*n));

		if (!n)
			return fail(sp, ENOMEM);
		l->chunks = n;
		l->capchunks = cap;
	}
	c = &l->chunks[l->nchunks];
	c->n = l->ncur;
	c->mem = NULL;
	if (may_keep && sp->held <= sp->budget) {
		c->mem = l->cur;
		l->cur = NULL;
	} else if (spill_write(sp, l->cur, (size_t)l->ncur * l->rsize, &c->off) < 0) {
		return -1;
	}
	l->nchunks++;
	l->ncur = 0;
	return 0;
}

void *ks_rlog_push(struct ks_rlog *l)
{
	struct ks_spill *sp = l->sp;
	void *r;

	if (sp->err)
		return NULL;
	if (l->cur && l->ncur == l->chunk_recs && seal(l, true) < 0)
		return NULL;
	if (!l->cur) {
		l->cur = malloc(chunk_bytes(l));
		if (!l->cur) {
			fail(sp, ENOMEM);
			return NULL;
		}
		sp->held += chunk_bytes(l);
	}
	r = l->cur + (size_t)l->ncur++ * l->rsize;
	memset(r, 0, l->rsize);
	l->n++;
	return r;
}

int ks_rlog_seal(struct ks_rlog *l)
{
	if (!l->cur || l->sp->held <= l->sp->budget)
		return 0;
	if (seal(l, false) < 0)
		return -1;
	free(l->cur);
	l->cur = NULL;
	l->sp->held -= chunk_bytes(l);
	return 0;
}

void ks_rlog_cur_init(struct ks_rlog_cur *c, const struct ks_rlog *l)
{
	memset(c, 0, sizeof(*c));
	c->l = l;
}

void ks_rlog_cur_free(struct ks_rlog_cur *c)
{
	free(c->buf);
	c->buf = NULL;
}

const void *ks_rlog_cur_next(struct ks_rlog_cur *c)
{
	const struct ks_rlog *l = c->l;

	while (c->i == c->n) {
		const struct ks_spill_chunk *ch;

		if (c->done)
			return NULL;
		if (c->chunk == l->nchunks) { /* the partial chunk, last */
			c->done = true;
			c->p = l->cur;
			c->i = 0;
			c->n = l->cur ? l->ncur : 0;
			continue;
		}
		ch = &l->chunks[c->chunk++];
		c->i = 0;
		c->n = ch->n;
		if (ch->mem) {
			c->p = ch->mem;
			continue;
		}
		if (!c->buf && !(c->buf = malloc(chunk_bytes(l)))) {
			fail(l->sp, ENOMEM);
			c->n = 0;
			c->done = true;
			return NULL;
		}
		if (spill_read(l->sp, ch->off, c->buf, (size_t)ch->n * l->rsize) < 0) {
			c->n = 0;
			c->done = true;
			return NULL;
		}
		c->p = c->buf;
	}
	return c->p + (size_t)c->i++ * l->rsize;
}
