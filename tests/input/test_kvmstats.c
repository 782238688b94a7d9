/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_kvmstats.c - the QMP query-stats reply parser (src/input/kvmstats.c)
 * on replies in QEMU 7.2's exact form, and on broken ones: every mistake is
 * one error naming the reply and the offset, never a crash or a value.  And
 * whole client sessions over a socketpair(), QEMU's side cut from QEMU 7.2:
 * the VM's name, the vCPU numbers (cpu-index) and the schema's units.
 * libvirt: its typed parameters as libvirt 9.0 names them, and a whole
 * connection to libvirt's in-process test driver (test:///default).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/ktest.h"
#include "kvmscope/kvmstats.h"

static int32_t by_path(void *ctx, const char *qom)
{
	(void)ctx;
	return !strcmp(qom, "/machine/unattached/device[1]") ? 7 : -1;
}

static int parse(const char *text, struct ks_kstats *s, struct ks_error *err)
{
	return ks_qmp_parse_stats(text, strlen(text), s, by_path, NULL, err);
}

/* A vm reply and a vcpu reply, cut from QEMU 7.2 (Debian 1:7.2+dfsg-7). */
static void t_replies(void)
{
	static const char vm[] =
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"mmu_cache_miss\", "
		"\"value\": 20}, {\"name\": \"remote_tlb_flush_requests\", \"value\": 4}]}]}";
	static const char vcpu[] =
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"guest_mode\", "
		"\"value\": false}, {\"name\": \"exits\", \"value\": 18446744073709551615}, "
		"{\"name\": \"halt_wait_hist\", \"value\": [0, 0, 1, 4, 138]}], "
		"\"qom-path\": \"/machine/unattached/device[0]\"}, {\"provider\": \"kvm\", \"stats\": "
		"[{\"name\": \"exits\", \"value\": 5}], \"qom-path\": \"/machine/unattached/device[1]\"}]}";
	struct ks_kstats s = { 0 };
	struct ks_error err;
	const struct ks_kstat *k;

	KT_REQUIRE(parse(vm, &s, &err) == 0);
	KT_REQUIRE(parse(vcpu, &s, &err) == 0);
	KT_EQ_U64(s.n, 6);
	KT_REQUIRE((k = ks_kstats_find(&s, "mmu_cache_miss", -1)));
	KT_EQ_U64(k->value, 20);
	/* an unknown path numbers the vCPUs in order; a known one maps */
	KT_REQUIRE((k = ks_kstats_find(&s, "guest_mode", 0)));
	KT_EXPECT(k->is_bool && k->value == 0);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 0)));
	KT_EQ_U64(k->value, UINT64_MAX);
	KT_REQUIRE((k = ks_kstats_find(&s, "halt_wait_hist", 0)));
	KT_EXPECT(k->type == KS_KSTAT_HIST && k->nbuckets == 5);
	KT_EQ_U64(k->value, 143);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 7)));
	KT_EQ_U64(k->value, 5);
	KT_EXPECT(!ks_kstats_find(&s, "exits", 1));
	ks_kstats_free(&s);
	KT_EQ_U64(s.n, 0);
}

static void t_broken(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "", "query-stats reply: offset 0: unexpected end" },
		{ "{\"return\": [", "query-stats reply: offset 12: unexpected end" },
		{ "{\"return\": 5}", "no \"return\" list" },
		{ "{\"error\": {\"desc\": \"x\"}}", "no \"return\" list" },
		{ "{\"return\": [7]}", "result 0 has no \"stats\" list" },
		{ "{\"return\": [{\"stats\": [{\"value\": 1}]}]}", "has no name or value" },
		{ "{\"return\": [{\"stats\": [{\"name\": \"a\", \"value\": \"x\"}]}]}",
		  "statistic 'a' has a value that is not a number" },
		{ "{\"return\": [{\"stats\": [{\"name\": \"a\", \"value\": [1, \"x\"]}]}]}",
		  "statistic 'a' has a value that is not a number" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ks_kstats s = { 0 };
		struct ks_error err = { 0 };

		KT_EQ_INT(parse(cases[i].text, &s, &err), -1);
		if (!strstr(err.msg, cases[i].want))
			kt_fail(__FILE__, __LINE__, "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
		ks_kstats_free(&s);
	}
}

/* QEMU's side of a session (QEMU 7.2, -name guest=fuzz-vm -smp 2, its
 * lines cut to a few statistics): written whole, then the end is shut. */
static const char greeting[] =
	"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, "
	"\"package\": \"Debian 1:7.2+dfsg-7+deb12u18+b3\"}, \"capabilities\": [\"oob\"]}}\n"
	"{\"return\": {}}\n"
	"{\"timestamp\": {\"seconds\": 1795642118, \"microseconds\": 707718}, \"event\": \"STOP\"}\n";
static const char name_and_cpus[] =
	"{\"return\": {\"name\": \"fuzz-vm\"}}\n"
	"{\"return\": [{\"thread-id\": 19250, \"props\": {\"core-id\": 0, \"thread-id\": 0, "
	"\"socket-id\": 0}, \"qom-path\": \"/machine/unattached/device[0]\", \"cpu-index\": 0, "
	"\"target\": \"x86_64\"}, {\"thread-id\": 19251, \"props\": {\"core-id\": 1, "
	"\"thread-id\": 0, \"socket-id\": 0}, \"qom-path\": \"/machine/unattached/device[2]\", "
	"\"cpu-index\": 1, \"target\": \"x86_64\"}]}\n";
static const char schemas_and_stats[] =
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"guest_mode\", \"unit\": "
	"\"boolean\", \"exponent\": 0, \"type\": \"instant\"}, {\"name\": \"exits\", \"exponent\": 0, "
	"\"type\": \"cumulative\"}, {\"name\": \"halt_wait_hist\", \"unit\": \"seconds\", \"base\": 10, "
	"\"exponent\": -9, \"type\": \"log2-histogram\"}, {\"name\": \"halt_wait_ns\", \"unit\": "
	"\"seconds\", \"base\": 10, \"exponent\": -9, \"type\": \"cumulative\"}], \"target\": \"vcpu\"}, "
	"{\"provider\": \"kvm\", \"stats\": [{\"name\": \"max_mmu_rmap_size\", \"exponent\": 0, "
	"\"type\": \"peak\"}, {\"name\": \"mmu_cache_miss\", \"exponent\": 0, \"type\": "
	"\"cumulative\"}], \"target\": \"vm\"}]}\n"
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"max_mmu_rmap_size\", "
	"\"value\": 0}, {\"name\": \"mmu_cache_miss\", \"value\": 12}]}]}\n"
	/* QEMU 7.2 lists the vCPUs last first */
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"guest_mode\", \"value\": "
	"false}, {\"name\": \"exits\", \"value\": 1}, {\"name\": \"halt_wait_hist\", \"value\": [0, 0, "
	"1, 0]}, {\"name\": \"halt_wait_ns\", \"value\": 511678202}], \"qom-path\": "
	"\"/machine/unattached/device[2]\"}, {\"provider\": \"kvm\", \"stats\": [{\"name\": "
	"\"guest_mode\", \"value\": false}, {\"name\": \"exits\", \"value\": 1143}, {\"name\": "
	"\"halt_wait_hist\", \"value\": [0, 0, 0, 0]}, {\"name\": \"halt_wait_ns\", \"value\": 0}], "
	"\"qom-path\": \"/machine/unattached/device[0]\"}]}\n";

/* A client session against TEXT (QEMU's side); the client, or NULL.  QEMU's
 * end stays open (the client's commands go there unread) until done(). */
static int peer = -1;

static void done(struct ks_qmp *q)
{
	ks_qmp_close(q);
	close(peer);
	peer = -1;
}

static struct ks_qmp *session(const char *text, struct ks_error *err)
{
	struct ks_qmp *q;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		kt_fail(__FILE__, __LINE__, "socketpair failed");
		return NULL;
	}
	if (write(sv[1], text, strlen(text)) != (ssize_t)strlen(text))
		kt_fail(__FILE__, __LINE__, "short write to the socketpair");
	shutdown(sv[1], SHUT_WR);
	if (ks_qmp_open_fd(&q, sv[0], "test.qmp", 2000, err) < 0)
		q = NULL;
	peer = sv[1];
	if (!q)
		done(NULL);
	return q;
}

static void t_session(void)
{
	char text[8192], name[64];
	struct ks_kstats s = { 0 };
	struct ks_error err = { 0 };
	const struct ks_kstat *k;
	struct ks_qmp *q;

	snprintf(text, sizeof(text), "%s%s%s", greeting, name_and_cpus, schemas_and_stats);
	KT_REQUIRE((q = session(text, &err)));
	if (ks_qmp_query_name(q, name, sizeof(name), &err) < 0)
		kt_fail(__FILE__, __LINE__, "query-name: %s", err.msg);
	KT_EXPECT(!strcmp(name, "fuzz-vm"));
	KT_EQ_INT(ks_qmp_query_stats(q, &s, &err), 0);
	KT_EQ_U64(s.n, 10);
	/* vCPUs by cpu-index, not by their place in the reply */
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 0)));
	KT_EQ_U64(k->value, 1143);
	KT_EXPECT(k->type == KS_KSTAT_CUMULATIVE && !k->unit[0] && k->exponent == 0);
	KT_EXPECT(ks_kstat_scaled(k) == 1143.0);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 1)));
	KT_EQ_U64(k->value, 1);
	/* nanoseconds: the schema says seconds, 10^-9 */
	KT_REQUIRE((k = ks_kstats_find(&s, "halt_wait_ns", 1)));
	KT_EXPECT(!strcmp(k->unit, "seconds") && k->base == 10 && k->exponent == -9);
	KT_EXPECT(fabs(ks_kstat_scaled(k) - 0.511678202) < 1e-15);
	KT_REQUIRE((k = ks_kstats_find(&s, "guest_mode", 0)));
	KT_EXPECT(k->is_bool && k->type == KS_KSTAT_INSTANT && k->value == 0);
	KT_REQUIRE((k = ks_kstats_find(&s, "halt_wait_hist", 1)));
	/* QEMU's list is last bucket first: its third item is KVM's bucket 1 */
	KT_EXPECT(k->type == KS_KSTAT_HIST && k->nbuckets == 4 && k->buckets[1] == 1);
	KT_REQUIRE((k = ks_kstats_find(&s, "max_mmu_rmap_size", -1)));
	KT_EXPECT(k->type == KS_KSTAT_PEAK);
	KT_REQUIRE((k = ks_kstats_find(&s, "mmu_cache_miss", -1)));
	KT_EXPECT(k->type == KS_KSTAT_CUMULATIVE && k->value == 12);
	/* QEMU has said all it had: the next query fails, it does not wait */
	KT_EQ_INT(ks_qmp_query_stats(q, &s, &err), -1);
	KT_EXPECT(strstr(err.msg, "test.qmp: QEMU closed the QMP connection") != NULL);
	ks_kstats_free(&s);
	done(q);
}

/* QMP errors, a session cut short, members of the wrong JSON type: one
 * error or default values, never a crash. */
static void t_session_broken(void)
{
	static const char null_members[] =
		"{\"return\": {\"name\": null}}\n"
		"{\"return\": [{\"qom-path\": null, \"cpu-index\": null}, 7]}\n"
		"{\"return\": [{\"target\": null, \"stats\": [{\"name\": null, \"unit\": null, "
		"\"type\": null, \"base\": null, \"exponent\": 1e300}]}, null]}\n"
		"{\"return\": []}\n{\"return\": [{\"stats\": [{\"name\": \"exits\", \"value\": 3}], "
		"\"qom-path\": null}]}\n";
	char text[8192], name[64];
	struct ks_kstats s = { 0 };
	struct ks_error err = { 0 };
	const struct ks_kstat *k;
	struct ks_qmp *q;

	snprintf(text, sizeof(text), "%s%s", greeting,
		 "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-name "
		 "has not been found\"}}\n");
	KT_REQUIRE((q = session(text, &err)));
	KT_EQ_INT(ks_qmp_query_name(q, name, sizeof(name), &err), -1);
	KT_EXPECT(!strcmp(err.msg, "test.qmp: QMP: The command query-name has not been found"));
	done(q);

	snprintf(text, sizeof(text), "%s%s", greeting, name_and_cpus);
	KT_REQUIRE((q = session(text, &err)));
	KT_EQ_INT(ks_qmp_query_name(q, name, sizeof(name), &err), 0);
	KT_EQ_INT(ks_qmp_query_stats(q, &s, &err), -1);
	KT_EXPECT(strstr(err.msg, "closed the QMP connection") != NULL);
	done(q);

	KT_EXPECT(!session("{\"return\": {}}\n", &err));
	KT_EXPECT(!strcmp(err.msg, "test.qmp: no QMP greeting (not a QMP socket?)"));

	snprintf(text, sizeof(text), "%s%s", greeting, null_members);
	KT_REQUIRE((q = session(text, &err)));
	KT_EQ_INT(ks_qmp_query_name(q, name, sizeof(name), &err), 0);
	KT_EXPECT(!name[0]);
	KT_EQ_INT(ks_qmp_query_stats(q, &s, &err), 0);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 0)));
	KT_EXPECT(k->value == 3 && k->base == 10 && k->exponent == 0 && ks_kstat_scaled(k) == 3.0);
	ks_kstats_free(&s);
	done(q);
}

/* The fields of a domain's record (libvirt 9.0.0, QEMU 7.2, `virsh
 * domstats --vm --vcpu`), libvirt's own ones between them. */
static void t_libvirt_params(void)
{
	static const struct {
		const char *field;
		bool is_bool, kvm;
		uint64_t value;
	} p[] = {
		{ "vcpu.current", false, false, 2 },
		{ "vcpu.maximum", false, false, 2 },
		{ "vcpu.0.state", false, false, 1 },
		{ "vcpu.0.time", false, false, 50000000 },
		{ "vcpu.0.delay", false, false, 50943207 },
		{ "vcpu.0.exits.sum", false, true, 236 },
		{ "vcpu.0.guest_mode.cur", true, true, 0 },
		{ "vcpu.0.halt_wait_ns.sum", false, true, 511678202 },
		{ "vcpu.1.exits.sum", false, true, 5 },
		{ "vcpu.1.blocking.cur", true, true, 1 },
		{ "vm.mmu_cache_miss.sum", false, true, 12 },
		{ "vm.pages_4k.cur", false, true, 4096 },
		{ "vm.max_mmu_rmap_size.max", false, true, 3 },
		{ "vm.x.avg", false, false, 1 },
		{ "vm..sum", false, false, 1 },
		{ "vcpu.x.exits.sum", false, false, 1 },
		{ "vcpu.1exits.sum", false, false, 1 },
		{ "vcpu.2147483648.exits.sum", false, false, 1 },
		{ "vcpu.18446744073709551617.exits.sum", false, false, 1 },
		{ "state.state", false, false, 1 },
		/* a daemon's name that is no KVM statistic's */
		{ "vm.ex\x1b[2Jits.sum", false, false, 1 },
		{ "vcpu.0.a b.cur", false, false, 1 },
	};
	struct ks_kstats s = { 0 };
	const struct ks_kstat *k;
	size_t i;

	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (ks_libvirt_add_param(&s, p[i].field, p[i].is_bool, p[i].value) != p[i].kvm)
			kt_fail(__FILE__, __LINE__, "%s: taken %d", p[i].field, !p[i].kvm);
	KT_EQ_U64(s.n, 8);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 0)));
	KT_EXPECT(k->value == 236 && k->type == KS_KSTAT_CUMULATIVE && !k->unit[0]);
	KT_REQUIRE((k = ks_kstats_find(&s, "exits", 1)));
	KT_EQ_U64(k->value, 5);
	KT_REQUIRE((k = ks_kstats_find(&s, "guest_mode", 0)));
	KT_EXPECT(k->is_bool && k->value == 0 && k->type == KS_KSTAT_INSTANT);
	KT_EQ_STR(k->unit, "boolean");
	KT_REQUIRE((k = ks_kstats_find(&s, "blocking", 1)));
	KT_EXPECT(k->is_bool && k->value == 1);
	/* QEMU's schema: unit seconds, 10^-9 */
	KT_REQUIRE((k = ks_kstats_find(&s, "halt_wait_ns", 0)));
	KT_EQ_STR(k->unit, "seconds");
	KT_EXPECT(k->base == 10 && k->exponent == -9 && fabs(ks_kstat_scaled(k) - 0.511678202) < 1e-12);
	KT_REQUIRE((k = ks_kstats_find(&s, "mmu_cache_miss", -1)));
	KT_EXPECT(k->value == 12 && k->type == KS_KSTAT_CUMULATIVE);
	KT_REQUIRE((k = ks_kstats_find(&s, "pages_4k", -1)));
	KT_EXPECT(k->value == 4096 && k->type == KS_KSTAT_INSTANT);
	KT_REQUIRE((k = ks_kstats_find(&s, "max_mmu_rmap_size", -1)));
	KT_EXPECT(k->value == 3 && k->type == KS_KSTAT_PEAK);
	ks_kstats_free(&s);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* debugfs as KVM writes it (one number, or a histogram's numbers apart by
 * space); a file with anything else has no value: strtoull() made 12 of
 * "12abc", 2^64-5 of "-5" and 2^64-1 of 2^64. */
static void t_debugfs(void)
{
	char dir[512], vm[600], vcpu[700];
	const struct ks_kstat *k;
	struct ks_kstats *v;
	struct ks_error err;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/debugfs-kvm", kt_tmpdir());
	snprintf(vm, sizeof(vm), "%s/4242-11", dir);
	snprintf(vcpu, sizeof(vcpu), "%s/vcpu1", vm);
	mkdir(dir, 0700);
	mkdir(vm, 0700);
	mkdir(vcpu, 0700);
	put(vm, "remote_tlb_flush", "42\n");
	put(vm, "halt_poll_success_hist", "1 2 3\n");
	put(vm, "cut", "12abc\n");
	put(vm, "signed", "-5\n");
	put(vm, "wide", "18446744073709551616\n");
	put(vm, "hist_cut", "1 2x 3\n");
	put(vcpu, "exits", "7\n");
	KT_REQUIRE(ks_kvm_debugfs_stats(dir, &v, &n, &err) == 0);
	KT_REQUIRE(n == 1);
	KT_EQ_INT(v[0].pid, 4242);
	KT_REQUIRE((k = ks_kstats_find(&v[0], "remote_tlb_flush", -1)));
	KT_EQ_U64(k->value, 42);
	KT_REQUIRE((k = ks_kstats_find(&v[0], "halt_poll_success_hist", -1)));
	KT_EXPECT(k->type == KS_KSTAT_HIST && k->nbuckets == 3 && k->value == 6);
	KT_REQUIRE((k = ks_kstats_find(&v[0], "exits", 1)));
	KT_EQ_U64(k->value, 7);
	KT_EXPECT(!ks_kstats_find(&v[0], "cut", -1));
	KT_EXPECT(!ks_kstats_find(&v[0], "signed", -1));
	KT_EXPECT(!ks_kstats_find(&v[0], "wide", -1));
	KT_EXPECT(!ks_kstats_find(&v[0], "hist_cut", -1));
	ks_kstats_free(&v[0]);
	free(v);
}

/* A connection through libvirt.so.0 to its in-process test driver: its
 * domain "test" runs, without KVM statistics (the test driver has none);
 * a daemon that is not there is one line naming the URI. */
static void t_libvirt_connection(void)
{
	struct ks_libvirt *lv;
	struct ks_error err = { 0 };
	struct ks_kstats *d;
	size_t n, i;

	if (!ks_libvirt_installed(&err)) {
		kt_skip("%s", err.msg);
		return;
	}
	KT_REQUIRE(ks_libvirt_open(&lv, "test:///default", &err) == 0);
	KT_EQ_STR(ks_libvirt_uri(lv), "test:///default");
	KT_REQUIRE(ks_libvirt_stats(lv, &d, &n, &err) == 0);
	KT_EQ_U64(n, 1);
	if (n == 1) {
		KT_EQ_STR(d[0].name, "test");
		KT_EQ_STR(d[0].source, "libvirt");
		KT_EXPECT(d[0].n == 0 && d[0].pid == -1);
	}
	for (i = 0; i < n; i++)
		ks_kstats_free(&d[i]);
	free(d);
	ks_libvirt_close(lv);

	KT_EQ_INT(ks_libvirt_open(&lv, "qemu+unix:///system?socket=/nonexistent/sock", &err), -1);
	KT_EXPECT(!lv);
	KT_EXPECT(!strncmp(err.msg, "libvirt qemu+unix:///system?socket=/nonexistent/sock: ", 54));
	KT_EXPECT(strstr(err.msg, "/nonexistent/sock") && !strchr(err.msg, '\n'));
}

/* The index of ks_kstats_find() and _first_vcpu()/_next_vcpu() against a
 * linear search, entries appended after lookups included. */
static void t_index(void)
{
	struct ks_kstats s = { 0 };
	char name[32];
	int i, c, n;

	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		KT_REQUIRE(ks_kstats_add(&s, name, -1));
	}
	for (c = 0; c < 4; c++)
		for (i = 0; i < 300; i += 3) {
			snprintf(name, sizeof(name), "s%d", i);
			KT_REQUIRE(ks_kstats_add(&s, name, c));
		}
	for (i = 0; i < 300; i++) {
		const struct ks_kstat *k, *f;

		snprintf(name, sizeof(name), "s%d", i);
		f = ks_kstats_find(&s, name, -1);
		KT_REQUIRE(f && f == &s.v[i]);
		k = ks_kstats_find(&s, name, 2);
		KT_EXPECT(i % 3 ? !k : k && k->vcpu == 2 && !strcmp(k->name, name));
		for (n = 0, k = ks_kstats_first_vcpu(&s, name); k; k = ks_kstats_next_vcpu(&s, k), n++)
			KT_EXPECT(k->vcpu == n && !strcmp(k->name, name));
		KT_EQ_INT(n, i % 3 ? 0 : 4);
	}
	/* appended after the index was built */
	KT_REQUIRE(ks_kstats_add(&s, "s0", 9));
	KT_REQUIRE(ks_kstats_add(&s, "late", -1));
	KT_EXPECT(ks_kstats_find(&s, "late", -1) == &s.v[s.n - 1]);
	{
		const struct ks_kstat *k = ks_kstats_first_vcpu(&s, "s0");

		for (n = 0; k && k->vcpu != 9; k = ks_kstats_next_vcpu(&s, k))
			n++;
		KT_EQ_INT(n, 4);
		KT_EXPECT(k && k == &s.v[s.n - 2]);
	}
	KT_EXPECT(!ks_kstats_find(&s, "absent", -1));
	ks_kstats_free(&s);
	KT_EXPECT(!s.index);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_replies), KT_CASE(t_broken), KT_CASE(t_session), KT_CASE(t_session_broken),
		KT_CASE(t_libvirt_params), KT_CASE(t_libvirt_connection), KT_CASE(t_index),
		KT_CASE(t_debugfs),
		{ 0 },
	};
	return kt_main(cases);
}
