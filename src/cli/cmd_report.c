/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_report.c - kvmscope report: where guests run and which guest code
 * causes exits, seen from the host.
 *
 * Reads any input (perf.data with guest PMU samples, trace.dat or ftrace text
 * with exit tracepoints), runs the profile engine (profile.h), resolves guest
 * addresses per VM (symbols/symtab.h) and prints a perf-report-like table, the
 * exits-by-guest-code table, JSON or CSV, folded stacks or an SVG flame graph.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/host.h"
#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/limits.h"
#include "kvmscope/profile.h"
#include "kvmscope/source.h"
#include "output/csv.h"
#include "output/flamegraph.h"
#include "symbols/symtab.h"

static const struct opt_cmd report_cmd = {
	.name = "report",
	.synopsis = "[-i FILE [-i GUEST.dat]...] [options]",
	.intro = "Guest profile from the host: guest PMU samples of a perf.data ('perf kvm\n"
		 "record', cycles:G) and guest addresses of exit tracepoints (x86 kvm_exit rip,\n"
		 "powerpc HV_DECREMENTER exits, arm64 kvm_exit pc), resolved per VM.\n",
	.outro = "A second -i (and any further one) is a guest's trace.dat, as --guest-trace.\n"
		 "The sort key may also be given as -k/--key, the spelling of kvmscope stat.\n"
		 "Unresolved addresses show as [unknown]; guest user addresses without a\n"
		 "--guest-binary as [guest user].  See kvmscope-report(1).\n",
};

#define MAX_LIST 16

enum out_format { OUT_TABLE, OUT_JSON, OUT_CSV };
static const char *const format_names[] = { "table", "json", "csv", NULL };
static const char *const sort_names[] = { "sym", "dso", "reason", NULL };

struct report_args {
	bool quiet;
	const char *input;
	const char *inputs[MAX_LIST + 1];
	int ninputs;
	struct ks_limits limits;
	const char *kallsyms, *modules, *vmlinux, *mount;
	uint64_t kaslr_offset;
	const char *binaries[MAX_LIST];
	int nbinaries;
	const char *guest_traces[MAX_LIST];
	int nguest_traces;
	unsigned by;
	bool by_set;            /* --by given: no VM column added by default */
	const char *sort;
	int sort_idx;
	bool offsets, no_exits;
	int format;
	struct time_window time;
	const char *folded, *flamegraph;
	struct ks_profile_config cfg;
	char *sample_exits_buf;
};

/* Everything loaded, freed at the end. */
struct loaded {
	struct ks_symtab *tabs[256];
	int ntabs;
	struct ks_source *guest_srcs[MAX_LIST];
	int nguest_srcs;
};

static struct ks_symtab *new_tab(struct loaded *l)
{
	struct ks_symtab *t;

	if (l->ntabs == (int)(sizeof(l->tabs) / sizeof(l->tabs[0])))
		die("too many symbol tables");
	t = ks_symtab_new();
	if (!t)
		die("out of memory");
	l->tabs[l->ntabs++] = t;
	return t;
}

static const char *take_by(const char *arg, void *value)
{
	static const char *const names[] = { "vm", "pid", "vcpu", NULL };
	static const unsigned bits[] = { KS_PROF_VM, KS_PROF_VM, KS_PROF_VCPU };
	struct report_args *a = value;
	unsigned dims;

	if (parse_name_set(arg, names, bits, &dims) < 0)
		return "takes vm and vcpu separated by commas";
	a->by |= dims;
	a->by_set = true;
	return NULL;
}

static const char *take_sample_exits(const char *arg, void *value)
{
	struct report_args *a = value;
	char *tok, *save = NULL;

	free(a->sample_exits_buf);
	a->sample_exits_buf = strdup(arg);
	if (!a->sample_exits_buf)
		die("out of memory");
	a->cfg.nsample_exits = 0;
	for (tok = strtok_r(a->sample_exits_buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (a->cfg.nsample_exits == KS_PROF_MAX_SAMPLE_EXITS)
			return "takes at most 32 exit reasons";
		a->cfg.sample_exits[a->cfg.nsample_exits++] = tok;
	}
	return a->cfg.nsample_exits ? NULL : "needs at least one exit reason";
}

static void parse_args(struct report_args *a, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_LIST('i', "input", a->inputs, &a->ninputs, MAX_LIST + 1, "FILE",
			 "input (default perf.data.guest; - for standard input);\n"
			 "a second -i is a guest's trace.dat (as --guest-trace)"),
		OPT_STRING(0, "guest-kallsyms", &a->kallsyms, "F",
			   "guest /proc/kallsyms (all VMs without their own)"),
		OPT_ALIAS(0, "guestkallsyms", "guest-kallsyms"),
		OPT_STRING(0, "guest-modules", &a->modules, "F", "guest /proc/modules (module ranges)"),
		OPT_ALIAS(0, "guestmodules", "guest-modules"),
		OPT_STRING(0, "guest-vmlinux", &a->vmlinux, "F",
			   "guest vmlinux ELF, relocated by _stext of the kallsyms"),
		OPT_ALIAS(0, "guestvmlinux", "guest-vmlinux"),
		OPT_U64(0, "guest-kaslr-offset", &a->kaslr_offset, "N",
			"add N to the vmlinux addresses (no kallsyms)"),
		OPT_LIST(0, "guest-binary", a->binaries, &a->nbinaries, MAX_LIST, "P[:A]",
			 "guest user program P loaded at address A"),
		OPT_STRING(0, "guest-mount", &a->mount, "DIR",
			   "per VM: DIR/<pid or name>/{kallsyms,modules,vmlinux}"),
		OPT_ALIAS(0, "guestmount", "guest-mount"),
		OPT_LIST(0, "guest-trace", a->guest_traces, &a->nguest_traces, MAX_LIST, "F",
			 "a guest's trace.dat: its kallsyms for that guest (VM\n"
			 "found through the input's GUEST option); repeatable"),
		OPT_CALLBACK(0, "sample-exits", a, "LIST",
			     "only these exit reasons are samples (x86 names such\n"
			     "as HLT, powerpc trap names such as HV_DECREMENTER,\n"
			     "arm64 EC_0xNN, or numbers); default every exit\n"
			     "(powerpc: HV_DECREMENTER)", take_sample_exits),
		OPT_CALLBACK(0, "by", a, "DIMS", "split rows by vm and/or vcpu (e.g. vm,vcpu);\n"
			     "default: by vm when the input has several VMs",
			     take_by),
		OPT_CHOICE('s', "sort", &a->sort_idx, "KEY",
			   "sym (default), dso or reason", sort_names),
		OPT_ALIAS('k', "key", "sort"),
		OPT_FLAG(0, "offsets", &a->offsets, "rows per address (symbol+offset)"),
		OPT_LIMIT(&a->limits),
		OPT_FLAG(0, "no-exits", &a->no_exits, "do not print the exits-by-guest-code table"),
		OPT_TIME(&a->time),
		OPT_FLAG('q', "quiet", &a->quiet, "no progress line on stderr"),
		OPT_SET(0, "json", &a->format, OUT_JSON, "JSON output", "format"),
		OPT_SET(0, "csv", &a->format, OUT_CSV, "CSV output", "format"),
		{ .type = OPT_T_CHOICE, .long_name = "format", .value = &a->format, .argh = "FMT",
		  .choices = format_names, .excl = "format",
		  .help = "table (default), json or csv" },
		OPT_STRING(0, "folded", &a->folded, "FILE",
			   "folded stacks (FlameGraph format; - = stdout)"),
		OPT_STRING(0, "flamegraph", &a->flamegraph, "FILE",
			   "self-contained interactive SVG flame graph"),
		OPT_END(),
	};
	int first = parse_options(&report_cmd, opts, argc, argv), i;

	for (i = first; i < argc; i++) {
		if (a->ninputs == MAX_LIST + 1)
			usage_error("report", "at most %d inputs", MAX_LIST + 1);
		a->inputs[a->ninputs++] = argv[i];
	}
	a->input = a->ninputs ? a->inputs[0] : "perf.data.guest";
	for (i = 1; i < a->ninputs; i++) {
		if (!strcmp(a->inputs[i], "-"))
			usage_error("report", "only the first input can be standard input (-)");
		if (a->nguest_traces == MAX_LIST)
			usage_error("report", "at most %d guest traces", MAX_LIST);
		a->guest_traces[a->nguest_traces++] = a->inputs[i];
	}
	a->sort = sort_names[a->sort_idx];
	if (a->folded && a->flamegraph && !strcmp(a->folded, a->flamegraph))
		usage_error("report", "--folded and --flamegraph name the same file '%s'", a->folded);
	if (a->folded && !strcmp(a->folded, "-") && a->format != OUT_TABLE)
		usage_error("report", "--folded - and --%s both write to standard output",
			    format_names[a->format]);
	a->input = cli_input(a->input);
	a->cfg.stacks = a->folded || a->flamegraph;
}

/* ---- symbols ---- */

static void load_or_die(int r, const struct ks_error *err)
{
	if (r < 0)
		die("%s", err->msg);
}

/* vmlinux relocated by the _stext the kernel table already knows. */
static void load_vmlinux(struct ks_symtab *t, const char *path, uint64_t extra_offset)
{
	struct ks_error err;
	uint64_t runtime = 0, elf_stext = 0, bias = extra_offset;
	struct ks_symtab *probe = ks_symtab_new();

	if (!probe)
		die("out of memory");
	load_or_die(ks_elf_symbols_load(probe, path, 0, KS_DSO_KERNEL, &elf_stext, &err), &err);
	ks_symtab_free(probe);
	if (elf_stext && (ks_symtab_addr_of(t, "_stext", &runtime) ||
			  ks_symtab_addr_of(t, "_text", &runtime)))
		bias = runtime - elf_stext;
	load_or_die(ks_elf_symbols_load(t, path, bias, KS_DSO_KERNEL, NULL, &err), &err);
}

static void load_binary(struct ks_symtab *user, const char *spec)
{
	char path[4096], *colon;
	uint64_t load = 0, vaddr = 0, bias = 0;
	struct ks_error err;
	const char *base;

	snprintf(path, sizeof(path), "%s", spec);
	colon = strrchr(path, ':');
	if (colon) {
		*colon = '\0';
		long long v;

		if (parse_whole(colon + 1, 0, INT64_MAX, &v) < 0)
			usage_error("report", "--guest-binary takes PATH[:ADDRESS], not '%s'", spec);
		load = (uint64_t)v;
		load_or_die(ks_elf_min_vaddr(path, &vaddr, &err), &err);
		bias = load - vaddr;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	load_or_die(ks_elf_symbols_load(user, path, bias, base, NULL, &err), &err);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* DIR/<id or name>/{kallsyms,modules,vmlinux}; false if none exists. */
static bool load_mount_dir(struct ks_symtab *t, const char *dir)
{
	char path[4096];
	struct ks_error err;
	bool any = false;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	if (file_exists(path)) {
		load_or_die(ks_kallsyms_load(t, path, &err), &err);
		any = true;
	}
	snprintf(path, sizeof(path), "%s/modules", dir);
	if (file_exists(path)) {
		load_or_die(ks_modules_load(t, path, &err), &err);
		any = true;
	}
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	if (file_exists(path)) {
		load_vmlinux(t, path, 0);
		any = true;
	}
	return any;
}

static void setup_default_symbols(struct report_args *a, struct ks_profile *p, struct loaded *l)
{
	struct ks_symtab *k = NULL, *u = NULL;
	struct ks_error err;
	int i;

	if (a->kallsyms || a->modules || a->vmlinux) {
		k = new_tab(l);
		if (a->kallsyms)
			load_or_die(ks_kallsyms_load(k, a->kallsyms, &err), &err);
		if (a->modules)
			load_or_die(ks_modules_load(k, a->modules, &err), &err);
		if (a->vmlinux)
			load_vmlinux(k, a->vmlinux, a->kaslr_offset);
		ks_symtab_finish(k);
	}
	if (a->nbinaries) {
		u = new_tab(l);
		for (i = 0; i < a->nbinaries; i++)
			load_binary(u, a->binaries[i]);
		ks_symtab_finish(u);
	}
	if (k || u)
		ks_profile_set_symbols(p, -1, k, u);
}

static void setup_guest_traces(struct report_args *a, struct ks_profile *p, struct loaded *l,
			       const struct ks_source *host)
{
	const struct ks_source_guest *guests;
	size_t nguests = ks_source_guests(host, &guests);
	int i;

	for (i = 0; i < a->nguest_traces; i++) {
		const struct ks_source_clock *gc;
		struct ks_source *gs;
		struct ks_symtab *k;
		struct ks_error err;
		int32_t vm = -2;
		size_t g;

		/* its kallsyms and clock are used, not its events */
		load_or_die(cli_source_open(&gs, a->guest_traces[i], KS_OPEN_EVENTS_BY_RECORD, NULL,
					    &err), &err);
		l->guest_srcs[l->nguest_srcs++] = gs;
		gc = ks_source_clock(gs);
		if (!gc->has_trace_id)
			die("%s: not a trace.dat with a trace id (TRACEID option)", a->guest_traces[i]);
		for (g = 0; g < nguests; g++)
			if (guests[g].trace_id == gc->trace_id && guests[g].nr_vcpus)
				vm = ks_host_guests(ks_profile_host(p))->g[g].vm;
		if (vm == -2)
			die("%s: its trace id 0x%" PRIx64 " is not a guest of %s (GUEST option)",
			    a->guest_traces[i], gc->trace_id, a->input);
		k = new_tab(l);
		load_or_die(ks_symtab_from_source(k, gs, &err), &err);
		ks_symtab_finish(k);
		ks_profile_set_symbols(p, vm, k, NULL);
	}
}

static void setup_mount(struct report_args *a, struct ks_profile *p, struct loaded *l)
{
	const int32_t *vms;
	size_t n = ks_profile_vms(p, &vms), i;

	for (i = 0; i < n; i++) {
		const char *name = ks_profile_vm_name(p, vms[i]);
		struct ks_symtab *t = new_tab(l);
		char dir[4096];
		bool ok;

		snprintf(dir, sizeof(dir), "%s/%d", a->mount, vms[i]);
		ok = load_mount_dir(t, dir);
		if (!ok && name) {
			snprintf(dir, sizeof(dir), "%s/%s", a->mount, name);
			ok = load_mount_dir(t, dir);
		}
		if (ok) {
			ks_symtab_finish(t);
			ks_profile_set_symbols(p, vms[i], t, NULL);
		}
	}
}

/* ---- output ---- */

static const char *mode_tag(int mode)
{
	return mode == KS_MODE_GUEST_USER ? "[g.u]" : mode == KS_MODE_GUEST_KERNEL ? "[g.k]" : "";
}

static void sym_text(const struct ks_profile_row *r, char *buf, size_t len)
{
	if (!r->sym)
		snprintf(buf, len, "%s", "");
	else if (r->addr && strcmp(r->sym, KS_SYM_UNKNOWN))
		snprintf(buf, len, "%s+0x%" PRIx64, r->sym, r->offset);
	else if (r->addr)
		snprintf(buf, len, "%s 0x%" PRIx64, r->sym, r->addr);
	else
		snprintf(buf, len, "%s", r->sym);
}

static unsigned sample_dims(const struct report_args *a)
{
	unsigned d = a->by;

	if (!strcmp(a->sort, "reason"))
		return d | KS_PROF_REASON;
	if (!strcmp(a->sort, "dso"))
		return d | KS_PROF_DSO;
	return d | (a->offsets ? KS_PROF_ADDR : KS_PROF_SYM);
}

/* The VM's display name (host.h), as every command shows it. */
static const char *vm_text(struct ks_profile *p, int32_t vm, char *buf, size_t len)
{
	return ks_vm_label(buf, len, vm, vm > 0 ? ks_profile_vm_name(p, vm) : NULL);
}

/* The width of the VM column: its widest name, at least 8. */
static int vm_width(struct ks_profile *p, const struct ks_profile_row *rows, size_t n)
{
	char buf[128];
	size_t i, w = 8;

	for (i = 0; i < n; i++)
		if (strlen(vm_text(p, rows[i].vm, buf, sizeof(buf))) > w)
			w = strlen(buf);
	return (int)w;
}

static void print_table(const struct report_args *a, struct ks_profile *p,
			const struct ks_profile_row *rows, size_t n, uint64_t total)
{
	unsigned d = sample_dims(a);
	char sym[512], reason[64], vm[128];
	int vw = (d & KS_PROF_VM) ? vm_width(p, rows, n) : 8;
	size_t i;

	printf("# Overhead  Samples");
	if (d & KS_PROF_VM)
		printf("  %-*s", vw, "VM");
	if (d & KS_PROF_VCPU)
		printf("  vCPU");
	if (d & KS_PROF_REASON)
		printf("  Reason\n");
	else if (d & KS_PROF_DSO) /* the sort keys' columns only, as perf shows them */
		printf("  Mode   DSO\n");
	else
		printf("  Mode   %-20s  Symbol\n", "DSO");
	for (i = 0; i < n; i++) {
		const struct ks_profile_row *r = &rows[i];

		printf("%9.2f%%  %7" PRIu64, total ? 100.0 * (double)r->samples / (double)total : 0,
		       r->samples);
		if (d & KS_PROF_VM)
			printf("  %-*s", vw, vm_text(p, r->vm, vm, sizeof(vm)));
		if (d & KS_PROF_VCPU)
			printf("  %4d", r->vcpu);
		if (d & KS_PROF_REASON) {
			ks_profile_reason_name(p, r->reason, reason, sizeof(reason));
			printf("  %s\n", r->has_reason ? reason : "[PMU sample]");
			continue;
		}
		if (d & KS_PROF_DSO) {
			printf("  %-5s  %s\n", mode_tag(r->mode), r->dso ? r->dso : "");
			continue;
		}
		sym_text(r, sym, sizeof(sym));
		printf("  %-5s  %-20s  %s\n", mode_tag(r->mode), r->dso ? r->dso : "", sym);
	}
}

static void print_exits(const struct report_args *a, struct ks_profile *p,
			const struct ks_profile_row *rows, size_t n)
{
	char sym[512], reason[64], vm[128];
	int vw = (a->by & KS_PROF_VM) ? vm_width(p, rows, n) : 8;
	size_t i;

	printf("\n# Exits by guest code\n# %-22s", "Reason");
	if (a->by & KS_PROF_VM)
		printf("  %-*s", vw, "VM");
	if (a->by & KS_PROF_VCPU)
		printf("  vCPU");
	printf("  %7s  %7s  %14s  %10s  Mode   %-20s  Symbol\n", "Exits", "Handled", "Time(ns)",
	       "Mean(ns)", "DSO");
	for (i = 0; i < n; i++) {
		const struct ks_profile_row *r = &rows[i];

		ks_profile_reason_name(p, r->reason, reason, sizeof(reason));
		sym_text(r, sym, sizeof(sym));
		printf("  %-22s", reason);
		if (a->by & KS_PROF_VM)
			printf("  %-*s", vw, vm_text(p, r->vm, vm, sizeof(vm)));
		if (a->by & KS_PROF_VCPU)
			printf("  %4d", r->vcpu);
		printf("  %7" PRIu64 "  %7" PRIu64 "  %14" PRIu64 "  %10" PRIu64 "  %-5s  %-20s  %s\n",
		       r->samples, r->handled, r->time_ns, r->handled ? r->time_ns / r->handled : 0,
		       mode_tag(r->mode), r->dso, sym);
	}
}

static void csv_row(struct ks_profile *p, const char *table, const struct ks_profile_row *r,
		    uint64_t total)
{
	char reason[64];
	const char *name;

	ks_profile_reason_name(p, r->reason, reason, sizeof(reason));
	printf("%s,%d,%d,%s,%s,", table, r->vm, r->vcpu, r->has_reason ? reason : "",
	       r->mode ? mode_tag(r->mode) : "");
	ks_csv_field(stdout, r->dso ? r->dso : "");
	putchar(',');
	ks_csv_field(stdout, r->sym ? r->sym : "");
	printf(",0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64 ",%.4f,%" PRIu64 ",%" PRIu64 ",", r->addr,
	       r->offset, r->samples, total ? 100.0 * (double)r->samples / (double)total : 0,
	       r->handled, r->time_ns);
	/* the VM's name, as stat's and top's JSON carry it beside the pid */
	name = r->vm > 0 ? ks_profile_vm_name(p, r->vm) : NULL;
	ks_csv_field(stdout, name ? name : "");
	putchar('\n');
}

static void json_row(struct ks_json *j, struct ks_profile *p, const struct ks_profile_row *r,
		     uint64_t total, bool exits)
{
	char reason[64];

	ks_json_begin_object(j);
	if (r->vm != -1) {
		const char *name = r->vm > 0 ? ks_profile_vm_name(p, r->vm) : NULL;

		ks_json_kv_i64(j, "vm", r->vm);
		if (name) /* beside the pid, as stat's and top's JSON */
			ks_json_kv_string(j, "vm_name", name);
	}
	if (r->vcpu != -1 || (!exits && 0))
		ks_json_kv_i64(j, "vcpu", r->vcpu);
	if (r->has_reason) {
		ks_profile_reason_name(p, r->reason, reason, sizeof(reason));
		ks_json_kv_string(j, "reason", reason);
	}
	if (r->mode)
		ks_json_kv_string(j, "mode", r->mode == KS_MODE_GUEST_USER ? "guest_user"
									   : "guest_kernel");
	if (r->dso)
		ks_json_kv_string(j, "dso", r->dso);
	if (r->sym)
		ks_json_kv_string(j, "symbol", r->sym);
	if (r->addr) {
		ks_json_kv_u64(j, "address", r->addr);
		ks_json_kv_u64(j, "offset", r->offset);
	}
	ks_json_kv_u64(j, exits ? "exits" : "samples", r->samples);
	if (exits) {
		ks_json_kv_u64(j, "handled", r->handled);
		ks_json_kv_u64(j, "time_ns", r->time_ns);
	} else {
		ks_json_kv_double(j, "overhead_pct",
				  total ? 100.0 * (double)r->samples / (double)total : 0);
	}
	ks_json_end_object(j);
}

/* Confidential guests: their exits show no address, say why. */
static void print_protected(const struct ks_profile *p)
{
	const int32_t *vms;
	size_t i, n = ks_profile_protected_vms(p, &vms);

	if (!n)
		return;
	printf("# Confidential guests (state protected, exits through VMGEXIT, no guest address):");
	for (i = 0; i < n; i++)
		printf(" VM %d", vms[i]);
	printf("\n#\n");
}

static void print_json(struct ks_profile *p, const struct report_args *a,
		       const struct ks_profile_row *rows, size_t n,
		       const struct ks_profile_row *ex, size_t nex,
		       const struct ks_profile_totals *t)
{
	const int32_t *pvms;
	struct ks_json j;
	size_t i;

	ks_json_init(&j, stdout, true);
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "input", a->input);
	ks_json_kv_u64(&j, "samples", t->samples);
	ks_json_kv_u64(&j, "pmu_samples", t->pmu_samples);
	ks_json_kv_u64(&j, "exit_samples", t->exit_samples);
	ks_json_kv_u64(&j, "host_samples_skipped", t->host_samples);
	ks_json_kv_u64(&j, "exits", t->exits);
	ks_json_key(&j, "confidential_vms");
	ks_json_begin_array(&j);
	for (size_t k = 0, n = ks_profile_protected_vms(p, &pvms); k < n; k++)
		ks_json_i64(&j, pvms[k]);
	ks_json_end_array(&j);
	ks_json_key(&j, "rows");
	ks_json_begin_array(&j);
	for (i = 0; i < n; i++)
		json_row(&j, p, &rows[i], t->samples, false);
	ks_json_end_array(&j);
	ks_json_key(&j, "exits_by_guest_code");
	ks_json_begin_array(&j);
	for (i = 0; i < nex; i++)
		json_row(&j, p, &ex[i], t->samples, true);
	ks_json_end_array(&j);
	ks_host_json_threads(ks_profile_host(p), &j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

/* ---- folded / flame graph ---- */

static void folded_to_file(void *ctx, const char *stack, uint64_t count)
{
	fprintf(ctx, "%s %" PRIu64 "\n", stack, count);
}

static void folded_to_flame(void *ctx, const char *stack, uint64_t count)
{
	if (ks_flame_add(ctx, stack, count) < 0)
		die("out of memory building the flame graph");
}

/* Every file report reads (binaries as given, "PATH:LOAD" is not a file). */
static void report_inputs(const struct report_args *a, const char **in, size_t max)
{
	size_t n = 0;
	int i;

	in[n++] = a->input;
	if (a->kallsyms)
		in[n++] = a->kallsyms;
	if (a->modules)
		in[n++] = a->modules;
	if (a->vmlinux)
		in[n++] = a->vmlinux;
	for (i = 0; i < a->nguest_traces && n + 1 < max; i++)
		in[n++] = a->guest_traces[i];
	for (i = 0; i < a->nbinaries && n + 1 < max; i++)
		in[n++] = a->binaries[i];
	in[n] = NULL;
}

/* The output files are checked before any input is read: never an input,
 * never a device; they are written to a temporary file renamed at the end. */
static void check_outputs(const struct report_args *a, const char **in)
{
	if (a->folded)
		cli_output_check(a->folded, in, 0);
	if (a->flamegraph)
		cli_output_check(a->flamegraph, in, 0);
}

static void write_stacks(const struct report_args *a, struct ks_profile *p, const char **in)
{
	struct ks_error err;

	if (a->folded) {
		struct ks_outfile *of = cli_output_open(a->folded, in, 0);

		ks_profile_folded(p, folded_to_file, ks_outfile_stream(of));
		cli_output_commit(of);
	}
	if (a->flamegraph) {
		struct ks_flame *fl = ks_flame_new();
		struct ks_outfile *of;
		char title[512];

		if (!fl)
			die("out of memory");
		ks_profile_folded(p, folded_to_flame, fl);
		of = cli_output_open(a->flamegraph, in, 0);
		snprintf(title, sizeof(title), "Guest profile: %s", a->input);
		if (ks_flame_write_svg(fl, ks_outfile_stream(of), title, &err) < 0 &&
		    !ferror(ks_outfile_stream(of)))
			die("%s: %s", a->flamegraph, err.msg);
		/* a write error is reported by the commit, with its reason */
		cli_output_commit(of);
		ks_flame_free(fl);
	}
}

/* No sample at all: say what the input holds instead of an empty table. */
static void explain_empty(const struct report_args *a, const struct ks_profile_totals *t)
{
	if (a->time.set) {
		warnx_("%s: no guest samples and no exits in the time window", a->input);
		return;
	}
	if (t->host_samples)
		die("%s: no guest samples: all %" PRIu64 " PMU samples are of host mode; record the "
		    "guest with 'perf kvm record' or 'perf record -e cycles:G'", a->input,
		    t->host_samples);
	if (a->cfg.nsample_exits) {
		warnx_("%s: no exit matches --sample-exits", a->input);
		return;
	}
	/* KVM events without a guest address: the (empty) profile and the
	 * threads' VMs and vCPUs are still the answer, with a note */
	cli_note_missing(a->input, "guest samples and no exits with a guest address "
			 "(kvm_exit) to profile");
}

/* Most samples in guest kernel code without a symbol: say which option
 * gives them, rather than a table of [unknown]. */
static void hint_symbols(const struct report_args *a, struct ks_profile *p, uint64_t total)
{
	struct ks_profile_row *rows = NULL;
	size_t n = ks_profile_rows(p, KS_PROF_SYM, false, &rows), i;
	uint64_t kernel = 0, user = 0;

	for (i = 0; i < n; i++) {
		if (!rows[i].sym || strcmp(rows[i].sym, KS_SYM_UNKNOWN))
			continue;
		if (rows[i].mode == KS_MODE_GUEST_KERNEL)
			kernel += rows[i].samples;
		else if (rows[i].mode == KS_MODE_GUEST_USER)
			user += rows[i].samples;
	}
	free(rows);
	if (total && kernel * 2 >= total && kernel)
		warnx_("%s: %.0f%% of the samples are in guest kernel code without symbols "
		       "([unknown]): give the guest's /proc/kallsyms (--guest-kallsyms FILE, per "
		       "VM --guest-mount DIR) or its trace.dat (a second -i GUEST.dat)%s", a->input,
		       100.0 * (double)kernel / (double)total,
		       user ? "; guest user code: --guest-binary PROGRAM:ADDRESS" : "");
}

/* The rows the answer prints: samples, and exits unless --no-exits. */
struct report_rows {
	struct ks_profile_row *rows, *ex;
	size_t n, nex;
	uint64_t folded, folded_ex;
};

/* Read the whole input into a profile, with every symbol source loaded. */
static struct ks_profile *profile_input(struct report_args *a, struct ks_source *src,
					struct loaded *l)
{
	struct ks_profile *p;
	struct ks_record rec;
	struct ks_error err;
	struct ks_progress prog;
	int r;

	apply_time_window(src, a->input, &a->time);
	a->cfg.limits = ks_source_limits(src);
	a->cfg.path = ks_source_path(src);
	p = ks_profile_new(&a->cfg, ks_source_info(src), &err);
	if (!p && ks_error_kind(&err) == KS_E_USAGE)
		usage_error("report", "%s", err.msg);
	if (!p)
		die("%s", err.msg);
	if (ks_profile_set_guests(p, src, &err) < 0)
		die("%s", err.msg);
	cli_progress_init(&prog, "report", a->quiet, false);
	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		ks_profile_add(p, &rec);
		cli_progress(&prog, src);
	}
	ks_progress_end(&prog);
	if (r < 0 || ks_profile_error(p, &err) < 0)
		die("%s", err.msg);
	setup_default_symbols(a, p, l);
	setup_guest_traces(a, p, l, src);
	if (a->mount)
		setup_mount(a, p, l);
	return p;
}

static void collect_rows(struct report_args *a, struct ks_profile *p,
			 const struct ks_profile_totals *t, struct report_rows *rr)
{
	struct ks_error err;
	const int32_t *vms;

	/* several VMs: their kernels are not one profile */
	if (!a->by_set && ks_profile_vms(p, &vms) > 1)
		a->by |= KS_PROF_VM;
	rr->n = ks_profile_rows(p, sample_dims(a), false, &rr->rows);
	rr->folded = ks_profile_rows_folded(p);
	if (!a->no_exits && t->exits) {
		rr->nex = ks_profile_rows(p, a->by | KS_PROF_REASON |
					  (a->offsets ? KS_PROF_ADDR : KS_PROF_SYM), true, &rr->ex);
		rr->folded_ex = ks_profile_rows_folded(p);
	}
	if (ks_profile_error(p, &err) < 0)
		die("%s", err.msg);
	if (rr->folded || rr->folded_ex)
		warnx_("%s: more distinct guest addresses than the budget holds: %" PRIu64
		       " rows of the fewest samples folded into one [other] row (raise it with "
		       "--limit tables=SIZE)", a->input, rr->folded + rr->folded_ex);
}

static void print_text(const struct report_args *a, struct ks_profile *p,
		       const struct report_rows *rr, const struct ks_profile_totals *t)
{
	printf("# Input: %s\n# Samples: %" PRIu64 " (PMU %" PRIu64 ", exit tracepoints %"
	       PRIu64 "); host-mode samples skipped: %" PRIu64 "\n#\n", a->input,
	       t->samples, t->pmu_samples, t->exit_samples, t->host_samples);
	print_protected(p);
	print_table(a, p, rr->rows, rr->n, t->samples);
	if (rr->folded)
		printf("# %" PRIu64 " rows of the fewest samples folded into [other] "
		       "(--limit tables=SIZE)\n", rr->folded);
	if (rr->nex)
		print_exits(a, p, rr->ex, rr->nex);
	if (rr->folded_ex)
		printf("# %" PRIu64 " rows of the fewest exits folded into [other] "
		       "(--limit tables=SIZE)\n", rr->folded_ex);
}

static void print_answer(const struct report_args *a, struct ks_profile *p,
			 const struct report_rows *rr, const struct ks_profile_totals *t)
{
	if (a->format == OUT_JSON) {
		print_json(p, a, rr->rows, rr->n, rr->ex, rr->nex, t);
	} else if (a->format == OUT_CSV) {
		printf("table,vm,vcpu,reason,mode,dso,symbol,address,offset,samples,overhead_pct,"
		       "handled,time_ns,vm_name\n");
		for (size_t k = 0; k < rr->n; k++)
			csv_row(p, "samples", &rr->rows[k], t->samples);
		for (size_t k = 0; k < rr->nex; k++)
			csv_row(p, "exits", &rr->ex[k], t->samples);
	} else if (!a->folded || strcmp(a->folded, "-")) {
		print_text(a, p, rr, t);
	}
}

static void run(struct report_args *a)
{
	struct report_rows rr = { 0 };
	struct ks_profile_totals t;
	struct loaded l = { 0 };
	struct ks_source *src;
	struct ks_profile *p;
	struct ks_error err;
	const char *in[2 * MAX_LIST + 8];
	int i;

	report_inputs(a, in, sizeof(in) / sizeof(in[0]));
	check_outputs(a, in);
	load_or_die(cli_source_open(&src, a->input, 0, &a->limits, &err), &err);
	p = profile_input(a, src, &l);
	ks_profile_totals(p, &t);
	if (!t.samples)
		explain_empty(a, &t);
	collect_rows(a, p, &t, &rr);
	print_answer(a, p, &rr, &t);
	write_stacks(a, p, in);
	/* after the answer, as a note; not after a failed write (its error,
	 * at exit, is the one line then) */
	if (t.samples && fflush(stdout) == 0 && !ferror(stdout))
		hint_symbols(a, p, t.samples);
	free(rr.rows);
	free(rr.ex);
	ks_profile_free(p);
	for (i = 0; i < l.ntabs; i++)
		ks_symtab_free(l.tabs[i]);
	for (i = 0; i < l.nguest_srcs; i++)
		ks_source_close(l.guest_srcs[i]);
	ks_source_close(src);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };

	ks_limits_default(&a.limits);
	parse_args(&a, argc, argv);
	run(&a);
	free(a.sample_exits_buf);
	return 0;
}
