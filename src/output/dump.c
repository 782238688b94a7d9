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

struct ks_dump {
	struct ks_source *src;
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct trace_seq seq;
	const char *time_fmt;
	bool after_lost;  /* the last line was a dropped-events notice */
};

struct ks_dump *ks_dump_new(struct ks_source *src, const struct ks_dump_opts *opts)
{
	struct ks_dump *d = calloc(1, sizeof(*d));
	bool in_ns = !ks_source_clock(src)->ts_ticks;

	if (!d)
		return NULL;
	d->src = src;
	d->tep = ks_source_tep(src);
	if (d->tep && !(opts && opts->no_plugins))
		d->plugins = tep_load_plugins(d->tep);
	if (d->tep && opts && opts->nsec)
		tep_set_flag(d->tep, TEP_NSEC_OUTPUT);
	trace_seq_init(&d->seq);
	if (!in_ns)
		d->time_fmt = "%12d:";
	else if (opts && opts->nsec)
		d->time_fmt = " %9.1d:";
	else
		d->time_fmt = " %6.1000d:";
	return d;
}

void ks_dump_free(struct ks_dump *d)
{
	if (!d)
		return;
	if (d->plugins)
		tep_unload_plugins(d->plugins, d->tep);
	trace_seq_destroy(&d->seq);
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

static void format_event(struct ks_dump *d, const struct ks_record *rec)
{
	struct tep_record tr;

	memset(&tr, 0, sizeof(tr));
	tr.ts = rec->ts;
	tr.cpu = rec->cpu;
	tr.data = (void *)rec->data;
	tr.size = (int)rec->size;
	tr.record_size = (int)rec->size;
	tr.offset = rec->offset;
	tep_print_event(d->tep, &d->seq, &tr, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(d->tep, &d->seq, &tr, d->time_fmt, TEP_PRINT_TIME);
	print_name(&d->seq, rec->event ? rec->event->name : "UNKNOWN");
	tep_print_event(d->tep, &d->seq, &tr, "%s", TEP_PRINT_INFO);
}

const char *ks_dump_format(struct ks_dump *d, const struct ks_record *rec, size_t *len)
{
	struct trace_seq *s = &d->seq;

	trace_seq_reset(s);
	switch (rec->type) {
	case KS_REC_COMM:
		if (d->tep && rec->comm && rec->tid >= 0)
			tep_override_comm(d->tep, rec->comm, rec->tid);
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
		break;
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
		fputs(prefix, out);
	d->after_lost = rec->type == KS_REC_LOST;
	fwrite(text, 1, len, out);
	fputc('\n', out);
}
