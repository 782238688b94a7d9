/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_collect.c - the VMs whose KVM statistics top and the exporter
 * show: found, read and kept once (see kvmstats_collect.h).
 *
 * The list of VMs lives across readings (a VM's previous reading makes its
 * rates); each is keyed by where it was read (socket path, debugfs
 * directory, libvirt domain).  libvirt's domains that a reading no longer
 * lists are forgotten; a QMP socket that fails stays, with its error.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvmscope/kvmstats_collect.h"
#include "util/procfs.h"
#include "util/text.h"

#define DEBUGFS_DIR "/sys/kernel/debug/kvm"

struct ks_kvmcol {
	struct ks_kvmcol_opts o;
	const char *lv_uri;          /* libvirt read (given, set, or automatic) */
	struct ks_libvirt *lv;       /* kept open between readings */
	bool lv_up;
	struct ks_kvmcol_vm *vms;
	size_t nvms;
	char status[160];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct ks_kvmcol *ks_kvmcol_new(const struct ks_kvmcol_opts *o)
{
	struct ks_kvmcol *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->o = *o;
	if (!c->o.timeout_ms)
		c->o.timeout_ms = 2000;
	if (!c->o.debugfs_dir)
		c->o.debugfs_dir = DEBUGFS_DIR;
	c->lv_uri = o->libvirt;
	return c;
}

static void vm_release(struct ks_kvmcol_vm *vm)
{
	ks_kstats_free(&vm->now);
	ks_kstats_free(&vm->prev);
	ks_kstats_free(&vm->base);
	ks_qmp_close(vm->qmp);
	vm->qmp = NULL;
}

void ks_kvmcol_free(struct ks_kvmcol *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nvms; i++)
		vm_release(&c->vms[i]);
	free(c->vms);
	ks_libvirt_close(c->lv);
	free(c);
}

int ks_kvmcol_open_libvirt(struct ks_kvmcol *c, struct ks_error *err)
{
	if (c->lv || !c->lv_uri)
		return 0;
	return ks_libvirt_open_opts(&c->lv, c->lv_uri, &(struct ks_libvirt_opts){
		.timeout_ms = c->o.timeout_ms, .ctx = c->o.ctx }, err);
}

void ks_kvmcol_set_libvirt(struct ks_kvmcol *c, const char *uri)
{
	c->lv_uri = uri;
}

struct ks_kvmcol_vm *ks_kvmcol_vms(struct ks_kvmcol *c, size_t *n)
{
	*n = c->nvms;
	return c->vms;
}

bool ks_kvmcol_libvirt_up(const struct ks_kvmcol *c) { return c->lv_up; }
const char *ks_kvmcol_libvirt_uri(const struct ks_kvmcol *c) { return c->lv_uri; }
const char *ks_kvmcol_status(const struct ks_kvmcol *c) { return c->status; }

/* ------------------------------------------------------------------ */
/* the list of VMs */

/* The VM read from SRC, added when new; NULL when out of memory. */
static struct ks_kvmcol_vm *vm_get(struct ks_kvmcol *c, const char *src)
{
	struct ks_kvmcol_vm *n;
	size_t i;

	for (i = 0; i < c->nvms; i++)
		if (!strcmp(c->vms[i].key, src))
			return &c->vms[i];
	n = realloc(c->vms, (c->nvms + 1) * sizeof(*n));
	if (!n)
		return NULL;
	c->vms = n;
	n = &c->vms[c->nvms++];
	memset(n, 0, sizeof(*n));
	snprintf(n->key, sizeof(n->key), "%s", src);
	n->pid = -1;
	n->qmp_index = -1;
	return n;
}

/* FRESH becomes the VM's reading; the one it had, its previous. */
static void vm_take(struct ks_kvmcol_vm *vm, struct ks_kstats *fresh)
{
	if (vm->now.n) {
		ks_kstats_free(&vm->prev);
		vm->prev = vm->now;
		vm->t_prev = vm->t_now;
		vm->have_prev = true;
	}
	vm->t_now = now_s();
	vm->now = *fresh;
	memset(fresh, 0, sizeof(*fresh));
	vm->failed = false;
	vm->error[0] = 0;
}

static void vm_fail(struct ks_kvmcol_vm *vm, const char *msg)
{
	vm->failed = true;
	ks_term_escape(vm->error, sizeof(vm->error), msg);
}

/* Forget the libvirt domains that the last reading did not list. */
static void drop_unseen_domains(struct ks_kvmcol *c)
{
	size_t i, j;

	for (i = j = 0; i < c->nvms; i++) {
		struct ks_kvmcol_vm *vm = &c->vms[i];

		if (!strncmp(vm->key, "libvirt:", 8) && !vm->seen) {
			vm_release(vm);
			continue;
		}
		c->vms[j++] = *vm;
	}
	c->nvms = j;
}

/* ------------------------------------------------------------------ */
/* the sources */

/* The statistics of the QEMU at the QMP socket PATH; with O (discovery),
 * only if the socket and its peer are whom O says. */
static void read_qmp(struct ks_kvmcol *c, const char *path, int index, const struct ks_qmp_opts *o)
{
	struct ks_qmp_opts given = { .timeout_ms = c->o.timeout_ms, .ctx = c->o.ctx };
	struct ks_kvmcol_vm *vm = vm_get(c, path);
	struct ks_kstats fresh = { 0 };
	struct ks_error err;
	struct ks_qmp *q = NULL;

	if (!vm)
		return;
	vm->qmp_index = index;
	if (c->o.keep_open && vm->qmp) {
		q = vm->qmp;
	} else if (ks_qmp_open_opts(&q, path, o ? o : &given, &err) < 0 ||
		   		   /* a name of at most 63 bytes, cut on a character boundary */
		   (c->o.keep_open && ks_qmp_query_name(q, vm->name, 64, &err) < 0)) {
		goto fail;
	}
	if (ks_qmp_query_stats(q, &fresh, &err) < 0)
		goto fail;
	vm->pid = ks_qmp_pid(q);
	if (c->o.keep_open)
		vm->qmp = q;
	else
		ks_qmp_close(q);
	vm_take(vm, &fresh);
	return;
fail:
	if (q)
		vm->pid = ks_qmp_pid(q);
	ks_qmp_close(q);
	vm->qmp = NULL;
	vm->name[0] = 0;
	ks_kstats_free(&fresh);
	vm_fail(vm, err.msg);
}

/* The domains of libvirt, over one connection kept open; when it fails,
 * one VM ("libvirt:") says why, and the next reading reconnects. */
static void read_libvirt(struct ks_kvmcol *c)
{
	struct ks_kstats *d = NULL;
	struct ks_error err;
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < c->nvms; i++)
		c->vms[i].seen = false;
	if (!c->lv)
		rc = ks_libvirt_open_opts(&c->lv, c->lv_uri, &(struct ks_libvirt_opts){
			.timeout_ms = c->o.timeout_ms, .ctx = c->o.ctx }, &err);
	if (rc == 0 && ks_libvirt_stats(c->lv, &d, &n, &err) < 0) {
		ks_libvirt_close(c->lv);
		c->lv = NULL;
		rc = -1;
	}
	c->lv_up = rc == 0;
	if (rc < 0) {
		struct ks_kvmcol_vm *vm = vm_get(c, "libvirt:");

		if (vm) {
			snprintf(vm->name, sizeof(vm->name), "libvirt %.110s", c->lv_uri);
			vm->seen = true;
			vm_fail(vm, err.msg);
		}
	}
	for (i = 0; i < n; i++) {
		char key[160];
		struct ks_kvmcol_vm *vm;

		snprintf(key, sizeof(key), "libvirt:%.128s", d[i].name);
		vm = vm_get(c, key);
		if (vm) {
			vm->pid = d[i].pid;
			vm->seen = true;
			snprintf(vm->name, sizeof(vm->name), "%s", d[i].name);
			if (d[i].n) {
				vm_take(vm, &d[i]);
			} else if (!vm->now.n) {
				/* (a domain that had some was busy: its last values stay) */
				vm_fail(vm, "libvirt passed no KVM statistics (libvirt 8.9 and QEMU 7.1 "
					"or later do)");
			}
		}
		ks_kstats_free(&d[i]);
	}
	free(d);
	drop_unseen_domains(c);
}

/* Whether process PID runs as root or as our own user, real and
 * effective user alike (/proc/PID/status "Uid:"); *OWNER is that user. */
static bool trusted_owner(int32_t pid, uint32_t *owner)
{
	char buf[4096], *u;
	unsigned long real, eff, saved, fs;

	if (ks_read_proc(pid, "status", buf, sizeof(buf)) <= 0 || !(u = strstr(buf, "\nUid:")) ||
	    sscanf(u + 5, "%lu %lu %lu %lu", &real, &eff, &saved, &fs) != 4)
		return false;
	if (real != eff || eff != saved || eff != fs || (eff != 0 && eff != (unsigned long)geteuid()))
		return false;
	*owner = (uint32_t)eff;
	return true;
}

/* -qmp unix:PATH[,...] of a running process; "" if none. */
static void qmp_of_process(int32_t pid, char *out, size_t len)
{
	char v[4096];

	out[0] = 0;
	if (ks_qemu_option(pid, "qmp", v, sizeof(v)) && !strncmp(v, "unix:", 5))
		snprintf(out, len, "%.*s", (int)strcspn(v + 5, ","), v + 5);
}

/* QEMU processes with -qmp unix:PATH, those of root or of our own user
 * only, whose socket is that same user's and is served by that very
 * process. */
static void discover(struct ks_kvmcol *c)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	while (dir && (de = readdir(dir))) {
		char path[160], comm[64];
		int32_t pid = (int32_t)atoi(de->d_name);
		struct ks_qmp_opts o = { .timeout_ms = c->o.timeout_ms, .ctx = c->o.ctx,
					 .check_owner = true, .peer_pid = pid };

		if (pid <= 0 || ks_read_proc(pid, "comm", comm, sizeof(comm)) <= 0 ||
		    strncmp(comm, "qemu", 4) || !trusted_owner(pid, &o.owner))
			continue;
		qmp_of_process(pid, path, sizeof(path));
		if (path[0])
			read_qmp(c, path, -1, &o);
	}
	if (dir)
		closedir(dir);
}

/* debugfs: true when it was read and the reading is done with it. */
static bool read_debugfs(struct ks_kvmcol *c)
{
	bool only = c->o.debugfs == KS_KVMCOL_DEBUGFS_ONLY;
	struct ks_kstats *d;
	struct ks_error err;
	size_t i, n;

	if (c->o.debugfs == KS_KVMCOL_DEBUGFS_OFF ||
	    (!only && access(c->o.debugfs_dir, R_OK) != 0))
		return false;
	if (ks_kvm_debugfs_stats(c->o.debugfs_dir, &d, &n, &err) < 0) {
		char safe[140];

		if (!only)
			return false;
		snprintf(c->status, sizeof(c->status), "debugfs: %s",
			 ks_term_escape(safe, sizeof(safe), err.msg));
		return true;
	}
	for (i = 0; i < n; i++) {
		char key[64];
		struct ks_kvmcol_vm *vm;

		snprintf(key, sizeof(key), "debugfs:%d", d[i].pid);
		vm = vm_get(c, key);
		if (vm) {
			vm->pid = d[i].pid;
			vm_take(vm, &d[i]);
		}
		ks_kstats_free(&d[i]);
	}
	free(d);
	return only || n;
}

/* The same VM read twice: its QMP socket and libvirt's domain (the same
 * process, or the same name where a pid is unknown).  The QMP reading is
 * kept: it has the histograms and units that libvirt does not pass. */
static void mark_duplicates(struct ks_kvmcol *c)
{
	size_t i, j;

	for (i = 0; i < c->nvms; i++)
		c->vms[i].duplicate = false;
	for (i = 0; i < c->nvms; i++) {
		struct ks_kvmcol_vm *lv = &c->vms[i];

		if (strncmp(lv->key, "libvirt:", 8) || lv->failed)
			continue;
		for (j = 0; j < c->nvms && !lv->duplicate; j++) {
			const struct ks_kvmcol_vm *q = &c->vms[j];

			if (j == i || q->failed || !strncmp(q->key, "libvirt:", 8) ||
			    !strncmp(q->key, "debugfs:", 8))
				continue;
			lv->duplicate = (lv->pid > 0 && q->pid == lv->pid) ||
					(q->name[0] && !strcmp(q->name, lv->name));
		}
	}
}

void ks_kvmcol_read(struct ks_kvmcol *c)
{
	bool lv_auto = c->o.libvirt_auto && !c->o.libvirt;
	size_t i;

	c->status[0] = 0;
	if (read_debugfs(c)) {
		mark_duplicates(c);
		return;
	}
	if (lv_auto)
		c->lv_uri = ks_libvirt_socket_exists() ? KS_LIBVIRT_URI : NULL;
	if (c->lv_uri) {
		read_libvirt(c);
	} else if (c->lv || c->nvms) { /* libvirt's socket is gone */
		ks_libvirt_close(c->lv);
		c->lv = NULL;
		c->lv_up = false;
		for (i = 0; i < c->nvms; i++)
			c->vms[i].seen = false;
		drop_unseen_domains(c);
	}
	for (i = 0; i < (size_t)c->o.nqmp; i++)
		read_qmp(c, c->o.qmp[i], (int)i, NULL);
	if (c->o.discover)
		discover(c);
	mark_duplicates(c);
}

int ks_kvmcol_reset(struct ks_kvmcol *c)
{
	size_t i, j;

	for (i = 0; i < c->nvms; i++) {
		struct ks_kvmcol_vm *vm = &c->vms[i];

		ks_kstats_free(&vm->base);
		vm->base = (struct ks_kstats){ 0 };
		if (vm->now.n) {
			vm->base.v = calloc(vm->now.n, sizeof(*vm->base.v));
			if (!vm->base.v)
				return -1;
			vm->base.cap = vm->now.n;
		}
		/* the values only: no histogram buckets */
		for (j = 0; j < vm->now.n; j++) {
			struct ks_kstat *k = &vm->base.v[vm->base.n++];

			*k = vm->now.v[j];
			k->buckets = NULL;
			k->nbuckets = 0;
		}
		vm->have_base = true;
	}
	return 0;
}
