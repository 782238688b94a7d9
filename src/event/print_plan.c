/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan.c - print formats compiled into steps (see print_plan.h): a
 * plan's life.
 *
 * ks_plan_compile() picks the kind of plan an event gets: the text of its
 * plugin's handler (kvm: print_plan_kvm.c; sched, hrtimer, tlb, kmem:
 * print_plan_plugins.c), its print format compiled into steps
 * (print_plan_compile.c), or the fields of a format that failed to parse.
 * ks_plan_run() (print_plan_run.c) writes a record's text; what the plan
 * cannot know yet it learns here from the library's own text
 * (ks_plan_learn); ks_plan_scan() (print_plan_scan.c) reads it back.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "print_plan_impl.h"

struct ks_plan *ks_plan_new(struct tep_handle *tep)
{
	struct ks_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tep = tep;
	p->printk_step = -1;
	p->swap = tep_is_file_bigendian(tep) != tep_is_local_bigendian(tep);
	return p;
}

void ks_plan_expr_free(struct expr *e)
{
	if (!e)
		return;
	ks_plan_expr_free(e->a);
	ks_plan_expr_free(e->b);
	ks_plan_expr_free(e->c);
	free(e);
}

static void free_step(struct step *s)
{
	if (!s)
		return;
	free(s->lit);
	free(s->syms);
	free(s->fmt);
	ks_plan_expr_free(s->ex);
	free_step(s->yes);
	free(s->yes);
	free_step(s->no);
	free(s->no);
}

void ks_plan_free(struct ks_plan *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		free_step(&p->steps[i]);
	if (p->kvm)
		for (i = 0; i < p->kvm->nr_reasons; i++)
			free(p->kvm->reasons[i].text);
	for (i = 0; i < p->nr_printk; i++)
		free(p->printk[i].text);
	free(p->kvm);
	free(p->steps);
	free(p);
}

struct ks_plan *ks_plan_compile(struct tep_event *ev)
{
	struct ks_plan *p;

	if (!ev || !ev->tep)
		return NULL;
	if (ev->handler && !(ev->flags & TEP_EVENT_FL_NOHANDLE)) {
		if (ev->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW))
			return NULL;
		return (p = ks_plan_compile_kvm(ev)) ? p : ks_plan_compile_handler(ev);
	}
	if (!(p = ks_plan_new(ev->tep)))
		return NULL;
	if ((ev->flags & TEP_EVENT_FL_FAILED) && !(ev->flags & TEP_EVENT_FL_PRINTRAW) ?
	    ks_plan_compile_failed(p, ev) < 0 : ks_plan_compile_steps(p, ev) < 0) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

bool ks_plan_scannable(const struct ks_plan *p)
{
	return p && !p->extended;
}

/* The printk string at the address in the record, learnt from TEXT (what
 * the library printed): the steps around it must print what it starts and
 * ends with. */
static void learn_printk(struct ks_plan *p, const uint8_t *data, int size, const char *text,
			 size_t len)
{
	struct ks_tbuf pre = { 0 }, post = { 0 };
	const struct step *s = &p->steps[p->printk_step];
	uint64_t addr;
	int i, r = 0;

	if (!inside(s->field, size) || p->nr_printk >= PRINTK_CACHE)
		return;
	memcpy(&addr, data + s->field->offset, 8);
	for (i = 0; i < p->nr_printk; i++)
		if (p->printk[i].addr == addr)
			return;
	for (i = 0; i < p->nr && r == 0; i++)
		if (i != p->printk_step)
			r = ks_plan_run_step(p, &p->steps[i], data, size, i < p->printk_step ? &pre : &post);
	if (r != 0) {
		/* the plan cannot print this record anyway */
	} else if (pre.len + post.len <= len && (!pre.len || !memcmp(text, pre.p, pre.len)) &&
	    (!post.len || !memcmp(text + len - post.len, post.p, post.len)) &&
	    !memchr(text + pre.len, '\0', len - pre.len - post.len) &&
	    (p->printk[p->nr_printk].text = strndup(text + pre.len, len - pre.len - post.len))) {
		p->printk[p->nr_printk].addr = addr;
		p->printk[p->nr_printk++].len = len - pre.len - post.len;
	} else {
		p->state = -1; /* not what the plan would print: the library's for good */
	}
	free(pre.p);
	free(post.p);
}

void ks_plan_learn(struct ks_plan *p, const uint8_t *data, int size, const char *text, size_t len)
{
	/* what the plan waits for: a handler's first text, a printk
	 * string, or the name of a kvm_exit reason */
	if (p->handler) {
		ks_plan_learn_handler(p, data, size, text, len);
	} else if (p->printk_step >= 0) {
		if (p->state >= 0)
			learn_printk(p, data, size, text, len);
	} else if (p->kvm) {
		ks_plan_learn_kvm(p, data, size, text, len);
	}
}
