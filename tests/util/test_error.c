/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_error.c - struct ks_error's codes: each setter gives its kind, the
 * sentence is unchanged by the code, and real failures carry the code a
 * caller acts on (a --limit spec is a usage mistake; a QMP wait the
 * context cancels is "cancelled", not a peer failure).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/ktest.h"
#include "kvmscope/ctx.h"
#include "kvmscope/error.h"
#include "kvmscope/kvmstats.h"
#include "kvmscope/limits.h"

static void t_setters(void)
{
	struct ks_error e = { .msg = "" };

	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "fail"); /* nobody filled it */
	KT_EQ_INT(ks_error_set(&e, "plain %d", 1), -1);
	KT_EQ_STR(e.msg, "plain 1");
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "fail");
	KT_EQ_INT(ks_error_at(&e, "f.dat", 42, "bad %s", "magic"), -1);
	KT_EQ_STR(e.msg, "f.dat: offset 42: bad magic");
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "input");
	KT_EQ_INT(ks_error_code(&e, KS_E_PEER, "qmp: %s", "timeout"), -1);
	KT_EQ_STR(e.msg, "qmp: timeout");
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "peer");
	KT_EQ_INT(ks_error_code_at(&e, KS_E_LIMIT, "g.dat", 7, "over %u", 3u), -1);
	KT_EQ_STR(e.msg, "g.dat: offset 7: over 3");
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "limit");
	KT_EQ_INT(ks_error_code(NULL, KS_E_IO, "nobody"), -1);
	e.code = (enum ks_errc)999;   /* garbage: read as a plain failure */
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "fail");
}

static void t_limits_spec_is_usage(void)
{
	struct ks_limits l;
	struct ks_error e = { .msg = "" };

	ks_limits_default(&l);
	KT_EXPECT(ks_limits_parse(&l, "memory=12Q", &e) < 0);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "usage");
	KT_EXPECT(ks_limits_parse(&l, "colour=3", &e) < 0);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "usage");
	KT_EXPECT(ks_limits_parse(&l, "memory=64M", &e) == 0);
}

static bool always(void *arg)
{
	(void)arg;
	return true;
}

/* A QMP socket nobody answers (listening, never accepted): a wait the
 * context cancels is "cancelled"; one that runs out of time is the peer's
 * failure. */
static void t_qmp_cancel_vs_peer(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ks_qmp_opts o = { .timeout_ms = 200 };
	struct ks_error e = { .msg = "" };
	struct ks_qmp *q = NULL;
	struct ks_ctx *ctx = ks_ctx_new();
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	KT_REQUIRE(ctx && fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/silent.qmp", kt_tmpdir());
	unlink(sa.sun_path);
	KT_REQUIRE(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	KT_EXPECT(ks_qmp_open_opts(&q, sa.sun_path, &o, &e) < 0);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "peer");
	ks_ctx_set_cancel(ctx, always, NULL);
	o.ctx = ctx;
	o.timeout_ms = 5000;
	KT_EXPECT(ks_qmp_open_opts(&q, sa.sun_path, &o, &e) < 0);
	KT_EQ_STR(ks_errc_name(ks_error_kind(&e)), "cancelled");
	KT_EXPECT(strstr(e.msg, "interrupted") != NULL);
	close(fd);
	ks_ctx_free(ctx);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_setters),
		KT_CASE(t_limits_spec_is_usage),
		KT_CASE(t_qmp_cancel_vs_peer),
		{ 0 },
	};
	return kt_main(cases);
}
