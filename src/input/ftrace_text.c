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
 * `formats` of struct ks_arch) and the events of generic code (sched,
 * KVM's common kvm_mmio, kvm_userspace_exit, kvm_vcpu_wakeup and
 * kvm_halt_poll_ns), 64-bit layout.  Which architecture: the one named by
 * the caller (kvmscope stat --arch), else the one whose KVM events read the
 * first KVM event lines of the text (see ftrace_text_formats.c).  A line is
 * read back by its event's text layout (the architecture's table in
 * src/arch, or the reader's for generic events: the events whose text
 * trace-cmd's plugins or ternaries shape), a decoder of its own, or the
 * event's print fmt read backwards (ks_plan_scan); see
 * ftrace_text_fields.c.  A KS_REC_COMM precedes the first event
 * of every thread and every change of its name.  Lines of other events are
 * counted in stats.unknown_events, undecodable lines in stats.skipped.
 *
 * Opened by ks_source_open() (source_open.c) for anything that is not perf.data
 * or trace.dat.  Reads with a fixed-size buffer: memory does not grow with
 * the file (only with the number of distinct threads).
 *
 * This file: the records (struct ks_source's ops), the check of a file's
 * head, and the open functions; the lines, the field decoders and the
 * formats are in the files ftrace_text_impl.h lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctx_impl.h"
#include "input/ftrace_text.h"
#include "ftrace_text_impl.h"

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

struct text_event *tx_find_in(struct text_event *events, size_t n, const struct line_hdr *h)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(events[i].name) == h->name_len &&
		    memcmp(events[i].name, h->name, h->name_len) == 0)
			return &events[i];
	return NULL;
}

static struct text_event *find_event(struct text_source *s, const struct line_hdr *h)
{
	return tx_find_in(s->events, s->nr_events, h);
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
	if (tx_parse_fields(s, te, h->fields, s->payload) < 0)
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
	int64_t n = tx_lost_line(skip_spaces(text));
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
	int64_t n = tx_cpus_line(skip_spaces(text));
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
	switch (tx_classify(ln->text, &h)) {
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
		r = tx_reader_next(&s->lr, &ln);
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
	tx_free_sets(s->own_sets);
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


/* Whether S (no leading spaces) is a line only ftrace or trace-cmd write:
 * a "# tracer: NAME" header, "cpus=N", "version = N", "CPU N is empty". */
static bool ftrace_header_line(const char *s)
{
	if (s[0] == '#')
		return strncmp(skip_spaces(s + 1), "tracer:", 7) == 0;
	return tx_meta_line(s) || tx_lost_line(s) >= 0;
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
		k = tx_classify(p, &h);
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
	s->lr.buf = tx_reader_buffer(&s->lr, len);
	if (!s->base.path || !s->lr.buf || ks_hmap_reserve(&s->comms, 1) < 0) {
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", name);
		text_close(&s->base);
		return -1;
	}
	if (tx_open_formats(s, NULL, text, len, -1, err) < 0) {
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
	s->lr.buf = tx_reader_buffer(&s->lr, fstat(s->lr.fd, &st) == 0 && S_ISREG(st.st_mode) ?
				  (uint64_t)st.st_size : UINT64_MAX);
	if (!s->lr.buf || ks_hmap_reserve(&s->comms, 1) < 0)
		goto nomem;
	if (tx_open_formats(s, o ? o->arch : NULL, NULL, 0, s->lr.fd, err) < 0)
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
