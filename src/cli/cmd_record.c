/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_record.c - kvmscope record: trace this host's KVM events (or any
 * events) into a trace.dat that trace-cmd and KernelShark open.
 *
 * A private tracefs instance (live.h) holds the events, clock, pid list and
 * filter; the main loop drains every CPU's trace_pipe_raw page by page
 * (non-blocking reads, a poll() with a 100 ms timeout when all are empty)
 * and hands the raw pages to the trace.dat writer, which spools them and
 * lays out (and compresses) the file at the end.  Runs for -d SECONDS,
 * until SIGINT/SIGTERM, or while a command given after "--" runs.  The
 * instance is removed on every exit path (live_signals.c's atexit registry).
 *
 * Who is who: the thread -> process map comes from /proc, never from
 * tracefs's option record-tgid (a global switch of the whole tracefs: a
 * record killed by SIGKILL could not turn it back, and the host's own
 * `trace` text would carry a TGID column from then on).  Each thread that
 * an event names (common_pid) is looked up in /proc/TID/status when it is
 * first seen, within a drain of its page, and every second the threads of
 * every process in /proc are sampled, for those that end before their
 * events are drained.  Each process is named while it runs (its comm and
 * QEMU's -name from /proc/PID; again when it renames itself) and all is
 * stored in the trace.dat's task map option (kvmscope/vmident.h), so that
 * stat names the VMs of a recording as top names them live.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/limits.h"
#include "kvmscope/live.h"
#include "kvmscope/tracedat_writer.h"
#include "kvmscope/vmident.h"
#include "util/hashmap.h"
#include "util/procfs.h"

static const struct opt_cmd record_cmd = {
	.name = "record",
	.synopsis = "[options] [-- COMMAND [ARGS...]]",
	.intro = "Record this host's KVM events into a trace.dat (trace-cmd's format), through a\n"
		 "private tracefs instance.  Stops after -d SECONDS, on Ctrl-C / SIGTERM, or when\n"
		 "COMMAND exits.\n",
	.outro = "See kvmscope-record(1).\n",
	.stop_at_operand = true,
};

#define MAX_EVENTS 128
#define MAX_PIDS 256
#define DRAIN_PAGES 8192 /* pages per CPU per round before looking at the others */

struct record_args {
	const char *output;
	const char *events[MAX_EVENTS];
	size_t nevents;
	int32_t pids[MAX_PIDS];
	int npids;
	const char *filter, *clock;
	double duration;
	long long buffer_kb;
	struct tdw_format fmt;
	bool quiet;
	char **cmd;
};

/* What is known of one thread. */
struct who_tid {
	int32_t tgid;          /* -1: not known (yet) */
	bool seen;             /* an event of the recording names it */
};

struct who {
	struct ks_hmap tids;   /* tid -> struct who_tid */
	struct ks_vmident v;   /* the processes named so far */
	struct tep_handle *tep; /* common_pid of the records */
	int32_t last_tid;      /* the thread of the previous record looked at */
	double last;           /* when /proc was sampled */
};

struct record_state {
	struct who who;
	struct ks_live *live;
	struct ks_tdw *w;
	struct kbuffer *kb;
	uint8_t *page;
	uint64_t *events_cpu;
	uint64_t events, pages, bytes, missed;
	double start;
	pid_t child;
	int child_status;
	bool child_done;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *take_events(const char *arg, void *value)
{
	struct record_args *a = value;

	if (a->nevents >= MAX_EVENTS)
		return "can be given at most 128 times";
	a->events[a->nevents++] = arg;
	return NULL;
}

static const char *take_pids(const char *arg, void *value)
{
	struct record_args *a = value;

	if (parse_pid_list(arg, a->pids, MAX_PIDS, &a->npids) < 0)
		return "takes process ids separated by commas (at most 256 in all)";
	return NULL;
}

static void parse_args(int argc, char **argv, struct record_args *a)
{
	const struct opt opts[] = {
		OPT_STRING('o', "output", &a->output, "FILE", "output file (default trace.dat)"),
		OPT_CALLBACK('e', "event", a, "SYS:EVENT",
			     "an event to record instead of the KVM set; globs allowed\n"
			     "(kvm:*, sched:sched_sw*); 'SYS' alone means all of SYS;\n"
			     "repeat for more", take_events),
		OPT_CALLBACK('p', "pid", a, "PID[,PID]",
			     "only events of these tasks (set_event_pid); each must exist",
			     take_pids),
		OPT_STRING('f', "filter", &a->filter, "EXPR",
			   "tracefs filter for every event that accepts it"),
		OPT_STRING('C', "clock", &a->clock, "CLOCK",
			   "trace clock (default x86-tsc on x86, with TSC2NSEC;\n"
			   "local elsewhere)"),
		OPT_SECONDS('d', "duration", &a->duration,
			    "stop after SECS seconds (fractions allowed)", 1, 10000000000LL),
		OPT_INT('b', "buffer-kb", &a->buffer_kb, "KB",
			"per-CPU ring buffer size (default 16384)", 4, 1 << 22),
		OPT_TDW_FORMAT(&a->fmt),
		OPT_FLAG('q', "quiet", &a->quiet, "no progress line and no summary"),
		OPT_END(),
	};
	int first;

	a->output = "trace.dat";
	a->fmt = (struct tdw_format)TDW_FORMAT_INIT;
	a->buffer_kb = 16384;
	/* options end at the first operand, the command to run */
	first = parse_options(&record_cmd, opts, argc, argv);
	if (first < argc)
		a->cmd = argv + first;
	tdw_format_resolve("record", opts, &a->fmt);
	cli_check_pids(a->pids, a->npids);
}

/* ------------------------------------------------------------------ */
/* metadata */

static void add_text(struct record_state *s, int (*fn)(struct ks_tdw *, const char *, size_t,
						       struct ks_error *),
		     const char *tracefs_file, const char *what)
{
	struct ks_error err;
	int len = 0;
	char *txt = tracefs_instance_file_read(NULL, tracefs_file, &len);

	if (!txt)
		die("cannot read tracefs %s (%s)", tracefs_file, what);
	if (fn(s->w, txt, (size_t)len, &err) < 0)
		die("%s", err.msg);
	free(txt);
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n + 65536 > cap) {
			char *nb = realloc(buf, cap = (cap ? cap * 2 : 1 << 20));
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static void add_ftrace_formats(struct record_state *s)
{
	char **evs = tracefs_system_events(NULL, "ftrace");
	struct ks_error err;
	int i;

	for (i = 0; evs && evs[i]; i++) {
		int len = 0;
		char *txt = tracefs_event_file_read(NULL, "ftrace", evs[i], "format", &len);
		if (txt && len > 0 && ks_tdw_add_ftrace_format(s->w, txt, (size_t)len, &err) < 0)
			die("%s", err.msg);
		free(txt);
	}
	tracefs_list_free(evs);
}

static void add_metadata(struct record_state *s)
{
	const struct ks_live_event *evs;
	size_t n = ks_live_events(s->live, &evs), i, len;
	struct ks_error err;
	char *ksyms;

	add_text(s, ks_tdw_set_header_page, "events/header_page", "header page");
	add_text(s, ks_tdw_set_header_event, "events/header_event", "header event");
	add_ftrace_formats(s);
	for (i = 0; i < n; i++)
		if (ks_tdw_add_event_format(s->w, evs[i].system, evs[i].format, evs[i].format_len,
					    &err) < 0)
			die("%s", err.msg);
	ksyms = read_whole("/proc/kallsyms", &len);
	if (ksyms && ks_tdw_set_kallsyms(s->w, ksyms, len, &err) < 0)
		die("%s", err.msg);
	free(ksyms);
	add_text(s, ks_tdw_set_printk_formats, "printk_formats", "printk formats");
}

static void add_cmdlines(struct record_state *s)
{
	struct ks_error err;
	int len = 0;
	char *txt = tracefs_instance_file_read(NULL, "saved_cmdlines", &len);

	if (txt && len > 0 && ks_tdw_set_cmdlines(s->w, txt, (size_t)len, &err) < 0)
		die("%s", err.msg);
	free(txt);
}

/* ------------------------------------------------------------------ */
/* who is who (see the top) */

#define WHO_MAX_TIDS (1u << 20) /* threads sampled from /proc, at most */

/* Earlier versions of record turned record-tgid on and said so in this
 * file; the last of them to end turned it off, but one killed by SIGKILL
 * left both behind. */
#define OLD_TGID_MARK "/run/kvmscope-record-tgid"

/* Whether a kvmscope other than this one (instance MINE) may trace: an
 * instance whose owner is not provably gone. */
static bool other_kvmscope(const char *mine)
{
	char **list = tracefs_instances(NULL), **i;
	unsigned long long start, ns;
	bool other = false;
	int pid, end;

	for (i = list; i && *i && !other; i++) {
		struct ks_proc_id id;

		if (strncmp(*i, "kvmscope-", 9) || !strcmp(*i, mine))
			continue;
		end = 0;
		if (sscanf(*i, "kvmscope-%d-%llu-%llu%n", &pid, &start, &ns, &end) == 3 && end &&
		    !(*i)[end]) {
			id = (struct ks_proc_id){ .pid = pid, .start = start, .pidns = ns };
			other = !ks_proc_id_dead(&id);
		} else {
			/* an older name, "kvmscope-PID" */
			pid = atoi(*i + 9);
			other = pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
		}
	}
	tracefs_list_free(list);
	return other;
}

/* Put record-tgid back where an earlier version left it on, once no
 * other kvmscope traces (one of those versions may need it still). */
static void old_tgid_leftover(const char *mine)
{
	if (access(OLD_TGID_MARK, F_OK) || other_kvmscope(mine))
		return;
	tracefs_option_disable(NULL, TRACEFS_OPTION_RECORD_TGID);
	unlink(OLD_TGID_MARK);
}

static void who_start(struct who *w, struct tep_handle *tep)
{
	ks_hmap_init(&w->tids, sizeof(struct who_tid));
	w->tep = tep;
	w->last_tid = -1;
}

/* Name process TGID while it runs, again when it renamed itself (prctl,
 * exec: its -name is read again then), and its -name again while it has
 * none: an exec sets the new comm before the new command line, which
 * /proc/PID/cmdline reads empty meanwhile (a QEMU seen then kept its comm
 * for a name).  A process gone keeps its names. */
static void who_name(struct who *w, int32_t tgid)
{
	const struct ks_source_proc *p = ks_vmident_proc(&w->v, tgid);
	char comm[64], name[256];
	bool same;

	if (ks_read_proc(tgid, "comm", comm, sizeof(comm)) <= 0)
		return;
	comm[strcspn(comm, "\n")] = 0;
	same = p && !strcmp(p->comm, comm);
	if (same && p->name[0])
		return;
	if (!ks_qemu_name(tgid, name, sizeof(name)))
		name[0] = 0;
	if (same && !name[0])
		return;
	if (ks_vmident_add_proc(&w->v, tgid, comm, name) < 0)
		die("out of memory");
}

/* The process of thread TID from /proc/TID/status (a thread's directory
 * is there though /proc lists only processes); -1 when it is gone. */
static int32_t read_tgid(int32_t tid)
{
	char buf[512], *p;
	uint64_t v;

	if (ks_read_proc(tid, "status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nTgid:")))
		return -1;
	p += 6 + strspn(p + 6, " \t");
	return ks_parse_u64_prefix(p, strlen(p), 10, &v) && v > 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

/* An event of thread TID was recorded. */
static void who_saw(struct who *w, int32_t tid)
{
	struct who_tid *t;
	bool created;

	if (tid == w->last_tid)
		return;
	w->last_tid = tid;
	if (tid <= 0) /* the idle task */
		return;
	t = ks_hmap_put(&w->tids, (uint64_t)tid, &created);
	if (!t)
		die("out of memory");
	if (created)
		t->tgid = -1;
	if (!t->seen) { /* looked up once; a thread gone keeps its sampled process */
		int32_t tgid = read_tgid(tid);

		t->seen = true;
		if (tgid > 0)
			t->tgid = tgid;
		if (t->tgid > 0)
			who_name(w, t->tgid);
	}
}

/* Every second: the threads of every process (kept for those of the
 * recording that end before their events are drained), and each process
 * of the recording named again (it may have renamed itself). */
static void who_poll(struct who *w)
{
	DIR *d = opendir("/proc"), *td;
	struct dirent *de, *te;
	struct who_tid *t;
	size_t pos = 0;
	uint64_t tid;
	bool created;
	char path[64];

	while (d && (de = readdir(d))) {
		int32_t pid = (int32_t)atoi(de->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		if (!(td = opendir(path)))
			continue;
		while ((te = readdir(td))) {
			int32_t id = (int32_t)atoi(te->d_name);

			if (id <= 0 || (w->tids.len >= WHO_MAX_TIDS && !ks_hmap_get(&w->tids, (uint64_t)id)))
				continue;
			t = ks_hmap_put(&w->tids, (uint64_t)id, &created);
			if (!t)
				die("out of memory");
			if (created)
				t->seen = false;
			t->tgid = pid; /* a tid reused by another process since: the latest */
		}
		closedir(td);
	}
	if (d)
		closedir(d);
	while ((t = ks_hmap_next(&w->tids, &pos, &tid)))
		if (t->seen && t->tgid > 0)
			who_name(w, t->tgid);
	w->last = now_s();
}

/* The last look, and the map of the threads of the recording into the
 * file. */
static void who_finish(struct who *w, struct ks_tdw *tdw)
{
	struct ks_error err;
	size_t pos = 0, len = 0;
	uint64_t tid;
	struct who_tid *t;
	char *txt;

	while ((t = ks_hmap_next(&w->tids, &pos, &tid)))
		if (t->seen && t->tgid > 0)
			who_name(w, t->tgid);
	pos = 0;
	while ((t = ks_hmap_next(&w->tids, &pos, &tid)))
		if (t->seen && t->tgid > 0 && ks_vmident_add_task(&w->v, (int32_t)tid, t->tgid) < 0)
			die("out of memory");
	txt = ks_vmident_format(&w->v, &len);
	if (!txt || len > UINT32_MAX)
		die("out of memory");
	if (ks_tdw_add_option(tdw, KS_VMIDENT_OPTION, txt, (uint32_t)len, &err) < 0)
		die("%s", err.msg);
	free(txt);
	ks_vmident_free(&w->v);
	ks_hmap_free(&w->tids);
}

/* The output's slot in the command line's list of temporary files. */
static int out_slot = -1;

static struct ks_tdw *create_writer(const struct record_args *a, struct ks_live *l,
				    struct ks_outfile *of)
{
	static char uname_buf[512], tmpdir[4096];
	struct ks_tdw_opts o = { 0 };
	struct ks_error err;
	struct utsname u;
	struct ks_tdw *w;
	char *dup;

	o.file_version = a->fmt.version;
	o.compression = a->fmt.compression;
	o.nr_cpus = (uint32_t)ks_live_nr_cpus(l);
	o.page_size = ks_live_page_size(l);
	o.long_size = sizeof(long);
	o.kernel_long_size = (uint32_t)tep_get_header_page_size(ks_live_tep(l));
	if (o.kernel_long_size != 4 && o.kernel_long_size != 8)
		o.kernel_long_size = sizeof(long);
	o.clock = ks_live_clock(l);
	o.has_tsc2nsec = ks_live_has_tsc2nsec(l, &o.tsc_mult, &o.tsc_shift);
	if (uname(&u) == 0) {
		snprintf(uname_buf, sizeof(uname_buf), "%s %s %s %s %s", u.sysname, u.nodename,
			 u.release, u.version, u.machine);
		o.uname = uname_buf;
	}
	/* spool next to the output: /tmp may be a small tmpfs */
	dup = strdup(a->output);
	if (!dup)
		die("out of memory");
	snprintf(tmpdir, sizeof(tmpdir), "%s", dirname(dup));
	free(dup);
	o.tmpdir = tmpdir;
	w = ks_tdw_create_out(of, &o, &err);
	if (!w) {
		cli_output_release(out_slot);
		die("%s", err.msg);
	}
	return w;
}

/* ------------------------------------------------------------------ */
/* data */

static uint64_t count_events(struct record_state *s, uint64_t *missed)
{
	unsigned long long ts;
	uint64_t n = 0;
	void *d;
	int m;

	kbuffer_load_subbuffer(s->kb, s->page);
	m = kbuffer_missed_events(s->kb);
	*missed = m > 0 ? (uint64_t)m : 0;
	for (d = kbuffer_read_event(s->kb, &ts); d; d = kbuffer_next_event(s->kb, &ts)) {
		struct tep_record r = { .data = d, .size = kbuffer_event_size(s->kb) };

		who_saw(&s->who, tep_data_pid(s->who.tep, &r));
		n++;
	}
	return n;
}

/* Copy up to MAX pages of CPU; returns the number copied. */
static int drain_cpu(struct record_state *s, int cpu, int max)
{
	uint32_t ps = ks_live_page_size(s->live);
	struct ks_error err;
	int got = 0, n;
	uint64_t missed;

	while (got < max) {
		n = ks_live_read_page(s->live, cpu, s->page, &err);
		if (n < 0)
			die("%s", err.msg);
		if (n == 0)
			break;
		if ((uint32_t)n < ps)
			memset(s->page + n, 0, ps - (uint32_t)n);
		s->events_cpu[cpu] += count_events(s, &missed);
		s->missed += missed;
		if (ks_tdw_add_page(s->w, (uint32_t)cpu, s->page, ps, &err) < 0)
			die("%s", err.msg);
		s->pages++;
		s->bytes += ps;
		got++;
	}
	return got;
}

static int drain_all(struct record_state *s, int max)
{
	int cpu, total = 0;

	for (cpu = 0; cpu < ks_live_nr_cpus(s->live); cpu++)
		total += drain_cpu(s, cpu, max);
	return total;
}

static uint64_t total_events(const struct record_state *s)
{
	uint64_t n = 0;
	int cpu;

	for (cpu = 0; cpu < ks_live_nr_cpus(s->live); cpu++)
		n += s->events_cpu[cpu];
	return n;
}

static void progress(struct record_state *s, double *last, uint64_t *last_events)
{
	double t = now_s();
	uint64_t ev = total_events(s);

	if (t - *last < 1.0)
		return;
	fprintf(stderr, "\r%7.1f s  %9.1f MB  %10.0f events/s  lost %llu   ", t - s->start,
		(double)s->bytes / 1e6, (double)(ev - *last_events) / (t - *last),
		(unsigned long long)s->missed);
	fflush(stderr);
	*last = t;
	*last_events = ev;
}

static void start_child(struct record_state *s, char **cmd)
{
	s->child = fork();
	if (s->child < 0)
		die("cannot fork: %s", strerror(errno));
	if (s->child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "kvmscope: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
}

static bool child_exited(struct record_state *s)
{
	if (s->child <= 0 || s->child_done)
		return s->child_done;
	if (waitpid(s->child, &s->child_status, WNOHANG) == s->child)
		s->child_done = true;
	return s->child_done;
}

static void run_loop(struct record_state *s, const struct record_args *a)
{
	double last = now_s();
	uint64_t last_events = 0;
	bool tty = !a->quiet && isatty(2);

	while (!cli_live_interrupted()) {
		if (a->duration > 0 && now_s() - s->start >= a->duration)
			break;
		if (a->cmd && child_exited(s))
			break;
		/* Drain, then sleep: reading as soon as anything is there would
		 * copy half-empty pages.  poll() wakes when buffer_percent of a
		 * CPU's buffer is full; the timeout bounds the latency. */
		drain_all(s, DRAIN_PAGES);
		if (now_s() - s->who.last >= 1.0)
			who_poll(&s->who);
		ks_live_wait(NULL, -1, 50, NULL);
		if (tty)
			progress(s, &last, &last_events);
	}
	if (tty)
		fputc('\n', stderr);
}

static void summary(struct record_state *s, const struct record_args *a, uint64_t kernel_lost)
{
	struct stat st;
	int cpu;

	if (a->quiet)
		return;
	fprintf(stderr, "kvmscope record: %llu events in %.2f s (", (unsigned long long)total_events(s),
		now_s() - s->start);
	for (cpu = 0; cpu < ks_live_nr_cpus(s->live); cpu++)
		fprintf(stderr, "%sCPU%d %llu", cpu ? ", " : "", cpu,
			(unsigned long long)s->events_cpu[cpu]);
	fprintf(stderr, "), %llu pages (%.1f MB) -> %s (%.1f MB)\n", (unsigned long long)s->pages,
		(double)s->bytes / 1e6, a->output,
		stat(a->output, &st) == 0 ? (double)st.st_size / 1e6 : 0.0);
	if (s->missed || kernel_lost)
		fprintf(stderr, "kvmscope record: LOST EVENTS: %llu reported in pages, %llu overrun/dropped "
			"by the kernel; use a larger -b or fewer events\n",
			(unsigned long long)s->missed, (unsigned long long)kernel_lost);
	else
		fprintf(stderr, "kvmscope record: no events lost\n");
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct ks_live_opts o = KS_LIVE_OPTS_INIT;
	struct record_state s = { 0 };
	struct ks_outfile *of;
	struct ks_error err;
	int r;
	uint64_t kernel_lost;
	int rc = 0;

	parse_args(argc, argv, &a);
	o.events = a.nevents ? a.events : NULL;
	o.nevents = a.nevents;
	o.clock = a.clock;
	o.filter = a.filter;
	o.pids = a.pids;
	o.npids = (size_t)a.npids;
	o.buffer_kb = (uint32_t)a.buffer_kb;
	o.track = cli_live_track;
	o.ctx = cli_ctx();
	/* the output first: a refused name stops the run before tracing, and
	 * the temporary file's removal on signals is in place before
	 * cli_live_catch_signals() (whose second-signal exit chains to it).
	 * An existing file is kept as NAME.old when the new one is complete. */
	of = cli_output_open(a.output, NULL, KS_OUTFILE_NO_STDOUT | KS_OUTFILE_KEEP_OLD);
	out_slot = cli_output_slot(of);
	cli_output_catch_signals();
	cli_live_catch_signals();
	if (ks_live_create(&s.live, &o, &err) < 0)
		die("%s", err.msg);
	s.w = create_writer(&a, s.live, of);
	add_metadata(&s);
	s.page = calloc(1, ks_live_page_size(s.live));
	s.events_cpu = calloc((size_t)ks_live_nr_cpus(s.live), sizeof(*s.events_cpu));
	s.kb = kbuffer_alloc(tep_get_header_page_size(ks_live_tep(s.live)) == 4 ? KBUFFER_LSIZE_4 :
			     KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!s.page || !s.events_cpu || !s.kb)
		die("out of memory");
	if (ks_live_start(s.live, &err) < 0)
		die("%s", err.msg);
	who_start(&s.who, ks_live_tep(s.live));
	old_tgid_leftover(ks_live_instance_name(s.live));
	s.start = now_s();
	if (a.cmd)
		start_child(&s, a.cmd);
	run_loop(&s, &a);
	ks_live_stop(s.live);
	while (drain_all(&s, DRAIN_PAGES) > 0)
		;
	kernel_lost = ks_live_kernel_lost(s.live);
	add_cmdlines(&s);
	who_finish(&s.who, s.w);
	r = ks_tdw_close(s.w, &err);
	cli_output_release(out_slot);
	if (r < 0)
		die("%s", err.msg);
	summary(&s, &a, kernel_lost);
	if (a.cmd && s.child > 0) {
		if (!s.child_done) {
			kill(s.child, SIGTERM);
			waitpid(s.child, &s.child_status, 0);
		}
		if (WIFEXITED(s.child_status))
			rc = WEXITSTATUS(s.child_status);
	}
	if (cli_live_interrupted() && !a.quiet)
		fprintf(stderr, "kvmscope record: stopped by signal %d\n", cli_live_signal());
	kbuffer_free(s.kb);
	free(s.page);
	free(s.events_cpu);
	ks_live_destroy(s.live);
	return rc;
}
