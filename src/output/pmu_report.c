/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_report.c - `kvmscope pmu`'s text and JSON: the host's counters and
 * who holds them (pmu_host.h), and the vPMU / LBR MSR traffic of guests in
 * a trace (pmu_trace.h).  The analyses are in src/analysis/pmu_host.c and
 * pmu_trace.c; the command line (src/cli/cmd_pmu.c) only picks the view.
 */
#include <stddef.h>
#include <stdio.h>

#include "arch/arch.h"
#include "arch/x86_msr.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/pmu_report.h"

/* ---- check: text ---- */
static const char *tri(int v, const char *yes, const char *no)
{
	return v < 0 ? "unknown" : v ? yes : no;
}

static void print_caps(FILE *out, const struct ks_pmu_host *h)
{
	const struct ks_pmu_caps *c = &h->caps;

	fprintf(out, "Host PMU\n");
	fprintf(out, "  vendor:            %s%s\n", c->vendor[0] ? c->vendor : "unknown",
	       c->hypervisor ? " (this host is itself a virtual machine)" : "");
	if (c->sysfs_cpu_pmu)
		fprintf(out, "  perf core PMU:     %s%s%s%s\n", c->sysfs_pmus, c->pmu_name[0] ? " (" : "",
		       c->pmu_name, c->pmu_name[0] ? ")" : "");
	else
		fprintf(out, "  perf core PMU:     none: no hardware PMU is exposed (no cpu under "
		       "bus/event_source/devices); perf has software events only\n");
	fprintf(out, "  counters (CPUID):  %d general-purpose (%d bits), %d fixed (%d bits), "
	       "version %d\n", c->gp, c->gp_width, c->fixed, c->fixed_width, c->version);
	if (c->lbr_depth)
		fprintf(out, "  LBR depth:         %d (%s)\n", c->lbr_depth, c->lbr_source);
	else
		fprintf(out, "  LBR depth:         unknown / none\n");
	fprintf(out, "KVM\n");
	fprintf(out, "  module:            %s%s\n", h->kvm.module ? "loaded" : "not loaded",
	       h->kvm.dev_kvm ? "" : " (no /dev/kvm: no KVM)");
	fprintf(out, "  enable_pmu:        %s\n", tri(h->kvm.enable_pmu, "Y", "N"));
	fprintf(out, "  vendor modules:    %s\n", h->kvm.vendor_modules[0] ? h->kvm.vendor_modules : "none");
	if (h->kvm.vendor_params[0])
		fprintf(out, "  pmu/lbr params:    %s\n", h->kvm.vendor_params);
}

static void print_holders(FILE *out, const struct ks_pmu_host *h)
{
	size_t i;
	char cpus[128];

	fprintf(out, "Host counter holders (%d online CPUs; NMI watchdog %s)\n", h->ncpus,
	       tri(h->nmi_watchdog, "on", "off"));
	if (!h->nholders)
		fprintf(out, "  none\n");
	for (i = 0; i < h->nholders; i++) {
		const struct ks_pmu_holder *o = &h->holders[i];
		const char *mode = o->system_wide ? "system-wide" :
				   o->system_wide_guess ? "system-wide? (one fd per CPU)" : "per-task";

		ks_cpuset_format(&o->cpus, cpus, sizeof(cpus));
		fprintf(out, "  %-7d %-16s %-12s fds %-4d hw events/CPU %d, pinned %d%s%s%s%s\n", o->pid,
		       o->comm, mode, o->nfds, o->hw_events, o->pinned_events,
		       o->lbr ? ", LBR" : "", o->system_wide ? ", CPUs " : "",
		       o->system_wide ? cpus : "", o->is_perf ? "" : " (not perf: mode guessed)");
		if (o->pid)
			fprintf(out, "          %s\n", o->cmdline);
	}
	if (h->unreadable)
		fprintf(out, "  (%d processes could not be inspected: permission)\n", h->unreadable);
}

static void print_vms(FILE *out, const struct ks_pmu_host *h)
{
	size_t i;
	char cpus[128];

	fprintf(out, "VMs\n");
	if (!h->nvms)
		fprintf(out, "  none\n");
	for (i = 0; i < h->nvms; i++) {
		const struct ks_pmu_vm *v = &h->vms[i];

		ks_cpuset_format(&v->cpus, cpus, sizeof(cpus));
		fprintf(out, "  %-7d %s: -cpu %s, vPMU %s (%s)%s%s, %d vCPUs on CPUs %s\n", v->pid, v->name,
		       v->cpu_model[0] ? v->cpu_model : "(default)", tri(v->pmu, "on", "off"),
		       v->pmu_why, v->lbr_fmt[0] ? ", lbr-fmt=" : "", v->lbr_fmt, v->nvcpus, cpus);
		fprintf(out, "          verdict: %s\n", v->verdict);
	}
}

/* ---- rows as tables ----
 * A row of the views (a counter holder, a VM, a vCPU, an MSR) is a table
 * of columns, each read from the row's struct at an offset or computed by
 * a getter: the JSON writer prints each column that has a key, the text
 * writer each that has a header, in the table's order.  A column that one
 * writer spells otherwise (a sum, a mean) is its own column. */
enum col_kind {
	C_INT,          /* int */
	C_I32,          /* int32_t */
	C_U64,          /* uint64_t */
	C_MSR,          /* uint32_t: JSON a number, text %#x */
	C_BOOL,         /* bool */
	C_CHARS,        /* char[] */
	C_STRP,         /* const char *, NULL as "" */
	C_CPUSET,       /* struct ks_cpuset, as its list "0-3,8" */
	C_GET,          /* GET computes it */
};

/* A computed value: a count, a double (text: PREC decimals), a string or
 * JSON's null. */
struct cell {
	enum { V_U64, V_DOUBLE, V_STRING, V_NULL } t;
	uint64_t u;
	double d;
	const char *s;
	char buf[48];
};

struct col {
	const char *key;  /* JSON key; NULL: text only */
	const char *head; /* text header; NULL: JSON only */
	int width;        /* text width; negative: left-aligned */
	int prec;         /* a double's decimals in text */
	enum col_kind kind;
	size_t off;
	void (*get)(const void *row, const void *ctx, struct cell *c);
};

#define COL(k, h, w, kind, type, field) { k, h, w, 0, kind, offsetof(type, field), NULL }
#define JCOL(k, kind, type, field) COL(k, NULL, 0, kind, type, field)
#define GETCOL(k, h, w, prec, fn) { k, h, w, prec, C_GET, 0, fn }
#define NCOLS(t) (sizeof(t) / sizeof((t)[0]))

static const void *at(const void *row, size_t off)
{
	return (const char *)row + off;
}

static void json_fields(struct ks_json *j, const struct col *cols, size_t n, const void *row,
			const void *ctx)
{
	char buf[256];
	struct cell c;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct col *k = &cols[i];
		const void *v = at(row, k->off);

		if (!k->key)
			continue;
		switch (k->kind) {
		case C_INT: ks_json_kv_i64(j, k->key, *(const int *)v); break;
		case C_I32: ks_json_kv_i64(j, k->key, *(const int32_t *)v); break;
		case C_U64: ks_json_kv_u64(j, k->key, *(const uint64_t *)v); break;
		case C_MSR: ks_json_kv_u64(j, k->key, *(const uint32_t *)v); break;
		case C_BOOL:
			ks_json_key(j, k->key);
			ks_json_bool(j, *(const bool *)v);
			break;
		case C_CHARS: ks_json_kv_string(j, k->key, v); break;
		case C_STRP:
			ks_json_kv_string(j, k->key, *(const char *const *)v ? *(const char *const *)v : "");
			break;
		case C_CPUSET:
			ks_cpuset_format(v, buf, sizeof(buf));
			ks_json_kv_string(j, k->key, buf);
			break;
		case C_GET:
			k->get(row, ctx, &c);
			if (c.t == V_U64) {
				ks_json_kv_u64(j, k->key, c.u);
			} else if (c.t == V_DOUBLE) {
				ks_json_kv_double(j, k->key, c.d);
			} else {
				ks_json_key(j, k->key);
				if (c.t == V_STRING)
					ks_json_string(j, c.s);
				else
					ks_json_null(j);
			}
			break;
		}
	}
}

/* KEY: [ one object of the columns per row ] */
static void json_rows(struct ks_json *j, const char *key, const struct col *cols, size_t ncols,
		      const void *rows, size_t nrows, size_t size, const void *ctx)
{
	size_t i;

	ks_json_key(j, key);
	ks_json_begin_array(j);
	for (i = 0; i < nrows; i++) {
		ks_json_begin_object(j);
		json_fields(j, cols, ncols, at(rows, i * size), ctx);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

/* One line of the text columns: their headers (ROW NULL), or ROW's values. */
static void text_line(FILE *out, const struct col *cols, size_t n, const void *row, const void *ctx)
{
	const char *sep = "";
	struct cell c;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct col *k = &cols[i];
		const void *v = row ? at(row, k->off) : NULL;

		if (!k->head)
			continue;
		fputs(sep, out);
		sep = " ";
		if (!row) {
			fprintf(out, "%*s", k->width, k->head);
			continue;
		}
		switch (k->kind) {
		case C_INT: fprintf(out, "%*d", k->width, *(const int *)v); break;
		case C_I32: fprintf(out, "%*d", k->width, *(const int32_t *)v); break;
		case C_U64:
			fprintf(out, "%*llu", k->width, (unsigned long long)*(const uint64_t *)v);
			break;
		case C_MSR: fprintf(out, "%#*x", k->width, *(const uint32_t *)v); break;
		case C_GET:
			k->get(row, ctx, &c);
			if (c.t == V_U64)
				fprintf(out, "%*llu", k->width, (unsigned long long)c.u);
			else if (c.t == V_DOUBLE)
				fprintf(out, "%*.*f", k->width, k->prec, c.d);
			else
				fprintf(out, "%*s", k->width, c.t == V_STRING ? c.s : "");
			break;
		default: /* the text views show no other kind in a column */
			break;
		}
	}
	fputc('\n', out);
}

/* TITLE, the header line and a line per row */
static void text_table(FILE *out, const char *title, const struct col *cols, size_t ncols,
		       const void *rows, size_t nrows, size_t size, const void *ctx)
{
	size_t i;

	fputs(title, out);
	text_line(out, cols, ncols, NULL, ctx);
	for (i = 0; i < nrows; i++)
		text_line(out, cols, ncols, at(rows, i * size), ctx);
}

/* ---- check: JSON ---- */
static const struct col caps_cols[] = {
	JCOL("vendor", C_CHARS, struct ks_pmu_caps, vendor),
	JCOL("hypervisor", C_BOOL, struct ks_pmu_caps, hypervisor),
	JCOL("hardware_pmu", C_BOOL, struct ks_pmu_caps, sysfs_cpu_pmu),
	JCOL("sysfs_pmus", C_CHARS, struct ks_pmu_caps, sysfs_pmus),
	JCOL("pmu_name", C_CHARS, struct ks_pmu_caps, pmu_name),
	JCOL("version", C_INT, struct ks_pmu_caps, version),
	JCOL("gp_counters", C_INT, struct ks_pmu_caps, gp),
	JCOL("gp_width", C_INT, struct ks_pmu_caps, gp_width),
	JCOL("fixed_counters", C_INT, struct ks_pmu_caps, fixed),
	JCOL("fixed_width", C_INT, struct ks_pmu_caps, fixed_width),
	JCOL("lbr_depth", C_INT, struct ks_pmu_caps, lbr_depth),
	JCOL("lbr_source", C_STRP, struct ks_pmu_caps, lbr_source),
};

static const struct col kvm_cols[] = {
	JCOL("module", C_BOOL, struct ks_pmu_kvm, module),
	JCOL("dev_kvm", C_BOOL, struct ks_pmu_kvm, dev_kvm),
	JCOL("enable_pmu", C_INT, struct ks_pmu_kvm, enable_pmu),
	JCOL("vendor_modules", C_CHARS, struct ks_pmu_kvm, vendor_modules),
	JCOL("vendor_params", C_CHARS, struct ks_pmu_kvm, vendor_params),
};

static const struct col holder_cols[] = {
	JCOL("pid", C_I32, struct ks_pmu_holder, pid),
	JCOL("comm", C_CHARS, struct ks_pmu_holder, comm),
	JCOL("cmdline", C_CHARS, struct ks_pmu_holder, cmdline),
	JCOL("perf_fds", C_INT, struct ks_pmu_holder, nfds),
	JCOL("is_perf", C_BOOL, struct ks_pmu_holder, is_perf),
	JCOL("system_wide", C_BOOL, struct ks_pmu_holder, system_wide),
	JCOL("system_wide_guess", C_BOOL, struct ks_pmu_holder, system_wide_guess),
	JCOL("cpus", C_CPUSET, struct ks_pmu_holder, cpus),
	JCOL("hw_events", C_INT, struct ks_pmu_holder, hw_events),
	JCOL("pinned_events", C_INT, struct ks_pmu_holder, pinned_events),
	JCOL("lbr", C_BOOL, struct ks_pmu_holder, lbr),
};

static const struct col vm_cols[] = {
	JCOL("pid", C_I32, struct ks_pmu_vm, pid),
	JCOL("name", C_CHARS, struct ks_pmu_vm, name),
	JCOL("cpu_model", C_CHARS, struct ks_pmu_vm, cpu_model),
	JCOL("pmu", C_INT, struct ks_pmu_vm, pmu),
	JCOL("pmu_why", C_STRP, struct ks_pmu_vm, pmu_why),
	JCOL("lbr_fmt", C_CHARS, struct ks_pmu_vm, lbr_fmt),
	JCOL("vcpus", C_INT, struct ks_pmu_vm, nvcpus),
	JCOL("cpus", C_CPUSET, struct ks_pmu_vm, cpus),
	JCOL("available_gp", C_INT, struct ks_pmu_vm, avail_gp),
	JCOL("available_fixed", C_INT, struct ks_pmu_vm, avail_fixed),
	JCOL("may_read_wrong_values", C_BOOL, struct ks_pmu_vm, may_read_wrong),
	JCOL("lbr_may_be_taken", C_BOOL, struct ks_pmu_vm, lbr_may_be_taken),
	JCOL("pinned_users", C_CHARS, struct ks_pmu_vm, takers),
	JCOL("verdict", C_CHARS, struct ks_pmu_vm, verdict),
};

/* KEY: { the columns of ROW } */
static void json_object(struct ks_json *j, const char *key, const struct col *cols, size_t n,
			const void *row)
{
	ks_json_key(j, key);
	ks_json_begin_object(j);
	json_fields(j, cols, n, row, NULL);
	ks_json_end_object(j);
}

/* ---- report ---- */
static const char *msr_label(uint32_t msr, char *buf, size_t len)
{
	const char *n = ks_x86_msr_name(msr, buf, len);

	if (n != buf)
		snprintf(buf, len, "%s", n ? n : "?");
	return buf;
}

static double span_s(const struct ks_pmu_trace_summary *s)
{
	return s->last_ts > s->first_ts ? (double)(s->last_ts - s->first_ts) / 1e9 : 0;
}

static void print_sources(FILE *out, const struct ks_pmu_trace_summary *s)
{
	int i;

	fprintf(out, "Sources: kvm:kvm_msr %llu, kvm:kvm_exit %llu (%llu MSR exits, %llu RDPMC exits, %s "
	       "reasons), kvm:kvm_entry %llu\n", (unsigned long long)s->kvm_msr,
	       (unsigned long long)s->kvm_exit, (unsigned long long)s->msr_exits,
	       (unsigned long long)s->rdpmc_exits, ks_x86_isa_name(s->isa),
	       (unsigned long long)s->kvm_entry);
	for (i = 0; i < s->nother; i++)
		fprintf(out, "         %s %llu (seen, not interpreted)\n", s->other[i].name,
		       (unsigned long long)s->other[i].count);
	if (!s->kvm_msr)
		fprintf(out, "No kvm:kvm_msr events: MSR numbers are unknown; only exit counts are "
		       "shown.\n");
	fprintf(out, "Span: %.6f s; %llu events before a thread's first kvm_entry ignored\n",
	       span_s(s), (unsigned long long)s->before_first_entry);
}

/* the getters of the computed columns; CTX: the trace */
static double pmu_lbr_per_sec(const struct ks_pmu_vcpu *v, struct ks_pmu_trace *pt)
{
	double sp = span_s(ks_pmu_trace_summary(pt));

	return sp > 0 ? (double)(v->pmu_accesses + v->lbr_accesses) / sp : 0;
}

static void get_vm_name(const void *row, const void *ctx, struct cell *c)
{
	c->s = ks_pmu_trace_comm((struct ks_pmu_trace *)ctx, ((const struct ks_pmu_vcpu *)row)->vm);
	c->t = c->s ? V_STRING : V_NULL;
}

static void get_pmu_lbr(const void *row, const void *ctx, struct cell *c)
{
	const struct ks_pmu_vcpu *v = row;

	(void)ctx;
	c->t = V_U64;
	c->u = v->pmu_accesses + v->lbr_accesses;
}

static void get_per_sec(const void *row, const void *ctx, struct cell *c)
{
	c->t = V_DOUBLE;
	c->d = pmu_lbr_per_sec(row, (struct ks_pmu_trace *)ctx);
}

static void get_msr_name(const void *row, const void *ctx, struct cell *c)
{
	(void)ctx;
	c->t = V_STRING;
	c->s = msr_label(((const struct ks_pmu_msr_row *)row)->msr, c->buf, sizeof(c->buf));
}

static void get_counter_name(const void *row, const void *ctx, struct cell *c)
{
	(void)ctx;
	c->t = V_STRING;
	c->s = msr_label(((const struct ks_pmu_counter *)row)->msr, c->buf, sizeof(c->buf));
}

static void get_mean_ns(const void *row, const void *ctx, struct cell *c)
{
	const struct ks_pmu_msr_row *r = row;

	(void)ctx;
	c->t = V_DOUBLE;
	c->d = r->timed ? (double)r->msr_ns / (double)r->timed : 0.0;
}

/* Per vCPU: the text shows PMU + LBR accesses as one sum; JSON both. */
static const struct col vcpu_cols[] = {
	COL("vm", "VM", 8, C_I32, struct ks_pmu_vcpu, vm),
	GETCOL("vm_name", NULL, 0, 0, get_vm_name),
	COL("vcpu", "vCPU", 5, C_I32, struct ks_pmu_vcpu, vcpu),
	COL("msr_accesses", "msr", 10, C_U64, struct ks_pmu_vcpu, msr_accesses),
	JCOL("pmu_accesses", C_U64, struct ks_pmu_vcpu, pmu_accesses),
	JCOL("lbr_accesses", C_U64, struct ks_pmu_vcpu, lbr_accesses),
	GETCOL(NULL, "pmu+lbr", 10, 0, get_pmu_lbr),
	GETCOL("pmu_lbr_per_sec", "/s", 8, 1, get_per_sec),
	COL("pmu_handle_ns", "handle_ns", 12, C_U64, struct ks_pmu_vcpu, pmu_msr_ns),
	COL("pmu_exit_ns", "exit_ns", 12, C_U64, struct ks_pmu_vcpu, pmu_exit_ns),
	COL("msr_exits", "msr_exits", 10, C_U64, struct ks_pmu_vcpu, msr_exits),
	COL("rdpmc_exits", "rdpmc", 8, C_U64, struct ks_pmu_vcpu, rdpmc_exits),
	COL(NULL, "lbr_acc", 8, C_U64, struct ks_pmu_vcpu, lbr_accesses),
	COL("lbr_on", "lbr_on", 6, C_U64, struct ks_pmu_vcpu, lbr_on),
	COL("lbr_off", "off", 6, C_U64, struct ks_pmu_vcpu, lbr_off),
};

/* Per MSR: the text shows the mean handling time, JSON the times to
 * compute it from and the longest. */
static const struct col msr_cols[] = {
	COL("vm", "VM", 8, C_I32, struct ks_pmu_msr_row, vm),
	COL("vcpu", "vCPU", 5, C_I32, struct ks_pmu_msr_row, vcpu),
	COL("msr", "MSR", 10, C_MSR, struct ks_pmu_msr_row, msr),
	GETCOL("name", "name", -28, 0, get_msr_name),
	COL("reads", "reads", 9, C_U64, struct ks_pmu_msr_row, reads),
	COL("writes", "writes", 9, C_U64, struct ks_pmu_msr_row, writes),
	JCOL("timed", C_U64, struct ks_pmu_msr_row, timed),
	COL("handle_ns", "handle_ns", 12, C_U64, struct ks_pmu_msr_row, msr_ns),
	GETCOL(NULL, "mean_ns", 10, 0, get_mean_ns),
	COL("exit_ns", "exit_ns", 12, C_U64, struct ks_pmu_msr_row, exit_ns),
	JCOL("max_ns", C_U64, struct ks_pmu_msr_row, max_ns),
};

static void print_counters(FILE *out, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_counter *c;
	size_t n = ks_pmu_trace_counters(pt, &c), i;
	char name[48], sel[160];
	int k;

	if (!n)
		return;
	fprintf(out, "\nCounters the guests program (event-select writes with EN set)\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "%8d %5d %-20s enables %llu, disables %llu\n", c[i].vm, c[i].vcpu,
		       msr_label(c[i].msr, name, sizeof(name)), (unsigned long long)c[i].enables,
		       (unsigned long long)c[i].disables);
		for (k = 0; k < c[i].nprogs; k++) {
			struct ks_evtsel e;

			ks_evtsel_decode(c[i].progs[k].config | (1ULL << 22),
					 ks_evtsel_msr_is_amd(c[i].msr), &e);
			ks_evtsel_format(&e, sel, sizeof(sel));
			fprintf(out, "%16s %-52s x%llu\n", "", sel, (unsigned long long)c[i].progs[k].writes);
		}
		if (c[i].other_progs)
			fprintf(out, "%16s (other configurations) x%llu\n", "",
			       (unsigned long long)c[i].other_progs);
	}
}

static void get_isa(const void *row, const void *ctx, struct cell *c)
{
	(void)ctx;
	c->t = V_STRING;
	c->s = ks_x86_isa_name(((const struct ks_pmu_trace_summary *)row)->isa);
}

static const struct col source_cols[] = {
	JCOL("kvm_msr", C_U64, struct ks_pmu_trace_summary, kvm_msr),
	JCOL("kvm_exit", C_U64, struct ks_pmu_trace_summary, kvm_exit),
	JCOL("kvm_entry", C_U64, struct ks_pmu_trace_summary, kvm_entry),
	JCOL("msr_exits", C_U64, struct ks_pmu_trace_summary, msr_exits),
	JCOL("rdpmc_exits", C_U64, struct ks_pmu_trace_summary, rdpmc_exits),
	GETCOL("isa", NULL, 0, 0, get_isa),
};

static void json_sources(struct ks_json *j, const struct ks_pmu_trace_summary *s)
{
	int k;

	ks_json_key(j, "sources");
	ks_json_begin_object(j);
	json_fields(j, source_cols, NCOLS(source_cols), s, NULL);
	for (k = 0; k < s->nother; k++)
		ks_json_kv_u64(j, s->other[k].name, s->other[k].count);
	ks_json_end_object(j);
	ks_json_kv_u64(j, "span_ns", s->last_ts > s->first_ts ? s->last_ts - s->first_ts : 0);
	ks_json_kv_u64(j, "before_first_entry", s->before_first_entry);
}

static void json_programs(struct ks_json *j, const struct ks_pmu_counter *c)
{
	char sel[160];
	int k;

	ks_json_key(j, "programs");
	ks_json_begin_array(j);
	for (k = 0; k < c->nprogs; k++) {
		struct ks_evtsel e;

		ks_evtsel_decode(c->progs[k].config | (1ULL << 22), ks_evtsel_msr_is_amd(c->msr),
				 &e);
		ks_evtsel_format(&e, sel, sizeof(sel));
		ks_json_begin_object(j);
		ks_json_kv_u64(j, "event", e.event);
		ks_json_kv_u64(j, "umask", e.umask);
		ks_json_key(j, "usr");
		ks_json_bool(j, e.usr);
		ks_json_key(j, "os");
		ks_json_bool(j, e.os);
		ks_json_kv_string(j, "decoded", sel);
		ks_json_kv_u64(j, "writes", c->progs[k].writes);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

static const struct col counter_cols[] = {
	JCOL("vm", C_I32, struct ks_pmu_counter, vm),
	JCOL("vcpu", C_I32, struct ks_pmu_counter, vcpu),
	GETCOL("msr", NULL, 0, 0, get_counter_name),
	JCOL("enables", C_U64, struct ks_pmu_counter, enables),
	JCOL("disables", C_U64, struct ks_pmu_counter, disables),
};

static void json_counters(struct ks_json *j, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_counter *c;
	size_t nc = ks_pmu_trace_counters(pt, &c), i;

	ks_json_key(j, "counters");
	ks_json_begin_array(j);
	for (i = 0; i < nc; i++) {
		ks_json_begin_object(j);
		json_fields(j, counter_cols, NCOLS(counter_cols), &c[i], pt);
		json_programs(j, &c[i]);
		ks_json_end_object(j);
	}
	ks_json_end_array(j);
}

/* ---- the public entry points ---- */
void ks_pmu_host_print(FILE *out, const struct ks_pmu_host *h)
{
	print_caps(out, h);
	print_holders(out, h);
	print_vms(out, h);
}

void ks_pmu_host_json(FILE *out, const struct ks_pmu_host *h)
{
	struct ks_json j;

	ks_json_init(&j, out, true);
	ks_json_begin_object(&j);
	json_object(&j, "pmu", caps_cols, NCOLS(caps_cols), &h->caps);
	json_object(&j, "kvm", kvm_cols, NCOLS(kvm_cols), &h->kvm);
	ks_json_kv_i64(&j, "online_cpus", h->ncpus);
	ks_json_kv_i64(&j, "nmi_watchdog", h->nmi_watchdog);
	ks_json_kv_i64(&j, "host_pinned_gp", h->pinned_gp);
	ks_json_kv_i64(&j, "host_pinned_fixed", h->pinned_fixed);
	ks_json_kv_i64(&j, "unreadable_processes", h->unreadable);
	json_rows(&j, "holders", holder_cols, NCOLS(holder_cols), h->holders, h->nholders,
		  sizeof(*h->holders), NULL);
	json_rows(&j, "vms", vm_cols, NCOLS(vm_cols), h->vms, h->nvms, sizeof(*h->vms), NULL);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

void ks_pmu_trace_print(FILE *out, struct ks_pmu_trace *pt, const char *input,
			const char *format)
{
	const struct ks_pmu_vcpu *v;
	const struct ks_pmu_msr_row *r;
	size_t nv = ks_pmu_trace_vcpus(pt, &v), nr = ks_pmu_trace_msrs(pt, &r);

	fprintf(out, "Input: %s (%s)\n", input, format);
	print_sources(out, ks_pmu_trace_summary(pt));
	text_table(out, "\nPer vCPU: PMU = PERFEVTSEL/PMC/FIXED/GLOBAL MSRs, LBR = DEBUGCTL/LBR MSRs\n",
		   vcpu_cols, NCOLS(vcpu_cols), v, nv, sizeof(*v), pt);
	text_table(out, "\nMSRs (handle_ns: kvm_msr -> kvm_entry, as perf kvm stat --event msr)\n",
		   msr_cols, NCOLS(msr_cols), r, nr, sizeof(*r), pt);
	print_counters(out, pt);
}

void ks_pmu_trace_json(FILE *out, struct ks_pmu_trace *pt)
{
	const struct ks_pmu_vcpu *v;
	const struct ks_pmu_msr_row *r;
	size_t nv = ks_pmu_trace_vcpus(pt, &v), nr = ks_pmu_trace_msrs(pt, &r);
	struct ks_json j;

	ks_json_init(&j, out, true);
	ks_json_begin_object(&j);
	json_sources(&j, ks_pmu_trace_summary(pt));
	json_rows(&j, "vcpus", vcpu_cols, NCOLS(vcpu_cols), v, nv, sizeof(*v), pt);
	json_rows(&j, "msrs", msr_cols, NCOLS(msr_cols), r, nr, sizeof(*r), pt);
	json_counters(&j, pt);
	ks_host_json_threads(ks_pmu_trace_host(pt), &j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}
