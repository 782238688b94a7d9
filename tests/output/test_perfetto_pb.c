/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_perfetto_pb.c - the Perfetto protobuf output of `kvmscope timeline`
 * decodes back, with libprotobuf-c and the same schema, to exactly the
 * slices, instants and counters of the JSON output of the same timeline.
 *
 * For each shared recording (host alone, and host with its guest): the
 * timeline is built through the library, written both ways into memory;
 * the protobuf is unpacked as one Trace message, each sequence's
 * incremental clock and interned names are replayed, and every event
 * becomes a line "S pid tid ts dur name" (slice), "I pid tid ts name"
 * (instant) or "C pid ts value" (counter); the JSON's events (times in us
 * with 3 decimals, read back as ns) become the same lines.  The two sorted
 * lists must be equal, and not empty.  The protobuf must also be smaller
 * than a quarter of the JSON.  The same after ks_timeline_clip() to the
 * middle third of host + guest, whose vCPU times must be those of the
 * intervals inside the window.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/error.h"
#include "kvmscope/merge.h"
#include "kvmscope/timeline.h"
#include "../lib/ktest.h"
#include "perfetto_trace.pb-c.h"

struct lines {
	char **v;
	size_t n, cap;
};

static void add(struct lines *l, char *s)
{
	if (!s)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = s;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* ---- protobuf ---- */

struct track {
	uint64_t uuid;
	int32_t pid, tid;
	bool counter;
	uint64_t parent;
};

struct seq {
	uint32_t id;
	uint64_t track, clock;
	uint64_t *iid;
	char **name;
	size_t n;
	uint64_t open_ts[64];
	uint64_t open_iid[64];
	int depth;
};

static const struct track *find_track(const struct track *t, size_t n, uint64_t uuid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].uuid == uuid)
			return &t[i];
	return NULL;
}

static const char *iid_name(const struct seq *s, uint64_t iid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->iid[i] == iid)
			return s->name[i];
	return "?";
}

static int decode_pb(const uint8_t *buf, size_t len, struct lines *out)
{
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(NULL, len, buf);
	struct track tracks[4096];
	struct seq seqs[4096];
	size_t nt = 0, ns = 0, i, k;

	if (!tr)
		return -1;
	memset(seqs, 0, sizeof(seqs));
	for (i = 0; i < tr->n_packet; i++) {
		const Perfetto__Protos__TracePacket *p = tr->packet[i];
		const Perfetto__Protos__TrackDescriptor *d = p->track_descriptor;
		struct seq *s = NULL;

		if (d && nt < 4096) {
			struct track *t = &tracks[nt++];
			memset(t, 0, sizeof(*t));
			t->uuid = d->uuid;
			t->parent = d->has_parent_uuid ? d->parent_uuid : 0;
			t->counter = d->counter != NULL;
			if (d->thread) {
				t->pid = d->thread->pid;
				t->tid = d->thread->tid;
			} else if (d->process) {
				t->pid = d->process->pid;
			}
			continue;
		}
		for (k = 0; k < ns; k++)
			if (seqs[k].id == p->trusted_packet_sequence_id)
				s = &seqs[k];
		if (p->has_sequence_flags && (p->sequence_flags & 1)) { /* state cleared */
			if (!s && ns < 4096)
				s = &seqs[ns++];
			if (!s)
				return -1;
			s->id = p->trusted_packet_sequence_id;
			if (!p->trace_packet_defaults || !p->trace_packet_defaults->track_event_defaults ||
			    !p->clock_snapshot || p->clock_snapshot->n_clocks < 1 ||
			    !p->clock_snapshot->clocks[0]->is_incremental)
				return -1;
			s->track = p->trace_packet_defaults->track_event_defaults->track_uuid;
			s->clock = p->clock_snapshot->clocks[0]->timestamp;
			if (p->interned_data) {
				s->n = p->interned_data->n_event_names;
				s->iid = calloc(s->n + 1, sizeof(*s->iid));
				s->name = calloc(s->n + 1, sizeof(*s->name));
				for (k = 0; k < s->n; k++) {
					s->iid[k] = p->interned_data->event_names[k]->iid;
					s->name[k] = p->interned_data->event_names[k]->name;
				}
			}
			continue;
		}
		if (!s || !p->track_event)
			return -1;
		s->clock += p->timestamp; /* incremental clock */
		{
			const Perfetto__Protos__TrackEvent *e = p->track_event;
			const struct track *t = find_track(tracks, nt, e->has_track_uuid ? e->track_uuid
											 : s->track);
			const struct track *parent;

			if (!t)
				return -1;
			switch (e->type) {
			case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN:
				if (s->depth >= 64)
					return -1;
				s->open_ts[s->depth] = s->clock;
				s->open_iid[s->depth++] = e->name_iid;
				break;
			case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END:
				if (s->depth <= 0)
					return -1;
				s->depth--;
				add(out, fmt("S %d %d %llu %llu %s", t->pid, t->tid,
					     (unsigned long long)s->open_ts[s->depth],
					     (unsigned long long)(s->clock - s->open_ts[s->depth]),
					     iid_name(s, s->open_iid[s->depth])));
				break;
			case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT:
				add(out, fmt("I %d %d %llu %s", t->pid, t->tid,
					     (unsigned long long)s->clock, iid_name(s, e->name_iid)));
				break;
			case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER:
				parent = find_track(tracks, nt, t->parent);
				add(out, fmt("C %d %llu %lld", parent ? parent->pid : -1,
					     (unsigned long long)s->clock, (long long)e->counter_value));
				break;
			default:
				return -1;
			}
		}
	}
	for (k = 0; k < ns; k++) {
		free(seqs[k].iid);
		free(seqs[k].name);
	}
	perfetto__protos__trace__free_unpacked(tr, NULL);
	return 0;
}

/* ---- JSON (our own writer's layout: one object per event) ---- */

static const char *field(const char *obj, const char *end, const char *key)
{
	const char *p = memmem(obj, (size_t)(end - obj), key, strlen(key));

	return p ? p + strlen(key) : NULL;
}

/* "12.345" (us) -> 12345 ns */
static unsigned long long us_to_ns(const char *p)
{
	unsigned long long v = 0;
	int dec = -1;

	for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
		if (*p == '.') {
			dec = 0;
			continue;
		}
		v = v * 10 + (unsigned long long)(*p - '0');
		if (dec >= 0)
			dec++;
	}
	for (; dec < 3; dec = dec < 0 ? 1 : dec + 1)
		v *= 10;
	return v;
}

static int decode_json(const char *js, uint64_t first_ts, struct lines *out)
{
	const char *p = strstr(js, "\"traceEvents\":[");

	if (!p)
		return -1;
	p += strlen("\"traceEvents\":[");
	while (*p == '{') {
		const char *o = p, *e, *name, *ph, *q;
		int depth = 0;
		bool str = false;
		char nm[512];
		size_t n = 0;

		for (e = o; *e; e++) { /* the end of this object */
			if (str) {
				if (*e == '\\')
					e++;
				else if (*e == '"')
					str = false;
			} else if (*e == '"') {
				str = true;
			} else if (*e == '{') {
				depth++;
			} else if (*e == '}' && --depth == 0) {
				break;
			}
		}
		if (!*e)
			return -1;
		name = field(o, e, "\"name\":\"");
		ph = field(o, e, "\"ph\":\"");
		if (!name || !ph)
			return -1;
		for (q = name; *q && *q != '"' && n < sizeof(nm) - 1; q++) {
			if (*q == '\\')
				q++;
			nm[n++] = *q;
		}
		nm[n] = 0;
		if (*ph == 'X' || *ph == 'i') {
			int pid = atoi(field(o, e, "\"pid\":")), tid = atoi(field(o, e, "\"tid\":"));
			unsigned long long ts = first_ts + us_to_ns(field(o, e, "\"ts\":"));
			if (*ph == 'X')
				add(out, fmt("S %d %d %llu %llu %s", pid, tid, ts,
					     us_to_ns(field(o, e, "\"dur\":")), nm));
			else
				add(out, fmt("I %d %d %llu %s", pid, tid, ts, nm));
		} else if (*ph == 'C') {
			add(out, fmt("C %d %llu %lld", atoi(field(o, e, "\"pid\":")),
				     first_ts + us_to_ns(field(o, e, "\"ts\":")),
				     atoll(field(o, e, "\"exits/s\":"))));
		}
		p = e + 1;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Time of each vCPU's intervals inside [lo, hi): the clip's oracle. */
static uint64_t *overlap_per_vcpu(const struct ks_timeline *tl, uint64_t lo, uint64_t hi)
{
	uint64_t *t = calloc(tl->nr_vcpus + 1, sizeof(*t));
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	const struct ks_tl_interval *iv;

	while (t && (iv = ks_tl_cursor_next(c))) {
		uint64_t s = iv->start > lo ? iv->start : lo;
		uint64_t e = iv->end < hi ? iv->end : hi;
		if (s < e)
			t[iv->vcpu] += e - s;
	}
	ks_tl_cursor_free(c);
	return t;
}

/* HOST (and GUEST) as a timeline; with CLIP, limited to its middle third
 * first (ks_timeline_clip, --time), checked against the intervals before. */
static void check_clip(const char *host, const char *guest, bool clip)
{
	const char *specs[3] = { host, guest, NULL };
	struct ks_merge_opts opts = { 0 };
	struct ks_merge *m;
	struct ks_merge_rec r;
	struct ks_error err;
	struct ks_timeline *tl;
	char *pb = NULL, *js = NULL;
	size_t pb_len = 0, js_len = 0, i;
	struct lines a = { 0 }, b = { 0 };
	FILE *f;
	int rc;

	KT_REQUIRE(ks_merge_open(&m, specs, guest ? 2 : 1, &opts, &err) == 0);
	tl = ks_timeline_new(m);
	KT_REQUIRE(tl);
	while ((rc = ks_merge_next(m, &r, &err)) > 0)
		ks_timeline_feed(tl, &r);
	KT_EXPECT(rc == 0);
	ks_timeline_finish(tl);
	if (clip && tl->have_ts) {
		uint64_t third = (tl->last_ts - tl->first_ts) / 3, lo = tl->first_ts + third;
		uint64_t hi = tl->last_ts - third, *want = overlap_per_vcpu(tl, lo, hi);

		ks_timeline_clip(tl, lo, hi);
		KT_EQ_U64(tl->first_ts, lo);
		KT_EQ_U64(tl->last_ts, hi);
		for (i = 0; want && i < tl->nr_vcpus; i++) {
			uint64_t got = 0;
			for (int st = 0; st < KS_VS_COUNT; st++)
				got += tl->vcpus[i].state_ns[st];
			KT_EQ_U64(got, want[i]);
		}
		{
			struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
			const struct ks_tl_interval *iv;
			const struct ks_tl_cpu_slice *s;

			while ((iv = ks_tl_cursor_next(c)))
				KT_EXPECT(iv->start >= lo && iv->end <= hi);
			ks_tl_cursor_free(c);
			c = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
			while ((s = ks_tl_cursor_next(c)))
				KT_EXPECT(s->start >= lo && s->end <= hi);
			ks_tl_cursor_free(c);
		}
		for (i = 0; i < tl->nr_gevents; i++)
			KT_EXPECT(tl->gevents[i].start >= lo && tl->gevents[i].start < hi);
		free(want);
	}
	f = open_memstream(&pb, &pb_len);
	KT_EXPECT(ks_timeline_write_perfetto(tl, f) == 0);
	fclose(f);
	f = open_memstream(&js, &js_len);
	ks_timeline_write_json(tl, f);
	fclose(f);
	KT_EXPECT(decode_pb((const uint8_t *)pb, pb_len, &a) == 0);
	KT_EXPECT(decode_json(js, tl->first_ts, &b) == 0);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), str_cmp);
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), str_cmp);
	KT_EXPECT(b.n > 0 || tl->nr_iv == 0);
	KT_EQ_U64(a.n, b.n);
	for (i = 0; i < a.n && i < b.n; i++)
		if (strcmp(a.v[i], b.v[i])) {
			KT_EQ_STR(a.v[i], b.v[i]);
			break;
		}
	KT_EXPECT(pb_len * 4 <= js_len);
	printf("# %s%s%s: %zu events, protobuf %zu bytes, JSON %zu bytes\n", host,
	       guest ? " + guest" : "", clip ? " (middle third)" : "", a.n, pb_len, js_len);
	lines_free(&a);
	lines_free(&b);
	free(pb);
	free(js);
	ks_timeline_free(tl);
	ks_merge_close(m);
}

static void check(const char *host, const char *guest)
{
	check_clip(host, guest, false);
}

static void t_shared_recordings(void)
{
	static const char *const hosts[] = {
		"data/hip24/host-1vcpu-9k.trace.dat", "data/hip24/host-2vcpu-22k.trace.dat",
		"data/hip24/host-allkvm-rawtsc.trace.dat", "data/hip24/host-tsync.trace.dat",
		"data/kvm-formats-zstd.trace.dat", NULL,
	};
	int done = 0;
	char *guest;

	for (int i = 0; hosts[i]; i++) {
		char *host;
		const char *p = kt_shared(hosts[i]);

		if (!p)
			continue;
		host = strdup(p);
		check(host, NULL);
		done++;
		free(host);
	}
	if (!done) {
		kt_skip("no shared recordings");
		return;
	}
	guest = kt_shared("data/hip24/guest-tsync.trace.dat") ?
			strdup(kt_shared("data/hip24/guest-tsync.trace.dat")) : NULL;
	if (guest && kt_shared("data/hip24/host-tsync.trace.dat")) {
		char *host = strdup(kt_shared("data/hip24/host-tsync.trace.dat"));
		check(host, guest);
		free(host);
	}
	free(guest);
}

/* --time: the window's outputs agree too, and hold the window's time only */
static void t_clip(void)
{
	const char *p = kt_shared("data/hip24/host-tsync.trace.dat");
	char *host = p ? strdup(p) : NULL, *guest;

	p = kt_shared("data/hip24/guest-tsync.trace.dat"); /* static storage: copied */
	guest = p ? strdup(p) : NULL;
	if (!host || !guest) {
		kt_skip("hip24 tsync recordings are absent");
		free(host);
		free(guest);
		return;
	}
	check_clip(host, guest, true);
	free(host);
	free(guest);
}

int main(void)
{
	static const struct kt_case cases[] = { KT_CASE(t_shared_recordings), KT_CASE(t_clip),
						{ 0 } };
	return kt_main(cases);
}
