/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_setup.c - the stat engine made and freed: the architecture and the
 * event class chosen (with --measure run's swap of begin and end rules),
 * the views and tables set up; the engine's failure (a budget, memory)
 * and what it says about itself afterwards (class, ISA, anomalies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/limits.h"
#include "stat_impl.h"

/* The engine cannot go on (a budget, or memory): the first error is kept
 * for ks_stat_error(), and records are no longer counted. */
void stat_fail(struct ks_stat *st, const struct ks_record *rec, const char *fmt,
	       const char *what)
{
	if (st->failed)
		return;
	st->failed = true;
	if (rec && st->path)
		ks_error_at(&st->error, st->path, rec->offset, fmt, what);
	else
		ks_error_set(&st->error, fmt, what);
}

/* calloc() that fails the engine (ks_stat_error() then says "out of
 * memory") instead of returning NULL unnoticed. */
void *stat_calloc(struct ks_stat *st, size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		stat_fail(st, NULL, "%s", "out of memory");
	return p;
}

int ks_stat_error(const struct ks_stat *st, struct ks_error *err)
{
	if (!st->failed)
		return 0;
	if (err)
		*err = st->error;
	return -1;
}

static const struct ks_arch *choose_arch(struct ks_stat *st, const struct ks_source_info *info,
					 struct tep_handle *tep, struct ks_error *err)
{
	const struct ks_arch *a = ks_arch_resolve(st->cfg.arch, info->arch, info->cpuid,
						  info->arch_from_events, tep, &st->arch_source);

	if (!a) {
		char names[256];

		ks_arch_name_list(names, sizeof(names));
		ks_error_set(err, "unknown architecture '%s' (%s)", st->cfg.arch, names);
	}
	return a;
}

static int choose_class(struct ks_stat *st, struct ks_error *err)
{
	enum ks_measure m = st->cfg.measure;
	char list[128];

	st->cls = ks_arch_class(st->arch, st->cfg.event_class ? st->cfg.event_class : "vmexit");
	if (!st->cls) {
		ks_arch_class_list(st->arch, list, sizeof(list));
		return ks_error_set(err, "unknown event class '%s' for %s (try %s)",
				    st->cfg.event_class, st->arch->name, list);
	}
	if (m == KS_MEASURE_PERF)
		m = st->arch->perf.measure == KS_ARCH_MEASURE_RUN && st->cls->run_ok ?
		    KS_MEASURE_RUN : KS_MEASURE_HANDLING;
	if (m == KS_MEASURE_RUN && !st->cls->run_ok)
		return ks_error_set(err, "--measure run needs an exit/entry class (vmexit), "
				    "not '%s'", st->cls->name);
	st->run = m == KS_MEASURE_RUN;
	st->compose = st->cfg.perf_compat && st->cls->perf_compose ? st->cls->perf_compose
								  : st->cls->compose;
	st->begin_rules = st->run ? st->cls->end : st->cls->begin;
	st->end_rules = st->run ? st->cls->begin : st->cls->end;
	st->variant = -1;
	return 0;
}

static struct ks_stat *stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
				struct tep_handle *tep, const struct ks_source *src,
				struct ks_error *err)
{
	const struct ks_source_guest *guests = NULL;
	size_t nguests = src ? ks_source_guests(src, &guests) : 0;
	struct ks_stat *st;
	size_t ncache;
	int i;

	st = calloc(1, sizeof(*st));
	if (!st) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	st->cfg = *cfg;
	st->arch = choose_arch(st, info, tep, err);
	if (!st->arch || choose_class(st, err) < 0) {
		free(st);
		return NULL;
	}
	if (ks_attr_guests_init(&st->guests, guests, nguests) < 0) {
		ks_attr_guests_free(&st->guests);
		free(st);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	ks_attr_guests_procs(&st->guests, src);
	if (tep && st->cls->preferred_name)
		st->variant = ks_tep_event(tep, st->cls->preferred_system,
					   st->cls->preferred_name) ? 0 : 1;
	/* perf decides VMX/SVM from the CPUID string only; we prefer it too
	 * when present and fall back on kvm_exit's isa field. */
	st->key_ctx.isa = ks_x86_isa_from_cpuid(info->cpuid);
	st->isa_from_cpuid = st->key_ctx.isa != KS_ISA_UNKNOWN;
	for (i = 0; i < KS_STAT_MAX_VIEWS && cfg->views[i]; i++)
		stat_view_init(st, &st->views[i], cfg->views[i]);
	st->nviews = i ? i : 1;
	if (!i)
		stat_view_init(st, &st->views[0], KS_DIM_KEY);
	stat_view_init(st, &st->begins, KS_DIM_KEY);
	ks_hmap_init(&st->roles, sizeof(struct event_role *));
	ks_hmap_init(&st->threads, sizeof(struct thread *));
	ks_hmap_init(&st->comms, sizeof(struct comm));
	for (i = 0, ncache = 0; i < st->nviews; i++)
		if (!st->views[i].direct)
			st->views[i].cache = ncache++;
	st->thread_size = sizeof(struct thread) + ncache * sizeof(st->spare_thread->rows[0]);
	st->spare_thread = stat_calloc(st, 1, st->thread_size);
	st->max_threads = ks_limits_or_default(cfg->limits)->threads;
	st->plain = st->nviews == 1 && st->views[0].direct && !cfg->observe &&
		    !cfg->on_occurrence && !cfg->on_replaced;
	if (st->failed) {
		if (err)
			*err = st->error;
		ks_stat_free(st);
		return NULL;
	}
	return st;
}

struct ks_stat *ks_stat_new(const struct ks_stat_config *cfg, const struct ks_source_info *info,
			    struct ks_error *err)
{
	return stat_new(cfg, info, NULL, NULL, err);
}

struct ks_stat *ks_stat_new_source(const struct ks_stat_config *cfg, struct ks_source *src,
				   struct ks_error *err)
{
	struct ks_stat_config c = *cfg;
	struct ks_stat *st;

	if (!c.limits)
		c.limits = ks_source_limits(src);
	st = stat_new(&c, ks_source_info(src), ks_source_tep(src), src, err);
	if (st) {
		st->path = ks_source_path(src);
		st->tep = ks_source_tep(src);
		st->src = src;
	}
	return st;
}

static void free_row(struct ks_stat_row *r)
{
	int c;

	for (c = 0; c < 64; c++)
		free(r->hist[c]);
	free(r);
}

void ks_stat_free(struct ks_stat *st)
{
	struct event_role **role;
	size_t j, pos;
	uint64_t key;
	int i;

	if (!st)
		return;
	for (i = 0; i <= st->nviews; i++) {
		struct view *v = i < st->nviews ? &st->views[i] : &st->begins;
		struct ks_stat_row **r;
		const uint64_t *id;

		pos = 0;
		while ((r = ks_hmap_next_wide(&v->rows, &pos, &id)))
			free_row(*r);
		ks_hmap_free(&v->rows);
		free(v->sorted);
		free(v->direct);
	}
	ks_attr_guests_free(&st->guests);
	free(st->attr_sorted);
	free(st->retired);
	pos = 0;
	while ((role = ks_hmap_next(&st->roles, &pos, &key)))
		free(*role);
	ks_hmap_free(&st->roles);
	ks_hmap_free(&st->threads);
	ks_hmap_free(&st->comms);
	for (j = 0; j < st->nchunks; j++)
		free(st->chunks[j]);
	free(st->chunks);
	free(st->spare_thread);
	for (j = 0; j < 64; j++)
		free(st->spare_row.hist[j]);
	free(st);
}

const char *ks_stat_class_name(const struct ks_stat *st)
{
	return st->cls->name;
}

const char *ks_stat_class_title(const struct ks_stat *st)
{
	return st->cls->title;
}

const char *ks_stat_isa_name(const struct ks_stat *st)
{
	if (st->arch->isa_name)
		return st->arch->isa_name;
	if (st->key_ctx.isa == KS_ISA_UNKNOWN)
		return "unknown";
	return ks_x86_isa_name(st->key_ctx.isa);
}

const char *ks_stat_arch_name(const struct ks_stat *st)
{
	return st->arch->name;
}

const char *ks_stat_arch_source(const struct ks_stat *st)
{
	return st->arch_source;
}

const char *ks_stat_measure_name(const struct ks_stat *st)
{
	return st->run ? "run" : "handling";
}

const char *ks_stat_variant(const struct ks_stat *st)
{
	if (!st->cls->preferred_name)
		return NULL;
	return st->variant == 1 ? st->cls->variant_fallback : st->cls->variant_preferred;
}

int ks_stat_perf_decode_len(const struct ks_stat *st)
{
	return st->arch->perf.decode_len;
}

int ks_stat_perf_name_width(const struct ks_stat *st)
{
	return st->arch->perf.name_width > 0 ? st->arch->perf.name_width : 20;
}

size_t ks_stat_protected_vms(const struct ks_stat *st, const int32_t **vms)
{
	*vms = st->protected_vms;
	return st->nprotected;
}

bool ks_stat_state_protected(const struct ks_stat *st)
{
	return st->cls->state_protected;
}

const struct ks_stat_anomalies *ks_stat_anomalies(const struct ks_stat *st)
{
	return &st->anomalies;
}
