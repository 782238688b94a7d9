/*
 * source.c - the generic ks_source_* entry points every reader shares.
 *
 * Opening by content is in source_open.c: it names every reader, and
 * keeping it apart means a program (or fuzz target) that opens one reader
 * directly links only that one.
 */
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
	if (n > 0)
		src->stats.records += (uint64_t)n;
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
