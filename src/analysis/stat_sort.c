/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_sort.c - the stat engine's rows as the reports show them: the names
 * of keys and VMs, whether a row halts or its key is known, and the sort
 * orders (perf's, kvmscope's) with perf's tie breaks.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/host.h"
#include "stat_impl.h"

/* The class's name of KEY/INFO of exit table TABLE (unknown ISA: VMX). */
static void key_name(const struct ks_stat *st, uint64_t key, int32_t info, int32_t table,
		     bool perf_style, char *buf, size_t len)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.isa = ks_x86_isa_or_default(ctx.isa);
	ctx.table = table;
	st->cls->key_name(&ctx, key, info, perf_style, buf, len);
}

void ks_stat_key_name(const struct ks_stat *st, const struct ks_stat_row *row, bool perf_style,
		      char *buf, size_t len)
{
	key_name(st, row->key, row->info, row->table, perf_style, buf, len);
}

void ks_stat_occurrence_key(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			    char *buf, size_t len)
{
	key_name(st, occ->key, occ->info, occ->table, false, buf, len);
}

bool ks_stat_occurrence_detail(const struct ks_stat *st, const struct ks_stat_occurrence *occ,
			       char *buf, size_t len)
{
	const struct ks_event_class *c;

	if (len)
		buf[0] = '\0';
	for (c = st->arch->classes; occ->detail_class && c && c->name; c++)
		if (!strcmp(c->name, occ->detail_class)) {
			struct ks_key_ctx ctx = st->key_ctx;

			ctx.table = 0;
			c->key_name(&ctx, occ->detail_key, occ->detail_info, false, buf, len);
			return true;
		}
	return false;
}

const char *ks_stat_vm_name(const struct ks_stat *st, int32_t vm)
{
	const char *name;
	uint32_t i;

	if (st->cfg.host && !st->cfg.perf_compat)
		return ks_host_vm_name(st->cfg.host, vm);
	for (i = 0; i < st->guests.n; i++)
		if (st->guests.g[i].vm == vm)
			return st->guests.g[i].name;
	if ((name = ks_attr_proc_name(&st->guests, vm)))
		return name;
	name = vm > 0 ? ks_stat_comm(st, vm) : NULL;
	if (!name && vm > 0) {
		const struct thread *t = stat_thread_find(st, vm);

		name = t && t->attr.comm[0] ? t->attr.comm : NULL;
	}
	/* a process without events of its own (a trace.dat's VM known from
	 * kvmscope's tgids option): its saved cmdline; perf names by COMM
	 * records only */
	if (!name && vm > 0 && st->tep && !st->cfg.perf_compat &&
	    tep_is_pid_registered(ks_source_tep_comms(st->src), vm)) {
		name = tep_data_comm_from_pid(st->tep, vm);
		if (name && !strcmp(name, "<...>"))
			name = NULL;
	}
	/* a vCPU thread's name is not the VM's */
	return name && ks_attr_vcpu_from_name(name) < 0 ? name : NULL;
}

bool ks_stat_row_halts(const struct ks_stat *st, const struct ks_stat_row *row)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.table = row->table;
	return ks_arch_exit_halts(st->arch, &ctx, row->key);
}

bool ks_stat_key_known(const struct ks_stat *st, const struct ks_stat_row *row)
{
	struct ks_key_ctx ctx = st->key_ctx;

	ctx.isa = ks_x86_isa_or_default(ctx.isa);
	ctx.table = row->table;
	return !st->cls->key_known || st->cls->key_known(&ctx, row->key);
}

struct sort_item {
	struct ks_stat_row *row;
	size_t pos;
	char name[64];
};

struct sort_mode {
	int by;             /* BY_* */
	bool ties_by_name;  /* perf's hists: equal rows in name order */
};

enum { BY_SAMPLE, BY_TIME, BY_MEAN, BY_MAX, BY_MIN, BY_NAME, BY_P99, BY_PERF_MEAN };

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int sort_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_item *x = a, *y = b;
	const struct sort_mode *m = ctx;
	int c = 0;

	switch (m->by) {
	case BY_SAMPLE:
		c = cmp_u64_desc(x->row->count, y->row->count);
		break;
	case BY_TIME:
		c = cmp_u64_desc(x->row->total_ns, y->row->total_ns);
		break;
	case BY_MEAN:
		c = x->row->mean > y->row->mean ? -1 : x->row->mean < y->row->mean ? 1 : 0;
		break;
	case BY_PERF_MEAN: /* perf 6.1 compares the mean truncated to u64 ns */
		c = cmp_u64_desc((uint64_t)x->row->mean, (uint64_t)y->row->mean);
		break;
	case BY_MAX:
		c = cmp_u64_desc(x->row->max_ns, y->row->max_ns);
		break;
	case BY_MIN:
		c = cmp_u64_desc(x->row->min_ns, y->row->min_ns);
		break;
	case BY_NAME:
		c = strcmp(x->name, y->name);
		break;
	case BY_P99:
		c = cmp_u64_desc(ks_stat_row_quantile(x->row, 0.99),
				 ks_stat_row_quantile(y->row, 0.99));
		break;
	}
	if (c)
		return c;
	if (m->ties_by_name && (c = strcmp(x->name, y->name)))
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos ? 1 : 0;
}

struct sort_key {
	const char *name;
	int mode, perf_mode;
};

static const struct sort_key sort_keys[] = {
	{ "sample", BY_SAMPLE, BY_SAMPLE }, { "time", BY_TIME, BY_PERF_MEAN },
	{ "mean_t", BY_MEAN, BY_MEAN },     { "max_t", BY_MAX, BY_MAX },
	{ "min_t", BY_MIN, BY_MIN },        { "ev_name", BY_NAME, BY_NAME },
	{ "p99", BY_P99, BY_P99 },
};

bool ks_stat_sort_key_valid(const char *key)
{
	for (size_t k = 0; k < sizeof(sort_keys) / sizeof(sort_keys[0]); k++)
		if (!strcmp(sort_keys[k].name, key))
			return true;
	return false;
}

int ks_stat_sort(const struct ks_stat *st, struct ks_stat_row **rows, size_t n, const char *key,
		 struct ks_error *err)
{
	struct sort_item *items;
	struct sort_mode mode;
	size_t i, k;

	for (k = 0; k < sizeof(sort_keys) / sizeof(sort_keys[0]); k++)
		if (!strcmp(sort_keys[k].name, key))
			break;
	if (k == sizeof(sort_keys) / sizeof(sort_keys[0]))
		return ks_error_set(err, "unknown sort key '%s' (use sample, time, mean_t, max_t, "
				    "min_t, ev_name or p99)", key);
	/* perf 6.1's "time" sorts by mean time; newer perf (hists) and we
	 * by total. */
	mode.ties_by_name = st->cfg.perf_compat && st->arch->perf.hists;
	mode.by = st->cfg.perf_compat && !mode.ties_by_name ? sort_keys[k].perf_mode :
								  sort_keys[k].mode;
	items = calloc(n + 1, sizeof(*items));
	if (!items)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		items[i].row = rows[i];
		items[i].pos = i;
		if (sort_keys[k].mode == BY_NAME || mode.ties_by_name)
			ks_stat_key_name(st, rows[i], mode.ties_by_name, items[i].name,
					 sizeof(items[i].name));
	}
	qsort_r(items, n, sizeof(*items), sort_cmp, &mode);
	for (i = 0; i < n; i++)
		rows[i] = items[i].row;
	free(items);
	return 0;
}
