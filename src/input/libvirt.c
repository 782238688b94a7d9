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
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "kvmscope/kvmstats.h"
#include "util/procfs.h"
#include "util/text.h"

#define LIBVIRT_SONAME "libvirt.so.0"
#define PID_RESCAN_S 5 /* at most one /proc scan for unknown QEMUs this often */

struct lv_fns {
	__typeof__(virConnectOpenReadOnly) *open_ro;
	__typeof__(virConnectClose) *close;
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

struct ks_libvirt {
	void *dl;
	struct lv_fns f;
	virConnectPtr conn;
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

/* libvirt's last error on this thread as one line. */
static int lv_error(struct ks_libvirt *lv, struct ks_error *err)
{
	const char *m = lv->f.last_error ? lv->f.last_error() : NULL;
	char *p;

	ks_error_set(err, "libvirt %s: %s", lv->uri, m && *m ? m : "unknown error");
	for (p = err ? err->msg : NULL; p && *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return -1;
}

/* Whether URI names no host ("qemu:///system", "qemu+unix:///system"). */
static bool uri_is_local(const char *uri)
{
	const char *p = strstr(uri, "://");

	return p && p[3] == '/';
}

int ks_libvirt_open(struct ks_libvirt **out, const char *uri, struct ks_error *err)
{
	struct ks_libvirt *lv;
	char *canon;
	size_t i;

	*out = NULL;
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	snprintf(lv->uri, sizeof(lv->uri), "%s", uri && *uri ? uri : KS_LIBVIRT_URI);
	lv->dl = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lv->dl) {
		load_error(err);
		free(lv);
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
	lv->conn = lv->f.open_ro(lv->uri);
	if (!lv->conn) {
		lv_error(lv, err);
		ks_libvirt_close(lv);
		return -1;
	}
	/* an alias or the empty URI resolves to the one the daemon names */
	canon = lv->f.get_uri(lv->conn);
	lv->local = uri_is_local(canon ? canon : lv->uri);
	free(canon);
	*out = lv;
	return 0;
}

const char *ks_libvirt_uri(const struct ks_libvirt *lv)
{
	return lv->uri;
}

void ks_libvirt_close(struct ks_libvirt *lv)
{
	if (!lv)
		return;
	if (lv->conn)
		lv->f.close(lv->conn);
	if (lv->dl)
		dlclose(lv->dl);
	free(lv->pids);
	free(lv);
}

int ks_libvirt_add_param(struct ks_kstats *s, const char *field, bool is_bool, uint64_t value)
{
	enum ks_kstat_type type;
	const char *name, *dot, *suffix;
	struct ks_kstat *k;
	int32_t vcpu = -1;
	size_t len;

	if (!strncmp(field, "vm.", 3)) {
		name = field + 3;
	} else if (!strncmp(field, "vcpu.", 5) && isdigit((unsigned char)field[5])) {
		char *end;
		long v = strtol(field + 5, &end, 10);

		if (*end != '.' || v < 0 || v > INT32_MAX)
			return 0;
		vcpu = (int32_t)v;
		name = end + 1;
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
	virDomainStatsRecordPtr *recs = NULL;
	char (*uuids)[VIR_UUID_STRING_BUFLEN] = NULL;
	struct ks_kstats *v = NULL;
	size_t i, nv;
	int r, j;

	*out = NULL;
	*n = 0;
	/* active: running or paused; nowait: a domain busy with another job
	 * (a migration, a snapshot) is passed without what its monitor says */
	r = lv->f.all_stats(lv->conn, VIR_DOMAIN_STATS_VM | VIR_DOMAIN_STATS_VCPU, &recs,
			    VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE |
			    VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
	if (r < 0)
		return lv_error(lv, err);
	nv = (size_t)r;
	v = calloc(nv + 1, sizeof(*v));
	uuids = calloc(nv + 1, sizeof(*uuids));
	if (!v || !uuids)
		goto oom;
	for (i = 0; i < nv; i++) {
		struct ks_kstats *s = &v[i];
		const char *name = lv->f.dom_name(recs[i]->dom);

		s->pid = -1;
		snprintf(s->source, sizeof(s->source), "libvirt");
		ks_utf8_copy(s->name, sizeof(s->name), name ? name : "");
		if (lv->f.dom_uuid(recs[i]->dom, uuids[i]) < 0)
			uuids[i][0] = 0;
		for (j = 0; j < recs[i]->nparams; j++)
			if (add_typed(s, &recs[i]->params[j]) < 0)
				goto oom;
	}
	if (lv->local && find_pids(lv, (const char (*)[VIR_UUID_STRING_BUFLEN])uuids, v, nv) < 0)
		goto oom;
	lv->f.stats_free(recs);
	free(uuids);
	*out = v;
	*n = nv;
	return 0;
oom:
	lv->f.stats_free(recs);
	for (i = 0; v && i < nv; i++)
		ks_kstats_free(&v[i]);
	free(v);
	free(uuids);
	return ks_error_code(err, KS_E_NOMEM, "out of memory");
}
