/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_exporter_http.c - the exporter's HTTP server (cmd_exporter_impl.h):
 * libmicrohttpd's, a pool of threads, serving /metrics (a shared body of
 * cmd_exporter_scrape.c, in the format the scraper's Accept asks) and an
 * index page.  Clients are treated as hostile: connections are limited in
 * all and per address, and a request head must arrive whole within
 * --head-timeout (the sweeper thread).  libmicrohttpd is loaded (dlopen)
 * when the exporter starts, not linked: with the TLS libraries it needs,
 * it cost every kvmscope command ~1 ms of start-up.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "cli.h"
#include "cmd_exporter_impl.h"
#include "kvmscope/openmetrics.h"

#define HTTP_THREADS 4

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>kvmscope exporter</title></head>\n"
	"<body><h1>kvmscope exporter</h1>\n"
	"<p>KVM exit metrics: <a href=\"/metrics\">/metrics</a></p>\n"
	"<p>See kvmscope-exporter(1).</p></body></html>\n";

/* ------------------------------------------------------------------ */
/* libmicrohttpd, loaded at start */

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls) *create_response_shared;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} mhd;

void exporter_mhd_load(void)
{
#define MHD_SYM(f, n) { "MHD_" #n, offsetof(__typeof__(mhd), f) }
	static const struct {
		const char *name;
		size_t at;
	} syms[] = {
		MHD_SYM(start_daemon, start_daemon), MHD_SYM(stop_daemon, stop_daemon),
		MHD_SYM(get_daemon_info, get_daemon_info),
		MHD_SYM(get_connection_info, get_connection_info),
		MHD_SYM(create_response_from_buffer, create_response_from_buffer),
		MHD_SYM(create_response_shared, create_response_from_buffer_with_free_callback_cls),
		MHD_SYM(add_response_header, add_response_header),
		MHD_SYM(queue_response, queue_response), MHD_SYM(destroy_response, destroy_response),
		MHD_SYM(lookup_connection_value, lookup_connection_value),
	};
#undef MHD_SYM
	void *dl = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!dl)
		die("the exporter needs %s: %s (apt-get install libmicrohttpd12)", MHD_SONAME,
		    dlerror());
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(dl, syms[i].name);

		if (!f)
			die("%s has no %s", MHD_SONAME, syms[i].name);
		memcpy((char *)&mhd + syms[i].at, &f, sizeof(f));
	}
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, "Content-Type", type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, "Allow", "GET, HEAD");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result serve_metrics(struct exporter *x, struct MHD_Connection *conn)
{
	const char *accept = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	enum ks_expo_format f = ks_expo_negotiate(accept);
	char msg[sizeof(((struct ks_error *)0)->msg) + 2];
	struct MHD_Response *r;
	unsigned status;
	struct body *b = exporter_body_get(x, f, &status, msg, sizeof(msg));
	enum MHD_Result ret;

	if (!b)
		return reply(conn, status, "text/plain; charset=utf-8", msg, strlen(msg),
			     MHD_RESPMEM_MUST_COPY);
	r = mhd.create_response_shared(b->len, b->buf, exporter_body_release, b);
	if (!r) {
		exporter_body_release(b);
		return MHD_NO;
	}
	mhd.add_response_header(r, "Content-Type", ks_expo_content_type(b->format));
	ret = mhd.queue_response(conn, MHD_HTTP_OK, r);
	mhd.destroy_response(r);
	return ret;
}

/* ---- connections: the deadline of a request's head ----
 *
 * libmicrohttpd's connection timeout restarts with every byte received: a
 * client sending one header line every few seconds would keep its
 * connection for ever.  Each connection is listed here from its accept()
 * on, with the time its current request began to be awaited (the accept,
 * or the end of the previous request); the sweeper thread shuts down
 * every connection whose request head has not been read whole
 * head_timeout seconds after that, whatever it sent meanwhile.
 * libmicrohttpd then closes it (its read fails).  An entry is unlinked
 * when libmicrohttpd says the connection is closed, before it closes the
 * socket, under http_lock as is the sweeper's shutdown(): the descriptor
 * shut down is never one reused by another connection. */
struct conn_info {
	struct conn_info *prev, *next;
	int fd;
	double since;            /* awaiting the request head since */
	bool in_request;         /* the head was read; a response is on its way */
	bool shut;
};

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct exporter *x = cls;
	struct conn_info *ci = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		ci = calloc(1, sizeof(*ci));
		if (!ci)
			return; /* not listed: the idle timeout still applies */
		ci->fd = i ? i->connect_fd : -1;
		ci->since = now_s();
		pthread_mutex_lock(&x->http_lock);
		ci->next = x->conns;
		if (x->conns)
			x->conns->prev = ci;
		x->conns = ci;
		pthread_mutex_unlock(&x->http_lock);
		*socket_context = ci;
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_CLOSED || !ci)
		return;
	pthread_mutex_lock(&x->http_lock);
	if (ci->prev)
		ci->prev->next = ci->next;
	else
		x->conns = ci->next;
	if (ci->next)
		ci->next->prev = ci->prev;
	pthread_mutex_unlock(&x->http_lock);
	free(ci);
	*socket_context = NULL;
}

static struct conn_info *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct exporter *x = cls;
	struct conn_info *ci = conn_of(conn);

	(void)con_cls;
	(void)toe;
	if (!ci)
		return;
	pthread_mutex_lock(&x->http_lock);
	ci->in_request = false;
	ci->since = now_s();
	pthread_mutex_unlock(&x->http_lock);
}

static void *sweeper(void *arg)
{
	struct exporter *x = arg;

	pthread_mutex_lock(&x->http_lock);
	while (!x->sweeper_stop) {
		struct timespec ts;
		struct conn_info *ci;
		double t = now_s();

		exporter_bodies_sweep_locked(x, t);
		for (ci = x->conns; ci; ci = ci->next)
			if (!ci->in_request && !ci->shut && ci->fd >= 0 &&
			    t - ci->since > x->a->head_timeout) {
				shutdown(ci->fd, SHUT_RDWR);
				ci->shut = true;
			}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&x->sweeper_cv, &x->http_lock, &ts);
	}
	pthread_mutex_unlock(&x->http_lock);
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static char not_found[] = "not found: try /metrics\n";
	static char not_allowed[] = "method not allowed: GET or HEAD\n";
	struct exporter *x = cls;

	(void)version;
	(void)upload;
	if (!*con_cls) { /* first call: the head is read */
		struct conn_info *ci = conn_of(conn);

		*con_cls = (void *)1;
		if (ci) {
			pthread_mutex_lock(&x->http_lock);
			ci->in_request = true;
			pthread_mutex_unlock(&x->http_lock);
		}
		/* other methods are refused before their body is read (the
		 * connection is then closed after the reply) */
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				     not_allowed, sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
		return MHD_YES;
	}
	if (*upload_size) { /* a GET with a body: ignored */
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics"))
		return serve_metrics(x, conn);
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)index_page,
			     sizeof(index_page) - 1, MHD_RESPMEM_PERSISTENT);
	return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
		     sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);
}

struct MHD_Daemon *exporter_http_start(struct exporter *x)
{
	struct sockaddr_storage sa;
	socklen_t len = exporter_parse_listen(x->a->listen, &sa);
	/* a pool of threads, each polling its share of the connections: a
	 * scrape being formatted holds up only its thread's other clients */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t block, old;
	char host[NI_MAXHOST] = "";
	unsigned timeout = (unsigned)ceil(x->a->head_timeout);

	(void)len;
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* the HTTP threads take no signals: they go to the main loop */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = mhd.start_daemon(flags, 0, NULL, NULL, handle, x, MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&sa,
			     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)x->a->max_conns,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)x->a->max_per_addr,
			     /* idle or not reading: closed after this long without progress */
			     MHD_OPTION_CONNECTION_TIMEOUT, timeout ? timeout : 1u,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, x,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, x,
			     MHD_OPTION_END);
	if (d && pthread_create(&x->sweeper_thread, NULL, sweeper, x) == 0)
		x->sweeper_running = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d)
		die("cannot listen on %s: %s", x->a->listen,
		    errno ? strerror(errno) : "the HTTP server did not start");
	if (!x->sweeper_running)
		die("cannot start the HTTP server's sweeper thread");
	info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	getnameinfo((struct sockaddr *)&sa, sizeof(sa), host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	fprintf(stderr, "kvmscope exporter: listening on http://%s%s%s:%u/metrics\n",
		sa.ss_family == AF_INET6 ? "[" : "", host, sa.ss_family == AF_INET6 ? "]" : "",
		info ? (unsigned)info->port : 0);
	return d;
}

void exporter_http_stop(struct exporter *x, struct MHD_Daemon *d)
{
	mhd.stop_daemon(d);
	pthread_mutex_lock(&x->http_lock);
	x->sweeper_stop = true;
	pthread_cond_signal(&x->sweeper_cv);
	pthread_mutex_unlock(&x->http_lock);
	pthread_join(x->sweeper_thread, NULL);
	exporter_bodies_free(x);
}

