/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_kvm.c - plans of the kvm plugin's kvm_entry and kvm_exit: the
 * handler's text, confirmed by the handler itself (see
 * ks_plan_compile_kvm()).
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "arch/arch.h"
#include "print_plan_impl.h"

/* A number field the kvm plugin reads with tep_get_field_val(). */
static struct tep_format_field *num_field(struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	return f && int_size(f->size) && f->offset >= 0 ? f : NULL;
}

/*
 * libtraceevent's kvm plugin prints kvm_entry as " vcpu %u rip 0x%llx" and
 * kvm_exit as "reason NAME rip 0x%llx[ info %llx %llx]", NAME from its
 * tables by (isa, exit_reason) (a function name after the rip only when the
 * application provides one: kvmscope does not).  The plan takes that shape
 * but trusts it only as far as the handler confirms it: the first kvm_entry,
 * and the first kvm_exit of every (isa, exit_reason), are printed by the
 * handler (ks_plan_run says 1) and handed back to ks_plan_learn(), which
 * keeps NAME, or drops the plan for good if the text is not what the plan
 * would have written.
 */
struct ks_plan *ks_plan_compile_kvm(struct tep_event *ev)
{
	const struct ks_arch *a = ks_arch_tep_kvm_plugin(); /* its events, from the tables */
	const struct ks_match *x = a ? &a->classes[0].begin[0] : NULL;
	struct ks_plan *p;
	struct kvm_plan *k;

	if (!x || !ev->system || strcmp(ev->system, x->system) ||
	    (strcmp(ev->name, x->name) && strcmp(ev->name, a->entry_name)))
		return NULL;
	p = ks_plan_new(ev->tep);
	k = calloc(1, sizeof(*k));
	if (!p || !k) {
		free(p);
		free(k);
		return NULL;
	}
	p->kvm = k;
	k->exit = !strcmp(ev->name, x->name);
	k->rip = num_field(ev, k->exit ? a->guest_ip_field : "rip");
	if (k->exit) {
		k->reason = num_field(ev, x->key_field);
		k->isa = num_field(ev, a->isa_field);
		k->info1 = num_field(ev, "info1");
		k->info2 = num_field(ev, "info2");
		if (!k->info1 || !k->info2)
			k->info1 = k->info2 = NULL;
		if (tep_find_field(ev, a->isa_field) && !k->isa)
			k->rip = NULL; /* the plugin would fail to read it */
	} else {
		k->vcpu = num_field(ev, a->entry_vcpu_field);
	}
	if (!k->rip || (k->exit ? !k->reason : !k->vcpu)) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

static uint64_t num(const struct ks_plan *p, const struct tep_format_field *f, const uint8_t *data)
{
	return rd(p, data + f->offset, f->size);
}

/* The text after "reason NAME" (kvm_exit) or all of it (kvm_entry). */
static int kvm_tail(const struct ks_plan *p, const uint8_t *data, struct ks_tbuf *b)
{
	const struct kvm_plan *k = p->kvm;

	if (!k->exit && (ks_tbuf_put(b, " vcpu ", 6) < 0 ||
			 ks_tbuf_int(b, (uint32_t)num(p, k->vcpu, data), 0, 10, 0, 0, 0, 0) < 0))
		return -1;
	if (ks_tbuf_put(b, " rip 0x", 7) < 0 || ks_tbuf_int(b, num(p, k->rip, data), 0, 16, 0, 0, 0, 0) < 0)
		return -1;
	if (k->info1 && (ks_tbuf_put(b, " info ", 6) < 0 ||
			 ks_tbuf_int(b, num(p, k->info1, data), 0, 16, 0, 0, 0, 0) < 0 ||
			 ks_tbuf_put(b, " ", 1) < 0 ||
			 ks_tbuf_int(b, num(p, k->info2, data), 0, 16, 0, 0, 0, 0) < 0))
		return -1;
	return 0;
}

static bool kvm_inside(const struct kvm_plan *k, int size)
{
	const struct tep_format_field *f[] = { k->vcpu, k->rip, k->reason, k->isa, k->info1, k->info2 };
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] && !inside(f[i], size))
			return false;
	return true;
}

static void kvm_key(const struct ks_plan *p, const uint8_t *data, uint64_t *isa, uint64_t *val)
{
	*isa = p->kvm->isa ? num(p, p->kvm->isa, data) : 1;
	*val = num(p, p->kvm->reason, data);
}

int ks_plan_run_kvm(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	const struct kvm_plan *k = p->kvm;
	size_t start = b->len;
	uint64_t isa, val;
	int i;

	if (k->state < 0 || !kvm_inside(k, size))
		return -1;
	if (!k->exit) {
		if (k->state == 0)
			return 1;
	} else {
		kvm_key(p, data, &isa, &val);
		for (i = 0; i < k->nr_reasons; i++)
			if (k->reasons[i].isa == isa && k->reasons[i].val == val)
				break;
		if (i == k->nr_reasons)
			return k->nr_reasons < KVM_REASONS ? 1 : -1;
		if (ks_tbuf_put(b, "reason ", 7) < 0 ||
		    ks_tbuf_put(b, k->reasons[i].text, strlen(k->reasons[i].text)) < 0) {
			b->len = start;
			return -1;
		}
	}
	if (kvm_tail(p, data, b) < 0) {
		b->len = start;
		return -1;
	}
	return 0;
}
/* kvm_entry's text must be the plan's; kvm_exit's is "reason " NAME and
 * the plan's tail: NAME is kept for its (isa, exit_reason).  Any other
 * text leaves the event to the handler for good. */
void ks_plan_learn_kvm(struct ks_plan *p, const uint8_t *data, int size, const char *text,
		       size_t len)
{
	struct kvm_plan *k = p->kvm;
	struct ks_tbuf tail = { 0 };
	size_t n;
	uint64_t isa, val;

	if (!k || k->state < 0 || !kvm_inside(k, size))
		return;
	if (kvm_tail(p, data, &tail) < 0) {
		free(tail.p);
		return;
	}
	if (!k->exit) {
		k->state = tail.len == len && !memcmp(tail.p, text, len) ? 1 : -1;
		free(tail.p);
		return;
	}
	/* "reason " NAME TAIL, NAME without the tail's " rip 0x" */
	if (len < 7 + tail.len || memcmp(text, "reason ", 7) ||
	    memcmp(text + len - tail.len, tail.p, tail.len) ||
	    (n = len - 7 - tail.len) == 0 || memmem(text + 7, n, " rip 0x", 7) ||
	    memchr(text + 7, '\0', n) || k->nr_reasons >= KVM_REASONS) {
		k->state = -1;
		free(tail.p);
		return;
	}
	free(tail.p);
	kvm_key(p, data, &isa, &val);
	if (!(k->reasons[k->nr_reasons].text = strndup(text + 7, n)))
		return;
	k->reasons[k->nr_reasons].isa = isa;
	k->reasons[k->nr_reasons++].val = val;
	k->state = 1;
}
