/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-hostile.c - write crafted trace.dat files that once made the reader
 * accept an unfinished recording or spend far more memory or time than the
 * file's size suggests.  The regression inputs of tests/cli/hostile_test.sh
 * (made at test time: some are large or sparse, none is committed).
 *
 *   gen-hostile DIR [NAME...]     write every file (or the NAMEs) into DIR
 *   gen-hostile --list            print the names
 *
 * Every file is trace.dat v7 (trace-cmd.dat.v7(5)), little endian, 8-byte
 * longs: the 18-byte initial header, the compression name and version, the
 * offset of the first options section, then sections "u16 id, u16 flags,
 * u32 description, u64 size, payload".  A compressed payload is one block
 * "u32 compressed size, u32 size, zstd frame"; compressed CPU data is
 * "u32 chunk count" and such blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#define OPT_DONE 0
#define OPT_BUFFER 3
#define OPT_GUEST 13
#define OPT_HEADER_INFO 16
#define OPT_EVENT_FORMATS 18
#define SEC_FL_COMPRESS 1

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "gen-hostile: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static void add(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		if (!(b->p = realloc(b->p, cap)))
			die("out of memory");
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void u16(struct buf *b, uint16_t v) { add(b, &v, 2); }
static void u32(struct buf *b, uint32_t v) { add(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { add(b, &v, 8); }
static void str(struct buf *b, const char *s) { add(b, s, strlen(s) + 1); }

static void patch64(struct buf *b, size_t at, uint64_t v)
{
	memcpy(b->p + at, &v, 8);
}

/* The initial header; returns where the options offset is. */
static size_t header(struct buf *b, uint32_t page_size, const char *comp, const char *comp_version)
{
	static const uint8_t endian_long[2] = { 0, 8 };

	add(b, "\x17\x08\x44tracing", 10);
	add(b, "7", 2);
	add(b, endian_long, 2);
	u32(b, page_size);
	str(b, comp);
	str(b, comp_version);
	u64(b, 0);
	return b->len - 8;
}

static void section_header(struct buf *b, uint16_t id, uint16_t flags, uint64_t size)
{
	u16(b, id);
	u16(b, flags);
	u32(b, 0);
	u64(b, size);
}

/* zstd of LEN bytes made by FILL(i, piece, n) in pieces (no buffer of the
 * whole: some payloads are hundreds of MB), appended as "u32 csize,
 * u32 size, frame". */
static void zstd_block(struct buf *b, uint64_t len, void (*fill)(uint64_t at, uint8_t *p, size_t n))
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t piece = 1u << 20, hdr = b->len, start, r;
	uint8_t *in = malloc(piece);
	uint8_t out[1 << 16];
	uint64_t at = 0;

	if (!cc || !in || len > UINT32_MAX)
		die("zstd");
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setPledgedSrcSize(cc, len);
	u32(b, 0);
	u32(b, (uint32_t)len);
	start = b->len;
	do {
		size_t n = len - at < piece ? (size_t)(len - at) : piece;
		ZSTD_EndDirective end = at + n == len ? ZSTD_e_end : ZSTD_e_continue;
		ZSTD_inBuffer ib = { in, n, 0 };

		fill(at, in, n);
		at += n;
		do {
			ZSTD_outBuffer ob = { out, sizeof(out), 0 };
			r = ZSTD_compressStream2(cc, &ob, &ib, end);
			if (ZSTD_isError(r))
				die(ZSTD_getErrorName(r));
			add(b, out, ob.pos);
		} while (end == ZSTD_e_end ? r != 0 : ib.pos < ib.size);
	} while (at < len);
	{
		uint32_t csize = (uint32_t)(b->len - start);
		memcpy(b->p + hdr, &csize, 4);
	}
	ZSTD_freeCCtx(cc);
	free(in);
}

/* The header_page / header_event section the kernel would describe. */
static uint64_t headers_section(struct buf *b, uint32_t page_size)
{
	char page[512];
	static const char event[] = "# compressed entry header\n\ttype_len    :    5 bits\n"
				    "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n";
	uint64_t at = b->len;
	int n = snprintf(page, sizeof(page),
			 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			 "\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n", page_size - 16);

	section_header(b, OPT_HEADER_INFO, 0, 12 + 8 + (uint64_t)n + 13 + 8 + sizeof(event) - 1);
	str(b, "header_page");
	u64(b, (uint64_t)n);
	add(b, page, (size_t)n);
	str(b, "header_event");
	u64(b, sizeof(event) - 1);
	add(b, event, sizeof(event) - 1);
	return at;
}

/* A v7 BUFFER option: flyrecord at FLY, NCPU CPUs whose data is at
 * OFFS[i] (one region for all when OFFS has one entry), SIZE bytes each. */
static void buffer_option(struct buf *o, const char *name, uint64_t fly, uint32_t ncpu,
			  const uint64_t *offs, int one_region, uint64_t size)
{
	uint32_t i;

	u16(o, OPT_BUFFER);
	u32(o, 8 + (uint32_t)strlen(name) + 1 + 6 + 8 + 20 * ncpu);
	u64(o, fly);
	str(o, name);
	str(o, "local");
	u32(o, 0); /* the file's page size */
	u32(o, ncpu);
	for (i = 0; i < ncpu; i++) {
		u32(o, i);
		u64(o, offs[one_region ? 0 : i]);
		u64(o, size);
	}
}

static void done_option(struct buf *o)
{
	u16(o, OPT_DONE);
	u32(o, 8);
	u64(o, 0);
}

/* An uncompressed options section holding O, at the end of B; the file
 * header's options offset (at HDR) points at it. */
static void options_section(struct buf *b, size_t hdr, const struct buf *o)
{
	patch64(b, hdr, b->len);
	section_header(b, OPT_DONE, 0, o->len);
	add(b, o->p, o->len);
}

static void write_file(const char *dir, const char *name, const struct buf *b, uint64_t size)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	if (write(fd, b->p, b->len) != (ssize_t)b->len)
		die(path);
	/* the rest (zero pages) is a hole */
	if (size > b->len && ftruncate(fd, (off_t)size) < 0)
		die(path);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* the files */

/* `kvmscope record` stopped early: 37 bytes, the options offset not yet
 * written (0). */
static void gen_offset0(const char *dir)
{
	struct buf b = { 0 };

	header(&b, 4096, "zstd", "1.5.5");
	write_file(dir, "v7-offset0.dat", &b, 0);
	free(b.p);
}

/* Stopped while writing the CPU data: the first options section (no BUFFER
 * option, DONE -> 0) and a flyrecord section of a few empty pages. */
static void gen_unfinished_data(const char *dir)
{
	struct buf b = { 0 }, o = { 0 };
	size_t hdr = header(&b, 4096, "none", "");
	uint64_t hs = headers_section(&b, 4096);

	u16(&o, OPT_HEADER_INFO);
	u32(&o, 8);
	u64(&o, hs);
	done_option(&o);
	options_section(&b, hdr, &o);
	section_header(&b, OPT_BUFFER, 0, 0);
	write_file(dir, "v7-unfinished-data.dat", &b, b.len + 3 * 4096);
	free(b.p);
	free(o.p);
}

static void fill_zero(uint64_t at, uint8_t *p, size_t n)
{
	(void)at;
	memset(p, 0, n);
}

/* One zstd chunk inflating to 64 MiB of empty pages: SHARED: named by 40
 * BUFFER options (the top buffer and 39 instances, one CPU each); else 40
 * CPUs of one buffer, each with its own copy of the chunk. */
static void gen_zstd_bomb(const char *dir, int shared)
{
	struct buf b = { 0 }, o = { 0 }, chunk = { 0 };
	size_t hdr = header(&b, 4096, "zstd", "1.5.5");
	uint64_t hs = headers_section(&b, 4096), fly, offs[40];
	uint32_t i, n = shared ? 1 : 40;

	zstd_block(&chunk, 64u << 20, fill_zero);
	fly = b.len;
	section_header(&b, OPT_BUFFER, SEC_FL_COMPRESS, (uint64_t)n * (4 + chunk.len));
	for (i = 0; i < n; i++) {
		offs[i] = b.len;
		u32(&b, 1); /* one chunk */
		add(&b, chunk.p, chunk.len);
	}
	u16(&o, OPT_HEADER_INFO);
	u32(&o, 8);
	u64(&o, hs);
	if (shared) {
		for (i = 0; i < 40; i++) {
			char name[16];
			snprintf(name, sizeof(name), i ? "i%u" : "", i);
			buffer_option(&o, name, fly, 1, offs, 1, chunk.len);
		}
	} else {
		buffer_option(&o, "", fly, 40, offs, 0, chunk.len);
	}
	done_option(&o);
	options_section(&b, hdr, &o);
	write_file(dir, shared ? "zstd-bomb-shared.dat" : "zstd-bomb-40cpus.dat", &b, 0);
	free(b.p);
	free(o.p);
	free(chunk.p);
}

/* Uncompressed: one 16 MiB page (a hole: empty) named by 20 CPUs. */
static void gen_page_shared(const char *dir)
{
	const uint32_t ps = 16u << 20;
	struct buf b = { 0 }, o = { 0 };
	size_t hdr = header(&b, ps, "none", "");
	uint64_t hs = headers_section(&b, ps), fly, page;

	fly = b.len;
	section_header(&b, OPT_BUFFER, 0, 0);
	u16(&o, OPT_HEADER_INFO);
	u32(&o, 8);
	u64(&o, hs);
	/* options first, then the page at the next 4 KiB boundary */
	page = (b.len + 6 + 20 + (8 + 1 + 6 + 8 + 20 * 20) + 14 + 16 + 4095) / 4096 * 4096;
	buffer_option(&o, "", fly, 20, &page, 1, ps);
	done_option(&o);
	options_section(&b, hdr, &o);
	patch64(&b, fly + 8, page + ps - fly - 16);
	if (b.len > page)
		die("page layout");
	write_file(dir, "page-shared.dat", &b, page + ps);
	free(b.p);
	free(o.p);
}

/* COUNT copies of one option, then DONE, in one zstd options section. */
static uint8_t fill_rec[64], fill_done[14];
static uint32_t fill_size;
static uint64_t fill_records;  /* bytes of the repeated records */

static void fill_options(uint64_t at, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++, at++)
		p[i] = at < fill_records ? fill_rec[at % fill_size] : fill_done[at - fill_records];
}

static void many_options(const char *dir, const char *name, uint16_t id, uint64_t count)
{
	struct buf b = { 0 }, rec = { 0 }, done = { 0 };
	size_t hdr = header(&b, 4096, "zstd", "1.5.5"), sec, start;

	u16(&rec, id);
	if (id == OPT_BUFFER) { /* an empty instance "b": no CPUs */
		u32(&rec, 8 + 2 + 1 + 8);
		u64(&rec, 0);
		str(&rec, "b");
		str(&rec, "");
		u32(&rec, 0);
		u32(&rec, 0);
	} else { /* GUEST "g", trace id 1, no vCPUs */
		u32(&rec, 2 + 8 + 4);
		str(&rec, "g");
		u64(&rec, 1);
		u32(&rec, 0);
	}
	done_option(&done);
	memcpy(fill_rec, rec.p, rec.len);
	memcpy(fill_done, done.p, done.len);
	fill_size = (uint32_t)rec.len;
	fill_records = count * rec.len;
	patch64(&b, hdr, b.len);
	sec = b.len;
	section_header(&b, OPT_DONE, SEC_FL_COMPRESS, 0);
	start = b.len;
	zstd_block(&b, fill_records + done.len, fill_options);
	patch64(&b, sec + 8, b.len - start);
	write_file(dir, name, &b, 0);
	free(b.p);
	free(rec.p);
	free(done.p);
}

/* The payload of an event formats block: system "kvm", NFMT formats of
 * NFIELDS fields each ("u32 systems, name, u32 count, (u64 size, text)*"). */
static void kvm_formats(struct buf *b, uint32_t nfmt, uint32_t nfields)
{
	struct buf t = { 0 };
	char line[128];
	uint32_t i, f;

	u32(b, 1);
	str(b, "kvm");
	u32(b, nfmt);
	for (i = 0; i < nfmt; i++) {
		t.len = 0;
		snprintf(line, sizeof(line), "name: kvm_exit%s%.0u\nID: %u\nformat:\n", i ? "_" : "",
			 i, 1000 + i);
		add(&t, line, strlen(line));
		for (f = 0; f < nfields; f++) {
			snprintf(line, sizeof(line),
				 "\tfield:unsigned int f%u;\toffset:%u;\tsize:4;\tsigned:0;\n",
				 f, 8 + 4 * (f % 1000));
			add(&t, line, strlen(line));
		}
		snprintf(line, sizeof(line), "\nprint fmt: \"%%u\", REC->f0\n");
		add(&t, line, strlen(line));
		u64(b, t.len);
		add(b, t.p, t.len);
	}
	free(t.p);
}

static struct buf fill_src;
static void fill_copy(uint64_t at, uint8_t *p, size_t n)
{
	memcpy(p, fill_src.p + at, n);
}

/* Event formats of NFMT formats with NFIELDS fields each: V7, a zstd
 * section of a few hundred KB that inflates to tens of MB of field lines,
 * in a file of no CPU data; else the same formats in a v6 file.  Once,
 * libtraceevent's parse of them took hundreds of MB outside the budget. */
static void many_fields(const char *dir, const char *name, int v7, uint32_t nfmt, uint32_t nfields)
{
	struct buf b = { 0 }, o = { 0 };

	fill_src.len = 0;
	kvm_formats(&fill_src, nfmt, nfields);
	if (v7) {
		size_t hdr = header(&b, 4096, "zstd", "1.5.5"), sec, start;
		uint64_t hs = headers_section(&b, 4096), fs, fly;

		fs = sec = b.len;
		section_header(&b, OPT_EVENT_FORMATS, SEC_FL_COMPRESS, 0);
		start = b.len;
		zstd_block(&b, fill_src.len, fill_copy);
		patch64(&b, sec + 8, b.len - start);
		fly = b.len;
		section_header(&b, OPT_BUFFER, 0, 0);
		u16(&o, OPT_HEADER_INFO);
		u32(&o, 8);
		u64(&o, hs);
		u16(&o, OPT_EVENT_FORMATS);
		u32(&o, 8);
		u64(&o, fs);
		buffer_option(&o, "", fly, 0, NULL, 0, 0);
		done_option(&o);
		options_section(&b, hdr, &o);
	} else {
		static const char page[] =
			"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
		static const char event[] = "# compressed entry header\n\ttype_len    :    5 bits\n"
					    "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n";
		static const uint8_t endian_long[2] = { 0, 8 };

		add(&b, "\x17\x08\x44tracing", 10);
		add(&b, "6", 2);
		add(&b, endian_long, 2);
		u32(&b, 4096);
		str(&b, "header_page");
		u64(&b, sizeof(page) - 1);
		add(&b, page, sizeof(page) - 1);
		str(&b, "header_event");
		u64(&b, sizeof(event) - 1);
		add(&b, event, sizeof(event) - 1);
		u32(&b, 0); /* ftrace formats */
		add(&b, fill_src.p, fill_src.len);
		u32(&b, 0); /* kallsyms */
		u32(&b, 0); /* printk formats */
		u64(&b, 0); /* saved cmdlines */
		u32(&b, 0); /* CPUs */
		add(&b, "flyrecord", 10);
	}
	write_file(dir, name, &b, 0);
	free(b.p);
	free(o.p);
}

static void gen_fields_1m_zstd(const char *dir) { many_fields(dir, "fields-1m-zstd.dat", 1, 1, 1000000); }
static void gen_fields_300x4k_zstd(const char *dir)
{
	many_fields(dir, "fields-300x4k-zstd.dat", 1, 300, 4000);
}
static void gen_fields_200k_v6(const char *dir) { many_fields(dir, "fields-200k-v6.dat", 0, 1, 200000); }
static void gen_buffers_100k(const char *dir) { many_options(dir, "buffers-100k.dat", OPT_BUFFER, 100000); }
static void gen_buffers_1m(const char *dir) { many_options(dir, "buffers-1m.dat", OPT_BUFFER, 1000000); }
static void gen_guests_2m(const char *dir) { many_options(dir, "guests-2m.dat", OPT_GUEST, 2000000); }
static void gen_guests_13m(const char *dir) { many_options(dir, "guests-13m.dat", OPT_GUEST, 13000000); }
static void gen_bomb_shared(const char *dir) { gen_zstd_bomb(dir, 1); }
static void gen_bomb_40cpus(const char *dir) { gen_zstd_bomb(dir, 0); }

static const struct {
	const char *name;
	void (*gen)(const char *dir);
} files[] = {
	{ "v7-offset0.dat", gen_offset0 },
	{ "v7-unfinished-data.dat", gen_unfinished_data },
	{ "zstd-bomb-shared.dat", gen_bomb_shared },
	{ "zstd-bomb-40cpus.dat", gen_bomb_40cpus },
	{ "page-shared.dat", gen_page_shared },
	{ "buffers-100k.dat", gen_buffers_100k },
	{ "buffers-1m.dat", gen_buffers_1m },
	{ "guests-2m.dat", gen_guests_2m },
	{ "guests-13m.dat", gen_guests_13m },
	{ "fields-1m-zstd.dat", gen_fields_1m_zstd },
	{ "fields-300x4k-zstd.dat", gen_fields_300x4k_zstd },
	{ "fields-200k-v6.dat", gen_fields_200k_v6 },
};

int main(int argc, char **argv)
{
	size_t i, n = sizeof(files) / sizeof(files[0]);
	int a;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < n; i++)
			printf("%s\n", files[i].name);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: gen-hostile DIR [NAME...] | --list\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		int want = argc == 2;
		for (a = 2; a < argc; a++)
			want |= !strcmp(argv[a], files[i].name);
		if (want)
			files[i].gen(argv[1]);
	}
	for (a = 2; a < argc; a++) {
		for (i = 0; i < n && strcmp(argv[a], files[i].name); i++)
			;
		if (i == n) {
			fprintf(stderr, "gen-hostile: no file named %s (see --list)\n", argv[a]);
			return 2;
		}
	}
	return 0;
}
