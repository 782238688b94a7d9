/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * census.c - what a KVM recording holds.  See include/kvmscope/census.h.
 *
 * The architecture's own tables (src/arch) say which events are KVM's,
 * which begin each class and which fields carry the vCPU, so this knows no
 * architecture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "kvmscope/census.h"
#include "kvmscope/field.h"
#include "kvmscope/record.h"
#include "kvmscope/source.h"

static void add_id(int32_t *ids, int *n, int32_t id)
{
	int lo = 0, hi = *n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ids[mid] == id)
			return;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*n >= KS_CENSUS_MAX_IDS)
		return;
	memmove(ids + lo + 1, ids + lo, (size_t)(*n - lo) * sizeof(*ids));
	ids[lo] = id;
	(*n)++;
}

/* The value of the field NAME of REC; false when it has none.  (A census
 * runs once, on an empty answer: looking fields up by name is fine.) */
static bool field_value(const struct ks_record *rec, const char *name, uint64_t *v)
{
	struct ks_field f;
	bool ok = false;

	if (!name || ks_field_resolve(&f, rec->event, name) < 0)
		return false;
	*v = ks_field_read(&f, rec->data, rec->size, &ok);
	return ok;
}

static bool matches(const struct ks_match *m, const struct ks_record *rec)
{
	uint64_t v;

	if (!m->name || strcmp(m->name, rec->event->name) || strcmp(m->system, rec->event->system))
		return false;
	return !m->cond_field || (field_value(rec, m->cond_field, &v) && v == m->cond_value);
}

static void note_vcpu(struct ks_census *c, const struct ks_record *rec, const char *field)
{
	uint64_t v;

	if (field_value(rec, field, &v))
		add_id(c->vcpus, &c->nvcpus, (int32_t)v);
}

/* Whether SYSTEM is one of the architecture's KVM event systems (its entry
 * event's, or one of its classes' begin, end and child events'): "kvm",
 * "kvm_hv", ... as the table says, for any architecture. */
static bool kvm_system(const struct ks_arch *a, const char *system)
{
	const struct ks_event_class *cls;
	int j;

	if (a->entry_system && !strcmp(a->entry_system, system))
		return true;
	for (cls = a->classes; cls->name; cls++) {
		for (j = 0; j < KS_MAX_MATCH; j++)
			if ((cls->begin[j].system && !strcmp(cls->begin[j].system, system)) ||
			    (cls->end[j].system && !strcmp(cls->end[j].system, system)))
				return true;
		for (j = 0; j < KS_MAX_CHILD; j++)
			if (cls->child[j].system && !strcmp(cls->child[j].system, system))
				return true;
	}
	return false;
}

static void count(struct ks_census *c, const struct ks_arch *a, const struct ks_record *rec)
{
	const struct ks_event_class *cls;
	int i, j;

	if (rec->type != KS_REC_EVENT || !rec->event || !rec->data)
		return;
	c->events++;
	if (!kvm_system(a, rec->event->system))
		return;
	c->kvm_events++;
	if (!strcmp(rec->event->name, a->entry_name) && !strcmp(rec->event->system, a->entry_system))
		note_vcpu(c, rec, a->entry_vcpu_field);
	for (i = 0, cls = a->classes; cls->name && i < c->nclasses; cls++, i++)
		for (j = 0; j < KS_MAX_MATCH; j++)
			/* keyed begins only: x86 mmio's unkeyed kvm_exit only
			 * closes what another exit left open */
			if (cls->begin[j].key_field && matches(&cls->begin[j], rec)) {
				c->classes[i].begins++;
				if (i == 0)
					note_vcpu(c, rec, a->exit_vcpu_field);
				break;
			}
}

int ks_census(struct ks_source *src, const char *arch, struct ks_census *c, struct ks_error *err)
{
	const struct ks_source_info *info = ks_source_info(src);
	const struct ks_event_class *cls;
	const struct ks_arch *a;
	struct ks_record recs[64];
	int n, i;

	memset(c, 0, sizeof(*c));
	c->detected_arch = ks_arch_detect(ks_source_tep(src)) ?
			   ks_arch_detect(ks_source_tep(src))->name : NULL;
	/* an unknown --arch is the engine's error to report: the census
	 * counts for the input's own architecture then */
	a = ks_arch_resolve(arch, info->arch, info->cpuid, info->arch_from_events,
			    ks_source_tep(src), NULL);
	if (!a)
		a = ks_arch_resolve(NULL, info->arch, info->cpuid, info->arch_from_events,
				    ks_source_tep(src), NULL);
	c->arch = a->name;
	c->kvm_defined = a->entry_system && a->entry_name &&
			 ks_source_event(src, a->entry_system, a->entry_name);
	for (cls = a->classes; cls->name && c->nclasses < KS_CENSUS_MAX_CLASSES; cls++)
		c->classes[c->nclasses++].name = cls->name;
	while ((n = ks_source_next_batch(src, recs, 64, err)) > 0)
		for (i = 0; i < n; i++)
			count(c, a, &recs[i]);
	return n < 0 ? -1 : 0;
}

void ks_census_classes(const struct ks_census *c, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < c->nclasses && used < len; i++)
		if (c->classes[i].begins)
			used += (size_t)snprintf(buf + used, len - used, "%s%s (%llu)",
						 used ? ", " : "", c->classes[i].name,
						 (unsigned long long)c->classes[i].begins);
}

void ks_census_ids(const int32_t *ids, int n, char *buf, size_t len)
{
	size_t used = 0;
	int i = 0;

	buf[0] = 0;
	while (i < n && used < len) {
		int j = i;

		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		if (j > i)
			used += (size_t)snprintf(buf + used, len - used, "%s%d-%d", used ? ", " : "",
						 ids[i], ids[j]);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? ", " : "",
						 ids[i]);
		i = j + 1;
	}
}
