/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan_plugins.c - plans of the plugin handlers kvmscope's
 * recordings meet most, besides kvm's (print_plan_kvm.c): sched_switch,
 * sched_wakeup[_new], hrtimer_start, hrtimer_expire_entry, tlb_flush and
 * the kmem events' call site prefix, written as the plugins write them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "print_plan_impl.h"

/* A field the plugins read with tep_read_number_field(): NULL if EV has
 * none named NAME (ANY: tep_find_any_field), *BAD if it has one that
 * cannot be read so. */
static struct tep_format_field *hfield(struct tep_event *ev, const char *name, bool any, bool *bad)
{
	struct tep_format_field *f = any ? tep_find_any_field(ev, name) : tep_find_field(ev, name);

	if (f && (f->offset < 0 || !int_size(f->size))) {
		*bad = true;
		return NULL;
	}
	return f;
}

/* A comm field the sched_switch plugin prints with "%.*s". */
static struct tep_format_field *comm_field(struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_any_field(ev, name);

	return f && f->offset >= 0 && f->size > 0 && f->size <= 64 ? f : NULL;
}

/* The plugin handler of EV whose text the plans write, else H_NONE. */
static enum handler_kind handler_of(const struct tep_event *ev)
{
	static const struct {
		const char *system, *name;
		enum handler_kind kind;
	} known[] = {
		{ "sched", "sched_switch", H_SCHED_SWITCH },
		{ "sched", "sched_wakeup", H_SCHED_WAKEUP },
		{ "sched", "sched_wakeup_new", H_SCHED_WAKEUP },
		{ "timer", "hrtimer_start", H_HRTIMER_START },
		{ "timer", "hrtimer_expire_entry", H_HRTIMER_EXPIRE },
		{ "tlb", "tlb_flush", H_TLB_FLUSH },
		{ "kmem", "kfree", H_KMEM },
		{ "kmem", "kmalloc", H_KMEM },
		{ "kmem", "kmalloc_node", H_KMEM },
		{ "kmem", "kmem_cache_alloc", H_KMEM },
		{ "kmem", "kmem_cache_alloc_node", H_KMEM },
		{ "kmem", "kmem_cache_free", H_KMEM },
	};
	size_t i;

	if (!ev->system || !ev->name)
		return H_NONE;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(ev->system, known[i].system) && !strcmp(ev->name, known[i].name))
			return known[i].kind;
	return H_NONE;
}

/* The fields P's handler reads, into P->hf: whether EV has those it cannot
 * do without (*BAD: it has one that cannot be read as a number). */
static bool handler_fields(struct ks_plan *p, struct tep_event *ev, bool *bad)
{
	struct tep_format_field **h = p->hf;

	switch (p->handler) {
	case H_SCHED_SWITCH:
		h[0] = hfield(ev, "prev_pid", false, bad);
		h[1] = comm_field(ev, "prev_comm");
		h[2] = hfield(ev, "prev_prio", false, bad);
		h[3] = hfield(ev, "prev_state", false, bad);
		h[4] = hfield(ev, "next_pid", false, bad);
		h[5] = comm_field(ev, "next_comm");
		h[6] = hfield(ev, "next_prio", false, bad);
		return h[0] && h[1] && h[2] && h[3] && h[4] && h[5] && h[6];
	case H_SCHED_WAKEUP:
		h[0] = hfield(ev, "pid", false, bad);
		h[1] = comm_field(ev, "comm");
		h[2] = hfield(ev, "prio", false, bad);
		h[3] = hfield(ev, "success", false, bad);
		h[4] = hfield(ev, "target_cpu", false, bad);
		return h[0] && h[1] && h[2];
	case H_HRTIMER_START:
	case H_HRTIMER_EXPIRE:
		/* "timer", else "hrtimer"; "function" only when it reads */
		h[0] = hfield(ev, "timer", false, bad);
		if (!h[0]) {
			*bad = false;
			h[0] = hfield(ev, "hrtimer", false, bad);
		}
		h[1] = hfield(ev, "function", false, bad);
		h[2] = hfield(ev, p->handler == H_HRTIMER_START ? "expires" : "now", false, bad);
		h[3] = p->handler == H_HRTIMER_START ? hfield(ev, "softexpires", false, bad) : NULL;
		return h[0] && h[2] && (p->handler == H_HRTIMER_EXPIRE || h[3]);
	case H_TLB_FLUSH:
		h[0] = hfield(ev, "pages", false, bad);
		h[1] = hfield(ev, "reason", false, bad);
		return h[0] && h[1];
	case H_KMEM:
		/* the handler adds "(FUNC+0xOFF) " and asks for the format */
		h[0] = hfield(ev, "call_site", false, bad);
		return ks_plan_compile_steps(p, ev) == 0;
	default:
		return false;
	}
}

/*
 * The handlers of libtraceevent's plugins that kvmscope's recordings meet
 * most (sched_switch, sched_wakeup[_new], hrtimer_start,
 * hrtimer_expire_entry, tlb_flush and the kmem events' call site prefix),
 * written as the plugins write them.  As for the kvm plugin
 * (ks_plan_compile_kvm), the plan trusts its text only once the handler
 * confirmed it: the first record is printed by the handler and compared
 * (ks_plan_learn); any difference leaves the event to the handler for good.
 */
struct ks_plan *ks_plan_compile_handler(struct tep_event *ev)
{
	enum handler_kind kind = handler_of(ev);
	struct ks_plan *p;
	bool bad = false;

	if (kind == H_NONE || !(p = ks_plan_new(ev->tep)))
		return NULL;
	p->extended = true;
	p->handler = kind;
	if (!handler_fields(p, ev, &bad) || bad) {
		ks_plan_free(p);
		return NULL;
	}
	return p;
}

/* The comm field F printed "%.*s" and registered for PID, as the
 * sched_switch plugin's write_and_save_comm() does. */
static int put_comm(const struct ks_plan *p, const struct tep_format_field *f, const uint8_t *data,
		    uint64_t pid, struct ks_tbuf *b)
{
	char comm[65];
	size_t n = strnlen((const char *)data + f->offset, (size_t)f->size);

	memcpy(comm, data + f->offset, n);
	comm[n] = '\0';
	tep_register_comm(p->tep, comm, (int)pid);
	return ks_tbuf_put(b, comm, n);
}

/* write_state(): the bits of "SDTtZXxW", else R. */
static int put_state(struct ks_tbuf *b, uint64_t v)
{
	static const char states[] = "SDTtZXxW";
	char out[16];
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		if (!(v & (1u << i)))
			continue;
		if (n)
			out[n++] = '|';
		out[n++] = states[i];
	}
	if (!n)
		out[n++] = 'R';
	return ks_tbuf_put(b, out, n);
}

/* tep_print_func_field(" function=%s"): "NAME/0x(start - v)" cut to 127
 * characters, else "0x%08llx". */
static int put_func_field(const struct ks_plan *p, struct ks_tbuf *b, uint64_t v)
{
	unsigned long long start;
	const char *name;
	char tmp[128];
	int n;

	if (ks_tbuf_put(b, " function=", 10) < 0)
		return -1;
	if (!tep_find_function_info(p->tep, v, &name, &start, NULL) || !name)
		return ks_tbuf_put(b, "0x", 2) < 0 ? -1 : ks_tbuf_int(b, v, 0, 16, 0, 8, 1, 0);
	n = snprintf(tmp, sizeof(tmp), "%s/0x%llx", name, start - v);
	if (n < 0)
		return -1;
	return ks_tbuf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static int put_dec(struct ks_tbuf *b, const char *lit, uint64_t v, int is_signed)
{
	return ks_tbuf_put(b, lit, strlen(lit)) < 0 ? -1 : ks_tbuf_int(b, v, is_signed, 10, 0, 0, 0, 0);
}

int ks_plan_run_handler(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b)
{
	static const char *const tlb_reasons[] = {
		" reason=flush on task switch", " reason=remote shootdown",
		" reason=local shootdown", " reason=local mm shootdown",
	};
	struct tep_format_field *const *h = p->hf;
	uint64_t v[8] = { 0 };
	unsigned long long start;
	const char *name;
	char tmp[160];
	int i, n;

	for (i = 0; i < 8; i++)
		if (h[i]) {
			if (!inside(h[i], size))
				return -1;
			v[i] = rd(p, data + h[i]->offset, h[i]->size);
		}
	switch (p->handler) {
	case H_SCHED_SWITCH:
		if (put_comm(p, h[1], data, v[0], b) < 0 || put_dec(b, ":", v[0], 1) < 0 ||
		    put_dec(b, " [", (uint64_t)(int64_t)(int32_t)v[2], 1) < 0 ||
		    ks_tbuf_put(b, "] ", 2) < 0 || put_state(b, v[3]) < 0 ||
		    ks_tbuf_put(b, " ==> ", 5) < 0 || put_comm(p, h[5], data, v[4], b) < 0 ||
		    put_dec(b, ":", v[4], 1) < 0 ||
		    put_dec(b, " [", (uint64_t)(int64_t)(int32_t)v[6], 1) < 0)
			return -1;
		return ks_tbuf_put(b, "]", 1);
	case H_SCHED_WAKEUP:
		if (put_comm(p, h[1], data, v[0], b) < 0 || put_dec(b, ":", v[0], 1) < 0 ||
		    put_dec(b, " [", v[2], 1) < 0 || ks_tbuf_put(b, "]", 1) < 0 ||
		    (h[3] && put_dec(b, " success=", v[3], 1) < 0))
			return -1;
		if (h[4] && (ks_tbuf_put(b, " CPU:", 5) < 0 || ks_tbuf_int(b, v[4], 0, 10, 0, 3, 1, 0) < 0))
			return -1;
		return 0;
	case H_HRTIMER_START:
	case H_HRTIMER_EXPIRE:
		if (ks_tbuf_put(b, "hrtimer=", 8) < 0 || put_hex_ll(b, v[0]) < 0)
			return -1;
		if (p->handler == H_HRTIMER_EXPIRE)
			return put_dec(b, " now=", v[2], 0) < 0 || (h[1] && put_func_field(p, b, v[1]) < 0) ? -1 : 0;
		if ((h[1] && put_func_field(p, b, v[1]) < 0) || put_dec(b, " expires=", v[2], 0) < 0)
			return -1;
		return put_dec(b, " softexpires=", v[3], 0);
	case H_TLB_FLUSH:
		if (put_dec(b, "pages=", v[0], 1) < 0 ||
		    (v[1] < 4 && ks_tbuf_put(b, tlb_reasons[v[1]], strlen(tlb_reasons[v[1]])) < 0) ||
		    (v[1] >= 4 && ks_tbuf_put(b, " reason=", 8) < 0) || put_dec(b, " (", v[1], 1) < 0)
			return -1;
		return ks_tbuf_put(b, ")", 1);
	case H_KMEM:
		if (h[0] && tep_find_function_info(p->tep, v[0], &name, &start, NULL) && name) {
			n = snprintf(tmp, sizeof(tmp), "(%s+0x%x) ", name, (unsigned)(int)(v[0] - start));
			if (n < 0 || (size_t)n >= sizeof(tmp) || ks_tbuf_put(b, tmp, (size_t)n) < 0)
				return -1;
		}
		for (i = 0; i < p->nr; i++)
			if (ks_plan_run_step(p, &p->steps[i], data, size, b) != 0)
				return -1;
		return 0;
	default:
		return -1;
	}
}
void ks_plan_learn_handler(struct ks_plan *p, const uint8_t *data, int size, const char *text,
			   size_t len)
{
	struct ks_tbuf tail = { 0 };

	/* a record the plan cannot print (cut short) says nothing */
	if (p->state == 0 && ks_plan_run_handler(p, data, size, &tail) == 0)
		p->state = tail.len == len && (!len || !memcmp(tail.p, text, len)) ? 1 : -1;
	free(tail.p);
}
