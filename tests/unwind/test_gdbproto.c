/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_gdbproto.c - the gdb remote protocol client against a scripted fake
 * stub (a thread on the other end of a socketpair).
 *
 * The stub checks each packet's checksum independently (sum of payload
 * bytes mod 256, computed here), answers from a script, and can corrupt a
 * checksum, run-length encode, escape, stay silent or send an early stop
 * packet, so that every part of the framing is exercised.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvmscope/gdbproto.h"
#include "../lib/ktest.h"

struct stub {
	int fd;
	const char *const *replies; /* raw bytes to send after each packet ("" = none) */
	char got[64][256];          /* payloads received (checksum verified) */
	int ngot, bad_sums, interrupts;
	bool early_stop;
};

static int rd(int fd)
{
	unsigned char c;

	return read(fd, &c, 1) == 1 ? c : -1;
}

static void send_raw(int fd, const char *s)
{
	if (*s && write(fd, s, strlen(s)) < 0)
		return;
}

static void send_pkt(int fd, const char *payload)
{
	char b[300];
	unsigned sum = 0;

	for (const char *p = payload; *p; p++)
		sum += (unsigned char)*p;
	snprintf(b, sizeof(b), "$%s#%02x", payload, sum & 0xff);
	send_raw(fd, b);
}

static void *stub_main(void *arg)
{
	struct stub *s = arg;
	int c, i = 0;

	if (s->early_stop)
		send_pkt(s->fd, "T05thread:p01.01;");
	while ((c = rd(s->fd)) >= 0) {
		char body[256];
		int n = 0, sum = 0, h1, h2;
		unsigned v;
		if (c == 0x03) {
			s->interrupts++;
			send_pkt(s->fd, "T02thread:p01.01;");
			continue;
		}
		if (c != '$')
			continue;
		while ((c = rd(s->fd)) >= 0 && c != '#' && n < 255) {
			body[n++] = (char)c;
			sum = (sum + c) & 0xff;
		}
		body[n] = 0;
		h1 = rd(s->fd);
		h2 = rd(s->fd);
		char hx[3] = { (char)h1, (char)h2, 0 };
		sscanf(hx, "%x", &v);
		if ((int)v != sum) {
			s->bad_sums++;
			send_raw(s->fd, "-");
			continue;
		}
		send_raw(s->fd, "+");
		if (s->ngot < 64)
			snprintf(s->got[s->ngot++], 256, "%s", body);
		if (s->replies[i])
			send_raw(s->fd, s->replies[i++]);
	}
	return NULL;
}

/* "$payload#xx" with the checksum computed here. */
static char *pkt(const char *payload)
{
	static char bufs[16][600];
	static int k;
	char *b = bufs[k++ % 16];
	unsigned sum = 0;

	for (const char *p = payload; *p; p++)
		sum += (unsigned char)*p;
	snprintf(b, 600, "$%s#%02x", payload, sum & 0xff);
	return b;
}

static struct ks_gdb *start(struct stub *s, pthread_t *th, int timeout_ms)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return NULL;
	s->fd = sv[1];
	pthread_create(th, NULL, stub_main, s);
	return ks_gdb_from_fd(sv[0], timeout_ms);
}

static void stop(struct stub *s, pthread_t th, struct ks_gdb *g)
{
	ks_gdb_close(g);
	pthread_join(th, NULL);
	close(s->fd);
}

static void t_handshake_threads_regs(void)
{
	const char *replies[] = {
		pkt("PacketSize=1000;multiprocess+;qXfer:features:read+"),
		pkt("T05thread:p01.01;"),
		pkt("mp01.01,p01.02"), pkt("l"),
		pkt("OK"),
		NULL, NULL,
	};
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	char ids[8][KS_GDB_THREAD_ID_MAX];
	size_t n = 0;
	struct ks_gdb *g = start(&s, &th, 2000);

	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_handshake(g, &err), 0);
	KT_EQ_U64(ks_gdb_packet_size(g), 0x1000);
	KT_EQ_INT(ks_gdb_threads(g, ids, 8, &n, &err), 0);
	KT_EQ_U64(n, 2);
	KT_EQ_STR(ids[1], "p01.02");
	KT_EQ_INT(ks_gdb_select(g, ids[1], &err), 0);
	stop(&s, th, g);
	KT_EQ_STR(s.got[0], "qSupported:multiprocess+;swbreak+;hwbreak+");
	KT_EQ_STR(s.got[4], "Hgp01.02");
	KT_EQ_INT(s.bad_sums, 0);
}

static void t_rle_and_escapes(void)
{
	/* "0*"" = '0' then 3 more (0x22 - 29): "0000"; "}]" = '}' ^ 0x20 ... */
	const char *replies[] = { "$0* 1#", NULL, NULL };
	char reply[64];
	unsigned sum = 0;
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	const char *r;
	size_t len;
	struct ks_gdb *g;

	/* run-length: '0' '*' ' ' (32 - 29 = 3 repeats), then escaped '#' ("}\x03") */
	const char body[] = { '0', '*', ' ', '1', '}', 0x03, 0 };
	for (const char *p = body; *p; p++)
		sum += (unsigned char)*p;
	snprintf(reply, sizeof(reply), "$%s#%02x", body, sum & 0xff);
	replies[0] = reply;
	g = start(&s, &th, 2000);
	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_command(g, "qfoo", &r, &len, &err), 0);
	KT_EQ_STR(r, "00001#");
	KT_EQ_U64(len, 6);
	stop(&s, th, g);
}

static void t_bad_checksum_retransmit(void)
{
	/* the reply arrives first with a wrong checksum: the client asks again */
	char both[128];
	const char *replies[] = { both, NULL };
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	const char *r;
	struct ks_gdb *g;

	snprintf(both, sizeof(both), "$OK#00%s", pkt("OK"));
	g = start(&s, &th, 2000);
	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_command(g, "Hgp01.01", &r, NULL, &err), 0);
	KT_EQ_STR(r, "OK");
	KT_EQ_U64(ks_gdb_stats(g)->bad_checksums, 1);
	stop(&s, th, g);
}

static void t_memory_hex_and_error(void)
{
	const char *replies[] = { pkt("0102fe7f"), pkt("E14"), NULL };
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	uint8_t buf[4];
	struct ks_gdb *g = start(&s, &th, 2000);

	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_read_mem(g, 0xffffffff81000000ull, buf, 4, &err), 0);
	KT_EQ_U64(buf[2], 0xfe);
	KT_EQ_U64(buf[3], 0x7f);
	KT_EXPECT(ks_gdb_read_mem(g, 0x1000, buf, 4, &err) < 0);
	KT_EXPECT(strstr(err.msg, "E14") != NULL);
	stop(&s, th, g);
	KT_EQ_STR(s.got[0], "mffffffff81000000,4");
}

static void t_early_stop_packet_skipped(void)
{
	const char *replies[] = { pkt("PacketSize=400"), pkt("S05"), NULL };
	struct stub s = { .replies = replies, .early_stop = true };
	pthread_t th;
	struct ks_error err;
	struct ks_gdb *g = start(&s, &th, 2000);

	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_handshake(g, &err), 0);
	KT_EQ_U64(ks_gdb_packet_size(g), 0x400);
	stop(&s, th, g);
}

/* A PacketSize that is not a hex number is the stub's error, not 0. */
static void t_packet_size_checked(void)
{
	const char *replies[] = { pkt("PacketSize=4zz;multiprocess+"), pkt("S05"), NULL };
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	struct ks_gdb *g = start(&s, &th, 2000);

	KT_REQUIRE(g);
	KT_EXPECT(ks_gdb_handshake(g, &err) < 0);
	KT_EXPECT(strstr(err.msg, "PacketSize is not a hex number") != NULL);
	KT_EXPECT(strstr(err.msg, "offset 11") != NULL);
	stop(&s, th, g);
}

static void t_refuses_write_packets(void)
{
	const char *replies[] = { NULL };
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	const char *r;
	struct ks_gdb *g = start(&s, &th, 500);
	const char *writes[] = { "M1000,1:00", "X1000,1:a", "G00", "P10=00" };

	KT_REQUIRE(g);
	for (int i = 0; i < 4; i++) {
		KT_EXPECT(ks_gdb_command(g, writes[i], &r, NULL, &err) < 0);
		KT_EXPECT(strstr(err.msg, "refusing") != NULL);
	}
	stop(&s, th, g);
	KT_EQ_INT(s.ngot, 0);
}

static void t_timeout_and_detach(void)
{
	const char *replies[] = { "", "", pkt("OK"), NULL };
	struct stub s = { .replies = replies };
	pthread_t th;
	struct ks_error err;
	const char *r;
	struct ks_gdb *g = start(&s, &th, 300);

	KT_REQUIRE(g);
	KT_EXPECT(ks_gdb_command(g, "qSilent", &r, NULL, &err) < 0);
	KT_EXPECT(strstr(err.msg, "no answer") != NULL);
	/* continue, interrupt (0x03 -> stop reply), detach D (no multiprocess) */
	KT_EQ_INT(ks_gdb_continue(g, &err), 0);
	KT_EXPECT(ks_gdb_running(g));
	KT_EQ_INT(ks_gdb_detach(g, &err), 0);
	stop(&s, th, g);
	KT_EQ_INT(s.interrupts, 1);
	KT_EQ_STR(s.got[1], "c");
	KT_EQ_STR(s.got[2], "D");
}

/* A stub that acks and answers everything in advance but never reads: the
 * socket buffer fills and the client's send must time out, not block. */
static void t_send_timeout_peer_not_reading(void)
{
	int sv[2], sndbuf = 4096;
	size_t i;
	struct ks_gdb *g;
	struct ks_error err;
	const char *r;
	char *answers;
	const char *one = "+$OK#9a";
	struct timespec t0, t1;
	int rc = 0;

	KT_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	answers = malloc(strlen(one) * 2000 + 1);
	KT_REQUIRE(answers);
	answers[0] = 0;
	for (i = 0; i < 2000; i++)
		strcat(answers, one);
	send_raw(sv[1], answers);
	free(answers);
	g = ks_gdb_from_fd(sv[0], 200);
	KT_REQUIRE(g);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 2000 && rc == 0; i++)
		rc = ks_gdb_command(g, "qRcmd,696e666f2072656769737465727320616c6c20706c65617365", &r,
				    NULL, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	KT_EXPECT(rc < 0);
	KT_EXPECT(strstr(err.msg, "timed out sending") != NULL);
	KT_EXPECT(t1.tv_sec - t0.tv_sec < 5);
	ks_gdb_close(g);
	close(sv[1]);
}

/* A stub that, like gdbserver, waits for the ack of each packet it sends
 * before it sends the next one: after an interrupt it sends a console
 * packet ('O') and only then the stop reply.  The client must not hold the
 * ack back while it waits.  Counts the acks that came in front of a packet.
 * With BURST it sends both packets in one write instead (QEMU does not wait
 * for acks): each still needs its own ack. */
struct acking_stub { int fd, merged, packets, acks, sent; bool burst; };

static void *acking_stub_main(void *arg)
{
	struct acking_stub *s = arg;
	char both[128];
	int c, prev = 0;

	snprintf(both, sizeof(both), "%s%s", pkt("O4869"), pkt("T05thread:p01.01;"));
	while ((c = rd(s->fd)) >= 0) {
		s->acks += c == '+';
		if (c == 0x03 && s->burst) {
			send_raw(s->fd, both);
			s->sent += 2;
		} else if (c == 0x03) {
			send_pkt(s->fd, "O4869");
			while ((c = rd(s->fd)) >= 0 && c != '+')
				;
			s->acks += c == '+';
			send_pkt(s->fd, "T05thread:p01.01;");
			s->sent += 2;
		} else if (c == '$') {
			int first = rd(s->fd);

			s->packets++;
			s->merged += prev == '+';
			while ((c = rd(s->fd)) >= 0 && c != '#')
				;
			rd(s->fd);
			rd(s->fd);
			send_raw(s->fd, "+");
			if (first != 'c') { /* continue: no reply until the stop */
				send_pkt(s->fd, first == 'q' && s->packets == 1 ? "PacketSize=400" :
					 first == '?' ? "S05" : "OK");
				s->sent++;
			}
		}
		prev = c;
	}
	return NULL;
}

/* Handshake, QUERY, continue, interrupt and qC against the stub, then
 * close; *WRITES = the client's writes before the close. */
static void acking_session(struct acking_stub *s, const char *query, uint64_t *writes)
{
	int sv[2];
	pthread_t th;
	struct ks_gdb *g;
	struct ks_error err;
	const char *r;

	KT_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	s->fd = sv[1];
	pthread_create(&th, NULL, acking_stub_main, s);
	g = ks_gdb_from_fd(sv[0], 1000);
	KT_REQUIRE(g);
	KT_EQ_INT(ks_gdb_handshake(g, &err), 0);
	KT_EQ_INT(ks_gdb_command(g, query, &r, NULL, &err), 0);
	KT_EQ_INT(ks_gdb_continue(g, &err), 0);
	KT_EQ_INT(ks_gdb_interrupt(g, &err), 0);
	KT_EQ_INT(ks_gdb_command(g, "qC", &r, NULL, &err), 0);
	*writes = ks_gdb_stats(g)->writes;
	ks_gdb_close(g);
	pthread_join(th, NULL);
	close(sv[1]);
}

static void t_acks_late_but_before_waiting(void)
{
	struct acking_stub s = { 0 };
	uint64_t writes;

	acking_session(&s, "qOffsets", &writes);
	/* 5 packets, 0x03 and one ack alone (the stub waited for it) */
	KT_EQ_U64(writes, 7);
	/* every packet after the first carried the previous reply's ack */
	KT_EQ_INT(s.packets, 5); /* qSupported ? qOffsets c qC */
	KT_EQ_INT(s.merged, s.packets - 1);
	KT_EQ_INT(s.acks, s.sent);
}

static void t_every_packet_acked_once(void)
{
	struct acking_stub s = { .burst = true };
	uint64_t writes;

	acking_session(&s, "qOffsets", &writes);
	KT_EQ_INT(s.sent, 6); /* PacketSize, S05, OK, O, T05, OK */
	KT_EQ_INT(s.acks, s.sent);
}

/* ---- deadlines: the test plays the stub on the other end ---- */

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Everything the client has sent so far (the other end is non-blocking). */
static void drain(int fd, char *buf, size_t max)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < max && (r = recv(fd, buf + n, max - 1 - n, MSG_DONTWAIT)) > 0)
		n += (size_t)r;
	buf[n] = 0;
}

static struct ks_gdb *pair(int *stub_fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return NULL;
	*stub_fd = sv[1];
	return ks_gdb_from_fd(sv[0], 1000);
}

/* A reply the deadline cut short arrives later, in front of the answer to
 * the next packet: it is dropped, never taken for that answer. */
static void t_deadline_late_reply_dropped(void)
{
	int fd;
	struct ks_gdb *g = pair(&fd);
	struct ks_error err;
	const char *r;
	char got[512];
	int64_t t0;

	KT_REQUIRE(g);
	ks_gdb_set_deadline(g, (t0 = mono_ns()) + 30000000);
	KT_EQ_INT(ks_gdb_command(g, "g", &r, NULL, &err), -ETIME);
	KT_EXPECT(mono_ns() - t0 < 500000000);
	KT_EXPECT(ks_gdb_expired(g));
	KT_EXPECT(!ks_gdb_in_step(g));
	/* after the deadline nothing new goes out */
	drain(fd, got, sizeof(got));
	KT_EQ_INT(ks_gdb_command(g, "m0,4", &r, NULL, &err), -ETIME);
	drain(fd, got, sizeof(got));
	KT_EQ_STR(got, "");
	/* late: g's ack and reply, then Hg's */
	send_raw(fd, "+");
	send_raw(fd, pkt("0011223344"));
	send_raw(fd, "+");
	send_raw(fd, pkt("OK"));
	ks_gdb_set_deadline(g, 0);
	KT_EQ_INT(ks_gdb_command(g, "Hg1", &r, NULL, &err), 0);
	KT_EQ_STR(r, "OK");
	KT_EXPECT(ks_gdb_in_step(g));
	ks_gdb_close(g);
	close(fd);
}

/* Cut in the middle of a reply (whose body holds a '+'): the rest is
 * skipped, acked, and the next exchange is in step. */
static void t_deadline_cut_mid_packet(void)
{
	int fd;
	struct ks_gdb *g = pair(&fd);
	struct ks_error err;
	const char *r;
	char got[512], whole[64];

	KT_REQUIRE(g);
	snprintf(whole, sizeof(whole), "%s", pkt("multiprocess+;x"));
	send_raw(fd, "+");
	KT_EXPECT(write(fd, whole, 6) == 6); /* "$multi" */
	ks_gdb_set_deadline(g, mono_ns() + 30000000);
	KT_EQ_INT(ks_gdb_command(g, "qSupported", &r, NULL, &err), -ETIME);
	KT_EXPECT(!ks_gdb_in_step(g));
	send_raw(fd, whole + 6);
	send_raw(fd, "+");
	send_raw(fd, pkt("OK"));
	ks_gdb_set_deadline(g, 0);
	KT_EQ_INT(ks_gdb_command(g, "Hg1", &r, NULL, &err), 0);
	KT_EQ_STR(r, "OK");
	KT_EXPECT(ks_gdb_in_step(g));
	drain(fd, got, sizeof(got));
	/* the cut packet acked (after the next packet: that one is sent
	 * before anything is awaited), never rejected */
	KT_EXPECT(strstr(got, "$Hg1#") != NULL && strchr(strstr(got, "$Hg1#"), '+') != NULL);
	KT_EXPECT(strchr(got, '-') == NULL);
	KT_EQ_U64(ks_gdb_stats(g)->retransmits, 0);
	ks_gdb_close(g);
	close(fd);
}

/* After the deadline, 'c' still goes out (without waiting for its ack);
 * a late answer read while the guest runs is not acked then (a byte but
 * 0x03 stops a running QEMU), only after the next stop. */
static void t_deadline_continue_forced_no_ack_while_running(void)
{
	int fd;
	struct ks_gdb *g = pair(&fd);
	struct ks_error err;
	const char *r;
	char got[512];

	KT_REQUIRE(g);
	ks_gdb_set_deadline(g, mono_ns() + 20000000);
	KT_EQ_INT(ks_gdb_command(g, "g", &r, NULL, &err), -ETIME);
	KT_EQ_INT(ks_gdb_continue(g, &err), -ETIME);
	KT_EXPECT(ks_gdb_running(g));
	drain(fd, got, sizeof(got));
	KT_EQ_STR(got, "$g#67$c#63");
	/* late: g's ack and reply, c's ack; read while running */
	send_raw(fd, "+");
	send_raw(fd, pkt("00"));
	send_raw(fd, "+");
	ks_gdb_set_deadline(g, 0);
	KT_EQ_INT(ks_gdb_settle(g, &err), 0);
	KT_EXPECT(ks_gdb_in_step(g));
	drain(fd, got, sizeof(got));
	KT_EQ_STR(got, "");
	send_raw(fd, pkt("T02thread:p01.01;"));
	KT_EQ_INT(ks_gdb_interrupt(g, &err), 0);
	KT_EXPECT(!ks_gdb_running(g));
	drain(fd, got, sizeof(got));
	KT_EQ_STR(got, "\x03+");
	ks_gdb_close(g);
	close(fd);
}

/* An interrupt whose stop reply is late: the target counts as stopped,
 * the detach goes out at once, and the late reply is not taken for D's. */
static void t_deadline_detach_after_late_stop(void)
{
	int fd;
	struct ks_gdb *g = pair(&fd);
	struct ks_error err;
	char got[512];

	KT_REQUIRE(g);
	send_raw(fd, "+");
	KT_EQ_INT(ks_gdb_continue(g, &err), 0);
	drain(fd, got, sizeof(got));
	ks_gdb_set_deadline(g, mono_ns() + 20000000);
	KT_EQ_INT(ks_gdb_interrupt(g, &err), -ETIME);
	KT_EXPECT(!ks_gdb_running(g));
	KT_EQ_INT(ks_gdb_detach(g, &err), -ETIME);
	KT_EXPECT(ks_gdb_running(g));
	drain(fd, got, sizeof(got));
	KT_EQ_STR(got, "\x03$D#44");
	/* with time again: the late stop reply, then D's ack and OK */
	send_raw(fd, pkt("T02thread:p01.01;"));
	send_raw(fd, "+");
	send_raw(fd, pkt("OK"));
	ks_gdb_set_deadline(g, 0);
	KT_EQ_INT(ks_gdb_settle(g, &err), 0);
	KT_EXPECT(ks_gdb_in_step(g));
	ks_gdb_close(g);
	close(fd);
}

static void t_regs_layout(void)
{
	uint8_t b[608] = { 0 };
	struct ks_x86_regs r;
	struct ks_error err;

	b[6 * 8] = 0x11;   /* rbp */
	b[7 * 8] = 0x22;   /* rsp */
	b[128] = 0x33;     /* rip */
	b[140] = 0x33;     /* cs */
	b[204 + 1] = 0x40; /* cr3 = 0x4000 */
	KT_EQ_INT(ks_x86_regs_from_gdb(b, sizeof(b), &r, &err), 0);
	KT_EQ_U64(r.rbp, 0x11);
	KT_EQ_U64(r.rsp, 0x22);
	KT_EQ_U64(r.rip, 0x33);
	KT_EQ_U64(r.cs, 0x33);
	KT_EQ_U64(r.cr3, 0x4000);
	KT_EXPECT(ks_x86_regs_from_gdb(b, 100, &r, &err) < 0);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_handshake_threads_regs), KT_CASE(t_rle_and_escapes),
		KT_CASE(t_bad_checksum_retransmit), KT_CASE(t_memory_hex_and_error),
		KT_CASE(t_early_stop_packet_skipped), KT_CASE(t_refuses_write_packets), KT_CASE(t_packet_size_checked),
		KT_CASE(t_timeout_and_detach), KT_CASE(t_send_timeout_peer_not_reading),
		KT_CASE(t_acks_late_but_before_waiting), KT_CASE(t_every_packet_acked_once),
		KT_CASE(t_regs_layout), KT_CASE(t_deadline_late_reply_dropped),
		KT_CASE(t_deadline_cut_mid_packet),
		KT_CASE(t_deadline_continue_forced_no_ack_while_running),
		KT_CASE(t_deadline_detach_after_late_stop), { 0 },
	};
	return kt_main(cases);
}
