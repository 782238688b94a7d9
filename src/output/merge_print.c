/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * merge_print.c - a merged stream in trace-cmd report's layout, or as one
 * JSON document (see merge_print.h).
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kvmscope/attribution.h"
#include "kvmscope/dump.h"
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/merge_print.h"
#include "kvmscope/record.h"
#include "kvmscope/source.h"
#include "kvmscope/timesync.h"

struct pr_input {
	struct ks_dump *dump;  /* made on first use */
	char prefix[256];
	bool after_lost;
};

struct ks_merge_printer {
	struct ks_merge *m;
	bool nsec;
	int n;
	struct pr_input *in;
};

struct ks_merge_printer *ks_merge_printer_new(struct ks_merge *m, bool nsec)
{
	struct ks_merge_printer *p = calloc(1, sizeof(*p));
	int i, width = 0;

	if (!p)
		return NULL;
	p->m = m;
	p->nsec = nsec;
	p->n = ks_merge_nr_inputs(m);
	p->in = calloc((size_t)p->n + 1, sizeof(*p->in));
	if (!p->in) {
		free(p);
		return NULL;
	}
	for (i = 0; i < p->n; i++) {
		int len = (int)strlen(ks_merge_name(m, i));
		if (len > width)
			width = len;
	}
	for (i = 0; i < p->n; i++)
		snprintf(p->in[i].prefix, sizeof(p->in[i].prefix), "%*s: ", width,
			 ks_merge_name(m, i));
	return p;
}

void ks_merge_printer_free(struct ks_merge_printer *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		if (p->in[i].dump)
			ks_dump_free(p->in[i].dump);
	free(p->in);
	free(p);
}

static struct ks_dump *input_dump(struct ks_merge_printer *p, int i)
{
	if (!p->in[i].dump)
		p->in[i].dump = ks_dump_new(ks_merge_source(p->m, i),
					    &(struct ks_dump_opts){ .nsec = p->nsec });
	return p->in[i].dump;
}

void ks_merge_print_headers(struct ks_merge_printer *p, FILE *out)
{
	int i;

	for (i = 0; i < p->n; i++) {
		struct ks_dump *d = input_dump(p, i);
		if (d)
			ks_dump_print_header(d, out, p->n > 1 ? p->in[i].prefix : NULL);
	}
}

void ks_merge_print(struct ks_merge_printer *p, const struct ks_merge_rec *r, FILE *out)
{
	struct pr_input *in = &p->in[r->input];
	struct ks_dump *d = input_dump(p, r->input);
	const char *text;
	size_t len;

	if (!d || !(text = ks_dump_format(d, r->rec, &len)))
		return;
	/* trace-cmd prints a dropped-events notice and the next event as one */
	if (p->n > 1 && !in->after_lost)
		fputs_unlocked(in->prefix, out);
	in->after_lost = r->rec->type == KS_REC_LOST;
	fwrite_unlocked(text, 1, len, out);
	fputc_unlocked('\n', out);
}

/* ------------------------------------------------------------------ */
/* JSON */

static void json_name(struct ks_json *j, const char *key, const char *name)
{
	ks_json_key(j, key);
	if (name)
		ks_json_string(j, name);
	else
		ks_json_null(j);
}

static const char *sync_name(const struct ks_merge *m, int i)
{
	switch (ks_merge_sync_kind(m, i)) {
	case KS_TSYNC_TIMESHIFT:
		return "timeshift";
	case KS_TSYNC_TSC_OFFSET:
		/* the host's events are not read when offsets are given */
		return ks_timesync_nr_offset_events(ks_merge_timesync(m, i)) ? "tsc-offset-events"
									     : "tsc-offset-option";
	default:
		return "none";
	}
}

/* Guest I's vCPUs: their host threads and clock offsets. */
static void json_vcpus(struct ks_json *j, const struct ks_merge *m, int i)
{
	const struct ks_timesync *ts = ks_merge_timesync(m, i);
	enum ks_timesync_kind k = ks_merge_sync_kind(m, i);
	uint32_t n = ks_merge_nr_vcpus(m, i), v, s;

	if (ks_timesync_nr_vcpus(ts) > n)
		n = ks_timesync_nr_vcpus(ts);
	ks_json_key(j, "vcpus");
	ks_json_begin_array(j);
	for (v = 0; v < n; v++) {
		const struct ks_source_tsync_sample *smp;
		const struct ks_timesync_offset *off;
		uint32_t nsmp = k == KS_TSYNC_TIMESHIFT ? ks_timesync_samples(ts, v, &smp) : 0;
		uint32_t noff = k == KS_TSYNC_TSC_OFFSET ? ks_timesync_offsets(ts, v, &off) : 0;

		ks_json_begin_object(j);
		ks_json_kv_i64(j, "vcpu", v);
		ks_json_kv_i64(j, "host_tid", ks_merge_vcpu_tid(m, i, v));
		ks_json_key(j, "clock_offsets");
		ks_json_begin_array(j);
		for (s = 0; s < nsmp; s++) {
			ks_json_begin_object(j);
			ks_json_kv_u64(j, "guest_tsc", smp[s].time);
			ks_json_kv_i64(j, "offset", smp[s].offset);
			ks_json_kv_u64(j, "scaling", smp[s].scaling);
			ks_json_kv_u64(j, "fraction", smp[s].fraction);
			ks_json_end_object(j);
		}
		for (s = 0; s < noff; s++) {
			ks_json_begin_object(j);
			ks_json_kv_u64(j, "host_tsc", off[s].start);
			ks_json_kv_i64(j, "offset", (int64_t)off[s].offset);
			ks_json_end_object(j);
		}
		ks_json_end_array(j);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

void ks_merge_json_begin(struct ks_merge_printer *p, struct ks_json *j)
{
	int i;

	ks_json_set_flat_depth(j, 2); /* one line per input, event, thread */
	ks_json_begin_object(j);
	ks_json_key(j, "inputs");
	ks_json_begin_array(j);
	for (i = 0; i < p->n; i++) {
		struct ks_source *src = ks_merge_source(p->m, i);

		ks_json_begin_object(j);
		ks_json_kv_i64(j, "input", i);
		ks_json_kv_string(j, "name", ks_merge_name(p->m, i));
		ks_json_kv_string(j, "path", ks_source_path(src));
		ks_json_kv_string(j, "role", i ? "guest" : "host");
		ks_json_kv_i64(j, "cpus", ks_source_info(src)->nr_cpus);
		if (i) {
			const struct ks_timesync *ts = ks_merge_timesync(p->m, i);

			ks_json_kv_string(j, "sync", sync_name(p->m, i));
			ks_json_key(j, "interpolate");
			ks_json_bool(j, ks_merge_sync_kind(p->m, i) == KS_TSYNC_TIMESHIFT &&
					ks_timesync_interpolates(ts));
			json_vcpus(j, p->m, i);
		}
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
	ks_json_key(j, "events");
	ks_json_begin_array(j);
}

void ks_merge_json_event(struct ks_merge_printer *p, struct ks_json *j,
			 const struct ks_merge_rec *r)
{
	const struct ks_record *rec = r->rec;
	const struct ks_attr_thread *a = r->thread && r->thread->events ? r->thread : NULL;
	struct ks_dump *d = input_dump(p, r->input);
	const char *text;

	if (!d || !(text = ks_dump_format(d, rec, NULL)))
		return;
	ks_json_begin_object(j);
	ks_json_kv_i64(j, "input", r->input);
	ks_json_kv_u64(j, "ts", rec->ts);
	ks_json_kv_i64(j, "cpu", rec->cpu);
	if (rec->type == KS_REC_LOST) {
		ks_json_kv_u64(j, "lost", rec->lost);
	} else {
		ks_json_kv_i64(j, "tid", rec->tid);
		ks_json_key(j, "event");
		if (rec->event) {
			char name[160];

			snprintf(name, sizeof(name), "%s:%s", rec->event->system, rec->event->name);
			ks_json_string(j, name);
		} else {
			ks_json_null(j);
		}
		/* a guest event: its vCPU and that vCPU's host thread; a host
		 * event of a thread with KVM events: the model's vCPU */
		if (r->input > 0) {
			ks_json_kv_i64(j, "vcpu", r->vcpu);
			ks_json_kv_i64(j, "host_tid", r->host_tid);
		} else if (a) {
			ks_json_kv_i64(j, "vcpu", a->vcpu);
		}
		if (a) {
			ks_json_kv_i64(j, "vm", a->vm);
			json_name(j, "vm_name", ks_host_vm_name(ks_merge_host(p->m), a->vm));
		}
	}
	ks_json_kv_string(j, "text", text);
	ks_json_end_object(j);
}

void ks_merge_json_end(struct ks_merge_printer *p, struct ks_json *j)
{
	struct ks_merge_quality q;

	ks_json_end_array(j);
	ks_host_json_threads(ks_merge_host(p->m), j);
	ks_merge_quality(p->m, &q);
	ks_json_key(j, "sync_quality");
	ks_json_begin_object(j);
	ks_json_kv_u64(j, "checked", q.checked);
	ks_json_kv_u64(j, "before_host", q.before_host);
	ks_json_kv_u64(j, "outside", q.outside);
	ks_json_kv_u64(j, "worst_ns", q.worst_ns);
	ks_json_kv_u64(j, "worst_ts", q.worst_ts);
	json_name(j, "worst_input", q.outside ? ks_merge_name(p->m, q.worst_input) : NULL);
	ks_json_end_object(j);
	ks_json_end_object(j);
	ks_json_finish(j);
}
