/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_gdbproto.c - libFuzzer target: the bytes are everything a gdbstub
 * sends; the client runs a full session (handshake, threads, registers,
 * memory, detach) against them over a socketpair and must fail cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvmscope/gdbproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	struct ks_gdb *g;
	struct ks_error err;
	char ids[4][KS_GDB_THREAD_ID_MAX];
	uint8_t regs[1024], mem[64];
	size_t n, len;
	struct ks_x86_regs r;
	int sndbuf = 64 << 20;

	if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	if (write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR); /* EOF after the data: no waiting */
	/* nobody reads what the client sends: room for all of it (each 1-byte
	 * ack or NAK takes ~1 KB of buffer), or a long input waits out the
	 * send timeout (50 ms on 3% of the corpus) */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	g = ks_gdb_from_fd(sv[0], 50);
	if (g) {
		if (ks_gdb_handshake(g, &err) == 0 && ks_gdb_threads(g, ids, 4, &n, &err) == 0 &&
		    ks_gdb_select(g, ids[0], &err) == 0 &&
		    ks_gdb_read_regs(g, regs, sizeof(regs), &len, &err) == 0) {
			ks_x86_regs_from_gdb(regs, len, &r, &err);
			ks_gdb_read_mem(g, 0x1000, mem, sizeof(mem), &err);
		}
		ks_gdb_detach(g, &err);
		ks_gdb_close(g);
	}
	close(sv[1]);
	return 0;
}
