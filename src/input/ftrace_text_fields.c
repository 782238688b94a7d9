/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_text_fields.c - the printed fields of an ftrace text event line
 * back into the binary payload of its built-in format.  An event gets the
 * first decoder of text_parsers[] of its name whose fields its format has
 * (the events whose text trace-cmd's plugins or ternaries shape), else its
 * print fmt read backwards (ks_plan_scan).
 *
 * Part of the reader in ftrace_text.c (see ftrace_text_impl.h).
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86.h"
#include "event/print_plan.h"
#include "ftrace_text_impl.h"

/* ------------------------------------------------------------------ */
/* Keys and payload slots                                               */

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
int tx_parse_fields(struct text_source *s, const struct text_event *te, const char *f,
			uint8_t *p)
{
	if (te->parse)
		return te->parse(s, skip_missing_field_notes(f), p, te->slots);
	if (ks_plan_scan(te->plan, f, p, (int)te->size) == 0)
		return 0;
	f = skip_missing_field_notes(f);
	return ks_plan_scan(te->plan, f, p, (int)te->size);
}


/* The first of text_parsers[] for TE whose fields TE has: its slots are
 * set; false if none. */
bool tx_take_parser(struct text_event *te)
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
