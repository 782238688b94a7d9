/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_timesync.c - guest -> host time mapping (timesync.c).
 *
 * Oracles:
 *  - the trace.dat reader's record timestamps of hip24/guest-tsync, which
 *    match trace-cmd 3.2's report byte for byte (tests/cli/dump_test.sh):
 *    our TimeShift conversion of raw_ts + the guest's TSC2NSEC must give the
 *    same value for every record; the host file's raw_ts + TSC2NSEC likewise;
 *  - the kernel's relation guest = ((host * ratio) >> frac) + tsc_offset,
 *    evaluated here directly: the scaled inverse must undo it;
 *  - piecewise offsets: guest values built from known host times with the
 *    offset in force at that time must map back to those host times.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/ktest.h"
#include "kvmscope/source.h"
#include "kvmscope/timesync.h"
#include "kvmscope/tracedat.h"

static void t_timeshift_matches_reader(void)
{
	const char *path = kt_shared("data/hip24/guest-tsync.trace.dat");
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	struct ks_timesync *ts;
	const struct ks_source_clock *clock;
	uint64_t n = 0, bad = 0;
	int r;

	if (!path) {
		kt_skip("data/hip24/guest-tsync.trace.dat is absent");
		return;
	}
	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	clock = ks_source_clock(src);
	KT_REQUIRE(ks_source_timeshift(src) != NULL);
	ts = ks_timesync_new();
	KT_REQUIRE(ks_timesync_use_timeshift(ts, ks_source_timeshift(src), &err) == 0);
	KT_EQ_INT(ks_timesync_kind(ts), KS_TSYNC_TIMESHIFT);
	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		uint64_t host = ks_timesync_to_host(ts, (uint32_t)rec.cpu, rec.raw_ts);
		if (ks_timesync_tsc2nsec(clock, host) != rec.ts && bad++ == 0)
			kt_fail(__FILE__, __LINE__, "record %llu: %llu != reader %llu",
				(unsigned long long)n, (unsigned long long)ks_timesync_tsc2nsec(clock, host),
				(unsigned long long)rec.ts);
		n++;
	}
	KT_EQ_INT(r, 0);
	KT_EXPECT(n > 90000);
	KT_EQ_U64(bad, 0);
	ks_timesync_free(ts);
	ks_source_close(src);
}

static void t_tsc2nsec_matches_reader(void)
{
	const char *path = kt_shared("data/hip24/host-tsync.trace.dat");
	struct ks_source *src;
	struct ks_record rec;
	struct ks_error err;
	uint64_t bad = 0, n = 0;

	if (!path) {
		kt_skip("data/hip24/host-tsync.trace.dat is absent");
		return;
	}
	KT_REQUIRE(ks_source_open(&src, path, &err) == 0);
	while (ks_source_next(src, &rec, &err) > 0) {
		bad += ks_timesync_tsc2nsec(ks_source_clock(src), rec.raw_ts) != rec.ts;
		n++;
	}
	KT_EXPECT(n > 10000);
	KT_EQ_U64(bad, 0);
	ks_source_close(src);
}

/* the kernel: guest = ((host * ratio) >> frac) + tsc_offset */
static uint64_t kernel_guest(uint64_t host, uint64_t ratio, uint64_t frac, uint64_t tsc_offset)
{
	return (uint64_t)(((unsigned __int128)host * ratio) >> frac) + tsc_offset;
}

static void t_scaled_inverse(void)
{
	/* guest faster (ratio > 1.0, injective: exact round trip) and slower
	 * (ratio < 1.0: the smallest host value giving that guest value) */
	const uint64_t frac = 48, ratios[] = { (1ull << 48) * 3 / 2, (1ull << 48) / 3 * 2,
						 (1ull << 48) + 12345 };
	const uint64_t tsc_offset = (uint64_t)-123456789012ll;
	uint64_t host = 987654321ull, i, k;

	for (k = 0; k < 3; k++) {
		uint64_t bad = 0;
		for (i = 0; i < 20000; i++, host += 7919 * i) {
			uint64_t g = kernel_guest(host, ratios[k], frac, tsc_offset);
			/* TimeShift stores offset = -tsc_offset */
			uint64_t h = ks_timesync_scaled_inverse(g, -(int64_t)tsc_offset, ratios[k], frac);
			if (kernel_guest(h, ratios[k], frac, tsc_offset) != g)
				bad++;
			else if (h > host || (h > 0 && kernel_guest(h - 1, ratios[k], frac, tsc_offset) == g))
				bad++;
			else if (ratios[k] >= (1ull << frac) && h != host)
				bad++;
		}
		KT_EQ_U64(bad, 0);
	}
}

static void t_unscaled_equals_trace_cmd_formula(void)
{
	/* scaling 1: host = guest + offset, offsets interpolated and rounded */
	struct ks_source_tsync_sample s[3] = {
		{ .time = 1000, .offset = -500, .scaling = 1, .fraction = 0 },
		{ .time = 2000, .offset = -300, .scaling = 1, .fraction = 0 },
		{ .time = 4000, .offset = -301, .scaling = 1, .fraction = 0 },
	};

	KT_EQ_U64(ks_timesync_timeshift(s, 3, false, 1500), 1000);
	KT_EQ_U64(ks_timesync_timeshift(s, 3, true, 1500), 1500 - 400);
	KT_EQ_U64(ks_timesync_timeshift(s, 3, true, 1000), 500);
	KT_EQ_U64(ks_timesync_timeshift(s, 3, false, 3000), 2700);
	KT_EQ_U64(ks_timesync_timeshift(s, 3, false, 9000), 8700);
	KT_EQ_U64(ks_timesync_timeshift(s, 1, true, 9000), 8500);
	KT_EQ_U64(ks_timesync_timeshift(s, 0, true, 9000), 9000);
}

static void t_tsc_offset_pieces(void)
{
	struct ks_timesync *ts = ks_timesync_new();
	/* vCPU 0: offset A until host 6e6, then B (a guest TSC write at 6e6,
	 * forwards); offsets as the kernel has them: guest booted later, so
	 * negative (two's complement) */
	const uint64_t A = (uint64_t)-5000000ll, B = (uint64_t)-3000000ll;
	uint64_t host;

	KT_REQUIRE(ts);
	KT_EQ_INT(ks_timesync_add_tsc_offset(ts, 0, 6000000, A, B), 0);
	KT_EQ_U64(ks_timesync_nr_offset_events(ts), 1);
	for (host = 5000010; host < 9000000; host += 99991) {
		uint64_t off = host < 6000000 ? A : B;
		KT_EQ_U64(ks_timesync_to_host(ts, 0, host + off), host);
	}
	/* vCPU 1 has no events: vCPU 0's offsets apply */
	KT_EQ_U64(ks_timesync_to_host(ts, 1, 7000000 + B), 7000000);
	/* positive offsets (guest ahead) work the same way */
	KT_EQ_INT(ks_timesync_set_fixed_offset(ts, 2, 1000), 0);
	KT_EQ_U64(ks_timesync_to_host(ts, 2, 1500), 500);
	/* a fixed offset wins for its vCPU */
	KT_EQ_INT(ks_timesync_set_fixed_offset(ts, 1, 77), 0);
	KT_EQ_U64(ks_timesync_to_host(ts, 1, 1077), 1000);
	ks_timesync_free(ts);
}

static void t_parse_offset_arg(void)
{
	uint32_t v;
	uint64_t off;

	KT_EQ_INT(ks_timesync_parse_offset_arg("2=0x10", &v, &off), 0);
	KT_EQ_U64(v, 2);
	KT_EQ_U64(off, 16);
	KT_EQ_INT(ks_timesync_parse_offset_arg("0=-5", &v, &off), 0);
	KT_EQ_U64(off, (uint64_t)-5ll);
	KT_EQ_INT(ks_timesync_parse_offset_arg("x=5", &v, &off), -1);
	KT_EQ_INT(ks_timesync_parse_offset_arg("1=", &v, &off), -1);
	KT_EQ_INT(ks_timesync_parse_offset_arg("1=5z", &v, &off), -1);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_timeshift_matches_reader),
		KT_CASE(t_tsc2nsec_matches_reader),
		KT_CASE(t_scaled_inverse),
		KT_CASE(t_unscaled_equals_trace_cmd_formula),
		KT_CASE(t_tsc_offset_pieces),
		KT_CASE(t_parse_offset_arg),
		{ 0 },
	};
	return kt_main(cases);
}
