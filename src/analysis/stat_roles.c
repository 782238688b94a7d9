/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stat_roles.c - what each tracepoint means to the stat engine: its role
 * (entry, begin, end or child of the chosen class, vcpu_load/put, a
 * detail of another class), the fields it is read by, and the short path
 * (lane) its records may take.  A role is made on the first record of its
 * event and never moves; stat.c caches it by the event's id.
 */
#include <stdlib.h>
#include <string.h>

#include "stat_impl.h"

static bool match_event(const struct ks_match *m, const struct tep_event *ev)
{
	return m->name && !strcmp(m->name, ev->name) && !strcmp(m->system, ev->system);
}

/* Whether the input has the class's preferred event (decided once). */
static void decide_variant(struct ks_stat *st, struct tep_event *ev)
{
	if (st->variant >= 0)
		return;
	st->variant = 0;
	if (st->cls->preferred_name &&
	    !ks_tep_event(ev->tep, st->cls->preferred_system, st->cls->preferred_name))
		st->variant = 1;
}

static int find_rule(const struct ks_stat *st, const struct ks_match *rules, int max,
		     const struct tep_event *ev)
{
	int i;

	for (i = 0; i < max && rules[i].name; i++) {
		if (rules[i].fallback && st->variant == 0)
			continue;
		if (match_event(&rules[i], ev))
			return i;
	}
	return -1;
}

static void resolve_rule(const struct ks_match *m, struct tep_event *ev, struct rule_fields *f)
{
	if (m->cond_field)
		ks_field_resolve(&f->cond, ev, m->cond_field);
	if (m->key_field)
		ks_field_resolve(&f->key, ev, m->key_field);
	if (m->key2_field)
		ks_field_resolve(&f->key2, ev, m->key2_field);
	if (m->info_field)
		ks_field_resolve(&f->info, ev, m->info_field);
}

static bool is_named(const struct tep_event *ev, const char *system, const char *name)
{
	return name && system && !strcmp(ev->name, name) && !strcmp(ev->system, system);
}

static void init_entry_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	const struct ks_arch *a = st->arch;
	const char *vf = st->cfg.perf_compat ? a->perf.vcpu_field : a->entry_vcpu_field;

	r->is_entry = is_named(ev, a->entry_system, a->entry_name) ||
		      (!st->cfg.perf_compat && is_named(ev, a->entry_system, a->entry2_name));
	if (r->is_entry && vf)
		ks_field_resolve(&r->entry_vcpu, ev, vf);
	r->is_load = is_named(ev, "kvm", "vcpu_load") || is_named(ev, "kvm", "kvm_vcpu_load");
	r->is_put = is_named(ev, "kvm", "vcpu_put") || is_named(ev, "kvm", "kvm_vcpu_put");
	if (r->is_load && ks_field_resolve(&r->load_vcpu, ev, "vcpu_id") < 0)
		ks_field_resolve(&r->load_vcpu, ev, "id");
}

/* Whether A and B read the same bytes the same way (both present). */
static bool same_field(const struct ks_field *a, const struct ks_field *b)
{
	return a->present && b->present && a->offset == b->offset && a->size == b->size &&
	       a->is_signed == b->is_signed && a->swap == b->swap;
}

/* Whether F reads 4 bytes unsigned, in host order (stat.c's lane_read). */
static bool plain_u32(const struct ks_field *f)
{
	return f->present && f->offset >= 0 && f->size == 4 && !f->is_signed && !f->swap;
}

/* The short path of role R (enum LANE_*, stat_impl.h). */
static int lane_of(const struct ks_stat *st, const struct event_role *r)
{
	bool counted = r->count >= 0 && !st->cfg.no_begin_counts;

	if (r->child >= 0 || r->is_load || r->is_put || st->cfg.npids || st->cfg.vcpu >= 0 ||
	    st->compose)
		return LANE_NONE;
	/* a counted begin (count_begin) must be as plain as the lane's, and
	 * keyed by the same field, which the lane then reads once */
	if (counted && (r->begin < 0 || st->cls->begin[r->count].cond_field || r->nf.info.present ||
			!same_field(&r->nf.key, &r->bf.key)))
		return LANE_NONE;
	if (r->begin >= 0 && r->end < 0 && !r->is_entry && !st->begin_rules[r->begin].cond_field &&
	    r->bf.key.present && !r->bf.info.present)
		return LANE_BEGIN;
	if (r->end >= 0 && r->begin < 0 && !st->end_rules[r->end].cond_field &&
	    !r->ef.key.present && !r->ef.info.present)
		return LANE_END;
	return LANE_NONE;
}

/* The other classes' keyed events (cfg.observe): the first rule of a class
 * other than the one counted that names EV and a key field, and plays no
 * part in the counted class. */
static void find_detail(const struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	const struct ks_event_class *c;
	int i, side;

	for (c = st->arch->classes; c && c->name; c++) {
		if (c == st->cls)
			continue;
		for (side = 0; side < 2; side++)
			for (i = 0; i < KS_MAX_MATCH; i++) {
				const struct ks_match *m = side ? &c->end[i] : &c->begin[i];

				if (!m->name || !m->key_field || !match_event(m, ev) ||
				    ks_field_resolve(&r->detail_key, ev, m->key_field) < 0)
					continue;
				if (m->info_field)
					ks_field_resolve(&r->detail_info, ev, m->info_field);
				r->detail = c;
				return;
			}
	}
}

static void init_observe_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	if ((r->begin >= 0 || r->end >= 0) && st->arch->guest_ip_field)
		ks_field_resolve(&r->ip, ev, st->arch->guest_ip_field);
	if (r->begin < 0 && r->end < 0 && r->child < 0 && !r->is_entry)
		find_detail(st, r, ev);
	if (r->detail && !r->active)
		r->active = r->only_detail = true;
}

static void init_role(struct ks_stat *st, struct event_role *r, struct tep_event *ev)
{
	memset(r, 0, sizeof(*r));
	r->event = ev;
	decide_variant(st, ev);
	init_entry_role(st, r, ev);
	r->begin = find_rule(st, st->begin_rules, KS_MAX_MATCH, ev);
	r->end = find_rule(st, st->end_rules, KS_MAX_MATCH, ev);
	r->child = st->run ? -1 : find_rule(st, st->cls->child, KS_MAX_CHILD, ev);
	r->count = find_rule(st, st->cls->begin, KS_MAX_MATCH, ev);
	if (r->begin >= 0)
		resolve_rule(&st->begin_rules[r->begin], ev, &r->bf);
	if (r->end >= 0)
		resolve_rule(&st->end_rules[r->end], ev, &r->ef);
	if (r->child >= 0)
		resolve_rule(&st->cls->child[r->child], ev, &r->cf);
	if (r->count >= 0)
		resolve_rule(&st->cls->begin[r->count], ev, &r->nf);
	if ((r->begin >= 0 || r->end >= 0) && st->arch->exit_vcpu_field)
		ks_field_resolve(&r->exit_vcpu, ev, st->arch->exit_vcpu_field);
	/* the exit's name table selector (x86 kvm_exit isa), per the arch */
	if (st->arch->isa_field && (r->begin >= 0 || r->end >= 0 || r->count >= 0))
		ks_field_resolve(&r->isa, ev, st->arch->isa_field);
	r->active = r->is_entry || r->is_load || r->is_put || r->begin >= 0 || r->end >= 0 ||
		    r->child >= 0 || r->count >= 0;
	r->lane = lane_of(st, r);
	r->key_u32 = plain_u32(&r->bf.key);
	r->exit_vcpu_u32 = plain_u32(&r->exit_vcpu);
	r->entry_vcpu_u32 = plain_u32(&r->entry_vcpu);
	r->entry_vcpu_own = r->is_entry && r->entry_vcpu.present &&
			    !same_field(&r->entry_vcpu, &r->exit_vcpu);
	if (r->lane == LANE_BEGIN) {
		r->lane_table = st->begin_rules[r->begin].table;
		r->lane_count = r->count >= 0 && !st->cfg.no_begin_counts;
		r->count_table = r->lane_count ? st->cls->begin[r->count].table : 0;
		r->lane_by_key = !r->lane_table || st->cfg.perf_compat;
	} else if (r->lane == LANE_END) {
		r->lane_table = st->end_rules[r->end].table;
	}
	if (st->cfg.observe)
		init_observe_role(st, r, ev);
}

struct event_role *stat_role_lookup(struct ks_stat *st, struct tep_event *ev)
{
	struct event_role **v;
	bool created;

	v = ks_hmap_put(&st->roles, (uintptr_t)ev, &created);
	if (v && !created)
		return *v;
	if (v) {
		*v = malloc(sizeof(**v));
		if (*v) {
			init_role(st, *v, ev);
			return *v;
		}
		ks_hmap_del(&st->roles, (uintptr_t)ev);
	}
	/* an inactive role (not cached: its event is NULL) ignores the event */
	stat_fail(st, NULL, "%s", "out of memory");
	return &st->spare_role;
}
