/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text.c - reader for ftrace text: `cat trace`, `trace_pipe`,
 * `trace-cmd report` (with or without -t, -l, [CPU], multi-file "name:"
 * prefixes, raw counter timestamps).
 *
 * Each event line becomes a struct ks_record that looks exactly like one read
 * from a binary trace: the reader owns a tep_handle holding built-in formats
 * and turns the printed fields back into a binary payload in that format.
 * The formats are one architecture's KVM events (its table in src/arch, the
 * `formats` of struct ks_arch) and the events of generic code below (sched,
 * KVM's common kvm_mmio, kvm_userspace_exit, kvm_vcpu_wakeup and
 * kvm_halt_poll_ns), 64-bit layout.  Which
 * architecture: the one named by the caller (kvmscope stat --arch), else
 * the one whose KVM events read the first KVM event lines of the text (see
 * choose_set()).  A line is read back by a parser of its own (the events
 * whose text trace-cmd's plugins or ternaries shape) or by the event's print
 * fmt read backwards (ks_plan_scan).  A KS_REC_COMM precedes the first event
 * of every thread and every change of its name.  Lines of other events are
 * counted in stats.unknown_events, undecodable lines in stats.skipped.
 *
 * Opened by ks_source_open() (source_open.c) for anything that is not perf.data
 * or trace.dat.  Reads with a fixed-size buffer: memory does not grow with
 * the file (only with the number of distinct threads).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "util/buf.h"
#include "arch/arch.h"
#include "arch/x86.h"
#include "ctx_impl.h"
#include "input/ftrace_text.h"
#include "event/print_plan.h"
#include "source_impl.h"
#include "util/hashmap.h"

#define LINE_MAX_LEN (64 * 1024)   /* longer lines are skipped as malformed */
#define READ_CHUNK (256 * 1024)
#define SNIFF_BYTES (64 * 1024)    /* how much of the head open() checks */
#define SNIFF_LINES 64             /* a recognisable line must come this early */
#define COMM_LEN 32
#define MAX_FIELDS 12
#define PAYLOAD_MAX 128
#define REASON_CACHE 32

/* ------------------------------------------------------------------ */
/* Buffered line reader                                                 */

struct line_reader {
	int fd;
	const char *mem;    /* in-memory text (ks_ftrace_text_open_mem) instead of fd */
	size_t mem_len, mem_pos;
	char *buf;          /* READ_CHUNK + LINE_MAX_LEN + 1 bytes */
	size_t cap;
	size_t start, end;  /* unread bytes are buf[start, end) */
	uint64_t offset;    /* file offset of buf[start] */
	bool eof;
	bool skipping;      /* inside an over-long line */
};

/* One line: NUL-terminated, without its '\n'. */
struct line {
	char *text;
	size_t len;
	uint64_t offset;
	bool too_long;
};

static int reader_fill(struct line_reader *lr)
{
	ssize_t n;

	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->mem) {
		size_t room = lr->cap - 1 - lr->end, left = lr->mem_len - lr->mem_pos;
		n = (ssize_t)(room < left ? room : left);
		memcpy(lr->buf + lr->end, lr->mem + lr->mem_pos, (size_t)n);
		lr->mem_pos += (size_t)n;
	} else {
		do {
			n = read(lr->fd, lr->buf + lr->end, lr->cap - 1 - lr->end);
		} while (n < 0 && errno == EINTR);
	}
	if (n < 0)
		return -1;
	if (n == 0)
		lr->eof = true;
	lr->end += (size_t)n;
	return 0;
}

/* The buffer for input of SIZE bytes (UINT64_MAX: unknown, e.g. a pipe):
 * room for a READ_CHUNK read plus a line of LINE_MAX_LEN bytes, or for the
 * whole of a smaller input plus such a line. */
static char *reader_buffer(struct line_reader *lr, uint64_t size)
{
	lr->cap = (size < READ_CHUNK ? (size_t)size : READ_CHUNK) + LINE_MAX_LEN + 1;
	return malloc(lr->cap);
}

/* Returns 1 with *ln set, 0 at the end, -1 on a read error. */
static int reader_next(struct line_reader *lr, struct line *ln)
{
	for (;;) {
		char *p = lr->buf + lr->start;
		size_t avail = lr->end - lr->start;
		char *nl = avail ? memchr(p, '\n', avail) : NULL;
		size_t len;

		if (!nl && !lr->eof && avail < LINE_MAX_LEN) {
			if (reader_fill(lr) < 0)
				return -1;
			continue;
		}
		if (!nl && avail == 0)
			return 0;
		len = nl ? (size_t)(nl - p) : (avail < LINE_MAX_LEN ? avail : LINE_MAX_LEN);
		ln->text = p;
		ln->len = len;
		ln->offset = lr->offset;
		ln->too_long = lr->skipping || (!nl && avail >= LINE_MAX_LEN);
		lr->skipping = !nl && ln->too_long;
		p[len] = '\0'; /* cap keeps one spare byte past end */
		len += nl ? 1 : 0;
		lr->start += len;
		lr->offset += len;
		if (ln->len && ln->text[ln->len - 1] == '\r')
			ln->text[--ln->len] = '\0';
		return 1;
	}
}

/* ------------------------------------------------------------------ */
/* Built-in event formats                                               */

/* The common fields of every event (a 64-bit kernel's); the formats of
 * the architectures (src/arch) and the ones below have the rest. */
#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
#define FIELD KS_FORMAT_FIELD

/* Events of generic code, the same on every architecture (Linux 6.1's
 * TRACE_EVENT definitions): KVM's common events (include/trace/events/
 * kvm.h) and the scheduler's. */

static const char kvm_mmio_fmt[] =
	FIELD("u32 type", 8, 4, 0)
	FIELD("u32 len", 12, 4, 0)
	FIELD("u64 gpa", 16, 8, 0)
	FIELD("u64 val", 24, 8, 0)
	"\nprint fmt: \"mmio %s len %u gpa 0x%llx val 0x%llx\", __print_symbolic(REC->type, "
	"{ 0, \"unsatisfied-read\" }, { 1, \"read\" }, { 2, \"write\" }), REC->len, REC->gpa, "
	"REC->val\n";

#define ERSN(n, x) "{ " #n ", \"KVM_EXIT_" #x "\" }"
static const char kvm_userspace_exit_fmt[] =
	FIELD("__u32 reason", 8, 4, 0)
	FIELD("int errno", 12, 4, 1)
	"\nprint fmt: \"reason %s (%d)\", REC->errno < 0 ? (REC->errno == -4 ? \"restart\" : "
	"\"error\") : __print_symbolic(REC->reason, "
	ERSN(0, UNKNOWN) ", " ERSN(1, EXCEPTION) ", " ERSN(2, IO) ", " ERSN(3, HYPERCALL) ", "
	ERSN(4, DEBUG) ", " ERSN(5, HLT) ", " ERSN(6, MMIO) ", " ERSN(7, IRQ_WINDOW_OPEN) ", "
	ERSN(8, SHUTDOWN) ", " ERSN(9, FAIL_ENTRY) ", " ERSN(10, INTR) ", " ERSN(11, SET_TPR) ", "
	ERSN(12, TPR_ACCESS) ", " ERSN(13, S390_SIEIC) ", " ERSN(14, S390_RESET) ", "
	ERSN(15, DCR) ", " ERSN(16, NMI) ", " ERSN(17, INTERNAL_ERROR) ", " ERSN(18, OSI) ", "
	ERSN(19, PAPR_HCALL) ", " ERSN(20, S390_UCONTROL) ", " ERSN(21, WATCHDOG) ", "
	ERSN(22, S390_TSCH) ", " ERSN(23, EPR) ", " ERSN(24, SYSTEM_EVENT) ", "
	ERSN(25, S390_STSI) ", " ERSN(26, IOAPIC_EOI) ", " ERSN(27, HYPERV) ", "
	ERSN(28, ARM_NISV) ", " ERSN(29, X86_RDMSR) ", " ERSN(30, X86_WRMSR)
	"), REC->errno < 0 ? -REC->errno : REC->reason\n";

/* TASK_REPORT_MAX is 0x100 in 6.1: S D T t X Z P I are bits 0..7. */
static const char sched_switch_fmt[] =
	FIELD("char prev_comm[16]", 8, 16, 0)
	FIELD("pid_t prev_pid", 24, 4, 1)
	FIELD("int prev_prio", 28, 4, 1)
	FIELD("long prev_state", 32, 8, 1)
	FIELD("char next_comm[16]", 40, 16, 0)
	FIELD("pid_t next_pid", 56, 4, 1)
	FIELD("int next_prio", 60, 4, 1)
	"\nprint fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"(REC->prev_state & (0x100 - 1)) ? __print_flags(REC->prev_state & (0x100 - 1), \"|\", "
	"{ 0x01, \"S\" }, { 0x02, \"D\" }, { 0x04, \"T\" }, { 0x08, \"t\" }, { 0x10, \"X\" }, "
	"{ 0x20, \"Z\" }, { 0x40, \"P\" }, { 0x80, \"I\" }) : \"R\", "
	"REC->prev_state & 0x100 ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char sched_wakeup_fmt[] =
	FIELD("char comm[16]", 8, 16, 0)
	FIELD("pid_t pid", 24, 4, 1)
	FIELD("int prio", 28, 4, 1)
	FIELD("int target_cpu", 32, 4, 1)
	"\nprint fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, "
	"REC->prio, REC->target_cpu\n";

static const char kvm_vcpu_wakeup_fmt[] =
	FIELD("__u64 ns", 8, 8, 0)
	FIELD("bool waited", 16, 1, 0)
	FIELD("bool valid", 17, 1, 0)
	"\nprint fmt: \"%s time %lld ns, polling %s\", REC->waited ? \"wait\" : \"poll\", "
	"REC->ns, REC->valid ? \"valid\" : \"invalid\"\n";

static const char kvm_halt_poll_ns_fmt[] =
	FIELD("bool grow", 8, 1, 0)
	FIELD("unsigned int vcpu_id", 12, 4, 0)
	FIELD("unsigned int new", 16, 4, 0)
	FIELD("unsigned int old", 20, 4, 0)
	"\nprint fmt: \"vcpu %u: halt_poll_ns %u (%s %u)\", REC->vcpu_id, REC->new, "
	"REC->grow ? \"grow\" : \"shrink\", REC->old\n";

static const struct ks_event_format shared_formats[] = {
	{ "kvm", "kvm_mmio", kvm_mmio_fmt, NULL },
	{ "kvm", "kvm_vcpu_wakeup", kvm_vcpu_wakeup_fmt, NULL },
	{ "kvm", "kvm_halt_poll_ns", kvm_halt_poll_ns_fmt, NULL },
	{ "kvm", "kvm_userspace_exit", kvm_userspace_exit_fmt, NULL },
	{ "sched", "sched_switch", sched_switch_fmt, NULL },
	{ "sched", "sched_wakeup", sched_wakeup_fmt, NULL },
};
#define NR_SHARED (sizeof(shared_formats) / sizeof(shared_formats[0]))

/* ------------------------------------------------------------------ */
/* Reader state                                                         */

struct slot {
	int32_t offset, size;
};

struct text_source;
typedef int (*fields_parser)(struct text_source *s, const char *f, uint8_t *p,
			     const struct slot *sl);

/* A parser of the printed fields of one event, for texts that its print
 * fmt does not say (trace-cmd's plugins) or says with ternaries. */
struct text_parser {
	const char *system, *name;
	const char *const *fields;   /* the slots it fills: the event must have all */
	fields_parser parse;
};

struct text_event {
	const char *system, *name;
	const char *const *fields;   /* names of the slots the parser fills */
	fields_parser parse;         /* NULL: PLAN reads the line */
	struct ks_plan *plan;        /* the event's print fmt, read backwards */
	bool arch_own;               /* the architecture's event, not a shared one */
	struct tep_event *ev;        /* in the reader's tep */
	uint32_t size;               /* payload size */
	struct slot slots[MAX_FIELDS];
};

struct comm_entry {
	char comm[COMM_LEN];
};

struct reason_cache_entry {
	char name[40];
	int isa;
	uint64_t code;
};

struct builtin_sets;

struct text_source {
	struct ks_source base;
	struct line_reader lr;
	struct text_event *events;
	size_t nr_events;
	struct builtin_sets *own_sets; /* without a context: its own built-in sets */
	uint8_t payload[PAYLOAD_MAX];
	/* tid -> last delivered name (struct comm_entry); its size counts
	 * against limits.threads */
	struct ks_hmap comms;
	/* tid -> its vCPU (int32_t), from its kvm_entry lines: trace-cmd's
	 * kvm plugin prints kvm_exit without one */
	struct ks_hmap vcpus;
	int32_t cur_tid;             /* the thread of the line being parsed */
	char rec_comm[COMM_LEN];
	struct ks_record pending;
	bool has_pending;
	uint64_t last_ts;
	int last_isa;
	uint64_t malformed, first_malformed;
	struct reason_cache_entry reasons[REASON_CACHE];
	size_t nr_reasons;
};

/* The header of an event line. */
struct line_hdr {
	const char *comm;
	size_t comm_len;
	int32_t tid, tgid, cpu;
	uint64_t ts;
	bool raw;
	uint8_t flags, preempt;
	const char *name;
	size_t name_len;
	const char *fields;
};

/* ------------------------------------------------------------------ */
/* Small parsing helpers                                                */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* Unsigned number in BASE (0: C rules) at P; *end after it.  -1 if none. */
static int parse_u64(const char *p, int base, uint64_t *v, const char **end)
{
	char *e;

	if (!p || !(is_digit(*p) || (base == 16 && ((*p >= 'a' && *p <= 'f') ||
						   (*p >= 'A' && *p <= 'F')))))
		return -1;
	errno = 0;
	*v = strtoull(p, &e, base);
	if (errno || e == p)
		return -1;
	if (end)
		*end = e;
	return 0;
}

static int parse_i64(const char *p, int64_t *v, const char **end)
{
	uint64_t u;
	bool neg = *p == '-';

	if (parse_u64(p + neg, 10, &u, end) < 0 || u > INT64_MAX)
		return -1;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

/* The value after "KEY" where KEY starts the string or follows a space
 * (KEY includes its separator, e.g. "rip " or "pid="); NULL if absent. */
static const char *find_key(const char *f, const char *key)
{
	size_t klen = strlen(key);
	const char *p = f;

	while ((p = strstr(p, key)) != NULL) {
		if (p == f || p[-1] == ' ')
			return p + klen;
		p += 1;
	}
	return NULL;
}

static int key_u64(const char *f, const char *key, int base, uint64_t *v)
{
	return parse_u64(find_key(f, key), base, v, NULL);
}

static int key_i64(const char *f, const char *key, int64_t *v)
{
	const char *p = find_key(f, key);

	return p ? parse_i64(p, v, NULL) : -1;
}

static void put_u(uint8_t *p, const struct slot *sl, uint64_t v)
{
	switch (sl->size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(p + sl->offset, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(p + sl->offset, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p + sl->offset, &x, 4); break; }
	case 8: memcpy(p + sl->offset, &v, 8); break;
	default: break;
	}
}

/* Copy a char[N] field: at most N-1 bytes, NUL padded. */
static void put_str(uint8_t *p, const struct slot *sl, const char *s, size_t len)
{
	size_t n = len < (size_t)sl->size - 1 ? len : (size_t)sl->size - 1;

	memset(p + sl->offset, 0, (size_t)sl->size);
	memcpy(p + sl->offset, s, n);
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* ------------------------------------------------------------------ */
/* Field parsers, one per built-in event                                */

enum { EXIT_REASON, EXIT_RIP, EXIT_ISA, EXIT_INFO1, EXIT_INFO2, EXIT_INTR, EXIT_ERR, EXIT_VCPU };
static const char *const kvm_exit_names[] = { "exit_reason", "guest_rip", "isa", "info1",
	"info2", "intr_info", "error_code", "vcpu_id", NULL };

static int lookup_reason(struct text_source *s, const char *name, int *isa, uint64_t *code)
{
	struct reason_cache_entry *c;
	int32_t sel;

	for (size_t i = 0; i < s->nr_reasons; i++) {
		if (strcmp(s->reasons[i].name, name) == 0) {
			*isa = s->reasons[i].isa;
			*code = s->reasons[i].code;
			return 0;
		}
	}
	/* the names of the tables of the architecture whose exits these are */
	if (!ks_arch_exit_code(ks_arch_tep_kvm_plugin(), name, &sel, code))
		return -1;
	*isa = sel;
	c = &s->reasons[s->nr_reasons < REASON_CACHE ? s->nr_reasons++ : REASON_CACHE - 1];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->isa = *isa;
	c->code = *code;
	return 0;
}

/* "KEY NAME[ FAILED_VMENTRY]STOP..." -> isa, code (kvm_exit: "reason ",
 * " rip ") */
static int parse_exit_reason(struct text_source *s, const char *f, const char *key,
			     const char *stop, int *isa, uint64_t *code)
{
	const char *r = find_key(f, key), *e;
	char name[40];
	size_t len;
	uint64_t flags = 0;

	if (!r)
		return -1;
	e = strstr(r, stop);
	len = e ? (size_t)(e - r) : strlen(r);
	while (len && r[len - 1] == ' ')
		len--;
	if (len >= 15 && memcmp(r + len - 15, " FAILED_VMENTRY", 15) == 0) {
		flags = KS_X86_VMX_FAILED_VMENTRY;
		len -= 15;
	}
	if (len == 0 || len >= sizeof(name))
		return -1;
	memcpy(name, r, len);
	name[len] = '\0';
	if (lookup_reason(s, name, isa, code) == 0) {
		*code |= flags;
		return 0;
	}
	/* an unnamed code is printed as a number, by trace-cmd's kvm plugin
	 * as "UNKNOWN (N)"; VMX's basic exit reasons are below 0x100, so a
	 * larger one is SVM's (VMGEXIT, NPF) */
	if (!strncmp(name, "UNKNOWN (", 9) && name[len - 1] == ')') {
		name[len - 1] = '\0';
		if (parse_u64(name + 9, 10, code, &e) < 0 || *e)
			return -1;
	} else if (parse_u64(name, 0, code, &e) < 0 || *e) {
		return -1;
	}
	*isa = s->last_isa ? s->last_isa
	     : *code > 0xff ? KS_ISA_SVM : ks_x86_isa_or_default(0);
	*code |= flags;
	return 0;
}

static int parse_kvm_exit(struct text_source *s, const char *f, uint8_t *p, const struct slot *sl)
{
	uint64_t code, rip, vcpu = 0, info1 = 0, info2 = 0, intr = 0, err = 0;
	const char *info;
	int isa;

	if (parse_exit_reason(s, f, "reason ", " rip ", &isa, &code) < 0 ||
	    key_u64(f, "rip ", 0, &rip) < 0)
		return -1;
	if (key_u64(f, "vcpu ", 10, &vcpu) < 0) {
		const int32_t *v = ks_hmap_get(&s->vcpus, (uint32_t)s->cur_tid);

		vcpu = v ? (uint64_t)*v : 0;
	}
	info = find_key(f, "info ");
	if (info) {
		const char *e;

		/* trace-cmd's kvm plugin: "info %llx %llx" */
		if (parse_u64(info, 16, &info1, &e) < 0 ||
		    parse_u64(skip_spaces(e), 16, &info2, NULL) < 0)
			return -1;
	} else {
		key_u64(f, "info1 ", 0, &info1);
		key_u64(f, "info2 ", 0, &info2);
	}
	key_u64(f, "intr_info ", 0, &intr);
	key_u64(f, "error_code ", 0, &err);
	s->last_isa = isa;
	put_u(p, &sl[EXIT_REASON], code);
	put_u(p, &sl[EXIT_RIP], rip);
	put_u(p, &sl[EXIT_ISA], (uint64_t)isa);
	put_u(p, &sl[EXIT_INFO1], info1);
	put_u(p, &sl[EXIT_INFO2], info2);
	put_u(p, &sl[EXIT_INTR], intr);
	put_u(p, &sl[EXIT_ERR], err);
	put_u(p, &sl[EXIT_VCPU], vcpu);
	return 0;
}

static const char *const kvm_nested_vmexit_inject_names[] = { "exit_code", "exit_info1",
	"exit_info2", "exit_int_info", "exit_int_info_err", "isa", NULL };

/* "reason: NAME ext_inf1: 0x.. ext_inf2: 0x.. ext_int: 0x.. ext_int_err: 0x.."
 * or trace-cmd's kvm plugin: "reason NAME info1 %llx info2 %llx int_info
 * %llx int_info_err %llx" */
static int parse_kvm_nested_vmexit_inject(struct text_source *s, const char *f, uint8_t *p,
					  const struct slot *sl)
{
	bool plugin = find_key(f, "reason: ") == NULL;
	uint64_t code, v[4];
	int isa;

	if (parse_exit_reason(s, f, plugin ? "reason " : "reason: ", plugin ? " info1 " : " ext_inf1",
			      &isa, &code) < 0 ||
	    key_u64(f, plugin ? "info1 " : "ext_inf1: ", 16, &v[0]) < 0 ||
	    key_u64(f, plugin ? "info2 " : "ext_inf2: ", 16, &v[1]) < 0 ||
	    key_u64(f, plugin ? "int_info " : "ext_int: ", 16, &v[2]) < 0 ||
	    key_u64(f, plugin ? "int_info_err " : "ext_int_err: ", 16, &v[3]) < 0)
		return -1;
	s->last_isa = isa;
	put_u(p, &sl[0], code);
	for (int i = 0; i < 4; i++)
		put_u(p, &sl[i + 1], v[i]);
	put_u(p, &sl[5], (uint64_t)isa);
	return 0;
}

static const char *const kvm_nested_vmenter_names[] = { "rip", "vmcb", "nested_rip", "int_ctl",
	"event_inj", "tdp_enabled", "guest_pgd", "isa", NULL };

/* "rip: 0x.. vmcs|vmcb: 0x.. nested_rip: 0x.. int_ctl: 0x.. event_inj: 0x..
 * nested_ept|nested_npt=y|n LABEL: 0x.." (the label of the last, which
 * libtraceevent gets wrong, is not read) */
static int parse_kvm_nested_vmenter(struct text_source *s, const char *f, uint8_t *p,
				    const struct slot *sl)
{
	bool vmx = find_key(f, "vmcs: ") != NULL;
	const char *tdp = find_key(f, vmx ? "nested_ept=" : "nested_npt="), *last;
	uint64_t v[5], pgd;

	(void)s;
	if (key_u64(f, "rip: ", 16, &v[0]) < 0 || key_u64(f, vmx ? "vmcs: " : "vmcb: ", 16, &v[1]) < 0 ||
	    key_u64(f, "nested_rip: ", 16, &v[2]) < 0 || key_u64(f, "int_ctl: ", 16, &v[3]) < 0 ||
	    key_u64(f, "event_inj: ", 16, &v[4]) < 0 || !tdp || (*tdp != 'y' && *tdp != 'n') ||
	    !(last = strrchr(tdp, ':')) || parse_u64(skip_spaces(last + 1), 16, &pgd, NULL) < 0)
		return -1;
	for (int i = 0; i < 5; i++)
		put_u(p, &sl[i], v[i]);
	put_u(p, &sl[5], *tdp == 'y');
	put_u(p, &sl[6], pgd);
	put_u(p, &sl[7], vmx ? KS_ISA_VMX : KS_ISA_SVM);
	return 0;
}

static const char *const kvm_vcpu_wakeup_names[] = { "ns", "waited", "valid", NULL };

/* "wait|poll time %lld ns, polling valid|invalid" */
static int parse_kvm_vcpu_wakeup(struct text_source *s, const char *f, uint8_t *p,
				 const struct slot *sl)
{
	bool waited = !strncmp(f, "wait time ", 10);
	const char *v = find_key(f, "polling ");
	int64_t ns;

	(void)s;
	if ((!waited && strncmp(f, "poll time ", 10)) || parse_i64(f + 10, &ns, NULL) < 0 || !v ||
	    (strncmp(v, "valid", 5) && strncmp(v, "invalid", 7)))
		return -1;
	put_u(p, &sl[0], (uint64_t)ns);
	put_u(p, &sl[1], waited);
	put_u(p, &sl[2], *v == 'v');
	return 0;
}

static const char *const kvm_halt_poll_ns_names[] = { "grow", "vcpu_id", "new", "old", NULL };

/* "vcpu %u: halt_poll_ns %u (grow|shrink %u)" */
static int parse_kvm_halt_poll_ns(struct text_source *s, const char *f, uint8_t *p,
				  const struct slot *sl)
{
	uint64_t vcpu, nw, old;
	const char *g = find_key(f, "(grow "), *k = find_key(f, "(shrink ");

	(void)s;
	if (key_u64(f, "vcpu ", 10, &vcpu) < 0 || key_u64(f, "halt_poll_ns ", 10, &nw) < 0 ||
	    (!g && !k) || parse_u64(g ? g : k, 10, &old, NULL) < 0)
		return -1;
	put_u(p, &sl[0], g != NULL);
	put_u(p, &sl[1], vcpu);
	put_u(p, &sl[2], nw);
	put_u(p, &sl[3], old);
	return 0;
}

static const char *const kvm_entry_names[] = { "vcpu_id", "rip", "immediate_exit", NULL };

/* "vcpu 0, rip 0x...[immediate exit]" or trace-cmd's "vcpu 0 rip 0x..." */
static int parse_kvm_entry(struct text_source *s, const char *f, uint8_t *p, const struct slot *sl)
{
	uint64_t vcpu, rip;
	int32_t *v;
	bool created;

	if (key_u64(f, "vcpu ", 10, &vcpu) < 0 || key_u64(f, "rip ", 0, &rip) < 0)
		return -1;
	/* remembered for the thread's kvm_exit lines (past limits.threads
	 * threads, which the reader then refuses anyway, not) */
	v = ks_hmap_get(&s->vcpus, (uint32_t)s->cur_tid);
	if (!v && ks_hmap_len(&s->vcpus) < s->base.limits.threads)
		v = ks_hmap_put(&s->vcpus, (uint32_t)s->cur_tid, &created);
	if (v)
		*v = (int32_t)vcpu;
	put_u(p, &sl[0], vcpu);
	put_u(p, &sl[1], rip);
	put_u(p, &sl[2], strstr(f, "[immediate exit]") != NULL);
	return 0;
}

static const char *const kvm_mmio_names[] = { "type", "len", "gpa", "val", NULL };

static int parse_kvm_mmio(struct text_source *s, const char *f, uint8_t *p, const struct slot *sl)
{
	static const char *const types[] = { "unsatisfied-read ", "read ", "write " };
	const char *t = find_key(f, "mmio ");
	uint64_t len, gpa, val, type = 3;

	(void)s;
	if (!t)
		return -1;
	for (uint64_t i = 0; i < 3; i++)
		if (strncmp(t, types[i], strlen(types[i])) == 0)
			type = i;
	if (type == 3 && parse_u64(t, 0, &type, NULL) < 0)
		return -1;
	if (key_u64(f, "len ", 10, &len) < 0 || key_u64(f, "gpa ", 0, &gpa) < 0 ||
	    key_u64(f, "val ", 0, &val) < 0)
		return -1;
	put_u(p, &sl[0], type);
	put_u(p, &sl[1], len);
	put_u(p, &sl[2], gpa);
	put_u(p, &sl[3], val);
	return 0;
}

static const char *const kvm_pio_names[] = { "rw", "port", "size", "count", "val", NULL };

static int parse_kvm_pio(struct text_source *s, const char *f, uint8_t *p, const struct slot *sl)
{
	uint64_t rw, port, size, count, val = 0;

	(void)s;
	if (strncmp(f, "pio_read ", 9) == 0)
		rw = 0;
	else if (strncmp(f, "pio_write ", 10) == 0)
		rw = 1;
	else
		return -1;
	if (key_u64(f, "at ", 0, &port) < 0 || key_u64(f, "size ", 10, &size) < 0 ||
	    key_u64(f, "count ", 10, &count) < 0)
		return -1;
	key_u64(f, "val ", 0, &val);
	put_u(p, &sl[0], rw);
	put_u(p, &sl[1], port);
	put_u(p, &sl[2], size);
	put_u(p, &sl[3], count);
	put_u(p, &sl[4], val);
	return 0;
}

static const char *const kvm_msr_names[] = { "write", "ecx", "data", "exception", NULL };

/* "msr_write 6e0 = 0x2aa2a8403b1c[ (#GP)]" */
static int parse_kvm_msr(struct text_source *s, const char *f, uint8_t *p, const struct slot *sl)
{
	uint64_t write, ecx, data;
	const char *e;

	(void)s;
	if (strncmp(f, "msr_read ", 9) == 0)
		write = 0;
	else if (strncmp(f, "msr_write ", 10) == 0)
		write = 1;
	else
		return -1;
	if (parse_u64(f + 9 + write, 16, &ecx, &e) < 0 || strncmp(e, " = ", 3) != 0 ||
	    parse_u64(e + 3, 0, &data, NULL) < 0)
		return -1;
	put_u(p, &sl[0], write);
	put_u(p, &sl[1], ecx);
	put_u(p, &sl[2], data);
	put_u(p, &sl[3], strstr(e, "(#GP)") != NULL);
	return 0;
}

static const char *const kvm_userspace_exit_names[] = { "reason", "errno", NULL };

/* "reason KVM_EXIT_MMIO (6)", "reason restart (4)", "reason error (14)" */
static int parse_kvm_userspace_exit(struct text_source *s, const char *f, uint8_t *p,
				    const struct slot *sl)
{
	const char *r = find_key(f, "reason "), *paren;
	int64_t num;
	uint64_t reason = 0;
	int64_t err = 0;

	(void)s;
	if (!r || !(paren = strrchr(r, '(')) || parse_i64(paren + 1, &num, NULL) < 0)
		return -1;
	if (strncmp(r, "restart ", 8) == 0 || strncmp(r, "error ", 6) == 0)
		err = -num;
	else
		reason = (uint64_t)num;
	put_u(p, &sl[0], reason);
	put_u(p, &sl[1], (uint64_t)err);
	return 0;
}

static const char *const kvm_write_tsc_offset_names[] = { "vcpu_id", "previous_tsc_offset",
	"next_tsc_offset", NULL };

static int parse_kvm_write_tsc_offset(struct text_source *s, const char *f, uint8_t *p,
				      const struct slot *sl)
{
	uint64_t vcpu, prev, next;

	(void)s;
	if (key_u64(f, "vcpu=", 10, &vcpu) < 0 || key_u64(f, "prev=", 10, &prev) < 0 ||
	    key_u64(f, "next=", 10, &next) < 0)
		return -1;
	put_u(p, &sl[0], vcpu);
	put_u(p, &sl[1], prev);
	put_u(p, &sl[2], next);
	return 0;
}

/* "S", "R+", "D|W", "I" -> 6.1 prev_state bits; -1 if not a state. */
static int64_t parse_task_state(const char *s, size_t len)
{
	static const char letters[] = "SDTtXZPI";
	int64_t v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		const char *l = strchr(letters, s[i]);

		if (s[i] == '+')
			v |= 0x100;
		else if (l && s[i])
			v |= (int64_t)1 << (l - letters);
		else if (s[i] != 'R' && s[i] != '|' && s[i] != 'W' && s[i] != 'K' && s[i] != 'N')
			return -1;
	}
	return v;
}

/* Text between KEY and the following END (both found after FROM). */
static const char *between(const char *from, const char *key, const char *end, size_t *len)
{
	const char *a = find_key(from, key), *b;

	if (!a || !(b = strstr(a, end)))
		return NULL;
	*len = (size_t)(b - a);
	return a;
}

/* trace-cmd's "comm:pid [prio]" -> parts; returns the text after ']' */
static const char *parse_comm_pid_prio(const char *s, size_t len, const char **comm,
				       size_t *comm_len, int64_t *pid, int64_t *prio)
{
	const char *lb = NULL, *colon = NULL, *e;

	for (size_t i = len; i-- > 0;) {
		if (!lb && s[i] == '[')
			lb = s + i;
		else if (lb && s[i] == ':') {
			colon = s + i;
			break;
		}
	}
	if (!lb || !colon || parse_i64(colon + 1, pid, &e) < 0 ||
	    parse_i64(lb + 1, prio, &e) < 0 || *e != ']')
		return NULL;
	*comm = s;
	*comm_len = (size_t)(colon - s);
	return e + 1;
}

static const char *const sched_switch_names[] = { "prev_comm", "prev_pid", "prev_prio",
	"prev_state", "next_comm", "next_pid", "next_prio", NULL };

static int parse_switch_kernel(const char *f, uint8_t *p, const struct slot *sl)
{
	const char *pc, *nc, *st;
	size_t pcl, ncl, stl;
	int64_t ppid, pprio, npid, nprio, state;

	if (!(pc = between(f, "prev_comm=", " prev_pid=", &pcl)) ||
	    !(st = between(pc, "prev_state=", " ==> ", &stl)) ||
	    !(nc = between(st, "next_comm=", " next_pid=", &ncl)) ||
	    key_i64(pc, "prev_pid=", &ppid) < 0 || key_i64(pc, "prev_prio=", &pprio) < 0 ||
	    key_i64(nc, "next_pid=", &npid) < 0 || key_i64(nc, "next_prio=", &nprio) < 0 ||
	    (state = parse_task_state(st, stl)) < 0)
		return -1;
	put_str(p, &sl[0], pc, pcl);
	put_u(p, &sl[1], (uint64_t)ppid);
	put_u(p, &sl[2], (uint64_t)pprio);
	put_u(p, &sl[3], (uint64_t)state);
	put_str(p, &sl[4], nc, ncl);
	put_u(p, &sl[5], (uint64_t)npid);
	put_u(p, &sl[6], (uint64_t)nprio);
	return 0;
}

/* trace-cmd plugin: "prev:pid [prio] S ==> next:pid [prio]" */
static int parse_switch_plugin(const char *f, uint8_t *p, const struct slot *sl)
{
	const char *arrow = strstr(f, " ==> "), *pc, *nc, *rest;
	size_t pcl, ncl;
	int64_t ppid, pprio, npid, nprio, state;

	if (!arrow)
		return -1;
	rest = parse_comm_pid_prio(f, (size_t)(arrow - f), &pc, &pcl, &ppid, &pprio);
	if (!rest)
		return -1;
	rest = skip_spaces(rest);
	if ((state = parse_task_state(rest, (size_t)(arrow - rest))) < 0)
		return -1;
	if (!parse_comm_pid_prio(arrow + 5, strlen(arrow + 5), &nc, &ncl, &npid, &nprio))
		return -1;
	put_str(p, &sl[0], pc, pcl);
	put_u(p, &sl[1], (uint64_t)ppid);
	put_u(p, &sl[2], (uint64_t)pprio);
	put_u(p, &sl[3], (uint64_t)state);
	put_str(p, &sl[4], nc, ncl);
	put_u(p, &sl[5], (uint64_t)npid);
	put_u(p, &sl[6], (uint64_t)nprio);
	return 0;
}

static int parse_sched_switch(struct text_source *s, const char *f, uint8_t *p,
			      const struct slot *sl)
{
	(void)s;
	if (strncmp(f, "prev_comm=", 10) == 0)
		return parse_switch_kernel(f, p, sl);
	return parse_switch_plugin(f, p, sl);
}

static const char *const sched_wakeup_names[] = { "comm", "pid", "prio", "target_cpu", NULL };

/* "comm=X pid=N prio=N [success=1 ]target_cpu=NNN" or trace-cmd's
 * "X:N [prio] [success=1 ]CPU:NNN" */
static int parse_sched_wakeup(struct text_source *s, const char *f, uint8_t *p,
			      const struct slot *sl)
{
	const char *comm, *cpu;
	size_t comm_len;
	int64_t pid, prio, target;

	(void)s;
	if (strncmp(f, "comm=", 5) == 0) {
		if (!(comm = between(f, "comm=", " pid=", &comm_len)) ||
		    key_i64(comm, "pid=", &pid) < 0 || key_i64(comm, "prio=", &prio) < 0 ||
		    key_i64(comm, "target_cpu=", &target) < 0)
			return -1;
	} else {
		cpu = strstr(f, " CPU:");
		if (!cpu || !parse_comm_pid_prio(f, (size_t)(cpu - f), &comm, &comm_len, &pid, &prio) ||
		    parse_i64(cpu + 5, &target, NULL) < 0)
			return -1;
	}
	put_str(p, &sl[0], comm, comm_len);
	put_u(p, &sl[1], (uint64_t)pid);
	put_u(p, &sl[2], (uint64_t)prio);
	put_u(p, &sl[3], (uint64_t)target);
	return 0;
}

/* An event of a built-in format gets the first parser here of its name whose
 * fields it has (x86 kvm_exit's parser does not fit arm64's kvm_exit), else
 * its print fmt read backwards. */
static const struct text_parser text_parsers[] = {
	{ NULL, NULL, kvm_exit_names, parse_kvm_exit }, /* the kvm plugin's exit: tables' */
	{ "kvm", "kvm_entry", kvm_entry_names, parse_kvm_entry },
	{ "kvm", "kvm_nested_vmexit", kvm_exit_names, parse_kvm_exit },
	{ "kvm", "kvm_nested_vmexit_inject", kvm_nested_vmexit_inject_names,
	  parse_kvm_nested_vmexit_inject },
	{ "kvm", "kvm_nested_vmenter", kvm_nested_vmenter_names, parse_kvm_nested_vmenter },
	{ "kvm", "kvm_vcpu_wakeup", kvm_vcpu_wakeup_names, parse_kvm_vcpu_wakeup },
	{ "kvm", "kvm_halt_poll_ns", kvm_halt_poll_ns_names, parse_kvm_halt_poll_ns },
	{ "kvm", "kvm_mmio", kvm_mmio_names, parse_kvm_mmio },
	{ "kvm", "kvm_pio", kvm_pio_names, parse_kvm_pio },
	{ "kvm", "kvm_msr", kvm_msr_names, parse_kvm_msr },
	{ "kvm", "kvm_userspace_exit", kvm_userspace_exit_names, parse_kvm_userspace_exit },
	{ "kvm", "kvm_write_tsc_offset", kvm_write_tsc_offset_names, parse_kvm_write_tsc_offset },
	{ "sched", "sched_switch", sched_switch_names, parse_sched_switch },
	{ "sched", "sched_wakeup", sched_wakeup_names, parse_sched_wakeup },
};
#define NR_PARSERS (sizeof(text_parsers) / sizeof(text_parsers[0]))

/* What libtraceevent prints for a field a plugin's handler looks for and
 * the event lacks (trace-cmd report's kvm plugin on the kvm_exit and
 * kvm_entry of other architectures), before the event's own text. */
static const char *skip_missing_field_notes(const char *f)
{
	for (;;) {
		const char *e;

		if (!strncmp(f, "CAN'T FIND FIELD \"", 18) && (e = strchr(f + 18, '"')) != NULL)
			f = e + 1;
		else if (!strncmp(f, "<CANT FIND FIELD ", 17) && (e = strchr(f + 17, '>')) != NULL)
			f = e + 1;
		else
			return f;
	}
}

/* The printed fields F of TE into the payload P; -1 if they do not parse. */
static int parse_fields(struct text_source *s, const struct text_event *te, const char *f,
			uint8_t *p)
{
	if (te->parse)
		return te->parse(s, skip_missing_field_notes(f), p, te->slots);
	if (ks_plan_scan(te->plan, f, p, (int)te->size) == 0)
		return 0;
	f = skip_missing_field_notes(f);
	return ks_plan_scan(te->plan, f, p, (int)te->size);
}

/* ------------------------------------------------------------------ */
/* Building the tep handle                                              */

static int payload_size(struct tep_event *ev, uint32_t *size)
{
	struct tep_format_field **fields = tep_event_fields(ev);
	uint32_t end = 8, align = 4;

	if (!fields)
		return -1;
	for (int i = 0; fields[i]; i++) {
		uint32_t e = (uint32_t)(fields[i]->offset + fields[i]->size);

		if (e > end)
			end = e;
		if (fields[i]->size == 8)
			align = 8;
	}
	free(fields);
	*size = (end + align - 1) & ~(align - 1);
	return *size <= PAYLOAD_MAX ? 0 : -1;
}

/* The first of text_parsers[] for TE whose fields TE has: its slots are
 * set; false if none. */
static bool take_parser(struct text_event *te)
{
	for (size_t k = 0; k < NR_PARSERS; k++) {
		const struct text_parser *tp = &text_parsers[k];
		const struct ks_arch *a = tp->name ? NULL : ks_arch_tep_kvm_plugin();
		const struct ks_match *x = a ? &a->classes[0].begin[0] : NULL;
		const char *sys = x ? x->system : tp->system, *name = x ? x->name : tp->name;
		int i;

		if (!name || strcmp(sys, te->system) || strcmp(name, te->name))
			continue;
		for (i = 0; tp->fields[i] && i < MAX_FIELDS; i++) {
			struct tep_format_field *f = tep_find_field(te->ev, tp->fields[i]);

			if (!f)
				break;
			te->slots[i].offset = f->offset;
			te->slots[i].size = f->size;
		}
		if (tp->fields[i])
			continue;
		te->fields = tp->fields;
		te->parse = tp->parse;
		return true;
	}
	return false;
}

/* FORMAT into TEP as event ID; TE is set to read its lines.  0; 1 when no
 * parser reads the event (it is left out); -1 on errors. */
static int add_event(struct tep_handle *tep, struct text_event *te,
		     const struct ks_event_format *format, int id)
{
	struct ks_buf b = KS_BUF_INIT;
	char *body = ks_event_format_body(format);
	int r = -1;

	memset(te, 0, sizeof(*te));
	te->system = format->system;
	te->name = format->name;
	if (!body || ks_buf_addf(&b, "name: %s\nID: %d\nformat:\n%s%s", te->name, id, COMMON_FIELDS,
			    body) < 0)
		goto out;
	if (tep_parse_format(tep, &te->ev, b.p, b.len, te->system) != 0 || !te->ev ||
	    payload_size(te->ev, &te->size) < 0)
		goto out;
	if (!take_parser(te) && (te->plan = ks_plan_compile(te->ev)) != NULL &&
	    !ks_plan_scannable(te->plan)) {
		ks_plan_free(te->plan);
		te->plan = NULL;
	}
	r = te->parse || te->plan ? 0 : 1;
out:
	free(body);
	ks_buf_free(&b);
	return r;
}

/* The built-in formats of one architecture of ks_arches[] (same index):
 * its events, then the shared ones it does not define itself. */
struct builtin_set {
	struct tep_handle *tep;
	struct text_event *events;
	size_t nr;
};

static bool arch_defines(const struct ks_arch *a, const struct ks_event_format *f)
{
	for (const struct ks_event_format *g = a->formats; g && g->name; g++)
		if (!strcmp(g->name, f->name))
			return true;
	return false;
}

static int add_set_event(struct builtin_set *set, const struct ks_event_format *f, bool own)
{
	struct text_event *te = &set->events[set->nr];
	int r = add_event(set->tep, te, f, (int)set->nr + 1);

	if (r < 0)
		return -1;
	if (r == 0) {
		te->arch_own = own;
		set->nr++;
	}
	return 0;
}

static int build_set(struct builtin_set *set, const struct ks_arch *a)
{
	int host_big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	size_t n = NR_SHARED;

	for (const struct ks_event_format *f = a->formats; f && f->name; f++)
		n++;
	set->tep = tep_alloc();
	set->events = calloc(n, sizeof(*set->events));
	if (!set->tep || !set->events)
		return -1;
	tep_set_long_size(set->tep, 8);
	tep_set_page_size(set->tep, 4096);
	tep_set_file_bigendian(set->tep, host_big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(set->tep, host_big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	for (const struct ks_event_format *f = a->formats; f && f->name; f++)
		if (add_set_event(set, f, true) < 0)
			return -1;
	for (size_t i = 0; i < NR_SHARED; i++)
		if (!arch_defines(a, &shared_formats[i]) &&
		    add_set_event(set, &shared_formats[i], false) < 0)
			return -1;
	return 0;
}

/* The built-in sets, one per architecture of ks_arches[] (same index). */
struct builtin_sets {
	size_t n;
	struct builtin_set set[];
};

static void free_sets(void *p)
{
	struct builtin_sets *b = p;

	if (!b)
		return;
	for (size_t j = 0; j < b->n; j++) {
		if (b->set[j].tep)
			tep_free(b->set[j].tep);
		for (size_t k = 0; k < b->set[j].nr; k++)
			ks_plan_free(b->set[j].events[k].plan);
		free(b->set[j].events);
	}
	free(b);
}

static void *build_sets(void)
{
	struct builtin_sets *b;
	size_t n = 0;

	while (ks_arches[n])
		n++;
	b = calloc(1, sizeof(*b) + n * sizeof(b->set[0]));
	if (!b)
		return NULL;
	b->n = n;
	for (size_t i = 0; i < n; i++)
		if (build_set(&b->set[i], ks_arches[i]) < 0) {
			free_sets(b);
			return NULL;
		}
	return b;
}

/* The built-in formats are parsed once per library context (the x86
 * kvm_exit print format with its two exit-reason tables is most of an
 * open's cost); every source takes a reference to the tep handle of its
 * architecture and a copy of the resolved events.  Nothing changes the
 * handles after they are built (output may load plugins into a source's
 * handle, and unloads them at its end).  Without a context a source builds
 * its own, freed with it.  NULL when they cannot be built. */
static const struct builtin_sets *sets_of(struct text_source *s)
{
	if (s->base.ctx)
		return ks_ctx_obj(s->base.ctx, KS_CTX_OBJ_TEXT_FORMATS, build_sets, free_sets);
	if (!s->own_sets)
		s->own_sets = build_sets();
	return s->own_sets;
}

static int build_tep(struct text_source *s, size_t set)
{
	const struct builtin_sets *b = sets_of(s);

	if (!b || set >= b->n)
		return -1;
	s->events = malloc((b->set[set].nr ? b->set[set].nr : 1) * sizeof(*s->events));
	if (!s->events)
		return -1;
	memcpy(s->events, b->set[set].events, b->set[set].nr * sizeof(*s->events));
	s->nr_events = b->set[set].nr;
	tep_ref(b->set[set].tep);
	s->base.tep = b->set[set].tep;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Line header: [file: ] comm-pid [(tgid)] [[cpu]] [flags] ts: name: fields */

/* "1234.567890:" / "303280081900681:" at P -> ns; *end after the ':'. */
static int parse_ts(const char *p, uint64_t *ts, bool *raw, const char **end)
{
	uint64_t sec = 0, frac = 0;
	int nd = 0, nf = 0;

	while (is_digit(*p)) {
		if (++nd > 20 || sec > (UINT64_MAX - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(*p++ - '0');
	}
	if (nd == 0)
		return -1;
	*raw = *p != '.';
	if (*p == '.') {
		p++;
		while (is_digit(*p)) {
			if (nf < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				nf++;
			}
			p++;
		}
		if (nf == 0)
			return -1;
		for (int i = nf; i < 9; i++)
			frac *= 10;
		if (sec > (UINT64_MAX - frac) / 1000000000ull)
			return -1;
		sec = sec * 1000000000ull + frac;
	}
	if (*p != ':' || (p[1] != ' ' && p[1] != '\0'))
		return -1;
	*ts = sec;
	*end = p + 1;
	return 0;
}

/* Find the timestamp: a number after a space or ']' (or at the start),
 * followed by ':' and a space. */
static const char *find_ts(const char *line, uint64_t *ts, bool *raw, const char **after)
{
	for (const char *p = line; *p; p++) {
		if (!is_digit(*p) || (p > line && p[-1] != ' ' && p[-1] != ']'))
			continue;
		if (parse_ts(p, ts, raw, after) == 0)
			return p;
		while (is_digit(p[1]) || p[1] == '.')
			p++;
	}
	return NULL;
}

static bool is_flag_token(const char *s, size_t len)
{
	if (len < 3 || len > 6)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr(".dDbXNnpZzHhs0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

static uint8_t hex_nibble(char c)
{
	if (is_digit(c))
		return (uint8_t)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (uint8_t)(c - 'a' + 10);
	return 0;
}

/* Latency columns "dNs3." -> common_flags / common_preempt_count. */
static void parse_flags(const char *s, size_t len, struct line_hdr *h)
{
	static const char irq[] = "dDbX";
	static const uint8_t irq_bits[] = { 0x01, 0x81, 0x80, 0x02 };
	static const char resched[] = "Nnp";
	static const uint8_t resched_bits[] = { 0x24, 0x04, 0x20 };
	static const char ctx[] = "ZzHhs";
	static const uint8_t ctx_bits[] = { 0x48, 0x40, 0x18, 0x08, 0x10 };
	const char *c;

	if (len > 0 && s[0] && (c = strchr(irq, s[0])))
		h->flags |= irq_bits[c - irq];
	if (len > 1 && s[1] && (c = strchr(resched, s[1])))
		h->flags |= resched_bits[c - resched];
	if (len > 2 && s[2] && (c = strchr(ctx, s[2])))
		h->flags |= ctx_bits[c - ctx];
	if (len > 3)
		h->preempt |= hex_nibble(s[3]);
	if (len > 4)
		h->preempt |= (uint8_t)(hex_nibble(s[4]) << 4);
}

static size_t trim_right(const char *s, size_t e)
{
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	return e;
}

/* Strip "[cpu]", "(tgid)" and the latency token from the end of [0, e). */
static int parse_columns(const char *s, size_t *pe, struct line_hdr *h)
{
	size_t e = trim_right(s, *pe), t = e;
	uint64_t v;
	const char *end;

	while (t > 0 && s[t - 1] != ' ' && s[t - 1] != ']' && s[t - 1] != ')')
		t--;
	if (t < e && t > 0 && is_flag_token(s + t, e - t)) {
		parse_flags(s + t, e - t, h);
		e = trim_right(s, t);
	}
	if (e > 0 && s[e - 1] == ']') {
		size_t b = e - 1;

		while (b > 0 && s[b] != '[')
			b--;
		if (s[b] != '[' || parse_u64(s + b + 1, 10, &v, &end) < 0 || *end != ']' ||
		    v > INT32_MAX)
			return -1;
		h->cpu = (int32_t)v;
		e = trim_right(s, b);
	}
	if (e > 0 && s[e - 1] == ')') {
		size_t b = e - 1;

		while (b > 0 && s[b] != '(')
			b--;
		if (s[b] != '(')
			return -1;
		if (parse_u64(skip_spaces(s + b + 1), 10, &v, &end) == 0 && v <= INT32_MAX)
			h->tgid = (int32_t)v;
		e = trim_right(s, b);
	}
	*pe = e;
	return 0;
}

/* "  [file.dat: ]comm-pid" in [0, e) -> comm, tid */
static int parse_comm_pid(const char *s, size_t e, struct line_hdr *h)
{
	size_t d = e, b;
	uint64_t v;
	const char *c, *colon;

	while (d > 0 && is_digit(s[d - 1]))
		d--;
	if (d == e || d == 0 || s[d - 1] != '-' || e - d > 10)
		return -1;
	if (parse_u64(s + d, 10, &v, NULL) < 0 || v > INT32_MAX)
		return -1;
	h->tid = (int32_t)v;
	c = skip_spaces(s);
	b = (size_t)(c - s);
	/* a multi-file report's "name: " prefix: one word, then ": " */
	colon = memmem(c, d - 1 - b, ": ", 2);
	if (colon && !memchr(c, ' ', (size_t)(colon - c)))
		c = skip_spaces(colon + 2);
	if ((size_t)(c - s) > d - 1)
		return -1;
	h->comm = c;
	h->comm_len = (size_t)(s + d - 1 - c);
	return 0;
}

/* After the timestamp: " name: fields" or " system:name: fields". */
static void parse_name(const char *p, struct line_hdr *h)
{
	const char *n = skip_spaces(p), *q = n;

	while (is_name_char(*q))
		q++;
	if (*q == ':' && is_name_char(q[1])) { /* system:name: */
		n = q + 1;
		for (q = n; is_name_char(*q);)
			q++;
	}
	if (q == n || *q != ':') { /* e.g. a function tracer line */
		h->name = n;
		h->name_len = 0;
		h->fields = n;
		return;
	}
	h->name = n;
	h->name_len = (size_t)(q - n);
	h->fields = skip_spaces(q + 1);
}

static int parse_header(const char *line, struct line_hdr *h)
{
	const char *after;
	const char *tsp;
	size_t e;

	memset(h, 0, sizeof(*h));
	h->cpu = -1;
	h->tgid = -1;
	tsp = find_ts(line, &h->ts, &h->raw, &after);
	if (!tsp)
		return -1;
	e = (size_t)(tsp - line);
	if (parse_columns(line, &e, h) < 0 || parse_comm_pid(line, e, h) < 0)
		return -1;
	parse_name(after, h);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Non-event lines                                                      */

enum line_kind { LINE_EMPTY, LINE_META, LINE_LOST, LINE_EVENT, LINE_BAD };

/* Skip a multi-file "name: " prefix when followed by what TAIL matches. */
static const char *after_prefix(const char *s, const char *tail)
{
	const char *c = strstr(s, ": ");

	if (c && !memchr(s, ' ', (size_t)(c - s)) && strncmp(skip_spaces(c + 2), tail,
								strlen(tail)) == 0)
		return skip_spaces(c + 2);
	return s;
}

/* "cpus=N" -> N, else -1 */
static int64_t cpus_line(const char *s)
{
	uint64_t v;
	const char *e;

	s = after_prefix(s, "cpus=");
	if (strncmp(s, "cpus=", 5) != 0 || parse_u64(s + 5, 10, &v, &e) < 0 || *skip_spaces(e))
		return -1;
	return v > 100000 ? -1 : (int64_t)v;
}

/* "CPU:3 [LOST 12 EVENTS]" (ftrace) or "CPU:3 [12 EVENTS DROPPED]"; the
 * number of lost events, 0 if none is printed, -1 if not such a line. */
static int64_t lost_line(const char *s)
{
	const char *b;
	uint64_t v = 0;

	s = after_prefix(s, "CPU:");
	if (strncmp(s, "CPU:", 4) != 0 || !(b = strchr(s, '[')) ||
	    (!strstr(b, "LOST") && !strstr(b, "DROPPED")))
		return -1;
	for (b++; *b && *b != ']' && !is_digit(*b); b++)
		;
	if (is_digit(*b))
		parse_u64(b, 10, &v, NULL);
	return v > INT64_MAX ? 0 : (int64_t)v;
}

static bool meta_line(const char *s)
{
	uint64_t v;
	const char *e;

	if (s[0] == '#' || cpus_line(s) >= 0 || strncmp(s, "version = ", 10) == 0)
		return true;
	/* trace-cmd: "CPU 3 is empty", "CPU0 data recorded at offset=..." */
	s = after_prefix(s, "CPU");
	if (strncmp(s, "CPU", 3) == 0 && parse_u64(skip_spaces(s + 3), 10, &v, &e) == 0 &&
	    (strcmp(e, " is empty") == 0 || strncmp(e, " data recorded", 14) == 0))
		return true;
	return false;
}

static enum line_kind classify(const char *text, struct line_hdr *h)
{
	const char *s = skip_spaces(text);

	if (*s == '\0')
		return LINE_EMPTY;
	if (*s == '#')
		return LINE_META;
	if (parse_header(text, h) == 0)
		return LINE_EVENT;
	if (meta_line(s))
		return LINE_META;
	return lost_line(s) >= 0 ? LINE_LOST : LINE_BAD;
}

/* ------------------------------------------------------------------ */
/* Thread names                                                         */

/* True when TID's name differs from the last one delivered (and records
 * the new one).  -1 when out of memory, -2 past limits.threads. */
static int comm_changed(struct text_source *s, const struct line_hdr *h, bool *changed)
{
	struct comm_entry *c;
	size_t n = h->comm_len < COMM_LEN - 1 ? h->comm_len : COMM_LEN - 1;
	bool created;

	*changed = false;
	if (h->comm_len == 0 || (h->comm_len == 5 && memcmp(h->comm, "<...>", 5) == 0))
		return 0;
	c = ks_hmap_get(&s->comms, (uint32_t)h->tid);
	if (c && strlen(c->comm) == n && memcmp(c->comm, h->comm, n) == 0)
		return 0;
	if (!c) {
		if (ks_hmap_len(&s->comms) >= s->base.limits.threads)
			return -2;
		c = ks_hmap_put(&s->comms, (uint32_t)h->tid, &created);
		if (!c)
			return -1;
	}
	memcpy(c->comm, h->comm, n);
	c->comm[n] = '\0';
	*changed = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

static void count_malformed(struct text_source *s, uint64_t offset)
{
	if (s->malformed++ == 0)
		s->first_malformed = offset;
	s->base.stats.skipped++;
}

static struct text_event *find_in(struct text_event *events, size_t n, const struct line_hdr *h)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(events[i].name) == h->name_len &&
		    memcmp(events[i].name, h->name, h->name_len) == 0)
			return &events[i];
	return NULL;
}

static struct text_event *find_event(struct text_source *s, const struct line_hdr *h)
{
	return find_in(s->events, s->nr_events, h);
}

static void fill_common(struct ks_record *rec, const struct line_hdr *h, uint64_t offset)
{
	memset(rec, 0, sizeof(*rec));
	rec->ts = h->ts;
	rec->raw_ts = h->ts;
	rec->cpu = h->cpu;
	rec->tid = h->tid;
	rec->pid = h->tgid;
	rec->offset = offset;
}

/* Build the payload of a known event; -1 if its fields do not parse. */
static int build_event(struct text_source *s, struct text_event *te, const struct line_hdr *h,
		       struct ks_record *rec, uint64_t offset)
{
	uint16_t type = (uint16_t)te->ev->id;
	int32_t pid = h->tid;

	memset(s->payload, 0, te->size);
	s->cur_tid = h->tid;
	if (parse_fields(s, te, h->fields, s->payload) < 0)
		return -1;
	memcpy(s->payload, &type, 2);
	s->payload[2] = h->flags;
	s->payload[3] = h->preempt;
	memcpy(s->payload + 4, &pid, 4);
	fill_common(rec, h, offset);
	rec->type = KS_REC_EVENT;
	rec->event = te->ev;
	rec->data = s->payload;
	rec->size = te->size;
	return 0;
}

/* An event line: 1 with *rec set (a COMM first when the name changed), 0
 * when nothing is delivered, -1 on memory exhaustion, -2 past the threads
 * budget. */
static int event_line(struct text_source *s, const struct line_hdr *h, uint64_t offset,
		      struct ks_record *rec)
{
	struct text_event *te = h->name_len ? find_event(s, h) : NULL;
	struct ks_record ev;
	bool changed;
	int r;

	if (te && build_event(s, te, h, &ev, offset) < 0) {
		count_malformed(s, offset);
		return 0;
	}
	if (!te)
		s->base.stats.unknown_events++;
	r = comm_changed(s, h, &changed);
	if (r < 0)
		return r;
	if (te) {
		if (h->ts < s->last_ts)
			s->base.stats.out_of_order++;
		else
			s->last_ts = h->ts;
	}
	if (changed) {
		fill_common(rec, h, offset);
		rec->type = KS_REC_COMM;
		snprintf(s->rec_comm, sizeof(s->rec_comm), "%.*s", (int)h->comm_len, h->comm);
		rec->comm = s->rec_comm;
		if (te) {
			s->pending = ev;
			s->has_pending = true;
		}
		return 1;
	}
	if (!te)
		return 0;
	*rec = ev;
	return 1;
}

static int lost_record(struct text_source *s, const char *text, uint64_t offset,
		       struct ks_record *rec)
{
	int64_t n = lost_line(skip_spaces(text));
	const char *c = strstr(text, "CPU:");
	uint64_t cpu;

	memset(rec, 0, sizeof(*rec));
	rec->type = KS_REC_LOST;
	rec->ts = rec->raw_ts = s->last_ts;
	rec->cpu = c && parse_u64(c + 4, 10, &cpu, NULL) == 0 && cpu <= INT32_MAX ? (int32_t)cpu : -1;
	rec->tid = rec->pid = -1;
	rec->lost = n > 0 ? (uint64_t)n : 0;
	rec->offset = offset;
	s->base.stats.lost_events += rec->lost;
	s->base.stats.lost_records++;
	return 1;
}

static void meta_record(struct text_source *s, const char *text)
{
	const char *p = strstr(text, "#P:");
	int64_t n = cpus_line(skip_spaces(text));
	uint64_t v;

	if (n < 0 && p && text[0] == '#' && parse_u64(p + 3, 10, &v, NULL) == 0 && v <= 100000)
		n = (int64_t)v;
	if (n > s->base.info.nr_cpus)
		s->base.info.nr_cpus = (int)n;
}

static int handle_line(struct text_source *s, struct line *ln, struct ks_record *rec)
{
	struct line_hdr h;

	if (ln->too_long || memchr(ln->text, '\0', ln->len)) {
		count_malformed(s, ln->offset);
		return 0;
	}
	switch (classify(ln->text, &h)) {
	case LINE_EMPTY:
		return 0;
	case LINE_META:
		meta_record(s, ln->text);
		return 0;
	case LINE_LOST:
		return lost_record(s, ln->text, ln->offset, rec);
	case LINE_EVENT:
		return event_line(s, &h, ln->offset, rec);
	case LINE_BAD:
	default:
		count_malformed(s, ln->offset);
		return 0;
	}
}

static int text_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	struct text_source *s = (struct text_source *)src;
	struct line ln;
	int r;

	if (s->has_pending) {
		*rec = s->pending;
		s->has_pending = false;
		return 1;
	}
	for (;;) {
		r = reader_next(&s->lr, &ln);
		if (r < 0)
			return ks_error_code_at(err, KS_E_IO, src->path, s->lr.offset, "cannot read: %s",
					   strerror(errno));
		if (r == 0)
			return 0;
		r = handle_line(s, &ln, rec);
		if (r == -2) {
			char hint[96];

			return ks_error_code_at(err, KS_E_LIMIT, src->path, ln.offset,
					   "more distinct threads than the budget allows %s",
					   ks_limit_hint(hint, sizeof(hint), "threads",
							 src->limits.threads));
		}
		if (r < 0)
			return ks_error_code_at(err, KS_E_NOMEM, src->path, ln.offset, "out of memory");
		if (r > 0)
			return 1;
	}
}

static void text_close(struct ks_source *src)
{
	struct text_source *s = (struct text_source *)src;

	if (s->lr.fd >= 0)
		close(s->lr.fd);
	free(s->lr.buf);
	ks_hmap_free(&s->comms);
	ks_hmap_free(&s->vcpus);
	free(s->events);
	ks_ctx_tep_put(src->ctx, src->tep);
	free_sets(s->own_sets);
	free(src->path);
	free(s);
}

static const struct ks_source_ops text_ops = {
	.name = "ftrace text",
	.next = text_next,
	.close = text_close,
};

uint64_t ks_ftrace_text_malformed(const struct ks_source *src, uint64_t *first_offset)
{
	const struct text_source *s = (const struct text_source *)src;

	if (!src || src->ops != &text_ops)
		return 0;
	if (first_offset && s->malformed)
		*first_offset = s->first_malformed;
	return s->malformed;
}

/* ------------------------------------------------------------------ */
/* Open                                                                 */

/* Which architecture's formats read the text: the first line of a KVM event
 * that exactly one architecture reads decides; lines that several read
 * (kvm_exit of one kernel is not another's, but a line may fit two) are
 * counted, and the most counted is taken when no line decides.  Events of
 * generic code (shared_formats) say nothing. */
#define CHOOSE_BYTES (16u << 20)   /* how far open() looks for such lines */
#define CHOOSE_CHUNK (1u << 20)

struct choice {
	size_t n;                  /* built-in sets */
	uint64_t *votes;           /* lines each set reads */
	ssize_t decided;           /* -1: not yet */
	char *line;                /* LINE_MAX_LEN + 1 bytes of scratch */
};

static void choose_line(struct text_source *s, const struct builtin_set *sets, struct choice *c,
			const char *text, size_t len)
{
	struct line_hdr h;
	ssize_t only = -1;
	size_t readers = 0;

	if (len > LINE_MAX_LEN)
		return;
	memcpy(c->line, text, len);
	c->line[len] = '\0';
	if (len && c->line[len - 1] == '\r')
		c->line[len - 1] = '\0';
	if (classify(c->line, &h) != LINE_EVENT || !h.name_len)
		return;
	for (size_t i = 0; i < c->n; i++) {
		const struct text_event *te = find_in(sets[i].events, sets[i].nr, &h);

		memset(s->payload, 0, sizeof(s->payload));
		s->cur_tid = h.tid;
		if (!te || !te->arch_own || parse_fields(s, te, h.fields, s->payload) < 0)
			continue;
		c->votes[i]++;
		only = (ssize_t)i;
		readers++;
	}
	s->last_isa = 0; /* a parser's memory of this line */
	if (readers == 1)
		c->decided = only;
}

/* The lines of TEXT[0, LEN) (the last one only when AT_END); returns the
 * bytes of the lines looked at. */
static size_t choose_lines(struct text_source *s, const struct builtin_set *sets, struct choice *c,
			   const char *text, size_t len, bool at_end)
{
	size_t pos = 0;

	while (pos < len && c->decided < 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (!nl && !at_end)
			break;
		choose_line(s, sets, c, text + pos, end - pos);
		pos = nl ? end + 1 : len;
	}
	return pos;
}

/* *SET: the built-in set of architecture NAME (the caller's choice), else
 * of the one the text shows (TEXT, LEN: text in memory; else the file FD),
 * -1 when it shows none.  0, or -1 with ERR set. */
static int choose_set(struct text_source *s, const char *name, const char *text, size_t len,
		      int fd, ssize_t *set, struct ks_error *err)
{
	const struct builtin_sets *b = sets_of(s);
	const struct builtin_set *sets = b ? b->set : NULL;
	struct choice c = { .decided = -1 };
	char *buf = NULL;
	int r = -1;

	*set = -1;
	if (!sets)
		return ks_error_set(err, "%s: cannot set up the built-in event formats",
				    s->base.path);
	if (name) {
		const struct ks_arch *a = ks_arch_by_name(name);

		for (size_t i = 0; a && i < b->n; i++)
			if (ks_arches[i] == a)
				*set = (ssize_t)i;
		if (*set < 0) {
			char names[256];

			ks_arch_name_list(names, sizeof(names));
			return ks_error_set(err, "unknown architecture '%s' (%s)", name, names);
		}
		return 0;
	}
	c.n = b->n;
	c.votes = calloc(c.n, sizeof(*c.votes));
	c.line = malloc(LINE_MAX_LEN + 1);
	if (!c.votes || !c.line)
		goto nomem;
	if (text) {
		choose_lines(s, sets, &c, text, len < CHOOSE_BYTES ? len : CHOOSE_BYTES, true);
	} else {
		uint64_t off = 0;
		size_t have = 0;

		if (!(buf = malloc(CHOOSE_CHUNK)))
			goto nomem;
		while (c.decided < 0 && off < CHOOSE_BYTES) {
			ssize_t n = pread(fd, buf + have, CHOOSE_CHUNK - have, (off_t)(off + have));
			size_t used;

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				ks_error_code(err, KS_E_IO, "%s: cannot read: %s", s->base.path, strerror(errno));
				goto out;
			}
			have += (size_t)n;
			used = choose_lines(s, sets, &c, buf, have, n == 0);
			if (n == 0)
				break;
			if (used == 0 && have == CHOOSE_CHUNK)
				break; /* a line longer than a chunk: not text to choose by */
			memmove(buf, buf + used, have - used);
			have -= used;
			off += used;
		}
	}
	*set = c.decided;
	for (size_t i = 0; *set < 0 && i < c.n; i++)
		if (c.votes[i] && (*set < 0 || c.votes[i] > c.votes[*set]))
			*set = (ssize_t)i;
	r = 0;
	goto out;
nomem:
	ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
out:
	free(buf);
	free(c.line);
	free(c.votes);
	return r;
}

/* Builds the reader's tep from the chosen set; the input's machine is that
 * architecture's when the text or the caller chose it.  Without a choice,
 * the first architecture's formats (what the text shows nothing against). */
static int open_formats(struct text_source *s, const char *arch, const char *text, size_t len,
			int fd, struct ks_error *err)
{
	ssize_t set;
	const struct ks_arch *a;

	if (choose_set(s, arch, text, len, fd, &set, err) < 0)
		return -1;
	if (build_tep(s, set < 0 ? 0 : (size_t)set) < 0)
		return ks_error_set(err, "%s: cannot set up the built-in event formats",
				    s->base.path);
	a = set < 0 ? NULL : ks_arches[set];
	if (a) {
		s->base.info.arch_from_events = true; /* or the caller's: no header */
		snprintf(s->base.info.arch, sizeof(s->base.info.arch), "%s",
			 a->machines && a->machines[0] ? a->machines[0] : a->name);
	}
	return 0;
}

/* Whether S (no leading spaces) is a line only ftrace or trace-cmd write:
 * a "# tracer: NAME" header, "cpus=N", "version = N", "CPU N is empty". */
static bool ftrace_header_line(const char *s)
{
	if (s[0] == '#')
		return strncmp(skip_spaces(s + 1), "tracer:", 7) == 0;
	return meta_line(s) || lost_line(s) >= 0;
}

/* The head (N bytes at HEAD, which has room for one more; MORE: the input
 * goes on after them) must be text whose first event lines parse as
 * ftrace lines: no other line before the first event, and one among the
 * first lines.  Lines starting with '#' (ftrace's header) may precede it,
 * but are no evidence alone: a README or a Makefile starts with them too.
 * A text of header lines only (an empty trace) is ftrace text when one of
 * them is ftrace's or trace-cmd's own ("# tracer: nop", "cpus=2"). */
static int sniff_head(char *head, size_t n, bool more, const char *path, struct ks_error *err)
{
	int lines = 0;
	bool header = false;
	char *p, *nul;
	struct line_hdr h;

	head[n] = '\0';
	if ((nul = memchr(head, '\0', n)) != NULL)
		return ks_error_at(err, path, (uint64_t)(nul - head),
				   "not a trace.dat, perf.data or ftrace text file");
	for (p = head; *p && lines < SNIFF_LINES; lines++) {
		char *nl = strchr(p, '\n');
		enum line_kind k;

		if (nl)
			*nl = '\0';
		else if (more)
			break; /* a cut line: not evidence either way */
		k = classify(p, &h);
		if (k == LINE_EVENT)
			return 0;
		if (k == LINE_BAD) /* ftrace text starts with a header or an event */
			break;
		if (k == LINE_EMPTY)
			lines--;
		else
			header |= ftrace_header_line(skip_spaces(p));
		if (!nl) {
			p += strlen(p);
			break;
		}
		p = nl + 1;
	}
	if (header && (!*p || lines >= SNIFF_LINES))
		return 0; /* ftrace's own header lines and no event (yet) */
	return ks_error_at(err, path, (uint64_t)(p - head),
			   *p ? "not a trace.dat, perf.data or ftrace text file (this line is neither "
				"an ftrace header nor an event)"
			      : "not a trace.dat, perf.data or ftrace text file (no ftrace event or "
				"header line in it)");
}

static int sniff(int fd, const char *path, struct ks_error *err)
{
	char *head = malloc(SNIFF_BYTES + 1);
	ssize_t n;
	int r;

	if (!head)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	n = pread(fd, head, SNIFF_BYTES, 0);
	if (n < 0)
		r = ks_error_code(err, KS_E_IO, "%s: cannot read: %s", path, strerror(errno));
	else
		r = sniff_head(head, (size_t)n, n == SNIFF_BYTES, path, err);
	free(head);
	return r;
}

int ks_ftrace_text_check_head(const char *name, const void *head, size_t len, bool more,
			      struct ks_error *err)
{
	char *copy = malloc(len + 1);
	int r;

	if (!copy)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", name);
	memcpy(copy, head, len);
	r = sniff_head(copy, len, more, name, err);
	free(copy);
	return r;
}

size_t ks_ftrace_text_head_size(void)
{
	return SNIFF_BYTES;
}

/* The reader over LEN bytes of TEXT (kept by the caller while the source
 * lives).  No sniffing: any text is accepted, undecodable lines are counted. */
int ks_ftrace_text_open_mem(struct ks_source **out, const char *name, const char *text,
			    size_t len, struct ks_ctx *ctx, struct ks_error *err)
{
	struct text_source *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", name);
	s->base.ops = &text_ops;
	ks_hmap_init(&s->comms, sizeof(struct comm_entry));
	ks_hmap_init(&s->vcpus, sizeof(int32_t));
	ks_source_apply_opts(&s->base, &(struct ks_source_opts){ .ctx = ctx });
	s->lr.fd = -1;
	s->lr.mem = text;
	s->lr.mem_len = len;
	s->base.path = strdup(name);
	s->lr.buf = reader_buffer(&s->lr, len);
	if (!s->base.path || !s->lr.buf || ks_hmap_reserve(&s->comms, 1) < 0) {
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", name);
		text_close(&s->base);
		return -1;
	}
	if (open_formats(s, NULL, text, len, -1, err) < 0) {
		text_close(&s->base);
		return -1;
	}
	s->base.info.format = "ftrace text";
	*out = &s->base;
	return 0;
}

int ks_ftrace_text_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
			struct ks_error *err)
{
	struct text_source *s;
	struct stat st;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	ks_source_apply_opts(&s->base, o);
	s->base.ops = &text_ops;
	ks_hmap_init(&s->comms, sizeof(struct comm_entry));
	ks_hmap_init(&s->vcpus, sizeof(int32_t));
	s->lr.fd = open(path, O_RDONLY | O_CLOEXEC);
	s->base.path = strdup(path);
	if (s->lr.fd < 0) {
		ks_error_code(err, KS_E_IO, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (!s->base.path)
		goto nomem;
	if (sniff(s->lr.fd, path, err) < 0)
		goto fail;
	s->lr.buf = reader_buffer(&s->lr, fstat(s->lr.fd, &st) == 0 && S_ISREG(st.st_mode) ?
				  (uint64_t)st.st_size : UINT64_MAX);
	if (!s->lr.buf || ks_hmap_reserve(&s->comms, 1) < 0)
		goto nomem;
	if (open_formats(s, o ? o->arch : NULL, NULL, 0, s->lr.fd, err) < 0)
		goto fail;
	s->base.info.format = "ftrace text";
	*out = &s->base;
	return 0;
nomem:
	ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
fail:
	text_close(&s->base);
	return -1;
}
