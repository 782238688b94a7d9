/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_rows.c - the lines of top's kvmstats view of a VM: its
 * statistics, a vCPU statistic summed over the vCPUs, with the value since
 * the base and the change per second (see kvmstats_collect.h).
 *
 * Time in proportion to the statistics, not their square: a vCPU
 * statistic's entries are walked through the index (ks_kstats_next_vcpu),
 * the previous and base readings looked up by hash.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/kvmstats_collect.h"

/* A statistic of a VM as one line: the VM's own, or a vCPU statistic
 * summed over the vCPUs (FIRST = its first vCPU entry). */
struct line {
	const struct ks_kstat *first;
	bool per_vcpu;
	uint64_t value, prev;
	bool have_prev, moved;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	uint64_t dx = x->have_prev && x->value >= x->prev ? x->value - x->prev : 0;
	uint64_t dy = y->have_prev && y->value >= y->prev ? y->value - y->prev : 0;

	/* the busiest first (kvm_stat sorts by the current rate), then the
	 * largest values, then by name */
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->first->name, y->first->name);
}

/* The row of K (type, value NOW) with PREV and BASE its earlier values
 * (NULL: none). */
static void fill(struct ks_kstat_row *r, const struct ks_kvmcol_vm *vm, const struct ks_kstat *k,
		 uint64_t now, bool is_bool, const uint64_t *prev, const uint64_t *base)
{
	bool counter = k->type == KS_KSTAT_CUMULATIVE || k->type == KS_KSTAT_HIST;

	r->name = k->name;
	r->is_bool = is_bool;
	r->value = now;
	if (counter && !is_bool && base && *base <= now)
		r->value = now - *base;
	if (counter && prev && *prev <= now && vm->t_now > vm->t_prev) {
		r->have_rate = true;
		r->rate = (double)(now - *prev) / (vm->t_now - vm->t_prev);
	}
}

/* The row of one entry K of VM->now. */
static void fill_entry(struct ks_kstat_row *r, const struct ks_kvmcol_vm *vm,
		       const struct ks_kstat *k, int depth)
{
	const struct ks_kstat *p = vm->have_prev ? ks_kstats_find(&vm->prev, k->name, k->vcpu) : NULL;
	const struct ks_kstat *b = vm->have_base ? ks_kstats_find(&vm->base, k->name, k->vcpu) : NULL;

	fill(r, vm, k, k->value, k->is_bool, p ? &p->value : NULL, b ? &b->value : NULL);
	r->depth = depth;
	r->vcpu = depth == 2 ? k->vcpu : -1;
}

/* The lines of VM: *N of LINES (as many as VM->now has entries). */
static size_t collect(const struct ks_kvmcol_vm *vm, bool (*wanted)(void *, const char *), void *ctx,
		      bool skip_zero, struct line *lines)
{
	size_t j, n = 0;

	for (j = 0; j < vm->now.n; j++) {
		const struct ks_kstat *k = &vm->now.v[j], *p, *o;
		struct line *l = &lines[n];

		if (wanted && !wanted(ctx, k->name))
			continue;
		/* debugfs: the VM directory has the vCPU sums itself */
		if (k->vcpu >= 0 && ks_kstats_find(&vm->now, k->name, -1))
			continue;
		if (k->vcpu >= 0 && ks_kstats_first_vcpu(&vm->now, k->name) != k)
			continue; /* a vCPU statistic once, at its first vCPU */
		memset(l, 0, sizeof(*l));
		l->first = k;
		l->per_vcpu = k->vcpu >= 0;
		for (o = k; o; o = ks_kstats_next_vcpu(&vm->now, o)) {
			l->value += o->value;
			p = vm->have_prev ? ks_kstats_find(&vm->prev, o->name, o->vcpu) : NULL;
			if (p) {
				l->prev += p->value;
				l->have_prev = true;
			}
			l->moved |= !p || p->value != o->value;
			if (!l->per_vcpu)
				break;
		}
		if (skip_zero && !l->moved && (l->have_prev || !l->value))
			continue;
		n++;
	}
	return n;
}

int ks_kvmcol_rows(const struct ks_kvmcol_vm *vm, bool (*wanted)(void *ctx, const char *name),
		   void *ctx, bool skip_zero, bool vcpus, struct ks_kstat_row **out, size_t *n)
{
	struct line *lines = calloc(vm->now.n + 1, sizeof(*lines));
	struct ks_kstat_row *rows = calloc(vm->now.n * 2 + 1, sizeof(*rows));
	size_t nl, i, nr = 0;

	*out = NULL;
	*n = 0;
	if (!lines || !rows) {
		free(lines);
		free(rows);
		return -1;
	}
	nl = collect(vm, wanted, ctx, skip_zero, lines);
	qsort(lines, nl, sizeof(*lines), line_cmp);
	for (i = 0; i < nl; i++) {
		const struct line *l = &lines[i];
		const struct ks_kstat *o, *b;
		uint64_t base = 0;

		if (!l->per_vcpu) {
			fill_entry(&rows[nr++], vm, l->first, 1);
			continue;
		}
		/* the sum: of a boolean, the number of vCPUs with it set */
		for (o = l->first; vm->have_base && o; o = ks_kstats_next_vcpu(&vm->now, o))
			if ((b = ks_kstats_find(&vm->base, o->name, o->vcpu)))
				base += b->value;
		fill(&rows[nr], vm, l->first, l->value, false, l->have_prev ? &l->prev : NULL,
		     vm->have_base ? &base : NULL);
		rows[nr].depth = 1;
		rows[nr++].vcpu = -1;
		for (o = l->first; vcpus && o; o = ks_kstats_next_vcpu(&vm->now, o))
			fill_entry(&rows[nr++], vm, o, 2);
	}
	free(lines);
	*out = rows;
	*n = nr;
	return 0;
}
