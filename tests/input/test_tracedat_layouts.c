/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_tracedat_layouts.c - trace.dat buffer instances and the latency
 * layout in the reader, on files written here with kvmscope's writer, and
 * damaged copies of them.
 *
 * Oracles: what was written (which buffer, CPU and time every event went
 * to; the order trace-cmd report merges buffers in: time, then the top
 * buffer before instances in option order, then CPU), and for latency files
 * the ftrace text reader on the same text saved as a plain file.
 * tests/cli/tracedat_layouts_test.sh compares the same layouts with
 * Debian's trace-cmd report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "../lib/ktest.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"
#include "kvmscope/tracedat_writer.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static const char fmt_text[] =
	"name: blob\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int seq;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"seq=%u\", REC->seq\n";

static const char *const names[] = { NULL, "first", "second_instance" };

#define NEV 300

/* What event SEQ was written as. */
struct wrote { uint32_t buf, cpu; uint64_t ts; };
static struct wrote wrote[NEV];

static const char lat_text[] =
	"# tracer: nop\n#\n"
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	"#              | |         |   |||||     |         |\n"
	"       CPU 0/KVM-4242    [000] d..1.   100.000001: kvm_exit: vcpu 0 reason HLT rip 0xffffffff81000000 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000\n"
	"       CPU 0/KVM-4242    [000] d..1.   100.000003: kvm_entry: vcpu 0, rip 0xffffffff81000000\n"
	"       CPU 1/KVM-4243    [001] d..1.   100.000004: kvm_exit: vcpu 1 reason EXTERNAL_INTERRUPT rip 0xffffffff81000010 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000fd error_code 0x00000000\n";

/* Paths stay valid for the next three calls. */
static const char *tmp_path(const char *name)
{
	static char paths[4][4096];
	static int next;
	char *path = paths[next++ % 4];

	snprintf(path, sizeof(paths[0]), "%s/%s", kt_tmpdir(), name);
	return path;
}

static struct ks_tdw *create(const char *path, int version, const char *comp)
{
	struct ks_tdw_opts o = { .file_version = version, .compression = comp, .nr_cpus = 2 };
	struct ks_error err;
	struct ks_tdw *w = ks_tdw_create(path, &o, &err);

	if (!w || ks_tdw_add_event_format(w, "test", fmt_text, strlen(fmt_text), &err) < 0) {
		kt_fail(__FILE__, __LINE__, "writer: %s", err.msg);
		return NULL;
	}
	return w;
}

/* Events go round the buffers; every third one shares the time of the one before. */
static bool write_instances(const char *path, int version, const char *comp)
{
	struct ks_tdw *w = create(path, version, comp);
	struct ks_error err;
	uint32_t inst, seq;
	uint64_t ts = 5000;

	if (!w)
		return false;
	if (ks_tdw_add_instance(w, names[1], &inst, &err) < 0 ||
	    ks_tdw_add_instance(w, names[2], &inst, &err) < 0)
		goto fail;
	for (seq = 0; seq < NEV; seq++) {
		uint8_t p[12] = { 7, 0 };
		int32_t pid = 100 + (int32_t)(seq % 3);
		struct wrote *e = &wrote[seq];

		if (seq % 3)
			ts += 10 + seq % 7;
		e->buf = (seq * 5 / 3) % 3;
		e->cpu = (seq / 2) % 2;
		e->ts = ts;
		memcpy(p + 4, &pid, 4);
		memcpy(p + 8, &seq, 4);
		if (ks_tdw_add_instance_event(w, e->buf, e->cpu, ts, p, sizeof(p), &err) < 0)
			goto fail;
	}
	if (ks_tdw_close(w, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "writer: %s", err.msg);
		return false;
	}
	return true;
fail:
	kt_fail(__FILE__, __LINE__, "writer: %s", err.msg);
	ks_tdw_abort(w);
	return false;
}

/* Every event, once, from its buffer, in (ts, buffer, cpu) order. */
static void check_instances(const char *path)
{
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	bool seen[NEV] = { false };
	const struct wrote *prev = NULL;
	int r, n = 0;

	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	/* BUFFER options: v6 has them for the instances only */
	KT_EQ_U64(ks_tracedat_meta(src)->nr_buffers, ks_tracedat_meta(src)->version == 6 ? 2 : 3);
	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		const char *b = ks_tracedat_record_buffer(src, &rec);
		uint32_t seq;
		const struct wrote *e;

		KT_REQUIRE(rec.type == KS_REC_EVENT && rec.size >= 12);
		memcpy(&seq, (const uint8_t *)rec.data + 8, 4);
		KT_REQUIRE(seq < NEV && !seen[seq]);
		seen[seq] = true;
		e = &wrote[seq];
		if (!names[e->buf])
			KT_EXPECT(b == NULL);
		else
			KT_EQ_STR(b, names[e->buf]);
		KT_EQ_U64(rec.ts, e->ts);
		KT_EQ_INT(rec.cpu, e->cpu);
		if (prev)
			KT_EXPECT(prev->ts < e->ts || (prev->ts == e->ts &&
				  (prev->buf < e->buf || (prev->buf == e->buf && prev->cpu <= e->cpu))));
		prev = e;
		n++;
	}
	KT_EQ_INT(r, 0);
	KT_EQ_INT(n, NEV);
	ks_source_close(src);
}

static void instances_case(int version, const char *comp, const char *name)
{
	const char *path = tmp_path(name);

	if (write_instances(path, version, comp))
		check_instances(path);
}

static void t_instances_v6(void) { instances_case(6, "none", "inst6.dat"); }
static void t_instances_v7(void) { instances_case(7, "none", "inst7.dat"); }
static void t_instances_v7_zstd(void) { instances_case(7, "zstd", "inst7z.dat"); }
static void t_instances_v7_zlib(void) { instances_case(7, "zlib", "inst7l.dat"); }

static bool write_latency(const char *path, int version, const char *comp)
{
	struct ks_tdw *w = create(path, version, comp);
	struct ks_error err;

	if (!w)
		return false;
	if (ks_tdw_set_latency_text(w, lat_text, strlen(lat_text), &err) < 0 ||
	    ks_tdw_close(w, &err) < 0) {
		kt_fail(__FILE__, __LINE__, "writer: %s", err.msg);
		return false;
	}
	return true;
}

/* The records of the latency file equal the text reader's on the text. */
static void latency_case(int version, const char *comp, const char *name)
{
	const char *txt = tmp_path("lat.txt");
	struct ks_source *a, *b;
	struct ks_record ra, rb;
	struct ks_error err;
	char path[4096];
	size_t len = 0;
	FILE *f = fopen(txt, "w");
	int r1, r2, n = 0;

	KT_REQUIRE(f && fwrite(lat_text, 1, strlen(lat_text), f) == strlen(lat_text));
	fclose(f);
	snprintf(path, sizeof(path), "%s", tmp_path(name));
	KT_REQUIRE(write_latency(path, version, comp));
	KT_REQUIRE(ks_source_open(&a, path, &err) == 0);
	KT_REQUIRE(ks_source_open(&b, txt, &err) == 0);
	KT_EXPECT(ks_tracedat_meta(a)->has_latency);
	KT_EXPECT(ks_tracedat_latency_text(a, &len) != NULL);
	KT_EQ_U64(len, strlen(lat_text));
	KT_EXPECT(!memcmp(ks_tracedat_latency_text(a, NULL), lat_text, len));
	for (;;) {
		r1 = ks_source_next(a, &ra, &err);
		r2 = ks_source_next(b, &rb, &err);
		KT_EQ_INT(r1, r2);
		if (r1 <= 0 || r2 <= 0)
			break;
		KT_EQ_INT(ra.type, rb.type);
		KT_EQ_U64(ra.ts, rb.ts);
		KT_EQ_INT(ra.cpu, rb.cpu);
		KT_EQ_INT(ra.tid, rb.tid);
		KT_EQ_U64(ra.size, rb.size);
		if (ra.type == KS_REC_EVENT) {
			KT_REQUIRE(ra.event && rb.event);
			KT_EQ_STR(ra.event->name, rb.event->name);
			KT_EXPECT(!memcmp(ra.data, rb.data, ra.size));
			KT_EXPECT(ra.event == tep_find_event(ks_source_tep(a), ra.event->id));
			n++;
		}
	}
	KT_EQ_INT(n, 3);
	ks_source_close(a);
	ks_source_close(b);
}

static void t_latency_v6(void) { latency_case(6, "none", "lat6.dat"); }
static void t_latency_v7(void) { latency_case(7, "none", "lat7.dat"); }
static void t_latency_v7_zstd(void) { latency_case(7, "zstd", "lat7z.dat"); }

/* ------------------------------------------------------------------ */
/* damaged files: one error line naming the file, no crash */

static uint8_t *load(const char *path, size_t *len)
{
	return (uint8_t *)kt_read_file(path, len);
}

static void save(const char *path, const uint8_t *d, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(d, 1, len, f);
		fclose(f);
	}
}

static size_t find(const uint8_t *d, size_t len, const void *pat, size_t n)
{
	const uint8_t *p = memmem(d, len, pat, n);

	return p ? (size_t)(p - d) : (size_t)-1;
}

/* Open PATH and read it to the end: it must fail with WHAT in the message. */
static void expect_error(const char *path, const char *what)
{
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	int r;

	if (ks_source_open(&src, path, &err) == 0) {
		while ((r = ks_source_next(src, &rec, &err)) > 0)
			;
		ks_source_close(src);
		if (r == 0) {
			kt_fail(__FILE__, __LINE__, "%s was read without an error", path);
			return;
		}
	}
	if (!strstr(err.msg, path) || !strstr(err.msg, what) || strchr(err.msg, '\n'))
		kt_fail(__FILE__, __LINE__, "error \"%s\" does not name the file and \"%s\"", err.msg,
			what);
}

static void t_damaged_v6_instance(void)
{
	const char *path = tmp_path("inst6.dat"), *bad = tmp_path("bad-inst6.dat");
	size_t len, at;
	uint8_t *d;
	uint64_t off;

	KT_REQUIRE(write_instances(path, 6, "none"));
	KT_REQUIRE((d = load(path, &len)) != NULL);
	at = find(d, len, "first", 6); /* BUFFER option: offset, then the name */
	KT_REQUIRE(at != (size_t)-1 && at >= 8);
	off = len + 100;
	memcpy(d + at - 8, &off, 8);
	save(bad, d, len);
	expect_error(bad, "outside the file");
	off = 0; /* the file header is not a "flyrecord" table */
	memcpy(d + at - 8, &off, 8);
	save(bad, d, len);
	expect_error(bad, "expected \"flyrecord\"");
	free(d);
}

static void t_damaged_v7_instance(void)
{
	const char *path = tmp_path("inst7.dat"), *bad = tmp_path("bad-inst7.dat");
	size_t len, at;
	uint8_t *d;
	uint64_t size = 1ull << 40;

	KT_REQUIRE(write_instances(path, 7, "none"));
	KT_REQUIRE((d = load(path, &len)) != NULL);
	/* name, clock "local", page size, CPU count, then CPU 0: id, offset, size */
	at = find(d, len, "second_instance\0local", 22);
	KT_REQUIRE(at != (size_t)-1);
	memcpy(d + at + 22 + 8 + 4 + 8, &size, 8);
	save(bad, d, len);
	expect_error(bad, "outside the file");
	free(d);
}

static void t_damaged_latency(void)
{
	static const uint8_t opt[] = { 22, 0, 15, 0, 0, 0 }; /* BUFFER_TEXT, 15 bytes */
	const char *path = tmp_path("lat7.dat"), *bad = tmp_path("bad-lat7.dat");
	const char *zpath = tmp_path("lat7z.dat");
	size_t len, at;
	uint8_t *d;
	uint64_t off, size = 1ull << 40;

	KT_REQUIRE(write_latency(path, 7, "none"));
	KT_REQUIRE((d = load(path, &len)) != NULL);
	at = find(d, len, opt, sizeof(opt));
	KT_REQUIRE(at != (size_t)-1);
	memcpy(&off, d + at + 6, 8);
	KT_REQUIRE(off + 16 <= len);
	memcpy(d + off + 8, &size, 8); /* section size past the end */
	save(bad, d, len);
	expect_error(bad, "runs past the end of the file");
	off = len - 4;
	memcpy(d + at + 6, &off, 8);
	save(bad, d, len);
	expect_error(bad, "latency section lies outside the file");
	free(d);

	KT_REQUIRE(write_latency(zpath, 7, "zstd"));
	KT_REQUIRE((d = load(zpath, &len)) != NULL);
	at = find(d, len, opt, sizeof(opt));
	KT_REQUIRE(at != (size_t)-1);
	memcpy(&off, d + at + 6, 8);
	KT_REQUIRE(off + 16 + 4 + 8 + 16 <= len);
	memset(d + off + 16 + 4 + 8 + 4, 0xa5, 12); /* inside the first chunk's data */
	save(bad, d, len);
	expect_error(bad, "corrupt zstd block");
	free(d);
	KT_REQUIRE((d = load(zpath, &len)) != NULL);
	/* a chunk count far beyond what the section holds */
	memcpy(d + off + 16, &(uint32_t){ 1000 }, 4);
	save(bad, d, len);
	expect_error(bad, "compressed block");
	free(d);
}

static void t_damaged_v6_latency_is_text(void)
{
	/* v6: everything after "latency" is text; a cut file is a shorter text */
	const char *path = tmp_path("lat6.dat"), *cut = tmp_path("cut-lat6.dat");
	struct ks_source *src;
	struct ks_error err;
	size_t len, tl = 0;
	uint8_t *d;

	KT_REQUIRE(write_latency(path, 6, "none"));
	KT_REQUIRE((d = load(path, &len)) != NULL);
	save(cut, d, len - 40);
	KT_REQUIRE(ks_source_open(&src, cut, &err) == 0);
	KT_EXPECT(ks_tracedat_latency_text(src, &tl) != NULL);
	KT_EQ_U64(tl, strlen(lat_text) - 40);
	ks_source_close(src);
	free(d);
}

/* The first options section of a v7 file D (compression "none"): its
 * offset, and where its options begin and end. */
static bool first_options(const uint8_t *d, size_t len, uint64_t *sec, size_t *begin, size_t *end)
{
	size_t at = find(d, len, "none", 5), n;
	uint64_t size;

	if (at == (size_t)-1)
		return false;
	at += 5;
	n = strnlen((const char *)d + at, len - at); /* compression version */
	if (at + n + 1 + 8 > len)
		return false;
	memcpy(sec, d + at + n + 1, 8);
	if (*sec + 16 > len)
		return false;
	memcpy(&size, d + *sec + 8, 8);
	*begin = *sec + 16;
	*end = *begin + size;
	return *end <= len;
}

/* The data of option ID in the options [AT, END) of D, or (size_t)-1. */
static size_t option_data(const uint8_t *d, size_t at, size_t end, uint16_t id)
{
	while (at + 6 <= end) {
		uint16_t this;
		uint32_t size;

		memcpy(&this, d + at, 2);
		memcpy(&size, d + at + 2, 4);
		if (this == id)
			return at + 6;
		at += 6 + size;
	}
	return (size_t)-1;
}

/* Sections that point back at a section already read: an options section
 * whose DONE names itself as the next one (once 4096 rounds of parsing its
 * options and their sections again, then an error), and a second option
 * naming the section of the first (once parsed twice). */
static void t_damaged_v7_loops(void)
{
	const char *path = tmp_path("inst7.dat"), *bad = tmp_path("loop7.dat");
	size_t len, begin, end, at, other;
	uint64_t sec;
	uint8_t *d;

	KT_REQUIRE(write_instances(path, 7, "none"));
	KT_REQUIRE((d = load(path, &len)) != NULL);
	KT_REQUIRE(first_options(d, len, &sec, &begin, &end));
	at = option_data(d, begin, end, 0); /* DONE: the next options section */
	KT_REQUIRE(at != (size_t)-1);
	memcpy(d + at, &sec, 8);
	save(bad, d, len);
	expect_error(bad, "the previous options section points at a section already read");
	free(d);

	KT_REQUIRE((d = load(path, &len)) != NULL);
	at = option_data(d, begin, end, 16); /* HEADER_INFO: its section */
	other = option_data(d, begin, end, 17); /* FTRACE_EVENTS becomes a second one */
	KT_REQUIRE(at != (size_t)-1 && other != (size_t)-1);
	memcpy(d + other - 6, &(uint16_t){ 16 }, 2);
	memcpy(d + other, d + at, 8);
	save(bad, d, len);
	expect_error(bad, "the option points at a section already read");
	free(d);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_instances_v6),
		KT_CASE(t_instances_v7),
		KT_CASE(t_instances_v7_zstd),
		KT_CASE(t_instances_v7_zlib),
		KT_CASE(t_latency_v6),
		KT_CASE(t_latency_v7),
		KT_CASE(t_latency_v7_zstd),
		KT_CASE(t_damaged_v6_instance),
		KT_CASE(t_damaged_v7_instance),
		KT_CASE(t_damaged_latency),
		KT_CASE(t_damaged_v6_latency_is_text),
		KT_CASE(t_damaged_v7_loops),
		{ 0 },
	};
	return kt_main(cases);
}
