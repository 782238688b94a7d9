/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats.h - KVM's own statistics of a VM and its vCPUs (exits,
 * halt_exits, insn_emulation, io_exits, the halt polling histograms...),
 * read from QEMU's QMP `query-stats` (QEMU >= 7.1; works under kernel
 * lockdown), from libvirt, which owns the QMP socket of its domains and
 * passes the same statistics on (libvirt >= 8.9), or from debugfs
 * (/sys/kernel/debug/kvm/PID-FD/) when readable.
 *
 *	struct ks_qmp *q;
 *	ks_qmp_open(&q, "/run/vm1.qmp", 2000, &err);   // greeting + qmp_capabilities
 *	struct ks_kstats s = { 0 };
 *	ks_qmp_query_stats(q, &s, &err);               // target vm and vcpu
 *	... s.v[i].name, s.v[i].vcpu, s.v[i].value, ks_kstat_scaled(&s.v[i]) ...
 *	ks_kstats_free(&s); ks_qmp_close(q);
 *
 *	struct ks_libvirt *lv;
 *	ks_libvirt_open(&lv, "qemu:///system", &err);  // read-only connection
 *	struct ks_kstats *d; size_t n;
 *	ks_libvirt_stats(lv, &d, &n, &err);           // one per running domain
 *	... d[i].name (the domain), d[i].pid, d[i].v ...
 *	ks_libvirt_close(lv);
 */
#ifndef KVMSCOPE_KVMSTATS_H
#define KVMSCOPE_KVMSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum ks_kstat_type {
	KS_KSTAT_CUMULATIVE = 0, /* a counter since the VM started */
	KS_KSTAT_INSTANT,        /* a current value */
	KS_KSTAT_PEAK,           /* the highest value seen */
	KS_KSTAT_HIST,           /* a histogram (linear or log2 buckets) */
};

struct ks_kstat {
	char name[48];
	int32_t vcpu;            /* -1: a statistic of the VM */
	enum ks_kstat_type type;
	bool is_bool;
	uint64_t value;          /* histograms: the sum of the buckets */
	uint32_t nbuckets;
	uint64_t *buckets;       /* histograms only */
	/* QMP only, from query-stats-schemas: the unit ("", "seconds", "bytes",
	 * "cycles", "boolean") and the scale: VALUE is in units of
	 * BASE^EXPONENT (halt_wait_ns: "seconds", 10, -9); 10 and 0 elsewhere. */
	char unit[16];
	int32_t base, exponent;
};

struct ks_kstats {
	int32_t pid;             /* the QEMU process; -1 unknown */
	char source[16];         /* "qmp", "libvirt", "debugfs" */
	char name[128];          /* the VM's name where the source gives one
				  * (libvirt: the domain's); else "" */
	struct ks_kstat *v;
	size_t n, cap;
	/* the lookup index of ks_kstats_find() and _first_vcpu(): built as
	 * they first need it, extended to entries appended since, freed by
	 * ks_kstats_free().  A copy of the struct moves it with v. */
	struct ks_kstats_index *index;
};

void ks_kstats_free(struct ks_kstats *s);
/* The statistic NAME of VCPU (-1: the VM's); NULL if absent.  Constant
 * time (a hash table), so that a VM with tens of thousands of statistics
 * costs time in proportion to them.  An entry's name must not change
 * once it has been looked up. */
const struct ks_kstat *ks_kstats_find(const struct ks_kstats *s, const char *name, int32_t vcpu);
/* The first statistic of a vCPU (vcpu >= 0) named NAME, in S's order, and
 * the one after K among them; NULL when there is none. */
const struct ks_kstat *ks_kstats_first_vcpu(const struct ks_kstats *s, const char *name);
const struct ks_kstat *ks_kstats_next_vcpu(const struct ks_kstats *s, const struct ks_kstat *k);
/* K's value in its unit (VALUE times BASE^EXPONENT when BASE is 2 or 10):
 * seconds for halt_wait_ns, bytes for a byte count in pages. */
double ks_kstat_scaled(const struct ks_kstat *k);
/* Append the statistic NAME of VCPU (-1: the VM's), zeroed but for base 10;
 * NULL when out of memory. */
struct ks_kstat *ks_kstats_add(struct ks_kstats *s, const char *name, int32_t vcpu);

struct ks_qmp;

/* Connect to the QMP unix socket PATH, read the greeting and negotiate
 * (qmp_capabilities).  Each command (the greeting counts as one) must be
 * answered within TIMEOUT_MS, whatever events the peer sends meanwhile. */
int ks_qmp_open(struct ks_qmp **out, const char *path, int timeout_ms, struct ks_error *err);

struct ks_ctx;
struct ks_qmp_opts {
	int timeout_ms;          /* per command; 0: 2000 */
	/* every wait also ends, within 100 ms, once CTX's cancel function
	 * says so (ks_ctx_set_cancel): "interrupted" */
	struct ks_ctx *ctx;
	/* trust: when check_owner, the socket file and the process serving
	 * it (SO_PEERCRED) must be OWNER's; when PEER_PID > 0, that process
	 * must be PEER_PID.  Checked before a byte is read from it. */
	bool check_owner;
	uint32_t owner;
	int32_t peer_pid;
};
int ks_qmp_open_opts(struct ks_qmp **out, const char *path, const struct ks_qmp_opts *o,
		     struct ks_error *err);
/* The same over FD, a connected stream socket (it is closed by
 * ks_qmp_close(), or here on failure); NAME stands for it in messages.
 * For tests and fuzzing: one end of a socketpair(). */
int ks_qmp_open_fd(struct ks_qmp **out, int fd, const char *name, int timeout_ms,
		   struct ks_error *err);
/* The QEMU process at the other end (SO_PEERCRED); -1 unknown. */
int32_t ks_qmp_pid(const struct ks_qmp *q);
/* Its user (SO_PEERCRED); -1 unknown. */
int64_t ks_qmp_peer_uid(const struct ks_qmp *q);
const char *ks_qmp_path(const struct ks_qmp *q);
/* query-stats with target vm and vcpu (and, once, query-stats-schemas and
 * query-cpus-fast for the types and the vCPU numbers).  OUT is emptied
 * first.  Returns 0, or -1 with err set. */
int ks_qmp_query_stats(struct ks_qmp *q, struct ks_kstats *out, struct ks_error *err);
/* The VM's name (query-name: QEMU's -name guest=NAME) into NAME ("" when it
 * has none).  Returns 0, or -1 with err set. */
int ks_qmp_query_name(struct ks_qmp *q, char *name, size_t len, struct ks_error *err);
/* Send one command (a JSON object text) and return its "return" member as
 * JSON text (malloc'd) or fail with the QMP error; for tests and tools. */
int ks_qmp_command(struct ks_qmp *q, const char *cmd, char **reply, struct ks_error *err);
void ks_qmp_close(struct ks_qmp *q);

/* Parse the text of one query-stats reply ({"return": [...]}) and append
 * its statistics to OUT; VCPU_OF maps a "qom-path" to a vCPU number (NULL:
 * every vCPU result is numbered in order).  Returns 0, or -1 with err set
 * ("query-stats reply: offset N: problem"). */
int ks_qmp_parse_stats(const char *text, size_t len, struct ks_kstats *out,
		       int32_t (*vcpu_of)(void *ctx, const char *qom_path), void *ctx,
		       struct ks_error *err);

/* libvirt.  libvirt.so.0 is loaded when a connection is opened, so that
 * kvmscope needs libvirt only where it is used; the statistics come from
 * virConnectGetAllDomainStats() (the "vm" and "vcpu" groups: QEMU's
 * query-stats, which libvirt 8.9 and later pass on), which needs only a
 * read-only connection and, unlike a monitor command through libvirt,
 * leaves the domain untainted.  libvirt passes no histograms (the halt
 * polling *_hist statistics) and no units: a statistic named *_ns is
 * nanoseconds (KVM names its time statistics so; QEMU's schema says
 * "seconds", 10^-9), a boolean is "boolean". */
#define KS_LIBVIRT_URI "qemu:///system"
struct ks_libvirt;

/* Whether a socket of the local libvirt daemon that serves qemu:///system
 * exists (libvirtd's or virtqemud's, read-only or not, in /run/libvirt). */
bool ks_libvirt_socket_exists(void);
/* Whether libvirt.so.0 can be loaded; false with err set ("libvirt cannot
 * be loaded: ...") when it cannot. */
bool ks_libvirt_installed(struct ks_error *err);
/* Open a read-only connection to URI (NULL: KS_LIBVIRT_URI).  Errors are
 * one line: "libvirt qemu:///system: Failed to connect socket to ...". */
int ks_libvirt_open(struct ks_libvirt **out, const char *uri, struct ks_error *err);
struct ks_libvirt_opts {
	/* each call that talks to the daemon (this open, each
	 * ks_libvirt_stats(), the close) must return within it; 0: 2000.
	 * A call given up on is left to finish in a thread of its own (its
	 * results freed there): "libvirt URI: no answer to NAME within N ms" */
	int timeout_ms;
	/* every wait also ends, within 100 ms, once CTX's cancel function
	 * says so (ks_ctx_set_cancel): "libvirt URI: interrupted" (a close
	 * is still waited for 500 ms, so that it is done with a daemon that
	 * answers).  With a
	 * context, at most 4 calls given up on run at a time: the next ones
	 * fail at once until one ends */
	struct ks_ctx *ctx;
};
/* The same with a deadline and a cancel (ks_libvirt_open(): 2000 ms, no
 * context). */
int ks_libvirt_open_opts(struct ks_libvirt **out, const char *uri, const struct ks_libvirt_opts *o,
			 struct ks_error *err);
/* The URI as given to ks_libvirt_open() (or the default). */
const char *ks_libvirt_uri(const struct ks_libvirt *lv);
/* The KVM statistics of every active (running or paused) domain (at most
 * 16384 domains and 262144 statistics in all, else an error): *OUT is
 * a malloc'd array of *N entries (free each, then the array), source
 * "libvirt", name the domain's name, pid its QEMU process when the
 * connection is local (found by the -uuid of its command line; else -1).
 * A domain whose statistics libvirt did not give (libvirt older than 8.9,
 * QEMU older than 7.1, or the domain busy with another job: nothing waits
 * for it) has none (n == 0).  Returns 0, or -1 with err set. */
int ks_libvirt_stats(struct ks_libvirt *lv, struct ks_kstats **out, size_t *n,
		     struct ks_error *err);
void ks_libvirt_close(struct ks_libvirt *lv);
/* One of libvirt's typed parameters of a domain's statistics record:
 * "vm.NAME.TYPE" or "vcpu.N.NAME.TYPE" (TYPE: "sum" cumulative, "cur"
 * instant, "max" peak) is appended to S as statistic NAME; other fields
 * (libvirt's own: "vcpu.N.time", "vcpu.current", ...) are not.  Returns 1
 * when appended, 0 when FIELD is no KVM statistic, -1 out of memory. */
int ks_libvirt_add_param(struct ks_kstats *s, const char *field, bool is_bool, uint64_t value);

/* debugfs: the VMs under DIR (normally /sys/kernel/debug/kvm), one
 * struct ks_kstats per PID-FD directory, with the vcpuN subdirectories.
 * *OUT is a malloc'd array of *N entries (free each, then the array).
 * Returns 0, or -1 with err set (unreadable: lockdown, not mounted). */
int ks_kvm_debugfs_stats(const char *dir, struct ks_kstats **out, size_t *n, struct ks_error *err);

#endif
