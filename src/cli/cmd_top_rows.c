/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_top_rows.c - the row model of kvmscope top: the views and their
 * columns, the VM filters (g, p, f) and names, and each view built as a list of
 * display rows (struct ks_top_line: a label indented by depth, and its cells
 * already formatted) that the screen, the text, the CSV and the JSON
 * printers share.  Sorting is the exit rows' (top.h) and the tracepoint
 * counts' (VM, then count).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_top_impl.h"
#include "kvmscope/host.h"
#include "kvmscope/kvmstats_collect.h"
#include "kvmscope/kvmstats_halt.h"
#include "kvmscope/tpcount.h"
#include "util/procfs.h"
#include "util/text.h"

const char *const top_view_names[] = { "exits", "tracepoints", "kvmstats", "halt", NULL };
const char *const top_sort_columns[] = { "exits", "time", "p99", "name", NULL };

const struct ks_top_cols top_view_cols[NR_VIEWS] = {
	/* TOTAL (since the start or r) is kept the longest after EXITS: it is
	 * kvm_stat's first column and the one figure not of the interval
	 * (EXITS/s is EXITS over the interval's length in the title) */
	[VIEW_EXITS] = { "VM / vCPU / REASON", 44, 5,
			 { { "EXITS", 10, 0, 9 }, { "EXITS/s", 12, 3, 10 }, { "TIME%", 8, 2, 7 },
			   { "P99(us)", 12, 4, 10 }, { "TOTAL", 12, 1, 10 } } },
	[VIEW_TRACEPOINTS] = { "VM / EVENT", 44, 3,
			       { { "COUNT", 12, 0, 10 }, { "COUNT/s", 12, 1, 10 },
				 { "TOTAL", 14, 2, 12 } } },
	[VIEW_KVMSTATS] = { "VM / STATISTIC / vCPU", 44, 2,
			    { { "VALUE", 16, 0, 14 }, { "DELTA/s", 12, 1, 11 } } },
	[VIEW_HALT] = { "VM / vCPU", 44, 5,
			{ { "HALTS/s", 10, 0, 9 }, { "POLLED%", 8, 1, 7 }, { "POLLCPU%", 9, 2, 8 },
			  { "WASTED%", 8, 3, 7 }, { "HALTS", 12, 4, 10 } } },
};

/* ------------------------------------------------------------------ */
/* VM names: QEMU's -name (live), else what the input says */

static void qemu_name(int32_t pid, char *out, size_t len)
{
	char buf[64];

	if (ks_qemu_name(pid, out, len) || pid <= 0)
		return;
	if (ks_read_proc(pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(out, len, "%.63s", buf);
	}
}

void top_vm_name(const struct top_state *s, int32_t vm, const char *known, char *out,
		    size_t len)
{
	out[0] = 0;
	if (s->live)
		qemu_name(vm, out, len);
	if (!out[0] && known)
		snprintf(out, len, "%s", known);
}

void top_vm_label(const struct top_state *s, int32_t vm, const char *known, char *out,
		     size_t len)
{
	char name[64], safe[128];

	top_vm_name(s, vm, known, name, sizeof(name));
	/* the one display name (host.h), safe for a terminal */
	ks_vm_label(out, len, vm, ks_term_escape(safe, sizeof(safe), name));
}

/* The g and p filters. */
bool top_vm_wanted(const struct top_state *s, int32_t vm, const char *known)
{
	char name[64];

	if (s->pid_filter > 0 && vm != s->pid_filter)
		return false;
	if (!s->guest[0])
		return true;
	top_vm_name(s, vm, known, name, sizeof(name));
	return !strcmp(name, s->guest);
}

bool top_name_wanted(const struct top_state *s, const char *name)
{
	return !s->have_re || regexec(&s->re, name, 0, NULL, 0) == 0;
}

/* The f filter (and -f): names matching RE (extended, any case) only;
 * none when RE is empty; a bad RE is said in the status line. */
void top_set_filter(struct top_state *s, const char *re)
{
	regex_t n;
	int rc;

	if (!re || !*re) {
		if (s->have_re)
			regfree(&s->re);
		s->have_re = false;
		return;
	}
	rc = regcomp(&n, re, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char msg[100];
		regerror(rc, &n, msg, sizeof(msg));
		snprintf(s->status, sizeof(s->status), "bad regex '%.40s': %s", re, msg);
		return;
	}
	if (s->have_re)
		regfree(&s->re);
	s->re = n;
	s->have_re = true;
}

/* ------------------------------------------------------------------ */
/* building the rows of a view */

static struct ks_top_line *add_row(struct top_state *s, int depth, int32_t vm, const char *label)
{
	struct ks_top_line *r;

	if (s->nrows == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		struct ks_top_line *n = realloc(s->rows, ncap * sizeof(*n));

		if (!n)
			die("out of memory");
		s->rows = n;
		s->cap = ncap;
	}
	r = &s->rows[s->nrows++];
	memset(r, 0, sizeof(*r));
	r->depth = depth;
	r->vm = vm;
	/* names from peers and files (QMP, libvirt, /proc, the input):
	 * no terminal control sequence passes */
	ks_term_escape(r->label, sizeof(r->label), label);
	return r;
}

static void exit_cells(struct ks_top_line *d, const struct ks_top_row *r)
{
	snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)r->count);
	snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", r->rate);
	snprintf(d->cell[2], sizeof(d->cell[2]), "%.2f", r->time_pct);
	snprintf(d->cell[3], sizeof(d->cell[3]), "%.2f", (double)r->p99_ns / 1000.0);
	snprintf(d->cell[4], sizeof(d->cell[4]), "%llu", (unsigned long long)r->total);
}

struct ks_top_row *top_sorted_copy(const struct top_state *s, enum ks_top_level lv, size_t *n)
{
	const struct ks_top_row *rows;
	struct ks_top_row *c;

	*n = ks_top_rows(s->top, lv, &rows);
	c = calloc(*n + 1, sizeof(*c));
	if (!c)
		die("out of memory");
	if (*n)
		memcpy(c, rows, *n * sizeof(*c));
	ks_top_sort(c, *n, top_sort_columns[s->a->sort]);
	return c;
}

/* Reason rows of VM (and VCPU >= 0) at DEPTH. */
static void exit_reasons(struct top_state *s, const struct ks_top_row *rs, size_t n, int32_t vm,
			 int32_t vcpu, int depth)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (rs[j].vm != vm || rs[j].vcpu != vcpu || !top_name_wanted(s, rs[j].name))
			continue;
		if (s->a->skip_zero && !rs[j].count)
			continue;
		exit_cells(add_row(s, depth, vm, rs[j].name), &rs[j]);
	}
}

static void build_exits(struct top_state *s)
{
	size_t nvm, nvc, nrs, nvr, i, j;
	struct ks_top_row *vms, *vcs, *rss, *vrs;
	char label[96];

	if (!s->top)
		return;
	vms = top_sorted_copy(s, KS_TOP_VM, &nvm);
	vcs = top_sorted_copy(s, KS_TOP_VCPU, &nvc);
	rss = top_sorted_copy(s, KS_TOP_REASON, &nrs);
	vrs = top_sorted_copy(s, KS_TOP_VCPU_REASON, &nvr);

	for (i = 0; i < nvm; i++) {
		if (!top_vm_wanted(s, vms[i].vm, vms[i].name) || (s->a->skip_zero && !vms[i].count))
			continue;
		top_vm_label(s, vms[i].vm, vms[i].name, label, sizeof(label));
		exit_cells(add_row(s, 0, vms[i].vm, label), &vms[i]);
		if (!s->a->vcpus) {
			if (s->children)
				exit_reasons(s, rss, nrs, vms[i].vm, -1, 1);
			continue;
		}
		for (j = 0; j < nvc; j++) {
			if (vcs[j].vm != vms[i].vm || (s->a->skip_zero && !vcs[j].count))
				continue;
			snprintf(label, sizeof(label), "vcpu %d", vcs[j].vcpu);
			exit_cells(add_row(s, 1, vms[i].vm, label), &vcs[j]);
			if (s->children)
				exit_reasons(s, vrs, nvr, vms[i].vm, vcs[j].vcpu, 2);
		}
	}
	free(vms);
	free(vcs);
	free(rss);
	free(vrs);
}

struct tp_sorted {
	const struct ks_tpcount_row *r;
	uint32_t index;
};

static int tp_cmp(const void *a, const void *b)
{
	const struct tp_sorted *x = a, *y = b;

	if (x->r->vm != y->r->vm)
		return x->r->vm < y->r->vm ? -1 : 1;
	if (x->r->count != y->r->count)
		return x->r->count > y->r->count ? -1 : 1;
	if (x->r->total != y->r->total)
		return x->r->total > y->r->total ? -1 : 1;
	return strcmp(x->r->name, y->r->name);
}

static void tp_cells(struct ks_top_line *d, uint64_t count, uint64_t total, double secs)
{
	snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)count);
	snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", secs > 0 ? (double)count / secs : 0.0);
	snprintf(d->cell[2], sizeof(d->cell[2]), "%llu", (unsigned long long)total);
}

static void build_tracepoints(struct top_state *s)
{
	const struct ks_tpcount_row *rows;
	size_t n, i, j, k;
	double secs;
	struct tp_sorted *v;
	const char *known;
	char label[96];

	if (!s->tp)
		return;
	n = ks_tpcount_rows(s->tp, &rows);
	secs = (double)ks_top_interval_ns(s->top) / 1e9;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		die("out of memory");
	for (i = 0; i < n; i++)
		v[i] = (struct tp_sorted){ &rows[i], (uint32_t)i };
	qsort(v, n, sizeof(*v), tp_cmp);
	for (i = 0; i < n; i = j) {
		uint64_t count = 0, total = 0;
		struct ks_top_line *vmrow;

		for (j = i; j < n && v[j].r->vm == v[i].r->vm; j++)
			if (!v[j].r->child && top_name_wanted(s, v[j].r->name)) {
				count += v[j].r->count;
				total += v[j].r->total;
			}
		known = ks_host_vm_name(s->host, v[i].r->vm);
		if (!top_vm_wanted(s, v[i].r->vm, known) || (s->a->skip_zero && !count))
			continue;
		top_vm_label(s, v[i].r->vm, known, label, sizeof(label));
		vmrow = add_row(s, 0, v[i].r->vm, label);
		tp_cells(vmrow, count, total, secs);
		for (k = i; k < j; k++) {
			size_t c;

			if (v[k].r->child || !top_name_wanted(s, v[k].r->name) ||
			    (s->a->skip_zero && !v[k].r->count))
				continue;
			tp_cells(add_row(s, 1, v[k].r->vm, v[k].r->name), v[k].r->count, v[k].r->total, secs);
			for (c = i; s->children && c < j; c++)
				if (v[c].r->child && v[c].r->parent == v[k].index &&
				    !(s->a->skip_zero && !v[c].r->count))
					tp_cells(add_row(s, 2, v[c].r->vm, v[c].r->name), v[c].r->count,
						 v[c].r->total, secs);
		}
	}
	free(v);
}

/* The VM row of a statistics view, its error row below when it failed;
 * NULL when the filters hide it or it failed. */
static struct ks_top_line *stats_vm_row(struct top_state *s, const struct ks_kvmcol_vm *vm)
{
	char label[96];
	struct ks_top_line *d;

	if (vm->duplicate || !top_vm_wanted(s, vm->pid, vm->name[0] ? vm->name : NULL))
		return NULL;
	if (vm->pid > 0 || !vm->name[0])
		top_vm_label(s, vm->pid, vm->name[0] ? vm->name : NULL, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "%.95s", vm->name); /* QEMU not found */
	d = add_row(s, 0, vm->pid, label);
	if (vm->failed) {
		if (s->a->view == VIEW_KVMSTATS)
			snprintf(d->cell[0], sizeof(d->cell[0]), "(error)");
		add_row(s, 1, vm->pid, vm->error);
		return NULL;
	}
	return d;
}

/* The VMs of the statistics views (none before the first reading). */
struct ks_kvmcol_vm *top_stats_vms(const struct top_state *s, size_t *n)
{
	*n = 0;
	return s->col ? ks_kvmcol_vms(s->col, n) : NULL;
}

static bool stat_wanted(void *ctx, const char *name)
{
	return top_name_wanted(ctx, name);
}

/* How many VMs the statistics views show (a VM read twice counts once). */
size_t top_stats_vms_shown(const struct top_state *s)
{
	size_t n, i, shown = 0;
	const struct ks_kvmcol_vm *vms = top_stats_vms(s, &n);

	for (i = 0; i < n; i++)
		shown += !vms[i].duplicate;
	return shown;
}

/* kvmstats: value since the base (r), and the change per second. */
static void build_kvmstats(struct top_state *s)
{
	size_t i, j, n, nvms;
	struct ks_kvmcol_vm *vms = top_stats_vms(s, &nvms);

	for (i = 0; i < nvms; i++) {
		struct ks_kstat_row *rows;
		struct ks_top_line *d = stats_vm_row(s, &vms[i]);

		if (!d)
			continue;
		snprintf(d->cell[0], sizeof(d->cell[0]), "%s", vms[i].now.source);
		if (ks_kvmcol_rows(&vms[i], stat_wanted, s, s->a->skip_zero, s->a->vcpus, &rows, &n) < 0)
			die("out of memory");
		for (j = 0; j < n; j++) {
			const struct ks_kstat_row *r = &rows[j];
			char label[32];

			if (r->depth == 2)
				snprintf(label, sizeof(label), "vcpu %d", r->vcpu);
			d = add_row(s, r->depth, vms[i].pid, r->depth == 2 ? label : r->name);
			if (r->is_bool)
				snprintf(d->cell[0], sizeof(d->cell[0]), "%s", r->value ? "true" : "false");
			else
				snprintf(d->cell[0], sizeof(d->cell[0]), "%llu", (unsigned long long)r->value);
			if (r->have_rate)
				snprintf(d->cell[1], sizeof(d->cell[1]), "%.1f", r->rate);
		}
		free(rows);
	}
}

/* halt: the interval's rates and the halts since the base (r). */
static void halt_cells(struct ks_top_line *d, const struct ks_khalt *now, const struct ks_khalt *prev,
		       const struct ks_khalt *base, double secs)
{
	struct ks_khalt_rates r, t;

	ks_khalt_interval(now, base, 0, &t);
	snprintf(d->cell[4], sizeof(d->cell[4]), "%llu", (unsigned long long)t.halts);
	if (!prev)
		return; /* the first reading: no interval yet */
	ks_khalt_interval(now, prev, secs, &r);
	snprintf(d->cell[0], sizeof(d->cell[0]), "%.1f", r.halts_per_s);
	snprintf(d->cell[1], sizeof(d->cell[1]), r.polled_pct < 0 ? "-" : "%.1f", r.polled_pct);
	snprintf(d->cell[2], sizeof(d->cell[2]), r.have_cpu ? "%.2f" : "-", r.poll_cpu_pct);
	snprintf(d->cell[3], sizeof(d->cell[3]), r.have_cpu ? "%.2f" : "-", r.wasted_cpu_pct);
}

static void build_halt(struct top_state *s)
{
	size_t i, j, nvms;
	struct ks_kvmcol_vm *vms = top_stats_vms(s, &nvms);

	for (i = 0; i < nvms; i++) {
		struct ks_kvmcol_vm *vm = &vms[i];
		struct ks_khalt *now = NULL, *prev = NULL, *base = NULL;
		size_t nn = 0, np = 0, nb = 0;
		double secs = vm->t_now - vm->t_prev;
		struct ks_top_line *d = stats_vm_row(s, vm);

		if (!d)
			continue;
		if (ks_khalt_of(&vm->now, &now, &nn) < 0 ||
		    (vm->have_prev && ks_khalt_of(&vm->prev, &prev, &np) < 0) ||
		    (vm->have_base && ks_khalt_of(&vm->base, &base, &nb) < 0))
			die("out of memory");
		if (!nn) {
			add_row(s, 1, vm->pid, "(no halt statistics)");
		} else {
			halt_cells(d, &now[0], ks_khalt_find(prev, np, -1), ks_khalt_find(base, nb, -1), secs);
			for (j = 1; s->a->vcpus && j < nn; j++) {
				char label[32];

				snprintf(label, sizeof(label), "vcpu %d", now[j].vcpu);
				halt_cells(add_row(s, 1, vm->pid, label), &now[j],
					   ks_khalt_find(prev, np, now[j].vcpu),
					   ks_khalt_find(base, nb, now[j].vcpu), secs);
			}
		}
		free(now);
		free(prev);
		free(base);
	}
}

void top_build_rows(struct top_state *s)
{
	s->nrows = 0;
	switch (s->a->view) {
	case VIEW_EXITS: build_exits(s); break;
	case VIEW_TRACEPOINTS: build_tracepoints(s); break;
	case VIEW_KVMSTATS: build_kvmstats(s); break;
	case VIEW_HALT: build_halt(s); break;
	}
}

const char *top_empty_text(const struct top_state *s)
{
	switch (s->a->view) {
	case VIEW_EXITS:
		return s->tracing ? "(no KVM exits in this interval)" :
				    "(no trace events: started with a KVM statistics view)";
	case VIEW_TRACEPOINTS:
		return s->tracing ? "(no events in this interval)" :
				    "(no trace events: started with a KVM statistics view)";
	default:
		return "(no VM with KVM statistics: give --qmp SOCKET or --libvirt, or mount debugfs)";
	}
}
