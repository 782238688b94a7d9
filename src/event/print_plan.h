/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * print_plan.h - an event's print format compiled once into a list of steps
 * (literal text, numbers, strings, pointers, __print_symbolic/__print_flags,
 * ?:) that formats a record without libtraceevent's per-record printf work.
 *
 *	struct ks_plan *p = ks_plan_compile(event);   // NULL: not expressible
 *	if (!p || ks_plan_run(p, data, size, &buf) < 0)
 *		... tep_print_event(..., TEP_PRINT_INFO) as before ...
 *	ks_plan_free(p);
 *
 * Only formats whose text is provably the same as libtraceevent 1.7's
 * pretty printer compile (and the handlers of some plugins, checked against
 * the handler's own text: see print_plan_kvm.c, print_plan_plugins.c); a
 * record the plan cannot format (a field beyond the record, a string
 * without its end) makes ks_plan_run fail, leaving the buffer as it was, so
 * that the caller prints it through the library.
 */
#ifndef KVMSCOPE_PRINT_PLAN_H
#define KVMSCOPE_PRINT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tep_event;
struct ks_plan;

/* A growable text buffer. */
struct ks_tbuf {
	char *p;
	size_t len, cap;
};

int ks_tbuf_reserve(struct ks_tbuf *b, size_t more);
static inline int ks_tbuf_put(struct ks_tbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n + 1 && ks_tbuf_reserve(b, n + 1) < 0)
		return -1;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

struct ks_plan *ks_plan_compile(struct tep_event *ev);
/* Appends the event's text to B: 0; or -1 (B unchanged in length): print
 * it with the library; or 1: print it with the library and hand that text
 * to ks_plan_learn() (plans of plugin handlers learn from the handler,
 * printk strings from the library's text).  Plans of the sched plugin
 * register the comms they print, as the plugin does. */
int ks_plan_run(const struct ks_plan *p, const uint8_t *data, int size, struct ks_tbuf *b);
void ks_plan_learn(struct ks_plan *p, const uint8_t *data, int size, const char *text, size_t len);
void ks_plan_free(struct ks_plan *p);

/* The plan uses only steps ks_plan_scan can read back (those of the
 * first plans: fields, strings, symbols; or the kvm plugin's text). */
bool ks_plan_scannable(const struct ks_plan *p);

/* The inverse of ks_plan_run: the values whose printed text is TEXT (the
 * whole of it, trailing blanks aside) stored into the fields of DATA (SIZE
 * bytes, zeroed by the caller; char arrays come NUL padded).  0; or -1 when
 * TEXT is not what the plan prints, or the plan has a step that cannot be
 * read back (dynamic strings, the kvm plugin's text).  A number is read
 * back as printed: a field cut to 32 bits by "%d" keeps 32 bits. */
int ks_plan_scan(const struct ks_plan *p, const char *text, uint8_t *data, int size);

/* Appends "%Wd"-style text: V, as signed if IS_SIGNED, in base 16 or else
 * 10 (UPPER: X digits), padded to WIDTH with spaces (zeros if ZERO), on the
 * right if LEFT. */
int ks_tbuf_int(struct ks_tbuf *b, uint64_t v, int is_signed, int base, int upper,
		int width, int zero, int left);

#endif
