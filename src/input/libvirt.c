/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libvirt.c - KVM's statistics of libvirt's domains (see kvmstats.h).
 *
 * libvirt owns the QMP monitor of each QEMU it runs (a second QMP client
 * cannot connect), and passes QEMU's query-stats on through its own API:
 * virConnectGetAllDomainStats() with the "vm" and "vcpu" groups gives, for
 * every active domain, typed parameters such as "vm.mmu_cache_miss.sum" and
 * "vcpu.1.halt_wait_ns.sum" (libvirt 8.9 and later).  A read-only
 * connection is enough; no monitor command is sent, so the domains are not
 * marked tainted.
 *
 * libvirt.so.0 is opened with dlopen() for each connection and each of its
 * functions looked up by name into the connection's own table, typed by
 * libvirt-dev's declarations (a call with wrong arguments does not
 * compile).  kvmscope so runs, and says why not, where libvirt is not
 * installed.  RTLD_NODELETE keeps the library mapped after dlclose():
 * libvirt leaves thread-local data and destructors behind.
 *
 * The daemon is a peer like any other: libvirt's client API has no
 * deadline of its own (a daemon that accepts and never answers blocks a
 * call for ever), so each call that talks to it (open, the statistics,
 * the close) runs in a thread of its own while the caller waits at most
 * the deadline, and ends its wait within 100 ms once the context's cancel
 * function says so (a close within 500 ms).  A call given up on keeps running: what it returns
 * later (a connection, records) is freed by its thread, which holds its
 * own reference to the connection (libvirt's connections are
 * thread-safe).  At most LV_MAX_HUNG such calls run per context: no
 * thread, socket or memory piles up against a daemon that hangs for
 * good; the next calls fail at once until one of them ends.  What a
 * daemon returns is bounded (domains, statistics) and its words (error
 * messages) escaped.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "ctx_impl.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/limits.h"
#include "util/procfs.h"
#include "util/text.h"

#define LIBVIRT_SONAME "libvirt.so.0"
#define PID_RESCAN_S 5 /* at most one /proc scan for unknown QEMUs this often */
#define LV_TIMEOUT_MS 2000
#define LV_MAX_HUNG 4         /* calls given up on and still running, per context */
#define LV_MAX_DOMAINS 16384  /* libvirt's own limit of a domain list */
#define LV_MAX_STATS (1u << 18) /* statistics of one reading, all domains */
#define LV_SLICE_NS 100000000L /* the cancel function is asked this often */
#define LV_CLOSE_CANCEL_S 0.5 /* a close still waited for once cancelled */

struct lv_fns {
	__typeof__(virConnectOpenReadOnly) *open_ro;
	__typeof__(virConnectClose) *close;
	__typeof__(virConnectRef) *ref;
	__typeof__(virConnectGetURI) *get_uri;
	__typeof__(virConnectGetAllDomainStats) *all_stats;
	__typeof__(virDomainStatsRecordListFree) *stats_free;
	__typeof__(virDomainGetName) *dom_name;
	__typeof__(virDomainGetUUIDString) *dom_uuid;
	__typeof__(virGetLastErrorMessage) *last_error;
	__typeof__(virSetErrorFunc) *set_error_func;
};

struct lv_sym {
	const char *name;
	size_t off;
};

static const struct lv_sym lv_syms[] = {
	{ "virConnectOpenReadOnly", offsetof(struct lv_fns, open_ro) },
	{ "virConnectClose", offsetof(struct lv_fns, close) },
	{ "virConnectRef", offsetof(struct lv_fns, ref) },
	{ "virConnectGetURI", offsetof(struct lv_fns, get_uri) },
	{ "virConnectGetAllDomainStats", offsetof(struct lv_fns, all_stats) },
	{ "virDomainStatsRecordListFree", offsetof(struct lv_fns, stats_free) },
	{ "virDomainGetName", offsetof(struct lv_fns, dom_name) },
	{ "virDomainGetUUIDString", offsetof(struct lv_fns, dom_uuid) },
	{ "virGetLastErrorMessage", offsetof(struct lv_fns, last_error) },
	{ "virSetErrorFunc", offsetof(struct lv_fns, set_error_func) },
};

/* A domain's QEMU process, by the domain's UUID. */
struct lv_pid {
	char uuid[VIR_UUID_STRING_BUFLEN];
	int32_t pid;
};

/* The calls given up on in one context (a ks_ctx object); a call holds
 * a reference while it runs, as the context may be freed first. */
struct lv_hung {
	pthread_mutex_t lock;
	int hung, refs;
};

struct ks_libvirt {
	void *dl;
	struct lv_fns f;
	virConnectPtr conn;
	int timeout_ms;
	struct ks_ctx *ctx;
	struct lv_hung *hung;    /* NULL without a context */
	char uri[256];
	bool local;              /* the daemon runs on this host */
	struct lv_pid *pids;     /* the domains of the last reading */
	size_t npids;
	double last_scan;
};

bool ks_libvirt_socket_exists(void)
{
	static const char *const socks[] = {
		"/run/libvirt/libvirt-sock-ro", "/run/libvirt/libvirt-sock",
		"/run/libvirt/virtqemud-sock-ro", "/run/libvirt/virtqemud-sock",
	};
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(socks) / sizeof(socks[0]); i++)
		if (stat(socks[i], &st) == 0 && S_ISSOCK(st.st_mode))
			return true;
	return false;
}

static int load_error(struct ks_error *err)
{
	const char *e = dlerror();

	return ks_error_set(err, "libvirt cannot be loaded: %s (is it installed? Debian and Ubuntu: "
			    "apt-get install libvirt0)", e ? e : LIBVIRT_SONAME);
}

bool ks_libvirt_installed(struct ks_error *err)
{
	void *dl = dlopen(LIBVIRT_SONAME, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);

	if (!dl) {
		load_error(err);
		return false;
	}
	dlclose(dl);
	return true;
}

/* libvirt prints every error on stderr unless an error function is set
 * (a setting of libvirt's, for the whole process); the message reaches
 * the caller through virGetLastErrorMessage() instead. */
static void quiet(void *ctx, virErrorPtr e)
{
	(void)ctx;
	(void)e;
}

/* libvirt's message MSG (a peer's words) as one line for a terminal. */
static int lv_error(struct ks_libvirt *lv, const char *msg, struct ks_error *err)
{
	char one[512], safe[sizeof(err->msg)];
	char *p;

	snprintf(one, sizeof(one), "%s", msg && *msg ? msg : "unknown error");
	for (p = one; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return ks_error_set(err, "libvirt %s: %s", lv->uri, ks_term_escape(safe, sizeof(safe), one));
}

/* ------------------------------------------------------------------ */
/* calls with a deadline (see the top) */

static void *hung_build(void)
{
	struct lv_hung *h = calloc(1, sizeof(*h));

	if (h && pthread_mutex_init(&h->lock, NULL)) {
		free(h);
		return NULL;
	}
	if (h)
		h->refs = 1; /* the context's */
	return h;
}

static void hung_put(void *arg)
{
	struct lv_hung *h = arg;
	bool last;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	last = --h->refs == 0;
	pthread_mutex_unlock(&h->lock);
	if (last) {
		pthread_mutex_destroy(&h->lock);
		free(h);
	}
}

static struct lv_hung *hung_get(struct lv_hung *h)
{
	if (h) {
		pthread_mutex_lock(&h->lock);
		h->refs++;
		pthread_mutex_unlock(&h->lock);
	}
	return h;
}

/* Add D to the calls given up on; returns how many there are now. */
static int hung_add(struct lv_hung *h, int d)
{
	int n;

	if (!h)
		return 0;
	pthread_mutex_lock(&h->lock);
	n = h->hung += d;
	pthread_mutex_unlock(&h->lock);
	return n;
}

enum lv_op { LV_OPEN, LV_STATS, LV_CLOSE };

static const char *const lv_op_name[] = {
	[LV_OPEN] = "virConnectOpenReadOnly",
	[LV_STATS] = "virConnectGetAllDomainStats",
	[LV_CLOSE] = "virConnectClose",
};

/* One call, shared by its caller and its thread (two references). */
struct lv_call {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int refs;
	bool done, abandoned;
	enum lv_op op;
	struct lv_fns f;
	struct lv_hung *hung;
	char uri[256];
	virConnectPtr conn;      /* OPEN: the result; else the connection,
				  * STATS with a reference of its own */
	char *canon;             /* OPEN: the URI the daemon names */
	virDomainStatsRecordPtr *recs;
	int r;
	char msg[512];           /* libvirt's error, read on the call's thread */
};

static void call_put(struct lv_call *c)
{
	bool last;

	pthread_mutex_lock(&c->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (!last)
		return;
	hung_put(c->hung);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void *call_thread(void *arg)
{
	struct lv_call *c = arg;
	const char *m;
	bool abandoned;

	switch (c->op) {
	case LV_OPEN:
		c->conn = c->f.open_ro(c->uri);
		if (c->conn)
			c->canon = c->f.get_uri(c->conn);
		break;
	case LV_STATS:
		/* active: running or paused; nowait: a domain busy with
		 * another job (a migration, a snapshot) is passed without
		 * what its monitor says */
		c->r = c->f.all_stats(c->conn, VIR_DOMAIN_STATS_VM | VIR_DOMAIN_STATS_VCPU, &c->recs,
				      VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE |
				      VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
		break;
	case LV_CLOSE:
		c->f.close(c->conn);
		c->conn = NULL;
		break;
	}
	m = c->f.last_error();
	snprintf(c->msg, sizeof(c->msg), "%s", m ? m : "");
	pthread_mutex_lock(&c->lock);
	c->done = true;
	abandoned = c->abandoned;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->lock);
	if (abandoned) {
		/* the caller gave up: what the call returned is for nobody */
		if (c->recs)
			c->f.stats_free(c->recs);
		if (c->conn)
			c->f.close(c->conn);
		free(c->canon);
		hung_add(c->hung, -1);
	}
	call_put(c);
	return NULL;
}

/* Call C that never ran, with the caller's reference: the statistics'
 * own reference to the connection is dropped (not the last: nothing is
 * sent).  A close that cannot run leaves its connection open: closing
 * here could block on the daemon. */
static void call_unstarted(struct lv_call *c)
{
	if (c->op == LV_STATS && c->conn)
		c->f.close(c->conn);
	call_put(c);
}

static double mono_s(void);

/* Run call C (one reference, the caller's, given to this function) in a
 * thread of its own and wait for it: at most LV's deadline, and until the
 * context's cancel function says so.  0 when it returned (its results in
 * C, freed by the caller, then call_put()); -1 with err set when it could
 * not start or was given up on (C is then the thread's). */
static int call_run(struct ks_libvirt *lv, struct lv_call *c, struct ks_error *err)
{
	double deadline = mono_s() + lv->timeout_ms / 1000.0;
	pthread_attr_t attr;
	sigset_t all, old;
	bool close_cut = false;
	pthread_t t;
	int rc, n;

	memcpy(&c->f, &lv->f, sizeof(c->f));
	snprintf(c->uri, sizeof(c->uri), "%s", lv->uri);
	c->hung = hung_get(lv->hung);
	if (lv->hung && (n = hung_add(lv->hung, 0)) >= LV_MAX_HUNG) {
		call_unstarted(c);
		return ks_error_set(err, "libvirt %s: %d calls are still unanswered; none more until one "
				    "ends", lv->uri, n);
	}
	c->refs = 2;
	/* the call's thread takes no signal: the program's handlers run on
	 * its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_attr_init(&attr);
	if (!rc) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, call_thread, c);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		c->refs = 1;
		call_unstarted(c);
		return ks_error_set(err, "libvirt %s: cannot start a thread: %s", lv->uri, strerror(rc));
	}
	pthread_mutex_lock(&c->lock);
	while (!c->done) {
		double now = mono_s();
		bool cancelled;
		struct timespec ts;
		long ns;

		if (now >= deadline)
			break;
		pthread_mutex_unlock(&c->lock);
		cancelled = ks_ctx_cancelled(lv->ctx);
		pthread_mutex_lock(&c->lock);
		if (c->done)
			break;
		if (cancelled && c->op == LV_CLOSE && !close_cut) {
			/* a daemon that answers closes at once: the
			 * program that ends is not to leave it in flight */
			close_cut = true;
			if (deadline > now + LV_CLOSE_CANCEL_S)
				deadline = now + LV_CLOSE_CANCEL_S;
		} else if (cancelled && c->op != LV_CLOSE) {
			break;
		}
		ns = (long)((deadline - now) * 1e9);
		if (ns > LV_SLICE_NS)
			ns = LV_SLICE_NS;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += ns;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&c->cv, &c->lock, &ts);
	}
	if (c->done) {
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	c->abandoned = true;
	hung_add(c->hung, 1);
	pthread_mutex_unlock(&c->lock);
	if (mono_s() < deadline || close_cut)
		ks_error_set(err, "libvirt %s: interrupted", lv->uri);
	else
		ks_error_set(err, "libvirt %s: no answer to %s within %d ms", lv->uri, lv_op_name[c->op],
			     lv->timeout_ms);
	call_put(c);
	return -1;
}

static struct lv_call *call_new(enum lv_op op, struct ks_error *err)
{
	struct lv_call *c = calloc(1, sizeof(*c));

	if (!c) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (pthread_cond_init(&c->cv, NULL)) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	c->refs = 1;
	c->op = op;
	return c;
}

/* Whether URI names no host ("qemu:///system", "qemu+unix:///system"). */
static bool uri_is_local(const char *uri)
{
	const char *p = strstr(uri, "://");

	return p && p[3] == '/';
}

int ks_libvirt_open(struct ks_libvirt **out, const char *uri, struct ks_error *err)
{
	return ks_libvirt_open_opts(out, uri, NULL, err);
}

int ks_libvirt_open_opts(struct ks_libvirt **out, const char *uri, const struct ks_libvirt_opts *o,
			 struct ks_error *err)
{
	struct ks_libvirt *lv;
	struct lv_call *c;
	size_t i;

	*out = NULL;
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	snprintf(lv->uri, sizeof(lv->uri), "%s", uri && *uri ? uri : KS_LIBVIRT_URI);
	lv->timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : LV_TIMEOUT_MS;
	lv->ctx = o ? o->ctx : NULL;
	lv->hung = hung_get(ks_ctx_obj(lv->ctx, KS_CTX_OBJ_LIBVIRT_HUNG, hung_build, hung_put));
	lv->dl = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lv->dl) {
		load_error(err);
		ks_libvirt_close(lv);
		return -1;
	}
	for (i = 0; i < sizeof(lv_syms) / sizeof(lv_syms[0]); i++) {
		void *sym = dlsym(lv->dl, lv_syms[i].name);

		if (!sym) {
			ks_error_set(err, "libvirt: %s has no %s (libvirt 1.2.8 or later is needed)",
				     LIBVIRT_SONAME, lv_syms[i].name);
			ks_libvirt_close(lv);
			return -1;
		}
		memcpy((char *)&lv->f + lv_syms[i].off, &sym, sizeof(sym));
	}
	lv->f.set_error_func(NULL, quiet);
	if (!(c = call_new(LV_OPEN, err)) || call_run(lv, c, err) < 0) {
		ks_libvirt_close(lv);
		return -1;
	}
	if (!c->conn) {
		lv_error(lv, c->msg, err);
		call_put(c);
		ks_libvirt_close(lv);
		return -1;
	}
	lv->conn = c->conn;
	/* an alias or the empty URI resolves to the one the daemon names */
	lv->local = uri_is_local(c->canon ? c->canon : lv->uri);
	free(c->canon);
	call_put(c);
	*out = lv;
	return 0;
}

const char *ks_libvirt_uri(const struct ks_libvirt *lv)
{
	return lv->uri;
}

void ks_libvirt_close(struct ks_libvirt *lv)
{
	struct lv_call *c;
	struct ks_error err;

	if (!lv)
		return;
	/* the last reference's close tells the daemon (a call too); given
	 * up on, its thread finishes it */
	if (lv->conn && (c = call_new(LV_CLOSE, &err))) {
		c->conn = lv->conn;
		if (call_run(lv, c, &err) == 0)
			call_put(c);
	}
	if (lv->dl)
		dlclose(lv->dl);
	hung_put(lv->hung);
	free(lv->pids);
	free(lv);
}

int ks_libvirt_add_param(struct ks_kstats *s, const char *field, bool is_bool, uint64_t value)
{
	enum ks_kstat_type type;
	const char *name, *dot, *suffix;
	struct ks_kstat *k;
	int32_t vcpu = -1;
	size_t len, i;

	if (!strncmp(field, "vm.", 3)) {
		name = field + 3;
	} else if (!strncmp(field, "vcpu.", 5) && isdigit((unsigned char)field[5])) {
		uint64_t v = 0;
		size_t n = ks_parse_u64_prefix(field + 5, strlen(field + 5), 10, &v);

		if (field[5 + n] != '.' || v > INT32_MAX)
			return 0;
		vcpu = (int32_t)v;
		name = field + 5 + n + 1;
	} else {
		return 0;
	}
	dot = strrchr(name, '.');
	if (!dot || dot == name)
		return 0;
	suffix = dot + 1;
	if (!strcmp(suffix, "sum"))
		type = KS_KSTAT_CUMULATIVE;
	else if (!strcmp(suffix, "cur"))
		type = KS_KSTAT_INSTANT;
	else if (!strcmp(suffix, "max"))
		type = KS_KSTAT_PEAK;
	else
		return 0;
	len = (size_t)(dot - name);
	if (len >= sizeof(k->name))
		return 0;
	/* KVM names its statistics with letters, digits and '_' only:
	 * anything else from the daemon is not one of them */
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return 0;
	k = ks_kstats_add(s, "", vcpu);
	if (!k)
		return -1;
	memcpy(k->name, name, len);
	k->name[len] = 0;
	k->type = type;
	k->is_bool = is_bool;
	k->value = is_bool ? value != 0 : value;
	if (is_bool) {
		snprintf(k->unit, sizeof(k->unit), "boolean");
	} else if (len > 3 && !memcmp(name + len - 3, "_ns", 3)) {
		snprintf(k->unit, sizeof(k->unit), "seconds");
		k->exponent = -9;
	}
	return 1;
}

/* One typed parameter into S (the numeric and boolean ones). */
static int add_typed(struct ks_kstats *s, const virTypedParameter *p)
{
	switch (p->type) {
	case VIR_TYPED_PARAM_BOOLEAN:
		return ks_libvirt_add_param(s, p->field, true, p->value.b != 0);
	case VIR_TYPED_PARAM_ULLONG:
		return ks_libvirt_add_param(s, p->field, false, p->value.ul);
	case VIR_TYPED_PARAM_UINT:
		return ks_libvirt_add_param(s, p->field, false, p->value.ui);
	case VIR_TYPED_PARAM_LLONG:
		return ks_libvirt_add_param(s, p->field, false, p->value.l > 0 ? (uint64_t)p->value.l : 0);
	case VIR_TYPED_PARAM_INT:
		return ks_libvirt_add_param(s, p->field, false, p->value.i > 0 ? (uint64_t)p->value.i : 0);
	default:
		return 0;
	}
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The -uuid of process PID's command line into OUT (libvirt always gives
 * QEMU the domain's UUID); false when it has none. */
static bool uuid_of(int32_t pid, char out[VIR_UUID_STRING_BUFLEN])
{
	return ks_qemu_option(pid, "uuid", out, VIR_UUID_STRING_BUFLEN);
}

static bool has_uuid(int32_t pid, const char *uuid)
{
	char u[VIR_UUID_STRING_BUFLEN];

	return uuid_of(pid, u) && !strcasecmp(u, uuid);
}

/* Fill the unknown pids of the N domains of P from one pass over /proc. */
static void scan_pids(struct lv_pid *p, size_t n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t i, left = 0;

	for (i = 0; i < n; i++)
		left += p[i].pid < 0 && p[i].uuid[0];
	while (d && left && (de = readdir(d))) {
		int32_t pid = (int32_t)atoi(de->d_name);
		char u[VIR_UUID_STRING_BUFLEN];

		if (pid <= 0 || !uuid_of(pid, u))
			continue;
		for (i = 0; i < n; i++)
			if (p[i].pid < 0 && p[i].uuid[0] && !strcasecmp(p[i].uuid, u)) {
				p[i].pid = pid;
				left--;
				break;
			}
	}
	if (d)
		closedir(d);
}

/* The QEMU processes of the domains in OUT[0..N): those of the last
 * reading that still hold their UUID are kept; the others are looked for
 * in /proc (at most every PID_RESCAN_S seconds). */
static int find_pids(struct ks_libvirt *lv, const char (*uuids)[VIR_UUID_STRING_BUFLEN],
		     struct ks_kstats *out, size_t n)
{
	struct lv_pid *np = calloc(n + 1, sizeof(*np));
	size_t i, j;
	bool missing = false;

	if (!np)
		return -1;
	for (i = 0; i < n; i++) {
		memcpy(np[i].uuid, uuids[i], sizeof(np[i].uuid));
		np[i].pid = -1;
		for (j = 0; j < lv->npids && uuids[i][0]; j++)
			if (!strcmp(lv->pids[j].uuid, uuids[i]) && lv->pids[j].pid > 0 &&
			    has_uuid(lv->pids[j].pid, uuids[i]))
				np[i].pid = lv->pids[j].pid;
		missing |= np[i].pid < 0 && np[i].uuid[0];
	}
	if (missing && mono_s() - lv->last_scan >= PID_RESCAN_S) {
		scan_pids(np, n);
		lv->last_scan = mono_s();
	}
	for (i = 0; i < n; i++)
		out[i].pid = np[i].pid;
	free(lv->pids);
	lv->pids = np;
	lv->npids = n;
	return 0;
}

int ks_libvirt_stats(struct ks_libvirt *lv, struct ks_kstats **out, size_t *n,
		     struct ks_error *err)
{
	virDomainStatsRecordPtr *recs;
	char (*uuids)[VIR_UUID_STRING_BUFLEN] = NULL;
	struct ks_kstats *v = NULL;
	struct lv_call *c;
	size_t i, nv, total = 0;
	int j, rc;

	*out = NULL;
	*n = 0;
	if (!(c = call_new(LV_STATS, err)))
		return -1;
	/* the call's own reference: the connection outlives a call given up on */
	if (lv->f.ref(lv->conn) < 0) {
		call_put(c);
		return ks_error_set(err, "libvirt %s: the connection is gone", lv->uri);
	}
	c->conn = lv->conn;
	if (call_run(lv, c, err) < 0)
		return -1;
	lv->f.close(c->conn); /* not the last reference: nothing is sent */
	recs = c->recs;
	if (c->r < 0) {
		lv_error(lv, c->msg, err);
		call_put(c);
		return -1;
	}
	nv = (size_t)c->r;
	call_put(c);
	if (nv > LV_MAX_DOMAINS) {
		rc = ks_error_set(err, "libvirt %s: %zu domains, more than %d", lv->uri, nv,
				  LV_MAX_DOMAINS);
		goto fail;
	}
	v = calloc(nv + 1, sizeof(*v));
	uuids = calloc(nv + 1, sizeof(*uuids));
	if (!v || !uuids)
		goto oom;
	for (i = 0; i < nv; i++) {
		struct ks_kstats *s = &v[i];
		const char *name = lv->f.dom_name(recs[i]->dom);

		s->pid = -1;
		snprintf(s->source, sizeof(s->source), "libvirt");
		ks_utf8_sanitize(s->name, sizeof(s->name), name ? name : "");
		if (lv->f.dom_uuid(recs[i]->dom, uuids[i]) < 0)
			uuids[i][0] = 0;
		if (recs[i]->nparams > 0 && (size_t)recs[i]->nparams > LV_MAX_STATS - total) {
			rc = ks_error_set(err, "libvirt %s: more than %u statistics", lv->uri,
					  LV_MAX_STATS);
			goto fail;
		}
		for (j = 0; j < recs[i]->nparams; j++)
			if (add_typed(s, &recs[i]->params[j]) < 0)
				goto oom;
		total += s->n;
	}
	if (lv->local && find_pids(lv, (const char (*)[VIR_UUID_STRING_BUFLEN])uuids, v, nv) < 0)
		goto oom;
	lv->f.stats_free(recs);
	free(uuids);
	*out = v;
	*n = nv;
	return 0;
oom:
	rc = ks_error_code(err, KS_E_NOMEM, "out of memory");
fail:
	lv->f.stats_free(recs);
	for (i = 0; v && i < nv; i++)
		ks_kstats_free(&v[i]);
	free(v);
	free(uuids);
	return rc;
}
