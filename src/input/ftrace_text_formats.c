/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text_formats.c - the event formats the ftrace text reader reads
 * lines with, and which of them: text carries no formats, so the reader
 * builds one tep handle per architecture from that architecture's KVM
 * event formats (src/arch, the `formats` of struct ks_arch) and the events
 * of generic code below (sched, KVM's common kvm_mmio, kvm_userspace_exit,
 * kvm_vcpu_wakeup and kvm_halt_poll_ns), 64-bit layout; once per library
 * context.  Which architecture: the one named by the caller (kvmscope
 * stat --arch), else the one whose KVM events read the first KVM event
 * lines of the text (choose_set()).
 *
 * Part of the reader in ftrace_text.c (see ftrace_text_impl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "arch/arch.h"
#include "ctx_impl.h"
#include "event/print_plan.h"
#include "ftrace_text_impl.h"

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
	if (!tx_take_parser(te) && (te->plan = ks_plan_compile(te->ev)) != NULL &&
	    !ks_plan_scannable(te->plan)) {
		ks_plan_free(te->plan);
		te->plan = NULL;
	}
	r = te->parse || te->layout || te->plan ? 0 : 1;
out:
	free(body);
	ks_buf_free(&b);
	return r;
}

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

void tx_free_sets(void *p)
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
			tx_free_sets(b);
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
		return ks_ctx_obj(s->base.ctx, KS_CTX_OBJ_TEXT_FORMATS, build_sets, tx_free_sets);
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
/* Which architecture                                                   */

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
	if (tx_classify(c->line, &h) != LINE_EVENT || !h.name_len)
		return;
	for (size_t i = 0; i < c->n; i++) {
		const struct text_event *te = tx_find_in(sets[i].events, sets[i].nr, &h);

		memset(s->payload, 0, sizeof(s->payload));
		s->cur_tid = h.tid;
		if (!te || !te->arch_own || tx_parse_fields(s, te, h.fields, s->payload) < 0)
			continue;
		c->votes[i]++;
		only = (ssize_t)i;
		readers++;
	}
	s->last_sel = 0; /* a layout's memory of this line */
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

/* *SET: the built-in set of architecture NAME (the caller's choice, a
 * name of ks_arches[]).  0, or -1 with ERR set. */
static int choose_named(const struct builtin_sets *b, const char *name, ssize_t *set,
			struct ks_error *err)
{
	const struct ks_arch *a = ks_arch_by_name(name);
	char names[256];

	for (size_t i = 0; a && i < b->n; i++)
		if (ks_arches[i] == a)
			*set = (ssize_t)i;
	if (*set >= 0)
		return 0;
	ks_arch_name_list(names, sizeof(names));
	return ks_error_set(err, "unknown architecture '%s' (%s)", name, names);
}

/* The lines of the file FD, chunk by chunk, to C until one decides (or
 * CHOOSE_BYTES are read).  0, or -1 with ERR set. */
static int choose_from_file(struct text_source *s, const struct builtin_set *sets,
			    struct choice *c, int fd, struct ks_error *err)
{
	char *buf = malloc(CHOOSE_CHUNK);
	uint64_t off = 0;
	size_t have = 0;

	if (!buf)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	while (c->decided < 0 && off < CHOOSE_BYTES) {
		ssize_t n = pread(fd, buf + have, CHOOSE_CHUNK - have, (off_t)(off + have));
		size_t used;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return ks_error_code(err, KS_E_IO, "%s: cannot read: %s", s->base.path,
					     strerror(errno));
		}
		have += (size_t)n;
		used = choose_lines(s, sets, c, buf, have, n == 0);
		if (n == 0)
			break;
		if (used == 0 && have == CHOOSE_CHUNK)
			break; /* a line longer than a chunk: not text to choose by */
		memmove(buf, buf + used, have - used);
		have -= used;
		off += used;
	}
	free(buf);
	return 0;
}

/* *SET: the built-in set of architecture NAME (the caller's choice), else
 * of the one the text shows (TEXT, LEN: text in memory; else the file FD),
 * -1 when it shows none.  0, or -1 with ERR set. */
static int choose_set(struct text_source *s, const char *name, const char *text, size_t len,
		      int fd, ssize_t *set, struct ks_error *err)
{
	const struct builtin_sets *b = sets_of(s);
	struct choice c = { .decided = -1 };
	int r = 0;

	*set = -1;
	if (!b)
		return ks_error_set(err, "%s: cannot set up the built-in event formats",
				    s->base.path);
	if (name)
		return choose_named(b, name, set, err);
	c.n = b->n;
	c.votes = calloc(c.n, sizeof(*c.votes));
	c.line = malloc(LINE_MAX_LEN + 1);
	if (!c.votes || !c.line)
		r = ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	else if (text)
		choose_lines(s, b->set, &c, text, len < CHOOSE_BYTES ? len : CHOOSE_BYTES, true);
	else
		r = choose_from_file(s, b->set, &c, fd, err);
	*set = c.decided;
	for (size_t i = 0; r == 0 && *set < 0 && i < c.n; i++)
		if (c.votes[i] && (*set < 0 || c.votes[i] > c.votes[*set]))
			*set = (ssize_t)i;
	free(c.line);
	free(c.votes);
	return r;
}

/* Builds the reader's tep from the chosen set; the input's machine is that
 * architecture's when the text or the caller chose it.  Without a choice,
 * the first architecture's formats (what the text shows nothing against). */
int tx_open_formats(struct text_source *s, const char *arch, const char *text, size_t len,
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

