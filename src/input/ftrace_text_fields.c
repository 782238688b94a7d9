/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text_fields.c - the printed fields of an ftrace text event line
 * back into the binary payload of its built-in format.  An event is read
 * by the first of these that fits it (its format has the fields):
 *   - a decoder of its own here (the scheduler's events and
 *     kvm_userspace_exit: names, ternaries, trace-cmd plugin forms),
 *   - its text layout: rows of "the number after KEY", "one of these
 *     words" (src/arch/text_layout.h), the generic events' below, an
 *     architecture's beside its formats (struct ks_arch text_layouts),
 *   - else its print fmt read backwards (ks_plan_scan).
 * A decoder or layout fills one value per field (struct text_vals), which
 * store_vals() writes into the payload at the format's offsets.
 *
 * Part of the reader in ftrace_text.c (see ftrace_text_impl.h).
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/text_layout.h"
#include "event/print_plan.h"
#include "ftrace_text_impl.h"

/* ------------------------------------------------------------------ */
/* Keys and values                                                      */

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

static int key_i64(const char *f, const char *key, int64_t *v)
{
	const char *p = find_key(f, key);

	return p ? parse_i64(p, v, NULL) : -1;
}

/* Value I as a signed number (the bits of u[I]: signed and unsigned
 * variants of one type may alias). */
static int64_t *val_i64(struct text_vals *v, int i)
{
	return (int64_t *)&v->u[i];
}

/* Value I is the string S[0, LEN) (a char[N] field). */
static void val_str(struct text_vals *v, int i, const char *s, size_t len)
{
	v->strs |= 1u << i;
	v->str[i] = s;
	v->len[i] = len;
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

/* The values V of TE's fields into the payload P. */
static void store_vals(uint8_t *p, const struct text_event *te, const struct text_vals *v)
{
	for (int i = 0; i < te->nslots; i++) {
		if (v->strs & (1u << i))
			put_str(p, &te->slots[i], v->str[i], v->len[i]);
		else
			put_u(p, &te->slots[i], v->u[i]);
	}
}

/* ------------------------------------------------------------------ */
/* Decoders of generic events' own texts                                */

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
enum { SW_PREV_COMM, SW_PREV_PID, SW_PREV_PRIO, SW_PREV_STATE, SW_NEXT_COMM, SW_NEXT_PID,
       SW_NEXT_PRIO };

/* The kernel's "prev_comm=X prev_pid=N prev_prio=N prev_state=S ==>
 * next_comm=X next_pid=N next_prio=N" into V but the state; returns the
 * state's text (*STL bytes), NULL if F is not such a text. */
static const char *switch_kernel(const char *f, struct text_vals *v, size_t *stl)
{
	const char *pc, *nc, *st;
	size_t pcl, ncl;

	if (!(pc = between(f, "prev_comm=", " prev_pid=", &pcl)) ||
	    !(st = between(pc, "prev_state=", " ==> ", stl)) ||
	    !(nc = between(st, "next_comm=", " next_pid=", &ncl)) ||
	    key_i64(pc, "prev_pid=", val_i64(v, SW_PREV_PID)) < 0 ||
	    key_i64(pc, "prev_prio=", val_i64(v, SW_PREV_PRIO)) < 0 ||
	    key_i64(nc, "next_pid=", val_i64(v, SW_NEXT_PID)) < 0 ||
	    key_i64(nc, "next_prio=", val_i64(v, SW_NEXT_PRIO)) < 0)
		return NULL;
	val_str(v, SW_PREV_COMM, pc, pcl);
	val_str(v, SW_NEXT_COMM, nc, ncl);
	return st;
}

/* ... and trace-cmd plugin's "prev:pid [prio] S ==> next:pid [prio]" */
static const char *switch_plugin(const char *f, struct text_vals *v, size_t *stl)
{
	const char *arrow = strstr(f, " ==> "), *pc, *nc, *st;
	size_t pcl, ncl;

	if (!arrow || !(st = parse_comm_pid_prio(f, (size_t)(arrow - f), &pc, &pcl,
						 val_i64(v, SW_PREV_PID),
						 val_i64(v, SW_PREV_PRIO))) ||
	    !parse_comm_pid_prio(arrow + 5, strlen(arrow + 5), &nc, &ncl,
				 val_i64(v, SW_NEXT_PID), val_i64(v, SW_NEXT_PRIO)))
		return NULL;
	st = skip_spaces(st);
	*stl = st < arrow ? (size_t)(arrow - st) : 0;
	val_str(v, SW_PREV_COMM, pc, pcl);
	val_str(v, SW_NEXT_COMM, nc, ncl);
	return st;
}

static int parse_sched_switch(const char *f, struct text_vals *v)
{
	size_t stl = 0;
	const char *st = strncmp(f, "prev_comm=", 10) == 0 ? switch_kernel(f, v, &stl)
							   : switch_plugin(f, v, &stl);
	int64_t state = st ? parse_task_state(st, stl) : -1;

	if (state < 0)
		return -1;
	v->u[SW_PREV_STATE] = (uint64_t)state;
	return 0;
}

static const char *const sched_wakeup_names[] = { "comm", "pid", "prio", "target_cpu", NULL };

/* "comm=X pid=N prio=N [success=1 ]target_cpu=NNN" or trace-cmd's
 * "X:N [prio] [success=1 ]CPU:NNN" */
static int parse_sched_wakeup(const char *f, struct text_vals *v)
{
	const char *comm, *cpu;
	size_t comm_len;
	int64_t *pid = val_i64(v, 1), *prio = val_i64(v, 2), *target = val_i64(v, 3);

	if (strncmp(f, "comm=", 5) == 0) {
		if (!(comm = between(f, "comm=", " pid=", &comm_len)) ||
		    key_i64(comm, "pid=", pid) < 0 || key_i64(comm, "prio=", prio) < 0 ||
		    key_i64(comm, "target_cpu=", target) < 0)
			return -1;
	} else {
		cpu = strstr(f, " CPU:");
		if (!cpu || !parse_comm_pid_prio(f, (size_t)(cpu - f), &comm, &comm_len, pid, prio) ||
		    parse_i64(cpu + 5, target, NULL) < 0)
			return -1;
	}
	val_str(v, 0, comm, comm_len);
	return 0;
}

static const char *const kvm_userspace_exit_names[] = { "reason", "errno", NULL };

/* "reason KVM_EXIT_MMIO (6)", "reason restart (4)", "reason error (14)" */
static int parse_kvm_userspace_exit(const char *f, struct text_vals *v)
{
	const char *r = find_key(f, "reason "), *paren;
	int64_t num;

	if (!r || !(paren = strrchr(r, '(')) || parse_i64(paren + 1, &num, NULL) < 0)
		return -1;
	if (strncmp(r, "restart ", 8) == 0 || strncmp(r, "error ", 6) == 0)
		v->u[1] = (uint64_t)-num;
	else
		v->u[0] = (uint64_t)num;
	return 0;
}

/* A decoder of the events whose text no layout says, with their fields in
 * value order. */
struct text_decoder {
	const char *system, *name;
	const char *const *fields;
	fields_parser parse;
};

static const struct text_decoder text_decoders[] = {
	{ "kvm", "kvm_userspace_exit", kvm_userspace_exit_names, parse_kvm_userspace_exit },
	{ "sched", "sched_switch", sched_switch_names, parse_sched_switch },
	{ "sched", "sched_wakeup", sched_wakeup_names, parse_sched_wakeup },
};
#define NR_DECODERS (sizeof(text_decoders) / sizeof(text_decoders[0]))

/* ------------------------------------------------------------------ */
/* Layouts of generic events (Linux 6.1, include/trace/events/kvm.h)   */

static const char *const wait_words[] = { "poll time ", "wait time ", NULL };
static const char *const valid_words[] = { "invalid", "valid", NULL };
static const char *const grow_words[] = { "shrink ", "grow ", NULL };
static const char *const mmio_words[] = { "unsatisfied-read ", "read ", "write ", NULL };

/* "wait|poll time %lld ns, polling valid|invalid" */
static const struct ks_text_field kvm_vcpu_wakeup_text[] = {
	{ .field = "waited", .kind = KS_TEXT_WORD, .words = wait_words },
	{ .field = "ns", .base = 10, .flags = KS_TEXT_FOLLOWS | KS_TEXT_SIGNED },
	{ .field = "valid", .kind = KS_TEXT_WORD, .key = "polling ", .words = valid_words },
	{ .field = NULL },
};

/* "vcpu %u: halt_poll_ns %u (grow|shrink %u)" */
static const struct ks_text_field kvm_halt_poll_ns_text[] = {
	{ .field = "vcpu_id", .key = "vcpu ", .base = 10 },
	{ .field = "new", .key = "halt_poll_ns ", .base = 10 },
	{ .field = "grow", .kind = KS_TEXT_WORD, .key = "(", .words = grow_words },
	{ .field = "old", .base = 10, .flags = KS_TEXT_FOLLOWS },
	{ .field = NULL },
};

/* "mmio read|write|unsatisfied-read|N len %u gpa 0x%llx val 0x%llx" */
static const struct ks_text_field kvm_mmio_text[] = {
	{ .field = "type", .kind = KS_TEXT_WORD, .key = "mmio ", .words = mmio_words,
	  .flags = KS_TEXT_OR_NUMBER },
	{ .field = "len", .key = "len ", .base = 10 },
	{ .field = "gpa", .key = "gpa " },
	{ .field = "val", .key = "val " },
	{ .field = NULL },
};

static const struct ks_text_layout generic_layouts[] = {
	{ .system = "kvm", .name = "kvm_vcpu_wakeup", .fields = kvm_vcpu_wakeup_text },
	{ .system = "kvm", .name = "kvm_halt_poll_ns", .fields = kvm_halt_poll_ns_text },
	{ .system = "kvm", .name = "kvm_mmio", .fields = kvm_mmio_text },
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* Reading a line by its layout                                         */

/* What the rows of one line have read so far. */
struct row_state {
	const char *end;       /* after the last value read (KS_TEXT_FOLLOWS) */
	int32_t sel;           /* the exit's selector (KS_TEXT_EXIT_SEL) */
	bool exit;             /* a KS_TEXT_EXIT row read one */
	/* the layout's WHEN key and where its value starts: a row of that key
	 * (the same string) need not look for it again */
	const char *when, *when_at;
};

static int lookup_reason(struct text_source *s, const struct ks_arch *arch, const char *name,
			 int32_t *sel, uint64_t *code)
{
	struct reason_cache_entry *c;

	for (size_t i = 0; i < s->nr_reasons; i++) {
		if (s->reasons[i].arch == arch && strcmp(s->reasons[i].name, name) == 0) {
			*sel = s->reasons[i].sel;
			*code = s->reasons[i].code;
			return 0;
		}
	}
	if (!ks_arch_exit_code(arch, name, sel, code))
		return -1;
	c = &s->reasons[s->nr_reasons < REASON_CACHE ? s->nr_reasons++ : REASON_CACHE - 1];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->arch = arch;
	c->sel = *sel;
	c->code = *code;
	return 0;
}

/* The code of NAME (LEN bytes) when it is a number: "UNKNOWN (N)", as
 * trace-cmd's kvm plugin prints an unnamed code, or N. */
static int unnamed_code(char *name, size_t len, uint64_t *code)
{
	const char *e;

	if (!strncmp(name, "UNKNOWN (", 9) && name[len - 1] == ')') {
		name[len - 1] = '\0';
		return parse_u64(name + 9, 10, code, &e) < 0 || *e ? -1 : 0;
	}
	return parse_u64(name, 0, code, &e) < 0 || *e ? -1 : 0;
}

/* A KS_TEXT_EXIT row: "KEY NAME[SUFFIX]STOP..." -> code, st->sel. */
static int read_exit(struct text_source *s, const struct text_event *te,
		     const struct ks_text_field *row, const char *f, struct row_state *st,
		     uint64_t *code)
{
	const struct ks_text_exit *x = row->exit;
	const char *r = find_key(f, row->key), *e;
	char name[40];
	size_t len;
	uint64_t flags = 0;

	if (!r)
		return -1;
	e = strstr(r, row->stop);
	len = e ? (size_t)(e - r) : strlen(r);
	while (len && r[len - 1] == ' ')
		len--;
	for (size_t i = 0; x && i < x->nsuffixes; i++) {
		size_t n = strlen(x->suffixes[i].name);

		if (len >= n && memcmp(r + len - n, x->suffixes[i].name, n) == 0) {
			flags |= x->suffixes[i].code;
			len -= n;
		}
	}
	if (len == 0 || len >= sizeof(name))
		return -1;
	memcpy(name, r, len);
	name[len] = '\0';
	if (lookup_reason(s, te->arch, name, &st->sel, code) < 0) {
		const struct ks_text_sel *u = x ? x->unnamed : NULL;

		if (unnamed_code(name, len, code) < 0)
			return -1;
		/* the input's last exit says which table, else the code */
		while (u && u->min && *code < u->min)
			u++;
		st->sel = s->last_sel ? s->last_sel : u ? u->sel : 0;
	}
	*code |= flags;
	st->exit = true;
	return 0;
}

/* Where ROW's value starts in F; NULL if its key is not there. */
static const char *row_at(const struct ks_text_field *row, const char *f, const struct row_state *st)
{
	const char *p, *last = NULL;

	if (row->flags & KS_TEXT_FOLLOWS) {
		p = st->end;
		if (!p || (row->key && strncmp(p, row->key, strlen(row->key)) != 0))
			return NULL;
		return skip_spaces(row->key ? p + strlen(row->key) : p);
	}
	if (row->flags & KS_TEXT_LAST) {
		for (p = f; (p = strstr(p, row->key)) != NULL; p++)
			last = p;
		return last ? skip_spaces(last + strlen(row->key)) : NULL;
	}
	if (row->key && row->key == st->when)
		return st->when_at;
	return row->key ? find_key(f, row->key) : f;
}

/* A KS_TEXT_WORD row at AT: the index of its word (or the number there). */
static int read_word(const struct ks_text_field *row, const char *at, struct row_state *st,
		     uint64_t *v)
{
	for (uint64_t i = 0; row->words[i]; i++) {
		size_t n = strlen(row->words[i]);

		if (strncmp(at, row->words[i], n) == 0) {
			*v = i;
			st->end = at + n;
			return 0;
		}
	}
	if (row->flags & KS_TEXT_OR_NUMBER)
		return parse_u64(at, row->base, v, &st->end);
	return -1;
}

/* A KS_TEXT_NUM row at AT (NULL: its key is absent). */
static int read_num(struct text_source *s, const struct ks_text_field *row, const char *at,
		    struct row_state *st, uint64_t *v)
{
	int r = !at ? -1 : row->flags & KS_TEXT_SIGNED ? parse_i64(at, (int64_t *)v, &st->end)
		       : parse_u64(at, row->base, v, &st->end);

	if (r == 0)
		return 0;
	*v = 0;
	if (row->flags & KS_TEXT_VCPU_GET) {
		const int32_t *c = ks_hmap_get(&s->vcpus, (uint32_t)s->cur_tid);

		*v = c ? (uint64_t)*c : 0;
		return 0;
	}
	return row->flags & KS_TEXT_OPTIONAL ? 0 : -1;
}

static int read_row(struct text_source *s, const struct text_event *te,
		    const struct ks_text_field *row, const char *f, struct row_state *st,
		    uint64_t *v)
{
	const char *at;

	switch (row->kind) {
	case KS_TEXT_CONST:
		*v = row->value;
		return 0;
	case KS_TEXT_FLAG:
		*v = strstr(f, row->key) != NULL;
		return 0;
	case KS_TEXT_EXIT:
		return read_exit(s, te, row, f, st, v);
	case KS_TEXT_EXIT_SEL:
		*v = (uint64_t)st->sel;
		return 0;
	case KS_TEXT_WORD:
		at = row_at(row, f, st);
		return at ? read_word(row, at, st, v) : -1;
	case KS_TEXT_NUM:
	default:
		return read_num(s, row, row_at(row, f, st), st, v);
	}
}

/* The thread of the line runs vCPU VCPU (its kvm_exit lines may not say;
 * past limits.threads threads, which the reader then refuses anyway, not
 * remembered). */
static void remember_vcpu(struct text_source *s, uint64_t vcpu)
{
	int32_t *v = ks_hmap_get(&s->vcpus, (uint32_t)s->cur_tid);
	bool created;

	if (!v && ks_hmap_len(&s->vcpus) < s->base.limits.threads)
		v = ks_hmap_put(&s->vcpus, (uint32_t)s->cur_tid, &created);
	if (v)
		*v = (int32_t)vcpu;
}

/* F by the first layout of TE's whose WHEN key F has (NULL: any F), each
 * value into the payload P as it is read (the caller drops P when F does
 * not parse). */
static int read_layout(struct text_source *s, const struct text_event *te, const char *f,
		       uint8_t *p)
{
	const struct ks_text_layout *l = te->layout;
	struct row_state st = { .sel = 0 };
	uint64_t vcpu = UINT64_MAX;

	while (l->when && !(st.when_at = find_key(f, l->when))) {
		if (!l[1].name || strcmp(l[1].name, l->name))
			return -1;
		l++;
	}
	st.when = l->when;
	for (int i = 0; l->fields[i].field; i++) {
		uint64_t v;

		if (read_row(s, te, &l->fields[i], f, &st, &v) < 0)
			return -1;
		put_u(p, &te->slots[i], v);
		if (l->fields[i].flags & KS_TEXT_VCPU_SET)
			vcpu = v;
	}
	if (st.exit)
		s->last_sel = st.sel;
	if (vcpu != UINT64_MAX)
		remember_vcpu(s, vcpu);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Choosing a reader per event                                          */

/* TE's slots for the fields NAMES (NULL ends); false unless TE has all.
 * The names are a column of a table: each STRIDE bytes after the last (a
 * decoder's names, or the field member of layout rows). */
static bool take_slots(struct text_event *te, const char *const *names, size_t stride)
{
	int i;

	for (i = 0; *names && i < MAX_FIELDS; i++) {
		struct tep_format_field *f = tep_find_field(te->ev, *names);

		if (!f)
			return false;
		te->slots[i].offset = f->offset;
		te->slots[i].size = f->size;
		names = (const char *const *)((const char *)names + stride);
	}
	te->nslots = i;
	return !*names;
}

/* The layout in TABLE of TE's event whose fields TE has (set as TE's). */
static bool take_layout(struct text_event *te, const struct ks_text_layout *table,
			const struct ks_arch *arch)
{
	for (const struct ks_text_layout *l = table; l && l->name; l++) {
		if (strcmp(l->system, te->system) || strcmp(l->name, te->name) ||
		    !take_slots(te, &l->fields[0].field, sizeof(l->fields[0])))
			continue;
		te->layout = l;
		te->arch = arch;
		return true;
	}
	return false;
}

bool tx_take_parser(struct text_event *te)
{
	for (size_t k = 0; k < NR_DECODERS; k++) {
		const struct text_decoder *d = &text_decoders[k];

		if (!strcmp(d->system, te->system) && !strcmp(d->name, te->name) &&
		    take_slots(te, d->fields, sizeof(d->fields[0]))) {
			te->parse = d->parse;
			return true;
		}
	}
	if (take_layout(te, generic_layouts, NULL))
		return true;
	for (size_t a = 0; ks_arches[a]; a++)
		if (take_layout(te, ks_arches[a]->text_layouts, ks_arches[a]))
			return true;
	return false;
}

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
int tx_parse_fields(struct text_source *s, const struct text_event *te, const char *f,
		    uint8_t *p)
{
	struct text_vals v;

	if (te->layout)
		return read_layout(s, te, skip_missing_field_notes(f), p);
	if (te->parse) {
		memset(v.u, 0, (size_t)te->nslots * sizeof(v.u[0]));
		v.strs = 0;
		if (te->parse(skip_missing_field_notes(f), &v) < 0)
			return -1;
		store_vals(p, te, &v);
		return 0;
	}
	if (ks_plan_scan(te->plan, f, p, (int)te->size) == 0)
		return 0;
	f = skip_missing_field_notes(f);
	return ks_plan_scan(te->plan, f, p, (int)te->size);
}
