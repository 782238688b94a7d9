/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dump.c - records as trace-cmd report prints them (see kvmscope/dump.h).
 *
 * Layout of one event, as trace-cmd report writes it:
 *	"%16s-%-5d [%03d]" comm, pid, cpu
 *	" %9.1d:" / " %6.1000d:" / "%12d:" the time (ns, us, or raw counter)
 *	" NAME: " padded to 20 characters, then the event's print format.
 * A page with dropped events first prints "CPU:N [M EVENTS DROPPED]".
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "kvmscope/dump.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"
#include "event/print_plan.h"

/* pid -> comm, as tep_data_comm_from_pid() last said; a comm it found
 * stays valid until tep_override_comm() (only registrations come
 * otherwise, and they do not change a pid's comm once it has one) */
#define COMM_SLOTS 256
struct comm_slot {
	int pid;           /* -1: empty */
	int len;
	const char *comm;
};

/* plans[id]: not tried yet (NULL), left to libtraceevent (NO_PLAN), or one */
#define NO_PLAN ((struct ks_plan *)&no_plan_tag)
static const int no_plan_tag;

struct ks_dump {
	struct ks_source *src;
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct trace_seq seq;
	const char *time_fmt;
	int time_prec;     /* digits after the dot: 9 (ns), 6 (us), 0: time_fmt */
	bool after_lost;  /* the last line was a dropped-events notice */
	struct ks_tbuf line;
	struct ks_plan **plans;
	int nr_plans;
	struct comm_slot comms[COMM_SLOTS];
};

static void forget_comms(struct ks_dump *d)
{
	for (int i = 0; i < COMM_SLOTS; i++)
		d->comms[i].pid = -1;
}

/* tep_data_comm_from_pid(), remembered */
static const char *comm_of(struct ks_dump *d, int pid, size_t *len)
{
	struct comm_slot *c = &d->comms[(unsigned)pid % COMM_SLOTS];
	const char *comm;

	if (c->pid == pid && pid >= 0) {
		*len = (size_t)c->len;
		return c->comm;
	}
	comm = tep_data_comm_from_pid(d->tep, pid);
	*len = strlen(comm);
	/* "<...>": not known yet, a registration may come */
	if (pid >= 0 && *len < 4096 && strcmp(comm, "<...>")) {
		c->pid = pid;
		c->len = (int)*len;
		c->comm = comm;
	}
	return comm;
}

struct ks_dump *ks_dump_new(struct ks_source *src, const struct ks_dump_opts *opts)
{
	struct ks_dump *d = calloc(1, sizeof(*d));
	bool in_ns = !ks_source_clock(src)->ts_ticks;

	if (!d)
		return NULL;
	d->src = src;
	d->tep = ks_source_tep_comms(src);
	forget_comms(d);
	if (d->tep && !(opts && opts->no_plugins))
		d->plugins = tep_load_plugins(d->tep);
	if (d->tep && opts && opts->nsec)
		tep_set_flag(d->tep, TEP_NSEC_OUTPUT);
	trace_seq_init(&d->seq);
	if (!in_ns)
		d->time_fmt = "%12d:";
	else if (opts && opts->nsec)
		d->time_fmt = " %9.1d:", d->time_prec = 9;
	else
		d->time_fmt = " %6.1000d:", d->time_prec = 6;
	return d;
}

void ks_dump_free(struct ks_dump *d)
{
	if (!d)
		return;
	if (d->plugins)
		tep_unload_plugins(d->plugins, d->tep);
	trace_seq_destroy(&d->seq);
	for (int i = 0; i < d->nr_plans; i++)
		if (d->plans[i] != NO_PLAN)
			ks_plan_free(d->plans[i]);
	free(d->plans);
	free(d->line.p);
	free(d);
}

static void print_name(struct trace_seq *s, const char *name)
{
	static const char spaces[] = "                    "; /* 20 */
	int len = (int)strlen(name);

	trace_seq_printf(s, " %s: ", name);
	if (len < 20)
		trace_seq_printf(s, "%.*s", 20 - len, spaces);
}

/* The line as tep_print_event() writes it, call by call (the reference
 * the fast path below must match; also for events it does not take). */
static void format_event_tep(struct ks_dump *d, struct tep_record *tr, const char *name)
{
	struct trace_seq *s = &d->seq;

	trace_seq_reset(s);
	tep_print_event(d->tep, s, tr, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(d->tep, s, tr, d->time_fmt, TEP_PRINT_TIME);
	print_name(s, name);
	tep_print_event(d->tep, s, tr, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(s);
	d->line.len = 0;
	ks_tbuf_put(&d->line, s->buffer, s->len);
}

/* The compiled plan of EV, NULL if libtraceevent prints it. */
static struct ks_plan *event_plan(struct ks_dump *d, struct tep_event *ev)
{
	if (ev->id < 0 || ev->id > 0xffff)
		return NULL;
	if (ev->id >= d->nr_plans) {
		int n = ev->id + 1;
		struct ks_plan **p = realloc(d->plans, (size_t)n * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + d->nr_plans, 0, (size_t)(n - d->nr_plans) * sizeof(*p));
		d->plans = p;
		d->nr_plans = n;
	}
	if (!d->plans[ev->id]) {
		struct ks_plan *p = ks_plan_compile(ev);
		d->plans[ev->id] = p ? p : NO_PLAN;
	}
	return d->plans[ev->id] == NO_PLAN ? NULL : d->plans[ev->id];
}

/* "%16s-%-5d [%03d] %5llu.%0Nllu: %s: " + padding, as tep_print_event()
 * and print_name() write it, then the event's text. */
static void format_event(struct ks_dump *d, const struct ks_record *rec)
{
	struct tep_record tr;
	struct tep_event *ev = rec->event;
	struct ks_tbuf *b = &d->line;
	const char *comm, *name;
	struct ks_plan *plan;
	uint64_t t, secs, frac;
	size_t len;
	int pid, r;

	memset(&tr, 0, sizeof(tr));
	tr.ts = rec->ts;
	tr.cpu = rec->cpu;
	tr.data = (void *)rec->data;
	tr.size = (int)rec->size;
	tr.record_size = (int)rec->size;
	tr.offset = rec->offset;
	name = ev ? ev->name : "UNKNOWN";
	/* the layout below is the ns/us one of an event libtraceevent knows */
	if (!ev || ev->tep != d->tep || !d->time_prec || rec->size < 8 || rec->cpu < 0 ||
	    tep_data_type(d->tep, &tr) != ev->id) {
		format_event_tep(d, &tr, name);
		return;
	}
	b->len = 0;
	pid = tep_data_pid(d->tep, &tr);
	comm = comm_of(d, pid, &len);
	if (ks_tbuf_reserve(b, len + 128) < 0) {
		format_event_tep(d, &tr, name);
		return;
	}
	if (len < 16)
		memset(b->p, ' ', 16 - len), b->len = 16 - len;
	ks_tbuf_put(b, comm, len);
	ks_tbuf_put(b, "-", 1);
	ks_tbuf_int(b, (uint64_t)(int64_t)pid, 1, 10, 0, 5, 0, 1);
	ks_tbuf_put(b, " [", 2);
	ks_tbuf_int(b, (uint64_t)rec->cpu, 1, 10, 0, 3, 1, 0);
	ks_tbuf_put(b, "] ", 2);
	t = rec->ts;
	/* constant divisors (time_prec is 6 or 9 here) */
	if (d->time_prec == 6) {
		t = (t + 500) / 1000;
		secs = t / 1000000;
		frac = t % 1000000;
	} else {
		secs = t / 1000000000;
		frac = t % 1000000000;
	}
	ks_tbuf_int(b, secs, 0, 10, 0, 5, 0, 0);
	ks_tbuf_put(b, ".", 1);
	ks_tbuf_int(b, frac, 0, 10, 0, d->time_prec, 1, 0);
	ks_tbuf_put(b, ": ", 2);
	len = strlen(name);
	ks_tbuf_put(b, name, len);
	ks_tbuf_put(b, ":                     ", 1 + (len < 20 ? 21 - len : 1));
	plan = event_plan(d, ev);
	r = plan ? ks_plan_run(plan, rec->data, (int)rec->size, b) : -1;
	if (r == 0)
		return;
	trace_seq_reset(&d->seq);
	tep_print_event(d->tep, &d->seq, &tr, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&d->seq);
	if (r > 0)
		ks_plan_learn(plan, rec->data, (int)rec->size, d->seq.buffer, d->seq.len);
	ks_tbuf_put(b, d->seq.buffer, d->seq.len);
}

const char *ks_dump_format(struct ks_dump *d, const struct ks_record *rec, size_t *len)
{
	struct trace_seq *s = &d->seq;

	trace_seq_reset(s);
	d->line.len = 0;
	switch (rec->type) {
	case KS_REC_COMM:
		if (d->tep && rec->comm && rec->tid >= 0) {
			tep_override_comm(d->tep, rec->comm, rec->tid);
			forget_comms(d); /* the old comm is freed */
		}
		return NULL;
	case KS_REC_LOST:
		if (rec->lost)
			trace_seq_printf(s, "CPU:%d [%llu EVENTS DROPPED]", rec->cpu,
					 (unsigned long long)rec->lost);
		else
			trace_seq_printf(s, "CPU:%d [EVENTS DROPPED]", rec->cpu);
		break;
	case KS_REC_EVENT:
		if (!d->tep || !rec->data || rec->size == 0)
			return NULL;
		format_event(d, rec);
		if (!d->line.p)
			return NULL;
		if (d->line.len && d->line.p[d->line.len - 1] == '\n')
			d->line.len--;
		d->line.p[d->line.len] = '\0';
		if (len)
			*len = d->line.len;
		return d->line.p;
	default:
		return NULL;
	}
	trace_seq_terminate(s);
	if (s->len && s->buffer[s->len - 1] == '\n')
		s->buffer[--s->len] = '\0';
	if (len)
		*len = s->len;
	return s->buffer;
}

void ks_dump_print_header(struct ks_dump *d, FILE *out, const char *prefix)
{
	if (prefix)
		fputs(prefix, out);
	fprintf(out, "cpus=%d\n", ks_source_info(d->src)->nr_cpus);
}

void ks_dump_print_record(struct ks_dump *d, const struct ks_record *rec, FILE *out,
			  const char *prefix)
{
	size_t len;
	const char *text = ks_dump_format(d, rec, &len);

	if (!text)
		return;
	/* trace-cmd prints the notice and the event after it as one text */
	if (prefix && !d->after_lost)
		fputs_unlocked(prefix, out);
	d->after_lost = rec->type == KS_REC_LOST;
	fwrite_unlocked(text, 1, len, out);
	fputc_unlocked('\n', out);
}
