/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen-perfdata - write synthetic perf.data files of x86 KVM events (test data).
 *
 * The output is what `perf kvm stat record` would have written on a host
 * running QEMU/KVM guests: the header, attrs, ids and feature sections are
 * taken from a real (empty) recording, the data section is generated.  It is
 * independent of kvmscope's own perf.data reader so it can test that reader.
 *
 * Usage:
 *   perf kvm stat record -a -o TEMPLATE sleep 0.1        # once, no KVM needed
 *   gen-perfdata --template TEMPLATE -o OUT [options]
 *
 * Options (everything is deterministic from --seed):
 *   --template FILE   real perf kvm stat recording (required)
 *   -o, --output FILE output perf.data (required)
 *   --vendor intel|amd  HEADER_CPUID/CPUDESC, exit-reason table, kvm_exit.isa
 *   --seed N          random seed (default 1)
 *   --vms N           QEMU processes (default 2)
 *   --vcpus N         vCPU threads per VM (default 2)
 *   --pairs N         kvm_exit/kvm_entry pairs in total (default 10000)
 *   --cpus N          host CPUs (default: the template's nrcpus)
 *   --migrate         vCPU threads move between host CPUs (between exit and entry)
 *   --no-comm         no COMM/FORK records for the QEMU processes and threads
 *   --unknown N       N exits with reason codes missing from the vendor table
 *   --unmatched       a few anomalies: entry without exit, two exits in a row,
 *                     a thread starting in host mode, kvm_mmio read without exit
 *   --lost N          N PERF_RECORD_LOST records spread over the data
 *   --rounds          per-CPU chunks separated by PERF_RECORD_FINISHED_ROUND
 *                     like perf record (not globally time-sorted)
 *   --ooo             with --rounds: some samples are written two rounds late,
 *                     which perf's round logic reports as out of order
 *   --more-reasons N  intel: N more VMX exit codes (up to 39) beyond the 16
 *                     usual ones, each as rare as VMCALL (many-series tests)
 *   --round-ns NS     with --rounds: a round spans NS ns of trace time (default
 *                     4,000,000); -v prints rounds=N, the rounds written
 *   --time-order      with --rounds: a round's records in global time order,
 *                     the CPUs interleaved record by record (as perf record
 *                     writes them when it drains the ring buffers often, or
 *                     as a tool rewrites them), instead of per-CPU chunks
 *   --shuffle N       with --rounds: a round's records (each CPU's chunk, or
 *                     the whole round with --time-order) permuted at random
 *                     within consecutive groups of N: no long stretch of them
 *                     is sorted by time, and perf's ordering queue, which
 *                     inserts each record searching from the last one, stays
 *                     fast (a whole round shuffled costs it quadratic time)
 *   --cmdlines N      keep only the first N saved cmdlines of the template's
 *                     TRACING_DATA (a host's list is most of a small file's
 *                     bytes: fuzzing seeds use a few)
 *   --extra-cmdline "PID COMM"
 *                     one more saved cmdline in TRACING_DATA (the kernel's
 *                     cache naming a pid otherwise than its COMM record, as
 *                     when a pid was reused)
 *   --pmu-guest       guests run perf: on some exits a vCPU "context switches"
 *                     and reprograms its vPMU, one MSR exit (MSR_WRITE/READ,
 *                     SVM msr) with a kvm_msr event per access: GLOBAL_CTRL=0,
 *                     read PMC0/1, PERFEVTSEL0/1 (alternating two tasks' event
 *                     selects), PMC0/1 = -period, FIXED_CTR_CTRL, GLOBAL_CTRL;
 *                     AMD: PERF_CTL/CTR 0xc0010200.. and PERF_CNTR_GLOBAL_CTL;
 *                     Intel: every 4th switch toggles DEBUGCTL.LBR on, the next
 *                     one off.  -v then also prints pmu_msr, evtsel_en, lbr_on,
 *                     lbr_off and ctx_switches.
 *   -v                print the counts: "exits=N entries=N mmio=N ..."
 *
 * Samples carry IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER (whatever the template
 * attr says); the RAW payloads are laid out from the kvm event formats found
 * in the template's TRACING_DATA, parsed with libtraceevent.  The data section
 * is written streaming; memory use does not grow with --pairs.
 * Prints nothing on success (unless -v); errors are one line on stderr, exit 1.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event-parse.h>

/* ---- perf.data constants (include/uapi/linux/perf_event.h, util/header.h) ---- */
#define FILE_HEADER_SIZE 104
#define ST_IP (1u << 0)
#define ST_TID (1u << 1)
#define ST_TIME (1u << 2)
#define ST_ADDR (1u << 3)
#define ST_READ (1u << 4)
#define ST_CALLCHAIN (1u << 5)
#define ST_ID (1u << 6)
#define ST_CPU (1u << 7)
#define ST_PERIOD (1u << 8)
#define ST_STREAM_ID (1u << 9)
#define ST_RAW (1u << 10)
#define ST_IDENTIFIER (1u << 16)
#define ST_SUPPORTED (ST_IP | ST_TID | ST_TIME | ST_ADDR | ST_ID | ST_CPU | ST_PERIOD | \
		      ST_STREAM_ID | ST_RAW | ST_IDENTIFIER)
#define ATTR_FLAG_COMM (1ull << 9)
#define ATTR_FLAG_SAMPLE_ID_ALL (1ull << 18)
#define REC_LOST 2
#define REC_COMM 3
#define REC_FORK 7
#define REC_SAMPLE 9
#define REC_FINISHED_ROUND 68
#define REC_ID_INDEX 69
#define REC_THREAD_MAP 73
#define REC_CPU_MAP 74
#define REC_FINISHED_INIT 82
#define MISC_KERNEL 1
#define MISC_COMM_EXEC (1u << 13)
#define FEAT_TRACING_DATA 1
#define FEAT_NRCPUS 7
#define FEAT_CPUDESC 8
#define FEAT_CPUID 9
#define FEAT_SAMPLE_TIME 21
#define NFEAT_BITS 256

#define START_NS 1000000000000ull
#define ROUND_NS 4000000ull
#define MAX_CPUS 4096
#define MAX_THREADS 65536

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("gen-perfdata: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* ---- options ---- */
struct options {
	const char *template_path, *output_path;
	bool amd, migrate, no_comm, unmatched, rounds, ooo, verbose, pmu_guest, time_order;
	uint32_t shuffle;
	uint64_t seed, pairs, unknown, lost;
	int64_t cmdlines;            /* saved cmdlines to keep, -1 = all */
	const char *extra_cmdline;   /* one more "PID COMM" line, or NULL */
	uint32_t vms, vcpus, cpus;
	uint32_t more_reasons;
	uint64_t round_ns;           /* --round-ns */
};

/* ---- deterministic random numbers (splitmix64) ---- */
static uint64_t rng_state;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static double rnd_unit(void) { return ((rnd() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }
static double rnd_normal(void)
{
	return sqrt(-2.0 * log(rnd_unit())) * cos(2.0 * M_PI * rnd_unit());
}
/* log-normal duration with the given median (ns) and spread, clamped */
static uint64_t rnd_duration(double median, double sigma, double lo, double hi)
{
	double v = median * exp(sigma * rnd_normal());
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return (uint64_t)v;
}

/* ---- template file ---- */
struct section { uint64_t offset, size; };
struct tattr {
	const uint8_t *raw;          /* attr bytes inside the template */
	uint32_t type;
	uint64_t config, sample_type, flags;
	const uint64_t *ids;         /* may be unaligned-safe: copied */
	uint64_t nids;
};
struct template {
	uint8_t *buf;
	size_t len;
	uint64_t attr_size;
	struct section attrs, data;
	uint64_t features[NFEAT_BITS / 64];
	struct section feat[NFEAT_BITS];   /* indexed by feature bit */
	struct tattr *attr;
	size_t nattr;
	uint32_t nrcpus;
	uint64_t td_cmdlines;      /* offset of the saved cmdlines size in TRACING_DATA, 0 = none */
};

static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static bool in_file(const struct template *t, uint64_t off, uint64_t size)
{
	return off <= t->len && size <= t->len - off;
}

static void read_whole_file(struct template *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f)
		die("%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || st.st_size < FILE_HEADER_SIZE || st.st_size > (1 << 28))
		die("%s: not a usable template (size)", path);
	t->len = (size_t)st.st_size;
	t->buf = xcalloc(1, t->len);
	if (fread(t->buf, 1, t->len, f) != t->len)
		die("%s: short read", path);
	fclose(f);
}

static void parse_attrs(struct template *t, const char *path)
{
	if (t->attr_size < 64 + 16 || t->attrs.size % t->attr_size ||
	    !in_file(t, t->attrs.offset, t->attrs.size))
		die("%s: bad attrs section", path);
	t->nattr = t->attrs.size / t->attr_size;
	t->attr = xcalloc(t->nattr, sizeof(*t->attr));
	for (size_t i = 0; i < t->nattr; i++) {
		const uint8_t *a = t->buf + t->attrs.offset + i * t->attr_size;
		struct tattr *ta = &t->attr[i];
		uint64_t ids_off = get_u64(a + t->attr_size - 16);
		uint64_t ids_size = get_u64(a + t->attr_size - 8);
		ta->raw = a;
		ta->type = get_u32(a);
		ta->config = get_u64(a + 8);
		ta->sample_type = get_u64(a + 24);
		ta->flags = get_u64(a + 40);
		if (ids_size % 8 || !in_file(t, ids_off, ids_size) || ids_size == 0)
			die("%s: attr %zu: bad id array", path, i);
		if (ids_off + ids_size > t->data.offset || t->attrs.offset + t->attrs.size > t->data.offset)
			die("%s: attrs/ids after the data section are not supported", path);
		ta->nids = ids_size / 8;
		uint64_t *ids = xcalloc(ta->nids, 8);
		memcpy(ids, t->buf + ids_off, ids_size);
		ta->ids = ids;
	}
}

static void parse_features(struct template *t, const char *path)
{
	uint64_t table = t->data.offset + t->data.size;
	uint64_t n = 0;
	for (int bit = 0; bit < NFEAT_BITS; bit++) {
		if (!(t->features[bit / 64] >> (bit % 64) & 1))
			continue;
		const uint8_t *p = t->buf + table + n * 16;
		if (!in_file(t, table + n * 16, 16))
			die("%s: feature table out of file", path);
		t->feat[bit].offset = get_u64(p);
		t->feat[bit].size = get_u64(p + 8);
		if (!in_file(t, t->feat[bit].offset, t->feat[bit].size))
			die("%s: feature %d out of file", path, bit);
		n++;
	}
	if (t->feat[FEAT_NRCPUS].size >= 8)
		t->nrcpus = get_u32(t->buf + t->feat[FEAT_NRCPUS].offset); /* nr_cpus_avail */
}

static void load_template(struct template *t, const char *path)
{
	read_whole_file(t, path);
	if (memcmp(t->buf, "PERFILE2", 8) != 0)
		die("%s: not a perf.data file (magic)", path);
	if (get_u64(t->buf + 8) != FILE_HEADER_SIZE)
		die("%s: unsupported header size %llu", path,
		    (unsigned long long)get_u64(t->buf + 8));
	t->attr_size = get_u64(t->buf + 16);
	t->attrs = (struct section){ get_u64(t->buf + 24), get_u64(t->buf + 32) };
	t->data = (struct section){ get_u64(t->buf + 40), get_u64(t->buf + 48) };
	memcpy(t->features, t->buf + 72, sizeof(t->features));
	if (!in_file(t, t->data.offset, t->data.size) || t->data.offset < FILE_HEADER_SIZE ||
	    t->data.offset % 8)
		die("%s: bad data section", path);
	parse_attrs(t, path);
	parse_features(t, path);
	if (!t->feat[FEAT_TRACING_DATA].size)
		die("%s: no TRACING_DATA feature (not a tracepoint recording?)", path);
}

/* ---- kvm event formats from TRACING_DATA ---- */
struct cursor { const uint8_t *p, *end; const char *path; };

static const uint8_t *take(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p))
		die("%s: TRACING_DATA truncated", c->path);
	const uint8_t *r = c->p;
	c->p += n;
	return r;
}
static const char *take_string(struct cursor *c)
{
	const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!nul)
		die("%s: TRACING_DATA: unterminated string", c->path);
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* Parse every event format of system "kvm" in the tracing data into tep;
 * note where the saved cmdlines are. */
static void load_kvm_formats(struct tep_handle *tep, struct template *t, const char *path)
{
	struct cursor c = { t->buf + t->feat[FEAT_TRACING_DATA].offset,
			    t->buf + t->feat[FEAT_TRACING_DATA].offset + t->feat[FEAT_TRACING_DATA].size,
			    path };
	const uint8_t *magic = take(&c, 10);
	if (memcmp(magic, "\027\010\104tracing", 10) != 0)
		die("%s: TRACING_DATA: bad magic", path);
	take_string(&c);                                 /* version */
	if (*take(&c, 1) != 0)
		die("%s: big-endian tracing data is not supported", path);
	tep_set_long_size(tep, *take(&c, 1));
	tep_set_page_size(tep, (int)get_u32(take(&c, 4)));
	if (strcmp(take_string(&c), "header_page") != 0)
		die("%s: TRACING_DATA: no header_page", path);
	take(&c, get_u64(take(&c, 8)));
	if (strcmp(take_string(&c), "header_event") != 0)
		die("%s: TRACING_DATA: no header_event", path);
	take(&c, get_u64(take(&c, 8)));
	uint32_t nftrace = get_u32(take(&c, 4));
	for (uint32_t i = 0; i < nftrace; i++)
		take(&c, get_u64(take(&c, 8)));
	uint32_t nsys = get_u32(take(&c, 4));
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = take_string(&c);
		uint32_t nev = get_u32(take(&c, 4));
		for (uint32_t e = 0; e < nev; e++) {
			uint64_t size = get_u64(take(&c, 8));
			const char *text = (const char *)take(&c, size);
			if (strcmp(sys, "kvm") == 0 &&
			    tep_parse_event(tep, text, size, sys) != 0)
				die("%s: TRACING_DATA: cannot parse a kvm event format", path);
		}
	}
	take(&c, get_u32(take(&c, 4))); /* kallsyms */
	take(&c, get_u32(take(&c, 4))); /* printk formats */
	if (c.end - c.p >= 8)
		t->td_cmdlines = (uint64_t)(c.p - (t->buf + t->feat[FEAT_TRACING_DATA].offset));
}


enum ev_kind { EV_ENTRY, EV_EXIT, EV_MMIO, EV_PIO, EV_MSR, EV_COUNT,
	       EV_LOST = EV_COUNT /* a PERF_RECORD_LOST in a thread's queue */ };
static const char *const ev_names[EV_COUNT] = { "kvm_entry", "kvm_exit", "kvm_mmio", "kvm_pio", "kvm_msr" };

/* Field ids, per event kind.  F_NONE marks a field the format lacks. */
enum field_id {
	F_VCPU_ID, F_RIP, F_EXIT_REASON, F_GUEST_RIP, F_ISA, F_INFO1, F_INFO2,
	F_TYPE, F_LEN, F_GPA, F_VAL, F_RW, F_PORT, F_SIZE, F_COUNT, F_WRITE,
	F_ECX, F_DATA, F_EXCEPTION, F_N
};
static const char *const field_names[F_N] = {
	"vcpu_id", "rip", "exit_reason", "guest_rip", "isa", "info1", "info2",
	"type", "len", "gpa", "val", "rw", "port", "size", "count", "write",
	"ecx", "data", "exception"
};
struct field { int offset, size; };
struct evdesc {
	bool present;
	int id;                     /* tracepoint id = common_type */
	const struct tattr *attr;
	uint32_t raw_len;           /* payload bytes before padding */
	struct field common_type, common_pid, f[F_N];
};

static struct field lookup_field(struct tep_format_field *f)
{
	struct field r = { -1, 0 };
	if (f && f->offset >= 0 && (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)) {
		r.offset = f->offset;
		r.size = f->size;
	}
	return r;
}

static void describe_event(struct evdesc *d, struct tep_handle *tep, const struct template *t,
			   enum ev_kind kind, const char *path)
{
	struct tep_event *ev = tep_find_event_by_name(tep, "kvm", ev_names[kind]);
	if (!ev)
		return;
	for (size_t i = 0; i < t->nattr; i++)
		if (t->attr[i].type == 2 && t->attr[i].config == (uint64_t)ev->id)
			d->attr = &t->attr[i];
	if (!d->attr)
		return;              /* format present but not recorded */
	d->present = true;
	d->id = ev->id;
	d->common_type = lookup_field(tep_find_common_field(ev, "common_type"));
	d->common_pid = lookup_field(tep_find_common_field(ev, "common_pid"));
	if (d->common_type.offset < 0 || d->common_pid.offset < 0)
		die("%s: kvm:%s lacks common_type/common_pid", path, ev_names[kind]);
	for (int i = 0; i < F_N; i++)
		d->f[i] = lookup_field(tep_find_field(ev, field_names[i]));
	for (struct tep_format_field **fl = (struct tep_format_field *[]){ ev->format.common_fields,
									     ev->format.fields }, **end = fl + 2;
	     fl < end; fl++)
		for (struct tep_format_field *f = *fl; f; f = f->next)
			if ((uint32_t)(f->offset + f->size) > d->raw_len)
				d->raw_len = (uint32_t)(f->offset + f->size);
	if ((d->attr->sample_type & ~(uint64_t)ST_SUPPORTED) || !(d->attr->sample_type & ST_RAW))
		die("%s: kvm:%s: unsupported sample_type %#llx", path, ev_names[kind],
		    (unsigned long long)d->attr->sample_type);
}

static void require_field(const struct evdesc *d, enum ev_kind k, enum field_id f, const char *path)
{
	if (d->present && d->f[f].offset < 0)
		die("%s: kvm:%s has no usable field %s", path, ev_names[k], field_names[f]);
}

/* ---- exit reason tables (arch/x86/include/uapi/asm/vmx.h, svm.h) ---- */
enum action { ACT_NONE, ACT_MMIO, ACT_PIO, ACT_MSR_R, ACT_MSR_W, ACT_MSR_RW, ACT_HLT };
struct reason {
	uint32_t code;
	const char *name;
	double weight, median_ns, sigma;
	enum action action;
};
static const struct reason vmx_reasons[] = {
	{ 1, "EXTERNAL_INTERRUPT", 18, 1500, 0.6, ACT_NONE },
	{ 32, "MSR_WRITE", 20, 1000, 0.5, ACT_MSR_W },
	{ 12, "HLT", 15, 60000, 1.6, ACT_HLT },
	{ 52, "PREEMPTION_TIMER", 8, 1100, 0.5, ACT_NONE },
	{ 49, "EPT_MISCONFIG", 8, 9000, 0.9, ACT_MMIO },
	{ 48, "EPT_VIOLATION", 6, 3000, 1.0, ACT_NONE },
	{ 56, "APIC_WRITE", 6, 1200, 0.5, ACT_NONE },
	{ 30, "IO_INSTRUCTION", 5, 15000, 1.0, ACT_PIO },
	{ 31, "MSR_READ", 3, 1200, 0.5, ACT_MSR_R },
	{ 40, "PAUSE_INSTRUCTION", 3, 600, 0.4, ACT_NONE },
	{ 45, "EOI_INDUCED", 3, 900, 0.5, ACT_NONE },
	{ 10, "CPUID", 2, 800, 0.4, ACT_NONE },
	{ 0, "EXCEPTION_NMI", 1, 2500, 0.8, ACT_NONE },
	{ 18, "VMCALL", 1, 2000, 0.8, ACT_NONE },
	{ 55, "XSETBV", 0.5, 700, 0.4, ACT_NONE },
	{ 28, "CR_ACCESS", 0.5, 900, 0.5, ACT_NONE },
};
static const struct reason svm_reasons[] = {
	{ 0x060, "interrupt", 18, 1500, 0.6, ACT_NONE },
	{ 0x07c, "msr", 23, 1100, 0.5, ACT_MSR_RW },
	{ 0x078, "hlt", 15, 60000, 1.6, ACT_HLT },
	{ 0x400, "npf", 14, 6000, 1.0, ACT_MMIO },
	{ 0x07b, "io", 5, 15000, 1.0, ACT_PIO },
	{ 0x064, "vintr", 4, 900, 0.5, ACT_NONE },
	{ 0x402, "avic_unaccelerated_access", 6, 1500, 0.6, ACT_NONE },
	{ 0x401, "avic_incomplete_ipi", 3, 1200, 0.6, ACT_NONE },
	{ 0x077, "pause", 3, 600, 0.4, ACT_NONE },
	{ 0x072, "cpuid", 2, 800, 0.4, ACT_NONE },
	{ 0x018, "write_cr8", 2, 700, 0.4, ACT_NONE },
	{ 0x081, "vmmcall", 1, 2000, 0.8, ACT_NONE },
	{ 0x061, "nmi", 1, 2500, 0.8, ACT_NONE },
	{ 0x08d, "xsetbv", 0.5, 700, 0.4, ACT_NONE },
};
/* rarer VMX codes for --more-reasons (vmx.h) */
static const uint32_t vmx_more_codes[] = {
	2, 3, 7, 8, 9, 13, 14, 15, 16, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 36,
	37, 39, 41, 43, 44, 46, 47, 50, 51, 53, 54, 57, 58, 59, 60, 61, 62, 63, 64,
};
/* codes that are in neither perf's VMX nor SVM table */
static const uint32_t vmx_unknown_codes[] = { 66, 99, 120 };
static const uint32_t svm_unknown_codes[] = { 0x0f0, 0x3ff, 0x4ff };

static const struct reason *reasons;
static size_t nreasons;
static double reason_weight_total;

static const struct reason *pick_reason(void)
{
	double x = rnd_unit() * reason_weight_total;
	for (size_t i = 0; i < nreasons; i++) {
		if (x < reasons[i].weight)
			return &reasons[i];
		x -= reasons[i].weight;
	}
	return &reasons[nreasons - 1];
}

static const uint32_t msr_write_ecx[] = { 0x6e0, 0x830, 0x80b, 0x838, 0x48 };
static const uint32_t msr_read_ecx[] = { 0x1b, 0x10, 0xe8, 0x3a, 0x6e0 };
static const uint32_t pio_ports[] = { 0x70, 0x71, 0xcf8, 0xcfc, 0x3f8, 0x604, 0xb008 };
static const uint64_t mmio_gpas[] = { 0xfebf1000, 0xfebf1004, 0xfe000000, 0xfe003000, 0xfed000f0 };

/* ---- output: a buffered writer plus per-CPU round buffers ---- */
struct bytes { uint8_t *p; size_t len, cap; };
static void bytes_put(struct bytes *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			die("out of memory");
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

struct writer {
	FILE *f;
	const char *path;
	uint64_t data_bytes;
	bool rounds, ooo, time_order;
	uint32_t shuffle;            /* --shuffle: group size, 0 = none */
	uint64_t shuffle_state;     /* --shuffle's generator (xorshift) */
	uint32_t ncpus;
	struct bytes *slot[3];      /* [round % 3][cpu] */
	uint64_t round, round_end, round_ns, nr_rounds;
	bool round_has_data;
};

static void out_raw(struct writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		die("%s: write failed: %s", w->path, strerror(errno));
	w->data_bytes += n;
}

/* --shuffle N: the records of B written permuted within groups of N (its
 * own generator: the events generated do not change). */
static void out_shuffled(struct writer *w, const struct bytes *b)
{
	uint64_t state = w->shuffle_state;
	size_t n = 0, cap = 0, i;
	size_t *at = NULL;

	for (i = 0; i + 8 <= b->len; ) {
		uint16_t size;

		memcpy(&size, b->p + i + 6, 2);
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			at = realloc(at, cap * sizeof(*at));
			if (!at)
				die("out of memory");
		}
		at[n++] = i;
		i += size;
	}
	for (i = 0; i < n; i++) {
		size_t g = i - i % w->shuffle, j, t;

		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		j = g + (size_t)(state % (i - g + 1));
		t = at[i];
		at[i] = at[j];
		at[j] = t;
	}
	for (i = 0; i < n; i++) {
		uint16_t size;

		memcpy(&size, b->p + at[i] + 6, 2);
		out_raw(w, b->p + at[i], size);
	}
	w->shuffle_state = state;
	free(at);
}

static void flush_slot(struct writer *w, struct bytes *set)
{
	bool any = false;
	for (uint32_t c = 0; c < w->ncpus; c++) {
		if (w->shuffle)
			out_shuffled(w, &set[c]);
		else
			out_raw(w, set[c].p, set[c].len);
		any |= set[c].len > 0;
		set[c].len = 0;
	}
	if (any) {
		uint8_t fr[8] = { 0 };
		uint32_t type = REC_FINISHED_ROUND;
		uint16_t size = 8;
		memcpy(fr, &type, 4);
		memcpy(fr + 6, &size, 2);
		out_raw(w, fr, 8);
		w->nr_rounds++;
	}
}

/* Move to the round holding time ts, writing out every finished round. */
static void advance_rounds(struct writer *w, uint64_t ts)
{
	while (ts >= w->round_end) {
		flush_slot(w, w->slot[w->round % 3]);
		w->round++;
		w->round_end += w->round_ns;
	}
}

/* Emit one record that happened on cpu at time ts; delay = rounds late. */
static void emit(struct writer *w, const void *rec, size_t n, uint32_t cpu, uint64_t ts, int delay)
{
	if (!w->rounds) {
		out_raw(w, rec, n);
		return;
	}
	advance_rounds(w, ts);
	bytes_put(&w->slot[(w->round + (uint64_t)delay) % 3][w->time_order ? 0 : cpu], rec, n);
}

static void writer_finish(struct writer *w)
{
	if (!w->rounds)
		return;
	for (int i = 0; i < 3; i++) {
		flush_slot(w, w->slot[w->round % 3]);
		w->round++;
	}
}

/* ---- record building ---- */
struct rec { uint8_t b[512]; size_t n; };
static void put(struct rec *r, const void *p, size_t n)
{
	if (r->n + n > sizeof(r->b))
		die("internal: record too large");
	memcpy(r->b + r->n, p, n);
	r->n += n;
}
static void put64(struct rec *r, uint64_t v) { put(r, &v, 8); }
static void put32x2(struct rec *r, uint32_t a, uint32_t b) { put(r, &a, 4); put(r, &b, 4); }
static void rec_begin(struct rec *r, uint32_t type, uint16_t misc)
{
	r->n = 0;
	put(r, &type, 4);
	put(r, &misc, 2);
	uint16_t size = 0;
	put(r, &size, 2);
}
static void rec_end(struct rec *r)
{
	uint16_t size = (uint16_t)r->n;
	memcpy(r->b + 6, &size, 2);
}

struct ctx {
	struct options o;
	struct template t;
	struct evdesc ev[EV_COUNT];
	const struct tattr *track;  /* attr whose sample_id_all trailer goes on COMM/LOST */
	struct writer w;
	uint64_t first_ts, last_ts;
	uint64_t n_exit, n_entry, n_mmio, n_mmio_read, n_mmio_write, n_pio, n_msr, n_pairs, n_comm, n_fork, n_lost,
		n_ooo, n_unknown, n_anomalies, n_samples;
	uint64_t n_pmu_msr, n_evtsel_en, n_lbr_on, n_lbr_off, n_switches; /* --pmu-guest */
};

static uint64_t id_for(const struct tattr *a, uint32_t cpu) { return a->ids[cpu % a->nids]; }

/* sample_id_all trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER */
static void put_trailer(struct ctx *x, struct rec *r, uint32_t pid, uint32_t tid, uint64_t ts,
			uint32_t cpu)
{
	const struct tattr *a = x->track;
	uint64_t st = a->sample_type;
	if (!(a->flags & ATTR_FLAG_SAMPLE_ID_ALL))
		return;
	if (st & ST_TID)
		put32x2(r, pid, tid);
	if (st & ST_TIME)
		put64(r, ts);
	if (st & ST_ID)
		put64(r, id_for(a, cpu));
	if (st & ST_STREAM_ID)
		put64(r, id_for(a, cpu));
	if (st & ST_CPU)
		put32x2(r, cpu, 0);
	if (st & ST_IDENTIFIER)
		put64(r, id_for(a, cpu));
}

static void note_time(struct ctx *x, uint64_t ts)
{
	if (!x->first_ts || ts < x->first_ts)
		x->first_ts = ts;
	if (ts > x->last_ts)
		x->last_ts = ts;
}

static void emit_comm(struct ctx *x, uint32_t pid, uint32_t tid, const char *name, bool exec,
		      uint64_t ts, uint32_t cpu)
{
	struct rec r;
	char comm[24] = { 0 };
	size_t len = strlen(name) + 1;
	rec_begin(&r, REC_COMM, exec ? MISC_COMM_EXEC : 0);
	put32x2(&r, pid, tid);
	snprintf(comm, sizeof(comm), "%s", name);
	put(&r, comm, (len + 7) & ~(size_t)7);
	put_trailer(x, &r, pid, tid, ts, cpu);
	rec_end(&r);
	emit(&x->w, r.b, r.n, cpu, ts, 0);
	x->n_comm++;
}

static void emit_fork(struct ctx *x, uint32_t pid, uint32_t tid, uint64_t ts, uint32_t cpu)
{
	struct rec r;
	rec_begin(&r, REC_FORK, 0);
	put32x2(&r, pid, pid);        /* pid, ppid */
	put32x2(&r, tid, pid);        /* tid, ptid */
	put64(&r, ts);
	put_trailer(x, &r, pid, pid, ts, cpu);
	rec_end(&r);
	emit(&x->w, r.b, r.n, cpu, ts, 0);
	x->n_fork++;
}

static void emit_lost(struct ctx *x, uint64_t ts, uint32_t cpu)
{
	struct rec r;
	const struct tattr *owner = x->ev[EV_ENTRY].present ? x->ev[EV_ENTRY].attr : x->track;
	rec_begin(&r, REC_LOST, 0);
	put64(&r, id_for(owner, cpu));
	put64(&r, 1 + rnd_below(200));
	put_trailer(x, &r, (uint32_t)-1, (uint32_t)-1, ts, cpu);
	rec_end(&r);
	emit(&x->w, r.b, r.n, cpu, ts, 0);
	x->n_lost++;
}

/* field values for one tracepoint sample */
struct vals { bool set[F_N]; uint64_t v[F_N]; };
static void val(struct vals *v, enum field_id f, uint64_t value) { v->set[f] = true; v->v[f] = value; }

static void put_field(uint8_t *raw, struct field f, uint64_t v)
{
	if (f.offset < 0)
		return;
	memcpy(raw + f.offset, &v, (size_t)f.size);   /* little-endian host */
}

static void emit_sample(struct ctx *x, enum ev_kind k, const struct vals *v, uint32_t pid,
			uint32_t tid, uint64_t ts, uint32_t cpu)
{
	const struct evdesc *d = &x->ev[k];
	if (!d->present)
		return;
	const struct tattr *a = d->attr;
	uint64_t st = a->sample_type;
	struct rec r;
	uint8_t raw[256] = { 0 };
	uint32_t raw_size = ((d->raw_len + 4 + 7) & ~7u) - 4;
	if (raw_size > sizeof(raw))
		die("kvm:%s format too large", ev_names[k]);
	put_field(raw, d->common_type, (uint64_t)d->id);
	put_field(raw, d->common_pid, tid);
	for (int f = 0; f < F_N; f++)
		if (v->set[f])
			put_field(raw, d->f[f], v->v[f]);

	rec_begin(&r, REC_SAMPLE, MISC_KERNEL);
	if (st & ST_IDENTIFIER)
		put64(&r, id_for(a, cpu));
	if (st & ST_IP)
		put64(&r, 0xffffffffc0a00000ull + 0x1000ull * k + 0x2a);
	if (st & ST_TID)
		put32x2(&r, pid, tid);
	if (st & ST_TIME)
		put64(&r, ts);
	if (st & ST_ADDR)
		put64(&r, 0);
	if (st & ST_ID)
		put64(&r, id_for(a, cpu));
	if (st & ST_STREAM_ID)
		put64(&r, id_for(a, cpu));
	if (st & ST_CPU)
		put32x2(&r, cpu, 0);
	if (st & ST_PERIOD)
		put64(&r, 1);
	put(&r, &raw_size, 4);
	put(&r, raw, raw_size);
	rec_end(&r);

	int delay = 0;
	if (x->o.ooo && rnd_below(500) == 0) {
		delay = 2;
		x->n_ooo++;
	}
	emit(&x->w, r.b, r.n, cpu, ts, delay);
	note_time(x, ts);
	x->n_samples++;
	switch (k) {
	case EV_ENTRY: x->n_entry++; break;
	case EV_EXIT: x->n_exit++; break;
	case EV_MMIO:
		x->n_mmio++;
		x->n_mmio_read += v->v[F_TYPE] == 1;
		x->n_mmio_write += v->v[F_TYPE] == 2;
		break;
	case EV_PIO: x->n_pio++; break;
	case EV_MSR: x->n_msr++; break;
	default: break;
	}
}

/* ---- the scenario: vCPU threads driven in global time order ---- */
#define MAXPEND 8
struct pending { enum ev_kind kind; struct vals v; uint64_t ts; uint32_t cpu; };
struct vthread {
	uint32_t pid, tid, vcpu, cpu;
	uint64_t now, rip;
	struct pending q[MAXPEND];
	int qhead, qlen;
	bool done;
	/* --pmu-guest: MSR accesses still to emit, one exit each */
	struct pmu_access { uint32_t ecx; uint64_t data; bool write; } script[16];
	int nscript, spos;
	uint32_t switches;
	bool lbr_on;
};

static void push(struct vthread *th, enum ev_kind k, const struct vals *v, uint64_t gap)
{
	if (th->qlen >= MAXPEND)
		die("internal: pending queue full");
	th->now += gap ? gap : 1;          /* strictly increasing per thread */
	struct pending *p = &th->q[(th->qhead + th->qlen++) % MAXPEND];
	p->kind = k;
	p->v = *v;
	p->ts = th->now;
	p->cpu = th->cpu;
}

static void push_entry(struct ctx *x, struct vthread *th, uint64_t gap)
{
	struct vals v = { 0 };
	(void)x;
	val(&v, F_VCPU_ID, th->vcpu);
	val(&v, F_RIP, th->rip);
	push(th, EV_ENTRY, &v, gap);
}

static void push_exit(struct ctx *x, struct vthread *th, uint32_t code, uint64_t info1,
		      uint64_t info2, uint64_t gap)
{
	struct vals v = { 0 };
	val(&v, F_EXIT_REASON, code);
	val(&v, F_GUEST_RIP, th->rip);
	val(&v, F_ISA, x->o.amd ? 2 : 1);
	val(&v, F_INFO1, info1);
	val(&v, F_INFO2, info2);
	val(&v, F_VCPU_ID, th->vcpu);
	push(th, EV_EXIT, &v, gap);
}

static void push_mmio(struct vthread *th, uint32_t type, uint64_t gpa, uint64_t gap)
{
	struct vals v = { 0 };
	val(&v, F_TYPE, type);
	val(&v, F_LEN, 4);
	val(&v, F_GPA, gpa);
	val(&v, F_VAL, type == 0 ? 0 : rnd() & 0xffffffff);
	push(th, EV_MMIO, &v, gap);
}

#define PICK(arr) ((arr)[rnd_below(sizeof(arr) / sizeof((arr)[0]))])

/* The events between kvm_exit and kvm_entry, as the kernel emits them. */
static void push_children(struct ctx *x, struct vthread *th, enum action act, bool write,
			  uint64_t handle)
{
	struct vals v = { 0 };
	uint64_t early = handle / 4;
	if (act == ACT_MMIO && x->ev[EV_MMIO].present) {
		uint64_t gpa = PICK(mmio_gpas);
		if (write) {
			push_mmio(th, 2, gpa, early);
		} else {
			push_mmio(th, 0, gpa, early);           /* goes to userspace */
			push_mmio(th, 1, gpa, handle / 2);      /* completed */
		}
	} else if (act == ACT_PIO && x->ev[EV_PIO].present) {
		val(&v, F_RW, write);
		val(&v, F_PORT, PICK(pio_ports));
		val(&v, F_SIZE, 1u << rnd_below(3));
		val(&v, F_COUNT, 1);
		val(&v, F_VAL, rnd() & 0xff);
		push(th, EV_PIO, &v, early);
	} else if ((act == ACT_MSR_R || act == ACT_MSR_W || act == ACT_MSR_RW) && x->ev[EV_MSR].present) {
		val(&v, F_WRITE, write);
		val(&v, F_ECX, write ? PICK(msr_write_ecx) : PICK(msr_read_ecx));
		val(&v, F_DATA, rnd() & 0xffffffffffull);
		val(&v, F_EXCEPTION, 0);
		push(th, EV_MSR, &v, early);
	}
}

struct sched {
	struct vthread *th;
	uint32_t nthreads;
	uint32_t *heap;             /* thread indices ordered by next pending ts */
	uint32_t nheap;
	uint64_t blocks, anomaly_every, lost_every, unknown_every;
	uint64_t anomaly_kind, lost_done, unknown_done;
};


/* ---- --pmu-guest: a guest perf session reprogramming counters on every
 * context switch (Intel SDM / AMD APM MSR numbers) ---- */
#define PMU_EN (1ull << 22)
#define PMU_USR (1ull << 16)
#define PMU_OS (1ull << 17)
#define PMU_INT (1ull << 20)
#define PMU_CTR_MASK ((1ull << 48) - 1)

static void script_add(struct vthread *th, uint32_t ecx, uint64_t data, bool write)
{
	if (th->nscript >= (int)(sizeof(th->script) / sizeof(th->script[0])))
		die("internal: pmu script full");
	th->script[th->nscript++] = (struct pmu_access){ ecx, data, write };
}

/* The outgoing task's counters are read, the incoming task's programmed. */
static void start_context_switch(struct ctx *x, struct vthread *th)
{
	bool amd = x->o.amd, task_b = th->switches % 2;
	/* task A: cycles + instructions (usr+os); task B: LLC misses + branch misses (usr) */
	uint64_t ev0 = amd ? (task_b ? 0x0043 : 0x0076) : (task_b ? 0x412e : 0x003c);
	uint64_t ev1 = amd ? (task_b ? 0x00c3 : 0x00c0) : (task_b ? 0x00c5 : 0x00c0);
	uint64_t mode = task_b ? PMU_USR : PMU_USR | PMU_OS;
	uint32_t sel0 = amd ? 0xc0010200 : 0x186, sel1 = amd ? 0xc0010202 : 0x187;
	uint32_t ctr0 = amd ? 0xc0010201 : 0xc1, ctr1 = amd ? 0xc0010203 : 0xc2;
	uint32_t global = amd ? 0xc0000301 : 0x38f;
	uint64_t period = 100000 + rnd_below(900000);

	th->nscript = th->spos = 0;
	script_add(th, global, 0, true);
	script_add(th, ctr0, rnd() & PMU_CTR_MASK, false);
	script_add(th, ctr1, rnd() & PMU_CTR_MASK, false);
	script_add(th, sel0, ev0 | mode | PMU_INT | PMU_EN, true);
	script_add(th, ctr0, (0 - period) & PMU_CTR_MASK, true);
	script_add(th, sel1, ev1 | mode | PMU_INT | PMU_EN, true);
	script_add(th, ctr1, (0 - period) & PMU_CTR_MASK, true);
	if (!amd)
		script_add(th, 0x38d, task_b ? 0x0a0 : 0x0b0, true);   /* FIXED_CTR1: usr(+os), pmi */
	script_add(th, global, amd ? 0x3 : 0x200000003ull, true);
	if (!amd && th->switches % 4 == 0) {
		script_add(th, 0x1d9, 1, true);                          /* DEBUGCTL.LBR on */
		th->lbr_on = true;
	} else if (!amd && th->lbr_on) {
		script_add(th, 0x1d9, 0, true);                          /* and off again */
		th->lbr_on = false;
	}
	th->switches++;
	x->n_switches++;
}

/* One scripted MSR access: exit, kvm_msr, entry. */
static void gen_pmu_block(struct ctx *x, struct sched *s, struct vthread *th)
{
	const struct pmu_access *a = &th->script[th->spos++];
	uint64_t run = rnd_duration(1500, 0.5, 200, 1e5);
	uint64_t handle = rnd_duration(a->write ? 1400 : 900, 0.4, 150, 1e5);
	uint32_t code = x->o.amd ? 0x07c : (a->write ? 32 : 31);
	struct vals v = { 0 };

	s->blocks++;
	if (a->ecx == 0x1d9) {
		x->n_lbr_on += a->data & 1;
		x->n_lbr_off += !(a->data & 1);
	} else {
		x->n_pmu_msr++;
	}
	x->n_evtsel_en += (a->ecx == 0x186 || a->ecx == 0x187 || a->ecx == 0xc0010200 ||
			   a->ecx == 0xc0010202) && (a->data & PMU_EN);
	push_exit(x, th, code, x->o.amd ? a->write : 0, 0, run);
	if (x->ev[EV_MSR].present) {
		val(&v, F_WRITE, a->write);
		val(&v, F_ECX, a->ecx);
		val(&v, F_DATA, a->data);
		val(&v, F_EXCEPTION, 0);
		push(th, EV_MSR, &v, handle / 4);
	}
	push_entry(x, th, handle - handle / 4);
	x->n_pairs++;
}

/* One guest run followed by one exit ... entry block. */
static void gen_block(struct ctx *x, struct sched *s, struct vthread *th)
{
	uint64_t run = rnd_duration(20000, 1.2, 200, 5e6);
	const struct reason *r = pick_reason();
	uint32_t code = r->code;
	uint64_t info1 = 0, info2 = 0;
	bool write = rnd_below(2);
	uint64_t handle = rnd_duration(r->median_ns, r->sigma, 150, 2e6);
	uint64_t blockno;

	if (x->o.pmu_guest && th->spos < th->nscript) {
		gen_pmu_block(x, s, th);
		return;
	}
	blockno = s->blocks++;

	if (x->o.unknown && s->unknown_done < x->o.unknown && blockno % s->unknown_every == 1) {
		code = x->o.amd ? PICK(svm_unknown_codes) : PICK(vmx_unknown_codes);
		s->unknown_done++;
		x->n_unknown++;
		static const struct reason unknown = { 0, "unknown", 0, 2000, 0.5, ACT_NONE };
		r = &unknown;
	}
	if (r->action == ACT_MSR_W)
		write = true;
	if (r->action == ACT_MSR_R)
		write = false;
	if (x->o.amd && r->action == ACT_MSR_RW)
		info1 = write;
	if (r->action == ACT_MMIO)
		info2 = PICK(mmio_gpas);
	th->rip = 0xffffffff81000000ull + (rnd() & 0xfffff0);

	if (x->o.unmatched && blockno % s->anomaly_every == s->anomaly_every / 2) {
		uint64_t kind = s->anomaly_kind++ % 3;
		x->n_anomalies++;
		if (kind == 0)
			push_entry(x, th, run / 2);                           /* entry without exit */
		else if (kind == 1)
			push_exit(x, th, r->code, 0, 0, run / 2);             /* two exits in a row */
		else
			push_mmio(th, 1, PICK(mmio_gpas), run / 2);           /* mmio read, no exit */
		run -= run / 2;
	}
	if (x->o.lost && s->lost_done < x->o.lost && blockno % s->lost_every == 0) {
		struct vals none = { 0 };
		push(th, EV_LOST, &none, run / 3);
		run -= run / 3;
		s->lost_done++;
	}
	push_exit(x, th, code, info1, info2, run);
	push_children(x, th, r->action, write, handle);
	if (x->o.migrate && x->o.cpus > 1 &&
	    (r->action == ACT_HLT ? rnd_below(4) == 0 : rnd_below(300) == 0))
		th->cpu = (uint32_t)((th->cpu + 1 + rnd_below(x->o.cpus - 1)) % x->o.cpus);
	push_entry(x, th, handle - handle / 4 - (r->action == ACT_MMIO && !write ? handle / 2 : 0));
	x->n_pairs++;
	if (x->o.pmu_guest && rnd_below(12) == 0)
		start_context_switch(x, th);
}

static uint64_t head_ts(const struct sched *s, uint32_t i)
{
	const struct vthread *th = &s->th[i];
	return th->q[th->qhead].ts;
}
static bool heap_less(const struct sched *s, uint32_t a, uint32_t b)
{
	uint64_t ta = head_ts(s, a), tb = head_ts(s, b);
	return ta < tb || (ta == tb && a < b);
}
static void heap_push(struct sched *s, uint32_t i)
{
	uint32_t k = s->nheap++;
	s->heap[k] = i;
	while (k && heap_less(s, s->heap[k], s->heap[(k - 1) / 2])) {
		uint32_t p = (k - 1) / 2, tmp = s->heap[p];
		s->heap[p] = s->heap[k];
		s->heap[k] = tmp;
		k = p;
	}
}
static uint32_t heap_pop(struct sched *s)
{
	uint32_t top = s->heap[0];
	s->heap[0] = s->heap[--s->nheap];
	for (uint32_t k = 0;;) {
		uint32_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < s->nheap && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nheap && heap_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == k)
			break;
		uint32_t tmp = s->heap[m];
		s->heap[m] = s->heap[k];
		s->heap[k] = tmp;
		k = m;
	}
	return top;
}

static void setup_threads(struct ctx *x, struct sched *s)
{
	s->nthreads = x->o.vms * x->o.vcpus;
	s->th = xcalloc(s->nthreads, sizeof(*s->th));
	s->heap = xcalloc(s->nthreads, sizeof(*s->heap));
	uint64_t ts = START_NS - 1000000;
	for (uint32_t vm = 0; vm < x->o.vms; vm++) {
		uint32_t pid = 4000 + vm * 1000 + (uint32_t)rnd_below(500);
		uint32_t cpu0 = (uint32_t)rnd_below(x->o.cpus);
		if (!x->o.no_comm)
			emit_comm(x, pid, pid, "qemu-system-x86", true, ts++, cpu0);
		for (uint32_t v = 0; v < x->o.vcpus; v++) {
			struct vthread *th = &s->th[vm * x->o.vcpus + v];
			char name[24];
			th->pid = pid;
			th->tid = pid + 20 + v;
			th->vcpu = v;
			th->cpu = (uint32_t)((vm * x->o.vcpus + v) % x->o.cpus);
			th->now = START_NS + rnd_below(50000);
			th->rip = 0xffffffff81000000ull;
			if (!x->o.no_comm) {
				snprintf(name, sizeof(name), "CPU %u/KVM", v);
				emit_fork(x, pid, th->tid, ts++, cpu0);
				emit_comm(x, pid, th->tid, name, false, ts++, cpu0);
			}
		}
	}
	for (uint32_t i = 0; i < s->nthreads; i++) {
		/* normally a thread's first event is its first kvm_entry; with
		 * --unmatched the last thread starts in host mode (exit first) */
		if (x->o.unmatched && i == s->nthreads - 1 && s->nthreads > 1) {
			x->n_anomalies++;
			gen_block(x, s, &s->th[i]);
		} else {
			push_entry(x, &s->th[i], 1);
		}
		heap_push(s, i);
	}
}

/* COMM/FORK records go straight out (like perf record's synthesized ones),
 * then FINISHED_INIT if the template has one, then the samples (in rounds
 * with --rounds). */
static void run_scenario(struct ctx *x, bool finished_init)
{
	struct sched s = { 0 };
	s.anomaly_every = x->o.pairs / 8 > 2 ? x->o.pairs / 8 : 2;
	s.lost_every = x->o.lost ? (x->o.pairs / x->o.lost > 1 ? x->o.pairs / x->o.lost : 1) : 1;
	s.unknown_every = x->o.unknown ? (x->o.pairs / x->o.unknown > 2 ? x->o.pairs / x->o.unknown : 2) : 2;
	x->w.rounds = false;
	setup_threads(x, &s);
	if (finished_init) {
		uint8_t rec[8] = { REC_FINISHED_INIT, 0, 0, 0, 0, 0, 8, 0 };
		out_raw(&x->w, rec, 8);
	}
	x->w.rounds = x->o.rounds;
	x->w.time_order = x->o.time_order;
	x->w.shuffle = x->o.shuffle;
	x->w.shuffle_state = 0x9e3779b97f4a7c15ull;
	x->w.round_end = START_NS;
	x->w.round_ns = x->o.round_ns ? x->o.round_ns : 1;
	while (s.nheap) {
		uint32_t i = heap_pop(&s);
		struct vthread *th = &s.th[i];
		struct pending p = th->q[th->qhead];
		th->qhead = (th->qhead + 1) % MAXPEND;
		th->qlen--;
		if (p.kind == EV_LOST)
			emit_lost(x, p.ts, p.cpu);
		else
			emit_sample(x, p.kind, &p.v, th->pid, th->tid, p.ts, p.cpu);
		if (!th->qlen && x->n_pairs < x->o.pairs)
			gen_block(x, &s, th);
		if (th->qlen)
			heap_push(&s, i);
	}
	free(s.th);
	free(s.heap);
}

/* ---- output file assembly ---- */
static void write_at(FILE *f, const char *path, uint64_t off, const void *p, size_t n)
{
	if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fwrite(p, 1, n, f) != n)
		die("%s: write failed: %s", path, strerror(errno));
}

/* Copy the template's leading metadata records (ID_INDEX, THREAD_MAP, CPU_MAP). */
static bool copy_template_user_records(struct ctx *x)
{
	const struct template *t = &x->t;
	bool has_finished_init = false;
	for (uint64_t off = t->data.offset; off + 8 <= t->data.offset + t->data.size;) {
		uint32_t type = get_u32(t->buf + off);
		uint16_t size;
		memcpy(&size, t->buf + off + 6, 2);
		if (size < 8 || off + size > t->data.offset + t->data.size)
			die("%s: bad record in template data at %llu", x->o.template_path,
			    (unsigned long long)off);
		bool keep = type == REC_ID_INDEX || type == REC_THREAD_MAP ||
			    (type == REC_CPU_MAP && x->o.cpus <= t->nrcpus);
		if (keep)
			out_raw(&x->w, t->buf + off, size);
		has_finished_init |= type == REC_FINISHED_INIT;
		off += size;
	}
	return has_finished_init;
}

static void put_header_string(struct bytes *b, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) & ~(size_t)63);
	char *pad = xcalloc(1, len);
	memcpy(pad, s, strlen(s));
	bytes_put(b, &len, 4);
	bytes_put(b, pad, len);
	free(pad);
}

/* TRACING_DATA with only the first KEEP saved cmdlines. */
static void put_tracing_data(struct bytes *b, const struct template *t, int64_t keep,
			     const char *extra)
{
	const uint8_t *td = t->buf + t->feat[FEAT_TRACING_DATA].offset;
	uint64_t size = t->feat[FEAT_TRACING_DATA].size, at = t->td_cmdlines, len, n = 0, total;
	const char *lines;

	if ((keep < 0 && !extra) || !at) {
		bytes_put(b, td, size);
		return;
	}
	len = get_u64(td + at);
	if (len > size - at - 8)
		len = size - at - 8;
	lines = (const char *)td + at + 8;
	for (int64_t i = 0; (keep < 0 || i < keep) && n < len; i++) {
		const char *nl = memchr(lines + n, '\n', len - n);
		n = nl ? (uint64_t)(nl - lines) + 1 : len;
	}
	total = n + (extra ? strlen(extra) + 1 : 0);
	bytes_put(b, td, at);
	bytes_put(b, &total, 8);
	bytes_put(b, lines, n);
	if (extra) {
		bytes_put(b, extra, strlen(extra));
		bytes_put(b, "\n", 1);
	}
}

/* The feature sections, copied, with CPUID/CPUDESC/SAMPLE_TIME (and with
 * --cmdlines TRACING_DATA) rewritten. */
static void write_features(struct ctx *x, uint64_t start)
{
	const struct template *t = &x->t;
	struct section table[NFEAT_BITS];
	struct bytes body = { 0 };
	uint32_t n = 0;
	for (int bit = 0; bit < NFEAT_BITS; bit++)
		if (t->features[bit / 64] >> (bit % 64) & 1)
			n++;
	uint64_t pos = start + (uint64_t)n * 16;
	n = 0;
	for (int bit = 0; bit < NFEAT_BITS; bit++) {
		if (!(t->features[bit / 64] >> (bit % 64) & 1))
			continue;
		size_t before = body.len;
		if (bit == FEAT_CPUID) {
			put_header_string(&body, x->o.amd ? "AuthenticAMD,25,1,1" : "GenuineIntel,6,85,7");
		} else if (bit == FEAT_CPUDESC) {
			put_header_string(&body, x->o.amd ? "AMD EPYC 7713 64-Core Processor"
							  : "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz");
		} else if (bit == FEAT_TRACING_DATA) {
			put_tracing_data(&body, t, x->o.cmdlines, x->o.extra_cmdline);
		} else if (bit == FEAT_SAMPLE_TIME && t->feat[bit].size == 16) {
			bytes_put(&body, &x->first_ts, 8);
			bytes_put(&body, &x->last_ts, 8);
		} else {
			bytes_put(&body, t->buf + t->feat[bit].offset, t->feat[bit].size);
		}
		table[n].offset = pos + before;
		table[n].size = body.len - before;
		n++;
	}
	write_at(x->w.f, x->w.path, start, table, (size_t)n * 16);
	if (body.len && fwrite(body.p, 1, body.len, x->w.f) != body.len)
		die("%s: write failed: %s", x->w.path, strerror(errno));
	free(body.p);
}

static void write_output(struct ctx *x)
{
	const struct template *t = &x->t;
	FILE *f = fopen(x->o.output_path, "wb+");
	if (!f)
		die("%s: %s", x->o.output_path, strerror(errno));
	static char buf[1 << 20]; /* glibc takes a size only with a buffer */

	setvbuf(f, buf, _IOFBF, sizeof(buf));
	x->w.f = f;
	x->w.path = x->o.output_path;
	write_at(f, x->w.path, 0, t->buf, t->data.offset);  /* header, ids, attrs */
	x->w.data_bytes = 0;
	bool finished_init = copy_template_user_records(x);
	x->w.ncpus = x->o.cpus;
	for (int i = 0; i < 3; i++)
		x->w.slot[i] = xcalloc(x->o.cpus, sizeof(struct bytes));
	run_scenario(x, finished_init);
	writer_finish(&x->w);
	uint64_t data_size = x->w.data_bytes;
	fflush(f);
	write_features(x, t->data.offset + data_size);
	uint64_t hdr[2] = { t->data.offset, data_size };
	write_at(f, x->w.path, 40, hdr, sizeof(hdr));
	if (fclose(f) != 0)
		die("%s: write failed: %s", x->w.path, strerror(errno));
	for (int i = 0; i < 3; i++) {
		for (uint32_t c = 0; c < x->o.cpus; c++)
			free(x->w.slot[i][c].p);
		free(x->w.slot[i]);
	}
}

/* ---- main ---- */
static uint64_t parse_num(const char *s, const char *opt, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || s[0] == '-' || v > max)
		die("bad value for %s: '%s'", opt, s);
	return v;
}

static void parse_options(struct options *o, int argc, char **argv)
{
	enum { O_TEMPLATE = 256, O_VENDOR, O_SEED, O_VMS, O_VCPUS, O_PAIRS, O_CPUS, O_MIGRATE,
	       O_NOCOMM, O_UNKNOWN, O_UNMATCHED, O_LOST, O_ROUNDS, O_OOO, O_PMU_GUEST,
	       O_CMDLINES, O_MORE_REASONS, O_TIME_ORDER, O_EXTRA_CMDLINE,
	       O_ROUND_NS, O_SHUFFLE };
	static const struct option lo[] = {
		{ "template", 1, 0, O_TEMPLATE }, { "output", 1, 0, 'o' }, { "vendor", 1, 0, O_VENDOR },
		{ "seed", 1, 0, O_SEED }, { "vms", 1, 0, O_VMS }, { "vcpus", 1, 0, O_VCPUS },
		{ "pairs", 1, 0, O_PAIRS }, { "cpus", 1, 0, O_CPUS }, { "migrate", 0, 0, O_MIGRATE },
		{ "no-comm", 0, 0, O_NOCOMM }, { "unknown", 1, 0, O_UNKNOWN },
		{ "unmatched", 0, 0, O_UNMATCHED }, { "lost", 1, 0, O_LOST },
		{ "rounds", 0, 0, O_ROUNDS }, { "ooo", 0, 0, O_OOO }, { "verbose", 0, 0, 'v' },
		{ "pmu-guest", 0, 0, O_PMU_GUEST }, { "cmdlines", 1, 0, O_CMDLINES },
		{ "more-reasons", 1, 0, O_MORE_REASONS },
		{ "time-order", 0, 0, O_TIME_ORDER }, { "extra-cmdline", 1, 0, O_EXTRA_CMDLINE },
		{ "round-ns", 1, 0, O_ROUND_NS }, { "shuffle", 1, 0, O_SHUFFLE },
		{ 0, 0, 0, 0 }
	};
	*o = (struct options){ .seed = 1, .pairs = 10000, .vms = 2, .vcpus = 2, .cmdlines = -1,
			       .round_ns = ROUND_NS };
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:v", lo, NULL)) != -1) {
		switch (c) {
		case O_TEMPLATE: o->template_path = optarg; break;
		case 'o': o->output_path = optarg; break;
		case O_VENDOR:
			if (strcmp(optarg, "intel") && strcmp(optarg, "amd"))
				die("--vendor must be intel or amd");
			o->amd = !strcmp(optarg, "amd");
			break;
		case O_SEED: o->seed = parse_num(optarg, "--seed", UINT64_MAX); break;
		case O_EXTRA_CMDLINE: o->extra_cmdline = optarg; break;
		case O_MORE_REASONS:
			o->more_reasons = (uint32_t)parse_num(optarg, "--more-reasons",
				sizeof(vmx_more_codes) / sizeof(vmx_more_codes[0]));
			break;
		case O_VMS: o->vms = (uint32_t)parse_num(optarg, "--vms", 1000); break;
		case O_VCPUS: o->vcpus = (uint32_t)parse_num(optarg, "--vcpus", 1000); break;
		case O_PAIRS: o->pairs = parse_num(optarg, "--pairs", 1ull << 40); break;
		case O_CPUS: o->cpus = (uint32_t)parse_num(optarg, "--cpus", MAX_CPUS); break;
		case O_MIGRATE: o->migrate = true; break;
		case O_NOCOMM: o->no_comm = true; break;
		case O_UNKNOWN: o->unknown = parse_num(optarg, "--unknown", 1ull << 40); break;
		case O_UNMATCHED: o->unmatched = true; break;
		case O_LOST: o->lost = parse_num(optarg, "--lost", 1ull << 40); break;
		case O_ROUNDS: o->rounds = true; break;
		case O_OOO: o->ooo = o->rounds = true; break;
		case O_TIME_ORDER: o->time_order = o->rounds = true; break;
		case O_SHUFFLE:
			o->shuffle = (uint32_t)parse_num(optarg, "--shuffle", 1u << 30);
			o->rounds = true;
			break;
		case O_ROUND_NS: o->round_ns = parse_num(optarg, "--round-ns", 1ull << 50); break;
		case O_PMU_GUEST: o->pmu_guest = true; break;
		case O_CMDLINES: o->cmdlines = (int64_t)parse_num(optarg, "--cmdlines", 1u << 30); break;
		case 'v': o->verbose = true; break;
		default: die("unknown option '%s' (see the comment at the top of gen-perfdata.c)",
			     argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (!o->template_path || !o->output_path)
		die("usage: gen-perfdata --template FILE -o OUT [--vendor intel|amd] [options]");
	if (!o->vms || !o->vcpus || (uint64_t)o->vms * o->vcpus > MAX_THREADS)
		die("--vms and --vcpus must be >= 1 (and at most %d threads)", MAX_THREADS);
}

int main(int argc, char **argv)
{
	static struct ctx x;
	parse_options(&x.o, argc, argv);
	rng_state = x.o.seed * 0x2545f4914f6cdd1dull + 1;
	load_template(&x.t, x.o.template_path);
	if (!x.o.cpus)
		x.o.cpus = x.t.nrcpus ? x.t.nrcpus : 1;

	struct tep_handle *tep = tep_alloc();
	if (!tep)
		die("out of memory");
	load_kvm_formats(tep, &x.t, x.o.template_path);
	for (int k = 0; k < EV_COUNT; k++)
		describe_event(&x.ev[k], tep, &x.t, (enum ev_kind)k, x.o.template_path);
	if (!x.ev[EV_ENTRY].present || !x.ev[EV_EXIT].present)
		die("%s: template has no kvm:kvm_entry/kvm:kvm_exit events", x.o.template_path);
	require_field(&x.ev[EV_ENTRY], EV_ENTRY, F_VCPU_ID, x.o.template_path);
	require_field(&x.ev[EV_EXIT], EV_EXIT, F_EXIT_REASON, x.o.template_path);
	require_field(&x.ev[EV_MMIO], EV_MMIO, F_GPA, x.o.template_path);
	require_field(&x.ev[EV_MMIO], EV_MMIO, F_TYPE, x.o.template_path);
	require_field(&x.ev[EV_PIO], EV_PIO, F_PORT, x.o.template_path);
	require_field(&x.ev[EV_PIO], EV_PIO, F_RW, x.o.template_path);
	require_field(&x.ev[EV_MSR], EV_MSR, F_ECX, x.o.template_path);
	require_field(&x.ev[EV_MSR], EV_MSR, F_WRITE, x.o.template_path);
	x.track = x.ev[EV_ENTRY].attr;
	for (size_t i = 0; i < x.t.nattr; i++)
		if (x.t.attr[i].flags & ATTR_FLAG_COMM)
			x.track = &x.t.attr[i];
	if (x.track->sample_type & ~(uint64_t)ST_SUPPORTED)
		die("%s: unsupported sample_type on the tracking event", x.o.template_path);

	reasons = x.o.amd ? svm_reasons : vmx_reasons;
	nreasons = x.o.amd ? sizeof(svm_reasons) / sizeof(svm_reasons[0])
			   : sizeof(vmx_reasons) / sizeof(vmx_reasons[0]);
	if (x.o.more_reasons && !x.o.amd) {
		struct reason *all = calloc(nreasons + x.o.more_reasons, sizeof(*all));
		if (!all)
			die("out of memory");
		memcpy(all, vmx_reasons, sizeof(vmx_reasons));
		for (uint32_t i = 0; i < x.o.more_reasons; i++)
			all[nreasons + i] = (struct reason){ vmx_more_codes[i], "more", 1, 1500, 0.7,
							     ACT_NONE };
		nreasons += x.o.more_reasons;
		reasons = all;
	}
	for (size_t i = 0; i < nreasons; i++)
		reason_weight_total += reasons[i].weight;

	write_output(&x);
	tep_free(tep);
	if (x.o.verbose)
		printf("exits=%llu entries=%llu mmio=%llu mmio_read=%llu mmio_write=%llu pio=%llu msr=%llu pairs=%llu comm=%llu "
		       "fork=%llu lost=%llu ooo=%llu unknown=%llu anomalies=%llu samples=%llu "
		       "data_bytes=%llu rounds=%llu\n",
		       (unsigned long long)x.n_exit, (unsigned long long)x.n_entry,
		       (unsigned long long)x.n_mmio, (unsigned long long)x.n_mmio_read,
		       (unsigned long long)x.n_mmio_write, (unsigned long long)x.n_pio,
		       (unsigned long long)x.n_msr, (unsigned long long)x.n_pairs,
		       (unsigned long long)x.n_comm, (unsigned long long)x.n_fork,
		       (unsigned long long)x.n_lost, (unsigned long long)x.n_ooo,
		       (unsigned long long)x.n_unknown, (unsigned long long)x.n_anomalies,
		       (unsigned long long)x.n_samples, (unsigned long long)x.w.data_bytes,
		       (unsigned long long)x.w.nr_rounds);
	if (x.o.verbose && x.o.pmu_guest)
		printf("pmu_msr=%llu evtsel_en=%llu lbr_on=%llu lbr_off=%llu ctx_switches=%llu\n",
		       (unsigned long long)x.n_pmu_msr, (unsigned long long)x.n_evtsel_en,
		       (unsigned long long)x.n_lbr_on, (unsigned long long)x.n_lbr_off,
		       (unsigned long long)x.n_switches);
	return 0;
}
