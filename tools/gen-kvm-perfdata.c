/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-kvm-perfdata - write a perf.data file of KVM tracepoint samples for any
 * architecture, in either byte order, from a scenario text (test data).
 *
 * Unlike gen-perfdata (x86, template-based), everything is built here: the
 * header, one tracepoint attr per event format, the data section (COMM and
 * SAMPLE records) and the features TRACING_DATA (the formats, saved
 * cmdlines), ARCH and CPUID.  It does not use kvmscope's reader code.
 *
 * Usage:
 *   gen-kvm-perfdata --formats DIR --machine aarch64 [--cpuid STR]
 *                    [--big-endian] -o OUT SCENARIO
 *
 *   DIR holds SYSTEM/EVENT.format files (tracefs format text, "ID:" = the
 *   attr config).  SCENARIO lines ('#' starts a comment):
 *     comm TID PID NAME...            a PERF_RECORD_COMM (NAME may have spaces)
 *                                     at time 0 (delivered at once), and a
 *                                     saved cmdline
 *     cmdline TID NAME...             a saved cmdline only (no COMM record)
 *     comm-at TS CPU TID PID NAME...  a COMM at time TS (thread renamed or a
 *                                     new thread named; no saved cmdline)
 *     fork TS CPU TID PID PTID PPID   a PERF_RECORD_FORK (new thread TID)
 *     exit TS CPU TID PID PTID PPID   a PERF_RECORD_EXIT (TID is gone)
 *     TS CPU TID PID SYSTEM:EVENT [FIELD=VALUE]...
 *                                     a sample; TS in ns; fields not given are 0
 * Samples carry IDENTIFIER|TID|TIME|CPU|PERIOD|RAW and must be in time order.
 * Every attr sets sample_id_all, as perf record does: COMM/FORK/EXIT records
 * end with the {pid, tid, time, cpu, identifier} trailer, so readers order
 * them with the samples.
 * Errors are one line on stderr, exit 1.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#define ATTR_SIZE 128
#define TYPE_TRACEPOINT 2
#define REC_COMM 3
#define REC_EXIT 4
#define REC_FORK 7
#define REC_SAMPLE 9
#define ATTR_SAMPLE_ID_ALL_BIT 18
#define ST_IP (1u << 0)
#define ST_TID (1u << 1)
#define ST_TIME (1u << 2)
#define ST_CPU (1u << 7)
#define ST_PERIOD (1u << 8)
#define ST_RAW (1u << 10)
#define ST_IDENTIFIER (1u << 16)
#define FEAT_TRACING_DATA 1
#define FEAT_ARCH 6
#define FEAT_CPUID 9
#define MAX_EVENTS 64
#define MAX_PAYLOAD 512

struct fmt {
	char system[64];
	char *text;
	size_t len;
	struct tep_event *ev;
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static bool big;                 /* write big-endian */
static struct fmt fmts[MAX_EVENTS];
static int nfmts;
static struct tep_handle *tep;
static struct buf cmdlines;

static _Noreturn void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gen-kvm-perfdata: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			fail("out of memory");
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* N bytes of V in the output byte order. */
static void store(uint8_t *dst, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		dst[big ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void put_u(struct buf *b, uint64_t v, int n)
{
	uint8_t t[8];

	store(t, v, n);
	put(b, t, (size_t)n);
}

static void pad8(struct buf *b)
{
	static const uint8_t z[8];

	put(b, z, (8 - b->len % 8) % 8);
}

/* ---- formats ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b = { 0 };
	char chunk[4096];
	size_t n;

	if (!f)
		fail("%s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		put(&b, chunk, n);
	fclose(f);
	put(&b, "", 1);
	*len = b.len - 1;
	return (char *)b.p;
}

static void load_system(const char *dir, const char *system)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, system);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct fmt *f;

		if (l < 8 || strcmp(de->d_name + l - 7, ".format"))
			continue;
		if (nfmts == MAX_EVENTS)
			fail("too many formats");
		f = &fmts[nfmts++];
		snprintf(f->system, sizeof(f->system), "%s", system);
		snprintf(path, sizeof(path), "%s/%s/%s", dir, system, de->d_name);
		f->text = slurp(path, &f->len);
		if (tep_parse_event(tep, f->text, f->len, system))
			fail("%s: libtraceevent cannot parse it", path);
	}
	closedir(d);
}

static void load_formats(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int i;

	if (!d)
		fail("%s: %s", dir, strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			load_system(dir, de->d_name);
	closedir(d);
	for (i = 0; i < nfmts; i++) {
		char name[128];

		sscanf(fmts[i].text, "name: %127s", name);
		fmts[i].ev = tep_find_event_by_name(tep, fmts[i].system, name);
		if (!fmts[i].ev)
			fail("format %s:%s not found after parsing", fmts[i].system, name);
	}
	if (!nfmts)
		fail("%s: no SYSTEM/EVENT.format files", dir);
}

static int find_fmt(const char *sysev)
{
	const char *colon = strchr(sysev, ':');
	int i;

	if (!colon)
		fail("event '%s' is not SYSTEM:EVENT", sysev);
	for (i = 0; i < nfmts; i++)
		if (!strncmp(fmts[i].system, sysev, (size_t)(colon - sysev)) &&
		    !fmts[i].system[colon - sysev] && !strcmp(fmts[i].ev->name, colon + 1))
			return i;
	fail("no format for event '%s'", sysev);
}

/* ---- records ---- */

/* The sample_id_all trailer for IDENTIFIER|TID|TIME|CPU (the attrs'
 * sample_type): pid, tid, time, cpu, res, identifier (attr 0's id). */
static void put_trailer(struct buf *r, uint32_t pid, uint32_t tid, uint64_t ts, uint32_t cpu)
{
	put_u(r, pid, 4);
	put_u(r, tid, 4);
	put_u(r, ts, 8);
	put_u(r, cpu, 4);
	put_u(r, 0, 4);
	put_u(r, 100, 8);
}

static void put_record(struct buf *data, uint32_t type, uint16_t misc, struct buf *r)
{
	put_u(data, type, 4);
	put_u(data, misc, 2);
	put_u(data, 8 + r->len, 2);
	put(data, r->p, r->len);
	free(r->p);
}

static void comm_record(struct buf *data, uint32_t pid, uint32_t tid, const char *name,
			uint64_t ts, uint32_t cpu)
{
	struct buf r = { 0 };
	size_t n = strlen(name) + 1;

	put_u(&r, pid, 4);
	put_u(&r, tid, 4);
	put(&r, name, n);
	pad8(&r);
	put_trailer(&r, pid, tid, ts, cpu);
	put_record(data, REC_COMM, 0, &r);
}

/* fork/exit TS CPU TID PID PTID PPID */
static void task_record(struct buf *data, char **tok)
{
	uint64_t ts = strtoull(tok[1], NULL, 0);
	uint32_t cpu = (uint32_t)strtoul(tok[2], NULL, 0);
	uint32_t tid = (uint32_t)strtoul(tok[3], NULL, 0);
	uint32_t pid = (uint32_t)strtoul(tok[4], NULL, 0);
	struct buf r = { 0 };

	put_u(&r, pid, 4);
	put_u(&r, strtoul(tok[6], NULL, 0), 4);  /* ppid */
	put_u(&r, tid, 4);
	put_u(&r, strtoul(tok[5], NULL, 0), 4);  /* ptid */
	put_u(&r, ts, 8);
	put_trailer(&r, pid, tid, ts, cpu);
	put_record(data, strcmp(tok[0], "fork") ? REC_EXIT : REC_FORK, 0, &r);
}

static void fill_field(uint8_t *payload, struct tep_event *ev, const char *assign)
{
	char name[128];
	const char *eq = strchr(assign, '=');
	struct tep_format_field *f;

	if (!eq || (size_t)(eq - assign) >= sizeof(name))
		fail("bad field assignment '%s'", assign);
	memcpy(name, assign, (size_t)(eq - assign));
	name[eq - assign] = '\0';
	f = tep_find_field(ev, name);
	if (!f || f->size > 8 || f->offset + f->size > MAX_PAYLOAD)
		fail("event %s has no scalar field '%s'", ev->name, name);
	store(payload + f->offset, strtoull(eq + 1, NULL, 0), f->size);
}

static void sample_record(struct buf *data, char **tok, int ntok)
{
	uint64_t ts = strtoull(tok[0], NULL, 0);
	uint32_t cpu = (uint32_t)strtoul(tok[1], NULL, 0);
	uint32_t tid = (uint32_t)strtoul(tok[2], NULL, 0);
	uint32_t pid = (uint32_t)strtoul(tok[3], NULL, 0);
	int fi = find_fmt(tok[4]), i;
	struct tep_event *ev = fmts[fi].ev;
	uint8_t payload[MAX_PAYLOAD] = { 0 };
	uint32_t psize = 8;
	struct buf r = { 0 };
	struct tep_format_field *f;

	for (f = ev->format.fields; f; f = f->next)
		if ((uint32_t)(f->offset + f->size) > psize)
			psize = (uint32_t)(f->offset + f->size);
	store(payload, (uint64_t)ev->id, 2);
	store(payload + 4, tid, 4);
	for (i = 5; i < ntok; i++)
		fill_field(payload, ev, tok[i]);
	put_u(&r, 100 + (uint64_t)fi, 8);        /* IDENTIFIER */
	put_u(&r, pid, 4);                        /* TID */
	put_u(&r, tid, 4);
	put_u(&r, ts, 8);                         /* TIME */
	put_u(&r, cpu, 4);                        /* CPU */
	put_u(&r, 0, 4);
	put_u(&r, 1, 8);                          /* PERIOD */
	psize = (psize + 4 + 7) / 8 * 8 - 4;      /* u32 size + raw fill 8-byte units */
	put_u(&r, psize, 4);                      /* RAW */
	put(&r, payload, psize);
	put_u(data, REC_SAMPLE, 4);
	put_u(data, 2 /* PERF_RECORD_MISC_USER */, 2);
	put_u(data, 8 + r.len, 2);
	put(data, r.p, r.len);
	free(r.p);
}

static int split(char *line, char **tok, int max)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(line, " \t\n", &save); t && n < max; t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	return n;
}

/* The rest of LINE after N whitespace-separated words. */
static const char *rest_after(const char *line, int n)
{
	while (n-- > 0) {
		line += strspn(line, " \t");
		line += strcspn(line, " \t");
	}
	return line + strspn(line, " \t");
}

static void read_scenario(const char *path, struct buf *data)
{
	FILE *f = fopen(path, "r");
	char line[4096], copy[4096], *tok[64];
	int n;

	if (!f)
		fail("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char name[256];

		line[strcspn(line, "\n")] = '\0';
		snprintf(copy, sizeof(copy), "%s", line);
		n = split(line, tok, 64);
		if (!n || tok[0][0] == '#')
			continue;
		if (!strcmp(tok[0], "comm") && n >= 4) {
			snprintf(name, sizeof(name), "%s", rest_after(copy, 3));
			comm_record(data, (uint32_t)strtoul(tok[2], NULL, 0),
				    (uint32_t)strtoul(tok[1], NULL, 0), name, 0, 0);
			snprintf(copy, sizeof(copy), "%s %s\n", tok[1], name);
			put(&cmdlines, copy, strlen(copy));
		} else if (!strcmp(tok[0], "comm-at") && n >= 6) {
			snprintf(name, sizeof(name), "%s", rest_after(copy, 5));
			comm_record(data, (uint32_t)strtoul(tok[4], NULL, 0),
				    (uint32_t)strtoul(tok[3], NULL, 0), name,
				    strtoull(tok[1], NULL, 0), (uint32_t)strtoul(tok[2], NULL, 0));
		} else if ((!strcmp(tok[0], "fork") || !strcmp(tok[0], "exit")) && n == 7) {
			task_record(data, tok);
		} else if (!strcmp(tok[0], "cmdline") && n >= 3) {
			snprintf(name, sizeof(name), "%s %s\n", tok[1], rest_after(copy, 2));
			put(&cmdlines, name, strlen(name));
		} else if (n >= 5) {
			sample_record(data, tok, n);
		} else {
			fail("%s: bad line '%s'", path, copy);
		}
	}
	fclose(f);
}

/* ---- features ---- */

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char header_event[] =
	"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

static void tracing_data(struct buf *b)
{
	char systems[MAX_EVENTS][64];
	int nsys = 0, i, k;
	uint8_t endian_long[2] = { big ? 1 : 0, 8 };

	put(b, "\027\010\104tracing", 10);
	put(b, "0.6", 4);
	put(b, endian_long, 2);
	put_u(b, 4096, 4);
	put(b, "header_page", 12);
	put_u(b, sizeof(header_page) - 1, 8);
	put(b, header_page, sizeof(header_page) - 1);
	put(b, "header_event", 13);
	put_u(b, sizeof(header_event) - 1, 8);
	put(b, header_event, sizeof(header_event) - 1);
	put_u(b, 0, 4);                             /* ftrace formats */
	for (i = 0; i < nfmts; i++) {
		for (k = 0; k < nsys && strcmp(systems[k], fmts[i].system); k++)
			;
		if (k == nsys)
			memcpy(systems[nsys++], fmts[i].system, sizeof(systems[0]));
	}
	put_u(b, (uint64_t)nsys, 4);
	for (k = 0; k < nsys; k++) {
		int count = 0;

		for (i = 0; i < nfmts; i++)
			count += !strcmp(fmts[i].system, systems[k]);
		put(b, systems[k], strlen(systems[k]) + 1);
		put_u(b, (uint64_t)count, 4);
		for (i = 0; i < nfmts; i++) {
			if (strcmp(fmts[i].system, systems[k]))
				continue;
			put_u(b, fmts[i].len, 8);
			put(b, fmts[i].text, fmts[i].len);
		}
	}
	put_u(b, 0, 4);                             /* kallsyms */
	put_u(b, 0, 4);                             /* printk formats */
	put_u(b, cmdlines.len, 8);
	if (cmdlines.len)
		put(b, cmdlines.p, cmdlines.len);
}

static void perf_string(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, len = (n + 63) / 64 * 64;
	uint8_t z[64] = { 0 };

	put_u(b, len, 4);
	put(b, s, n);
	put(b, z, len - n);
}

/* ---- the file ---- */

static void write_file(const char *out, const char *machine, const char *cpuid,
		       struct buf *data)
{
	struct buf f = { 0 }, feat[3] = { { 0 } };
	uint64_t attrs_off = 104, ids_off, data_off, feat_off, off;
	uint8_t bits[32] = { 0 };
	int i, nfeat = 0;
	FILE *fp;

	ids_off = attrs_off + (uint64_t)nfmts * (ATTR_SIZE + 16);
	data_off = ids_off + (uint64_t)nfmts * 8;
	feat_off = data_off + data->len;
	put(&f, big ? "2ELIFREP" : "PERFILE2", 8);
	put_u(&f, 104, 8);
	put_u(&f, ATTR_SIZE + 16, 8);
	put_u(&f, attrs_off, 8);
	put_u(&f, (uint64_t)nfmts * (ATTR_SIZE + 16), 8);
	put_u(&f, data_off, 8);
	put_u(&f, data->len, 8);
	put_u(&f, 0, 8);
	put_u(&f, 0, 8);
	tracing_data(&feat[nfeat++]);
	bits[FEAT_TRACING_DATA / 8] |= 1 << (FEAT_TRACING_DATA % 8);
	perf_string(&feat[nfeat++], machine);
	bits[FEAT_ARCH / 8] |= 1 << (FEAT_ARCH % 8);
	if (cpuid) {
		perf_string(&feat[nfeat++], cpuid);
		bits[FEAT_CPUID / 8] |= 1 << (FEAT_CPUID % 8);
	}
	/* the bitmap is an array of u64 in file order */
	for (i = 0; i < 4; i++) {
		uint64_t w = 0;
		int k;

		for (k = 0; k < 8; k++)
			w |= (uint64_t)bits[i * 8 + k] << (8 * k);
		put_u(&f, w, 8);
	}
	for (i = 0; i < nfmts; i++) {
		uint8_t attr[ATTR_SIZE] = { 0 };

		store(attr, TYPE_TRACEPOINT, 4);
		store(attr + 4, ATTR_SIZE, 4);
		store(attr + 8, (uint64_t)fmts[i].ev->id, 8);
		store(attr + 16, 1, 8);
		store(attr + 24, ST_IDENTIFIER | ST_TID | ST_TIME | ST_CPU | ST_PERIOD | ST_RAW, 8);
		/* flags: bitfields fill a big-endian u64 from its top bit */
		store(attr + 40, 1ULL << (big ? 63 - ATTR_SAMPLE_ID_ALL_BIT : ATTR_SAMPLE_ID_ALL_BIT), 8);
		put(&f, attr, ATTR_SIZE);
		put_u(&f, ids_off + 8 * (uint64_t)i, 8);
		put_u(&f, 8, 8);
	}
	for (i = 0; i < nfmts; i++)
		put_u(&f, 100 + (uint64_t)i, 8);
	put(&f, data->p, data->len);
	off = feat_off + 16 * (uint64_t)nfeat;
	for (i = 0; i < nfeat; i++) {
		put_u(&f, off, 8);
		put_u(&f, feat[i].len, 8);
		off += feat[i].len;
	}
	for (i = 0; i < nfeat; i++) {
		put(&f, feat[i].p, feat[i].len);
		free(feat[i].p);
	}
	fp = fopen(out, "wb");
	if (!fp || fwrite(f.p, 1, f.len, fp) != f.len || fclose(fp))
		fail("%s: cannot write", out);
	free(f.p);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "formats", required_argument, NULL, 'f' },
		{ "machine", required_argument, NULL, 'm' },
		{ "cpuid", required_argument, NULL, 'c' },
		{ "big-endian", no_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *formats = NULL, *machine = NULL, *cpuid = NULL, *out = NULL;
	struct buf data = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "f:m:c:bo:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': formats = optarg; break;
		case 'm': machine = optarg; break;
		case 'c': cpuid = optarg; break;
		case 'b': big = true; break;
		case 'o': out = optarg; break;
		default: fail("usage: gen-kvm-perfdata --formats DIR --machine M [--cpuid S] "
			      "[--big-endian] -o OUT SCENARIO");
		}
	}
	if (!formats || !machine || !out || optind + 1 != argc)
		fail("usage: gen-kvm-perfdata --formats DIR --machine M [--cpuid S] "
		     "[--big-endian] -o OUT SCENARIO");
	tep = tep_alloc();
	if (!tep)
		fail("out of memory");
	tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, 8);
	load_formats(formats);
	read_scenario(argv[optind], &data);
	write_file(out, machine, cpuid, &data);
	free(data.p);
	free(cmdlines.p);
	tep_free(tep);
	return 0;
}
