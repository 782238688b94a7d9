/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats.c - KVM's statistics from QEMU's QMP query-stats or debugfs
 * (see kvmstats.h).
 *
 * QMP is one JSON object per line over a unix socket; the replies are
 * parsed with json-c.  Asynchronous events ({"event": ...}) between a
 * command and its reply are skipped, within the command's one deadline: a
 * peer streaming events cannot hold a command longer.  The socket is
 * non-blocking and every wait a poll() of at most 100 ms that also asks
 * the context's cancel function.
 *
 * Lookups by name (ks_kstats_find, the schemas) go through a hash table:
 * a VM with 60 000 statistics costs time in proportion to them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kvmscope/ctx.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/limits.h"
#include "util/hashmap.h"
#include "util/text.h"

#define QMP_MAX_LINE (64u << 20) /* a reply larger than this is refused */
#define MAX_CPUS 1024

struct qmp_cpu {
	char qom[96];
	int32_t index;
};

struct ks_qmp {
	int fd;
	int timeout_ms;
	struct ks_ctx *ctx;
	int32_t pid;
	int64_t uid;
	char path[108];
	char *buf;
	size_t off, len, cap;    /* unread data: buf[off..len) */
	size_t scanned;          /* buf[off..scanned) holds no newline */
	bool have_meta;
	/* query-stats-schemas: name, vcpu 0 (target vcpu) or -1 (vm), type,
	 * unit, base, exponent */
	struct ks_kstats schemas;
	struct qmp_cpu cpus[MAX_CPUS]; /* sorted by qom */
	size_t ncpus;
};

/* ------------------------------------------------------------------ */
/* the index: (name, vcpu) -> the chain of entries with that key's hash
 * (a crafted collision only lengthens a chain: names are compared) */

#define ANY_VCPU ((uint64_t)INT64_MIN)
#define NIL UINT32_MAX

struct ks_kstats_index {
	struct ks_hmap map;      /* {hash(name), vcpu or ANY_VCPU} -> struct chain */
	uint32_t *next;          /* per entry: next with its (hash, vcpu) */
	uint32_t *next_any;      /* per vCPU entry: next with its hash */
	size_t n, cap;           /* entries indexed */
};

struct chain {
	uint32_t head, tail;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int chain_add(struct ks_hmap *m, uint32_t *next, const uint64_t key[2], uint32_t i)
{
	bool created;
	struct chain *c = ks_hmap_put_wide(m, key, &created);

	if (!c)
		return -1;
	if (created)
		c->head = i;
	else
		next[c->tail] = i;
	c->tail = i;
	next[i] = NIL;
	return 0;
}

/* S's index covering every entry, or NULL when out of memory (the
 * callers then search linearly). */
static struct ks_kstats_index *index_of(const struct ks_kstats *cs)
{
	struct ks_kstats *s = (struct ks_kstats *)cs; /* the index is a cache */
	struct ks_kstats_index *x = s->index;

	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x)
			return NULL;
		ks_hmap_init_wide(&x->map, 2, sizeof(struct chain));
		s->index = x;
	}
	if (s->n > UINT32_MAX - 1)
		return NULL;
	if (s->n > x->cap) {
		size_t ncap = s->n * 2;
		uint32_t *a = realloc(x->next, ncap * sizeof(*a)), *b;

		if (!a)
			return NULL;
		x->next = a;
		b = realloc(x->next_any, ncap * sizeof(*b));
		if (!b)
			return NULL;
		x->next_any = b;
		x->cap = ncap;
	}
	for (; x->n < s->n; x->n++) {
		const struct ks_kstat *k = &s->v[x->n];
		uint64_t key[2] = { name_hash(k->name), (uint64_t)(int64_t)k->vcpu };

		if (chain_add(&x->map, x->next, key, (uint32_t)x->n) < 0)
			return NULL;
		x->next_any[x->n] = NIL;
		key[1] = ANY_VCPU;
		if (k->vcpu >= 0 && chain_add(&x->map, x->next_any, key, (uint32_t)x->n) < 0)
			return NULL;
	}
	return x;
}

static void index_free(struct ks_kstats_index *x)
{
	if (!x)
		return;
	ks_hmap_free(&x->map);
	free(x->next);
	free(x->next_any);
	free(x);
}

void ks_kstats_free(struct ks_kstats *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i].buckets);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	index_free(s->index);
	s->index = NULL;
}

#define LINEAR_MAX 8 /* so few entries are searched without an index */

const struct ks_kstat *ks_kstats_find(const struct ks_kstats *s, const char *name, int32_t vcpu)
{
	struct ks_kstats_index *x = s->n > LINEAR_MAX || s->index ? index_of(s) : NULL;
	size_t i;

	if (x) {
		uint64_t key[2] = { name_hash(name), (uint64_t)(int64_t)vcpu };
		const struct chain *c = ks_hmap_get_wide(&x->map, key);
		uint32_t j;

		for (j = c ? c->head : NIL; j != NIL; j = x->next[j])
			if (s->v[j].vcpu == vcpu && !strcmp(s->v[j].name, name))
				return &s->v[j];
		return NULL;
	}
	for (i = 0; i < s->n; i++)
		if (s->v[i].vcpu == vcpu && !strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

/* The vCPU entry named NAME at or after index FROM (via the ANY chain
 * starting at J when indexed). */
static const struct ks_kstat *vcpu_named(const struct ks_kstats *s, const char *name, size_t from,
					 bool first)
{
	struct ks_kstats_index *x = s->n > LINEAR_MAX || s->index ? index_of(s) : NULL;
	size_t i;

	if (x) {
		uint32_t j;

		if (first) {
			uint64_t key[2] = { name_hash(name), ANY_VCPU };
			const struct chain *c = ks_hmap_get_wide(&x->map, key);

			j = c ? c->head : NIL;
		} else {
			j = x->next_any[from - 1];
		}
		for (; j != NIL; j = x->next_any[j])
			if (!strcmp(s->v[j].name, name))
				return &s->v[j];
		return NULL;
	}
	for (i = from; i < s->n; i++)
		if (s->v[i].vcpu >= 0 && !strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

const struct ks_kstat *ks_kstats_first_vcpu(const struct ks_kstats *s, const char *name)
{
	return vcpu_named(s, name, 0, true);
}

const struct ks_kstat *ks_kstats_next_vcpu(const struct ks_kstats *s, const struct ks_kstat *k)
{
	return vcpu_named(s, k->name, (size_t)(k - s->v) + 1, false);
}

struct ks_kstat *ks_kstats_add(struct ks_kstats *s, const char *name, int32_t vcpu)
{
	struct ks_kstat *k;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct ks_kstat *n = realloc(s->v, ncap * sizeof(*n));

		if (!n)
			return NULL;
		s->v = n;
		s->cap = ncap;
	}
	k = &s->v[s->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->vcpu = vcpu;
	k->base = 10;
	return k;
}

double ks_kstat_scaled(const struct ks_kstat *k)
{
	double v = (double)k->value;

	if (k->exponent && (k->base == 2 || k->base == 10))
		v *= pow(k->base, k->exponent);
	return v;
}

/* ------------------------------------------------------------------ */
/* parsing */

/* O's text if it is a JSON string, else "" (never NULL). */
static const char *str_of(struct json_object *o)
{
	return json_object_get_type(o) == json_type_string ? json_object_get_string(o) : "";
}

static int parse_value(struct ks_kstat *k, struct json_object *v)
{
	size_t i, n;

	switch (json_object_get_type(v)) {
	case json_type_boolean:
		k->is_bool = true;
		k->value = json_object_get_boolean(v) ? 1 : 0;
		return 0;
	case json_type_int:
		k->value = json_object_get_uint64(v);
		return 0;
	case json_type_array:
		n = json_object_array_length(v);
		k->type = KS_KSTAT_HIST;
		if (n > 4096)
			return -1;
		k->buckets = calloc(n + 1, sizeof(*k->buckets));
		if (!k->buckets)
			return -1;
		k->nbuckets = (uint32_t)n;
		/* QEMU lists a histogram last bucket first (its list is built
		 * by prepending KVM's buckets, kept first bucket first): seen in
		 * the nested lab, where QEMU's list equals KVM_GET_STATS_FD's
		 * and the traced halts' buckets only reversed.  buckets[] is
		 * KVM's order, as debugfs and the stats fd give it. */
		for (i = 0; i < n; i++) {
			struct json_object *b = json_object_array_get_idx(v, i);

			if (json_object_get_type(b) != json_type_int)
				return -1;
			k->buckets[n - 1 - i] = json_object_get_uint64(b);
			k->value += k->buckets[n - 1 - i];
		}
		return 0;
	default:
		return -1;
	}
}

/* The statistics of a parsed query-stats reply ROOT appended to OUT. */
static int parse_stats_obj(struct json_object *root, struct ks_kstats *out,
			   int32_t (*vcpu_of)(void *ctx, const char *qom_path), void *ctx,
			   struct ks_error *err)
{
	struct json_object *ret;
	size_t i, j, n;
	int32_t next_vcpu = 0;

	if (!json_object_object_get_ex(root, "return", &ret) ||
	    json_object_get_type(ret) != json_type_array)
		return ks_error_code(err, KS_E_PEER, "query-stats reply: offset 0: no \"return\" list");
	n = json_object_array_length(ret);
	for (i = 0; i < n; i++) {
		struct json_object *res = json_object_array_get_idx(ret, i), *stats, *qom;
		int32_t vcpu = -1;

		if (json_object_get_type(res) != json_type_object ||
		    !json_object_object_get_ex(res, "stats", &stats) ||
		    json_object_get_type(stats) != json_type_array) {
			return ks_error_code(err, KS_E_PEER, "query-stats reply: offset 0: result %zu has no "
					    "\"stats\" list", i);
		}
		if (json_object_object_get_ex(res, "qom-path", &qom)) {
			const char *p = json_object_get_string(qom);
			vcpu = vcpu_of && p ? vcpu_of(ctx, p) : -1;
			if (vcpu < 0)
				vcpu = next_vcpu;
			next_vcpu = vcpu + 1;
		}
		for (j = 0; j < json_object_array_length(stats); j++) {
			struct json_object *st = json_object_array_get_idx(stats, j), *name, *value;
			struct ks_kstat *k;

			if (json_object_get_type(st) != json_type_object ||
			    !json_object_object_get_ex(st, "name", &name) ||
			    json_object_get_type(name) != json_type_string ||
			    !json_object_object_get_ex(st, "value", &value)) {
				return ks_error_code(err, KS_E_PEER, "query-stats reply: offset 0: statistic %zu of "
						    "result %zu has no name or value", j, i);
			}
			k = ks_kstats_add(out, json_object_get_string(name), vcpu);
			if (!k)
				return ks_error_code(err, KS_E_NOMEM, "out of memory");
			if (parse_value(k, value) < 0)
				return ks_error_code(err, KS_E_PEER, "query-stats reply: offset 0: statistic '%s' has a "
						    "value that is not a number, boolean or list of "
						    "numbers", k->name);
		}
	}
	return 0;
}

int ks_qmp_parse_stats(const char *text, size_t len, struct ks_kstats *out,
		       int32_t (*vcpu_of)(void *ctx, const char *qom_path), void *ctx,
		       struct ks_error *err)
{
	struct json_tokener *tok = json_tokener_new_ex(32);
	struct json_object *root;
	int rc;

	if (!tok)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	root = len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, text, (int)len);
	if (!root) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		ks_error_code(err, KS_E_PEER, "query-stats reply: offset %zu: %s",
			     json_tokener_get_parse_end(tok),
			     e == json_tokener_continue ? "unexpected end" : json_tokener_error_desc(e));
		json_tokener_free(tok);
		return -1;
	}
	rc = parse_stats_obj(root, out, vcpu_of, ctx, err);
	json_object_put(root);
	json_tokener_free(tok);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the QMP connection */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until FD is ready for EVENTS, DEADLINE passes (0) or the context
 * cancels (-1 with err set); 1 when ready. */
static int wait_fd(struct ks_qmp *q, short events, int64_t deadline, struct ks_error *err)
{
	for (;;) {
		struct pollfd p = { .fd = q->fd, .events = events };
		int64_t left = deadline - now_ms();
		int r;

		if (ks_ctx_cancelled(q->ctx))
			return ks_error_code(err, KS_E_CANCELLED, "%s: interrupted", q->path);
		if (left <= 0)
			return 0;
		r = poll(&p, 1, left < 100 ? (int)left : 100);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return ks_error_code(err, KS_E_IO, "%s: %s", q->path, strerror(errno));
	}
}

/* The next line (without '\n', NUL-terminated) at *LINE, *LEN bytes,
 * read by DEADLINE; consume() it after use.  Each byte is looked at once
 * for the newline, and moved at most once (to the front of the buffer,
 * when a read needs room): a peer's burst of short lines costs linear
 * time. */
static int read_line(struct ks_qmp *q, int64_t deadline, char **line, size_t *len,
		     struct ks_error *err)
{
	for (;;) {
		char *nl = q->scanned < q->len ? memchr(q->buf + q->scanned, '\n', q->len - q->scanned)
					       : NULL;
		ssize_t r;
		int w;

		if (nl) {
			*line = q->buf + q->off;
			*len = (size_t)(nl - *line);
			*nl = 0;
			return 0;
		}
		q->scanned = q->len;
		if (q->off) {
			memmove(q->buf, q->buf + q->off, q->len - q->off);
			q->len -= q->off;
			q->scanned -= q->off;
			q->off = 0;
		}
		if (q->len + 65536 > q->cap) {
			size_t ncap = q->cap ? q->cap * 2 : 131072;
			char *nb;

			if (ncap > QMP_MAX_LINE)
				return ks_error_code(err, KS_E_PEER, "%s: a QMP message longer than %u bytes", q->path,
						    QMP_MAX_LINE);
			nb = realloc(q->buf, ncap);
			if (!nb)
				return ks_error_code(err, KS_E_NOMEM, "out of memory");
			q->buf = nb;
			q->cap = ncap;
		}
		r = read(q->fd, q->buf + q->len, q->cap - q->len - 1);
		if (r > 0) {
			q->len += (size_t)r;
			continue;
		}
		if (r == 0)
			return ks_error_code(err, KS_E_PEER, "%s: QEMU closed the QMP connection", q->path);
		if (errno != EINTR && errno != EAGAIN)
			return ks_error_code(err, KS_E_IO, "%s: %s", q->path, strerror(errno));
		w = wait_fd(q, POLLIN, deadline, err);
		if (w < 0)
			return -1;
		if (!w)
			return ks_error_code(err, KS_E_PEER, "%s: QMP did not answer within %d ms", q->path,
					    q->timeout_ms);
	}
}

static void consume(struct ks_qmp *q, size_t len)
{
	q->off += len + 1;
	q->scanned = q->off;
}

static int send_all(struct ks_qmp *q, const char *s, int64_t deadline, struct ks_error *err)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t w = send(q->fd, s + off, len - off, MSG_NOSIGNAL);
		int r;

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EINTR && errno != EAGAIN)
			return ks_error_code(err, KS_E_IO, "%s: %s", q->path, strerror(errno));
		r = wait_fd(q, POLLOUT, deadline, err);
		if (r < 0)
			return -1;
		if (!r)
			return ks_error_code(err, KS_E_PEER, "%s: QMP did not take a command within %d ms", q->path,
					    q->timeout_ms);
	}
	return 0;
}

/* Send CMD; the reply line's JSON object (caller puts it).  One deadline
 * for the whole command: events skipped meanwhile do not extend it. */
static struct json_object *command(struct ks_qmp *q, const char *cmd, struct ks_error *err)
{
	int64_t deadline = now_ms() + q->timeout_ms;

	if (send_all(q, cmd, deadline, err) < 0 || send_all(q, "\n", deadline, err) < 0)
		return NULL;
	for (;;) {
		struct json_object *o, *e;
		char *line;
		size_t len;

		if (read_line(q, deadline, &line, &len, err) < 0)
			return NULL;
		o = json_tokener_parse(line);
		consume(q, len);
		if (!o || json_object_get_type(o) != json_type_object) {
			json_object_put(o);
			ks_error_code(err, KS_E_PEER, "%s: QMP sent a line that is not a JSON object", q->path);
			return NULL;
		}
		if (json_object_object_get_ex(o, "return", NULL))
			return o;
		if (json_object_object_get_ex(o, "error", &e)) {
			struct json_object *d;
			const char *desc = json_object_object_get_ex(e, "desc", &d) ? str_of(d) : "";
			char safe[160];

			/* the peer's text: shown on terminals */
			ks_term_escape(safe, sizeof(safe), desc[0] ? desc : "error");
			ks_error_code(err, KS_E_PEER, "%s: QMP: %s", q->path, safe);
			json_object_put(o);
			return NULL;
		}
		json_object_put(o); /* an event */
	}
}

int ks_qmp_command(struct ks_qmp *q, const char *cmd, char **reply, struct ks_error *err)
{
	struct json_object *o = command(q, cmd, err), *ret;

	if (!o)
		return -1;
	json_object_object_get_ex(o, "return", &ret);
	*reply = strdup(json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return *reply ? 0 : ks_error_code(err, KS_E_NOMEM, "out of memory");
}

static int open_fd(struct ks_qmp **out, int fd, const char *name, const struct ks_qmp_opts *o,
		   struct ks_error *err);

int ks_qmp_open(struct ks_qmp **out, const char *path, int timeout_ms, struct ks_error *err)
{
	struct ks_qmp_opts o = { .timeout_ms = timeout_ms };

	return ks_qmp_open_opts(out, path, &o, err);
}

int ks_qmp_open_opts(struct ks_qmp **out, const char *path, const struct ks_qmp_opts *o,
		     struct ks_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 2000;
	int64_t deadline = now_ms() + timeout_ms;
	struct stat st;
	int fd;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ks_error_set(err, "%s: socket path too long", path);
	if (o->check_owner) {
		if (lstat(path, &st) < 0)
			return ks_error_code(err, KS_E_IO, "%s: %s", path, strerror(errno));
		if (!S_ISSOCK(st.st_mode))
			return ks_error_set(err, "%s: not a socket", path);
		if (st.st_uid != o->owner)
			return ks_error_code(err, KS_E_PEER, "%s: not trusted: the socket belongs to uid %u, "
					    "not to uid %u", path, (unsigned)st.st_uid, (unsigned)o->owner);
	}
	memcpy(sa.sun_path, path, strlen(path));
	/* non-blocking from the start: a listener that never accepts (its
	 * backlog full) cannot hold connect() */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: %s", path, strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int e = errno, soerr = 0;
		socklen_t sl = sizeof(soerr);

		while (e == EAGAIN || e == EINPROGRESS || e == EINTR) {
			int64_t left = deadline - now_ms();
			int r;

			if (ks_ctx_cancelled(o->ctx)) {
				close(fd);
				return ks_error_code(err, KS_E_CANCELLED, "%s: interrupted", path);
			}
			if (left <= 0) {
				close(fd);
				return ks_error_code(err, KS_E_PEER, "%s: QMP did not accept the connection within %d ms",
						    path, timeout_ms);
			}
			r = poll(&p, 1, left < 100 ? (int)left : 100);
			if (r > 0) {
				e = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ? errno : soerr;
				if (!e)
					break;
			}
		}
		if (e) {
			ks_error_set(err, "%s: %s", path, strerror(e));
			close(fd);
			return -1;
		}
	}
	return open_fd(out, fd, path, o, err);
}

int ks_qmp_open_fd(struct ks_qmp **out, int fd, const char *name, int timeout_ms,
		   struct ks_error *err)
{
	struct ks_qmp_opts o = { .timeout_ms = timeout_ms };

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return open_fd(out, fd, name, &o, err);
}

static int open_fd(struct ks_qmp **out, int fd, const char *name, const struct ks_qmp_opts *opts,
		   struct ks_error *err)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct ks_qmp *q;
	struct json_object *o;
	char *line;
	size_t len;

	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		close(fd);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	q->fd = fd;
	snprintf(q->path, sizeof(q->path), "%s", name);
	q->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 2000;
	q->ctx = opts->ctx;
	q->pid = -1;
	q->uid = -1;
	if (getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
		if (cred.pid > 0)
			q->pid = cred.pid;
		q->uid = cred.uid;
	}
	if (opts->check_owner && q->uid != (int64_t)opts->owner) {
		ks_error_code(err, KS_E_PEER, "%s: not trusted: the process serving it runs as uid %lld, not "
			     "as uid %u", q->path, (long long)q->uid, (unsigned)opts->owner);
		goto fail;
	}
	if (opts->peer_pid > 0 && q->pid != opts->peer_pid) {
		ks_error_code(err, KS_E_PEER, "%s: not trusted: served by process %d, not by process %d",
			     q->path, q->pid, opts->peer_pid);
		goto fail;
	}
	if (read_line(q, now_ms() + q->timeout_ms, &line, &len, err) < 0)
		goto fail;
	o = json_tokener_parse(line);
	consume(q, len);
	if (!o || !json_object_object_get_ex(o, "QMP", NULL)) {
		json_object_put(o);
		ks_error_code(err, KS_E_PEER, "%s: no QMP greeting (not a QMP socket?)", q->path);
		goto fail;
	}
	json_object_put(o);
	o = command(q, "{\"execute\":\"qmp_capabilities\"}", err);
	if (!o)
		goto fail;
	json_object_put(o);
	*out = q;
	return 0;
fail:
	ks_qmp_close(q);
	return -1;
}

int32_t ks_qmp_pid(const struct ks_qmp *q) { return q->pid; }
int64_t ks_qmp_peer_uid(const struct ks_qmp *q) { return q->uid; }
const char *ks_qmp_path(const struct ks_qmp *q) { return q->path; }

void ks_qmp_close(struct ks_qmp *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	ks_kstats_free(&q->schemas);
	free(q);
}

static enum ks_kstat_type schema_type(const char *t)
{
	if (!strcmp(t, "instant"))
		return KS_KSTAT_INSTANT;
	if (!strcmp(t, "peak"))
		return KS_KSTAT_PEAK;
	if (strstr(t, "hist"))
		return KS_KSTAT_HIST;
	return KS_KSTAT_CUMULATIVE;
}

static int cpu_cmp(const void *a, const void *b)
{
	return strcmp(((const struct qmp_cpu *)a)->qom, ((const struct qmp_cpu *)b)->qom);
}

/* query-stats-schemas (types) and query-cpus-fast (qom-path -> cpu-index). */
static int load_meta(struct ks_qmp *q, struct ks_error *err)
{
	struct json_object *o = command(q, "{\"execute\":\"query-cpus-fast\"}", err), *ret;
	size_t i, j, n;

	if (!o)
		return -1;
	json_object_object_get_ex(o, "return", &ret);
	n = json_object_get_type(ret) == json_type_array ? json_object_array_length(ret) : 0;
	for (i = 0; i < n && q->ncpus < MAX_CPUS; i++) {
		struct json_object *c = json_object_array_get_idx(ret, i), *p, *idx;

		if (json_object_object_get_ex(c, "qom-path", &p) &&
		    json_object_object_get_ex(c, "cpu-index", &idx)) {
			snprintf(q->cpus[q->ncpus].qom, sizeof(q->cpus[0].qom), "%s", str_of(p));
			q->cpus[q->ncpus++].index = json_object_get_int(idx);
		}
	}
	json_object_put(o);
	qsort(q->cpus, q->ncpus, sizeof(q->cpus[0]), cpu_cmp);
	o = command(q, "{\"execute\":\"query-stats-schemas\"}", err);
	if (!o)
		return -1;
	json_object_object_get_ex(o, "return", &ret);
	n = json_object_get_type(ret) == json_type_array ? json_object_array_length(ret) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *pr = json_object_array_get_idx(ret, i), *st, *tg;
		bool vcpu = json_object_object_get_ex(pr, "target", &tg) &&
			    !strcmp(str_of(tg), "vcpu");
		size_t m;

		if (!json_object_object_get_ex(pr, "stats", &st) ||
		    json_object_get_type(st) != json_type_array)
			continue;
		m = json_object_array_length(st);
		for (j = 0; j < m; j++) {
			struct json_object *s = json_object_array_get_idx(st, j), *nm, *ty, *un, *b, *x;
			struct ks_kstat *sc;

			if (!json_object_object_get_ex(s, "name", &nm))
				continue;
			sc = ks_kstats_add(&q->schemas, str_of(nm), vcpu ? 0 : -1);
			if (!sc) {
				json_object_put(o);
				return ks_error_code(err, KS_E_NOMEM, "out of memory");
			}
			sc->type = json_object_object_get_ex(s, "type", &ty) ?
				   schema_type(str_of(ty)) : KS_KSTAT_CUMULATIVE;
			if (json_object_object_get_ex(s, "unit", &un))
				snprintf(sc->unit, sizeof(sc->unit), "%s", str_of(un));
			sc->is_bool = !strcmp(sc->unit, "boolean");
			/* value = VALUE * base^exponent (QEMU: base 10 when absent) */
			sc->base = json_object_object_get_ex(s, "base", &b) ? json_object_get_int(b) : 10;
			sc->exponent = json_object_object_get_ex(s, "exponent", &x) &&
				       fabs(json_object_get_double(x)) < 64 ? json_object_get_int(x) : 0;
		}
	}
	json_object_put(o);
	q->have_meta = true;
	return 0;
}

static int32_t qmp_vcpu_of(void *ctx, const char *qom)
{
	struct ks_qmp *q = ctx;
	struct qmp_cpu key, *c;

	snprintf(key.qom, sizeof(key.qom), "%s", qom);
	c = bsearch(&key, q->cpus, q->ncpus, sizeof(q->cpus[0]), cpu_cmp);
	return c ? c->index : -1;
}

static int query(struct ks_qmp *q, const char *target, struct ks_kstats *out,
		 struct ks_error *err)
{
	char cmd[128];
	struct json_object *o;
	int rc;

	snprintf(cmd, sizeof(cmd), "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"%s\"}}",
		 target);
	o = command(q, cmd, err);
	if (!o)
		return -1;
	/* the reply as parsed (not written out and parsed again) */
	rc = parse_stats_obj(o, out, qmp_vcpu_of, q, err);
	json_object_put(o);
	return rc;
}

int ks_qmp_query_stats(struct ks_qmp *q, struct ks_kstats *out, struct ks_error *err)
{
	size_t i;

	ks_kstats_free(out);
	out->pid = q->pid;
	snprintf(out->source, sizeof(out->source), "qmp");
	if (!q->have_meta && load_meta(q, err) < 0)
		return -1;
	if (query(q, "vm", out, err) < 0 || query(q, "vcpu", out, err) < 0)
		return -1;
	for (i = 0; i < out->n; i++) {
		const struct ks_kstat *sc = ks_kstats_find(&q->schemas, out->v[i].name,
							   out->v[i].vcpu >= 0 ? 0 : -1);
		if (!sc)
			continue;
		if (out->v[i].type != KS_KSTAT_HIST)
			out->v[i].type = sc->type;
		out->v[i].is_bool |= sc->is_bool;
		memcpy(out->v[i].unit, sc->unit, sizeof(out->v[i].unit));
		out->v[i].base = sc->base;
		out->v[i].exponent = sc->exponent;
	}
	return 0;
}

int ks_qmp_query_name(struct ks_qmp *q, char *name, size_t len, struct ks_error *err)
{
	struct json_object *o = command(q, "{\"execute\":\"query-name\"}", err), *ret, *n;

	if (!o)
		return -1;
	if (len)
		name[0] = 0;
	if (json_object_object_get_ex(o, "return", &ret) &&
	    json_object_object_get_ex(ret, "name", &n))
		ks_utf8_copy(name, len, str_of(n));
	json_object_put(o);
	return 0;
}

/* ------------------------------------------------------------------ */
/* debugfs */

static int read_dir_stats(const char *dir, int32_t vcpu, struct ks_kstats *s)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[512], buf[4096], *p;
		struct ks_kstat *k;
		FILE *f;
		size_t n;
		uint64_t vals[256];
		uint32_t nv = 0;

		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		/* numbers apart by space; a file with anything else (a sign, a
		 * number cut short or too big) has no value, not a wrong one */
		for (p = buf; nv < 256; p += n) {
			p += strspn(p, " \n\t");
			n = strcspn(p, " \n\t");
			if (!n)
				break;
			if (ks_parse_u64(p, n, 10, &vals[nv++]) < 0) {
				nv = 0;
				break;
			}
		}
		if (!nv)
			continue;
		k = ks_kstats_add(s, de->d_name, vcpu);
		if (!k)
			return -1;
		if (nv == 1) {
			k->value = vals[0];
			continue;
		}
		k->type = KS_KSTAT_HIST;
		k->buckets = calloc(nv, sizeof(*k->buckets));
		if (!k->buckets)
			return -1;
		k->nbuckets = nv;
		memcpy(k->buckets, vals, nv * sizeof(*vals));
		for (n = 0; n < nv; n++)
			k->value += vals[n];
	}
	closedir(d);
	return 0;
}

int ks_kvm_debugfs_stats(const char *dir, struct ks_kstats **out, size_t *n, struct ks_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct ks_kstats *v = NULL;
	size_t nv = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return ks_error_code(err, KS_E_IO, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		int pid, fd, cpu;
		char sub[512];
		struct ks_kstats *nvv, *s;
		DIR *vd;
		struct dirent *ve;

		if (sscanf(de->d_name, "%d-%d", &pid, &fd) != 2)
			continue;
		nvv = realloc(v, (nv + 1) * sizeof(*v));
		if (!nvv)
			break;
		v = nvv;
		s = &v[nv++];
		memset(s, 0, sizeof(*s));
		s->pid = pid;
		snprintf(s->source, sizeof(s->source), "debugfs");
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		read_dir_stats(sub, -1, s);
		vd = opendir(sub);
		while (vd && (ve = readdir(vd))) {
			char vdir[1024];
			if (sscanf(ve->d_name, "vcpu%d", &cpu) != 1)
				continue;
			snprintf(vdir, sizeof(vdir), "%s/%s", sub, ve->d_name);
			read_dir_stats(vdir, cpu, s);
		}
		if (vd)
			closedir(vd);
	}
	closedir(d);
	*out = v;
	*n = nv;
	return 0;
}
