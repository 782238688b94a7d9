/*
 * qmp_stats.c - QMP query-stats client (see qmp_stats.h).
 *
 * QMP is line-delimited JSON over a unix socket: a greeting, then one reply
 * ({"return": ...} or {"error": ...}) per command, with asynchronous
 * {"event": ...} lines in between.  The replies are parsed by a small JSON
 * parser into a node array (depth and size bounded), then walked.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kvmscope/qmp_stats.h"

/* ------------------------------------------------------------------ */
/* JSON */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	const char *str;     /* J_STR: raw text between the quotes (escapes kept) */
	size_t len;
	double num;          /* J_NUM, J_BOOL */
	int key;             /* object member: index of its key string node, else -1 */
	int child, next;     /* first child, next sibling; -1 = none */
};

struct jdoc {
	struct jnode *n;
	size_t count, cap;
	const char *p, *end;
	int depth;
};

#define J_MAX_DEPTH 32
#define J_MAX_NODES (1u << 20)

static int jnew(struct jdoc *d, enum jtype t)
{
	if (d->count == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 256;
		struct jnode *n;
		if (ncap > J_MAX_NODES)
			return -1;
		n = realloc(d->n, ncap * sizeof(*n));
		if (!n)
			return -1;
		d->n = n;
		d->cap = ncap;
	}
	memset(&d->n[d->count], 0, sizeof(d->n[0]));
	d->n[d->count].type = t;
	d->n[d->count].key = d->n[d->count].child = d->n[d->count].next = -1;
	return (int)d->count++;
}

static void jspace(struct jdoc *d)
{
	while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r'))
		d->p++;
}

static int jvalue(struct jdoc *d);

static int jstring(struct jdoc *d)
{
	const char *s;
	int i;

	if (d->p >= d->end || *d->p != '"')
		return -1;
	s = ++d->p;
	while (d->p < d->end && *d->p != '"') {
		if (*d->p == '\\' && d->p + 1 < d->end)
			d->p++;
		else if ((unsigned char)*d->p < 0x20)
			return -1;
		d->p++;
	}
	if (d->p >= d->end)
		return -1;
	i = jnew(d, J_STR);
	if (i < 0)
		return -1;
	d->n[i].str = s;
	d->n[i].len = (size_t)(d->p - s);
	d->p++;
	return i;
}

static int jlist(struct jdoc *d, bool obj)
{
	int self = jnew(d, obj ? J_OBJ : J_ARR), last = -1;
	char close = obj ? '}' : ']';

	if (self < 0 || ++d->depth > J_MAX_DEPTH)
		return -1;
	d->p++;
	jspace(d);
	if (d->p < d->end && *d->p == close) {
		d->p++;
		d->depth--;
		return self;
	}
	for (;;) {
		int key = -1, v;
		jspace(d);
		if (obj) {
			key = jstring(d);
			jspace(d);
			if (key < 0 || d->p >= d->end || *d->p != ':')
				return -1;
			d->p++;
		}
		v = jvalue(d);
		if (v < 0)
			return -1;
		d->n[v].key = key;
		if (last < 0)
			d->n[self].child = v;
		else
			d->n[last].next = v;
		last = v;
		jspace(d);
		if (d->p < d->end && *d->p == ',') {
			d->p++;
			continue;
		}
		if (d->p < d->end && *d->p == close) {
			d->p++;
			d->depth--;
			return self;
		}
		return -1;
	}
}

static int jvalue(struct jdoc *d)
{
	char *e;
	int i;

	jspace(d);
	if (d->p >= d->end)
		return -1;
	switch (*d->p) {
	case '{': return jlist(d, true);
	case '[': return jlist(d, false);
	case '"': return jstring(d);
	default: break;
	}
	if ((size_t)(d->end - d->p) >= 4 && !memcmp(d->p, "true", 4)) {
		d->p += 4;
		i = jnew(d, J_BOOL);
		if (i >= 0)
			d->n[i].num = 1;
		return i;
	}
	if ((size_t)(d->end - d->p) >= 5 && !memcmp(d->p, "false", 5)) {
		d->p += 5;
		return jnew(d, J_BOOL);
	}
	if ((size_t)(d->end - d->p) >= 4 && !memcmp(d->p, "null", 4)) {
		d->p += 4;
		return jnew(d, J_NULL);
	}
	if (*d->p == '-' || (*d->p >= '0' && *d->p <= '9')) {
		char buf[64];
		size_t n = 0;
		while (d->p + n < d->end && n + 1 < sizeof(buf) && strchr("+-.eE0123456789", d->p[n]))
			n++;
		memcpy(buf, d->p, n);
		buf[n] = 0;
		i = jnew(d, J_NUM);
		if (i < 0)
			return -1;
		d->n[i].num = strtod(buf, &e);
		if (e == buf)
			return -1;
		d->p += e - buf;
		return i;
	}
	return -1;
}

static int jparse(struct jdoc *d, const char *json, size_t len)
{
	int root;

	memset(d, 0, sizeof(*d));
	d->p = json;
	d->end = json + len;
	root = jvalue(d);
	return root;
}

static bool jkey_is(const struct jdoc *d, int node, const char *k)
{
	const struct jnode *key;

	if (node < 0 || d->n[node].key < 0)
		return false;
	key = &d->n[d->n[node].key];
	return key->len == strlen(k) && !memcmp(key->str, k, key->len);
}

static int jget(const struct jdoc *d, int obj, const char *k)
{
	int c;

	if (obj < 0 || d->n[obj].type != J_OBJ)
		return -1;
	for (c = d->n[obj].child; c >= 0; c = d->n[c].next)
		if (jkey_is(d, c, k))
			return c;
	return -1;
}

/* A string member into BUF (escapes dropped: names are plain ASCII). */
static void jcopy(const struct jdoc *d, int node, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = 0;
	if (node < 0 || d->n[node].type != J_STR || !len)
		return;
	for (i = 0; i < d->n[node].len && o + 1 < len; i++) {
		char c = d->n[node].str[i];
		if (c == '\\')
			continue;
		buf[o++] = c;
	}
	buf[o] = 0;
}

static bool jstr_is(const struct jdoc *d, int node, const char *s)
{
	return node >= 0 && d->n[node].type == J_STR && d->n[node].len == strlen(s) &&
	       !memcmp(d->n[node].str, s, d->n[node].len);
}

/* The "return" member of a reply, or -1 with err set. */
static int jreturn(struct jdoc *d, const char *json, size_t len, struct ks_error *err)
{
	int root = jparse(d, json, len), r, e;
	char msg[160];

	if (root < 0 || d->n[root].type != J_OBJ)
		return ks_error_set(err, "QMP: a reply that is not a JSON object");
	r = jget(d, root, "return");
	if (r >= 0)
		return r;
	e = jget(d, root, "error");
	jcopy(d, jget(d, e, "desc"), msg, sizeof(msg));
	return ks_error_set(err, "QMP: %s", msg[0] ? msg : "a reply without 'return'");
}

/* ------------------------------------------------------------------ */
/* replies */

void ks_qmpx_schema_free(struct ks_qmpx_schema *sch)
{
	free(sch->e);
	memset(sch, 0, sizeof(*sch));
}

void ks_qmpx_stats_free(struct ks_qmpx_stats *st)
{
	free(st->s);
	memset(st, 0, sizeof(*st));
}

int ks_qmpx_parse_schemas(struct ks_qmpx_schema *sch, const char *json, size_t len,
			 struct ks_error *err)
{
	struct jdoc d;
	int r = jreturn(&d, json, len, err), prov, s;

	if (r < 0)
		goto out;
	sch->n = 0;
	for (prov = d.n[r].type == J_ARR ? d.n[r].child : -1; prov >= 0; prov = d.n[prov].next) {
		bool vcpu = jstr_is(&d, jget(&d, prov, "target"), "vcpu");
		int stats = jget(&d, prov, "stats");
		if (stats < 0 || d.n[stats].type != J_ARR)
			continue;
		for (s = d.n[stats].child; s >= 0; s = d.n[s].next) {
			struct ks_qmpx_schema_entry *e;
			int b = jget(&d, s, "base"), x = jget(&d, s, "exponent");
			if (sch->n == sch->cap) {
				size_t ncap = sch->cap ? sch->cap * 2 : 64;
				e = realloc(sch->e, ncap * sizeof(*e));
				if (!e) {
					r = ks_error_set(err, "out of memory");
					goto out;
				}
				sch->e = e;
				sch->cap = ncap;
			}
			e = &sch->e[sch->n++];
			memset(e, 0, sizeof(*e));
			jcopy(&d, jget(&d, s, "name"), e->name, sizeof(e->name));
			jcopy(&d, jget(&d, s, "unit"), e->unit, sizeof(e->unit));
			e->vcpu = vcpu;
			e->cumulative = jstr_is(&d, jget(&d, s, "type"), "cumulative");
			e->base = b >= 0 && d.n[b].type == J_NUM ? (int)d.n[b].num : 10;
			e->exponent = x >= 0 && d.n[x].type == J_NUM && fabs(d.n[x].num) < 64 ?
				      (int)d.n[x].num : 0;
		}
	}
	r = 0;
out:
	free(d.n);
	return r < 0 ? -1 : 0;
}

static const struct ks_qmpx_schema_entry *schema_of(const struct ks_qmpx_schema *sch,
						   const char *name, bool vcpu)
{
	size_t i;

	for (i = 0; sch && i < sch->n; i++)
		if (sch->e[i].vcpu == vcpu && !strcmp(sch->e[i].name, name))
			return &sch->e[i];
	return NULL;
}

int ks_qmpx_parse_stats(struct ks_qmpx_stats *out, const struct ks_qmpx_schema *sch, bool vcpu,
		       const char *json, size_t len, struct ks_error *err)
{
	struct jdoc d;
	int r = jreturn(&d, json, len, err), item, s;
	int32_t index = 0;

	if (r < 0)
		goto out;
	for (item = d.n[r].type == J_ARR ? d.n[r].child : -1; item >= 0;
	     item = d.n[item].next, index++) {
		int stats = jget(&d, item, "stats");
		if (stats < 0 || d.n[stats].type != J_ARR)
			continue;
		for (s = d.n[stats].child; s >= 0; s = d.n[s].next) {
			int v = jget(&d, s, "value");
			const struct ks_qmpx_schema_entry *e;
			struct ks_qmpx_stat *o;
			if (v < 0 || (d.n[v].type != J_NUM && d.n[v].type != J_BOOL))
				continue; /* histograms (lists) */
			if (out->n == out->cap) {
				size_t ncap = out->cap ? out->cap * 2 : 64;
				o = realloc(out->s, ncap * sizeof(*o));
				if (!o) {
					r = ks_error_set(err, "out of memory");
					goto out;
				}
				out->s = o;
				out->cap = ncap;
			}
			o = &out->s[out->n++];
			memset(o, 0, sizeof(*o));
			jcopy(&d, jget(&d, s, "name"), o->name, sizeof(o->name));
			o->vcpu = vcpu ? index : -1;
			o->value = d.n[v].num;
			e = schema_of(sch, o->name, vcpu);
			if (e) {
				o->cumulative = e->cumulative;
				snprintf(o->unit, sizeof(o->unit), "%s", e->unit);
				if (e->exponent && (e->base == 2 || e->base == 10))
					o->value *= pow(e->base, e->exponent);
			}
		}
	}
	r = 0;
out:
	free(d.n);
	return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* the connection */

#define QMP_MAX_REPLY (16u << 20)

struct ks_qmpx {
	int fd;
	int timeout_ms;
	char *buf;
	size_t len, cap;
	char name[64];
	int32_t pid;
	struct ks_qmpx_schema schema;
	char path[108];
};

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The next line that is not an event: a pointer into q->buf, its length in *n. */
static const char *read_reply(struct ks_qmpx *q, size_t *n, struct ks_error *err)
{
	double deadline = mono_ms() + q->timeout_ms;

	for (;;) {
		char *nl = q->len ? memchr(q->buf, '\n', q->len) : NULL;
		if (nl) {
			size_t l = (size_t)(nl - q->buf) + 1;
			if (!memmem(q->buf, l, "\"event\"", 7) || memmem(q->buf, l, "\"return\"", 8)) {
				*n = l;
				return q->buf;
			}
			memmove(q->buf, q->buf + l, q->len - l);
			q->len -= l;
			continue;
		}
		if (q->len + 65536 > q->cap) {
			size_t ncap = q->cap ? q->cap * 2 : 262144;
			char *b;
			if (ncap > QMP_MAX_REPLY) {
				ks_error_set(err, "%s: QMP reply longer than %u bytes", q->path, QMP_MAX_REPLY);
				return NULL;
			}
			b = realloc(q->buf, ncap);
			if (!b) {
				ks_error_set(err, "out of memory");
				return NULL;
			}
			q->buf = b;
			q->cap = ncap;
		}
		{
			struct pollfd p = { .fd = q->fd, .events = POLLIN };
			double left = deadline - mono_ms();
			ssize_t r;
			if (left <= 0 || poll(&p, 1, (int)left + 1) <= 0) {
				ks_error_set(err, "%s: no QMP reply within %d ms", q->path, q->timeout_ms);
				return NULL;
			}
			r = read(q->fd, q->buf + q->len, q->cap - q->len);
			if (r <= 0) {
				ks_error_set(err, "%s: QMP connection closed", q->path);
				return NULL;
			}
			q->len += (size_t)r;
		}
	}
}

static void consume(struct ks_qmpx *q, size_t n)
{
	memmove(q->buf, q->buf + n, q->len - n);
	q->len -= n;
}

static int send_cmd(struct ks_qmpx *q, const char *cmd, struct ks_error *err)
{
	size_t len = strlen(cmd), off = 0;

	while (off < len) {
		ssize_t w = send(q->fd, cmd + off, len - off, MSG_NOSIGNAL);
		if (w <= 0)
			return ks_error_set(err, "%s: cannot send to QMP: %s", q->path, strerror(errno));
		off += (size_t)w;
	}
	return 0;
}

/* Send CMD and parse the reply with FN (NULL: check it is a "return"). */
static int exchange(struct ks_qmpx *q, const char *cmd, struct ks_error *err,
		    int (*fn)(struct ks_qmpx *q, const char *r, size_t n, void *ctx, struct ks_error *err),
		    void *ctx)
{
	const char *r;
	size_t n;
	int ret;

	if (send_cmd(q, cmd, err) < 0 || !(r = read_reply(q, &n, err)))
		return -1;
	if (fn) {
		ret = fn(q, r, n, ctx, err);
	} else {
		struct jdoc d;
		ret = jreturn(&d, r, n, err) < 0 ? -1 : 0;
		free(d.n);
	}
	consume(q, n);
	return ret;
}

static int take_name(struct ks_qmpx *q, const char *r, size_t n, void *ctx, struct ks_error *err)
{
	struct jdoc d;
	int ret = jreturn(&d, r, n, err);

	(void)ctx;
	if (ret >= 0)
		jcopy(&d, jget(&d, ret, "name"), q->name, sizeof(q->name));
	free(d.n);
	return ret < 0 ? -1 : 0;
}

static int take_schemas(struct ks_qmpx *q, const char *r, size_t n, void *ctx, struct ks_error *err)
{
	(void)ctx;
	return ks_qmpx_parse_schemas(&q->schema, r, n, err);
}

struct stats_ctx {
	struct ks_qmpx_stats *out;
	bool vcpu;
};

static int take_stats_target(struct ks_qmpx *q, const char *r, size_t n, void *ctx,
			     struct ks_error *err)
{
	struct stats_ctx *c = ctx;

	return ks_qmpx_parse_stats(c->out, &q->schema, c->vcpu, r, n, err);
}

int ks_qmpx_connect(struct ks_qmpx **out, const char *path, int timeout_ms, struct ks_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ks_qmpx *q;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	const char *r;
	size_t n;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ks_error_set(err, "%s: socket path too long", path);
	q = calloc(1, sizeof(*q));
	if (!q)
		return ks_error_set(err, "out of memory");
	snprintf(q->path, sizeof(q->path), "%s", path);
	q->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
	q->pid = -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (q->fd < 0 || connect(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ks_error_set(err, "%s: cannot connect: %s", path, strerror(errno));
		goto fail;
	}
	if (getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		q->pid = cred.pid;
	/* the greeting */
	if (!(r = read_reply(q, &n, err)))
		goto fail;
	if (!memmem(r, n, "\"QMP\"", 5)) {
		ks_error_set(err, "%s: not a QMP socket (no greeting)", path);
		goto fail;
	}
	consume(q, n);
	if (exchange(q, "{\"execute\":\"qmp_capabilities\"}\n", err, NULL, NULL) < 0 ||
	    exchange(q, "{\"execute\":\"query-name\"}\n", err, take_name, NULL) < 0 ||
	    exchange(q, "{\"execute\":\"query-stats-schemas\"}\n", err, take_schemas, NULL) < 0)
		goto fail;
	*out = q;
	return 0;
fail:
	ks_qmpx_close(q);
	return -1;
}

const char *ks_qmpx_name(const struct ks_qmpx *q) { return q->name; }
int32_t ks_qmpx_pid(const struct ks_qmpx *q) { return q->pid; }

int ks_qmpx_query_stats(struct ks_qmpx *q, struct ks_qmpx_stats *out, struct ks_error *err)
{
	struct stats_ctx c = { out, false };

	out->n = 0;
	if (exchange(q, "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"vm\"}}\n", err,
		     take_stats_target, &c) < 0)
		return -1;
	c.vcpu = true;
	return exchange(q, "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"vcpu\"}}\n",
			err, take_stats_target, &c);
}

void ks_qmpx_close(struct ks_qmpx *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	ks_qmpx_schema_free(&q->schema);
	free(q);
}
