/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfetto_pb.c - a ks_timeline in Perfetto's own protobuf trace format,
 * the format Perfetto's UI and trace processor load best.  The messages
 * are the subset of Perfetto's protos in perfetto_trace.proto, compiled by
 * protoc-c at build time and packed with libprotobuf-c.
 *
 * The same tracks and events as the JSON (perfetto.c): a "Host CPUs"
 * process with a thread track per host CPU (guest-mode slices of the vCPUs
 * that ran there); per VM a process, a thread track per vCPU (its states as
 * slices named "STATE [reason]"), a thread track per vCPU for the guest
 * tasks (slices) and events (instants) when a guest trace was given, and an
 * "exits/s" counter track.
 *
 * Size: each track's events form one packet sequence whose first packet
 * clears the sequence's state and sets its defaults: the track (so events
 * carry no track_uuid), an incremental clock (64, so timestamps are deltas
 * from the previous packet: a few bytes), and the interned event names (so
 * events carry a small name_iid).  The file is the Trace message written
 * one packet at a time: field 1, length, packed TracePacket.
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/timeline.h"
#include "perfetto_trace.pb-c.h"

#define HOST_PID 1
#define VM_PID(vm) (2 + (int32_t)(vm))
#define STATE_TID(vi) (1000 + 2 * (int32_t)(vi))
#define TASK_TID(vi) (1001 + 2 * (int32_t)(vi))

/* Track uuids */
#define UUID_HOST 1ull
#define UUID_CPU(c) ((1ull << 32) + (uint64_t)(c))
#define UUID_VM(vm) ((2ull << 32) + (uint64_t)(vm))
#define UUID_STATE(vi) ((3ull << 32) + (uint64_t)(vi))
#define UUID_TASKS(vi) ((4ull << 32) + (uint64_t)(vi))
#define UUID_RATE(vm) ((5ull << 32) + (uint64_t)(vm))

#define CLOCK_BOOTTIME 6
#define CLOCK_INCREMENTAL 64

typedef Perfetto__Protos__TracePacket Packet;

struct pb_writer {
	FILE *out;
	uint8_t *buf;
	size_t cap;
	uint32_t seq;          /* current sequence */
	uint64_t last_ts;      /* incremental clock of the sequence */
	bool oom;
};

static void put_varint(struct pb_writer *w, uint64_t v)
{
	uint8_t b[10];
	int n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	fwrite(b, 1, (size_t)n, w->out);
}

/* One Trace.packet (field 1, length-delimited). */
static void emit(struct pb_writer *w, Packet *p)
{
	size_t n = protobuf_c_message_get_packed_size(&p->base);

	if (n > w->cap) {
		size_t c = n * 2 > 4096 ? n * 2 : 4096;
		uint8_t *b = realloc(w->buf, c);

		if (!b) {
			w->oom = true;
			return;
		}
		w->buf = b;
		w->cap = c;
	}
	protobuf_c_message_pack(&p->base, w->buf);
	putc(0x0a, w->out);
	put_varint(w, n);
	fwrite(w->buf, 1, n, w->out);
}

/* ------------------------------------------------------------------ */
/* tracks */

static void descriptor(struct pb_writer *w, uint64_t uuid, uint64_t parent, const char *name,
		       int32_t pid, int32_t tid, const char *pname, bool counter)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;

	d.has_uuid = true;
	d.uuid = uuid;
	if (parent) {
		d.has_parent_uuid = true;
		d.parent_uuid = parent;
	}
	if (counter) {
		cd.has_unit = true;
		cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
		d.counter = &cd;
		d.name = (char *)name;
	} else if (tid) {
		td.has_pid = td.has_tid = true;
		td.pid = pid;
		td.tid = tid;
		td.thread_name = (char *)name;
		d.thread = &td;
	} else {
		pd.has_pid = true;
		pd.pid = pid;
		pd.process_name = (char *)pname;
		d.process = &pd;
	}
	p.track_descriptor = &d;
	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = ++w->seq;
	emit(w, &p);
}

/* A name to intern in the sequence being started. */
struct iname {
	uint64_t iid;
	const char *name;
};

/* First packet of a track's sequence: defaults, clock, interned names. */
static void begin_sequence(struct pb_writer *w, uint64_t track, uint64_t ts,
			   const struct iname *names, size_t nr_names)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TracePacketDefaults def = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Perfetto__Protos__TrackEventDefaults tdef = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
	Perfetto__Protos__ClockSnapshot snap = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock clk[2] = {
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
	};
	Perfetto__Protos__ClockSnapshot__Clock *clks[2] = { &clk[0], &clk[1] };
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName *en = NULL, **enp = NULL;
	size_t i;

	if (nr_names) {
		en = calloc(nr_names, sizeof(*en));
		enp = calloc(nr_names, sizeof(*enp));
		if (!en || !enp) {
			free(en);
			free(enp);
			w->oom = true;
			return;
		}
		for (i = 0; i < nr_names; i++) {
			perfetto__protos__event_name__init(&en[i]);
			en[i].has_iid = true;
			en[i].iid = names[i].iid;
			en[i].name = (char *)names[i].name;
			enp[i] = &en[i];
		}
		in.n_event_names = nr_names;
		in.event_names = enp;
		p.interned_data = &in;
	}
	tdef.has_track_uuid = true;
	tdef.track_uuid = track;
	def.track_event_defaults = &tdef;
	def.has_timestamp_clock_id = true;
	def.timestamp_clock_id = CLOCK_INCREMENTAL;
	clk[0].has_clock_id = clk[0].has_timestamp = clk[0].has_is_incremental = true;
	clk[0].clock_id = CLOCK_INCREMENTAL;
	clk[0].timestamp = ts;
	clk[0].is_incremental = true;
	clk[1].has_clock_id = clk[1].has_timestamp = true;
	clk[1].clock_id = CLOCK_BOOTTIME;
	clk[1].timestamp = ts;
	snap.n_clocks = 2;
	snap.clocks = clks;
	p.clock_snapshot = &snap;
	p.trace_packet_defaults = &def;
	p.has_timestamp = p.has_timestamp_clock_id = true;
	p.timestamp = ts;
	p.timestamp_clock_id = CLOCK_BOOTTIME;
	p.has_trusted_packet_sequence_id = p.has_sequence_flags = true;
	p.trusted_packet_sequence_id = ++w->seq;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	emit(w, &p);
	w->last_ts = ts;
	free(en);
	free(enp);
}

static size_t varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* An event on the current sequence's track; name_iid 0: none.  These are
 * nearly all of the file, and protobuf-c would compute each packet's size
 * twice and pack it through its reflection tables: they are encoded here,
 * the bytes protobuf_c_message_pack() writes for the same TracePacket
 * (timestamp = 8, trusted_packet_sequence_id = 10, track_event = 11 with
 * type = 9, name_iid = 10, counter_value = 30), which the test decodes
 * with libprotobuf-c. */
static void event(struct pb_writer *w, uint64_t ts, Perfetto__Protos__TrackEvent__Type type,
		  uint64_t name_iid, bool counter, int64_t value)
{
	uint8_t te[32], pk[64], head[12];
	size_t nt = 0, np = 0, nh = 0;
	uint64_t delta = ts >= w->last_ts ? ts - w->last_ts : 0;

	if (ts > w->last_ts)
		w->last_ts = ts;
	te[nt++] = 9 << 3;
	nt += varint(te + nt, (uint64_t)type);
	if (name_iid) {
		te[nt++] = 10 << 3;
		nt += varint(te + nt, name_iid);
	}
	if (counter) {
		nt += varint(te + nt, 30 << 3);
		nt += varint(te + nt, (uint64_t)value);
	}
	pk[np++] = 8 << 3;
	np += varint(pk + np, delta);
	pk[np++] = 10 << 3;
	np += varint(pk + np, w->seq);
	pk[np++] = 11 << 3 | 2;
	np += varint(pk + np, nt);
	memcpy(pk + np, te, nt);
	np += nt;
	head[nh++] = 1 << 3 | 2; /* Trace.packet */
	nh += varint(head + nh, np);
	fwrite_unlocked(head, 1, nh, w->out);
	fwrite_unlocked(pk, 1, np, w->out);
}

#define BEGIN PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
#define END PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END
#define INSTANT PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT
#define COUNTER PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER

/* ------------------------------------------------------------------ */
/* the timeline */

/* Interned names: [1, S] state "STATE reason" of state * nr_reasons + reason,
 * then tl->names, then one "VM vCPU" per vCPU. */
struct names {
	char **state;          /* per (state, reason), NULL: unused */
	uint64_t nr_state, base_names, base_vcpu;
	char **vcpu;
};

static void names_free(struct names *n)
{
	uint64_t i;

	for (i = 0; n->state && i < n->nr_state; i++)
		free(n->state[i]);
	free(n->state);
	free(n->vcpu);
	n->state = n->vcpu = NULL;
}

static int names_build(const struct ks_timeline *tl, struct names *n, char *vcpu_buf,
		       size_t vcpu_len)
{
	const struct ks_tl_interval *iv;
	struct ks_tl_cursor *c;
	uint32_t v;

	n->nr_state = (uint64_t)KS_VS_COUNT * (tl->nr_reasons ? tl->nr_reasons : 1);
	n->base_names = 1 + n->nr_state;
	n->base_vcpu = n->base_names + tl->nr_names;
	n->state = calloc(n->nr_state, sizeof(*n->state));
	n->vcpu = calloc(tl->nr_vcpus + 1, sizeof(*n->vcpu));
	if (!n->state || !n->vcpu)
		return -1;
	c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	if (!c)
		return -1;
	while ((iv = ks_tl_cursor_next(c))) {
		uint64_t k = (uint64_t)iv->state * tl->nr_reasons + iv->reason;
		const char *reason = tl->reasons[iv->reason];

		if (n->state[k])
			continue;
		if (asprintf(&n->state[k], "%s%s%s", ks_vstate_name(iv->state), reason[0] ? " " : "",
			     reason) < 0) {
			n->state[k] = NULL;
			ks_tl_cursor_free(c);
			return -1;
		}
	}
	ks_tl_cursor_free(c);
	for (v = 0; v < tl->nr_vcpus; v++) {
		n->vcpu[v] = vcpu_buf + (size_t)v * vcpu_len;
		snprintf(n->vcpu[v], vcpu_len, "%s vCPU %u", tl->vms[tl->vcpus[v].vm].name,
			 tl->vcpus[v].vcpu_id);
	}
	return 0;
}

static void write_descriptors(struct pb_writer *w, const struct ks_timeline *tl, int32_t max_cpu)
{
	char name[160];
	uint32_t i;
	int32_t c;

	descriptor(w, UUID_HOST, 0, NULL, HOST_PID, 0, "Host CPUs", false);
	for (c = 0; c <= max_cpu; c++) {
		snprintf(name, sizeof(name), "CPU %d", c);
		descriptor(w, UUID_CPU(c), UUID_HOST, name, HOST_PID, c + 1, NULL, false);
	}
	for (i = 0; i < tl->nr_vms; i++) {
		descriptor(w, UUID_VM(i), 0, NULL, VM_PID(i), 0, tl->vms[i].name, false);
		descriptor(w, UUID_RATE(i), UUID_VM(i), "exits/s", 0, 0, NULL, true);
	}
	for (i = 0; i < tl->nr_vcpus; i++) {
		const struct ks_tl_vcpu *v = &tl->vcpus[i];
		snprintf(name, sizeof(name), "vCPU %u (%s-%d)", v->vcpu_id, v->comm, v->tid);
		descriptor(w, UUID_STATE(i), UUID_VM(v->vm), name, VM_PID(v->vm), STATE_TID(i), NULL,
			   false);
		if (tl->vms[v->vm].guest_input < 0)
			continue;
		snprintf(name, sizeof(name), "vCPU %u guest tasks", v->vcpu_id);
		descriptor(w, UUID_TASKS(i), UUID_VM(v->vm), name, VM_PID(v->vm), TASK_TID(i), NULL,
			   false);
	}
}

/* Indexes of ARR's items of track KEY, in time order: arrays are in time
 * order per vCPU / CPU already (built as the stream goes). */
static void state_track(struct pb_writer *w, const struct ks_timeline *tl, const struct names *n,
			uint32_t vi, struct iname *in)
{
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	const struct ks_tl_interval *iv;
	uint64_t k, nr = 0;
	bool first = true;

	for (k = 0; k < n->nr_state; k++)
		if (n->state[k])
			in[nr++] = (struct iname){ 1 + k, n->state[k] };
	while (!w->oom && (iv = ks_tl_cursor_next(c))) {
		if (iv->vcpu != vi)
			continue;
		if (first) {
			begin_sequence(w, UUID_STATE(vi), iv->start, in, nr);
			first = false;
		}
		event(w, iv->start, BEGIN, 1 + (uint64_t)iv->state * tl->nr_reasons + iv->reason,
		      false, 0);
		event(w, iv->end, END, 0, false, 0);
	}
	ks_tl_cursor_free(c);
}

static void cpu_track(struct pb_writer *w, const struct ks_timeline *tl, const struct names *n,
		      int32_t cpu, struct iname *in)
{
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
	const struct ks_tl_cpu_slice *s;
	uint64_t i, nr = 0;
	bool first = true;

	for (i = 0; i < tl->nr_vcpus; i++)
		in[nr++] = (struct iname){ n->base_vcpu + i, n->vcpu[i] };
	while (!w->oom && (s = ks_tl_cursor_next(c))) {
		if (s->cpu != cpu)
			continue;
		if (first) {
			begin_sequence(w, UUID_CPU(cpu), s->start, in, nr);
			first = false;
		}
		event(w, s->start, BEGIN, n->base_vcpu + s->vcpu, false, 0);
		event(w, s->end, END, 0, false, 0);
	}
	ks_tl_cursor_free(c);
}

/* Guest tasks (slices) and guest events (instants) of one vCPU, merged by
 * time: an event at the start of a task comes after the task begins. */
static void task_track(struct pb_writer *w, const struct ks_timeline *tl, const struct names *n,
		       uint32_t vi, struct iname *in, bool *used)
{
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_GUEST_TASKS);
	const struct ks_tl_guest_item *t = NULL;
	uint64_t b = 0, nr = 0, i;
	bool first = true, open = false;
	uint64_t open_end = 0;

	memset(used, 0, tl->nr_names * sizeof(*used));
	while ((t = ks_tl_cursor_next(c)))
		if (t->vcpu == vi)
			used[t->name] = true;
	ks_tl_cursor_free(c);
	c = ks_tl_cursor_new(tl, KS_TL_GUEST_TASKS);
	/* the next task of the vCPU */
	while ((t = ks_tl_cursor_next(c)) && t->vcpu != vi)
		;
	for (i = 0; i < tl->nr_gevents; i++)
		if (tl->gevents[i].vcpu == vi)
			used[tl->gevents[i].name] = true;
	for (i = 0; i < tl->nr_names; i++)
		if (used[i])
			in[nr++] = (struct iname){ n->base_names + i, tl->names[i] };
	for (;;) {
		const struct ks_tl_guest_item *e = NULL;

		while (b < tl->nr_gevents && tl->gevents[b].vcpu != vi)
			b++;
		if (b < tl->nr_gevents)
			e = &tl->gevents[b];
		if ((!t && !e) || w->oom)
			break;
		if (first) {
			begin_sequence(w, UUID_TASKS(vi),
				       t && (!e || t->start <= e->start) ? t->start : e->start, in, nr);
			first = false;
		}
		if (open && open_end <= (t ? t->start : UINT64_MAX) &&
		    open_end <= (e ? e->start : UINT64_MAX)) {
			event(w, open_end, END, 0, false, 0);
			open = false;
			continue;
		}
		if (t && (!e || t->start <= e->start)) {
			event(w, t->start, BEGIN, n->base_names + t->name, false, 0);
			open = true;
			open_end = t->end;
			while ((t = ks_tl_cursor_next(c)) && t->vcpu != vi)
				;
		} else {
			event(w, e->start, INSTANT, n->base_names + e->name, false, 0);
			b++;
		}
	}
	if (open)
		event(w, open_end, END, 0, false, 0);
	ks_tl_cursor_free(c);
}

static void rate_track(struct pb_writer *w, const struct ks_timeline *tl,
		       const struct ks_tl_rates *r, uint32_t vm)
{
	uint64_t b;

	begin_sequence(w, UUID_RATE(vm), tl->first_ts, NULL, 0);
	for (b = 0; b < r->nr_buckets && !w->oom; b++)
		event(w, tl->first_ts + b * r->bucket_ns, COUNTER, 0, true,
		      (int64_t)ks_tl_rate_per_s(r, r->count[vm * r->nr_buckets + b]));
}

int ks_timeline_write_perfetto(const struct ks_timeline *tl, FILE *out)
{
	struct pb_writer w = { .out = out };
	struct names n = { 0 };
	struct ks_tl_rates r = { 0 };
	struct iname *in = NULL;
	bool *used = NULL;
	char *vcpu_buf = NULL;
	int32_t c, max_cpu = -1;
	uint64_t i, max_in;
	int rc = -1;

	{
		struct ks_tl_cursor *cc = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
		const struct ks_tl_cpu_slice *s;

		while ((s = ks_tl_cursor_next(cc)))
			if (s->cpu > max_cpu && s->cpu < 4096)
				max_cpu = s->cpu;
		ks_tl_cursor_free(cc);
	}
	max_in = (uint64_t)KS_VS_COUNT * (tl->nr_reasons + 1) + tl->nr_names + tl->nr_vcpus + 1;
	in = malloc(max_in * sizeof(*in));
	used = malloc((tl->nr_names + 1) * sizeof(*used));
	vcpu_buf = malloc(((size_t)tl->nr_vcpus + 1) * 128);
	if (!in || !used || !vcpu_buf || names_build(tl, &n, vcpu_buf, 128) < 0 ||
	    ks_timeline_exit_rates(tl, &r) < 0)
		goto out;
	write_descriptors(&w, tl, max_cpu);
	for (i = 0; i < tl->nr_vcpus; i++) {
		state_track(&w, tl, &n, (uint32_t)i, in);
		if (tl->vms[tl->vcpus[i].vm].guest_input >= 0)
			task_track(&w, tl, &n, (uint32_t)i, in, used);
	}
	for (c = 0; c <= max_cpu; c++)
		cpu_track(&w, tl, &n, c, in);
	for (i = 0; i < tl->nr_vms; i++)
		rate_track(&w, tl, &r, (uint32_t)i);
	rc = w.oom ? -1 : 0;
out:
	ks_tl_rates_free(&r);
	names_free(&n);
	free(vcpu_buf);
	free(used);
	free(in);
	free(w.buf);
	return rc;
}
