/*
 * test_kvmstats.c - the QMP query-stats reply parser (src/input/kvmstats.c)
 * on replies in QEMU 7.2's exact form, and on broken ones: every mistake is
 * one error naming the reply and the offset, never a crash or a value.
 */
#include <stdio.h>
#include <string.h>

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

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_replies), KT_CASE(t_broken), { 0 },
	};
	return kt_main(cases);
}
