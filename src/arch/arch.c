/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch.c - the list of architectures and how one is chosen for an input.
 *
 * The choice, most trusted first: the input's perf ARCH feature or trace.dat
 * UNAME machine ("aarch64", "s390x"...), its perf CPUID string ("IBM,..." is
 * s390, "GenuineIntel,..." x86), then the KVM events present in its formats
 * (kvm_hv:* is powerpc, kvm_exit with esr_ec arm64...).  See ks_arch_for()
 * and ks_arch_detect(); every engine asks ks_arch_resolve(), which says
 * which one answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch.h"

const char *ks_code_lookup(const struct ks_code_name *table, size_t n, uint64_t code)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (table[i].code == code)
			return table[i].name;
	return NULL;
}

static bool machine_matches(const struct ks_arch *a, const char *arch)
{
	const char *const *m;

	for (m = a->machines; m && *m; m++)
		if (!strncmp(arch, *m, strlen(*m)))
			return true;
	return false;
}

const struct ks_arch *ks_arch_for(const char *arch, const char *cpuid)
{
	int i;

	for (i = 0; arch && *arch && ks_arches[i]; i++)
		if (machine_matches(ks_arches[i], arch))
			return ks_arches[i];
	for (i = 0; cpuid && *cpuid && ks_arches[i]; i++)
		for (const char *const *w = ks_arches[i]->cpuid_words; w && *w; w++)
			if (strstr(cpuid, *w))
				return ks_arches[i];
	return NULL;
}

const struct ks_arch *ks_arch_detect(struct tep_handle *tep)
{
	int i;

	if (!tep)
		return NULL;
	for (i = 0; ks_arches[i]; i++)
		if (ks_arches[i]->detect && ks_arches[i]->detect(tep))
			return ks_arches[i];
	return NULL;
}

const struct ks_arch *ks_arch_resolve(const char *name, const char *machine, const char *cpuid,
				      bool machine_from_events, struct tep_handle *tep,
				      const char **why)
{
	const struct ks_arch *a;
	const char *said = "option";

	if (name)
		a = ks_arch_by_name(name);
	else if ((a = ks_arch_for(machine, cpuid)))
		said = machine_from_events ? "events" : "header";
	else if ((a = ks_arch_detect(tep)))
		said = "events";
	else {
		a = ks_arch_named_or_default(NULL);
		said = "default";
	}
	if (why)
		*why = said;
	return a;
}

const struct ks_arch *ks_arch_named_or_default(const char *name)
{
	return name && name[0] ? ks_arch_by_name(name) : ks_arches[0]; /* x86, first of the list */
}

const struct ks_arch *ks_arch_by_name(const char *name)
{
	int i;

	for (i = 0; name && ks_arches[i]; i++)
		if (!strcmp(ks_arches[i]->name, name))
			return ks_arches[i];
	return NULL;
}

const struct ks_arch *ks_arch_tep_kvm_plugin(void)
{
	for (int i = 0; ks_arches[i]; i++)
		if (ks_arches[i]->tep_kvm_plugin)
			return ks_arches[i];
	return NULL;
}

const struct ks_event_class *ks_arch_class(const struct ks_arch *arch, const char *name)
{
	const struct ks_event_class *c;

	for (c = arch->classes; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void ks_arch_class_list(const struct ks_arch *arch, char *buf, size_t len)
{
	const struct ks_event_class *c;
	size_t used = 0;

	buf[0] = '\0';
	for (c = arch->classes; c->name && used < len; c++) {
		const char *sep = c == arch->classes ? "" : (c + 1)->name ? ", " : " or ";
		size_t n = strlen(sep) + strlen(c->name);

		if (used + n + 1 > len)
			break;
		strcat(buf, sep);
		strcat(buf, c->name);
		used += n;
	}
}

bool ks_arch_names_system(const char *system)
{
	for (size_t i = 0; ks_arches[i]; i++) {
		const struct ks_arch *a = ks_arches[i];

		if ((a->entry_system && !strcmp(a->entry_system, system)) ||
		    (a->halt_system && !strcmp(a->halt_system, system)))
			return true;
		for (const struct ks_event_format *f = a->formats; f && f->name; f++)
			if (f->system && !strcmp(f->system, system))
				return true;
	}
	return false;
}

/* libtraceevent's own lookup: the readers parse the formats of every
 * system the tables name when they open an input (ks_arch_names_system),
 * so the tables need no reader to see them. */
bool ks_arch_has_event(struct tep_handle *tep, const char *system, const char *name)
{
	return tep && tep_find_event_by_name(tep, system, name) != NULL;
}

bool ks_arch_event_has_field(struct tep_handle *tep, const char *system, const char *name,
			     const char *field)
{
	struct tep_event *ev = tep ? tep_find_event_by_name(tep, system, name) : NULL;

	return ev && tep_find_field(ev, field) != NULL;
}

char *ks_event_format_body(const struct ks_event_format *format)
{
	return format->body ? strdup(format->body) : format->build ? format->build() : NULL;
}

/* ---- exits, as timeline and report see them ---- */

static bool ev_named(const struct tep_event *ev, const char *system, const char *name)
{
	return ev && system && name && !strcmp(ev->system, system) && !strcmp(ev->name, name);
}

bool ks_arch_exit_resolve(const struct ks_arch *arch, struct tep_event *ev, struct ks_arch_exit *x)
{
	const struct ks_event_class *c = arch ? arch->classes : NULL;
	const struct ks_match *m = c && c->name ? &c->begin[0] : NULL;

	if (!m || !m->name || !ev_named(ev, m->system, m->name))
		return false;
	memset(x, 0, sizeof(*x));
	x->arch = arch;
	x->cls = c;
	x->m = m;
	if (m->key_field)
		ks_field_resolve(&x->key, ev, m->key_field);
	if (m->key2_field)
		ks_field_resolve(&x->key2, ev, m->key2_field);
	if (arch->isa_field)
		ks_field_resolve(&x->isa, ev, arch->isa_field);
	if (arch->guest_ip_field)
		ks_field_resolve(&x->ip, ev, arch->guest_ip_field);
	if (arch->mode_field)
		ks_field_resolve(&x->mode, ev, arch->mode_field);
	return true;
}

uint64_t ks_arch_exit_key2(const struct ks_arch_exit *x, const void *data, uint32_t size)
{
	bool ok;

	return x->key2.present ? ks_field_read(&x->key2, data, size, &ok) : 0;
}

bool ks_arch_exit_user(const struct ks_arch_exit *x, const void *data, uint32_t size, uint64_t ip)
{
	bool ok;

	if (!x->mode.present)
		return !(ip >> 63);
	return (ks_field_read(&x->mode, data, size, &ok) & x->arch->mode_user_mask) ==
	       x->arch->mode_user_value;
}

bool ks_arch_exit_code(const struct ks_arch *arch, const char *name, int32_t *sel,
		       uint64_t *code)
{
	const struct ks_event_class *c = arch ? arch->classes : NULL;
	size_t i;

	if (!arch)
		return false;
	if (arch->exit_code)
		return arch->exit_code(name, sel, code);
	for (i = 0; c && c->name && i < c->nnames; i++)
		if (!strcmp(c->names[i].name, name)) {
			*sel = c->begin[0].table;
			*code = c->names[i].code;
			return true;
		}
	return false;
}

uint64_t ks_arch_report_reason(const struct ks_arch_exit *x, const void *data, uint32_t size,
			       int default_isa, int32_t *sel, struct ks_key_ctx *ctx)
{
	uint64_t key = ks_arch_exit_key(x, data, size, default_isa, ctx, NULL);

	if (x->arch->report.by_key2) {
		*sel = 0;
		return ks_arch_exit_key2(x, data, size) & 0xffffffffull;
	}
	if (x->arch->isa_field) {
		*sel = ctx->isa;
		return ctx->isa == KS_ISA_VMX ? key & 0xffff : key;
	}
	*sel = ctx->table;
	return key;
}

void ks_arch_report_reason_name(const struct ks_arch *arch, int32_t sel, uint64_t code, char *buf,
				size_t len)
{
	const struct ks_event_class *c = arch->classes;
	struct ks_key_ctx ctx = { .isa = sel, .table = sel };

	if (arch->report.by_key2) {
		snprintf(buf, len, arch->report.key2_format, (unsigned long long)code);
		return;
	}
	if (c->key_known && !c->key_known(&ctx, code)) {
		snprintf(buf, len, "UNKNOWN(0x%llx)", (unsigned long long)code);
		return;
	}
	c->key_name(&ctx, code, 0, false, buf, len);
}

uint64_t ks_arch_exit_key(const struct ks_arch_exit *x, const void *data, uint32_t size,
			  int default_isa, struct ks_key_ctx *ctx, uint64_t *ip)
{
	bool ok;
	uint64_t key = ks_rule_key(x->m, x->cls->compose, &x->key, &x->key2, data, size,
				   &ctx->table);

	ctx->isa = x->isa.present ? (int)ks_field_read(&x->isa, data, size, &ok) : default_isa;
	if (ip)
		*ip = x->ip.present ? ks_field_read(&x->ip, data, size, &ok) : 0;
	return key;
}

void ks_arch_exit_name(const struct ks_arch_exit *x, const struct ks_key_ctx *ctx, uint64_t key,
		       char *buf, size_t len)
{
	x->cls->key_name(ctx, key, 0, false, buf, len);
}

bool ks_arch_exit_halts(const struct ks_arch *arch, const struct ks_key_ctx *ctx, uint64_t key)
{
	return arch && arch->exit_halts && arch->exit_halts(ctx, key);
}

bool ks_arch_exit_periodic(const struct ks_arch *arch, const struct ks_key_ctx *ctx, uint64_t key)
{
	return arch && arch->exit_periodic && arch->exit_periodic(ctx, key);
}

bool ks_arch_is_entry(const struct ks_arch *arch, const struct tep_event *ev)
{
	return arch && (ev_named(ev, arch->entry_system, arch->entry_name) ||
			ev_named(ev, arch->entry_system, arch->entry2_name));
}

bool ks_arch_is_halt_event(const struct ks_arch *arch, const struct tep_event *ev)
{
	return arch && ev_named(ev, arch->halt_system, arch->halt_name);
}

void ks_arch_name_list(char *buf, size_t len)
{
	size_t used = 0;
	int i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; ks_arches[i]; i++) {
		const char *sep = !i ? "" : ks_arches[i + 1] ? ", " : " or ";
		int n = snprintf(buf + used, len - used, "%s%s", sep, ks_arches[i]->name);

		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

void ks_arch_event_help(char *buf, size_t len)
{
	const struct ks_event_class *c;
	size_t used;
	int i;

	snprintf(buf, len, "vmexit (default)");
	used = strlen(buf);
	for (i = 0; ks_arches[i]; i++) {
		const char *lead = "; ";
		int n;

		for (c = ks_arches[i]->classes; c && c->name; c++) {
			if (c == ks_arches[i]->classes)
				continue; /* vmexit, every architecture's */
			n = snprintf(buf + used, len - used, "%s%s%s", lead,
				     *lead == ';' ? ks_arches[i]->name : "", *lead == ';' ? ": " : "");
			if (n < 0 || (size_t)n >= len - used)
				return;
			used += (size_t)n;
			n = snprintf(buf + used, len - used, "%s", c->name);
			if (n < 0 || (size_t)n >= len - used)
				return;
			used += (size_t)n;
			lead = ", ";
		}
	}
}
