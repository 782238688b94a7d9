/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_sample.c - kvmscope sample: guest call chains sampled live over
 * QEMU's gdbstub.
 *
 * At -F HZ: interrupt the guest, for every vCPU select it, read its
 * registers and unwind (src/unwind/, read-only), resume.  Raw stacks are
 * kept in memory and symbolised after the guest has been let go, so the
 * time the guest is held stays small.  Every exit path - end of run,
 * SIGINT/SIGTERM, protocol or unwind errors - detaches with D;1 (the stub
 * resumes the guest).  Output: folded stacks, an SVG flame graph, per-sample
 * stacks, and a summary on stderr.  See kvmscope-sample(1).
 *
 * Time: every wait on the stub has a deadline (ks_gdb_set_deadline).  A
 * sample may hold the guest for --sample-budget; when that runs out the
 * sample is abandoned (counted, never kept in part) and 'c' goes out at
 * once.  -d bounds the whole run, connecting and setup included: no sample
 * starts after START + d, and the last one and the detach get at most half
 * a second more.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/gdbmem.h"
#include "kvmscope/gdbproto.h"
#include "kvmscope/guestsyms.h"
#include "kvmscope/unwind.h"
#include "output/flamegraph.h"

#define MAX_VCPUS 64

static const struct opt_cmd sample_cmd = {
	.name = "sample",
	.synopsis = "[options]",
	.intro = "Sample guest call chains (kernel and user) of a QEMU guest through its gdbstub.\n",
	.outro = "The guest is never written to and is always left running.  See kvmscope-sample(1).\n",
};

struct sample_args {
	const char *gdb, *output, *svg, *stacks, *proto_log;
	long long freq, max_samples, timeout_ms, budget_ms;
	double duration;
	bool annotate, per_vcpu;
	int mem; /* MEM_* */
	int layout, kunwind_idx, layout_idx;
	enum ks_kunwind kunwind;
	bool kunwind_auto;
	struct ks_guestsyms_opts syms;
};

enum { MEM_AUTO, MEM_PHYS, MEM_VIRT };

struct rec {
	uint32_t vcpu, n;
	uint8_t stop;
	uint64_t *ips;
};

struct run {
	struct rec *recs;
	size_t nrecs, cap;
	double *held_ms;
	size_t nheld, held_cap;
	uint64_t samples, stops[KS_STOP_COUNT_], errors;
	uint64_t abandoned;  /* samples the budget cut short: dropped, guest resumed */
	uint64_t unacked;    /* continues the stub did not acknowledge in time */
	double total_held_ms, wall_s;
	uint64_t packets_before, writes_before, bytes_before; /* gdbstub counters at the first sample */
};

static volatile sig_atomic_t stop_requested;

#define NS_PER_MS 1000000ll
#define NS_PER_S 1000000000ll
/* After -d: what the detach may still take (the rest of the second is for
 * writing the outputs). */
#define DETACH_GRACE_NS (500 * NS_PER_MS)

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The earlier of two deadlines, 0 meaning none. */
static int64_t earlier(int64_t a, int64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

static const char *const mem_names[] = { "auto", "phys", "virt", NULL };

static void parse_args(int argc, char **argv, struct sample_args *a)
{
	const struct opt opts[] = {
		OPT_STRING('g', "gdb", &a->gdb, "HOST:PORT", "QEMU gdbstub (default 127.0.0.1:1234)"),
		OPT_INT('F', "freq", &a->freq, "HZ", "samples per second (default 99)", 1, 100000),
		OPT_SECONDS('d', "duration", &a->duration,
			    "stop after this long, setup included (default: until\nCtrl-C)",
			    0, 1000000000000LL),
		OPT_INT('n', "samples", &a->max_samples, "N",
			"stop after N samples (abandoned ones included)", 1, INT64_MAX),
		OPT_STRING('o', "output", &a->output, "FILE",
			   "folded stacks (default: standard output)"),
		OPT_STRING(0, "svg", &a->svg, "FILE", "SVG flame graph"),
		OPT_STRING(0, "stacks", &a->stacks, "FILE",
			   "every sampled stack, one block per vCPU and sample"),
		OPT_FLAG(0, "annotate", &a->annotate, "add _[g.k] / _[g.u] to frames"),
		OPT_FLAG(0, "per-vcpu", &a->per_vcpu, "root every stack at vcpuN"),
		OPT_STRING(0, "guest-kallsyms", &a->syms.kallsyms, "F",
			   "guest /proc/kallsyms (kernel symbols, ORC tables)"),
		OPT_STRING(0, "guest-modules", &a->syms.modules, "F", "guest /proc/modules"),
		OPT_STRING(0, "guest-vmlinux", &a->syms.vmlinux, "F", "guest vmlinux"),
		OPT_U64(0, "guest-kaslr-offset", &a->syms.kaslr_offset, "N",
			"add N to vmlinux addresses"),
		OPT_LIST(0, "guest-binary", a->syms.binaries, &a->syms.nbinaries,
			 KS_GUESTSYMS_MAX_BINARIES, "P[:A]",
			 "guest user program P loaded at A (repeatable)"),
		OPT_KERNEL_UNWIND(&a->kunwind_idx),
		OPT_ORC_LAYOUT(&a->layout_idx),
		OPT_CHOICE(0, "mem", &a->mem, "M",
			   "auto (default: the stub's virtual reads, own page walk\n"
			   "when they fail), phys (own page walk) or virt", mem_names),
		OPT_INT(0, "sample-budget", &a->budget_ms, "MS",
			"longest one sample may hold the guest stopped; past it\n"
			"the sample is abandoned and the guest resumed (default 50,\n"
			"0: no limit but --timeout)", 0, 3600000),
		OPT_INT(0, "timeout", &a->timeout_ms, "MS",
			"longest wait for one answer of the stub (default 2000)", 1, 3600000),
		OPT_STRING(0, "log-protocol", &a->proto_log, "FILE",
			   "write every byte sent to the stub to FILE"),
		OPT_END(),
	};
	int first;

	memset(a, 0, sizeof(*a));
	a->gdb = "127.0.0.1:1234";
	a->freq = 99;
	a->timeout_ms = 2000;
	a->budget_ms = 50;
	first = parse_options(&sample_cmd, opts, argc, argv);
	a->kunwind = kunwind_values[a->kunwind_idx];
	a->kunwind_auto = a->kunwind_idx == 0;
	a->layout = orc_layout_values[a->layout_idx];
	if (first < argc)
		usage_error("sample", "unexpected argument '%s'", argv[first]);
}

/* ---- one sample ---- */

struct sampler {
	struct sample_args *a;
	struct ks_gdb *g;
	struct ks_gdbmem gm;
	struct ks_vmem vm;
	struct ks_orc orc;
	struct ks_unwinder unw;
	struct ks_guestcode code;
	char threads[MAX_VCPUS][KS_GDB_THREAD_ID_MAX];
	size_t nthreads;
	int64_t run_end; /* START + -d (ns, monotonic), 0 without -d */
	struct run run;
};

static int read_vcpu_regs(struct sampler *s, size_t i, struct ks_x86_regs *r, struct ks_error *err)
{
	uint8_t buf[1024];
	size_t len;

	if (ks_gdb_select(s->g, s->threads[i], err) < 0 ||
	    ks_gdb_read_regs(s->g, buf, sizeof(buf), &len, err) < 0)
		return -1;
	return ks_x86_regs_from_gdb(buf, len, r, err);
}

static int keep_stack(struct run *run, uint32_t vcpu, const struct ks_stack *st)
{
	struct rec *r;

	if (run->nrecs == run->cap) {
		size_t cap = run->cap ? run->cap * 2 : 1024;
		struct rec *n = realloc(run->recs, cap * sizeof(*n));
		if (!n)
			return -1;
		run->recs = n;
		run->cap = cap;
	}
	r = &run->recs[run->nrecs];
	r->ips = malloc(st->n * sizeof(uint64_t));
	if (!r->ips)
		return -1;
	for (unsigned i = 0; i < st->n; i++)
		r->ips[i] = st->f[i].ip;
	r->n = st->n;
	r->vcpu = vcpu;
	r->stop = (uint8_t)st->stop;
	run->nrecs++;
	run->stops[st->stop]++;
	return 0;
}

static int unwind_vcpu(struct sampler *s, size_t i, struct ks_error *err)
{
	struct ks_x86_regs r;
	struct ks_stack st;

	if (read_vcpu_regs(s, i, &r, err) < 0)
		return -1;
	ks_gdbmem_reset(&s->gm);
	ks_vmem_reset(&s->vm, r.cr3, r.cr4);
	ks_unwind(&s->unw, &s->vm, &r, &st);
	if (keep_stack(&s->run, (uint32_t)i, &st) < 0)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	return 0;
}

static int push_held(struct run *run, double ms)
{
	if (run->nheld == run->held_cap) {
		size_t cap = run->held_cap ? run->held_cap * 2 : 1024;
		double *n = realloc(run->held_ms, cap * sizeof(*n));
		if (!n)
			return -1;
		run->held_ms = n;
		run->held_cap = cap;
	}
	run->held_ms[run->nheld++] = ms;
	run->total_held_ms += ms;
	return 0;
}

/* Forget the stacks kept since MARK (an abandoned sample). */
static void drop_stacks(struct run *run, size_t mark)
{
	while (run->nrecs > mark) {
		struct rec *r = &run->recs[--run->nrecs];
		run->stops[r->stop]--;
		free(r->ips);
	}
}

/* What one stop of the guest may take (ns). */
static int64_t hold_budget(const struct sampler *s)
{
	return (s->a->budget_ms ? s->a->budget_ms : s->a->timeout_ms) * NS_PER_MS;
}

static int64_t grace_end(const struct sampler *s)
{
	return s->run_end ? s->run_end + DETACH_GRACE_NS : 0;
}

/* 'c' after a sample; the wait for its ack is bounded like a sample (the
 * guest runs once the stub has read 'c': the ack only confirms it).
 * *RELEASED: when 'c' was sent, or acked when it was. */
static int resume(struct sampler *s, int64_t *released, struct ks_error *err)
{
	int64_t start = now_ns(), wait = earlier(start + hold_budget(s), grace_end(s)) - start;
	int rc;

	ks_gdb_set_deadline(s->g, start + wait);
	*released = start;
	rc = ks_gdb_continue(s->g, err);
	if (rc == 0)
		*released = now_ns();
	if (rc != -ETIME)
		return rc;
	if (!s->run.unacked++)
		fprintf(stderr, "kvmscope: the gdbstub did not acknowledge 'continue' within %lld ms "
			"(slow or unresponsive stub); sampling goes on\n",
			(long long)(wait / NS_PER_MS));
	return 0;
}

static int take_sample(struct sampler *s, struct ks_error *err)
{
	int64_t t0 = now_ns(), released;
	size_t mark = s->run.nrecs;
	bool cut;
	int rc = 0;

	/* (the last sample of a -d run is cut by its budget, not by -d) */
	ks_gdb_set_deadline(s->g, earlier(s->a->budget_ms ? t0 + s->a->budget_ms * NS_PER_MS : 0,
					  grace_end(s)));
	/* The first sample is the state the connection stopped the guest in. */
	if (ks_gdb_running(s->g))
		rc = ks_gdb_interrupt(s->g, err);
	for (size_t i = 0; rc == 0 && i < s->nthreads && !ks_gdb_expired(s->g); i++)
		rc = unwind_vcpu(s, i, err);
	cut = rc == -ETIME || ks_gdb_expired(s->g);
	if (rc < 0 && !cut)
		return -1; /* the detach lets the guest go */
	if (cut)
		drop_stacks(&s->run, mark);
	if (resume(s, &released, err) < 0)
		return -1;
	if (cut)
		s->run.abandoned++;
	else
		s->run.samples++;
	return push_held(&s->run, (double)(released - t0) / 1e6);
}

/* Until T (ns), the guest running: late answers to an abandoned sample are
 * read meanwhile, so that the next sample does not wait for them. */
static int wait_until(struct sampler *s, int64_t t, struct ks_error *err)
{
	int64_t d;
	struct timespec ts;

	if (!ks_gdb_in_step(s->g)) {
		int rc;

		ks_gdb_set_deadline(s->g, t);
		rc = ks_gdb_settle(s->g, err);
		if (rc < 0 && rc != -ETIME)
			return -1;
	}
	d = t - now_ns();
	if (d <= 0)
		return 0;
	ts.tv_sec = (time_t)(d / NS_PER_S);
	ts.tv_nsec = (long)(d % NS_PER_S);
	nanosleep(&ts, NULL); /* EINTR: the loop checks stop_requested */
	return 0;
}

static int sample_loop(struct sampler *s, struct ks_error *err)
{
	int64_t start = now_ns(), period = (int64_t)(1e9 / s->a->freq), next = start;

	s->run.packets_before = ks_gdb_stats(s->g)->packets_sent;
	s->run.writes_before = ks_gdb_stats(s->g)->writes;
	s->run.bytes_before = ks_gdb_stats(s->g)->bytes_received;

	while (!stop_requested) {
		if (s->a->max_samples && s->run.samples + s->run.abandoned >= (uint64_t)s->a->max_samples)
			break;
		if (s->run_end && now_ns() >= s->run_end)
			break;
		next += period;
		if (take_sample(s, err) < 0)
			return -1;
		if (now_ns() > next)
			next = now_ns(); /* fell behind: do not burst */
		if (wait_until(s, earlier(next, s->run_end), err) < 0)
			return -1;
	}
	s->run.wall_s = (double)(now_ns() - start) / 1e9;
	return 0;
}

/* ---- setup ---- */

static int setup_kernel_unwind(struct sampler *s, const struct ks_guestsyms *gs, struct ks_error *err)
{
	struct ks_x86_regs r;
	struct ks_orc_info info;
	char msg[sizeof(err->msg)];

	s->unw.user = true;
	s->unw.kernel = s->a->kunwind;
	if (s->a->kunwind != KS_KUNWIND_ORC && !s->a->syms.kallsyms)
		return 0;
	if (read_vcpu_regs(s, 0, &r, err) < 0)
		return -1;
	ks_gdbmem_reset(&s->gm);
	/* kallsyms of another boot would give [unknown] frames only */
	if (s->a->syms.kallsyms &&
	    ks_guestsyms_check_kernel(gs->kernel, &s->vm, r.cr3, r.cr4, 0, err) < 0) {
		if (ks_gdb_expired(s->g))
			return -1;
		snprintf(msg, sizeof(msg), "%s", err->msg);
		return ks_error_set(err, "%s: %s", s->a->syms.kallsyms, msg);
	}
	if (s->a->kunwind != KS_KUNWIND_ORC)
		return 0;
	ks_vmem_reset(&s->vm, r.cr3, r.cr4);
	if (ks_guest_orc_setup(&s->orc, &s->vm, gs->kernel, s->a->layout, &info, err) < 0) {
		if (!s->a->kunwind_auto || ks_gdb_expired(s->g))
			return -1;
		fprintf(stderr, "kvmscope: %s; kernel frames by frame pointers\n", err->msg);
		s->unw.kernel = KS_KUNWIND_FP;
		return 0;
	}
	s->unw.orc = &s->orc;
	fprintf(stderr, "kvmscope: ORC: %zu entries, %s layout (%s)\n", s->orc.n,
		info.layout == KS_ORC_6_4 ? "6.4+" : "pre-6.4",
		info.layout_from_banner ? info.banner : "no banner: from kallsyms");
	return 0;
}

static int connect_stub(struct sampler *s, struct ks_error *err)
{
	int timeout = (int)s->a->timeout_ms;

	/* Connecting and the setup count against -d too (a timeout cut to what
	 * is left of -d changes nothing later: every wait ends at -d anyway). */
	if (s->run_end) {
		int64_t left = (s->run_end - now_ns()) / NS_PER_MS;
		timeout = left < 1 ? 1 : left < timeout ? (int)left : timeout;
	}
	s->g = ks_gdb_connect(s->a->gdb, timeout, err);
	if (!s->g)
		return -1;
	ks_gdb_set_deadline(s->g, s->run_end);
	if (ks_gdb_handshake(s->g, err) < 0)
		return -1;
	if (ks_gdb_threads(s->g, s->threads, MAX_VCPUS, &s->nthreads, err) < 0)
		return -1;
	ks_gdbmem_init(&s->gm, s->g);
	ks_vmem_init(&s->vm, &s->gm.mem);
	s->vm.mode = s->a->mem == MEM_VIRT ? KS_VMEM_VIRT_ONLY :
		     s->a->mem == MEM_PHYS ? KS_VMEM_WALK_ONLY : KS_VMEM_VIRT_FIRST;
	return 0;
}

/* ---- output ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rec_stack(const struct rec *r, struct ks_stack *st)
{
	st->n = r->n;
	st->stop = (enum ks_unwind_stop)r->stop;
	st->via_regs = false;
	for (unsigned i = 0; i < r->n; i++) {
		st->f[i].ip = r->ips[i];
		st->f[i].kernel = ks_is_kernel_addr(r->ips[i]);
	}
}

static char **fold_all(const struct sampler *s, const struct ks_guestsyms *gs)
{
	char **lines = calloc(s->run.nrecs + 1, sizeof(char *));
	static struct ks_stack st;
	char buf[16384];

	if (!lines)
		die("out of memory");
	for (size_t i = 0; i < s->run.nrecs; i++) {
		size_t off = 0;
		rec_stack(&s->run.recs[i], &st);
		if (s->a->per_vcpu)
			off = (size_t)snprintf(buf, sizeof(buf), "vcpu%u;", s->run.recs[i].vcpu);
		if (ks_stack_fold(gs, &st, s->a->annotate, buf + off, sizeof(buf) - off) < 0)
			snprintf(buf + off, sizeof(buf) - off, "[truncated]");
		lines[i] = strdup(buf);
		if (!lines[i])
			die("out of memory");
	}
	qsort(lines, s->run.nrecs, sizeof(char *), cmp_str);
	return lines;
}

/* The files sample reads: an output must not be one of them. */
static void sample_inputs(const struct sample_args *a, const char **in)
{
	size_t n = 0;
	int i;

	if (a->syms.kallsyms)
		in[n++] = a->syms.kallsyms;
	if (a->syms.modules)
		in[n++] = a->syms.modules;
	if (a->syms.vmlinux)
		in[n++] = a->syms.vmlinux;
	for (i = 0; i < a->syms.nbinaries; i++)
		in[n++] = a->syms.binaries[i];
	in[n] = NULL;
}

/* Checked before anything is read or sampled: never an input, never a device. */
static void check_outputs(const struct sample_args *a)
{
	const char *in[KS_GUESTSYMS_MAX_BINARIES + 4];

	sample_inputs(a, in);
	if (a->output)
		cli_output_check(a->output, in, 0);
	if (a->svg)
		cli_output_check(a->svg, in, 0);
	if (a->stacks)
		cli_output_check(a->stacks, in, 0);
}

/* Outputs go to a temporary file renamed to their name when complete. */
static void write_folded(const struct sampler *s, char **lines, struct ks_flame *fl,
			 const char *const *in)
{
	struct ks_outfile *of = cli_output_open(s->a->output ? s->a->output : "-", in, 0);
	FILE *out = ks_outfile_stream(of);

	for (size_t i = 0; i < s->run.nrecs;) {
		size_t j = i;
		while (j < s->run.nrecs && !strcmp(lines[j], lines[i]))
			j++;
		fprintf(out, "%s %zu\n", lines[i], j - i);
		if (fl && ks_flame_add(fl, lines[i], j - i) < 0)
			die("out of memory");
		i = j;
	}
	cli_output_commit(of);
}

static void write_svg(const struct sampler *s, struct ks_flame *fl, const char *const *in)
{
	struct ks_error err;
	struct ks_outfile *of = cli_output_open(s->a->svg, in, 0);

	if (ks_flame_write_svg(fl, ks_outfile_stream(of), "Guest call chains (kvmscope sample)",
			       &err) < 0 && !ferror(ks_outfile_stream(of)))
		die("%s", err.msg);
	cli_output_commit(of); /* reports a write error with its reason */
}

static void write_stacks(const struct sampler *s, const struct ks_guestsyms *gs,
			 const char *const *in)
{
	struct ks_outfile *of = cli_output_open(s->a->stacks, in, 0);
	FILE *f = ks_outfile_stream(of);
	static struct ks_stack st;

	for (size_t i = 0; i < s->run.nrecs; i++) {
		rec_stack(&s->run.recs[i], &st);
		fprintf(f, "sample %zu vcpu %u\n", i / (s->nthreads ? s->nthreads : 1),
			s->run.recs[i].vcpu);
		ks_stack_print(f, gs, &st);
	}
	cli_output_commit(of);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summary(const struct sampler *s)
{
	const struct run *r = &s->run;
	double *h = r->held_ms;
	size_t n = r->nheld;
	uint64_t tried = r->samples + r->abandoned;

	fprintf(stderr, "kvmscope sample: %" PRIu64 " samples of %zu vCPU(s) in %.2f s (%.1f/s)",
		r->samples, s->nthreads, r->wall_s, r->wall_s > 0 ? (double)r->samples / r->wall_s : 0);
	if (r->abandoned && s->a->budget_ms)
		fprintf(stderr, ", %" PRIu64 " abandoned (over the %lld ms budget, guest resumed)",
			r->abandoned, s->a->budget_ms);
	else if (r->abandoned)
		fprintf(stderr, ", %" PRIu64 " abandoned (cut by the end of -d, guest resumed)",
			r->abandoned);
	fputc('\n', stderr);
	if (r->unacked)
		fprintf(stderr, "gdbstub: 'continue' not acknowledged in time %" PRIu64 " times "
			"(slow or unresponsive stub)\n", r->unacked);
	if (n) {
		qsort(h, n, sizeof(*h), cmp_double);
		fprintf(stderr, "guest held: median %.3f ms, p90 %.3f ms, max %.3f ms, total %.1f ms\n",
			h[n / 2], h[(n * 9) / 10], h[n - 1], r->total_held_ms);
	}
	if (tried) {
		const struct ks_gdb_stats *gs = ks_gdb_stats(s->g);

		fprintf(stderr, "gdbstub: %.1f packets, %.1f writes and %.0f bytes received per sample\n",
			(double)(gs->packets_sent - r->packets_before) / (double)tried,
			(double)(gs->writes - r->writes_before) / (double)tried,
			(double)(gs->bytes_received - r->bytes_before) / (double)tried);
	}
	fprintf(stderr, "stacks: %zu;", r->nrecs);
	for (int i = 0; i < KS_STOP_COUNT_; i++)
		if (r->stops[i])
			fprintf(stderr, " %s %" PRIu64, ks_unwind_stop_name((enum ks_unwind_stop)i),
				r->stops[i]);
	fputc('\n', stderr);
}

static void outputs(struct sampler *s, const struct ks_guestsyms *gs)
{
	char **lines = fold_all(s, gs);
	struct ks_flame *fl = s->a->svg ? ks_flame_new() : NULL;
	const char *in[KS_GUESTSYMS_MAX_BINARIES + 4];

	sample_inputs(s->a, in);
	write_folded(s, lines, fl, in);
	if (fl) {
		write_svg(s, fl, in);
		ks_flame_free(fl);
	}
	if (s->a->stacks)
		write_stacks(s, gs, in);
	for (size_t i = 0; i < s->run.nrecs; i++)
		free(lines[i]);
	free(lines);
	summary(s);
}

/* Detach.  The stop it needs lasts no longer than a sample's (then D goes
 * out without the stop reply); the wait for D's answer (the guest runs once
 * the stub has read D) is bounded by the timeout, and by -d's grace.
 * Returns -1 when the detach was not acknowledged: the guest may still be
 * stopped, which the run's exit status must say. */
static int let_go(struct sampler *s)
{
	struct ks_error err = { .msg = "" };
	int rc;

	ks_gdb_set_deadline(s->g, earlier(now_ns() + hold_budget(s), grace_end(s)));
	rc = ks_gdb_interrupt(s->g, &err);
	if (rc == -ETIME && ks_gdb_running(s->g)) {
		fprintf(stderr, "kvmscope: no time was left to stop the guest for the detach: "
			"it was left running, not detached\n");
		return 0;
	}
	if (rc == 0 || rc == -ETIME) {
		ks_gdb_set_deadline(s->g, earlier(now_ns() + s->a->timeout_ms * NS_PER_MS,
						  grace_end(s)));
		rc = ks_gdb_detach(s->g, &err);
	}
	if (rc < 0) {
		fprintf(stderr, "kvmscope: detach failed: %s: the guest may still be stopped; resume "
			"it with QMP 'cont' (virsh qemu-monitor-command DOMAIN '{\"execute\":\"cont\"}')\n",
			err.msg);
		return -1;
	}
	return 0;
}

static void free_sampler(struct sampler *s)
{
	for (size_t i = 0; i < s->run.nrecs; i++)
		free(s->run.recs[i].ips);
	free(s->run.recs);
	free(s->run.held_ms);
	ks_orc_free(&s->orc);
	ks_gdb_close(s->g);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: sleeps end early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_sample(int argc, char **argv)
{
	static struct sampler s;
	struct sample_args a;
	struct ks_guestsyms gs;
	struct ks_error err = { .msg = "" };
	int log_fd = -1, rc = 0;

	parse_args(argc, argv, &a);
	check_outputs(&a);
	if (ks_guestsyms_load(&gs, &a.syms, &err) < 0)
		die("%s", err.msg);
	if (a.proto_log && (log_fd = open(a.proto_log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		die("%s: %s", a.proto_log, strerror(errno));
	s.a = &a;
	install_signals();
	if (a.duration > 0) /* (at most 30 years: no overflow) */
		s.run_end = now_ns() + (int64_t)((a.duration < 1e9 ? a.duration : 1e9) * 1e9);
	if (connect_stub(&s, &err) < 0)
		rc = -1;
	if (s.g)
		ks_gdb_set_log(s.g, log_fd);
	if (rc == 0 && setup_kernel_unwind(&s, &gs, &err) < 0)
		rc = -1;
	if (rc < 0 && s.g && ks_gdb_expired(s.g))
		snprintf(err.msg, sizeof(err.msg), "-d %g s ran out before the setup was done "
			 "(the gdbstub answers too slowly)", a.duration);
	if (a.mem == MEM_AUTO) { /* code bytes from the binaries, checked against the guest */
		s.code.map = gs.user_code;
		s.vm.read_code = ks_guestcode_read;
		s.vm.code_ctx = &s.code;
	}
	if (rc == 0 && sample_loop(&s, &err) < 0)
		rc = -1;
	/* Always let the guest go, whatever happened above; an unconfirmed
	 * detach fails the run (the guest may be stopped) */
	if (s.g && let_go(&s) < 0 && rc == 0)
		rc = -2;
	if (log_fd >= 0)
		close(log_fd);
	if (rc == -1) /* (-2: let_go said why) */
		fprintf(stderr, "kvmscope: %s\n", err.msg);
	if (s.run.nrecs || rc == 0)
		outputs(&s, &gs);
	free_sampler(&s);
	ks_guestsyms_free(&gs);
	return rc < 0 ? 1 : 0;
}
