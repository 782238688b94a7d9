/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmident.h - who is who in a recording: kvmscope record's task map.
 *
 * A trace.dat names threads (saved cmdlines) but not the process each one
 * belongs to, so a recording cannot say which VM a vCPU thread serves
 * once QEMU's threads all share one name.  kvmscope record stores, in one
 * trace.dat option of its own (id KS_VMIDENT_OPTION; trace-cmd skips
 * options it does not know), the thread -> process map that tracefs keeps
 * with options/record-tgid (saved_tgids) and, per process, its name (comm)
 * and the VM name live views show (QEMU's -name, "" for other VMMs).
 *
 * The option's data is text, one item per line:
 *   kvmscope-vmident 1
 *   t TID TGID
 *   p TGID<TAB>COMM<TAB>NAME
 * COMM and NAME hold no tab, newline or other control character (the
 * writer replaces them with '?').  Unknown line kinds are skipped (later
 * versions may add some); a malformed line is an error.
 */
#ifndef KVMSCOPE_VMIDENT_H
#define KVMSCOPE_VMIDENT_H

#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"
#include "kvmscope/source.h"

#define KS_VMIDENT_OPTION 0x4b53 /* "KS" */

struct ks_vmident_task {
	int32_t tid, tgid;
};

struct ks_vmident {
	struct ks_vmident_task *tasks; /* sorted by tid after parse */
	size_t ntasks, task_cap;
	struct ks_source_proc *procs;  /* comm and name strings owned here */
	size_t nprocs, proc_cap;
};

/* Parse the option's DATA (SIZE bytes) into V (zeroed first); errors name
 * PATH and the file offset AT of the option plus the line's offset.
 * Returns 0, or -1 with ERR set (V is then empty). */
int ks_vmident_parse(struct ks_vmident *v, const char *path, uint64_t at, const char *data,
		     size_t size, struct ks_error *err);

/* The process of thread TID, or -1 if the map does not hold it. */
int32_t ks_vmident_tgid(const struct ks_vmident *v, int32_t tid);

/* Building a map (kvmscope record): add a thread, or a process (one
 * already there takes the new names).  Return 0, or -1 out of memory. */
int ks_vmident_add_task(struct ks_vmident *v, int32_t tid, int32_t tgid);
int ks_vmident_add_proc(struct ks_vmident *v, int32_t tgid, const char *comm, const char *name);
const struct ks_source_proc *ks_vmident_proc(const struct ks_vmident *v, int32_t tgid);

/* The option's text of V (malloc'ed, *LEN bytes), NULL out of memory. */
char *ks_vmident_format(const struct ks_vmident *v, size_t *len);

void ks_vmident_free(struct ks_vmident *v);

#endif
