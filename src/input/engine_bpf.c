/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine_bpf.c - the BPF engine (engine.h): exits paired and aggregated in
 * the kernel by src/input/bpf/exits.bpf.c, read from its maps here.
 *
 * Loading: the running kernel's kvm:* formats are read through libtracefs
 * and libtraceevent; the architecture tables (src/arch) say which events
 * are the exit (the vmexit class's begin event), the entry and the nested
 * markers (the child events of the "nested" class), and which fields hold
 * the reason, the ISA and the vCPU; their offsets, sizes and signs and the
 * histogram's bounds (ks_lat_bucket_ns) go into the program's .rodata
 * before the load, so that one object runs on every kernel whatever the
 * record layout (exits.bpf.c's top comment says more).  Map sizes come
 * from the config; whatever does not fit is counted in the overflow
 * fields.
 *
 * Lifetime: every program is attached through a bpf_link this process
 * owns and never pins, so the kernel detaches and frees everything when
 * the process's descriptors close, also when it is killed by SIGKILL
 * (tests/input/engine_bpf_test.sh checks the kernel's lists).
 *
 * Messages: the library installs no libbpf print callback (that is
 * process-wide: the command line silences libbpf in main.c).  A load
 * failure's reason comes from the verifier log, which libbpf writes into
 * a buffer of this engine (bpf_program__set_log_buf), and from errno.
 *
 * The pending map is a plain hash of max_threads entries (a full one is
 * counted in overflow_threads); a vCPU thread that ended after an exit
 * would keep its entry, so reads remove the entries of threads that no
 * longer exist (/proc/PID/task/TID; thread ids are the init PID
 * namespace's, as the tracepoints see them; sweep_pending says more).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event-parse.h>
#include <tracefs.h>

#include "arch/arch.h"
#include "engine_bpf.h"
#include "engine_impl.h"
#include "exits.skel.h"
#include "kvmscope/field.h"
#include "kvmscope/latency.h"

_Static_assert(KS_BPF_NBUCKETS == KS_LAT_NBUCKETS, "exits_bpf.h's bucket count");
_Static_assert(sizeof(((struct ks_bpf_exit_val *)0)->bucket) ==
	       sizeof(((struct ks_engine_exit *)0)->bucket), "bucket arrays");

#define LOG_SIZE (64 * 1024)
#define DEF_THREADS 16384
#define DEF_SERIES 65536
#define DEF_PROCS 1024
#define MAX_LINKS 256

/* A process's count of one kvm:* event that came through the ring. */
struct sp_tp {
	int32_t pid;
	uint32_t idx;
	uint64_t count;
};

struct bpf_engine {
	struct ks_engine base;          /* first: engine_impl.h */
	struct ks_exits_bpf *skel;
	const struct ks_arch *arch;
	struct bpf_link *links[MAX_LINKS];
	size_t nlinks;
	char **tp_names;                /* cookie -> kvm:* event name */
	size_t ntp;
	int ncpus;
	uint32_t max_series, max_procs;
	void *vals;                     /* one lookup's per-CPU values */
	void *bkeys, *bvals;            /* one batch's keys and values (map_each) */
	bool batch_ok;                  /* the kernel has batched lookups */
	uint64_t last_sweep;            /* CLOCK_MONOTONIC of sweep_pending's last walk */
	char *log;                      /* the verifier's log of a failed load */
	struct ring_buffer *spill_rb;   /* the ring "spilled" (exits_bpf.h) */
	struct ks_engine_exit *sp_exits; /* what came through it, sorted (cmp_exit) */
	size_t nsp_exits, cap_sp_exits;
	struct sp_tp *sp_tps;           /* sorted by (pid, idx) */
	size_t nsp_tps, cap_sp_tps;
	uint64_t sp_ovf_series, sp_ovf_procs; /* spilled with no room left here */
	struct ks_bpf_field f_reason, f_isa, f_exit_vcpu, f_entry_vcpu;
};

static struct bpf_engine *B(struct ks_engine *e) { return (struct bpf_engine *)e; }
static const struct bpf_engine *CB(const struct ks_engine *e)
{
	return (const struct bpf_engine *)e;
}

/* ---- why BPF cannot be used: one line a user can act on ---- */

static bool has_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	uint64_t eff;

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return geteuid() == 0;
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	/* CAP_BPF (39) and CAP_PERFMON (38) since 5.8; CAP_SYS_ADMIN before */
	return (eff >> 21 & 1) || ((eff >> 39 & 1) && (eff >> 38 & 1));
}

/* Whether the kernel's lockdown forbids reading kernel memory (the
 * records) from BPF: "[confidentiality]" selected. */
static bool locked_down(void)
{
	char buf[128] = "";
	int fd = open("/sys/kernel/security/lockdown", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, "[confidentiality]") != NULL;
}

/* The last non-empty line of the verifier's log, the one that says why. */
static const char *log_reason(char *log, char *buf, size_t len)
{
	char *end = log + strnlen(log, LOG_SIZE), *p;

	while (end > log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (p = end; p > log && p[-1] != '\n'; p--)
		;
	snprintf(buf, len, "%.*s", (int)(end - p), p);
	return buf;
}

/* ---- the field layout the program gets ---- */

static int set_field(struct ks_bpf_field *out, struct tep_event *ev, const char *name)
{
	struct ks_field f;

	memset(out, 0, sizeof(*out));
	if (!ev || !name || ks_field_resolve(&f, ev, name) < 0 || f.swap || f.offset < 0 ||
	    f.offset + f.size > KS_BPF_REC_MAX)
		return -1;
	out->off = (uint16_t)f.offset;
	out->size = (uint8_t)f.size;
	out->is_signed = f.is_signed;
	return 0;
}

static int attach(struct bpf_engine *b, struct bpf_program *prog, const char *sys,
		  const char *name, uint64_t cookie, struct ks_error *err)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = cookie);
	struct bpf_link *l;

	if (b->nlinks == MAX_LINKS)
		return ks_error_set(err, "BPF engine: more than %d tracepoints to attach",
				    MAX_LINKS);
	l = bpf_program__attach_tracepoint_opts(prog, sys, name, &o);
	if (!l) {
		int e = errno;
		return ks_error_set(err, "BPF engine unavailable: cannot attach to %s:%s: %s%s",
				    sys, name, strerror(e),
				    cookie && e == EINVAL ? " (BPF cookies need Linux 5.15)" : "");
	}
	b->links[b->nlinks++] = l;
	return 0;
}

static struct tep_event *event(struct tep_handle *tep, const char *sys, const char *name)
{
	return sys && name ? tep_find_event_by_name(tep, sys, name) : NULL;
}

/* Exits: the programs' fields and attachments, from the arch tables. */
static int setup_exits(struct bpf_engine *b, struct tep_handle *tep, struct ks_error *err)
{
	const struct ks_arch *a = b->arch;
	const struct ks_event_class *c = a ? a->classes : NULL;
	const struct ks_match *m = c && c->name ? &c->begin[0] : NULL;
	struct tep_event *exit_ev, *entry_ev;

	if (!m || !m->name)
		return ks_error_set(err, "BPF engine unavailable: no architecture's exit event among the kernel's kvm:* tracepoints");
	if (c->compose || m->cond_field || m->key2_field)
		return ks_error_set(err, "BPF engine unavailable: %s exits are keyed in two steps, which the BPF program does not do",
				    a->name);
	exit_ev = event(tep, m->system, m->name);
	entry_ev = event(tep, a->entry_system, a->entry_name);
	if (!exit_ev || !entry_ev)
		return ks_error_set(err, "BPF engine unavailable: no %s:%s or %s:%s tracepoint",
				    m->system, m->name, a->entry_system, a->entry_name);
	if (set_field(&b->f_reason, exit_ev, m->key_field) < 0)
		return ks_error_set(err, "BPF engine unavailable: %s:%s has no usable %s field",
				    m->system, m->name, m->key_field ? m->key_field : "key");
	set_field(&b->f_isa, exit_ev, a->isa_field);
	set_field(&b->f_exit_vcpu, exit_ev, a->exit_vcpu_field);
	set_field(&b->f_entry_vcpu, entry_ev, a->entry_vcpu_field);
	return 0;
}

static int attach_exits(struct bpf_engine *b, struct tep_handle *tep, struct ks_error *err)
{
	const struct ks_arch *a = b->arch;
	const struct ks_match *m = &a->classes[0].begin[0];
	const struct ks_event_class *nested = ks_arch_class(a, "nested");
	size_t i;

	if (attach(b, b->skel->progs.ks_exit, m->system, m->name, 0, err) < 0 ||
	    attach(b, b->skel->progs.ks_entry, a->entry_system, a->entry_name, 0, err) < 0)
		return -1;
	if (a->entry2_name && event(tep, a->entry_system, a->entry2_name) &&
	    attach(b, b->skel->progs.ks_entry, a->entry_system, a->entry2_name, 0, err) < 0)
		return -1;
	/* an exit of the nested (L2) guest: the class's child events */
	for (i = 0; nested && i < KS_MAX_CHILD && nested->child[i].name; i++) {
		const struct ks_match *ch = &nested->child[i];

		if (event(tep, ch->system, ch->name) &&
		    attach(b, b->skel->progs.ks_nested, ch->system, ch->name, 0, err) < 0)
			return -1;
	}
	return 0;
}

/* The kvm:* events, in ID order: cookie i counts tp_names[i]. */
static int list_tps(struct bpf_engine *b, struct tep_handle *tep, struct ks_error *err)
{
	struct tep_event **evs = tep_list_events(tep, TEP_EVENT_SORT_ID);
	int n = tep_get_events_count(tep), i;

	b->tp_names = calloc((size_t)n + 1, sizeof(*b->tp_names));
	if (!b->tp_names || !evs)
		return ks_error_set(err, "BPF engine: out of memory");
	for (i = 0; i < n && evs[i]; i++) {
		if (strcmp(evs[i]->system, "kvm"))
			continue;
		if (!(b->tp_names[b->ntp] = strdup(evs[i]->name)))
			return ks_error_set(err, "BPF engine: out of memory");
		b->ntp++;
	}
	return 0;
}

/* ---- ops ---- */

static void bpf_wait(struct ks_engine *e, int extra_fd, int timeout_ms, bool *extra_ready)
{
	struct pollfd p = { .fd = extra_fd, .events = POLLIN };

	(void)e;
	if (extra_ready)
		*extra_ready = false;
	/* nothing to drain: the kernel aggregates; sleep until the timeout,
	 * EXTRA_FD or a signal (EINTR) */
	if (poll(&p, extra_fd >= 0 ? 1 : 0, timeout_ms) > 0 && extra_ready &&
	    (p.revents & (POLLIN | POLLHUP | POLLERR)))
		*extra_ready = true;
}

static bool thread_gone(int32_t pid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)pid, tid);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);   /* bpf_ktime_get_ns's clock */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Remove the pending exits of threads that ended (see the top comment),
 * at most every SWEEP_NS (a walk of the map costs two system calls per
 * vCPU thread), and only exits older than AGE_NS: where the thread ids
 * are not this PID namespace's, every thread looks gone, and only an exit
 * handled for longer than that (a paused VM's) is dropped, its entry
 * then counted unpaired. */
#define SWEEP_NS 10000000000ull
#define AGE_NS 1000000000ull

static void sweep_pending(struct bpf_engine *b)
{
	int fd = bpf_map__fd(b->skel->maps.pending);
	uint32_t key, next, gone[64];
	struct ks_bpf_pending p;
	uint64_t now = now_ns();
	size_t n = 0, i;
	void *prev = NULL;

	if (b->last_sweep && now - b->last_sweep < SWEEP_NS)
		return;
	b->last_sweep = now;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &p) == 0 && p.ts + AGE_NS < now &&
		    thread_gone(p.pid, key) && n < sizeof(gone) / sizeof(gone[0]))
			gone[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
}

static int cmp_exit(const void *x, const void *y)
{
	const struct ks_engine_exit *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	if (a->isa != b->isa)
		return a->isa < b->isa ? -1 : 1;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

static int cmp_tp(const void *x, const void *y)
{
	const struct ks_engine_tp *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(q = realloc(*p, n * size)))
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* Call FN on each element of the per-CPU hash FD (keys of KSZ bytes, VSZ
 * bytes per CPU), which appends to the snapshot's array counted by *N: in
 * batches of CHUNK (BPF_MAP_LOOKUP_BATCH: a few system calls for hundreds
 * of series instead of two per series), else key by key: on a kernel
 * without batches (before 5.6), or when one hash bucket holds more than
 * CHUNK elements (ENOSPC; what was appended is dropped and read again). */
#define CHUNK 64

typedef int (*elem_fn)(struct bpf_engine *b, struct ks_engine_snapshot *s, const void *key,
		       const void *vals, struct ks_error *err);

static int map_each(struct bpf_engine *b, int fd, size_t ksz, size_t vsz, elem_fn fn,
		    struct ks_engine_snapshot *s, size_t *n_out, struct ks_error *err)
{
	size_t stride = vsz * (size_t)b->ncpus, n0 = *n_out;
	uint32_t token = 0, n, i;
	bool first = true, done = false;
	unsigned char key[32], next[32];
	void *prev = NULL;

	if (!b->bkeys && (!(b->bkeys = malloc(CHUNK * 32)) || !(b->bvals = malloc(CHUNK * stride))))
		return ks_error_set(err, "BPF engine: out of memory");
	while (b->batch_ok && !done) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		int r;

		n = CHUNK;
		r = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, b->bkeys, b->bvals, &n, &o);
		if (r < 0 && errno != ENOENT) {
			if (errno == ENOSPC) {   /* a crowded bucket: this time key by key */
				*n_out = n0;
				break;
			}
			if (!first || (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP))
				return ks_error_set(err, "BPF engine: cannot read its maps: %s",
						    strerror(errno));
			b->batch_ok = false;   /* not supported: key by key from now on */
			break;
		}
		done = r < 0;   /* ENOENT: the last batch */
		first = false;
		for (i = 0; i < n; i++)
			if (fn(b, s, (unsigned char *)b->bkeys + i * ksz,
			       (unsigned char *)b->bvals + i * stride, err) < 0)
				return -1;
	}
	if (done)
		return 0;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, ksz);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, b->bvals) == 0 && fn(b, s, key, b->bvals, err) < 0)
			return -1;
	}
	return 0;
}

/* COUNT times (SUM in all, MIN to MAX, BUCKET[] the histogram) added to X. */
static void merge_times(struct ks_engine_exit *x, uint64_t count, uint64_t sum, uint64_t min,
			uint64_t max, const uint64_t *bucket)
{
	int i;

	if (!count)
		return;
	if (!x->count || min < x->min_ns)
		x->min_ns = min;
	if (max > x->max_ns)
		x->max_ns = max;
	x->count += count;
	x->sum_ns += sum;
	for (i = 0; i <= KS_BPF_NBUCKETS; i++)
		x->bucket[i] += bucket[i];
}

static int add_exit(struct bpf_engine *b, struct ks_engine_snapshot *s, const void *k,
		    const void *vals, struct ks_error *err)
{
	const struct ks_bpf_exit_key *key = k;
	const struct ks_bpf_exit_val *v = vals;
	struct ks_engine_exit *x;
	int c;

	if (grow((void **)&s->exits, &s->cap_exits, s->nexits + 1, sizeof(*s->exits)) < 0)
		return ks_error_set(err, "BPF engine: out of memory");
	x = &s->exits[s->nexits++];
	memset(x, 0, sizeof(*x));
	x->pid = key->pid;
	x->tid = key->tid;
	x->vcpu = key->vcpu;
	x->isa = key->isa;
	x->level = key->level;
	x->reason = key->reason;
	for (c = 0; c < b->ncpus; c++)
		merge_times(x, v[c].count, v[c].sum_ns, v[c].min_ns, v[c].max_ns,
			    (const uint64_t *)v[c].bucket);
	return 0;
}

static int add_tp(struct bpf_engine *b, struct ks_engine_snapshot *s, const void *k,
		  const void *vals, struct ks_error *err)
{
	const struct ks_bpf_tp_key *key = k;
	const uint64_t *v = vals;
	struct ks_engine_tp *t;
	int c;

	if (key->idx >= b->ntp)
		return 0;
	if (grow((void **)&s->tps, &s->cap_tps, s->ntps + 1, sizeof(*s->tps)) < 0)
		return ks_error_set(err, "BPF engine: out of memory");
	t = &s->tps[s->ntps++];
	memset(t, 0, sizeof(*t));
	t->pid = key->pid;
	snprintf(t->name, sizeof(t->name), "%s", b->tp_names[key->idx]);
	for (c = 0; c < b->ncpus; c++)
		t->count += v[c];
	return 0;
}

static int read_exits(struct bpf_engine *b, struct ks_engine_snapshot *s, struct ks_error *err)
{
	if (map_each(b, bpf_map__fd(b->skel->maps.series), sizeof(struct ks_bpf_exit_key),
		     sizeof(struct ks_bpf_exit_val), add_exit, s, &s->nexits, err) < 0)
		return -1;
	if (s->nexits > 1)   /* exits is NULL while nothing was read */
		qsort(s->exits, s->nexits, sizeof(*s->exits), cmp_exit);
	return 0;
}

static int read_tps(struct bpf_engine *b, struct ks_engine_snapshot *s, struct ks_error *err)
{
	if (map_each(b, bpf_map__fd(b->skel->maps.tp_counts), sizeof(struct ks_bpf_tp_key),
		     sizeof(uint64_t), add_tp, s, &s->ntps, err) < 0)
		return -1;
	if (s->ntps > 1)
		qsort(s->tps, s->ntps, sizeof(*s->tps), cmp_tp);
	return 0;
}

/* ---- the ring "spilled": exits and events the kernel had no element for ---- */

/* Index of the first of A[0, N) (sorted by CMP) not before KEY. */
static size_t lower(const void *a, size_t n, size_t size, const void *key,
		    int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp((const char *)a + mid * size, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_sp_tp(const void *x, const void *y)
{
	const struct sp_tp *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The element of KEY in the sorted array *A (N, CAP; of SIZE bytes),
 * inserted zeroed (its key copied) where absent; NULL when it would pass
 * MAX elements or memory cannot be had. */
static void *sp_slot(void **a, size_t *n, size_t *cap, size_t size, const void *key, size_t max,
		     int (*cmp)(const void *, const void *))
{
	size_t i = lower(*a, *n, size, key, cmp);
	char *p;

	if (i < *n && !cmp((char *)*a + i * size, key))
		return (char *)*a + i * size;
	if (*n >= max || grow(a, cap, *n + 1, size) < 0)
		return NULL;
	p = (char *)*a + i * size;
	memmove(p + size, p, (*n - i) * size);
	memcpy(p, key, size);
	(*n)++;
	return p;
}

static void add_one(struct ks_engine_exit *x, uint64_t ns, uint32_t b)
{
	if (!x->count || ns < x->min_ns)
		x->min_ns = ns;
	if (ns > x->max_ns)
		x->max_ns = ns;
	x->count++;
	x->sum_ns += ns;
	if (b <= KS_BPF_NBUCKETS)
		x->bucket[b]++;
}

static uint32_t tp_entries(const struct bpf_engine *b);

static int on_spill(void *ctx, void *data, size_t size)
{
	struct bpf_engine *b = ctx;
	const struct ks_bpf_spill *sp = data;

	if (size < sizeof(*sp))
		return 0;
	if (sp->kind == KS_BPF_SPILL_EXIT) {
		struct ks_engine_exit k = { .pid = sp->exit.pid, .tid = sp->exit.tid,
					    .vcpu = sp->exit.vcpu, .isa = sp->exit.isa,
					    .level = sp->exit.level, .reason = sp->exit.reason };
		struct ks_engine_exit *x = sp_slot((void **)&b->sp_exits, &b->nsp_exits,
						   &b->cap_sp_exits, sizeof(k), &k, b->max_series,
						   cmp_exit);

		if (x)
			add_one(x, sp->ns, sp->bucket);
		else
			b->sp_ovf_series++;
	} else if (sp->kind == KS_BPF_SPILL_TP) {
		struct sp_tp k = { .pid = sp->tp.pid, .idx = sp->tp.idx };
		struct sp_tp *t = sp_slot((void **)&b->sp_tps, &b->nsp_tps, &b->cap_sp_tps,
					  sizeof(k), &k, tp_entries(b), cmp_sp_tp);

		if (t)
			t->count++;
		else
			b->sp_ovf_procs++;
	}
	return 0;
}

/* What came through the ring added to the snapshot read from the maps
 * (both sorted): to its series or event counts, or as ones of its own. */
static int add_spilled(struct bpf_engine *b, struct ks_engine_snapshot *s, struct ks_error *err)
{
	size_t i, n = s->nexits, m = s->ntps;

	for (i = 0; i < b->nsp_exits; i++) {
		const struct ks_engine_exit *y = &b->sp_exits[i];
		size_t j = lower(s->exits, n, sizeof(*y), y, cmp_exit);
		struct ks_engine_exit *x;

		if (j < n && !cmp_exit(&s->exits[j], y)) {
			x = &s->exits[j];
		} else {
			if (grow((void **)&s->exits, &s->cap_exits, s->nexits + 1, sizeof(*y)) < 0)
				return ks_error_set(err, "BPF engine: out of memory");
			x = &s->exits[s->nexits++];
			*x = (struct ks_engine_exit){ .pid = y->pid, .tid = y->tid, .vcpu = y->vcpu,
						      .isa = y->isa, .level = y->level,
						      .reason = y->reason };
		}
		merge_times(x, y->count, y->sum_ns, y->min_ns, y->max_ns, y->bucket);
	}
	for (i = 0; i < b->nsp_tps; i++) {
		const struct sp_tp *y = &b->sp_tps[i];
		struct ks_engine_tp k = { .pid = y->pid }, *t = NULL;
		size_t j;

		if (y->idx >= b->ntp)
			continue;
		snprintf(k.name, sizeof(k.name), "%s", b->tp_names[y->idx]);
		j = lower(s->tps, m, sizeof(k), &k, cmp_tp);
		if (j < m && !cmp_tp(&s->tps[j], &k))
			t = &s->tps[j];
		if (!t) {
			if (grow((void **)&s->tps, &s->cap_tps, s->ntps + 1, sizeof(*t)) < 0)
				return ks_error_set(err, "BPF engine: out of memory");
			t = &s->tps[s->ntps++];
			memset(t, 0, sizeof(*t));
			t->pid = y->pid;
			snprintf(t->name, sizeof(t->name), "%s", b->tp_names[y->idx]);
		}
		t->count += y->count;
	}
	if (s->nexits > n)
		qsort(s->exits, s->nexits, sizeof(*s->exits), cmp_exit);
	if (s->ntps > m)
		qsort(s->tps, s->ntps, sizeof(*s->tps), cmp_tp);
	return 0;
}

static int bpf_read(struct ks_engine *e, struct ks_engine_snapshot *s, struct ks_error *err)
{
	struct bpf_engine *b = B(e);
	int fd = bpf_map__fd(b->skel->maps.stats);
	uint64_t st[KS_BPF_NSTATS] = { 0 };
	const uint64_t *v = b->vals;
	uint32_t i;
	size_t k;
	int c;

	for (i = 0; i < KS_BPF_NSTATS; i++) {
		if (bpf_map_lookup_elem(fd, &i, b->vals) < 0)
			return ks_error_set(err, "BPF engine: cannot read its counters: %s",
					    strerror(errno));
		for (c = 0; c < b->ncpus; c++)
			st[i] += v[c];
	}
	sweep_pending(b);
	if (b->spill_rb && ring_buffer__consume(b->spill_rb) < 0)
		return ks_error_set(err, "BPF engine: cannot read its ring: %s", strerror(errno));
	s->nexits = 0;
	s->ntps = 0;
	if (read_exits(b, s, err) < 0 || read_tps(b, s, err) < 0 || add_spilled(b, s, err) < 0)
		return -1;
	snprintf(s->engine, sizeof(s->engine), "bpf");
	snprintf(s->arch, sizeof(s->arch), "%s", b->arch ? b->arch->name : "");
	s->isa[0] = 0;
	if (b->arch && b->arch->isa_name)
		snprintf(s->isa, sizeof(s->isa), "%s", b->arch->isa_name);
	else if (b->arch && b->arch->isa_field)
		for (k = 0; k < s->nexits && !s->isa[0]; k++)
			if (s->exits[k].isa != KS_ISA_UNKNOWN)
				snprintf(s->isa, sizeof(s->isa), "%s",
					 ks_x86_isa_name(s->exits[k].isa));
	s->overflow_threads = st[KS_BPF_OVF_THREADS];
	s->overflow_series = st[KS_BPF_OVF_SERIES] + b->sp_ovf_series;
	s->overflow_procs = st[KS_BPF_OVF_PROCS] + b->sp_ovf_procs;
	s->unpaired = st[KS_BPF_UNPAIRED];
	s->lost = 0;
	s->ts_ns = now_ns();
	return 0;
}

static void bpf_close(struct ks_engine *e)
{
	struct bpf_engine *b = B(e);
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	ring_buffer__free(b->spill_rb);
	ks_exits_bpf__destroy(b->skel);
	free(b->sp_exits);
	free(b->sp_tps);
	for (i = 0; b->tp_names && i < b->ntp; i++)
		free(b->tp_names[i]);
	free(b->tp_names);
	free(b->vals);
	free(b->bkeys);
	free(b->bvals);
	free(b->log);
	free(b);
}

static const struct ks_engine_ops bpf_ops = {
	.name = "bpf",
	.wait = bpf_wait,
	.read = bpf_read,
	.close = bpf_close,
};

/* ---- open ---- */

/* tp_counts holds one entry per (process, event): room for max_procs
 * processes each firing every kvm:* event (allocated as used). */
static uint32_t tp_entries(const struct bpf_engine *b)
{
	uint64_t n = (uint64_t)b->max_procs * (b->ntp ? b->ntp : 1);

	return n > (1u << 24) ? 1u << 24 : (uint32_t)n;
}

static int load(struct bpf_engine *b, const struct ks_engine_config *cfg,
		const struct ks_engine_bpf_opts *o, struct ks_error *err)
{
	struct ks_exits_bpf *s = b->skel;
	uint32_t threads = cfg->max_threads ? cfg->max_threads : DEF_THREADS;
	size_t i;
	int r;

	s->rodata->cfg_pid = cfg->pid;
	s->rodata->cfg_spill_all = o->spill_all;
	s->rodata->cfg_default_isa = KS_ISA_UNKNOWN;
	s->rodata->f_exit_reason = b->f_reason;
	s->rodata->f_exit_isa = b->f_isa;
	s->rodata->f_exit_vcpu = b->f_exit_vcpu;
	s->rodata->f_entry_vcpu = b->f_entry_vcpu;
	for (i = 0; i < KS_BPF_NBUCKETS; i++)
		s->rodata->bounds[i] = ks_lat_bucket_ns[i];
	if (bpf_map__set_max_entries(s->maps.pending, threads) < 0 ||
	    bpf_map__set_max_entries(s->maps.series, b->max_series) < 0 ||
	    bpf_map__set_max_entries(s->maps.tp_counts, tp_entries(b)) < 0)
		return ks_error_set(err, "BPF engine: cannot size its maps: %s", strerror(errno));
	bpf_program__set_autoload(s->progs.ks_test_feed, o->test_prog);
	/* programs that will not run are not loaded (nor verified) */
	bpf_program__set_autoload(s->progs.ks_exit, cfg->exits || o->test_prog);
	bpf_program__set_autoload(s->progs.ks_entry, cfg->exits || o->test_prog);
	bpf_program__set_autoload(s->progs.ks_nested, cfg->exits || o->test_prog);
	bpf_program__set_autoload(s->progs.ks_count, cfg->tracepoints || o->test_prog);
	if (!(b->log = calloc(1, LOG_SIZE)))
		return ks_error_set(err, "BPF engine: out of memory");
	bpf_program__set_log_buf(s->progs.ks_exit, b->log, LOG_SIZE);
	bpf_program__set_log_buf(s->progs.ks_entry, b->log, LOG_SIZE);
	bpf_program__set_log_buf(s->progs.ks_nested, b->log, LOG_SIZE);
	bpf_program__set_log_buf(s->progs.ks_count, b->log, LOG_SIZE);
	bpf_program__set_log_buf(s->progs.ks_test_feed, b->log, LOG_SIZE);
	r = ks_exits_bpf__load(s);
	if (r < 0) {
		char why[200];
		int e = -r;

		if (e == EPERM || e == EACCES)
			return ks_error_set(err, "BPF engine unavailable: the kernel refused to load its program (%s: not enough privilege, or locked down)",
					    strerror(e));
		return ks_error_set(err, "BPF engine unavailable: cannot load its program: %s%s%s",
				    strerror(e), b->log[0] ? ": " : "",
				    b->log[0] ? log_reason(b->log, why, sizeof(why)) : "");
	}
	b->spill_rb = ring_buffer__new(bpf_map__fd(s->maps.spilled), on_spill, b, NULL);
	if (!b->spill_rb)
		return ks_error_set(err, "BPF engine: cannot open its ring: %s", strerror(errno));
	return 0;
}

int ks_engine_bpf_open_opts(struct ks_engine **out, const struct ks_engine_config *cfg,
			    const struct ks_engine_bpf_opts *o, struct ks_error *err)
{
	static const char *const systems[] = { "kvm", NULL };
	struct ks_engine_bpf_opts none = { 0 };
	struct tep_handle *tep = NULL;
	struct bpf_engine *b;
	size_t i;
	int r = -1;

	*out = NULL;
	if (!o)
		o = &none;
	if (!has_caps())
		return ks_error_set(err, "BPF engine unavailable: not root (needs CAP_BPF and CAP_PERFMON)");
	if (locked_down())
		return ks_error_set(err, "BPF engine unavailable: the kernel is locked down (confidentiality: BPF may not read kernel memory)");
	if (access("/sys/kernel/tracing/events/kvm", F_OK) < 0 &&
	    access("/sys/kernel/debug/tracing/events/kvm", F_OK) < 0)
		return ks_error_set(err, "BPF engine unavailable: no kvm:* tracepoints (is the kvm module loaded? is tracefs mounted?)");
	if (!(b = calloc(1, sizeof(*b))))
		return ks_error_set(err, "BPF engine: out of memory");
	b->base.ops = &bpf_ops;
	b->batch_ok = true;
	b->max_series = cfg->max_series ? cfg->max_series : DEF_SERIES;
	b->max_procs = cfg->max_procs ? cfg->max_procs : DEF_PROCS;
	/* the per-CPU values of one lookup: the kernel's possible CPUs */
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		ks_error_set(err, "BPF engine: cannot count the possible CPUs");
		goto out;
	}
	if (!(b->vals = calloc((size_t)b->ncpus, sizeof(struct ks_bpf_exit_val)))) {
		ks_error_set(err, "BPF engine: out of memory");
		goto out;
	}
	tep = tracefs_local_events_system(NULL, systems);
	if (!tep || !tep_get_events_count(tep)) {
		ks_error_set(err, "BPF engine unavailable: cannot read the kvm:* tracepoints' formats from tracefs");
		goto out;
	}
	b->arch = ks_arch_detect(tep);
	if ((cfg->exits || o->test_prog) && setup_exits(b, tep, err) < 0)
		goto out;
	if (list_tps(b, tep, err) < 0)
		goto out;
	if (!(b->skel = ks_exits_bpf__open())) {
		ks_error_set(err, "BPF engine: cannot open its program: %s", strerror(errno));
		goto out;
	}
	if (load(b, cfg, o, err) < 0)
		goto out;
	if (!o->no_attach) {
		if (cfg->exits && attach_exits(b, tep, err) < 0)
			goto out;
		for (i = 0; cfg->tracepoints && i < b->ntp; i++)
			if (attach(b, b->skel->progs.ks_count, "kvm", b->tp_names[i], i, err) < 0)
				goto out;
	}
	r = 0;
out:
	if (tep)
		tep_free(tep);
	if (r < 0)
		bpf_close(&b->base);
	else
		*out = &b->base;
	return r;
}

int ks_engine_bpf_open(struct ks_engine **out, const struct ks_engine_config *cfg,
		       struct ks_error *err)
{
	return ks_engine_bpf_open_opts(out, cfg, NULL, err);
}

/* ---- the tests' doors (engine_bpf.h) ---- */

int ks_engine_bpf_feed(struct ks_engine *e, const struct ks_bpf_test_ev *ev, struct ks_error *err)
{
	struct bpf_engine *b = B(e);
	struct ks_bpf_test_ev copy = *ev;
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &copy, .ctx_size_in = sizeof(copy));
	int fd = bpf_program__fd(b->skel->progs.ks_test_feed);

	if (fd < 0)
		return ks_error_set(err, "BPF engine: the test program is not loaded");
	if (bpf_prog_test_run_opts(fd, &o) < 0)
		return ks_error_set(err, "BPF engine: test run: %s", strerror(errno));
	return 0;
}

void ks_engine_bpf_fields(const struct ks_engine *e, struct ks_bpf_field *reason,
			  struct ks_bpf_field *isa, struct ks_bpf_field *exit_vcpu,
			  struct ks_bpf_field *entry_vcpu)
{
	const struct bpf_engine *b = CB(e);

	*reason = b->f_reason;
	*isa = b->f_isa;
	*exit_vcpu = b->f_exit_vcpu;
	*entry_vcpu = b->f_entry_vcpu;
}

static int obj_id(int fd, bool link, uint32_t *id)
{
	struct bpf_prog_info pi;
	struct bpf_link_info li;
	uint32_t len = link ? sizeof(li) : sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(fd, link ? (void *)&li : (void *)&pi, &len) < 0)
		return -1;
	*id = link ? li.id : pi.id;
	return 0;
}

int ks_engine_bpf_ids(const struct ks_engine *e, uint32_t *prog_ids, size_t *nprogs,
		      uint32_t *link_ids, size_t *nlinks, size_t max, struct ks_error *err)
{
	const struct bpf_engine *b = CB(e);
	struct bpf_program *p;
	size_t i;

	*nprogs = *nlinks = 0;
	bpf_object__for_each_program(p, b->skel->obj) {
		int fd = bpf_program__fd(p);

		if (fd < 0 || *nprogs == max)
			continue;
		if (obj_id(fd, false, &prog_ids[*nprogs]) < 0)
			return ks_error_set(err, "BPF engine: program info: %s", strerror(errno));
		(*nprogs)++;
	}
	for (i = 0; i < b->nlinks && *nlinks < max; i++) {
		if (obj_id(bpf_link__fd(b->links[i]), true, &link_ids[*nlinks]) < 0)
			return ks_error_set(err, "BPF engine: link info: %s", strerror(errno));
		(*nlinks)++;
	}
	return 0;
}

size_t ks_engine_bpf_ntp(const struct ks_engine *e) { return CB(e)->ntp; }

const char *ks_engine_bpf_tp_name(const struct ks_engine *e, size_t i)
{
	return i < CB(e)->ntp ? CB(e)->tp_names[i] : NULL;
}
