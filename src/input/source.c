/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source.c - the generic ks_source_* entry points every reader shares.
 *
 * Opening by content is in source_open.c: it names every reader, and
 * keeping it apart means a program (or fuzz target) that opens one reader
 * directly links only that one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source_impl.h"

void ks_source_set_window(struct ks_source *src, uint64_t start_ns, uint64_t end_ns)
{
	src->win_start = start_ns;
	src->win_end = end_ns;
	src->windowed = true;
}

/* Drop the events of RECS[0, n) outside the window and return how many
 * records are left; at the first event after it, the source has ended. */
static int window(struct ks_source *src, struct ks_record *recs, int n)
{
	int i, kept = 0;

	for (i = 0; i < n; i++) {
		if (recs[i].type == KS_REC_EVENT && recs[i].ts > src->win_end) {
			src->win_ended = true;
			break;
		}
		if (recs[i].type == KS_REC_EVENT && recs[i].ts < src->win_start) {
			src->stats.outside_window++;
			continue;
		}
		if (kept != i)
			recs[kept] = recs[i];
		kept++;
	}
	return kept;
}

int ks_source_next_batch(struct ks_source *src, struct ks_record *recs, int max,
			 struct ks_error *err)
{
	int n;

	if (ks_source_late_error(src, err) < 0)
		return -1;
	for (;;) {
		if (src->win_ended)
			return 0;
		n = src->ops->next_batch ? src->ops->next_batch(src, recs, max, err) :
					   src->ops->next(src, recs, err);
		if (n <= 0 || !src->windowed)
			break;
		n = window(src, recs, n);
		if (n > 0)
			break;
	}
	if (n > 0) {
		src->stats.records += (uint64_t)n;
		if (recs[n - 1].offset > src->max_offset)
			src->max_offset = recs[n - 1].offset;
	}
	return n;
}

int ks_source_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	return ks_source_next_batch(src, rec, 1, err);
}

int ks_source_select(struct ks_source *src, bool (*want)(void *ctx, struct tep_event *ev),
		     void *ctx)
{
	return src->ops->select ? src->ops->select(src, want, ctx) : -1;
}

void ks_source_close(struct ks_source *src)
{
	if (src)
		src->ops->close(src);
}

void ks_source_position(const struct ks_source *src, uint64_t *done, uint64_t *total)
{
	struct stat sb;

	if (src->ops->position) {
		src->ops->position(src, done, total);
		return;
	}
	*done = src->max_offset;
	*total = src->path && stat(src->path, &sb) == 0 && S_ISREG(sb.st_mode) ?
		 (uint64_t)sb.st_size : 0;
}

const char *ks_source_path(const struct ks_source *src)
{
	return src->path;
}

const struct ks_limits *ks_source_limits(const struct ks_source *src)
{
	return &src->limits;
}

struct tep_handle *ks_source_tep(const struct ks_source *src)
{
	return src->tep;
}

const struct ks_source_info *ks_source_info(const struct ks_source *src)
{
	return &src->info;
}

const struct ks_source_stats *ks_source_stats(const struct ks_source *src)
{
	return &src->stats;
}

/* A NUL-terminated copy of TEXT[0, LEN), or TEXT itself when TAKE. */
static char *meta_copy(char *text, size_t len, bool take)
{
	char *c;

	if (take)
		return text;
	c = malloc(len + 1);
	if (c) {
		if (len)
			memcpy(c, text, len);
		c[len] = '\0';
	}
	return c;
}

int ks_source_meta_add_format(struct ks_source_meta *m, const char *system, char *text,
			      size_t len, bool take)
{
	char *t = meta_copy(text, len, take), *sys = strdup(system ? system : "");

	if (t && sys && m->nr_formats == m->cap_formats) {
		size_t cap = m->cap_formats ? m->cap_formats * 2 : 64;
		struct ks_source_format *n = realloc(m->formats, cap * sizeof(*n));

		if (n) {
			m->formats = n;
			m->cap_formats = cap;
		}
	}
	if (!t || !sys || m->nr_formats == m->cap_formats) {
		free(t);
		free(sys);
		return -ENOMEM;
	}
	m->formats[m->nr_formats++] = (struct ks_source_format){ sys, t, len };
	return 0;
}

int ks_source_meta_set_text(struct ks_source_meta *m, enum ks_source_text_id id, char *text,
			    size_t len, bool take)
{
	char *t = meta_copy(text, len, take);

	if (!t)
		return -ENOMEM;
	free(m->text[id]);
	m->text[id] = t;
	m->text_len[id] = len;
	return 0;
}

/* A text loaded late (kallsyms on the first symbol printed) was damaged:
 * the run stops with its error, not with output that silently lacks it. */
int ks_source_late_error(const struct ks_source *src, struct ks_error *err)
{
	if (!atomic_load_explicit(&src->meta.text_failed, memory_order_acquire))
		return 0;
	if (err)
		*err = src->meta.text_err;
	return -1;
}

int ks_source_meta_defer_text(struct ks_source_meta *m, enum ks_source_text_id id,
			      ks_source_text_loader load, void *arg)
{
	if (!m->text_lock_ready) {
		if (pthread_mutex_init(&m->text_lock, NULL))
			return -ENOMEM;
		m->text_lock_ready = true;
	}
	free(m->text[id]);
	m->text[id] = NULL;
	m->text_len[id] = 0;
	m->text_deferred[id] = true;
	m->load_text = load;
	m->load_arg = arg;
	return 0;
}

bool ks_source_meta_has_text(const struct ks_source_meta *m, enum ks_source_text_id id)
{
	return (unsigned)id < KS_TEXT_NR &&
	       ((m->text[id] && m->text_len[id]) || m->text_deferred[id]);
}

/* Load text ID if it waits in the file (once; a failure is kept in M). */
static void load_deferred(struct ks_source_meta *m, enum ks_source_text_id id)
{
	struct ks_error e;
	char *text;
	size_t len;

	if (!m->text_lock_ready) /* nothing deferred: set at open only */
		return;
	pthread_mutex_lock(&m->text_lock);
	if (m->text_deferred[id]) {
		m->text_deferred[id] = false;
		if (m->load_text(m->load_arg, id, &text, &len, &e) < 0 ||
		    (ks_source_meta_set_text(m, id, text, len, true) < 0 &&
		     ks_error_code(&e, KS_E_NOMEM, "out of memory loading a stored text") < 0)) {
			m->text_lost[id] = true;
			if (!atomic_load_explicit(&m->text_failed, memory_order_relaxed)) {
				m->text_err = e;
				atomic_store_explicit(&m->text_failed, true, memory_order_release);
			}
		}
	}
	pthread_mutex_unlock(&m->text_lock);
}

const char *ks_source_meta_text(struct ks_source_meta *m, enum ks_source_text_id id, size_t *len)
{
	if ((unsigned)id < KS_TEXT_NR)
		load_deferred(m, id);
	if ((unsigned)id >= KS_TEXT_NR || !m->text[id]) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = m->text_len[id];
	return m->text[id];
}

void ks_source_meta_free(struct ks_source_meta *m)
{
	size_t i;

	if (m->text_lock_ready)
		pthread_mutex_destroy(&m->text_lock);

	for (i = 0; i < m->nr_formats; i++) {
		free((char *)m->formats[i].system);
		free((char *)m->formats[i].text);
	}
	free(m->formats);
	for (i = 0; i < KS_TEXT_NR; i++)
		free(m->text[i]);
	free(m->guests);
	memset(m, 0, sizeof(*m));
}

size_t ks_source_formats(const struct ks_source *src, const struct ks_source_format **fmts)
{
	*fmts = src->meta.formats;
	return src->meta.nr_formats;
}

/* The source's texts are constant to its users; loading a deferred one
 * changes only what the source had not read yet. */
const char *ks_source_text(const struct ks_source *src, enum ks_source_text_id id, size_t *len)
{
	return ks_source_meta_text((struct ks_source_meta *)&src->meta, id, len);
}

int ks_source_text_get(const struct ks_source *src, enum ks_source_text_id id, const char **text,
		       size_t *len, struct ks_error *err)
{
	struct ks_source_meta *m = (struct ks_source_meta *)&src->meta;
	bool lost;

	*text = ks_source_meta_text(m, id, len);
	if (*text || !m->text_lock_ready)
		return 0;
	pthread_mutex_lock(&m->text_lock);
	lost = (unsigned)id < KS_TEXT_NR && m->text_lost[id];
	pthread_mutex_unlock(&m->text_lock);
	if (!lost)
		return 0;
	if (err)
		*err = m->text_err;
	return -1;
}

const struct ks_source_clock *ks_source_clock(const struct ks_source *src)
{
	return &src->meta.clock;
}

size_t ks_source_guests(const struct ks_source *src, const struct ks_source_guest **guests)
{
	*guests = src->meta.guests;
	return src->meta.nr_guests;
}

size_t ks_source_procs(const struct ks_source *src, const struct ks_source_proc **procs)
{
	*procs = src->meta.procs;
	return src->meta.nr_procs;
}

size_t ks_source_buffers(const struct ks_source *src, const char *const **names)
{
	*names = src->meta.buffers;
	return src->meta.nr_buffers;
}

const struct ks_source_timeshift *ks_source_timeshift(const struct ks_source *src)
{
	return src->meta.has_timeshift ? &src->meta.timeshift : NULL;
}

/* ---- what every reader does when it opens ---- */

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

void ks_source_apply_opts(struct ks_source *src, const struct ks_source_opts *o)
{
	src->limits = *ks_limits_or_default(o ? o->limits : NULL);
	src->ctx = o ? o->ctx : NULL;
}
