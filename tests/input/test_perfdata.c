/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_perfdata.c - tests of the perf.data reader (src/input/perfdata.c)
 * and of tracing_data.c.
 *
 * Oracles: files recorded at test time with perf (skipped when perf or
 * tracing permissions are missing), checked against `perf report
 * --header-only`, `perf script` and /sys/kernel/tracing formats; a
 * big-endian copy made by the byte swapper below must give the same
 * records; crafted files check perf 6.1's round ordering (against perf
 * script on the same file) and every error class.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "kvmscope/ctx.h"
#include "kvmscope/field.h"
#include "kvmscope/source.h"
#include "../lib/ktest.h"
#include "input/source_impl.h"
#include "input/tracing_data.h"

/* ---- helpers ---- */

static bool have_perf(void)
{
	int st = -1;
	char *out = kt_run("perf version 2>/dev/null", &st);
	bool ok = out && st == 0 && strstr(out, "perf version");

	free(out);
	return ok;
}

/* Run "perf ARGS" with "@" replaced by kt_tmpdir()/NAME, once per run;
 * returns the file, or NULL when perf is missing or the recording failed. */
static const char *record(const char *name, const char *args)
{
	static char path[8][4096];
	static int used;
	char cmd[8192];
	const char *at = strchr(args, '@');
	char *out;
	int st = -1, i;

	for (i = 0; i < used; i++)
		if (!strcmp(strrchr(path[i], '/') + 1, name))
			return path[i];
	if (!at || !have_perf() || used == 8)
		return NULL;
	snprintf(path[used], sizeof(path[used]), "%s/%s", kt_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "perf %.*s%s%s >/dev/null 2>&1", (int)(at - args), args,
		 path[used], at + 1);
	out = kt_run(cmd, &st);
	free(out);
	if (st != 0)
		return NULL;
	return path[used++];
}

struct recs {
	struct ks_record *r;
	char **names;     /* event name (or comm) per record */
	uint64_t *sums;   /* hash of the payload per record */
	uint64_t **chains;
	size_t n;
	struct ks_source_stats stats;
};

static void recs_free(struct recs *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(v->names[i]);
		free(v->chains[i]);
	}
	free(v->r);
	free(v->names);
	free(v->sums);
	free(v->chains);
	memset(v, 0, sizeof(*v));
}

/* FNV-1a of a payload. */
static uint64_t payload_sum(const void *data, uint32_t size)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	for (i = 0; i < size; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Read every record of PATH; returns the ks_source_next() result. */
static int read_all(const char *path, struct recs *v, struct ks_error *err)
{
	struct ks_source *src;
	struct ks_record rec;
	size_t cap = 0;
	int r;

	memset(v, 0, sizeof(*v));
	if (ks_perfdata_open(&src, path, NULL, err) < 0)
		return -1;
	while ((r = ks_source_next(src, &rec, err)) > 0) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 1024;
			v->r = realloc(v->r, cap * sizeof(*v->r));
			v->names = realloc(v->names, cap * sizeof(*v->names));
			v->sums = realloc(v->sums, cap * sizeof(*v->sums));
			v->chains = realloc(v->chains, cap * sizeof(*v->chains));
		}
		v->r[v->n] = rec;
		v->names[v->n] = strdup(rec.event ? rec.event->name : rec.comm ? rec.comm : "");
		v->sums[v->n] = payload_sum(rec.data, rec.size);
		v->chains[v->n] = NULL;
		if (rec.nr_callchain) {
			v->chains[v->n] = malloc(rec.nr_callchain * sizeof(uint64_t));
			memcpy(v->chains[v->n], rec.callchain, rec.nr_callchain * sizeof(uint64_t));
		}
		v->r[v->n].callchain = v->chains[v->n];
		v->r[v->n].data = NULL;
		v->r[v->n].comm = NULL;
		v->n++;
	}
	v->stats = *ks_source_stats(src);
	ks_source_close(src);
	return r;
}

/* "# KEY : VALUE" from perf report --header-only output. */
static bool header_value(const char *out, const char *key, char *val, size_t cap)
{
	char pat[128];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "# %s : ", key);
	p = strstr(out, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (p[n] && p[n] != '\n' && n + 1 < cap) {
		val[n] = p[n];
		n++;
	}
	while (n && val[n - 1] == ' ')
		n--;
	val[n] = 0;
	return true;
}

/* ---- header / features / tracing data vs perf report --header-only ---- */

static void t_kvm_header(void)
{
	const char *f = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	struct ks_source *src;
	struct ks_error err;
	const struct ks_source_info *info;
	char cmd[4200], val[256];
	char *out;
	int st;

	if (!f) {
		kt_skip("perf kvm stat record is not available here");
		return;
	}
	KT_REQUIRE(ks_perfdata_open(&src, f, NULL, &err) == 0);
	snprintf(cmd, sizeof(cmd), "perf report --header-only -i %s 2>/dev/null", f);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out);
	info = ks_source_info(src);
	KT_EQ_STR(info->format, "perf.data");
	KT_EQ_STR(info->clock, "perf");
	KT_EXPECT(!info->big_endian);
	if (header_value(out, "hostname", val, sizeof(val)))
		KT_EQ_STR(info->hostname, val);
	if (header_value(out, "os release", val, sizeof(val)))
		KT_EQ_STR(info->osrelease, val);
	KT_REQUIRE(header_value(out, "arch", val, sizeof(val)));
	KT_EQ_STR(info->arch, val);
	KT_REQUIRE(header_value(out, "cpuid", val, sizeof(val)));
	KT_EQ_STR(info->cpuid, val);
	KT_REQUIRE(header_value(out, "nrcpus avail", val, sizeof(val)));
	KT_EQ_INT(info->nr_cpus, atoi(val));
	free(out);
	ks_source_close(src);
}

/* Compare kvm:kvm_exit field offsets/sizes with the live tracefs format. */
static void t_kvm_tracing_data(void)
{
	const char *f = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	const char *fmt_path = "/sys/kernel/tracing/events/kvm/kvm_exit/format";
	struct ks_source *src;
	struct ks_error err;
	struct tep_event *ev;
	struct tep_format_field **fields;
	char *fmt, *line, *save = NULL;
	int checked = 0;

	if (!f) {
		kt_skip("perf kvm stat record is not available here");
		return;
	}
	fmt = kt_read_file(fmt_path, NULL);
	if (!fmt) {
		kt_skip("%s is not readable", fmt_path);
		return;
	}
	KT_REQUIRE(ks_perfdata_open(&src, f, NULL, &err) == 0);
	ev = tep_find_event_by_name(ks_source_tep(src), "kvm", "kvm_exit");
	KT_REQUIRE(ev);
	fields = tep_event_fields(ev);
	KT_REQUIRE(fields);
	for (line = strtok_r(fmt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char decl[256], *name;
		int off, size, i;

		if (sscanf(line, " field:%255[^;]; offset:%d; size:%d;", decl, &off, &size) != 3)
			continue;
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		if (strchr(name, '['))
			*strchr(name, '[') = 0;
		if (!strncmp(name, "common_", 7))
			continue;
		for (i = 0; fields[i]; i++) {
			if (!strcmp(fields[i]->name, name)) {
				KT_EQ_INT(fields[i]->offset, off);
				KT_EQ_INT(fields[i]->size, size);
				checked++;
			}
		}
	}
	KT_EXPECT(checked >= 5);
	/* the attr of kvm_exit found its format once: attr config == event id */
	KT_EXPECT(tep_find_event(ks_source_tep(src), ev->id) == ev);
	free(fields);
	free(fmt);
	ks_source_close(src);
}

/* The kvm file has COMM records and as many samples as perf script shows
 * (none on a host without running guests; some while a KVM guest runs). */
static void t_kvm_records(void)
{
	const char *f = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	struct recs v;
	struct ks_error err;
	size_t i, comms = 0, events = 0;
	char cmd[4200], *out;
	int st;

	if (!f) {
		kt_skip("perf kvm stat record is not available here");
		return;
	}
	KT_REQUIRE(read_all(f, &v, &err) == 0);
	for (i = 0; i < v.n; i++) {
		comms += v.r[i].type == KS_REC_COMM;
		events += v.r[i].type == KS_REC_EVENT;
	}
	KT_EXPECT(comms > 0);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F tid 2>/dev/null | wc -l", f);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out && st == 0);
	KT_EQ_U64(events, strtoull(out, NULL, 10));
	free(out);
	recs_free(&v);
}

/* ---- samples vs perf script ---- */

struct script_line {
	int tid, cpu;
	uint64_t ts;
	char event[64];
};

static size_t parse_script(char *out, struct script_line **lines)
{
	size_t n = 0, cap = 0;
	char *line, *save = NULL;

	*lines = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct script_line l;
		unsigned long long sec, nsec;

		if (sscanf(line, " %d [%d] %llu.%llu: %63[^: ]:%*[^:]:", &l.tid, &l.cpu, &sec,
			   &nsec, l.event) != 5)
			continue;
		{
			/* event is "sys:name:"; keep the name */
			char *c = strstr(line, "]");
			char sys_name[128];

			c = strchr(c, ':');
			if (!c || sscanf(c + 1, " %127[^ ]", sys_name) != 1)
				continue;
			sys_name[strlen(sys_name) - 1] = 0;
			snprintf(l.event, sizeof(l.event), "%s", strchr(sys_name, ':') ?
				 strchr(sys_name, ':') + 1 : sys_name);
		}
		l.ts = sec * 1000000000ull + nsec;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			*lines = realloc(*lines, cap * sizeof(**lines));
		}
		(*lines)[n++] = l;
	}
	return n;
}

static void compare_with_script(const char *f)
{
	struct recs v;
	struct ks_error err;
	struct script_line *lines;
	char cmd[4200];
	char *out;
	size_t n, i, k = 0, bad = 0;
	int st;

	KT_REQUIRE(read_all(f, &v, &err) == 0);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F tid,cpu,time,event --ns 2>/dev/null", f);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out && st == 0);
	n = parse_script(out, &lines);
	KT_EXPECT(n > 0);
	for (i = 0; i < v.n; i++) {
		if (v.r[i].type != KS_REC_EVENT)
			continue;
		if (k < n && (v.r[i].tid != lines[k].tid || v.r[i].cpu != lines[k].cpu ||
			      v.r[i].ts != lines[k].ts || strcmp(v.names[i], lines[k].event))) {
			if (!bad++)
				kt_fail(__FILE__, __LINE__, "sample %zu: %d [%d] %llu %s, perf: %d [%d] %llu %s",
					k, v.r[i].tid, v.r[i].cpu, (unsigned long long)v.r[i].ts,
					v.names[i], lines[k].tid, lines[k].cpu,
					(unsigned long long)lines[k].ts, lines[k].event);
		}
		k++;
	}
	KT_EQ_U64(k, n);
	KT_EQ_U64(bad, 0);
	free(lines);
	free(out);
	recs_free(&v);
}

static void t_sched_samples(void)
{
	const char *f = record("sched.data", "record -e sched:sched_switch -e sched:sched_wakeup "
				"-a -o @ sleep 0.3");

	if (!f) {
		kt_skip("perf record of sched tracepoints is not available here");
		return;
	}
	compare_with_script(f);
}

/* Raw callchains vs the "FP chain" dump of perf script -D (printed when
 * each sample is delivered, so in delivery order). */
static void t_callchains(void)
{
	const char *f = record("cc.data", "record -g -e cpu-clock -F 999 -o @ -- sh -c "
				"'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'");
	struct recs v;
	struct ks_error err;
	char cmd[4200];
	char *out, *line, *save = NULL;
	size_t i = 0, j = 0, chains = 0, entries = 0, bad = 0;
	int st;

	if (!f) {
		kt_skip("perf record -g is not available here");
		return;
	}
	KT_REQUIRE(read_all(f, &v, &err) == 0);
	snprintf(cmd, sizeof(cmd), "perf script -D -i %s 2>/dev/null | "
		 "grep -E '(chain: nr:|^\\.\\.\\.\\.\\. +[0-9]+: )'", f);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long nr, val;
		unsigned idx;

		if (sscanf(line, "... FP chain: nr:%llu", &nr) == 1) {
			while (i < v.n && v.r[i].type != KS_REC_EVENT)
				i++;
			if (i == v.n || v.r[i].nr_callchain != nr)
				bad++;
			chains++;
			j = i++;
			continue;
		}
		if (sscanf(line, "..... %u: %llx", &idx, &val) == 2 && j < v.n &&
		    idx < v.r[j].nr_callchain) {
			entries++;
			if (v.r[j].callchain[idx] != val)
				bad++;
		}
	}
	KT_EXPECT(chains > 0);
	KT_EXPECT(entries >= chains);
	while (i < v.n && v.r[i].type != KS_REC_EVENT)
		i++;
	KT_EQ_U64(i, v.n); /* no sample left over */
	KT_EQ_U64(bad, 0);
	free(out);
	recs_free(&v);
}

/* ---- crafted files ---- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

static void rec_header(struct buf *b, uint32_t type, uint16_t size)
{
	uint16_t misc = 0;

	put32(b, type);
	put(b, &misc, 2);
	put(b, &size, 2);
}

#define ST_SW (1u << 0 | 1u << 1 | 1u << 2 | 1u << 7 | 1u << 8) /* IP TID TIME CPU PERIOD */

/* A software-event sample with IP|TID|TIME|CPU|PERIOD. */
static void sw_sample(struct buf *b, uint32_t tid, uint64_t ts, uint32_t cpu)
{
	rec_header(b, 9, 8 + 40);
	put64(b, 0x1000 + ts % 97);
	put32(b, tid);
	put32(b, tid);
	put64(b, ts);
	put32(b, cpu);
	put32(b, 0);
	put64(b, 1);
}

static void finished_round(struct buf *b)
{
	rec_header(b, 68, 8);
}

/* Write header + one cpu-clock attr + DATA to PATH.  ATTR_SIZE/SAMPLE_TYPE
 * are those of the attr; features: NRCPUS = 4. */
static void write_perf_file(const char *path, const struct buf *data, uint64_t sample_type,
			    bool with_features)
{
	struct buf f = { 0 };
	uint8_t attr[128] = { 0 };
	uint64_t attr_off = 104, attr_size = 128 + 16, data_off = attr_off + attr_size;
	uint64_t feat_off = data_off + data->n, v;
	uint32_t u;
	FILE *fp;

	put(&f, "PERFILE2", 8);
	put64(&f, 104);
	put64(&f, attr_size);
	put64(&f, attr_off);
	put64(&f, attr_size);
	put64(&f, data_off);
	put64(&f, data->n);
	put64(&f, 0);
	put64(&f, 0);
	put64(&f, with_features ? 1ull << 7 : 0); /* HEADER_NRCPUS */
	put64(&f, 0);
	put64(&f, 0);
	put64(&f, 0);
	u = 1; /* PERF_TYPE_SOFTWARE, cpu-clock */
	memcpy(attr, &u, 4);
	u = 128;
	memcpy(attr + 4, &u, 4);
	memcpy(attr + 24, &sample_type, 8);
	v = 1ull << 18; /* sample_id_all */
	memcpy(attr + 40, &v, 8);
	put(&f, attr, 128);
	put64(&f, 0); /* no ids */
	put64(&f, 0);
	put(&f, data->p, data->n);
	if (with_features) {
		put64(&f, feat_off + 16);
		put64(&f, 8);
		put32(&f, 4);
		put32(&f, 4);
	}
	fp = fopen(path, "wb");
	fwrite(f.p, 1, f.n, fp);
	fclose(fp);
	free(f.p);
}

/* kt_tmpdir()/NAME; the string stays valid for the next 7 calls. */
static const char *tmp_path(const char *name)
{
	static char p[8][4096];
	static unsigned k;
	char *r = p[k++ % 8];

	snprintf(r, 4096, "%s/%s", kt_tmpdir(), name);
	return r;
}

static void check_order_against_perf(const char *path, size_t expected);

/* Rounds of per-CPU sorted chunks, samples late by one or two rounds,
 * equal timestamps, untimed (ts 0) samples and empty rounds: our order and
 * out-of-order count must equal perf's on the same file. */
static void t_round_ordering(void)
{
	struct buf d = { 0 };
	const char *path = tmp_path("rounds.data");
	unsigned seed = 7;
	uint64_t base = 1000000, late[64];
	size_t r, c, i, nlate = 0, tid = 100;

	for (r = 0; r < 40; r++) {
		for (c = 0; c < 3; c++) {
			uint64_t t = base + c * 7;
			size_t k, cnt;

			seed = seed * 1103515245 + 12345;
			cnt = (seed >> 8) % 9;
			for (k = 0; k < cnt; k++) {
				seed = seed * 1103515245 + 12345;
				t += (seed >> 10) % 4 == 0 ? 0 : (seed >> 12) % 300;
				if ((seed >> 16) % 23 == 0 && nlate < 64)
					late[nlate++] = t;   /* written one round later */
				else
					sw_sample(&d, (uint32_t)tid++, (seed >> 20) % 31 == 0 ? 0 : t,
						  (uint32_t)c);
			}
		}
		for (i = 0; i < nlate && r % 2; i++)
			sw_sample(&d, (uint32_t)tid++, late[i], 3);
		if (r % 2)
			nlate = 0;
		finished_round(&d);
		if (r % 7 == 3)
			finished_round(&d);          /* an empty round */
		base += 1000;
	}
	write_perf_file(path, &d, ST_SW, true);
	free(d.p);
	check_order_against_perf(path, tid - 100);
}

static void check_order_against_perf(const char *path, size_t expected)
{
	struct recs v;
	struct ks_error err;
	char cmd[4200];
	char *out;
	struct script_line *lines;
	size_t i, n;

	KT_REQUIRE(read_all(path, &v, &err) == 0);
	KT_EQ_U64(v.n, expected);
	if (!have_perf()) {
		kt_skip("perf is missing: ordering not compared");
		recs_free(&v);
		return;
	}
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F tid,cpu,time,event --ns 2>/dev/null",
		 path);
	out = kt_run(cmd, NULL);
	KT_REQUIRE(out);
	n = parse_script(out, &lines);
	KT_EQ_U64(n, v.n);
	for (i = 0; i < n && i < v.n; i++) {
		KT_EQ_INT(v.r[i].tid, lines[i].tid);
		KT_EQ_U64(v.r[i].ts, lines[i].ts);
	}
	/* perf report warns "N out of order events recorded." */
	free(out);
	snprintf(cmd, sizeof(cmd), "perf report --stdio -i %s 2>&1 >/dev/null | "
		 "sed -n 's/^\\([0-9]*\\) out of order events.*/\\1/p'", path);
	out = kt_run(cmd, NULL);
	KT_REQUIRE(out);
	KT_EQ_U64(v.stats.out_of_order, strtoull(out, NULL, 10));
	KT_EXPECT(v.stats.out_of_order > 0);
	free(out);
	free(lines);
	recs_free(&v);
}

/* ---- byte swapper: a big-endian copy of a little-endian perf.data ---- */

struct swapper {
	uint8_t *p;
	size_t n;
	struct tep_handle *tep;
	uint64_t sample_type[64];
	uint32_t attr_type[64];
	uint64_t attr_config[64];
	bool sample_id_all;
	int nr_attrs;
	uint64_t ids[4096];
	int id_attr[4096];
	int nr_ids;
};

static int swapper_attr(const struct swapper *w, uint64_t id)
{
	int i;

	for (i = 0; i < w->nr_ids; i++)
		if (w->ids[i] == id)
			return w->id_attr[i];
	return 0;
}

static void sw16(uint8_t *p) { uint16_t v; memcpy(&v, p, 2); v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static void sw32(uint8_t *p) { uint32_t v; memcpy(&v, p, 4); v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static void sw64(uint8_t *p) { uint64_t v; memcpy(&v, p, 8); v = __builtin_bswap64(v); memcpy(p, &v, 8); }
static uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static void swap_attr(uint8_t *a)
{
	static const int u64s[] = { 8, 16, 24, 32, 56, 64, 72, 80, 96, 120 };
	uint64_t flags = le64(a + 40), rev = 0;
	size_t i;

	sw32(a);
	sw32(a + 4);
	for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
		sw64(a + u64s[i]);
	for (i = 0; i < 64; i++)   /* big-endian bitfields start at the top bit */
		if (flags >> i & 1)
			rev |= 1ull << (63 - i);
	rev = __builtin_bswap64(rev);
	memcpy(a + 40, &rev, 8);
	sw32(a + 48);
	sw32(a + 52);
	sw32(a + 88);
	sw32(a + 92);
	sw32(a + 104);
	sw16(a + 108);
	sw32(a + 112);
}

/* Swap the scalar fields of a tracepoint payload. */
static void swap_payload(struct swapper *w, uint64_t config, uint8_t *d, uint32_t size)
{
	struct tep_event *ev = tep_find_event(w->tep, (int)config);
	struct tep_format_field *f;
	int pass;

	if (!ev)
		return;
	for (pass = 0; pass < 2; pass++) {
		f = pass ? ev->format.fields : ev->format.common_fields;
		for (; f; f = f->next) {
			if ((f->flags & TEP_FIELD_IS_ARRAY) && !(f->flags & TEP_FIELD_IS_DYNAMIC))
				continue;
			if ((uint32_t)f->offset + (uint32_t)f->size > size)
				continue;
			if (f->size == 2)
				sw16(d + f->offset);
			else if (f->size == 4)
				sw32(d + f->offset);
			else if (f->size == 8)
				sw64(d + f->offset);
		}
	}
}

static void swap_sample(struct swapper *w, uint8_t *p, uint8_t *end)
{
	int a = 0;
	uint64_t t, nr, i;

	if (w->nr_attrs > 1 && (w->sample_type[0] & (1u << 16)))
		a = swapper_attr(w, le64(p));
	t = w->sample_type[a];
	if (t & (1u << 16)) { sw64(p); p += 8; }
	if (t & (1u << 0)) { sw64(p); p += 8; }
	if (t & (1u << 1)) { sw32(p); sw32(p + 4); p += 8; }
	if (t & (1u << 2)) { sw64(p); p += 8; }
	if (t & (1u << 3)) { sw64(p); p += 8; }
	if (t & (1u << 6)) { sw64(p); p += 8; }
	if (t & (1u << 9)) { sw64(p); p += 8; }
	if (t & (1u << 7)) { sw32(p); sw32(p + 4); p += 8; }
	if (t & (1u << 8)) { sw64(p); p += 8; }
	if (t & (1u << 5)) {
		nr = le64(p);
		for (i = 0; i <= nr && p + 8 <= end; i++, p += 8)
			sw64(p);
	}
	if (t & (1u << 10)) {
		uint32_t size = le32(p);

		sw32(p);
		swap_payload(w, w->attr_config[a], p + 4, size);
	}
}

static void swap_trailer(struct swapper *w, uint8_t *end)
{
	uint64_t t = w->sample_type[0];
	int n = __builtin_popcountll(t & ((1u << 1) | (1u << 2) | (1u << 6) | (1u << 9) |
					  (1u << 7) | (1u << 16)));
	uint8_t *p = end - 8 * n;

	if (!w->sample_id_all)
		return;
	if (t & (1u << 1)) { sw32(p); sw32(p + 4); p += 8; }
	if (t & (1u << 2)) { sw64(p); p += 8; }
	if (t & (1u << 6)) { sw64(p); p += 8; }
	if (t & (1u << 9)) { sw64(p); p += 8; }
	if (t & (1u << 7)) { sw32(p); sw32(p + 4); p += 8; }
	if (t & (1u << 16)) { sw64(p); p += 8; }
}

static void swap_record(struct swapper *w, uint8_t *p)
{
	uint32_t type = le32(p);
	uint16_t size = le16(p + 6);
	uint8_t *end = p + size;
	uint64_t i, nr;

	sw32(p);
	sw16(p + 4);
	sw16(p + 6);
	if (type == 9) {
		swap_sample(w, p + 8, end);
		return;
	}
	if (type >= 64) {
		if (type == 69) { /* ID_INDEX: all u64 */
			nr = le64(p + 8);
			for (i = 0; i < 1 + 4 * nr; i++)
				sw64(p + 8 + 8 * i);
		}
		return;
	}
	if (type == 3) { sw32(p + 8); sw32(p + 12); }
	if (type == 4 || type == 7) { sw32(p + 8); sw32(p + 12); sw32(p + 16); sw32(p + 20); sw64(p + 24); }
	if (type == 2) { sw64(p + 8); sw64(p + 16); }
	if (type == 13) sw64(p + 8);
	swap_trailer(w, end);
}

/* The tracing data block: numbers to big-endian, endian byte = 1. */
static void swap_tracing(uint8_t *p)
{
	uint32_t i, j, count, systems;
	uint8_t *q;

	q = p + 10;
	q += strlen((char *)q) + 1;
	q[0] = 1;
	q += 2;
	sw32(q); q += 4;                           /* page size */
	q += 12;
	{
		uint64_t size = le64(q);

		sw64(q); q += 8 + size;            /* header_page */
		q += 13;
		size = le64(q);
		sw64(q); q += 8 + size;            /* header_event */
	}
	count = le32(q);
	sw32(q); q += 4;
	for (i = 0; i < count; i++) {
		uint64_t size = le64(q);

		sw64(q); q += 8 + size;
	}
	systems = le32(q);
	sw32(q); q += 4;
	for (i = 0; i < systems; i++) {
		q += strlen((char *)q) + 1;
		count = le32(q);
		sw32(q); q += 4;
		for (j = 0; j < count; j++) {
			uint64_t size = le64(q);

			sw64(q); q += 8 + size;
		}
	}
	count = le32(q); sw32(q); q += 4 + count;  /* kallsyms */
	count = le32(q); sw32(q); q += 4 + count;  /* printk */
	sw64(q);                                   /* saved cmdlines size */
}

static void swap_features(struct swapper *w, uint64_t table, const uint64_t *bits)
{
	int feat;

	for (feat = 1; feat < 256; feat++) {
		uint64_t off, size;

		if (!(bits[feat / 64] >> (feat % 64) & 1))
			continue;
		off = le64(w->p + table);
		size = le64(w->p + table + 8);
		sw64(w->p + table);
		sw64(w->p + table + 8);
		table += 16;
		if (feat == 1)
			swap_tracing(w->p + off);
		else if (feat == 3 || feat == 4 || feat == 6 || feat == 9 || feat == 5 ||
			 feat == 8 || feat == 11)
			sw32(w->p + off);          /* string length (cmdline: count) */
		else if (feat == 7) {
			sw32(w->p + off);
			sw32(w->p + off + 4);
		} else if (feat == 21) {
			sw64(w->p + off);
			sw64(w->p + off + 8);
		}
		(void)size;
	}
}

/* Make SRC's big-endian twin at DST (SRC must be little-endian, one
 * tracepoint attr or software attrs, all attrs with the same sample_type). */
static int swap_file(const char *src, const char *dst)
{
	static struct swapper w;

	struct ks_source *s;
	struct ks_error err;
	uint64_t attr_size, attrs_off, attrs_size, data_off, data_size, bits[4], off;
	int i;
	FILE *fp;

	memset(&w, 0, sizeof(w));
	if (ks_perfdata_open(&s, src, NULL, &err) < 0)
		return -1;
	w.tep = ks_source_tep(s);
	w.p = (uint8_t *)kt_read_file(src, &w.n);
	attr_size = le64(w.p + 16);
	attrs_off = le64(w.p + 24);
	attrs_size = le64(w.p + 32);
	data_off = le64(w.p + 40);
	data_size = le64(w.p + 48);
	for (i = 0; i < 4; i++)
		bits[i] = le64(w.p + 72 + 8 * i);
	w.nr_attrs = (int)(attrs_size / attr_size);
	for (i = 0; i < w.nr_attrs && i < 64; i++) {
		uint8_t *a = w.p + attrs_off + i * attr_size;
		uint64_t ids_off = le64(a + attr_size - 16), ids_size = le64(a + attr_size - 8), j;

		w.attr_type[i] = le32(a);
		w.attr_config[i] = le64(a + 8);
		w.sample_type[i] = le64(a + 24);
		if (i == 0)
			w.sample_id_all = le64(a + 40) >> 18 & 1;
		for (j = 0; j < ids_size / 8; j++) {
			if (w.nr_ids < 4096) {
				w.ids[w.nr_ids] = le64(w.p + ids_off + 8 * j);
				w.id_attr[w.nr_ids++] = i;
			}
			sw64(w.p + ids_off + 8 * j);
		}
		sw64(a + attr_size - 16);
		sw64(a + attr_size - 8);
		swap_attr(a);
	}
	for (off = data_off; off < data_off + data_size;) {
		uint16_t size = le16(w.p + off + 6);

		swap_record(&w, w.p + off);
		off += size;
	}
	swap_features(&w, data_off + data_size, bits);
	memcpy(w.p, "2ELIFREP", 8);
	for (i = 1; i < 13; i++)
		sw64(w.p + 8 * i);
	fp = fopen(dst, "wb");
	fwrite(w.p, 1, w.n, fp);
	fclose(fp);
	free(w.p);
	ks_source_close(s);
	return 0;
}

/* Compare two sources record by record, tracepoint fields included. */
static void compare_sources(struct ks_source *a, struct ks_source *b)
{
	struct ks_record ra, rb;
	struct ks_error err;
	uint64_t n = 0, bad = 0, fields = 0;
	int x, y;

	for (;;) {
		x = ks_source_next(a, &ra, &err);
		y = ks_source_next(b, &rb, &err);
		KT_EQ_INT(x, y);
		if (x <= 0 || y <= 0)
			break;
		n++;
		if (ra.type != rb.type || ra.ts != rb.ts || ra.cpu != rb.cpu || ra.tid != rb.tid ||
		    ra.pid != rb.pid || ra.ip != rb.ip || ra.period != rb.period || ra.id != rb.id ||
		    ra.misc != rb.misc || ra.size != rb.size || ra.lost != rb.lost ||
		    ra.ppid != rb.ppid || ra.ptid != rb.ptid || ra.offset != rb.offset ||
		    ra.nr_callchain != rb.nr_callchain || !ra.event != !rb.event ||
		    (ra.nr_callchain && memcmp(ra.callchain, rb.callchain, 8 * ra.nr_callchain)) ||
		    (ra.comm && (!rb.comm || strcmp(ra.comm, rb.comm))) ||
		    (ra.event && strcmp(ra.event->name, rb.event->name)))
			bad++;
		if (ra.event && rb.event) {
			struct tep_format_field *f;
			int pass;

			for (pass = 0; pass < 2; pass++) {
				f = pass ? ra.event->format.fields : ra.event->format.common_fields;
				for (; f; f = f->next) {
					struct ks_field fa, fb;

					if (ks_field_resolve(&fa, ra.event, f->name) < 0 ||
					    ks_field_resolve(&fb, rb.event, f->name) < 0)
						continue;
					fields++;
					if (ks_field_u64(&fa, &ra) != ks_field_u64(&fb, &rb))
						bad++;
				}
			}
		}
	}
	KT_EXPECT(n > 0);
	KT_EQ_U64(bad, 0);
	printf("# compared %llu records, %llu tracepoint field values\n",
	       (unsigned long long)n, (unsigned long long)fields);
}

static void check_swapped(const char *f, const char *name)
{
	const char *dst = tmp_path(name);
	char copy[4096];
	struct ks_source *a, *b;
	struct ks_error err;

	snprintf(copy, sizeof(copy), "%s", dst);
	KT_REQUIRE(swap_file(f, copy) == 0);
	KT_REQUIRE(ks_perfdata_open(&a, f, NULL, &err) == 0);
	if (ks_perfdata_open(&b, copy, NULL, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "swapped copy: %s", err.msg);
		ks_source_close(a);
		return;
	}
	KT_EXPECT(ks_source_info(b)->big_endian);
	KT_EQ_STR(ks_source_info(b)->cpuid, ks_source_info(a)->cpuid);
	KT_EQ_STR(ks_source_info(b)->hostname, ks_source_info(a)->hostname);
	KT_EQ_INT(ks_source_info(b)->nr_cpus, ks_source_info(a)->nr_cpus);
	KT_EXPECT(tep_is_file_bigendian(ks_source_tep(b)));
	compare_sources(a, b);
	ks_source_close(a);
	ks_source_close(b);
}

static void t_swapped_sched(void)
{
	const char *f = record("sched.data", "record -e sched:sched_switch -e sched:sched_wakeup "
				"-a -o @ sleep 0.3");

	if (!f) {
		kt_skip("perf record of sched tracepoints is not available here");
		return;
	}
	check_swapped(f, "sched-be.data");
}

static void t_swapped_callchains(void)
{
	const char *f = record("cc.data", "record -g -e cpu-clock -F 999 -o @ -- sh -c "
				"'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'");

	if (!f) {
		kt_skip("perf record -g is not available here");
		return;
	}
	check_swapped(f, "cc-be.data");
}

static void t_swapped_crafted(void)
{
	struct buf d = { 0 };
	const char *path = tmp_path("crafted-le.data");
	char le[4096];
	int i;

	for (i = 0; i < 50; i++) {
		sw_sample(&d, (uint32_t)(10 + i % 7), 1000 + (uint64_t)(i * 37 % 101), (uint32_t)(i % 4));
		if (i % 10 == 9)
			finished_round(&d);
	}
	snprintf(le, sizeof(le), "%s", path);
	write_perf_file(le, &d, ST_SW, true);
	free(d.p);
	check_swapped(le, "crafted-be.data");
}

/* ---- tracing data block on its own ---- */

/* The TRACING_DATA feature section of a little-endian perf.data. */
static uint8_t *tracing_block(const char *f, size_t *len, uint64_t *off)
{
	size_t n;
	uint8_t *p = (uint8_t *)kt_read_file(f, &n);
	uint64_t table, bits;
	uint8_t *blk;

	if (!p || n < 104)
		return free(p), NULL;
	bits = le64(p + 72);
	table = le64(p + 40) + le64(p + 48);
	if (!(bits & 2) || table + 16 > n)
		return free(p), NULL;
	*off = le64(p + table);
	*len = le64(p + table + 8);
	if (*off + *len > n)
		return free(p), NULL;
	blk = malloc(*len);
	memcpy(blk, p + *off, *len);
	free(p);
	return blk;
}

static void t_tracing_data_block(void)
{
	const char *f = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	struct tep_handle *tep;
	struct ks_error err;
	uint64_t off, used = 0, cut;
	size_t len;
	uint8_t *blk;
	int fails = 0, tries = 0;

	if (!f) {
		kt_skip("perf kvm stat record is not available here");
		return;
	}
	blk = tracing_block(f, &len, &off);
	KT_REQUIRE(blk);
	tep = tep_alloc();
	KT_EQ_INT(ks_tracing_data_parse_len(NULL, tep, blk, len, f, off, &used, &err), 0);
	KT_EQ_U64(used, len);  /* perf writes exactly the block */
	KT_EXPECT(tep_find_event_by_name(tep, "kvm", "kvm_entry") != NULL);
	KT_EQ_INT(tep_get_long_size(tep), 8);
	tep_free(tep);
	/* every truncation is an error with the file offset, never a crash */
	for (cut = 0; cut < len; cut += 1 + cut / 3) {
		tep = tep_alloc();
		tries++;
		if (ks_tracing_data_parse(NULL, tep, blk, cut, f, off, &err) < 0 && strstr(err.msg, "offset"))
			fails++;
		tep_free(tep);
	}
	KT_EQ_INT(fails, tries);
	/* a corrupt size field */
	blk[len / 2] ^= 0x5a;
	memset(blk + 10 + 4 + 2 + 4 + 12, 0xff, 8); /* header_page size */
	tep = tep_alloc();
	KT_EXPECT(ks_tracing_data_parse(NULL, tep, blk, len, f, off, &err) < 0);
	KT_EXPECT(strstr(err.msg, "tracing data") != NULL);
	tep_free(tep);
	free(blk);
}

/* A tracing data block (version 0.6, little endian) whose one format,
 * kvm:kvm_exit, has NFIELDS fields: LEN bytes, the format at *AT. */
static uint8_t *fields_block(uint32_t nfields, size_t *len, uint64_t *at)
{
	static const char page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				   "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				   "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	size_t cap = 4096 + (size_t)nfields * 64, n = 0, fmt_at;
	uint8_t *b = malloc(cap);
	uint64_t v64;
	uint32_t v32, i;

#define PUT(p, k) (memcpy(b + n, (p), (k)), n += (k))
	PUT("\027\010\104tracing", 10);
	PUT("0.6", 4);
	PUT("\0\010", 2);
	v32 = 4096, PUT(&v32, 4);
	PUT("header_page", 12);
	v64 = sizeof(page) - 1, PUT(&v64, 8);
	PUT(page, sizeof(page) - 1);
	PUT("header_event", 13);
	v64 = 0, PUT(&v64, 8);
	v32 = 0, PUT(&v32, 4); /* ftrace formats */
	v32 = 1, PUT(&v32, 4); /* systems */
	PUT("kvm", 4);
	v32 = 1, PUT(&v32, 4);
	fmt_at = n;
	n += 8;
	*at = n;
	n += (size_t)sprintf((char *)b + n, "name: kvm_exit\nID: 5\nformat:\n");
	for (i = 0; i < nfields; i++)
		n += (size_t)sprintf((char *)b + n, "\tfield:unsigned int f%u;\toffset:%u;\tsize:4;\tsigned:0;\n",
				     i, 8 + 4 * (i % 1000));
	n += (size_t)sprintf((char *)b + n, "\nprint fmt: \"%%u\", REC->f0\n");
	v64 = n - *at, memcpy(b + fmt_at, &v64, 8);
	v32 = 0, PUT(&v32, 4); /* kallsyms */
	PUT(&v32, 4);          /* printk formats */
	v64 = 0, PUT(&v64, 8); /* saved cmdlines */
#undef PUT
	*len = n;
	return b;
}

/* libtraceevent keeps ~150 bytes per field it parses: a format's fields
 * are counted from its text before it is parsed, and a format of 200,000
 * fields (12 MB of text: 30 MB parsed; a 154 MB one took 529 MB) is
 * refused naming the event, its fields and the limit, at its offset.  A
 * format of 4,096 fields still parses. */
static void t_tracing_data_fields(void)
{
	struct tep_handle *tep = tep_alloc();
	struct ks_error err;
	uint64_t at;
	size_t len;
	uint8_t *blk = fields_block(200000, &len, &at);
	char want[160];

	KT_EXPECT(ks_tracing_data_parse(NULL, tep, blk, len, "td", 1000, &err) < 0);
	snprintf(want, sizeof(want), "td: offset %llu: format of kvm_exit has 200000 fields (limit 4096)",
		 (unsigned long long)(at + 1000));
	KT_EQ_STR(err.msg, want);
	KT_EXPECT(tep_find_event_by_name(tep, "kvm", "kvm_exit") == NULL);
	tep_free(tep);
	free(blk);
	tep = tep_alloc();
	blk = fields_block(4096, &len, &at);
	KT_EQ_INT(ks_tracing_data_parse(NULL, tep, blk, len, "td", 0, &err), 0);
	KT_EXPECT(tep_find_event_by_name(tep, "kvm", "kvm_exit") != NULL);
	tep_free(tep);
	free(blk);
}

/* Saved cmdlines end a tracing data block from version 0.6 on, as perf
 * reads it (trace-event-read.c: atof(version) >= 0.6; trace.dat v6 writes
 * "6"): the block of each version, followed by 8 bytes (a cmdlines size
 * of 0), is that long or 8 bytes shorter. */
static void t_tracing_data_version(void)
{
	static const char *const versions[] = { "0.5", "0.6", "6", "7", "0.10", "0.59", "1.", "0" };

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		uint8_t b[256];
		size_t n = 0, vlen = strlen(versions[i]) + 1;
		struct tep_handle *tep = tep_alloc();
		struct ks_error err;
		uint64_t used = 0, v64 = 0;
		uint32_t v32 = 4096;

		KT_REQUIRE(tep);
#define PUT(p, k) (memcpy(b + n, (p), (k)), n += (k))
		PUT("\027\010\104tracing", 10);
		PUT(versions[i], vlen);
		PUT("\0\010", 2);
		PUT(&v32, 4);
		PUT("header_page", 12);
		PUT(&v64, 8);
		PUT("header_event", 13);
		PUT(&v64, 8);
		v32 = 0;
		PUT(&v32, 4); /* ftrace formats */
		PUT(&v32, 4); /* systems */
		PUT(&v32, 4); /* kallsyms */
		PUT(&v32, 4); /* printk formats */
		PUT(&v64, 8); /* saved cmdlines, if the version has them */
#undef PUT
		KT_EQ_INT(ks_tracing_data_parse_len(NULL, tep, b, n, "td", 0, &used, &err), 0);
		if (used != (atof(versions[i]) >= 0.6 ? n : n - 8))
			kt_fail(__FILE__, __LINE__, "version \"%s\": %llu bytes of %zu", versions[i],
				(unsigned long long)used, n);
		tep_free(tep);
	}
}

/* ---- error classes ---- */

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *fp = fopen(path, "wb");

	fwrite(p, 1, n, fp);
	fclose(fp);
}

/* Open PATH expecting failure at open (or at the first records when
 * AT_NEXT); the message must be "PATH: offset N: ...WANT...". */
static void expect_error(const char *path, bool at_next, const char *want)
{
	struct ks_source *src;
	struct ks_error err;
	struct ks_record rec;
	char prefix[4200];
	int r = 0;

	err.msg[0] = 0;
	if (ks_perfdata_open(&src, path, NULL, &err) < 0) {
		KT_EXPECT(!at_next);
	} else {
		KT_EXPECT(at_next);
		while ((r = ks_source_next(src, &rec, &err)) > 0)
			;
		KT_EXPECT(r < 0);
		ks_source_close(src);
	}
	snprintf(prefix, sizeof(prefix), "%s: offset ", path);
	if (strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, want))
		kt_fail(__FILE__, __LINE__, "error \"%s\", expected \"%s...%s\"", err.msg, prefix, want);
	printf("# %s\n", err.msg);
}

/* A good crafted file as bytes (see write_perf_file). */
static uint8_t *good_file(const struct buf *d, size_t *n)
{
	const char *path = tmp_path("good.data");

	write_perf_file(path, d, ST_SW, true);
	return (uint8_t *)kt_read_file(path, n);
}

static void t_errors_header(void)
{
	struct buf d = { 0 };
	const char *path = tmp_path("bad.data");
	uint8_t *g;
	size_t n;
	uint64_t v;

	sw_sample(&d, 1, 100, 0);
	g = good_file(&d, &n);
	KT_REQUIRE(g);

	write_bytes(path, "PERFILE3xxxxxxxxxxxxxxxxxxxxxxxxxxx", 32);
	expect_error(path, false, "not a perf.data file");
	write_bytes(path, g, 60);
	expect_error(path, false, "truncated");
	memcpy(&v, g + 8, 8);
	v = 16;
	memcpy(g + 8, &v, 8);
	write_bytes(path, g, n);
	expect_error(path, false, "pipe-mode");
	v = 104;
	memcpy(g + 8, &v, 8);
	v = 1ull << 40;             /* data size */
	memcpy(g + 48, &v, 8);
	write_bytes(path, g, n);
	expect_error(path, false, "outside the file");
	v = d.n;
	memcpy(g + 48, &v, 8);
	v = 12;                     /* attr_size */
	memcpy(g + 16, &v, 8);
	write_bytes(path, g, n);
	expect_error(path, false, "absurd attr size");
	v = 144;
	memcpy(g + 16, &v, 8);
	v = 144 + 5;                /* attrs size not a multiple */
	memcpy(g + 32, &v, 8);
	write_bytes(path, g, n);
	expect_error(path, false, "absurd attrs");
	v = 144;
	memcpy(g + 32, &v, 8);
	v = (uint64_t)n;            /* ids section outside the file */
	memcpy(g + 104 + 128, &v, 8);
	v = 64;
	memcpy(g + 104 + 136, &v, 8);
	write_bytes(path, g, n);
	expect_error(path, false, "outside the file");
	v = 0;
	memcpy(g + 104 + 128, &v, 8);
	memcpy(g + 104 + 136, &v, 8);
	write_bytes(path, g, n - 4);  /* feature section cut */
	expect_error(path, false, "outside the file");
	write_bytes(path, g, n);     /* sanity: the good file opens */
	{
		struct recs v2;
		struct ks_error err;

		KT_EQ_INT(read_all(path, &v2, &err), 0);
		KT_EQ_U64(v2.n, 1);
		recs_free(&v2);
	}
	free(g);
	free(d.p);
}

static void t_errors_records(void)
{
	const char *path = tmp_path("bad.data");
	struct buf d = { 0 };

	sw_sample(&d, 1, 100, 0);
	rec_header(&d, 3, 4);          /* size < 8 */
	write_perf_file(path, &d, ST_SW, true);
	expect_error(path, true, "smaller than its header");
	free(d.p);

	memset(&d, 0, sizeof(d));
	sw_sample(&d, 1, 100, 0);
	rec_header(&d, 3, 64);         /* past the data section */
	put64(&d, 0);
	write_perf_file(path, &d, ST_SW, true);
	expect_error(path, true, "runs past the data section");
	free(d.p);

	memset(&d, 0, sizeof(d));
	rec_header(&d, 9, 8 + 16);     /* sample needs 40 bytes */
	put64(&d, 1);
	put64(&d, 2);
	write_perf_file(path, &d, ST_SW, true);
	expect_error(path, true, "shorter than its sample_type needs");
	free(d.p);

	memset(&d, 0, sizeof(d));      /* RAW size beyond the record */
	rec_header(&d, 9, 8 + 8 + 8 + 8);
	put64(&d, 5);                  /* TIME */
	put32(&d, 1000);               /* RAW size */
	put32(&d, 0);
	put64(&d, 0);
	write_perf_file(path, &d, (1u << 2) | (1u << 10), true);
	expect_error(path, true, "RAW");
	free(d.p);

	memset(&d, 0, sizeof(d));      /* callchain nr beyond the record */
	rec_header(&d, 9, 8 + 8 + 8 + 8);
	put64(&d, 5);
	put64(&d, 1ull << 60);
	put64(&d, 0);
	write_perf_file(path, &d, (1u << 2) | (1u << 5), true);
	expect_error(path, true, "CALLCHAIN");
	free(d.p);
}

/* Truncations and byte flips of a real file: errors, never crashes. */
static void t_mutations(void)
{
	const char *f = record("sched.data", "record -e sched:sched_switch -e sched:sched_wakeup "
				"-a -o @ sleep 0.3");
	const char *path = tmp_path("mut.data");
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	uint8_t *p, *m;
	size_t n, i, cut;
	unsigned seed = 12345;
	int r, runs = 0;

	if (!f) {
		kt_skip("perf record of sched tracepoints is not available here");
		return;
	}
	p = (uint8_t *)kt_read_file(f, &n);
	KT_REQUIRE(p);
	m = malloc(n);
	for (i = 0; i < 300; i++) {
		memcpy(m, p, n);
		cut = n;
		if (i % 3 == 0) {
			seed = seed * 1103515245 + 12345;
			cut = seed % n;
		} else {
			int k;

			for (k = 0; k < 4; k++) {
				seed = seed * 1103515245 + 12345;
				m[(seed >> 4) % n] ^= (uint8_t)(1u << (seed % 8));
			}
		}
		write_bytes(path, m, cut);
		if (ks_perfdata_open(&src, path, NULL, &err) == 0) {
			while ((r = ks_source_next(src, &rec, &err)) > 0)
				;
			ks_source_close(src);
		}
		runs++;
	}
	KT_EQ_INT(runs, 300);
	free(m);
	free(p);
}

/* ---- generator (tools/gen-perfdata) vs perf, and speed ---- */

/* Generate NAME with gen-perfdata ARGS from a kvm template; NULL (and the
 * test skipped) where perf or the generator is missing. */
static const char *generate(const char *name, const char *args)
{
	const char *tmpl = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	const char *gen_dir = getenv("KS_BUILD");
	const char *out = tmp_path(name);
	char gen[4096], cmd[12288];
	char *o;
	int st = -1;

	if (!tmpl || !gen_dir) {
		kt_skip("needs perf and KS_BUILD");
		return NULL;
	}
	snprintf(gen, sizeof(gen), "%s/tools/gen-perfdata", gen_dir);
	if (access(gen, X_OK) != 0) {
		kt_skip("%s is not built", gen);
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "%s --template %s -o %s %s >/dev/null 2>&1", gen, tmpl, out,
		 args);
	o = kt_run(cmd, &st);
	free(o);
	if (st != 0) {
		kt_skip("gen-perfdata failed");
		return NULL;
	}
	return out;
}

/* Generate NAME and compare the reader's order and fields with perf
 * script's. */
static void generated_vs_script(const char *name, const char *args)
{
	const char *out = generate(name, args);

	if (out)
		compare_with_script(out);
}

/* Whether B (from a batch or a selection) is A (from ks_source_next, its
 * event or comm A_NAME, its payload hash A_SUM): every member, the payload. */
static bool same_record(const struct ks_record *a, const char *a_name, uint64_t a_sum,
			const struct ks_record *b)
{
	const char *b_name = b->event ? b->event->name : b->comm ? b->comm : "";

	return a->type == b->type && a->ts == b->ts && a->raw_ts == b->raw_ts &&
	       a->cpu == b->cpu && a->tid == b->tid && a->pid == b->pid &&
	       !strcmp(a_name, b_name) && a->size == b->size &&
	       a_sum == payload_sum(b->data, b->size) && a->ip == b->ip &&
	       a->period == b->period && a->id == b->id && a->misc == b->misc &&
	       a->nr_callchain == b->nr_callchain && a->ppid == b->ppid && a->ptid == b->ptid &&
	       a->lost == b->lost && a->offset == b->offset;
}

static bool only_kvm_exit(void *ctx, struct tep_event *ev)
{
	(void)ctx;
	return !strcmp(ev->name, "kvm_exit");
}

static uint64_t last_framed_ahead; /* of compare_batches()'s source */
/* compare_batches() opens with this context, which t_mapped_chunks tunes */
static struct ks_ctx *batch_ctx;

/* Read PATH in batches of MAX, with the selection WANT if not NULL, and
 * compare with V, the records of a ks_source_next() loop (less the samples
 * WANT leaves out).  Returns the records read; *STATS the source's counts,
 * last_framed_ahead its ks_perfdata_framed_ahead(). */
static size_t compare_batches(const char *path, const struct recs *v, int max,
			      bool (*want)(void *ctx, struct tep_event *ev),
			      struct ks_source_stats *stats)
{
	struct ks_record *recs = calloc((size_t)max, sizeof(*recs));
	struct ks_source *src;
	struct ks_error err;
	size_t k = 0, n = 0, bad = 0;
	int r, i;

	if (!recs || ks_perfdata_open(&src, path, &(struct ks_source_opts){ .ctx = batch_ctx },
				      &err) < 0) {
		kt_fail(__FILE__, __LINE__, "cannot open %s", path);
		free(recs);
		return 0;
	}
	if (want)
		KT_EQ_INT(ks_source_select(src, want, NULL), 0);
	while ((r = ks_source_next_batch(src, recs, max, &err)) > 0) {
		KT_EXPECT(r <= max);
		for (i = 0; i < r; i++, n++, k++) {
			while (want && k < v->n && v->r[k].type == KS_REC_EVENT &&
			       strcmp(v->names[k], "kvm_exit"))
				k++;
			if (k >= v->n || !same_record(&v->r[k], v->names[k], v->sums[k], &recs[i]))
				bad++;
		}
	}
	KT_EQ_INT(r, 0);
	KT_EQ_U64(bad, 0);
	*stats = *ks_source_stats(src);
	last_framed_ahead = ks_perfdata_framed_ahead(src);
	ks_source_close(src);
	free(recs);
	return n;
}

/* Mapped and framed by the prefetch thread in chunks of any size (records
 * across every chunk boundary), or not mapped but read by the thread into
 * buffers (chunk 0), a file larger than the first window gives the records,
 * order and counts of the default reading (mapped, 4 MB chunks), which
 * t_generated_window checks against perf script; with rounds (runs of
 * samples out of time order, some late) and without (one run).  The main
 * thread queues the thread's frames: it frames only the first chunk
 * itself (buffered: the first window), and a few records across chunk
 * boundaries. */
static void t_mapped_chunks(void)
{
	static const char *const opts[] = {
		"--pairs 30000 --rounds --ooo --lost 3 --cpus 4 --unmatched --migrate",
		"--pairs 30000 --lost 3 --cpus 4 --unmatched --migrate",
		/* long rounds (3 MB): segments in chunks of 65543 bytes (a
		 * round longer than SEG_ROUND chunks), not in chunks of 1000
		 * and 4096 bytes (runs shorter than SEG_MIN) nor in 1 MB and
		 * the default 4 MB (read_all()'s entries); the sorted file
		 * without rounds has them in chunks of 65543 bytes and more */
		"--pairs 30000 --rounds --round-ns 300000000 --ooo --lost 3 --cpus 2 --unmatched "
		"--migrate",
	};
	static const uint64_t chunks[] = { 1000, 4096, 65543, 1 << 20, 0 };
	struct ks_source_stats st;
	struct ks_error err;
	struct recs v;
	size_t i, k, j, others;

	for (k = 0; k < 3; k++) {
		static const char *const names[] = { "gen-chunks.data", "gen-chunks-sorted.data",
						     "gen-chunks-long.data" };
		const char *f = generate(names[k], opts[k]);

		if (!f)
			return;
		KT_REQUIRE(read_all(f, &v, &err) == 0);
		for (j = others = 0; j < v.n; j++)
			others += v.r[j].type == KS_REC_EVENT && strcmp(v.names[j], "kvm_exit");
		KT_EXPECT(others > 0);
		for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			/* a selection: the samples left out are ordered apart
			 * from the delivered ones (where the thread frames
			 * them), and change neither the order nor the counts */
			ks_ctx_perfdata_tune(batch_ctx, chunks[i] ? 0 : UINT64_MAX, chunks[i]);
			KT_EQ_U64(compare_batches(f, &v, 64, only_kvm_exit, &st), v.n - others);
			KT_EQ_U64(st.filtered, others);
			KT_EQ_U64(st.out_of_order, v.stats.out_of_order);
			KT_EQ_U64(st.unknown_events, v.stats.unknown_events);
			KT_EQ_U64(st.lost_events, v.stats.lost_events);
			KT_EQ_U64(st.skipped, v.stats.skipped);
			KT_EQ_U64(compare_batches(f, &v, 64, NULL, &st), v.n);
			KT_EQ_U64(st.out_of_order, v.stats.out_of_order);
			KT_EQ_U64(st.lost_events, v.stats.lost_events);
			KT_EQ_U64(st.skipped, v.stats.skipped);
			KT_EXPECT((k != 1) == (v.stats.out_of_order > 0));
			/* all but the first chunk's records; buffered: all but
			 * the first window's (6 MB of 8.5), and none without
			 * rounds, where the queue keeps every record, so the
			 * window grows by synchronous reads */
			if (chunks[i])
				KT_EXPECT(last_framed_ahead >= v.n * 8 / 10);
			else if (!k)
				KT_EXPECT(last_framed_ahead >= v.n / 5);
		}
		ks_ctx_perfdata_tune(batch_ctx, KS_PD_MAP_MIN, 0);
		recs_free(&v);
	}
}

/* Batches give the records of a ks_source_next() loop, whatever their size;
 * a selection gives those of its events and all other kinds, and counts
 * the samples it leaves out without changing the other counts. */
static void t_batches_and_selection(void)
{
	const char *f = generate("gen-batch.data", "--pairs 6000 --rounds --ooo --lost 3 "
				 "--cpus 4 --unmatched --migrate");
	static const int sizes[] = { 1, 7, 64, 4096 };
	struct ks_source_stats st;
	struct ks_error err;
	struct recs v;
	size_t i, exits = 0, events = 0;

	if (!f)
		return;
	KT_REQUIRE(read_all(f, &v, &err) == 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		KT_EQ_U64(compare_batches(f, &v, sizes[i], NULL, &st), v.n);
		KT_EQ_U64(st.records, v.stats.records);
		KT_EQ_U64(st.filtered, 0);
	}
	for (i = 0; i < v.n; i++) {
		events += v.r[i].type == KS_REC_EVENT;
		exits += v.r[i].type == KS_REC_EVENT && !strcmp(v.names[i], "kvm_exit");
	}
	KT_EXPECT(exits > 1000 && events > exits);
	KT_EQ_U64(compare_batches(f, &v, 64, only_kvm_exit, &st), v.n - (events - exits));
	KT_EQ_U64(st.filtered, events - exits);
	KT_EQ_U64(st.out_of_order, v.stats.out_of_order);
	KT_EXPECT(v.stats.out_of_order > 0);
	KT_EQ_U64(st.lost_events, v.stats.lost_events);
	KT_EQ_U64(st.lost_records, v.stats.lost_records);
	KT_EQ_U64(st.records, v.n - (events - exits));
	recs_free(&v);
}

static void t_generated_rounds(void)
{
	generated_vs_script("gen.data", "--pairs 3000 --rounds --ooo --lost 3 --cpus 4");
}

/* Files larger than the reader's data window (2 MB): with rounds the
 * window is refilled and compacted many times while records are queued;
 * without FINISHED_ROUND everything stays queued and the window grows. */
static void t_generated_window(void)
{
	generated_vs_script("gen-big.data", "--pairs 40000 --rounds --ooo --lost 3 --cpus 4");
	generated_vs_script("gen-noround.data", "--pairs 15000 --cpus 3");
	/* rounds of about 27,000 records (3 MB), 13,000 a CPU: queued as
	 * entries, the window mapped and given back behind the read position
	 * (t_mapped_chunks reads them as segments, stat_round_memory_test
	 * rounds of a million records) */
	generated_vs_script("gen-long-rounds.data", "--pairs 40000 --rounds --round-ns 300000000 "
			    "--ooo --lost 3 --cpus 2 --migrate");
}

/* ---- saved cmdlines: registered at open, or on the first ask ---- */

/* The first pid of TEXT's "PID COMM" lines that appears on one line only,
 * its comm into COMM; 0: none. */
static int unique_cmdline(const char *text, char *comm, size_t len)
{
	const char *l;

	for (l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		char pat[32];
		int pid, n = 0, hits = 0;
		const char *m;

		if (sscanf(l, "%d %n", &pid, &n) != 1 || pid <= 0 || !n)
			continue;
		snprintf(pat, sizeof(pat), "%d ", pid);
		for (m = text; (m = strstr(m, pat)); m++)
			if (m == text || m[-1] == '\n')
				hits++;
		if (hits == 1) {
			size_t c = strcspn(l + n, "\n");

			snprintf(comm, len, "%.*s", (int)c, l + n);
			return pid;
		}
	}
	return 0;
}

/* A perf.data's saved cmdlines: a plain open registers them on the tep
 * before it returns (every command that asks the tep for a comm sees
 * them); KS_OPEN_COMMS_WHEN_ASKED (stat) leaves the thousands of lines
 * unparsed until ks_source_tep_comms(), which registers the same ones. */
static void t_saved_cmdlines_when_asked(void)
{
	const char *f = record("kvm.data", "kvm stat record -a -o @ sleep 0.2");
	struct ks_source *eager, *lazy;
	struct ks_error err;
	const char *text;
	char comm[64];
	int pid;

	if (!f) {
		kt_skip("perf kvm stat record is not available here");
		return;
	}
	KT_REQUIRE(ks_source_open_opts(&eager, f, NULL, &err) == 0);
	KT_REQUIRE(ks_source_open_opts(&lazy, f,
				       &(struct ks_source_opts){ .flags = KS_OPEN_COMMS_WHEN_ASKED },
				       &err) == 0);
	text = ks_source_text(eager, KS_TEXT_CMDLINES, NULL);
	KT_REQUIRE(text);
	pid = unique_cmdline(text, comm, sizeof(comm));
	KT_REQUIRE(pid > 0);
	KT_EXPECT(tep_is_pid_registered(ks_source_tep(eager), pid));
	KT_EQ_STR(tep_data_comm_from_pid(ks_source_tep(eager), pid), comm);
	KT_EXPECT(!tep_is_pid_registered(ks_source_tep(lazy), pid));
	KT_EXPECT(ks_source_tep_comms(lazy) == ks_source_tep(lazy));
	KT_EXPECT(tep_is_pid_registered(ks_source_tep(lazy), pid));
	KT_EQ_STR(tep_data_comm_from_pid(ks_source_tep(lazy), pid), comm);
	/* once: a comm registered after the ask is not overwritten */
	KT_EXPECT(tep_override_comm(ks_source_tep(lazy), "renamed", pid) == 0);
	ks_source_tep_comms(lazy);
	KT_EQ_STR(tep_data_comm_from_pid(ks_source_tep(lazy), pid), "renamed");
	ks_source_close(lazy);
	ks_source_close(eager);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_kvm_header),
		KT_CASE(t_kvm_tracing_data),
		KT_CASE(t_kvm_records),
		KT_CASE(t_sched_samples),
		KT_CASE(t_callchains),
		KT_CASE(t_round_ordering),
		KT_CASE(t_swapped_crafted),
		KT_CASE(t_swapped_sched),
		KT_CASE(t_swapped_callchains),
		KT_CASE(t_tracing_data_block),
		KT_CASE(t_tracing_data_fields),
		KT_CASE(t_tracing_data_version),
		KT_CASE(t_errors_header),
		KT_CASE(t_errors_records),
		KT_CASE(t_mutations),
		KT_CASE(t_generated_rounds),
		KT_CASE(t_generated_window),
		KT_CASE(t_batches_and_selection),
		KT_CASE(t_mapped_chunks),
		KT_CASE(t_saved_cmdlines_when_asked),
		{ 0 },
	};
	int r;

	batch_ctx = ks_ctx_new();
	if (!batch_ctx)
		return 1;
	r = kt_main(cases);
	ks_ctx_free(batch_ctx);
	return r;
}
