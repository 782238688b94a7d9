/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmstats.c - KVM's statistics from QEMU's QMP query-stats or debugfs
 * (see kvmstats.h).
 *
 * QMP is one JSON object per line over a unix socket; the replies are
 * parsed with json-c.  Asynchronous events ({"event": ...}) between a
 * command and its reply are skipped.
 */
#include <dirent.h>
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

#include <json-c/json.h>

#include "kvmscope/kvmstats.h"
#include "util/text.h"

#define QMP_MAX_LINE (64u << 20) /* a reply larger than this is refused */
#define MAX_CPUS 1024

struct schema {
	char name[48];
	char unit[16];
	int32_t base, exponent;
	enum ks_kstat_type type;
	bool is_bool;
	bool vcpu;
};

struct ks_qmp {
	int fd;
	int timeout_ms;
	int32_t pid;
	char path[108];
	char *buf;
	size_t len, cap;
	bool have_meta;
	struct schema *schemas;
	size_t nschemas;
	struct { char qom[96]; int32_t index; } cpus[MAX_CPUS];
	size_t ncpus;
};

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
}

const struct ks_kstat *ks_kstats_find(const struct ks_kstats *s, const char *name, int32_t vcpu)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].vcpu == vcpu && !strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
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
		for (i = 0; i < n; i++) {
			struct json_object *b = json_object_array_get_idx(v, i);

			if (json_object_get_type(b) != json_type_int)
				return -1;
			k->buckets[i] = json_object_get_uint64(b);
			k->value += k->buckets[i];
		}
		return 0;
	default:
		return -1;
	}
}

int ks_qmp_parse_stats(const char *text, size_t len, struct ks_kstats *out,
		       int32_t (*vcpu_of)(void *ctx, const char *qom_path), void *ctx,
		       struct ks_error *err)
{
	struct json_tokener *tok = json_tokener_new_ex(32);
	struct json_object *root, *ret;
	size_t i, j, n;
	int32_t next_vcpu = 0;
	int rc = -1;

	if (!tok)
		return ks_error_set(err, "out of memory");
	root = len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, text, (int)len);
	if (!root) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		ks_error_set(err, "query-stats reply: offset %zu: %s",
			     json_tokener_get_parse_end(tok),
			     e == json_tokener_continue ? "unexpected end" : json_tokener_error_desc(e));
		json_tokener_free(tok);
		return -1;
	}
	if (!json_object_object_get_ex(root, "return", &ret) ||
	    json_object_get_type(ret) != json_type_array) {
		ks_error_set(err, "query-stats reply: offset 0: no \"return\" list");
		goto out;
	}
	n = json_object_array_length(ret);
	for (i = 0; i < n; i++) {
		struct json_object *res = json_object_array_get_idx(ret, i), *stats, *qom;
		int32_t vcpu = -1;

		if (json_object_get_type(res) != json_type_object ||
		    !json_object_object_get_ex(res, "stats", &stats) ||
		    json_object_get_type(stats) != json_type_array) {
			ks_error_set(err, "query-stats reply: offset 0: result %zu has no \"stats\" list", i);
			goto out;
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
				ks_error_set(err, "query-stats reply: offset 0: statistic %zu of result %zu "
					     "has no name or value", j, i);
				goto out;
			}
			k = ks_kstats_add(out, json_object_get_string(name), vcpu);
			if (!k) {
				ks_error_set(err, "out of memory");
				goto out;
			}
			if (parse_value(k, value) < 0) {
				ks_error_set(err, "query-stats reply: offset 0: statistic '%s' has a value "
					     "that is not a number, boolean or list of numbers", k->name);
				goto out;
			}
		}
	}
	rc = 0;
out:
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

/* One line (without '\n') into q->buf[0..*len); the rest stays buffered. */
static int read_line(struct ks_qmp *q, size_t *len, struct ks_error *err)
{
	int64_t deadline = now_ms() + q->timeout_ms;

	for (;;) {
		char *nl = q->len ? memchr(q->buf, '\n', q->len) : NULL;
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		ssize_t r;
		int64_t left;

		if (nl) {
			*len = (size_t)(nl - q->buf);
			return 0;
		}
		if (q->len + 65536 > q->cap) {
			size_t ncap = q->cap ? q->cap * 2 : 131072;
			char *nb;

			if (ncap > QMP_MAX_LINE)
				return ks_error_set(err, "%s: a QMP message longer than %u bytes", q->path,
						    QMP_MAX_LINE);
			nb = realloc(q->buf, ncap);
			if (!nb)
				return ks_error_set(err, "out of memory");
			q->buf = nb;
			q->cap = ncap;
		}
		left = deadline - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return ks_error_set(err, "%s: QMP did not answer within %d ms", q->path,
					    q->timeout_ms);
		r = read(q->fd, q->buf + q->len, q->cap - q->len);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return ks_error_set(err, "%s: %s", q->path, strerror(errno));
		if (r == 0)
			return ks_error_set(err, "%s: QEMU closed the QMP connection", q->path);
		q->len += (size_t)r;
	}
}

static void consume(struct ks_qmp *q, size_t len)
{
	memmove(q->buf, q->buf + len + 1, q->len - len - 1);
	q->len -= len + 1;
}

static int send_all(struct ks_qmp *q, const char *s, struct ks_error *err)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t w = send(q->fd, s + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ks_error_set(err, "%s: %s", q->path, strerror(errno));
		off += (size_t)w;
	}
	return 0;
}

/* Send CMD; the reply line's JSON object (caller puts it). */
static struct json_object *command(struct ks_qmp *q, const char *cmd, struct ks_error *err)
{
	if (send_all(q, cmd, err) < 0 || send_all(q, "\n", err) < 0)
		return NULL;
	for (;;) {
		struct json_object *o, *e;
		size_t len;

		if (read_line(q, &len, err) < 0)
			return NULL;
		q->buf[len] = 0;
		o = json_tokener_parse(q->buf);
		consume(q, len);
		if (!o || json_object_get_type(o) != json_type_object) {
			json_object_put(o);
			ks_error_set(err, "%s: QMP sent a line that is not a JSON object", q->path);
			return NULL;
		}
		if (json_object_object_get_ex(o, "return", NULL))
			return o;
		if (json_object_object_get_ex(o, "error", &e)) {
			struct json_object *d;
			const char *desc = json_object_object_get_ex(e, "desc", &d) ? str_of(d) : "";
			ks_error_set(err, "%s: QMP: %s", q->path, desc[0] ? desc : "error");
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
	return *reply ? 0 : ks_error_set(err, "out of memory");
}

int ks_qmp_open(struct ks_qmp **out, const char *path, int timeout_ms, struct ks_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ks_error_set(err, "%s: socket path too long", path);
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ks_error_set(err, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return ks_qmp_open_fd(out, fd, path, timeout_ms, err);
}

int ks_qmp_open_fd(struct ks_qmp **out, int fd, const char *name, int timeout_ms,
		   struct ks_error *err)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct ks_qmp *q;
	struct json_object *o;
	size_t len;

	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		close(fd);
		return ks_error_set(err, "out of memory");
	}
	q->fd = fd;
	snprintf(q->path, sizeof(q->path), "%s", name);
	q->timeout_ms = timeout_ms > 0 ? timeout_ms : 2000;
	q->pid = -1;
	if (getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0)
		q->pid = cred.pid;
	if (read_line(q, &len, err) < 0)
		goto fail;
	q->buf[len] = 0;
	o = json_tokener_parse(q->buf);
	consume(q, len);
	if (!o || !json_object_object_get_ex(o, "QMP", NULL)) {
		json_object_put(o);
		ks_error_set(err, "%s: no QMP greeting (not a QMP socket?)", q->path);
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
const char *ks_qmp_path(const struct ks_qmp *q) { return q->path; }

void ks_qmp_close(struct ks_qmp *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	free(q->schemas);
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
			struct schema *sc, *ns;

			if (!json_object_object_get_ex(s, "name", &nm))
				continue;
			ns = realloc(q->schemas, (q->nschemas + 1) * sizeof(*ns));
			if (!ns) {
				json_object_put(o);
				return ks_error_set(err, "out of memory");
			}
			q->schemas = ns;
			sc = &q->schemas[q->nschemas++];
			memset(sc, 0, sizeof(*sc));
			snprintf(sc->name, sizeof(sc->name), "%s", str_of(nm));
			sc->vcpu = vcpu;
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
	size_t i;

	for (i = 0; i < q->ncpus; i++)
		if (!strcmp(q->cpus[i].qom, qom))
			return q->cpus[i].index;
	return -1;
}

static int query(struct ks_qmp *q, const char *target, struct ks_kstats *out,
		 struct ks_error *err)
{
	char cmd[128];
	struct json_object *o;
	const char *text;
	int rc;

	snprintf(cmd, sizeof(cmd), "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"%s\"}}",
		 target);
	o = command(q, cmd, err);
	if (!o)
		return -1;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	rc = ks_qmp_parse_stats(text, strlen(text), out, qmp_vcpu_of, q, err);
	json_object_put(o);
	return rc;
}

int ks_qmp_query_stats(struct ks_qmp *q, struct ks_kstats *out, struct ks_error *err)
{
	size_t i, j;

	ks_kstats_free(out);
	out->pid = q->pid;
	snprintf(out->source, sizeof(out->source), "qmp");
	if (!q->have_meta && load_meta(q, err) < 0)
		return -1;
	if (query(q, "vm", out, err) < 0 || query(q, "vcpu", out, err) < 0)
		return -1;
	for (i = 0; i < out->n; i++)
		for (j = 0; j < q->nschemas; j++)
			if (q->schemas[j].vcpu == (out->v[i].vcpu >= 0) &&
			    !strcmp(q->schemas[j].name, out->v[i].name)) {
				if (out->v[i].type != KS_KSTAT_HIST)
					out->v[i].type = q->schemas[j].type;
				out->v[i].is_bool |= q->schemas[j].is_bool;
				memcpy(out->v[i].unit, q->schemas[j].unit, sizeof(out->v[i].unit));
				out->v[i].base = q->schemas[j].base;
				out->v[i].exponent = q->schemas[j].exponent;
				break;
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
		char path[512], buf[4096], *p, *end;
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
		for (p = buf; nv < 256; p = end) {
			unsigned long long v;
			while (*p == ' ' || *p == '\n' || *p == '\t')
				p++;
			if (!*p)
				break;
			errno = 0;
			v = strtoull(p, &end, 10);
			if (end == p || errno)
				break;
			vals[nv++] = v;
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
		return ks_error_set(err, "%s: %s", dir, strerror(errno));
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
