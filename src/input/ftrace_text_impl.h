/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text_impl.h - what the ftrace text reader's files share: the
 * reader's state (struct text_source), the parts of a line, the built-in
 * event sets, and the functions one file gives the others.  The reader is
 * four rooms:
 *   ftrace_text_line.c     the buffered line reader and the line's header
 *                          (task-pid, tgid, cpu, flags, timestamp, name);
 *                          what kind of line it is (event, meta, lost)
 *   ftrace_text_fields.c   the printed fields of an event back into its
 *                          binary payload: the events' own decoders, else
 *                          the print fmt read backwards
 *   ftrace_text_formats.c  the built-in event formats, one tep handle per
 *                          architecture, and which architecture's formats
 *                          read the text (format discovery)
 *   ftrace_text.c          the records (the struct ks_source ops), the
 *                          check of a file's head and the open functions
 */
#ifndef KVMSCOPE_FTRACE_TEXT_IMPL_H
#define KVMSCOPE_FTRACE_TEXT_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <traceevent/event-parse.h>

#include "kvmscope/limits.h"
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
/* Buffered line reader (ftrace_text_line.c)                            */

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

/* ------------------------------------------------------------------ */
/* Reader state                                                         */

struct slot {
	int32_t offset, size;
};

/* The values of an event's fields as its decoder or layout reads them,
 * in the order of its slots: numbers, or strings (bit I of STRS: value I
 * is STR[I], LEN[I] bytes) for char[N] fields. */
struct text_vals {
	uint64_t u[MAX_FIELDS];
	const char *str[MAX_FIELDS];
	size_t len[MAX_FIELDS];
	uint32_t strs;
};

/* A decoder of the printed fields F of one event (ftrace_text_fields.c). */
typedef int (*fields_parser)(const char *f, struct text_vals *v);

struct ks_text_layout;
struct ks_arch;

struct text_event {
	const char *system, *name;
	fields_parser parse;         /* its own decoder, or */
	const struct ks_text_layout *layout; /* its layout (of ARCH's; NULL: generic), */
	const struct ks_arch *arch;
	struct ks_plan *plan;        /* else its print fmt, read backwards */
	bool arch_own;               /* the architecture's event, not a shared one */
	struct tep_event *ev;        /* in the reader's tep */
	uint32_t size;               /* payload size */
	int nslots;                  /* the fields PARSE or LAYOUT fill */
	struct slot slots[MAX_FIELDS];
};

struct comm_entry {
	char comm[COMM_LEN];
};

struct reason_cache_entry {
	char name[40];
	const struct ks_arch *arch;
	int32_t sel;
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
	int32_t last_sel;            /* the table selector of the last exit */
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


enum line_kind { LINE_EMPTY, LINE_META, LINE_LOST, LINE_EVENT, LINE_BAD };

/* The built-in formats of one architecture of ks_arches[] (same index):
 * its events, then the shared ones it does not define itself. */
struct builtin_set {
	struct tep_handle *tep;
	struct text_event *events;
	size_t nr;
};

/* The built-in sets, one per architecture of ks_arches[] (same index). */
struct builtin_sets {
	size_t n;
	struct builtin_set set[];
};

/* ------------------------------------------------------------------ */
/* Small parsing helpers (inline: every line takes them)                */

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static inline const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static inline bool is_hex_digit(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The length of the number in BASE (0: C's prefixes, 0x hex, 0 octal; 16:
 * an 0x prefix allowed) at P: the part strtoull() would take. */
static inline size_t number_len(const char *p, int base)
{
	size_t n = 0;

	if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    is_hex_digit(p[2])) {
		base = 16;
		n = 2;
	} else if (base == 0) {
		base = p[0] == '0' ? 8 : 10;
	}
	while (base == 16 ? is_hex_digit(p[n]) : is_digit(p[n]) && (base != 8 || p[n] < '8'))
		n++;
	return n;
}

/* Unsigned number in BASE (0: C rules) at P; *end after it.  -1 if none,
 * or if it does not fit.  The checked parser of src/util reads it. */
static inline int parse_u64(const char *p, int base, uint64_t *v, const char **end)
{
	size_t n;

	if (!p || !(base == 16 ? is_hex_digit(*p) : is_digit(*p)))
		return -1;
	n = number_len(p, base);
	if (ks_parse_u64(p, n, base, v) < 0)
		return -1;
	if (end)
		*end = p + n;
	return 0;
}

static inline int parse_i64(const char *p, int64_t *v, const char **end)
{
	uint64_t u;
	bool neg = *p == '-';

	if (parse_u64(p + neg, 10, &u, end) < 0 || u > INT64_MAX)
		return -1;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

/* ------------------------------------------------------------------ */
/* What one file gives the others                                       */

/* ftrace_text_line.c: the line reader (tx_reader_next: 1 with *LN set, 0
 * at the end, -1 on a read error; tx_reader_buffer: the buffer for an
 * input of SIZE bytes, UINT64_MAX: unknown) and the kinds of lines. */
char *tx_reader_buffer(struct line_reader *lr, uint64_t size);
int tx_reader_next(struct line_reader *lr, struct line *ln);
enum line_kind tx_classify(const char *text, struct line_hdr *h);
int64_t tx_cpus_line(const char *s);
int64_t tx_lost_line(const char *s);
bool tx_meta_line(const char *s);

/* ftrace_text_fields.c: the decoder of TE (its slots set; false if none
 * fits) and the printed fields F of TE into the payload P (-1 if they do
 * not parse). */
bool tx_take_parser(struct text_event *te);
int tx_parse_fields(struct text_source *s, const struct text_event *te, const char *f,
		    uint8_t *p);

/* ftrace_text_formats.c: the reader's tep and events from the built-in
 * set of architecture ARCH (NULL: the one the text shows; TEXT, LEN: text
 * in memory, else the file FD); 0, or -1 with ERR set.  tx_free_sets
 * frees a source's own sets. */
int tx_open_formats(struct text_source *s, const char *arch, const char *text, size_t len,
		    int fd, struct ks_error *err);
void tx_free_sets(void *p);

/* ftrace_text.c: the event of EVENTS[0, N) named by H; NULL if none. */
struct text_event *tx_find_in(struct text_event *events, size_t n, const struct line_hdr *h);

#endif
