/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats_collect.h - one collector of KVM's statistics for every live
 * command (top's kvmstats and halt views, the exporter): where the VMs
 * are (QMP sockets given, QEMU processes found in /proc, libvirt's
 * domains, debugfs), one reading of each with its deadline, and the same
 * VM seen twice (its QMP socket and libvirt) kept once.
 *
 *	struct ks_kvmcol_opts o = { .qmp = paths, .nqmp = n, .discover = true,
 *				    .ctx = ctx, .timeout_ms = 2000 };
 *	struct ks_kvmcol *c = ks_kvmcol_new(&o);
 *	ks_kvmcol_read(c);                          // every interval or scrape
 *	size_t n; struct ks_kvmcol_vm *v = ks_kvmcol_vms(c, &n);
 *	... v[i].now (this reading), v[i].prev (the one before), v[i].base (r) ...
 *	ks_kvmcol_free(c);
 *
 * Trust (discovery): a process named qemu* is read only when it runs as
 * root or as our own user (real, effective, saved and fs uid alike), its
 * -qmp unix:PATH socket is that user's, and the process serving it
 * (SO_PEERCRED) is that very process: anyone may name a program
 * qemu-something and give it a socket.  Every peer is hostile: each
 * command has a deadline, and the context's cancel function ends a wait.
 */
#ifndef KVMSCOPE_KVMSTATS_COLLECT_H
#define KVMSCOPE_KVMSTATS_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kvmstats.h"

struct ks_ctx;
struct ks_kvmcol;

enum ks_kvmcol_debugfs {
	KS_KVMCOL_DEBUGFS_OFF = 0,
	/* debugfs when readable and holding a VM: then it alone */
	KS_KVMCOL_DEBUGFS_AUTO,
	/* debugfs alone; its failure is ks_kvmcol_status() */
	KS_KVMCOL_DEBUGFS_ONLY,
};

struct ks_kvmcol_opts {
	const char *const *qmp;   /* QMP sockets given (read, no owner checks) */
	int nqmp;
	/* libvirt's domains at this URI (NULL: not); with libvirt_auto,
	 * at KS_LIBVIRT_URI whenever libvirt's socket exists */
	const char *libvirt;
	bool libvirt_auto;
	/* the QEMU processes started with -qmp unix:PATH (see Trust) */
	bool discover;
	enum ks_kvmcol_debugfs debugfs;
	const char *debugfs_dir;  /* NULL: /sys/kernel/debug/kvm */
	/* keep the QMP connections open between readings (the VM's name,
	 * query-name, is then asked once per connection); else connect for
	 * each reading (QEMU serves one QMP client at a time) */
	bool keep_open;
	int timeout_ms;           /* per QMP command; 0: 2000 */
	struct ks_ctx *ctx;       /* its cancel function ends every wait */
};

/* One VM as a source gave it, with the readings that make rates. */
struct ks_kvmcol_vm {
	char key[160];            /* socket path, "debugfs:PID", "libvirt:NAME";
				   * "libvirt:" is libvirt itself when it failed */
	char name[128];           /* libvirt's domain, or query-name (keep_open);
				   * "libvirt URI" for libvirt's failure; else "" */
	int32_t pid;              /* the QEMU process; -1 unknown */
	int qmp_index;            /* index in opts.qmp; -1 for the others */
	bool failed;              /* the last reading failed: ERROR says why */
	char error[200];          /* escaped for a terminal */
	/* the same VM is also read from another source (its QMP socket and
	 * libvirt): only the QMP one (histograms, units) is to be shown */
	bool duplicate;
	bool seen;                /* in the last libvirt reading */
	struct ks_kstats now, prev, base;
	double t_now, t_prev;     /* CLOCK_MONOTONIC seconds of now and prev */
	bool have_prev, have_base;
	struct ks_qmp *qmp;       /* keep_open: the connection */
};

/* NULL when out of memory.  O is copied; its strings must outlive C. */
struct ks_kvmcol *ks_kvmcol_new(const struct ks_kvmcol_opts *o);
void ks_kvmcol_free(struct ks_kvmcol *c);
/* Open libvirt's connection now (a URI that cannot be reached is the
 * caller's error at start; later failures are a VM row and a reconnect). */
int ks_kvmcol_open_libvirt(struct ks_kvmcol *c, struct ks_error *err);
/* Read libvirt's domains at URI from the next reading on (NULL: stop). */
void ks_kvmcol_set_libvirt(struct ks_kvmcol *c, const char *uri);
/* One reading of every source.  Failures are per VM (failed, error) and,
 * for debugfs alone, ks_kvmcol_status(). */
void ks_kvmcol_read(struct ks_kvmcol *c);
struct ks_kvmcol_vm *ks_kvmcol_vms(struct ks_kvmcol *c, size_t *n);
/* Whether libvirt answered at the last reading. */
bool ks_kvmcol_libvirt_up(const struct ks_kvmcol *c);
/* The URI read (given or automatic); NULL when libvirt is not read. */
const char *ks_kvmcol_libvirt_uri(const struct ks_kvmcol *c);
/* "" or why the last reading of debugfs alone failed. */
const char *ks_kvmcol_status(const struct ks_kvmcol *c);
/* The values now become every VM's base (top's r key): counters shown
 * since then are now minus base.  -1 when out of memory. */
int ks_kvmcol_reset(struct ks_kvmcol *c);

/* The lines of the kvmstats view of VM (kvmstats_rows.c): each statistic
 * of the VM, a vCPU statistic summed over the vCPUs (depth 1; a boolean's
 * sum counts the vCPUs with it set) and, with VCPUS, each vCPU's below it
 * (depth 2); the busiest first (the change in the interval, as kvm_stat
 * sorts), then the largest values, then by name.  Only the statistics
 * WANTED (NULL: all) says yes to; with SKIP_ZERO, not those that did not
 * move in the interval (or are 0 at the first reading).  Counters count
 * since the base (ks_kvmcol_reset).  Names point into VM->now. */
struct ks_kstat_row {
	const char *name;
	int depth;
	int32_t vcpu;             /* depth 2: its vCPU; else -1 */
	bool is_bool;             /* VALUE is true or false */
	uint64_t value;
	bool have_rate;           /* counters with a previous reading */
	double rate;              /* change per second in the interval */
};
int ks_kvmcol_rows(const struct ks_kvmcol_vm *vm, bool (*wanted)(void *ctx, const char *name),
		   void *ctx, bool skip_zero, bool vcpus, struct ks_kstat_row **out, size_t *n);

#endif
