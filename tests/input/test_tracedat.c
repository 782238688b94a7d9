/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_tracedat.c - the trace.dat reader against real recordings, trace-cmd
 * itself, and corrupt copies.
 *
 * Oracles: the README facts about the hip24 recordings (vCPU threads, event
 * counts), trace-cmd 3.2's `report -t` output for them (first timestamp,
 * number of events), Debian's trace-cmd (`dump --events`, `report`) on files
 * it can read, including a v6 file built here with hand-made ring-buffer
 * pages.  Corrupt inputs are made in the test's temp dir.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>

#include "../lib/ktest.h"
#include "input/source_impl.h"
#include "kvmscope/ctx.h"
#include "kvmscope/dump.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"
#include "kvmscope/tracedat_writer.h"

#define HIP "data/hip24/"

/* libtraceevent 1.7 leaks a few bytes inside tep_parse_event() for some
 * kernel formats (not ours to free); keep LeakSanitizer builds quiet. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static struct ks_source *open_or_skip(const char *rel)
{
	const char *p = kt_shared(rel);
	struct ks_source *src;
	struct ks_error err;

	if (!p) {
		kt_skip("%s is absent", rel);
		return NULL;
	}
	if (ks_source_open(&src, p, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "open: %s", err.msg);
		return NULL;
	}
	return src;
}

static bool have_trace_cmd(void)
{
	int st = -1;
	char *out = kt_run("trace-cmd -h >/dev/null 2>&1; command -v trace-cmd", &st);
	bool ok = out && st == 0 && *out;

	free(out);
	if (!ok)
		kt_skip("trace-cmd is not installed");
	return ok;
}

/* Count records; check time order. */
struct counts {
	uint64_t records, events, lost, backwards;
	uint64_t by_name[2]; /* kvm_entry, kvm_exit */
	uint64_t first_ts;
	int max_cpu;
};

static int count_records(struct ks_source *src, struct counts *c, struct ks_error *err)
{
	struct ks_record rec;
	uint64_t last = 0;
	int r;

	memset(c, 0, sizeof(*c));
	c->max_cpu = -1;
	while ((r = ks_source_next(src, &rec, err)) > 0) {
		if (c->records == 0)
			c->first_ts = rec.ts;
		c->records++;
		if (rec.ts < last)
			c->backwards++;
		last = rec.ts;
		if (rec.cpu > c->max_cpu)
			c->max_cpu = rec.cpu;
		if (rec.type == KS_REC_LOST) {
			c->lost++;
			continue;
		}
		c->events++;
		if (rec.event && !strcmp(rec.event->name, "kvm_entry"))
			c->by_name[0]++;
		if (rec.event && !strcmp(rec.event->name, "kvm_exit"))
			c->by_name[1]++;
	}
	return r;
}

/* Lines and the first timestamp of trace-cmd 3.2's report -t output. */
static bool expected_summary(const char *name, uint64_t *lines, uint64_t *first_ns)
{
	char rel[256], cmd[1024];
	const char *p;
	char *out;
	unsigned long long n = 0, sec = 0, nsec = 0;

	snprintf(rel, sizeof(rel), HIP "expected/%s.report-ns.txt.gz", name);
	p = kt_shared(rel);
	if (!p)
		return false;
	/* lines, then the time of the first event: "SEC.NSEC" or a raw counter */
	snprintf(cmd, sizeof(cmd),
		 "zcat '%s' | wc -l; zcat '%s' | sed -n 2p | sed -E 's/^.*\\] *([0-9.]+): .*$/\\1/' | tr '.' ' '",
		 p, p);
	out = kt_run(cmd, NULL);
	if (!out)
		return false;
	int got = sscanf(out, "%llu %llu %llu", &n, &sec, &nsec);
	free(out);
	if (got < 1)
		return false;
	*lines = n;
	*first_ns = got == 3 ? sec * 1000000000ull + nsec : sec;
	return true;
}

static void t_host_tsync_meta(void)
{
	struct ks_source *src = open_or_skip(HIP "host-tsync.trace.dat");
	const struct ks_tracedat_meta *m;
	const struct ks_source_info *info;
	int i;

	if (!src)
		return;
	m = ks_tracedat_meta(src);
	info = ks_source_info(src);
	KT_REQUIRE(m);
	KT_EQ_STR(info->format, "trace.dat v7 (zlib)");
	KT_EQ_INT(m->version, 7);
	KT_EQ_STR(m->compression, "zlib");
	KT_EQ_INT(info->nr_cpus, 20);          /* README: 20 CPUs */
	KT_EQ_STR(info->hostname, "pamhal");   /* README: host "pamhal" */
	KT_EQ_STR(info->osrelease, "6.5.0-21-generic");
	KT_EQ_STR(info->arch, "x86_64");
	KT_EXPECT(m->has_tsc2nsec && m->ts_in_ns);
	KT_EXPECT(m->has_trace_id);
	/* README: the 1-vCPU guest runs on qemu-system-x86-483882 as vcpu 0 */
	KT_REQUIRE(m->nr_guests >= 1);
	for (i = 0; i < (int)m->nr_guests; i++)
		if (m->guests[i].nr_vcpus == 1 && m->guests[i].vcpus[0].host_tid == 483882)
			break;
	KT_EXPECT(i < (int)m->nr_guests);
	if (i < (int)m->nr_guests)
		KT_EQ_U64(m->guests[i].vcpus[0].vcpu, 0);
	KT_REQUIRE(m->nr_buffers >= 1);
	KT_EQ_STR(m->buffer_names[0], "");
	ks_source_close(src);
}

/* The guest's TimeShift names the host's trace id, the host's GUEST option
 * names the guest's: two files written separately must agree. */
static void t_guest_host_ids(void)
{
	struct ks_source *host = open_or_skip(HIP "host-tsync.trace.dat");
	struct ks_source *guest = host ? open_or_skip(HIP "guest-tsync.trace.dat") : NULL;
	const struct ks_tracedat_meta *hm, *gm;

	if (!host || !guest) {
		ks_source_close(host);
		return;
	}
	hm = ks_tracedat_meta(host);
	gm = ks_tracedat_meta(guest);
	KT_EXPECT(gm->has_time_shift);
	KT_EQ_U64(gm->tsync_peer_id, hm->trace_id);
	KT_REQUIRE(hm->nr_guests >= 1);
	KT_EQ_U64(hm->guests[0].trace_id, gm->trace_id);
	KT_EQ_U64(gm->tsync_nr_cpus, 1);       /* README: 1 vCPU */
	KT_EXPECT(gm->tsync_cpus[0].nr_samples >= 1);
	KT_EQ_STR(ks_source_info(guest)->osrelease, "5.15.94");
	ks_source_close(host);
	ks_source_close(guest);
}

static void t_vcpu_threads_22k(void)
{
	struct ks_source *src = open_or_skip(HIP "host-2vcpu-22k.trace.dat");
	const struct ks_tracedat_meta *m;

	if (!src)
		return;
	m = ks_tracedat_meta(src);
	KT_REQUIRE(m->nr_guests == 1 && m->guests[0].nr_vcpus == 2);
	/* README: CPU 0/KVM-60250, CPU 1/KVM-60251 */
	KT_EQ_U64(m->guests[0].vcpus[0].host_tid, 60250);
	KT_EQ_U64(m->guests[0].vcpus[1].host_tid, 60251);
	ks_source_close(src);
}

/* Event counts and the first timestamp against README and trace-cmd 3.2. */
static void check_file(const char *name, int64_t entries, int64_t exits)
{
	char rel[256];
	struct ks_source *src;
	struct counts c;
	struct ks_error err;
	uint64_t lines, first;

	snprintf(rel, sizeof(rel), HIP "%s.trace.dat", name);
	src = open_or_skip(rel);
	if (!src)
		return;
	KT_EQ_INT(count_records(src, &c, &err), 0);
	KT_EQ_U64(c.backwards, 0);
	KT_EXPECT(c.max_cpu < ks_source_info(src)->nr_cpus);
	if (entries >= 0) {
		KT_EQ_U64(c.by_name[0], entries);
		KT_EQ_U64(c.by_name[1], exits);
	}
	if (expected_summary(name, &lines, &first)) {
		/* report prints "cpus=N" and one line per event (guest files
		 * have multi-line events: only an upper bound there) */
		if (entries >= 0)
			KT_EQ_U64(c.records + 1, lines);
		else
			KT_EXPECT(c.records + 1 <= lines && c.records > lines / 2);
		if (c.records)
			KT_EQ_U64(c.first_ts, first);
	}
	KT_EQ_U64(ks_source_stats(src)->lost_records, c.lost);
	ks_source_close(src);
}

static void t_host_tsync_events(void) { check_file("host-tsync", 5861, 5860); }
static void t_rawtsc_events(void) { check_file("host-allkvm-rawtsc", 1558, 1558); }
static void t_guest_only_events(void) { check_file("guest-only", -1, -1); }
static void t_empty_events(void) { check_file("host-6.8rt-empty", 0, 0); }

static void t_rawtsc_keeps_raw(void)
{
	struct ks_source *src = open_or_skip(HIP "host-allkvm-rawtsc.trace.dat");
	struct ks_record rec;
	struct ks_error err;

	if (!src)
		return;
	KT_EXPECT(!ks_tracedat_meta(src)->ts_in_ns);
	KT_EQ_STR(ks_source_info(src)->clock, "x86-tsc");
	KT_EQ_INT(ks_source_next(src, &rec, &err), 1);
	KT_EQ_U64(rec.ts, rec.raw_ts);
	ks_source_close(src);
}

/* ---- zstd file and trace-cmd convert copies ---- */

static const char *zstd_file(void)
{
	const char *p = kt_shared("data/kvm-formats-zstd.trace.dat");

	if (!p)
		kt_skip("data/kvm-formats-zstd.trace.dat is absent");
	return p;
}

static int kvm_event_count(struct ks_source *src)
{
	struct tep_handle *tep = ks_source_tep(src);
	struct tep_event **evs;
	int i, n = 0;

	ks_source_parse_all(src); /* the formats wait until needed */
	evs = tep_list_events(tep, TEP_EVENT_SORT_ID);

	for (i = 0; evs && evs[i]; i++)
		if (!strcmp(evs[i]->system, "kvm"))
			n++;
	return n;
}

static void check_formats(const char *path, const char *format)
{
	struct ks_source *src;
	struct ks_error err;
	char cmd[4096], *out;
	int st;

	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	KT_EQ_STR(ks_source_info(src)->format, format);
	snprintf(cmd, sizeof(cmd), "trace-cmd dump --events '%s' 2>/dev/null | grep -c '^name:'", path);
	out = kt_run(cmd, &st);
	KT_REQUIRE(out);
	KT_EQ_INT(kvm_event_count(src), atoi(out));
	KT_EXPECT(atoi(out) > 0);
	free(out);
	KT_EXPECT(ks_source_event(src, "kvm", "kvm_exit") != NULL);
	KT_EQ_INT(ks_source_info(src)->nr_cpus, 16);
	ks_source_close(src);
}

static const char *convert(const char *in, const char *name, const char *args)
{
	static char out[4096];
	char cmd[8192], *res;
	int st = -1;

	snprintf(out, sizeof(out), "%s/%s", kt_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "trace-cmd convert %s -i '%s' -o '%s' >/dev/null 2>&1; echo $?",
		 args, in, out);
	res = kt_run(cmd, &st);
	if (!res || atoi(res) != 0) {
		free(res);
		kt_fail(__FILE__, __LINE__, "trace-cmd convert %s failed", args);
		return NULL;
	}
	free(res);
	return out;
}

static void t_zstd_formats(void)
{
	const char *z = zstd_file();

	if (z && have_trace_cmd())
		check_formats(z, "trace.dat v7 (zstd)");
}

static void t_converted_v6_formats(void)
{
	const char *z = zstd_file(), *p;

	if (!z || !have_trace_cmd())
		return;
	p = convert(z, "conv-v6.dat", "--file-version 6 --compression none");
	if (p)
		check_formats(p, "trace.dat v6");
	p = convert(z, "conv-v7none.dat", "--compression none");
	if (p)
		check_formats(p, "trace.dat v7");
}

/* ---- a v6 file with hand-made ring buffer pages, read by trace-cmd ---- */

#define PAGE 4096

struct page_builder {
	uint8_t page[PAGE];
	uint32_t len;       /* bytes of events after the 16-byte header */
	uint64_t last_ts;
};

static void pb_start(struct page_builder *pb, uint64_t ts)
{
	memset(pb->page, 0, sizeof(pb->page));
	memcpy(pb->page, &ts, 8);
	pb->len = 0;
	pb->last_ts = ts;
}

static void pb_event(struct page_builder *pb, uint64_t ts, const void *payload, uint32_t size)
{
	uint32_t words = (size + 3) / 4, hdr = words | (uint32_t)((ts - pb->last_ts) << 5);
	uint8_t *p = pb->page + 16 + pb->len;

	memcpy(p, &hdr, 4);
	memcpy(p + 4, payload, size);
	pb->len += 4 + words * 4;
	pb->last_ts = ts;
}

/* missed: 0 none, -1 flagged without count, >0 stored count */
static void pb_finish(struct page_builder *pb, int64_t missed)
{
	uint64_t commit = pb->len;

	if (missed)
		commit |= 1ull << 31;
	if (missed > 0) {
		commit |= 1ull << 30;
		memcpy(pb->page + 16 + pb->len, &missed, 8);
	}
	memcpy(pb->page + 8, &commit, 8);
}

static uint32_t event_payload(struct tep_event *ev, uint8_t *buf, uint32_t seed, int32_t pid)
{
	struct tep_format_field *f;
	uint32_t size = 0, i;
	uint16_t type = (uint16_t)ev->id;

	for (f = ev->format.fields; f; f = f->next)
		if ((uint32_t)(f->offset + f->size) > size)
			size = (uint32_t)(f->offset + f->size);
	for (i = 0; i < size; i++)
		buf[i] = (uint8_t)(seed * 31 + i * 7);
	for (f = ev->format.fields; f; f = f->next)
		if (f->size >= 4 && !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)))
			buf[f->offset + 2] = buf[f->offset + 3] = 0; /* keep numbers small */
	buf[2] = 0; /* common_flags */
	buf[3] = 0; /* preempt count */
	memcpy(buf, &type, 2);
	memcpy(buf + 4, &pid, 4);
	return size;
}

/* Append pages for CPUs 0 and 2 to a v6 copy and point its flyrecord
 * table at them.  Returns the path or NULL. */
static const char *make_v6_with_events(const char *v6, struct tep_handle *tep, bool bad_commit)
{
	static char out[4096];
	struct tep_event *entry = ks_tep_event(tep, "kvm", "kvm_entry");
	struct tep_event *exitev = ks_tep_event(tep, "kvm", "kvm_exit");
	struct page_builder pb[3];
	uint8_t payload[512];
	size_t len;
	char *data = kt_read_file(v6, &len), *fly;
	uint64_t base, off;
	FILE *f;
	int i;

	if (!data || !entry || !exitev)
		return NULL;
	fly = memmem(data, len, "flyrecord", 10);
	if (!fly) {
		free(data);
		return NULL;
	}
	/* CPU 0: two pages; CPU 2: one page with 3 missed events, ties with CPU 0 */
	pb_start(&pb[0], 1000000000);
	for (i = 0; i < 20; i++)
		pb_event(&pb[0], 1000000000 + (uint64_t)i * 1500,
			 payload, event_payload(i % 2 ? exitev : entry, payload, (uint32_t)i, 4242));
	pb_finish(&pb[0], 0);
	pb_start(&pb[1], 1000040000);
	for (i = 0; i < 5; i++)
		pb_event(&pb[1], 1000040000 + (uint64_t)i * 999, payload,
			 event_payload(exitev, payload, (uint32_t)i + 50, 4242));
	pb_finish(&pb[1], -1);
	pb_start(&pb[2], 1000003000);
	for (i = 0; i < 10; i++)
		pb_event(&pb[2], 1000003000 + (uint64_t)i * 3000, payload,
			 event_payload(i % 3 ? entry : exitev, payload, (uint32_t)i + 100, 777));
	pb_finish(&pb[2], 3);
	if (bad_commit)
		memcpy(pb[2].page + 8, &(uint64_t){ 5000 }, 8);

	base = (len + PAGE - 1) / PAGE * PAGE;
	off = base;
	memcpy(fly + 10 + 0 * 16, &off, 8);
	memcpy(fly + 10 + 0 * 16 + 8, &(uint64_t){ 2 * PAGE }, 8);
	off = base + 2 * PAGE;
	memcpy(fly + 10 + 2 * 16, &off, 8);
	memcpy(fly + 10 + 2 * 16 + 8, &(uint64_t){ PAGE }, 8);
	snprintf(out, sizeof(out), "%s/crafted-v6%s.dat", kt_tmpdir(), bad_commit ? "-badcommit" : "");
	f = fopen(out, "wb");
	if (!f) {
		free(data);
		return NULL;
	}
	fwrite(data, 1, len, f);
	for (off = len; off < base; off++)
		fputc(0, f);
	for (i = 0; i < 3; i++)
		fwrite(pb[i].page, 1, PAGE, f);
	fclose(f);
	free(data);
	return out;
}

static char *dump_to_string(const char *path, bool nsec, struct ks_source_stats *stats)
{
	struct ks_source *src;
	struct ks_error err;
	struct ks_record rec;
	struct ks_dump *d;
	char *buf = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	if (ks_source_open(&src, path, &err) < 0)
		return NULL;
	f = open_memstream(&buf, &size);
	d = ks_dump_new(src, &(struct ks_dump_opts){ .nsec = nsec });
	ks_dump_print_header(d, f, NULL);
	while ((r = ks_source_next(src, &rec, &err)) > 0)
		ks_dump_print_record(d, &rec, f, NULL);
	if (r < 0)
		fprintf(f, "ERROR %s\n", err.msg);
	if (stats)
		*stats = *ks_source_stats(src);
	ks_dump_free(d);
	ks_source_close(src);
	fclose(f);
	return buf;
}

static void compare_with_report(const char *path, bool nsec)
{
	char cmd[4096], *want, *got;
	struct ks_source_stats st;

	snprintf(cmd, sizeof(cmd), "trace-cmd report %s '%s' 2>/dev/null", nsec ? "-t" : "", path);
	want = kt_run(cmd, NULL);
	got = dump_to_string(path, nsec, &st);
	KT_REQUIRE(want && got);
	KT_EXPECT(strstr(want, "kvm_exit") != NULL);
	KT_EXPECT(strstr(want, "EVENTS DROPPED") != NULL);
	if (strcmp(want, got))
		kt_fail(__FILE__, __LINE__, "dump differs from trace-cmd report%s:\n--- want\n%.2000s\n--- got\n%.2000s",
			nsec ? " -t" : "", want, got);
	KT_EQ_U64(st.lost_records, 2);
	KT_EQ_U64(st.lost_events, 3);
	free(want);
	free(got);
}

static void t_crafted_v6_vs_trace_cmd(void)
{
	const char *z = zstd_file(), *v6, *crafted;
	struct ks_source *src;
	struct ks_error err;

	if (!z || !have_trace_cmd())
		return;
	v6 = convert(z, "base-v6.dat", "--file-version 6 --compression none");
	KT_REQUIRE(v6);
	KT_REQUIRE(ks_source_open(&src, v6, &err) == 0);
	crafted = make_v6_with_events(v6, ks_source_tep(src), false);
	ks_source_close(src);
	KT_REQUIRE(crafted);
	compare_with_report(crafted, false);
	compare_with_report(crafted, true);
	/* the same pages in an uncompressed v7 and a zstd v7 made by trace-cmd */
	{
		char keep[4096];
		const char *v7;
		snprintf(keep, sizeof(keep), "%s", crafted);
		v7 = convert(keep, "crafted-v7none.dat", "--compression none");
		if (v7)
			compare_with_report(v7, true);
		v7 = convert(keep, "crafted-v7zstd.dat", "--compression zstd");
		if (v7)
			compare_with_report(v7, true);
	}
}

/* ---- corrupt inputs ---- */

static const char *write_copy(const char *name, const char *data, size_t len)
{
	static char out[4096];
	FILE *f;

	snprintf(out, sizeof(out), "%s/%s", kt_tmpdir(), name);
	f = fopen(out, "wb");
	if (!f)
		return NULL;
	fwrite(data, 1, len, f);
	fclose(f);
	return out;
}

/* Open and read everything; expect an error naming the file and an offset. */
static void expect_error(const char *path, const char *words)
{
	struct ks_source *src;
	struct ks_error err;
	struct counts c;
	int r;

	memset(&err, 0, sizeof(err));
	r = ks_tracedat_open(&src, path, NULL, &err);
	if (r == 0) {
		r = count_records(src, &c, &err);
		ks_source_close(src);
	}
	if (r >= 0) {
		kt_fail(__FILE__, __LINE__, "%s: no error", path);
		return;
	}
	KT_EXPECT(strstr(err.msg, path) == err.msg);
	KT_EXPECT(strstr(err.msg, ": offset ") != NULL);
	KT_EXPECT(strchr(err.msg, '\n') == NULL);
	if (words && !strstr(err.msg, words))
		kt_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", err.msg, words);
}

static char *read_shared(const char *rel, size_t *len)
{
	const char *p = kt_shared(rel);

	if (!p) {
		kt_skip("%s is absent", rel);
		return NULL;
	}
	return kt_read_file(p, len);
}

static void t_bad_magic(void)
{
	char data[64] = "\x17\x08\x44tracinX6\0";
	expect_error(write_copy("badmagic.dat", data, sizeof(data)), "bad magic");
}

static void t_bad_version(void)
{
	char data[64] = "\x17\x08\x44tracing9\0";
	expect_error(write_copy("badversion.dat", data, sizeof(data)), "version");
}

static void t_truncated(void)
{
	size_t len, cuts[] = { 10, 13, 17, 30, 200, 4000, 100000 }, i;
	char *data = read_shared(HIP "host-tsync.trace.dat", &len), name[64];

	if (!data)
		return;
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		snprintf(name, sizeof(name), "trunc-%zu.dat", cuts[i]);
		expect_error(write_copy(name, data, cuts[i]), NULL);
	}
	/* cut inside the event data: the error comes while reading */
	expect_error(write_copy("trunc-data.dat", data, len - 20000), NULL);
	free(data);
}

static void t_unknown_compression(void)
{
	size_t len;
	char *data = read_shared(HIP "host-tsync.trace.dat", &len), *z;

	if (!data)
		return;
	z = memmem(data, 64, "zlib", 5);
	KT_REQUIRE(z);
	memcpy(z, "lzma", 4);
	expect_error(write_copy("lzma.dat", data, len), "\"lzma\"");
	free(data);
}

/* A trace.dat of no events whose OFFSET option (7) is TEXT. */
static const char *offset_file(const char *name, const char *text)
{
	static char path[4096];
	struct ks_tdw_opts o = { .file_version = 7, .compression = "none", .nr_cpus = 1,
				 .clock = "local" };
	struct ks_error err;
	struct ks_tdw *w;

	snprintf(path, sizeof(path), "%s/%s", kt_tmpdir(), name);
	w = ks_tdw_create(path, &o, &err);
	if (!w || ks_tdw_add_option(w, 7, text, (uint32_t)strlen(text) + 1, &err) < 0 ||
	    ks_tdw_close(w, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "writing %s: %s", name, err.msg);
		return NULL;
	}
	return path;
}

/* The OFFSET option is read with the checked parser: garbage is an error
 * naming the file and the option's offset, not an offset of 0. */
static void t_offset_option_checked(void)
{
	const char *path = offset_file("offset-ok.dat", "-1000");
	struct ks_source *src;
	struct ks_error err;

	KT_REQUIRE(path);
	KT_EQ_INT(ks_tracedat_open(&src, path, NULL, &err), 0);
	ks_source_close(src);
	path = offset_file("offset-hex.dat", "0x10");
	KT_REQUIRE(path);
	KT_EQ_INT(ks_tracedat_open(&src, path, NULL, &err), 0);
	ks_source_close(src);
	path = offset_file("offset-bad.dat", "12junk");
	KT_REQUIRE(path);
	expect_error(path, "the OFFSET option is not a whole number");
	path = offset_file("offset-empty.dat", "");
	KT_REQUIRE(path);
	expect_error(path, "OFFSET");
}

static void t_section_outside_file(void)
{
	size_t len;
	char *data = read_shared(HIP "host-tsync.trace.dat", &len), *z;
	uint64_t far = (uint64_t)len + 12345;

	if (!data)
		return;
	z = memmem(data, 64, "zlib", 5);
	KT_REQUIRE(z);
	z += 5;
	z += strlen(z) + 1; /* compression version */
	memcpy(z, &far, 8);  /* first options section */
	expect_error(write_copy("outside.dat", data, len), "past the end");
	free(data);
}

static void t_corrupt_compressed(void)
{
	size_t len, at;
	char *data = read_shared(HIP "host-tsync.trace.dat", &len);
	int fails = 0, n;

	if (!data)
		return;
	/* scramble 64 bytes at several places of the compressed data (the
	 * kallsyms section: most of this file; they are read when first
	 * asked for, so that is when the damage shows) */
	for (n = 0; n < 4; n++) {
		struct ks_source *src;
		struct ks_error err;
		struct counts c;
		const char *text;
		char *copy = malloc(len);
		memcpy(copy, data, len);
		at = len / 2 + (size_t)n * (len / 10);
		for (size_t i = 0; i < 64; i++)
			copy[at + i] ^= (char)(0x5a + i);
		if (ks_tracedat_open(&src, write_copy("zcorrupt.dat", copy, len), NULL, &err) == 0) {
			if (count_records(src, &c, &err) < 0 ||
			    ks_source_text_get(src, KS_TEXT_KALLSYMS, &text, NULL, &err) < 0)
				fails++;
			ks_source_close(src);
		} else {
			fails++;
		}
		KT_EXPECT(strchr(err.msg, '\n') == NULL);
		free(copy);
	}
	KT_EQ_INT(fails, 4);
	free(data);
}

/* Damaged kallsyms, read only when first asked for: the text is then
 * missing, ks_source_text_get() says why, and so does the source's next
 * read (a dump that printed a symbol stops there, with that error). */
static void t_corrupt_kallsyms_late(void)
{
	size_t len, at;
	char *data = read_shared(HIP "host-tsync.trace.dat", &len);
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err, err2;
	const char *text = "x";
	size_t tlen = 1;

	if (!data)
		return;
	at = len / 2; /* inside the kallsyms section */
	for (size_t i = 0; i < 64; i++)
		data[at + i] ^= (char)(0x5a + i);
	KT_REQUIRE(ks_tracedat_open(&src, write_copy("kcorrupt.dat", data, len), NULL, &err) == 0);
	KT_EQ_INT(ks_source_next(src, &rec, &err), 1); /* nothing asked for the symbols yet */
	KT_EXPECT(ks_source_text(src, KS_TEXT_KALLSYMS, &tlen) == NULL);
	KT_EQ_INT((int)tlen, 0);
	KT_EQ_INT(ks_source_text_get(src, KS_TEXT_KALLSYMS, &text, &tlen, &err), -1);
	KT_EXPECT(text == NULL);
	KT_EXPECT(strstr(err.msg, "corrupt zlib block") != NULL);
	/* the kallsyms section is at 3731 in this file, its block 16 bytes in */
	KT_EXPECT(strstr(err.msg, ": offset 3747: ") != NULL);
	KT_EQ_INT(ks_source_next(src, &rec, &err2), -1);
	KT_EXPECT(!strcmp(err.msg, err2.msg));
	KT_EQ_INT(ks_source_next(src, &rec, &err2), -1);
	ks_source_close(src);
	free(data);
}

static void t_bad_commit(void)
{
	const char *z = zstd_file(), *v6, *bad;
	struct ks_source *src;
	struct ks_error err;

	if (!z || !have_trace_cmd())
		return;
	v6 = convert(z, "base2-v6.dat", "--file-version 6 --compression none");
	KT_REQUIRE(v6 && ks_source_open(&src, v6, &err) == 0);
	bad = make_v6_with_events(v6, ks_source_tep(src), true);
	ks_source_close(src);
	KT_REQUIRE(bad);
	expect_error(bad, "bad commit size");
}

/* REL opened with CTX, with symbols (SYMS) or without. */
static struct ks_source *open_ctx(const char *rel, struct ks_ctx *ctx, bool syms)
{
	struct ks_source_opts o = { .flags = syms ? 0 : KS_OPEN_NO_SYMBOLS, .ctx = ctx };
	const char *p = kt_shared(rel);
	struct ks_source *src = NULL;
	struct ks_error err;

	if (!p)
		kt_skip("%s is absent", rel);
	else if (ks_tracedat_open(&src, p, &o, &err) < 0)
		kt_fail(__FILE__, __LINE__, "open: %s", err.msg);
	return src;
}

/* Every source has a tep of its own, even with one context: the tep
 * grows as the source's events are first needed (lazy_events.h).  Two
 * sources of one file decode the same events. */
static void t_tep_per_source(void)
{
	struct ks_ctx *ctx = ks_ctx_new();
	struct ks_source *a = open_ctx(HIP "host-tsync.trace.dat", ctx, false);
	struct ks_source *b = a ? open_ctx(HIP "host-tsync.trace.dat", ctx, true) : NULL;
	struct ks_source *n1 = b ? open_ctx(HIP "host-tsync.trace.dat", NULL, false) : NULL;
	struct ks_record ra, rb;
	struct ks_error err;
	int i, na = 1, nb = 1;

	KT_REQUIRE(ctx);
	if (!n1)
		goto out;
	KT_EXPECT(ks_source_tep(a) != ks_source_tep(b));
	KT_EXPECT(ks_source_tep(n1) != ks_source_tep(a));
	for (i = 0; i < 2000 && na > 0 && nb > 0; i++) {
		na = ks_source_next(a, &ra, &err);
		nb = ks_source_next(b, &rb, &err);
		KT_REQUIRE(na == nb);
		if (na > 0) {
			KT_EQ_U64(ra.ts, rb.ts);
			KT_REQUIRE(!ra.event == !rb.event);
			if (ra.event) {
				KT_EQ_INT(ra.event->id, rb.event->id);
				KT_EQ_STR(ra.event->name, rb.event->name);
			}
		}
	}
	KT_EXPECT(i > 100);
out:
	ks_source_close(n1);
	ks_source_close(b);
	ks_source_close(a);
	ks_ctx_free(ctx);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_host_tsync_meta),
		KT_CASE(t_guest_host_ids),
		KT_CASE(t_vcpu_threads_22k),
		KT_CASE(t_host_tsync_events),
		KT_CASE(t_rawtsc_events),
		KT_CASE(t_guest_only_events),
		KT_CASE(t_empty_events),
		KT_CASE(t_rawtsc_keeps_raw),
		KT_CASE(t_zstd_formats),
		KT_CASE(t_converted_v6_formats),
		KT_CASE(t_crafted_v6_vs_trace_cmd),
		KT_CASE(t_bad_magic),
		KT_CASE(t_bad_version),
		KT_CASE(t_truncated),
		KT_CASE(t_unknown_compression),
		KT_CASE(t_section_outside_file), KT_CASE(t_offset_option_checked),
		KT_CASE(t_corrupt_compressed),
		KT_CASE(t_corrupt_kallsyms_late),
		KT_CASE(t_bad_commit),
		KT_CASE(t_tep_per_source),
		{ 0 },
	};
	return kt_main(cases);
}
