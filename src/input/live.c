/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live.c - live tracefs tracing: a private instance, its per-CPU raw
 * readers, and a struct ks_source decoding their pages (see live.h).
 *
 * The instance is named "kvmscope-PID-START-PIDNS" (its owner's pid, start
 * time and PID namespace, util/procfs.h): a run removes the instances whose
 * owner is provably gone, never a live one of another namespace or one
 * whose pid was reused.  The library installs no handler: the caller's
 * hook (ks_live_opts.track) learns of every instance created and
 * destroyed, so that the command line's exit and signal handlers remove
 * what die() or a signal would leave behind (src/cli/live_signals.c).
 * What SIGKILL leaves stops tracing at once: the instance's
 * options/disable_on_free is set and its free_buffer held open, so the
 * kernel turns tracing_on off and shrinks the buffers to their minimum
 * when the owner's descriptors close (the directory stays until the next
 * run removes it).  Kernels without disable_on_free keep such an instance
 * tracing until then.
 *
 * Pages are decoded with libtraceevent's kbuffer, like the trace.dat reader:
 * kbuffer_load_subbuffer, kbuffer_read_event / kbuffer_next_event,
 * tep_data_type / tep_data_pid.  The source merges the CPUs by timestamp
 * among the pages that are loaded ("rounds": when every CPU has run dry,
 * ks_source_next returns 0 and the caller waits).  An event is handed out
 * only if it is older than the moment each dry CPU was last found empty
 * (its "horizon"): a vCPU thread that exits on one CPU and enters again on
 * another must not have its entry merged before its exit, which that CPU
 * may write just after it was read (with clocks this process cannot read,
 * the horizon is open).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "ringpage.h"
#include "arch/arch.h"
#include "source_events.h"
#include "kvmscope/limits.h"
#include "kvmscope/live.h"
#include "source_impl.h"
#include "util/procfs.h"

struct live_cpu {
	int fd;
	struct tracefs_cpu *tcpu;
};

struct ks_live {
	struct tracefs_instance *inst;
	char name[96];
	int free_fd;       /* the instance's free_buffer, open while it lives (-1: none) */
	char clock[32];
	int nr_cpus;
	struct live_cpu *cpus;
	uint32_t page_size;
	struct ks_live_event *events;
	size_t nevents;
	struct tep_handle *tep;
	bool tsc2nsec;
	uint32_t tsc_mult, tsc_shift;
	/* the caller's hook told of the instance (ks_live_opts.track) */
	int (*track)(void *ctx, struct ks_live *l, const char *dir, bool add);
	void *track_ctx;
	bool tracked;
};

/* Tell the caller's hook that L's instance exists: it may remove the
 * directory on paths the library does not see (exit, signals). */
static int track_add(struct ks_live *l, struct ks_error *err)
{
	char *dir;
	int r;

	if (!l->track)
		return 0;
	dir = tracefs_instance_get_dir(l->inst);
	if (!dir)
		return ks_error_set(err, "%s: cannot find the instance's directory", l->name);
	r = l->track(l->track_ctx, l, dir, true);
	tracefs_put_tracing_file(dir);
	if (r < 0)
		return ks_error_set(err, "%s: the caller cannot track one more tracefs instance",
				    l->name);
	l->tracked = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* default event sets, from the architecture tables */

static void add_unique(const char **list, size_t *n, size_t max, char store[][64],
		       const char *sys, const char *name)
{
	char buf[64];
	size_t i;

	if (!sys || !name)
		return;
	snprintf(buf, sizeof(buf), "%s:%s", sys, name);
	for (i = 0; i < *n; i++)
		if (!strcmp(list[i], buf))
			return;
	if (*n >= max)
		return;
	snprintf(store[*n], 64, "%s", buf);
	list[*n] = store[*n];
	(*n)++;
}

static void add_matches(const struct ks_match *m, size_t nm, const char **list, size_t *n,
			size_t max, char store[][64])
{
	size_t i;

	for (i = 0; i < nm; i++)
		add_unique(list, n, max, store, m[i].system, m[i].name);
}

const char *const *ks_live_default_events(const char *machine, struct ks_live_event_set *set,
					     size_t *n)
{
	const char **list = set->names;
	char (*store)[64] = set->store;
	const struct ks_arch *a;
	const struct ks_event_class *c;
	const char *const *x;
	struct utsname u;

	*n = 0;
	if (!machine) {
		if (uname(&u) < 0)
			return NULL;
		machine = u.machine;
	}
	a = ks_arch_for(machine, NULL);
	if (!a)
		return NULL;
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, a->entry_system, a->entry_name);
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, a->entry_system, a->entry2_name);
	for (c = a->classes; c && c->name; c++) {
		add_matches(c->begin, KS_MAX_MATCH, list, n, KS_LIVE_DEFAULT_MAX, store);
		add_matches(c->end, KS_MAX_MATCH, list, n, KS_LIVE_DEFAULT_MAX, store);
		add_matches(c->child, KS_MAX_CHILD, list, n, KS_LIVE_DEFAULT_MAX, store);
	}
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, a->halt_system, a->halt_name);
	for (x = a->live.extra_events; x && *x; x++) {
		const char *colon = strchr(*x, ':');
		char sys[64];

		if (!colon || (size_t)(colon - *x) >= sizeof(sys))
			continue;
		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - *x), *x);
		add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, sys, colon + 1);
	}
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, "kvm", "vcpu_load");
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, "kvm", "vcpu_put");
	add_unique(list, n, KS_LIVE_DEFAULT_MAX, store, "sched", "sched_switch");
	list[*n] = NULL;
	return list;
}

/* ------------------------------------------------------------------ */
/* TSC -> ns from the perf mmap page */

#if defined(__x86_64__) || defined(__i386__)
static uint64_t now_raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* When the kernel does not export the conversion (clocksource kvm-clock,
 * hpet...), measure the TSC against CLOCK_MONOTONIC_RAW over 50 ms: the
 * relative error is the clock_gettime jitter (~100 ns) over 50 ms, ~2e-6. */
static int calibrate_tsc(uint32_t *mult, uint32_t *shift)
{
	uint64_t t0, t1, c0, c1;
	double ns_per_cycle;
	struct timespec d = { 0, 50 * 1000 * 1000 };

	t0 = now_raw_ns();
	c0 = __builtin_ia32_rdtsc();
	nanosleep(&d, NULL);
	t1 = now_raw_ns();
	c1 = __builtin_ia32_rdtsc();
	if (c1 <= c0 || t1 <= t0)
		return -1;
	ns_per_cycle = (double)(t1 - t0) / (double)(c1 - c0);
	*shift = 24;
	*mult = (uint32_t)(ns_per_cycle * (double)(1u << 24) + 0.5);
	return *mult ? 0 : -1;
}
#else
static int calibrate_tsc(uint32_t *mult, uint32_t *shift)
{
	(void)mult;
	(void)shift;
	return -1;
}
#endif

static int perf_tsc2nsec(uint32_t *mult, uint32_t *shift);

int ks_live_tsc2nsec(uint32_t *mult, uint32_t *shift)
{
	if (perf_tsc2nsec(mult, shift) == 0)
		return 0;
	return calibrate_tsc(mult, shift);
}

/* trace-cmd's way: the perf mmap page of a software event. */
static int perf_tsc2nsec(uint32_t *mult, uint32_t *shift)
{
	struct perf_event_attr pe;
	struct perf_event_mmap_page *pc;
	long psz = sysconf(_SC_PAGESIZE);
	int fd, ok = -1;
	uint32_t seq;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_DUMMY;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	fd = (int)syscall(__NR_perf_event_open, &pe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	pc = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, fd, 0);
	if (pc != MAP_FAILED) {
		do {
			seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
			if (pc->cap_user_time_zero && pc->time_mult) {
				*mult = pc->time_mult;
				*shift = pc->time_shift;
				ok = 0;
			}
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while (__atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE) != seq);
		munmap(pc, (size_t)psz);
	}
	close(fd);
	return ok;
}

/* ------------------------------------------------------------------ */
/* event selection */

static int add_event(struct ks_live *l, const char *sys, const char *name, struct ks_error *err)
{
	struct ks_live_event *e;
	size_t i;

	for (i = 0; i < l->nevents; i++)
		if (!strcmp(l->events[i].system, sys) && !strcmp(l->events[i].name, name))
			return 0;
	e = realloc(l->events, (l->nevents + 1) * sizeof(*e));
	if (!e)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	l->events = e;
	e = &e[l->nevents];
	memset(e, 0, sizeof(*e));
	e->system = strdup(sys);
	e->name = strdup(name);
	l->nevents++;
	if (!e->system || !e->name)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	return 0;
}

/* Expand SYS_GLOB:EV_GLOB over the events of tracefs; returns how many matched. */
static int expand_pattern(struct ks_live *l, const char *tdir, const char *sys_glob,
			  const char *ev_glob, struct ks_error *err)
{
	char **systems = tracefs_event_systems(tdir), **evs;
	int s, e, found = 0;

	if (!systems)
		return ks_error_set(err, "cannot list the event systems of tracefs");
	for (s = 0; systems[s]; s++) {
		if (fnmatch(sys_glob, systems[s], 0))
			continue;
		evs = tracefs_system_events(tdir, systems[s]);
		for (e = 0; evs && evs[e]; e++) {
			if (fnmatch(ev_glob, evs[e], 0))
				continue;
			if (add_event(l, systems[s], evs[e], err) < 0) {
				tracefs_list_free(evs);
				tracefs_list_free(systems);
				return -1;
			}
			found++;
		}
		tracefs_list_free(evs);
	}
	tracefs_list_free(systems);
	return found;
}

/* "sys:ev", "sys" (every event of a system), or "ev" (in any system). */
static int select_pattern(struct ks_live *l, const char *tdir, const char *pat, bool optional,
			  struct ks_error *err)
{
	char sys[128], *colon;
	int n;

	colon = strchr(pat, ':');
	if (colon) {
		if ((size_t)(colon - pat) >= sizeof(sys))
			return ks_error_set(err, "event '%s': system name too long", pat);
		memcpy(sys, pat, (size_t)(colon - pat));
		sys[colon - pat] = 0;
		n = expand_pattern(l, tdir, sys, colon + 1, err);
	} else {
		n = expand_pattern(l, tdir, pat, "*", err);
		if (n == 0)
			n = expand_pattern(l, tdir, "*", pat, err);
	}
	if (n == 0 && !optional)
		return ks_error_set(err, "event '%s' matches no event of this kernel "
				    "(see %s/available_events)", pat, tdir ? tdir : "tracefs");
	return n < 0 ? -1 : n;
}

static int select_events(struct ks_live *l, const struct ks_live_opts *o, const char *tdir,
			 struct ks_error *err)
{
	const char *const *list = o->events;
	size_t n = o->nevents, i;
	bool dflt = !list;
	struct ks_live_event_set set;

	if (dflt) {
		list = ks_live_default_events(NULL, &set, &n);
		if (!list)
			return ks_error_set(err, "no KVM event set is known for this machine; "
					    "name events with -e");
	}
	for (i = 0; i < n; i++)
		if (select_pattern(l, tdir, list[i], dflt, err) < 0)
			return -1;
	if (!l->nevents)
		return ks_error_set(err, "none of the events exists on this kernel%s",
				    dflt ? " (is the kvm module loaded?)" : "");
	return 0;
}

/* ------------------------------------------------------------------ */
/* instance setup */

static int write_file(struct ks_live *l, const char *file, const char *val, struct ks_error *err)
{
	if (tracefs_instance_file_write(l->inst, file, val) < 0)
		return ks_error_code(err, KS_E_IO, "tracefs instance %s: cannot write '%s' to %s: %s",
				    l->name, val, file, strerror(errno));
	return 0;
}

static bool clock_available(struct ks_live *l, const char *clock)
{
	char *txt = tracefs_instance_file_read(l->inst, "trace_clock", NULL), *p;
	size_t n = strlen(clock);
	bool ok = false;

	for (p = txt; p && (p = strstr(p, clock)); p += n) {
		char before = p == txt ? ' ' : p[-1], after = p[n];
		if ((before == ' ' || before == '[') && (after == ' ' || after == ']' ||
							 after == '\n' || !after)) {
			ok = true;
			break;
		}
	}
	free(txt);
	return ok;
}

static int setup_clock(struct ks_live *l, const struct ks_live_opts *o, struct ks_error *err)
{
	const char *clock = o->clock;
	struct utsname u;
	const struct ks_arch *a = uname(&u) == 0 ? ks_arch_for(u.machine, NULL) : NULL;

	if (!clock)
		clock = a && a->live.trace_clock && clock_available(l, a->live.trace_clock) ? a->live.trace_clock
										 : "local";
	if (!clock_available(l, clock))
		return ks_error_set(err, "trace clock '%s' is not offered by this kernel", clock);
	if (!strcmp(clock, "x86-tsc")) {
		if (ks_live_tsc2nsec(&l->tsc_mult, &l->tsc_shift) == 0) {
			l->tsc2nsec = true;
		} else if (!o->clock) {
			clock = "local"; /* no TSC -> ns conversion: keep nanoseconds */
		}
	}
	snprintf(l->clock, sizeof(l->clock), "%s", clock);
	return write_file(l, "trace_clock", clock, err);
}

static int setup_pids(struct ks_live *l, const struct ks_live_opts *o, struct ks_error *err)
{
	char buf[4096];
	size_t i, len = 0;

	if (!o->npids)
		return 0;
	for (i = 0; i < o->npids && len + 16 < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%d ", o->pids[i]);
	return write_file(l, "set_event_pid", buf, err);
}

static int enable_events(struct ks_live *l, const struct ks_live_opts *o, struct ks_error *err)
{
	size_t i, filtered = 0;

	for (i = 0; i < l->nevents; i++) {
		struct ks_live_event *e = &l->events[i];
		int len = 0;

		e->format = tracefs_event_file_read(l->inst, e->system, e->name, "format", &len);
		if (!e->format || len <= 0)
			return ks_error_set(err, "cannot read the format of %s:%s", e->system, e->name);
		e->format_len = (size_t)len;
		if (o->filter && tracefs_event_file_write(l->inst, e->system, e->name, "filter",
							  o->filter) >= 0)
			filtered++;
		if (tracefs_event_file_write(l->inst, e->system, e->name, "enable", "1") < 0)
			return ks_error_code(err, KS_E_IO, "cannot enable %s:%s: %s", e->system, e->name,
					    strerror(errno));
	}
	if (o->filter && !filtered)
		return ks_error_set(err, "filter '%s' is not valid for any selected event", o->filter);
	return 0;
}

/* The number at the start of TXT (up to a space or a newline), checked;
 * 0 or -1. */
static int leading_u64(const char *txt, uint64_t *v)
{
	return ks_parse_u64(txt, strcspn(txt, " \t\n"), 10, v);
}

/* The sub-buffer size: the kernel's buffer_subbuf_size_kb (6.8 and later),
 * else the page size. */
static int subbuf_size(struct ks_live *l, uint32_t *size, struct ks_error *err)
{
	char *txt = tracefs_instance_file_read(l->inst, "buffer_subbuf_size_kb", NULL);
	uint64_t kb = 0;
	int bad = txt && (leading_u64(txt, &kb) < 0 || kb == 0 || kb > 1024);

	free(txt);
	if (bad)
		return ks_error_set(err, "tracefs buffer_subbuf_size_kb: offset 0: not a size in "
				    "KiB between 1 and 1024");
	*size = kb ? (uint32_t)kb * 1024 : (uint32_t)sysconf(_SC_PAGESIZE);
	return 0;
}

/* The tep of the enabled events: this kernel's formats go through the
 * format guard as a file's do, with the caller's context (its probe). */
static int build_tep(struct ks_live *l, struct ks_ctx *ctx, struct ks_error *err)
{
	int len = 0;
	char *hp = tracefs_instance_file_read(NULL, "events/header_page", &len);
	int64_t room = KS_LIMIT_MEMORY_DEFAULT / KS_FORMAT_FIELD_COST;
	struct ks_guard_batch *b;
	size_t i;

	l->tep = tep_alloc();
	if (!l->tep || !hp) {
		free(hp);
		return ks_error_set(err, "cannot read tracefs events/header_page");
	}
	tep_set_long_size(l->tep, (int)sizeof(long));
	tep_set_page_size(l->tep, (int)l->page_size);
	tep_set_file_bigendian(l->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
			       TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(l->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (tep_parse_header_page(l->tep, hp, (unsigned long)len, (int)sizeof(long)) < 0) {
		free(hp);
		return ks_error_set(err, "cannot parse tracefs events/header_page");
	}
	free(hp);
	b = ks_guard_batch_new(ks_ctx_guard_probe(ctx));
	if (!b)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (i = 0; i < l->nevents; i++) {
		const struct ks_live_event *e = &l->events[i];
		uint64_t mem = KS_LIMIT_MEMORY_DEFAULT, fields;
		char path[256];

		/* the kernel's formats are counted as a file's are
		 * (format_guard.h): tracefs is the kernel's, but the budget
		 * holds for every reader */
		snprintf(path, sizeof(path), "tracefs events/%s/%s/format", e->system, e->name);
		if (ks_guard_format_budget(e->format, e->format_len,
					   room > 0 ? room : 0, mem, path, 0, &fields, err) < 0) {
			ks_guard_batch_free(b);
			return -1;
		}
		room -= (int64_t)fields;
		if (ks_guard_batch_add(b, e->format, e->format_len, e->system) < 0) {
			ks_guard_batch_free(b);
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		}
	}
	ks_guard_batch_parse(b, l->tep);
	ks_guard_batch_free(b);
	return 0;
}

static int open_cpus(struct ks_live *l, struct ks_error *err)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int cpu, online = 0;

	if (n < 1)
		n = 1;
	l->nr_cpus = (int)n;
	l->cpus = calloc((size_t)n, sizeof(*l->cpus));
	if (!l->cpus)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (cpu = 0; cpu < l->nr_cpus; cpu++) {
		char file[64], *path;
		struct live_cpu *c = &l->cpus[cpu];

		c->fd = -1;
		snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		path = tracefs_instance_get_file(l->inst, file);
		if (!path)
			continue;
		c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		tracefs_put_tracing_file(path);
		if (c->fd < 0)
			continue; /* offline CPU */
		c->tcpu = tracefs_cpu_alloc_fd(c->fd, (int)l->page_size, true);
		if (!c->tcpu)
			return ks_error_set(err, "cannot set up the reader of CPU %d", cpu);
		online++;
	}
	if (!online)
		return ks_error_set(err, "cannot open any per-CPU trace_pipe_raw of instance %s",
				    l->name);
	return 0;
}

/* Remove instances left by kvmscope processes that are provably gone
 * (ks_proc_id_dead).  The names of older versions ("kvmscope-PID") say
 * nothing of the namespace: they are left alone. */
static void remove_stale(void)
{
	char **list = tracefs_instances(NULL);
	unsigned long long start, ns;
	int i, pid, end;

	for (i = 0; list && list[i]; i++) {
		struct ks_proc_id id;

		end = 0;
		if (sscanf(list[i], "kvmscope-%d-%llu-%llu%n", &pid, &start, &ns, &end) != 3 ||
		    !end || list[i][end] || pid <= 0)
			continue;
		id = (struct ks_proc_id){ .pid = pid, .start = start, .pidns = ns };
		if (ks_proc_id_dead(&id)) {
			struct tracefs_instance *t = tracefs_instance_alloc(NULL, list[i]);
			if (t) {
				tracefs_instance_destroy(t);
				tracefs_instance_free(t);
			}
		}
	}
	tracefs_list_free(list);
}

/* Tracing stops when this process ends however it ends: with
 * options/disable_on_free set, closing the instance's free_buffer (which
 * the kernel does for a killed process) turns tracing_on off and frees the
 * buffers.  Best effort: a kernel without the option keeps tracing until
 * the next run removes the instance. */
static void stop_when_gone(struct ks_live *l)
{
	char *path;

	if (tracefs_instance_file_write(l->inst, "options/disable_on_free", "1") < 0)
		return;
	path = tracefs_instance_get_file(l->inst, "free_buffer");
	if (!path)
		return;
	l->free_fd = open(path, O_WRONLY | O_CLOEXEC);
	tracefs_put_tracing_file(path);
}

static int setup(struct ks_live *l, const struct ks_live_opts *o, const char *tdir,
		 struct ks_error *err)
{
	char kb[32];

	if (select_events(l, o, tdir, err) < 0)
		return -1;
	remove_stale();
	{
		struct ks_proc_id self = { .pid = (int32_t)getpid() };

		(void)ks_proc_id_of(0, &self); /* else 0s: never taken for dead */
		snprintf(l->name, sizeof(l->name), "kvmscope-%d-%llu-%llu", (int)self.pid,
			 (unsigned long long)self.start, (unsigned long long)self.pidns);
	}
	l->inst = tracefs_instance_create(l->name);
	if (!l->inst)
		return ks_error_code(err, KS_E_IO, "cannot create tracefs instance %s: %s", l->name,
				    strerror(errno));
	if (track_add(l, err) < 0)
		return -1;
	stop_when_gone(l);
	if (write_file(l, "tracing_on", "0", err) < 0 || setup_clock(l, o, err) < 0)
		return -1;
	if (o->buffer_kb) {
		snprintf(kb, sizeof(kb), "%u", o->buffer_kb);
		if (write_file(l, "buffer_size_kb", kb, err) < 0)
			return -1;
	}
	if (subbuf_size(l, &l->page_size, err) < 0)
		return -1;
	if (setup_pids(l, o, err) < 0 || enable_events(l, o, err) < 0 ||
	    build_tep(l, o->ctx, err) < 0)
		return -1;
	return open_cpus(l, err);
}

int ks_live_create(struct ks_live **out, const struct ks_live_opts *o, struct ks_error *err)
{
	struct ks_live *l;
	const char *tdir = o->tracing_dir ? o->tracing_dir : tracefs_tracing_dir();

	*out = NULL;
	if (!tdir)
		return ks_error_set(err, "tracefs is not mounted (mount -t tracefs nodev "
				    "/sys/kernel/tracing) or not accessible");
	if (access(tdir, W_OK) < 0)
		return ks_error_code(err, KS_E_IO, "%s: %s (tracing needs root or CAP_SYS_ADMIN)", tdir,
				    strerror(errno));
	l = calloc(1, sizeof(*l));
	if (!l)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	l->free_fd = -1;
	l->track = o->track;
	l->track_ctx = o->track_ctx;
	if (setup(l, o, tdir, err) < 0) {
		ks_live_destroy(l);
		return -1;
	}
	*out = l;
	return 0;
}

int ks_live_start(struct ks_live *l, struct ks_error *err)
{
	return write_file(l, "tracing_on", "1", err);
}

void ks_live_stop(struct ks_live *l)
{
	if (l && l->inst)
		tracefs_instance_file_write(l->inst, "tracing_on", "0");
}

void ks_live_destroy(struct ks_live *l)
{
	size_t i;
	int cpu;

	if (!l)
		return;
	ks_live_stop(l);
	for (cpu = 0; l->cpus && cpu < l->nr_cpus; cpu++) {
		if (l->cpus[cpu].tcpu)
			tracefs_cpu_free_fd(l->cpus[cpu].tcpu);
		if (l->cpus[cpu].fd >= 0)
			close(l->cpus[cpu].fd);
	}
	free(l->cpus);
	if (l->free_fd >= 0) /* (tracing is off already) */
		close(l->free_fd);
	if (l->inst) {
		for (i = 0; i < l->nevents; i++)
			tracefs_event_file_write(l->inst, l->events[i].system, l->events[i].name,
						 "enable", "0");
		tracefs_instance_destroy(l->inst);
		tracefs_instance_free(l->inst);
	}
	/* only now that its directory is gone: until then the caller's hook
	 * (a signal handler) may still have to remove it */
	if (l->tracked)
		l->track(l->track_ctx, l, NULL, false);
	l->tracked = false;
	for (i = 0; i < l->nevents; i++) {
		free(l->events[i].system);
		free(l->events[i].name);
		free(l->events[i].format);
	}
	free(l->events);
	if (l->tep)
		tep_free(l->tep);
	free(l);
}

int ks_live_nr_cpus(const struct ks_live *l) { return l->nr_cpus; }
bool ks_live_cpu_online(const struct ks_live *l, int cpu)
{
	return cpu >= 0 && cpu < l->nr_cpus && l->cpus[cpu].tcpu;
}
uint32_t ks_live_page_size(const struct ks_live *l) { return l->page_size; }
const char *ks_live_clock(const struct ks_live *l) { return l->clock; }
const char *ks_live_instance_name(const struct ks_live *l) { return l->name; }
struct tracefs_instance *ks_live_instance(const struct ks_live *l) { return l->inst; }
struct tep_handle *ks_live_tep(const struct ks_live *l) { return l->tep; }

size_t ks_live_events(const struct ks_live *l, const struct ks_live_event **evs)
{
	*evs = l->events;
	return l->nevents;
}

bool ks_live_has_tsc2nsec(const struct ks_live *l, uint32_t *mult, uint32_t *shift)
{
	if (!l->tsc2nsec || strcmp(l->clock, "x86-tsc"))
		return false;
	*mult = l->tsc_mult;
	*shift = l->tsc_shift;
	return true;
}

int ks_live_read_page(struct ks_live *l, int cpu, void *buf, struct ks_error *err)
{
	int n;

	if (!ks_live_cpu_online(l, cpu))
		return 0;
	n = tracefs_cpu_read(l->cpus[cpu].tcpu, buf, true);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		return ks_error_code(err, KS_E_IO, "CPU %d: cannot read trace_pipe_raw: %s", cpu,
				    strerror(errno));
	}
	return n;
}

void ks_live_wait(struct ks_live *l, int extra_fd, int timeout_ms, bool *extra_ready)
{
	struct pollfd pfd[1 + 256];
	int n = 0, cpu;

	if (extra_ready)
		*extra_ready = false;
	if (extra_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	for (cpu = 0; l && cpu < l->nr_cpus && n < 257; cpu++)
		if (l->cpus[cpu].tcpu)
			pfd[n++] = (struct pollfd){ .fd = l->cpus[cpu].fd, .events = POLLIN };
	if (poll(pfd, (nfds_t)n, timeout_ms) > 0 && extra_fd >= 0 && extra_ready)
		*extra_ready = (pfd[0].revents & (POLLIN | POLLHUP)) != 0;
}

/* The counter KEY of a per_cpu/cpuN/stats text; 0 when the kernel has no
 * such line, or not a number there (a counter not read, not misread). */
static uint64_t stat_value(const char *txt, const char *key)
{
	const char *p = strstr(txt, key);
	uint64_t v;

	return p && leading_u64(p + strlen(key), &v) == 0 ? v : 0;
}

uint64_t ks_live_kernel_lost(const struct ks_live *l)
{
	uint64_t lost = 0;
	int cpu;

	for (cpu = 0; cpu < l->nr_cpus; cpu++) {
		char file[64], *txt;

		if (!l->cpus[cpu].tcpu)
			continue;
		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
		txt = tracefs_instance_file_read(l->inst, file, NULL);
		if (!txt)
			continue;
		lost += stat_value(txt, "overrun: ") + stat_value(txt, "dropped events: ");
		free(txt);
	}
	return lost;
}

/* ------------------------------------------------------------------ */
/* page decoding (shared by the source and record's counters) */

static struct kbuffer *new_kbuffer(struct tep_handle *tep)
{
	int hps = tep_get_header_page_size(tep);

	return kbuffer_alloc(hps == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8,
			     tep_is_file_bigendian(tep) ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
}

/* The commit size must fit the page before kbuffer walks it. */
static bool page_ok(struct tep_handle *tep, const uint8_t *page, uint32_t size)
{
	int hps = tep_get_header_page_size(tep);
	uint64_t commit = 0;

	if (hps != 4 && hps != 8)
		hps = 8;
	if (size < 8u + (uint32_t)hps)
		return false;
	if (hps == 8)
		memcpy(&commit, page + 8, 8);
	else {
		uint32_t c32;
		memcpy(&c32, page + 8, 4);
		commit = c32;
	}
	commit &= (1u << 27) - 1;
	if (commit > size - 8 - (uint64_t)hps)
		return false;
	return ks_ringpage_check(page + 8 + hps, (uint32_t)commit, size - 8 - (uint32_t)hps,
				 __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, false) < 0;
}

static void fill_record(struct tep_handle *tep, int cpu, void *data, int esize, uint64_t ts,
			struct ks_record *rec)
{
	struct tep_record tr;

	memset(rec, 0, sizeof(*rec));
	rec->type = KS_REC_EVENT;
	rec->ts = rec->raw_ts = ts;
	rec->cpu = cpu;
	rec->tid = rec->pid = -1;
	rec->data = data;
	rec->size = esize > 0 ? (uint32_t)esize : 0;
	if (rec->size >= 8) {
		memset(&tr, 0, sizeof(tr));
		tr.data = data;
		tr.size = esize;
		tr.cpu = cpu;
		rec->event = tep_find_event(tep, tep_data_type(tep, &tr));
		rec->tid = tep_data_pid(tep, &tr);
	}
}

int ks_live_decode_page(struct tep_handle *tep, int cpu, const void *page, uint32_t size,
			void (*fn)(void *ctx, const struct ks_record *rec), void *ctx,
			uint64_t *missed)
{
	struct kbuffer *kb;
	unsigned long long ts;
	void *data;
	int n = 0;
	uint8_t *copy;

	if (!page_ok(tep, page, size))
		return -1;
	kb = new_kbuffer(tep);
	copy = calloc(1, tep_get_page_size(tep) > (int)size ? (size_t)tep_get_page_size(tep) : size);
	if (!kb || !copy) {
		if (kb)
			kbuffer_free(kb);
		free(copy);
		return -1;
	}
	memcpy(copy, page, size);
	kbuffer_load_subbuffer(kb, copy);
	if (missed) {
		int m = kbuffer_missed_events(kb);
		*missed = m > 0 ? (uint64_t)m : (uint64_t)(m < 0 ? 1 : 0);
	}
	for (data = kbuffer_read_event(kb, &ts); data; data = kbuffer_next_event(kb, &ts)) {
		struct ks_record rec;
		int esize = kbuffer_event_size(kb);
		if (esize < 0 || (uint8_t *)data < copy || (uint8_t *)data + esize > copy + size) {
			n = -1;
			break;
		}
		if (fn) {
			fill_record(tep, cpu, data, kbuffer_event_size(kb), ts, &rec);
			fn(ctx, &rec);
		}
		n++;
	}
	kbuffer_free(kb);
	free(copy);
	return n;
}

/* ------------------------------------------------------------------ */
/* the source */

#define TGID_SLOTS 4096

struct src_cpu {
	uint8_t *page;
	struct kbuffer *kb;
	bool loaded, has, dry, lost_pending;
	uint64_t dry_at;           /* the clock's "now" before its last empty read */
	int64_t missed;
	void *data;
	int size;
	uint64_t ts;
};

struct live_source {
	struct ks_source src;      /* first */
	struct ks_live *l;
	struct src_cpu *cpus;
	uint8_t *hold;             /* the page of the record delivered last */
	struct { int32_t tid, tgid; } tgid[TGID_SLOTS];
};

static int32_t read_tgid(int32_t tid)
{
	char buf[512];
	const char *p;
	uint64_t v;

	if (tid <= 0)
		return tid == 0 ? 0 : -1;
	if (ks_read_proc(tid, "status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -1;
	p += 6;
	p += strspn(p, " \t");
	return leading_u64(p, &v) == 0 && v <= INT32_MAX ? (int32_t)v : -1; /* -1: unknown */
}

static int32_t lookup_tgid(struct live_source *ls, int32_t tid)
{
	uint32_t h = ((uint32_t)tid * 2654435761u) % TGID_SLOTS;

	if (ls->tgid[h].tid != tid || tid == 0) {
		ls->tgid[h].tid = tid;
		ls->tgid[h].tgid = read_tgid(tid);
	}
	return ls->tgid[h].tgid;
}

static uint64_t live_ts(const struct live_source *ls, uint64_t ts)
{
	if (ls->l->tsc2nsec && !strcmp(ls->l->clock, "x86-tsc"))
		return (uint64_t)(((unsigned __int128)ts * ls->l->tsc_mult) >> ls->l->tsc_shift);
	return ts;
}

/* The trace clock's "now", as events carry it; UINT64_MAX when this
 * process cannot read that clock. */
static uint64_t clock_now(const struct live_source *ls)
{
	const char *c = ls->l->clock;
	struct timespec t;
	clockid_t id;

#if defined(__x86_64__) || defined(__i386__)
	if (!strcmp(c, "x86-tsc"))
		return live_ts(ls, __builtin_ia32_rdtsc());
#endif
	if (!strcmp(c, "mono"))
		id = CLOCK_MONOTONIC;
	else if (!strcmp(c, "mono_raw"))
		id = CLOCK_MONOTONIC_RAW;
	else if (!strcmp(c, "boot"))
		id = CLOCK_BOOTTIME;
	else
		return UINT64_MAX;
	if (clock_gettime(id, &t) != 0)
		return UINT64_MAX;
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Peek at C's next event, reading a new page when the current one ends. */
static int cpu_advance(struct live_source *ls, int cpu, struct ks_error *err)
{
	struct src_cpu *c = &ls->cpus[cpu];
	unsigned long long ts;
	void *data = NULL;
	uint64_t now;
	int n;

	c->has = false;
	if (c->loaded)
		data = kbuffer_next_event(c->kb, &ts);
	while (!data) {
		c->loaded = false;
		if (c->dry)
			return 0;
		now = clock_now(ls);
		n = ks_live_read_page(ls->l, cpu, c->page, err);
		if (n < 0)
			return -1;
		if (n == 0) {
			c->dry = true;
			c->dry_at = now;
			return 0;
		}
		if ((uint32_t)n < ls->l->page_size)
			memset(c->page + n, 0, ls->l->page_size - (uint32_t)n);
		if (!page_ok(ls->l->tep, c->page, ls->l->page_size))
			return ks_error_set(err, "CPU %d: ring buffer page with a bad commit size", cpu);
		kbuffer_load_subbuffer(c->kb, c->page);
		c->loaded = true;
		c->missed = kbuffer_missed_events(c->kb);
		data = kbuffer_read_event(c->kb, &ts);
		if (data && c->missed)
			c->lost_pending = true;
	}
	c->data = data;
	c->size = kbuffer_event_size(c->kb);
	if (c->size < 0 || (uint8_t *)data < c->page ||
	    (uint8_t *)data + c->size > c->page + ls->l->page_size)
		return ks_error_set(err, "CPU %d: event of %d bytes runs past its page", cpu, c->size);
	c->ts = live_ts(ls, ts);
	c->has = true;
	return 0;
}

static int pick_cpu(struct live_source *ls)
{
	int cpu, best = -1;

	for (cpu = 0; cpu < ls->l->nr_cpus; cpu++)
		if (ls->cpus[cpu].has && (best < 0 || ls->cpus[cpu].ts < ls->cpus[best].ts))
			best = cpu;
	return best;
}

/* Whether CPU's next event may go: older than every dry CPU's horizon. */
static bool in_horizon(const struct live_source *ls, int cpu)
{
	int i;

	for (i = 0; i < ls->l->nr_cpus; i++)
		if (!ls->cpus[i].has && ls->cpus[i].dry_at <= ls->cpus[cpu].ts)
			return false;
	return true;
}

static int new_round(struct live_source *ls, struct ks_error *err)
{
	int cpu;

	for (cpu = 0; cpu < ls->l->nr_cpus; cpu++) {
		ls->cpus[cpu].dry = false;
		if (!ls->cpus[cpu].has && cpu_advance(ls, cpu, err) < 0)
			return -1;
	}
	return 0;
}

static int live_next(struct ks_source *src, struct ks_record *rec, struct ks_error *err)
{
	struct live_source *ls = (struct live_source *)src;
	struct src_cpu *c;
	int cpu = pick_cpu(ls);
	if (cpu < 0 || !in_horizon(ls, cpu)) {
		if (new_round(ls, err) < 0)
			return -1;
		cpu = pick_cpu(ls);
		if (cpu < 0 || !in_horizon(ls, cpu))
			return 0;
	}
	c = &ls->cpus[cpu];
	if (c->lost_pending) {
		c->lost_pending = false;
		memset(rec, 0, sizeof(*rec));
		rec->type = KS_REC_LOST;
		rec->ts = rec->raw_ts = c->ts;
		rec->cpu = cpu;
		rec->tid = rec->pid = -1;
		rec->lost = c->missed > 0 ? (uint64_t)c->missed : 0;
		src->stats.lost_records++;
		src->stats.lost_events += rec->lost;
		return 1;
	}
	fill_record(ls->l->tep, cpu, c->data, c->size, c->ts, rec);
	if (!rec->event)
		src->stats.unknown_events++;
	else
		rec->pid = lookup_tgid(ls, rec->tid);
	/* the next read may overwrite the CPU's page: keep a copy of the
	 * payload valid until the next call */
	memcpy(ls->hold, c->data, (size_t)rec->size);
	rec->data = ls->hold;
	if (cpu_advance(ls, cpu, err) < 0)
		return -1;
	return 1;
}

static void live_close(struct ks_source *src)
{
	struct live_source *ls = (struct live_source *)src;
	int cpu;

	for (cpu = 0; ls->cpus && cpu < ls->l->nr_cpus; cpu++) {
		free(ls->cpus[cpu].page);
		if (ls->cpus[cpu].kb)
			kbuffer_free(ls->cpus[cpu].kb);
	}
	free(ls->cpus);
	free(ls->hold);
	free(ls->src.path);
	free(ls);
}

static const struct ks_source_ops live_ops = {
	.name = "live",
	.next = live_next,
	.close = live_close,
};

static void fill_info(struct live_source *ls)
{
	struct ks_source_info *info = &ls->src.info;
	struct utsname u;

	info->format = "live tracefs";
	if (uname(&u) == 0) {
		snprintf(info->arch, sizeof(info->arch), "%.31s", u.machine);
		snprintf(info->hostname, sizeof(info->hostname), "%s", u.nodename);
		snprintf(info->osrelease, sizeof(info->osrelease), "%s", u.release);
	}
	snprintf(info->clock, sizeof(info->clock), "%s", ls->l->clock);
	info->nr_cpus = ls->l->nr_cpus;
	info->big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

int ks_live_source_open(struct ks_source **out, struct ks_live *l, struct ks_error *err)
{
	struct live_source *ls = calloc(1, sizeof(*ls));
	int cpu;

	*out = NULL;
	if (!ls)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	ls->src.ops = &live_ops;
	ls->src.limits = *ks_limits_or_default(NULL);
	ls->l = l;
	ls->src.tep = l->tep; /* owned by L */
	ls->src.path = strdup(l->name);
	ls->cpus = calloc((size_t)l->nr_cpus, sizeof(*ls->cpus));
	ls->hold = malloc(l->page_size);
	if (!ls->src.path || !ls->cpus || !ls->hold)
		goto oom;
	for (cpu = 0; cpu < l->nr_cpus; cpu++) {
		ls->cpus[cpu].page = calloc(1, l->page_size);
		ls->cpus[cpu].kb = new_kbuffer(l->tep);
		if (!ls->cpus[cpu].page || !ls->cpus[cpu].kb)
			goto oom;
	}
	fill_info(ls);
	*out = &ls->src;
	return 0;
oom:
	live_close(&ls->src);
	return ks_error_code(err, KS_E_NOMEM, "out of memory");
}
