/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gdbproto.c - GDB remote serial protocol client, read-only (see gdbproto.h).
 *
 * Used by `kvmscope sample` to stop a QEMU guest, read vCPU registers and
 * memory, and let it run again.  All waits are bounded by a poll() timeout
 * and by the caller's deadline (ks_gdb_set_deadline); bytes are buffered in
 * INBUF; decoded replies land in RX.  The only place that writes packets is
 * send_packet(), which refuses M/X/G/P.
 *
 * An exchange cut short by the deadline leaves its answer on the way: the
 * stub still owes an ack, a reply, or the rest of a packet.  The protocol
 * has no sequence numbers, but a stub answers in order (acks before the
 * reply, replies in the order of the packets), so counting what is owed is
 * enough to keep step: the next owed_acks '+' and owed_replies packets in
 * the stream are read and dropped before anything is taken as an answer to
 * a new packet, and TAIL skips the rest of a packet cut in the middle.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "kvmscope/gdbproto.h"
#include "kvmscope/limits.h"
#include "util/hex.h"

#define MAX_RETRANSMIT 3
#define DEFAULT_PACKET_SIZE 4096
#define QEMU_MAX_MEM_READ 2040

struct ks_gdb {
	int fd, log_fd, timeout_ms;
	int64_t deadline_ns; /* caller's budget, CLOCK_MONOTONIC (0: none) */
	bool expired;        /* a wait was cut by it since it was set */
	bool broken;         /* a packet went out in part: the stream is lost */
	bool running, multiprocess;
	bool ack_pending; /* a received packet's '+' not sent yet (see flush_ack) */
	bool ack_new;     /* ... and that packet was no late answer */
	unsigned pid;
	size_t packet_size;
	uint8_t inbuf[16384];
	size_t inpos, inlen;
	char *rx;
	size_t rxlen, rxcap;
	char *tx;
	size_t txcap;
	int phys_mode; /* -1 unknown, 0, 1 */
	/* the thread register and memory reads go to ("" = unknown): set by
	 * Hg, and by every stop, which QEMU reports with the stopped thread */
	char gthread[KS_GDB_THREAD_ID_MAX];
	/* answers to exchanges the deadline cut short, still to come */
	unsigned owed_acks, owed_replies;
	enum { TAIL_NONE, TAIL_BODY, TAIL_SUM2, TAIL_SUM1 } tail;
	bool tail_ack; /* the cut packet was a '$' packet: ack it when skipped */
	struct ks_gdb_stats st;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The end of one wait of the per-packet timeout, from now. */
static int64_t wait_end(const struct ks_gdb *g)
{
	return now_ns() + (int64_t)g->timeout_ms * 1000000;
}

static bool budget_over(const struct ks_gdb *g)
{
	return g->deadline_ns && now_ns() >= g->deadline_ns;
}

static int expire(struct ks_gdb *g, struct ks_error *err)
{
	g->expired = true;
	ks_error_set(err, "gdbstub: the time budget ran out before the stub answered");
	return -ETIME;
}

struct ks_gdb *ks_gdb_from_fd(int fd, int timeout_ms)
{
	struct ks_gdb *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->fd = fd;
	g->log_fd = -1;
	g->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	g->packet_size = DEFAULT_PACKET_SIZE;
	g->phys_mode = -1;
	return g;
}

static int split_hostport(const char *hp, char *host, size_t hmax, char *port, size_t pmax)
{
	const char *colon = strrchr(hp, ':');
	size_t hl;

	if (!colon || !colon[1])
		return -1;
	hl = (size_t)(colon - hp);
	if (hl == 0) {
		snprintf(host, hmax, "127.0.0.1");
	} else {
		if (hl >= hmax)
			return -1;
		memcpy(host, hp, hl);
		host[hl] = 0;
	}
	snprintf(port, pmax, "%s", colon + 1);
	return 0;
}

static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -1;
	if (poll(&p, 1, timeout_ms) <= 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		errno = soerr ? soerr : EIO;
		return -1;
	}
	return 0;
}

struct ks_gdb *ks_gdb_connect(const char *hostport, int timeout_ms, struct ks_error *err)
{
	char host[256], port[32];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, one = 1, rc;
	struct ks_gdb *g;

	if (split_hostport(hostport, host, sizeof(host), port, sizeof(port)) < 0) {
		ks_error_set(err, "%s: expected HOST:PORT", hostport);
		return NULL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		ks_error_set(err, "%s: %s", hostport, gai_strerror(rc));
		return NULL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		ks_error_code(err, KS_E_IO, "cannot connect to the gdbstub at %s: %s", hostport, strerror(errno));
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	g = ks_gdb_from_fd(fd, timeout_ms);
	if (!g) {
		close(fd);
		ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	return g;
}

/* The last reply's ack, best effort: nothing more is read. */
static void ack_on_close(struct ks_gdb *g)
{
	if (send(g->fd, "+", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 && g->log_fd >= 0 &&
	    write(g->log_fd, "+", 1) != 1)
		g->log_fd = -1;
}

void ks_gdb_close(struct ks_gdb *g)
{
	if (!g)
		return;
	/* To a running QEMU only an ack of the packet it sent last (which a
	 * late answer is not) is no stop request. */
	if (g->fd >= 0 && g->ack_pending && (!g->running || g->ack_new))
		ack_on_close(g);
	if (g->fd >= 0)
		close(g->fd);
	free(g->rx);
	free(g->tx);
	free(g);
}

void ks_gdb_set_log(struct ks_gdb *g, int fd) { g->log_fd = fd; }
bool ks_gdb_expired(const struct ks_gdb *g) { return g->expired; }
bool ks_gdb_in_step(const struct ks_gdb *g)
{
	return !g->owed_acks && !g->owed_replies && g->tail == TAIL_NONE;
}

void ks_gdb_set_deadline(struct ks_gdb *g, int64_t deadline_ns)
{
	g->deadline_ns = deadline_ns;
	g->expired = false;
}
const struct ks_gdb_stats *ks_gdb_stats(const struct ks_gdb *g) { return &g->st; }
size_t ks_gdb_packet_size(const struct ks_gdb *g) { return g->packet_size; }
bool ks_gdb_running(const struct ks_gdb *g) { return g->running; }

/* ---- raw bytes ---- */

/* FORCE: not bound by the caller's deadline (acks, and the packets that let
 * the guest go), only by the timeout.  A write cut after its first byte
 * leaves half a packet on the wire: the stream is then unusable. */
static int write_all(struct ks_gdb *g, const void *buf, size_t len, bool force,
		     struct ks_error *err)
{
	const uint8_t *p = buf;
	int64_t deadline = wait_end(g);
	size_t total = len;

	if (g->broken)
		return ks_error_set(err, "gdbstub: a packet was sent in part: the connection is out of step");
	if (!force && budget_over(g))
		return expire(g, err);
	if (g->log_fd >= 0 && write(g->log_fd, buf, len) != (ssize_t)len)
		return ks_error_code(err, KS_E_IO, "cannot write the protocol log: %s", strerror(errno));
	while (len) {
		ssize_t w = send(g->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		g->st.writes++;
		if (w > 0) {
			p += w;
			len -= (size_t)w;
			g->st.bytes_sent += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { .fd = g->fd, .events = POLLOUT };
			int64_t end = deadline, left;
			bool budget = !force && g->deadline_ns && g->deadline_ns < end;

			if (budget)
				end = g->deadline_ns;
			left = end - now_ns();
			if (left > 0 && poll(&pf, 1, (int)((left + 999999) / 1000000)) != 0)
				continue;
			g->broken = len < total;
			if (budget)
				return expire(g, err);
			return ks_error_set(err, "gdbstub: timed out sending");
		}
		return ks_error_code(err, KS_E_IO, "gdbstub: connection lost while sending: %s",
				    w < 0 ? strerror(errno) : "closed");
	}
	return 0;
}

/* Acks are sent late: with the next packet ('+' in front of its '$', one
 * write instead of two) or, at the latest, before waiting for input, since
 * a stub may wait for the ack before it sends more. */
static int flush_ack(struct ks_gdb *g, struct ks_error *err)
{
	/* Not while the guest runs: QEMU stops a running guest on any byte
	 * but 0x03 (a late answer read meanwhile is acked after the stop). */
	if (!g->ack_pending || g->running)
		return 0;
	g->ack_pending = false;
	return write_all(g, "+", 1, true, err);
}

/* Wait until the stub has bytes for us, DEADLINE (ns, monotonic: the
 * per-packet timeout) or the caller's deadline passes.  -ETIMEDOUT or
 * -ETIME (the caller's budget). */
static int wait_readable(struct ks_gdb *g, int64_t deadline, struct ks_error *err)
{
	struct pollfd pf = { .fd = g->fd, .events = POLLIN };

	for (;;) {
		int64_t end = deadline, left;
		bool budget = g->deadline_ns && g->deadline_ns < end;

		if (budget)
			end = g->deadline_ns;
		left = end - now_ns();
		if (left <= 0 && budget)
			return expire(g, err);
		if (left <= 0) {
			ks_error_set(err, "gdbstub: no answer within %d ms", g->timeout_ms);
			return -ETIMEDOUT;
		}
		if (poll(&pf, 1, (int)((left + 999999) / 1000000)) > 0)
			return 0;
	}
}

/* Next byte, waiting until DEADLINE (ns, monotonic).  Reads what is there
 * first; only when nothing is does it send a pending ack and wait (a reply
 * that has arrived costs one system call, not three). */
static int get_byte(struct ks_gdb *g, int64_t deadline, struct ks_error *err)
{
	int ret;

	while (g->inpos == g->inlen) {
		ssize_t r = recv(g->fd, g->inbuf, sizeof(g->inbuf), MSG_DONTWAIT);

		if (r > 0) {
			g->inpos = 0;
			g->inlen = (size_t)r;
			g->st.bytes_received += (uint64_t)r;
		} else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (flush_ack(g, err) < 0)
				return -1;
			if ((ret = wait_readable(g, deadline, err)) < 0)
				return ret;
		} else if (r == 0 || errno != EINTR) {
			ks_error_set(err, "gdbstub: connection closed by the stub");
			return -EPIPE;
		}
	}
	return g->inbuf[g->inpos++];
}

static int rx_put(struct ks_gdb *g, char c, struct ks_error *err)
{
	if (g->rxlen + 2 > g->rxcap) {
		size_t cap = g->rxcap ? g->rxcap * 2 : 4096;
		char *n;
		if (cap > KS_GDB_MAX_REPLY + 2)
			return ks_error_set(err, "gdbstub: reply longer than %u bytes", KS_GDB_MAX_REPLY);
		n = realloc(g->rx, cap);
		if (!n)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		g->rx = n;
		g->rxcap = cap;
	}
	g->rx[g->rxlen++] = c;
	return 0;
}

/* Body after '$' up to '#': unescape and expand run lengths into RX. */
static int read_body(struct ks_gdb *g, int64_t deadline, uint8_t *sum, struct ks_error *err)
{
	bool esc = false;
	int c;

	g->rxlen = 0;
	*sum = 0;
	if (!g->rx) { /* an empty reply still needs room for its NUL */
		g->rx = malloc(4096);
		if (!g->rx)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		g->rxcap = 4096;
	}
	for (;;) {
		c = get_byte(g, deadline, err);
		if (c < 0)
			return c;
		if (c == '#' && !esc)
			break;
		*sum = (uint8_t)(*sum + c);
		if (esc) {
			esc = false;
			if (rx_put(g, (char)(c ^ 0x20), err) < 0)
				return -1;
		} else if (c == '}') {
			esc = true;
		} else if (c == '*') {
			int n = get_byte(g, deadline, err);
			if (n < 0)
				return n;
			*sum = (uint8_t)(*sum + n);
			if (g->rxlen == 0 || n < 29 || n > 126)
				return ks_error_set(err, "gdbstub: bad run-length encoding");
			for (int i = 0; i < n - 29; i++)
				if (rx_put(g, g->rx[g->rxlen - 1], err) < 0)
					return -1;
		} else if (rx_put(g, (char)c, err) < 0) {
			return -1;
		}
	}
	return 0;
}

/* After a stop reply ("T05thread:p01.02;...") register and memory reads
 * go to the stopped thread (QEMU's gdb_set_stop_cpu).  Any reply that looks
 * like a stop reply but names no thread makes the selection unknown. */
static void note_stop(struct ks_gdb *g)
{
	const char *t, *end;
	size_t n;

	if (g->rx[0] != 'T' && g->rx[0] != 'S')
		return;
	g->gthread[0] = 0;
	t = strstr(g->rx, "thread:");
	if (g->rx[0] != 'T' || !t)
		return;
	t += 7;
	end = strchr(t, ';');
	n = end ? (size_t)(end - t) : strlen(t);
	if (n == 0 || n >= sizeof(g->gthread))
		return;
	memcpy(g->gthread, t, n);
	g->gthread[n] = 0;
}

/* The rest of a packet a deadline cut in the middle (see the top).  A
 * literal '#' is never escaped as itself nor a run-length count, so the
 * first one ends the body. */
static int finish_tail(struct ks_gdb *g, int64_t deadline, struct ks_error *err)
{
	while (g->tail != TAIL_NONE) {
		int c = get_byte(g, deadline, err);

		if (c < 0)
			return c;
		if (g->tail == TAIL_BODY)
			g->tail = c == '#' ? TAIL_SUM2 : TAIL_BODY;
		else
			g->tail = g->tail == TAIL_SUM2 ? TAIL_SUM1 : TAIL_NONE;
	}
	if (g->tail_ack) { /* no retransmission of a packet nobody waits for */
		g->tail_ack = false;
		if (flush_ack(g, err) < 0)
			return -1;
		g->ack_pending = true;
		g->ack_new = false;
	}
	return 0;
}

/* A wait inside a packet ended with RC: when the deadline cut it, remember
 * where, so that the rest is skipped later; an owed packet counts as paid
 * by that.  (A timeout ends the session: the stub is gone or broken.) */
static int cut_packet(struct ks_gdb *g, int rc, int where, int c, bool owed)
{
	if (rc != -ETIME)
		return rc;
	g->tail = where;
	g->tail_ack = c == '$';
	if (owed)
		g->owed_replies--;
	return rc;
}

/* One packet (acked), in RX; notifications ('%') are skipped, owed acks
 * paid.  Returns 0 for a new packet, 1 for one that paid an owed reply.
 * *MINE (may be NULL) turns true when a new packet has begun: a wait cut
 * after that leaves the packet's tail, not a whole reply, on the wire. */
static int recv_one(struct ks_gdb *g, int64_t deadline, bool *mine, struct ks_error *err)
{
	int bad = 0, rc;

	if ((rc = finish_tail(g, deadline, err)) < 0)
		return rc;
	for (;;) {
		uint8_t sum;
		int c = get_byte(g, deadline, err), h1, h2;
		bool owed;

		if (c < 0)
			return c;
		if (c == '+' && g->owed_acks) {
			g->owed_acks--;
			continue;
		}
		if (c != '$' && c != '%')
			continue; /* stray acks, noise */
		owed = c == '$' && g->owed_replies;
		if (!owed && c == '$' && mine)
			*mine = true;
		rc = read_body(g, deadline, &sum, err);
		if (rc < 0)
			return cut_packet(g, rc, TAIL_BODY, c, owed);
		h1 = get_byte(g, deadline, err);
		if (h1 < 0)
			return cut_packet(g, h1, TAIL_SUM2, c, owed);
		h2 = get_byte(g, deadline, err);
		if (h2 < 0)
			return cut_packet(g, h2, TAIL_SUM1, c, owed);
		if (c == '%')
			continue;
		if (ks_hexval(h1) < 0 || ks_hexval(h2) < 0 || (uint8_t)(ks_hexval(h1) << 4 | ks_hexval(h2)) != sum) {
			g->st.bad_checksums++;
			if (++bad > MAX_RETRANSMIT)
				return ks_error_set(err, "gdbstub: %d replies with a bad checksum", bad);
			if (flush_ack(g, err) < 0 || write_all(g, "-", 1, true, err) < 0)
				return -1;
			continue;
		}
		if (flush_ack(g, err) < 0) /* two packets in a row: the first's ack */
			return -1;
		g->ack_pending = true;
		g->ack_new = !owed;
		g->rx[g->rxlen] = 0;
		g->st.packets_received++;
		note_stop(g);
		if (owed) {
			g->owed_replies--;
			return 1;
		}
		return 0;
	}
}

/* The next new packet: the answer to the packet just sent.  Owed replies
 * in front of it are dropped.  When the wait is cut before it began, it is
 * owed in turn. */
static int recv_packet(struct ks_gdb *g, struct ks_error *err)
{
	int64_t deadline = wait_end(g);
	bool mine = false;
	int rc;

	while ((rc = recv_one(g, deadline, &mine, err)) == 1)
		;
	if (rc == -ETIME && !mine)
		g->owed_replies++;
	return rc < 0 ? rc : 0;
}

int ks_gdb_settle(struct ks_gdb *g, struct ks_error *err)
{
	int64_t deadline = wait_end(g);
	int rc;

	if ((rc = finish_tail(g, deadline, err)) < 0)
		return rc;
	while (g->owed_acks || g->owed_replies) {
		int c = get_byte(g, deadline, err);

		if (c < 0)
			return c;
		if (c == '+' && g->owed_acks) {
			g->owed_acks--;
		} else if (c == '$' || c == '%') {
			g->inpos--;
			if ((rc = recv_one(g, deadline, NULL, err)) < 0)
				return rc;
		}
	}
	return 0;
}

static bool is_write_packet(const char *payload)
{
	return payload[0] == 'M' || payload[0] == 'X' || payload[0] == 'G' || payload[0] == 'P';
}

static int frame_packet(struct ks_gdb *g, const char *payload, size_t *out_len, struct ks_error *err)
{
	size_t len = strlen(payload), need = len * 2 + 6, n = 0;
	uint8_t sum = 0;

	if (need > g->txcap) {
		char *t = realloc(g->tx, need);
		if (!t)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		g->tx = t;
		g->txcap = need;
	}
	g->tx[n++] = '+'; /* sent only when an ack is pending */
	g->tx[n++] = '$';
	for (size_t i = 0; i < len; i++) {
		char c = payload[i];
		if (c == '$' || c == '#' || c == '}' || c == '*') {
			g->tx[n++] = '}';
			sum = (uint8_t)(sum + '}');
			c ^= 0x20;
		}
		g->tx[n++] = c;
		sum = (uint8_t)(sum + (uint8_t)c);
	}
	n += (size_t)sprintf(g->tx + n, "#%02x", sum);
	*out_len = n;
	return 0;
}

/* The ack (and, with REPLY, the answer) of a packet sent whose wait the
 * deadline cut: they come later. */
static int owe(struct ks_gdb *g, bool reply, int rc)
{
	if (rc != -ETIME)
		return rc;
	g->owed_acks++;
	g->owed_replies += reply;
	return rc;
}

/* Send and wait for '+'; a packet arriving before the ack is consumed
 * (QEMU may send a stop reply before acking the first packet).  REPLY: the
 * packet has an answer besides the ack.  After the caller's deadline a
 * packet is refused (-ETIME) unless FORCE (the packets that let the guest
 * go): then it is sent and its answers are owed.  *SENT: it went out. */
static int send_packet(struct ks_gdb *g, const char *payload, bool reply, bool force, bool *sent,
		       struct ks_error *err)
{
	size_t n = 0;
	int64_t deadline;
	int rc;

	*sent = false;
	if (is_write_packet(payload))
		return ks_error_set(err, "refusing to send '%c' packet: kvmscope never writes guest state",
				    payload[0]);
	if (!force && budget_over(g))
		return expire(g, err);
	if (frame_packet(g, payload, &n, err) < 0)
		return -1;
	for (int attempt = 0; attempt <= MAX_RETRANSMIT; attempt++) {
		size_t skip = g->ack_pending ? 0 : 1; /* the '+' in front */

		if (attempt)
			g->st.retransmits++;
		g->ack_pending = false;
		if ((rc = write_all(g, g->tx + skip, n - skip, force, err)) < 0)
			return rc;
		*sent = true;
		g->st.packets_sent++;
		if (!strcmp(payload, "c") || payload[0] == 'D')
			g->running = true; /* from here on: see flush_ack */
		if (force && budget_over(g))
			return owe(g, reply, expire(g, err));
		deadline = wait_end(g);
		if ((rc = finish_tail(g, deadline, err)) < 0)
			return owe(g, reply, rc);
		for (;;) {
			int c = get_byte(g, deadline, err);
			if (c < 0)
				return owe(g, reply, c);
			if (c == '+' && g->owed_acks) {
				g->owed_acks--;
				continue;
			}
			if (c == '+')
				return 0;
			if (c == '-' && g->owed_acks) { /* for a packet nobody waits for */
				g->broken = true;
				return ks_error_set(err, "gdbstub: a late packet was rejected: the connection is out of step");
			}
			if (c == '-')
				break;
			if (c == '$' || c == '%') {
				g->inpos--;
				if ((rc = recv_one(g, deadline, NULL, err)) < 0)
					return owe(g, reply, rc);
			}
		}
	}
	return ks_error_set(err, "gdbstub: packet rejected %d times", MAX_RETRANSMIT + 1);
}

static bool is_stop_reply(const char *r)
{
	return r[0] == 'T' || r[0] == 'S';
}

static int command(struct ks_gdb *g, const char *payload, bool force, const char **reply,
		   size_t *len, struct ks_error *err)
{
	bool sent;
	int rc;

	if (g->running)
		return ks_error_set(err, "gdbstub: '%.8s' sent while the guest runs", payload);
	if ((rc = send_packet(g, payload, true, force, &sent, err)) < 0)
		return rc;
	for (int skipped = 0; skipped < 8; skipped++) {
		if ((rc = recv_packet(g, err)) < 0)
			return rc;
		if (!is_stop_reply(g->rx) || payload[0] == '?')
			break;
	}
	*reply = g->rx;
	if (len)
		*len = g->rxlen;
	return 0;
}

int ks_gdb_command(struct ks_gdb *g, const char *payload, const char **reply, size_t *len,
		   struct ks_error *err)
{
	return command(g, payload, false, reply, len, err);
}

static int expect_ok_force(struct ks_gdb *g, const char *payload, bool force, struct ks_error *err)
{
	const char *r;
	int rc;

	if ((rc = command(g, payload, force, &r, NULL, err)) < 0)
		return rc;
	if (strcmp(r, "OK"))
		return ks_error_set(err, "gdbstub: '%s' answered '%.40s'", payload, r);
	return 0;
}

static int expect_ok(struct ks_gdb *g, const char *payload, struct ks_error *err)
{
	return expect_ok_force(g, payload, false, err);
}

/* qSupported's answer: PacketSize (hex, up to the next ';') checked. */
static int parse_supported(struct ks_gdb *g, const char *r, struct ks_error *err)
{
	const char *p = strstr(r, "PacketSize=");
	uint64_t v;

	if (p) {
		p += 11;
		if (ks_parse_u64(p, strcspn(p, ";"), 16, &v) < 0)
			return ks_error_set(err, "gdbstub: qSupported: offset %zu: PacketSize is not "
					    "a hex number", (size_t)(p - r));
		if (v >= 64 && v <= KS_GDB_MAX_REPLY)
			g->packet_size = v;
	}
	g->multiprocess = strstr(r, "multiprocess+") != NULL;
	return 0;
}

int ks_gdb_handshake(struct ks_gdb *g, struct ks_error *err)
{
	const char *r;
	int rc;

	uint64_t sent = g->st.packets_sent;

	g->pid = 1;
	if ((rc = ks_gdb_command(g, "qSupported:multiprocess+;swbreak+;hwbreak+", &r, NULL, err)) < 0) {
		/* the stub turns multiprocess on when it reads this, answered or not */
		g->multiprocess = g->st.packets_sent > sent;
		return rc;
	}
	if (parse_supported(g, r, err) < 0)
		return -1;
	if ((rc = ks_gdb_command(g, "?", &r, NULL, err)) < 0)
		return rc;
	if (!is_stop_reply(r))
		return ks_error_set(err, "gdbstub: unexpected stop status '%.40s'", r);
	g->running = false;
	return 0;
}

/* The process of a multiprocess thread id "pPID.TID" (hex); 0 when ID has
 * none or it is not a number (the stub's default process is used). */
static unsigned pid_of(const char *id)
{
	uint64_t v;

	if (id[0] == 'p' && ks_parse_u64(id + 1, strcspn(id + 1, "."), 16, &v) == 0 &&
	    v <= UINT32_MAX)
		return (unsigned)v;
	return 0;
}

int ks_gdb_threads(struct ks_gdb *g, char ids[][KS_GDB_THREAD_ID_MAX], size_t max, size_t *n,
		   struct ks_error *err)
{
	const char *q = "qfThreadInfo", *r;
	int rc;

	*n = 0;
	for (int round = 0; round < 1024; round++, q = "qsThreadInfo") {
		if ((rc = ks_gdb_command(g, q, &r, NULL, err)) < 0)
			return rc;
		if (r[0] == 'l')
			break;
		if (r[0] != 'm')
			return ks_error_set(err, "gdbstub: thread list answer '%.40s'", r);
		for (const char *p = r + 1; *p;) {
			size_t l = strcspn(p, ",");
			if (l == 0 || l >= KS_GDB_THREAD_ID_MAX)
				return ks_error_set(err, "gdbstub: bad thread id in '%.40s'", r);
			if (*n < max) {
				memcpy(ids[*n], p, l);
				ids[*n][l] = 0;
				(*n)++;
			}
			p += l;
			if (*p == ',')
				p++;
		}
	}
	if (*n == 0)
		return ks_error_set(err, "gdbstub: no threads");
	if (pid_of(ids[0]))
		g->pid = pid_of(ids[0]);
	return 0;
}

int ks_gdb_select(struct ks_gdb *g, const char *id, struct ks_error *err)
{
	char pkt[64];
	int rc;

	if (g->gthread[0] && !strcmp(g->gthread, id))
		return 0; /* already the one: saves a round trip per sample */
	snprintf(pkt, sizeof(pkt), "Hg%s", id);
	if ((rc = expect_ok(g, pkt, err)) < 0) {
		g->gthread[0] = 0;
		return rc;
	}
	snprintf(g->gthread, sizeof(g->gthread), "%s", id);
	return 0;
}

static int decode_hex(const char *s, size_t slen, uint8_t *out, size_t max, size_t *n,
		      struct ks_error *err)
{
	size_t i;

	if (slen % 2)
		return ks_error_set(err, "gdbstub: odd-length hex reply");
	for (i = 0; i < slen / 2; i++) {
		int h = ks_hexval(s[2 * i]), l = ks_hexval(s[2 * i + 1]);
		if (h < 0 || l < 0)
			return ks_error_set(err, "gdbstub: non-hex reply '%.20s'", s);
		if (i >= max)
			return ks_error_set(err, "gdbstub: reply longer than expected");
		out[i] = (uint8_t)(h << 4 | l);
	}
	*n = i;
	return 0;
}

static bool is_error_reply(const char *r, size_t len)
{
	return len == 3 && r[0] == 'E' && ks_hexval(r[1]) >= 0 && ks_hexval(r[2]) >= 0;
}

int ks_gdb_read_regs(struct ks_gdb *g, uint8_t *buf, size_t max, size_t *len, struct ks_error *err)
{
	const char *r;
	size_t rl;
	int rc;

	if ((rc = ks_gdb_command(g, "g", &r, &rl, err)) < 0)
		return rc;
	if (is_error_reply(r, rl))
		return ks_error_set(err, "gdbstub: cannot read registers (%s)", r);
	/* QEMU never sends 'x' (unavailable) for x86, but be strict. */
	return decode_hex(r, rl, buf, max, len, err);
}

static size_t max_mem_chunk(const struct ks_gdb *g)
{
	size_t c = (g->packet_size - 8) / 2;

	return c > QEMU_MAX_MEM_READ ? QEMU_MAX_MEM_READ : c;
}

int ks_gdb_read_mem(struct ks_gdb *g, uint64_t addr, void *buf, size_t len, struct ks_error *err)
{
	uint8_t *out = buf;
	size_t chunk = max_mem_chunk(g);

	while (len) {
		size_t want = len < chunk ? len : chunk, got;
		char pkt[64];
		const char *r;
		size_t rl;
		int rc;

		snprintf(pkt, sizeof(pkt), "m%llx,%zx", (unsigned long long)addr, want);
		if ((rc = ks_gdb_command(g, pkt, &r, &rl, err)) < 0)
			return rc;
		if (is_error_reply(r, rl) || rl == 0) {
			ks_error_set(err, "gdbstub: cannot read 0x%llx (%s)", (unsigned long long)addr,
				     rl ? r : "empty reply");
			return -EFAULT;
		}
		if (decode_hex(r, rl, out, want, &got, err) < 0)
			return -1;
		if (got == 0)
			return -EFAULT;
		out += got;
		addr += got;
		len -= got;
	}
	return 0;
}

static int set_phys(struct ks_gdb *g, bool on, bool force, struct ks_error *err)
{
	int rc;

	if (g->phys_mode == (int)on)
		return 0;
	rc = expect_ok_force(g, on ? "Qqemu.PhyMemMode:1" : "Qqemu.PhyMemMode:0", force, err);
	if (rc == 0 || (force && rc == -ETIME))
		g->phys_mode = on; /* forced: sent, the answer comes later */
	else
		g->phys_mode = -1;
	return rc;
}

int ks_gdb_set_phys(struct ks_gdb *g, bool on, struct ks_error *err)
{
	return set_phys(g, on, false, err);
}

int ks_gdb_continue(struct ks_gdb *g, struct ks_error *err)
{
	bool sent;

	if (g->running)
		return 0;
	/* running once sent, acked or not: the stub reads it in turn */
	return send_packet(g, "c", false, true, &sent, err);
}

int ks_gdb_interrupt(struct ks_gdb *g, struct ks_error *err)
{
	int rc;

	if (!g->running)
		return 0;
	if ((rc = flush_ack(g, err)) < 0 || (rc = write_all(g, "\x03", 1, false, err)) < 0)
		return rc;
	/* Stopped, or stopping: a stub reads its input in order, so what is
	 * sent next reaches it stopped even when the stop reply is late. */
	g->running = false;
	for (int i = 0; i < 8; i++) {
		if ((rc = recv_packet(g, err)) < 0)
			return rc;
		if (is_stop_reply(g->rx))
			return 0;
		if (g->rx[0] == 'W' || g->rx[0] == 'X')
			return ks_error_set(err, "gdbstub: the target exited ('%.20s')", g->rx);
	}
	return ks_error_set(err, "gdbstub: no stop reply after an interrupt");
}

/* After the caller's deadline, a running guest is left alone (stopping it
 * could not be followed by a confirmed detach); a stopped one is let go
 * with the packets sent without waiting (-ETIME: sent, not confirmed). */
int ks_gdb_detach(struct ks_gdb *g, struct ks_error *err)
{
	char pkt[32];
	int rc, late = 0;

	if (g->running && (rc = ks_gdb_interrupt(g, err)) < 0) {
		if (rc == -ETIME && g->running)
			ks_error_set(err, "gdbstub: no time was left to stop the guest and detach: "
				     "it was left running, not detached");
		if (rc != -ETIME || g->running)
			return rc;
		late = rc;
	}
	if (g->phys_mode == 1 && (rc = set_phys(g, false, true, err)) < 0) {
		if (rc != -ETIME)
			return rc;
		late = rc;
	}
	if (g->multiprocess)
		snprintf(pkt, sizeof(pkt), "D;%x", g->pid ? g->pid : 1);
	else
		snprintf(pkt, sizeof(pkt), "D");
	rc = expect_ok_force(g, pkt, true, err);
	if (rc < 0 && rc != -ETIME)
		return rc;
	g->running = true; /* the stub resumes the guest on detach */
	if (rc < 0 || late)
		return ks_error_set(err, "gdbstub: the detach was sent but not answered in time"), -ETIME;
	return 0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ks_x86_regs_from_gdb(const uint8_t *b, size_t len, struct ks_x86_regs *r, struct ks_error *err)
{
	uint64_t *gpr = &r->rax;

	if (len < 236)
		return ks_error_set(err, "gdbstub: %zu register bytes, expected x86-64's 608", len);
	for (int i = 0; i < 16; i++)
		gpr[i] = le64(b + 8 * i);
	r->rip = le64(b + 128);
	r->rflags = le32(b + 136);
	r->cs = le32(b + 140);
	r->ss = le32(b + 144);
	r->fs_base = le64(b + 164);
	r->gs_base = le64(b + 172);
	r->kernel_gs_base = le64(b + 180);
	r->cr0 = le64(b + 188);
	r->cr2 = le64(b + 196);
	r->cr3 = le64(b + 204);
	r->cr4 = le64(b + 212);
	r->efer = le64(b + 228);
	return 0;
}
