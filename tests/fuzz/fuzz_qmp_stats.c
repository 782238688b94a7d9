/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_qmp_stats.c - libFuzzer target for the QMP client of kvmstats.h
 * (kvmscope top --kvmstats, kvmscope exporter --qmp).  The same bytes are
 *  - one query-stats reply, as QEMU sends it, for ks_qmp_parse_stats();
 *  - QEMU's whole side of a session over a socketpair(): the greeting, then
 *    the replies (and any events) to qmp_capabilities, query-name,
 *    query-cpus-fast, query-stats-schemas and query-stats vm and vcpu, twice
 *    the last two; its end of the socket is shut after them, so a missing
 *    line ends the session at once.
 * Every reply the client reads goes through the same parsers as from QEMU.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvmscope/kvmstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int32_t vcpu_of(void *ctx, const char *qom)
{
	(void)ctx;
	return qom[0] == '/' ? -1 : 3;
}

static void use(const struct ks_kstats *s)
{
	volatile double sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += ks_kstat_scaled(&s->v[i]);
	if (s->n)
		ks_kstats_find(s, s->v[0].name, s->v[0].vcpu);
}

static void session(const uint8_t *data, size_t size)
{
	struct ks_kstats s = { 0 };
	struct ks_error err;
	struct ks_qmp *q;
	char name[64];
	int sv[2], big = 1 << 20;
	size_t off = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	/* QEMU's side: all of it up front (what does not fit is cut), then EOF */
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	while (off < size) {
		ssize_t w = write(sv[1], data + off, size - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	shutdown(sv[1], SHUT_WR);
	if (ks_qmp_open_fd(&q, sv[0], "fuzz", 1000, &err) == 0) {
		if (ks_qmp_query_name(q, name, sizeof(name), &err) == 0 &&
		    ks_qmp_query_stats(q, &s, &err) == 0) {
			use(&s);
			if (ks_qmp_query_stats(q, &s, &err) == 0)
				use(&s);
		}
		ks_kstats_free(&s);
		ks_qmp_close(q);
	}
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ks_kstats s = { 0 };
	struct ks_error err;

	ks_qmp_parse_stats((const char *)data, size, &s, vcpu_of, NULL, &err);
	use(&s);
	ks_kstats_free(&s);
	session(data, size);
	return 0;
}
