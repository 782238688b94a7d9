/*
 * source.c - the generic ks_source_* entry points every reader shares.
 *
 * Opening by content is in source_open.c: it names every reader, and
 * keeping it apart means a program (or fuzz target) that opens one reader
 * directly links only that one.
 */
#include "source_impl.h"

int ks_source_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	int r = src->ops->next(src, rec, err);

	if (r > 0)
		src->stats.records++;
	return r;
}

int ks_source_next_batch(struct ks_source *src, struct ks_record *recs, int max,
			 struct ks_error *err)
{
	int n = src->ops->next_batch ? src->ops->next_batch(src, recs, max, err) :
				       src->ops->next(src, recs, err);

	if (n > 0)
		src->stats.records += (uint64_t)n;
	return n;
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
