/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gdbproto.h - a read-only GDB remote serial protocol client (QEMU gdbstub).
 *
 *	struct ks_gdb *g = ks_gdb_connect("127.0.0.1:1234", 2000, &err);
 *	ks_gdb_handshake(g, &err);                 qSupported, '?'
 *	ks_gdb_threads(g, ids, 64, &n, &err);      one thread per vCPU
 *	ks_gdb_continue(g, &err);                  guest runs
 *	ks_gdb_interrupt(g, &err);                 0x03, waits for the stop reply
 *	ks_gdb_select(g, ids[0], &err);  ks_gdb_read_regs(...);  ks_gdb_read_mem(...)
 *	ks_gdb_detach(g, &err);  ks_gdb_close(g);  (detach leaves the guest running)
 *
 * Framing: '$' payload '#' checksum, '+'/'-' acks with retransmission,
 * '}' escapes, run-length encoded replies, the stub's PacketSize.  Every read
 * waits at most the timeout given at connect time, and no longer than the
 * caller's deadline (ks_gdb_set_deadline).  The client can never write
 * guest state: packets starting with M, X, G or P are refused before they
 * reach the wire.  Errors: a negative return and one sentence in err;
 * -ETIME when the caller's deadline ran out.
 *
 * Deadlines: once the deadline has passed, new packets are refused (-ETIME)
 * except those that let the guest go (c, D and the Qqemu.PhyMemMode:0
 * before D), which are sent without waiting for their answer.  Answers
 * that a deadline cut short are dropped when they arrive later, so the
 * next exchange is never mistaken for an old one's.
 */
#ifndef KVMSCOPE_GDBPROTO_H
#define KVMSCOPE_GDBPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"

#define KS_GDB_MAX_REPLY (1u << 20)
#define KS_GDB_THREAD_ID_MAX 32

struct ks_gdb;

struct ks_gdb_stats {
	uint64_t packets_sent, packets_received, retransmits, bad_checksums;
	uint64_t bytes_sent, bytes_received;
	uint64_t writes; /* send() calls: packets, acks (most ride on the next packet), 0x03 */
};

/* HOSTPORT "host:port" (IPv4 or name).  TIMEOUT_MS bounds every wait. */
struct ks_gdb *ks_gdb_connect(const char *hostport, int timeout_ms, struct ks_error *err);
/* Use an already connected stream (tests, fuzzing).  The fd is owned. */
struct ks_gdb *ks_gdb_from_fd(int fd, int timeout_ms);
void ks_gdb_close(struct ks_gdb *g);
/* Every byte sent is also written to FD (-1 to stop): for audits. */
void ks_gdb_set_log(struct ks_gdb *g, int fd);
const struct ks_gdb_stats *ks_gdb_stats(const struct ks_gdb *g);
size_t ks_gdb_packet_size(const struct ks_gdb *g);
bool ks_gdb_running(const struct ks_gdb *g);

/* DEADLINE_NS: CLOCK_MONOTONIC nanoseconds after which no wait goes on
 * (0: none, only the timeout).  Setting it clears ks_gdb_expired(). */
void ks_gdb_set_deadline(struct ks_gdb *g, int64_t deadline_ns);
/* A wait or a packet was cut by the deadline since it was set. */
bool ks_gdb_expired(const struct ks_gdb *g);
/* No answer to a cut exchange is still to come. */
bool ks_gdb_in_step(const struct ks_gdb *g);
/* Read and drop the answers still to come, until in step (0) or the
 * deadline or timeout (negative).  Sends nothing but acks. */
int ks_gdb_settle(struct ks_gdb *g, struct ks_error *err);

/* Raw exchange: send PAYLOAD, return the decoded reply (NUL-terminated,
 * owned by G, valid until the next call).  Stop replies arriving
 * unsolicited are skipped.  Write packets (M X G P) are refused. */
int ks_gdb_command(struct ks_gdb *g, const char *payload, const char **reply,
		   size_t *len, struct ks_error *err);

int ks_gdb_handshake(struct ks_gdb *g, struct ks_error *err);
/* Thread ids as the stub spells them ("p01.02" or "2"). */
int ks_gdb_threads(struct ks_gdb *g, char ids[][KS_GDB_THREAD_ID_MAX], size_t max,
		   size_t *n, struct ks_error *err);
int ks_gdb_select(struct ks_gdb *g, const char *id, struct ks_error *err);
/* 'g': raw register bytes into BUF (at most MAX). */
int ks_gdb_read_regs(struct ks_gdb *g, uint8_t *buf, size_t max, size_t *len,
		     struct ks_error *err);
/* 'm', split to the packet size.  -EFAULT when the stub answers Exx. */
int ks_gdb_read_mem(struct ks_gdb *g, uint64_t addr, void *buf, size_t len,
		    struct ks_error *err);
/* QEMU: Qqemu.PhyMemMode (m reads physical addresses while on). */
int ks_gdb_set_phys(struct ks_gdb *g, bool on, struct ks_error *err);
/* 'c'.  Sent even after the deadline; -ETIME: sent, ack still to come
 * (ks_gdb_running() is then true: the stub reads it in turn). */
int ks_gdb_continue(struct ks_gdb *g, struct ks_error *err);
/* Stop a running target (0x03) and wait for its stop reply.  -ETIME after
 * 0x03 went out: the target counts as stopped, the reply comes later. */
int ks_gdb_interrupt(struct ks_gdb *g, struct ks_error *err);
/* Stop if running, then D;pid (multiprocess) or D.  The stub resumes.
 * -ETIME: the detach went out unconfirmed, or (ks_gdb_running() and
 * nothing sent) a running target was left running without a detach. */
int ks_gdb_detach(struct ks_gdb *g, struct ks_error *err);

/* x86-64 registers from QEMU's 'g' layout (608 bytes for x86_64). */
struct ks_x86_regs {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rip, rflags;
	uint32_t cs, ss;
	uint64_t fs_base, gs_base, kernel_gs_base;
	uint64_t cr0, cr2, cr3, cr4, efer;
};
int ks_x86_regs_from_gdb(const uint8_t *buf, size_t len, struct ks_x86_regs *r,
			 struct ks_error *err);

#endif
