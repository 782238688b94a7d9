/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * timesync.c - guest clock -> host clock, per vCPU (see timesync.h).
 *
 * Used by `kvmscope merge` and `kvmscope timeline` to put guest events on
 * the host's time line.  One struct ks_timesync per guest: either a copy of
 * the guest trace.dat's TimeShift samples, or per-vCPU piecewise-constant
 * TSC offsets built from the host's kvm_write_tsc_offset events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/limits.h"
#include "kvmscope/timesync.h"

struct vcpu_sync {
	/* TimeShift */
	struct ks_source_tsync_sample *samples;
	uint32_t nr_samples;
	/* TSC offsets */
	struct ks_timesync_offset *pieces;
	uint32_t nr_pieces, cap_pieces;
};

struct ks_timesync {
	enum ks_timesync_kind kind;
	bool interpolate;
	uint32_t nr_vcpus;
	struct vcpu_sync *vcpus;
	uint64_t nr_offset_events;
};

struct ks_timesync *ks_timesync_new(void)
{
	return calloc(1, sizeof(struct ks_timesync));
}

void ks_timesync_free(struct ks_timesync *ts)
{
	uint32_t i;

	if (!ts)
		return;
	for (i = 0; i < ts->nr_vcpus; i++) {
		free(ts->vcpus[i].samples);
		free(ts->vcpus[i].pieces);
	}
	free(ts->vcpus);
	free(ts);
}

enum ks_timesync_kind ks_timesync_kind(const struct ks_timesync *ts)
{
	return ts ? ts->kind : KS_TSYNC_NONE;
}

uint64_t ks_timesync_nr_offset_events(const struct ks_timesync *ts)
{
	return ts ? ts->nr_offset_events : 0;
}

bool ks_timesync_interpolates(const struct ks_timesync *ts)
{
	return ts && ts->interpolate;
}

uint32_t ks_timesync_nr_vcpus(const struct ks_timesync *ts)
{
	return ts ? ts->nr_vcpus : 0;
}

uint32_t ks_timesync_samples(const struct ks_timesync *ts, uint32_t vcpu,
			     const struct ks_source_tsync_sample **out)
{
	*out = NULL;
	if (!ts || vcpu >= ts->nr_vcpus)
		return 0;
	*out = ts->vcpus[vcpu].samples;
	return ts->vcpus[vcpu].nr_samples;
}

uint32_t ks_timesync_offsets(const struct ks_timesync *ts, uint32_t vcpu,
			     const struct ks_timesync_offset **out)
{
	*out = NULL;
	if (!ts || vcpu >= ts->nr_vcpus)
		return 0;
	*out = ts->vcpus[vcpu].pieces;
	return ts->vcpus[vcpu].nr_pieces;
}

static struct vcpu_sync *vcpu_slot(struct ks_timesync *ts, uint32_t vcpu)
{
	if (vcpu >= 4096)
		return NULL;
	if (vcpu >= ts->nr_vcpus) {
		struct vcpu_sync *v = realloc(ts->vcpus, (vcpu + 1) * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + ts->nr_vcpus, 0, (vcpu + 1 - ts->nr_vcpus) * sizeof(*v));
		ts->vcpus = v;
		ts->nr_vcpus = vcpu + 1;
	}
	return &ts->vcpus[vcpu];
}

/* ------------------------------------------------------------------ */
/* TimeShift */

int ks_timesync_use_timeshift(struct ks_timesync *ts, const struct ks_source_timeshift *tsh,
			      struct ks_error *err)
{
	uint32_t c;

	if (!tsh)
		return ks_error_set(err, "the guest trace has no TimeShift option");
	for (c = 0; c < tsh->nr_cpus; c++) {
		const struct ks_source_tsync_cpu *tc = &tsh->cpus[c];
		struct vcpu_sync *v = vcpu_slot(ts, c);

		if (!v)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		free(v->samples);
		v->samples = malloc((tc->nr_samples ? tc->nr_samples : 1) * sizeof(*v->samples));
		if (!v->samples)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		memcpy(v->samples, tc->samples, tc->nr_samples * sizeof(*v->samples));
		v->nr_samples = tc->nr_samples;
	}
	ts->kind = KS_TSYNC_TIMESHIFT;
	ts->interpolate = (tsh->flags & 1) != 0;
	return 0;
}

static bool unscaled(const struct ks_source_tsync_sample *s)
{
	return (s->scaling == 1 && s->fraction == 0) ||
	       (s->fraction < 64 && s->scaling == (1ull << s->fraction));
}

uint64_t ks_timesync_scaled_inverse(uint64_t guest, int64_t offset, uint64_t ratio,
				    uint64_t frac)
{
	unsigned __int128 scaled;
	uint64_t g = guest + (uint64_t)offset; /* guest - tsc_offset */

	if (ratio == 0 || frac >= 64)
		return g;
	scaled = (unsigned __int128)g << frac;
	scaled = (scaled + ratio - 1) / ratio; /* smallest h: (h * ratio) >> frac >= g */
	return (uint64_t)scaled;
}

/* Offset of the pair LO/HI at GUEST, interpolated when asked (rounded to
 * nearest, the way trace-cmd rounds). */
static int64_t pair_offset(const struct ks_source_tsync_sample *lo,
			   const struct ks_source_tsync_sample *hi, bool interpolate,
			   uint64_t guest)
{
	int64_t span, num;

	if (!interpolate || !hi || hi->time == lo->time)
		return lo->offset;
	span = (int64_t)(hi->time - lo->time);
	num = ((int64_t)guest - (int64_t)lo->time) * (hi->offset - lo->offset);
	return lo->offset + (num + span / 2) / span;
}

static uint64_t apply_pair(const struct ks_source_tsync_sample *lo,
			   const struct ks_source_tsync_sample *hi, bool interpolate,
			   uint64_t guest)
{
	int64_t off = pair_offset(lo, hi, interpolate, guest);

	if (unscaled(lo))
		return guest + (uint64_t)off;
	return ks_timesync_scaled_inverse(guest, off, lo->scaling, lo->fraction);
}

uint64_t ks_timesync_timeshift(const struct ks_source_tsync_sample *s, uint32_t n,
			       bool interpolate, uint64_t guest)
{
	uint32_t lo, hi;

	if (n == 0)
		return guest;
	if (n == 1)
		return apply_pair(&s[0], NULL, false, guest);
	if (guest <= s[0].time)
		return apply_pair(&s[0], &s[1], interpolate, guest);
	if (guest >= s[n - 1].time)
		return apply_pair(&s[n - 2], &s[n - 1], interpolate, guest);
	lo = 0;
	hi = n - 1;
	while (hi - lo > 1) { /* keep s[lo].time <= guest < s[hi].time */
		uint32_t mid = lo + (hi - lo) / 2;
		if (s[mid].time <= guest)
			lo = mid;
		else
			hi = mid;
	}
	return apply_pair(&s[lo], &s[lo + 1], interpolate, guest);
}

/* ------------------------------------------------------------------ */
/* kvm_write_tsc_offset */

static int push_piece(struct vcpu_sync *v, uint64_t start, uint64_t offset)
{
	if (v->nr_pieces == v->cap_pieces) {
		uint32_t cap = v->cap_pieces ? v->cap_pieces * 2 : 4;
		struct ks_timesync_offset *p = realloc(v->pieces, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		v->pieces = p;
		v->cap_pieces = cap;
	}
	v->pieces[v->nr_pieces].start = start;
	v->pieces[v->nr_pieces].offset = offset;
	v->nr_pieces++;
	return 0;
}

int ks_timesync_add_tsc_offset(struct ks_timesync *ts, uint32_t vcpu, uint64_t host_raw,
			       uint64_t previous, uint64_t next)
{
	struct vcpu_sync *v = vcpu_slot(ts, vcpu);

	if (!v)
		return -ENOMEM;
	if (v->nr_pieces == 0 && push_piece(v, 0, previous) < 0)
		return -ENOMEM;
	if (push_piece(v, host_raw, next) < 0)
		return -ENOMEM;
	ts->kind = KS_TSYNC_TSC_OFFSET;
	ts->nr_offset_events++;
	return 0;
}

int ks_timesync_set_fixed_offset(struct ks_timesync *ts, uint32_t vcpu, uint64_t offset)
{
	struct vcpu_sync *v = vcpu_slot(ts, vcpu);

	if (!v)
		return -ENOMEM;
	v->nr_pieces = 0;
	if (push_piece(v, 0, offset) < 0)
		return -ENOMEM;
	ts->kind = KS_TSYNC_TSC_OFFSET;
	return 0;
}

/* guest - offset, the offset read as signed (the kernel's s64); false when
 * that is no valid host time (before 0). */
static bool host_of(uint64_t guest, uint64_t offset, uint64_t *host)
{
	__int128 h = (__int128)guest - (__int128)(int64_t)offset;

	if (h < 0 || h > (__int128)UINT64_MAX)
		return false;
	*host = (uint64_t)h;
	return true;
}

/* The piece whose host interval holds guest - offset; scanning from the
 * newest piece, as offsets only change a few times per vCPU.  When the
 * offset went down (the guest TSC was set back) a guest value can fit two
 * pieces: the newer one wins. */
static uint64_t offset_to_host(const struct vcpu_sync *v, uint64_t guest)
{
	uint32_t i = v->nr_pieces;
	uint64_t host;

	while (i-- > 0) {
		bool before_next;
		if (!host_of(guest, v->pieces[i].offset, &host))
			continue;
		before_next = i + 1 == v->nr_pieces || host < v->pieces[i + 1].start;
		if (host >= v->pieces[i].start && before_next)
			return host;
	}
	/* no piece fits (the offset jumped over this time): the oldest one */
	return guest - v->pieces[0].offset;
}

uint64_t ks_timesync_to_host(const struct ks_timesync *ts, uint32_t vcpu, uint64_t guest_raw)
{
	const struct vcpu_sync *v;

	if (!ts || ts->kind == KS_TSYNC_NONE)
		return guest_raw;
	if (vcpu >= ts->nr_vcpus) {
		/* trace-cmd leaves CPUs without samples alone; for TSC offsets
		 * vCPU 0's offset is the best guess (KVM keeps them equal). */
		if (ts->kind == KS_TSYNC_TIMESHIFT || ts->nr_vcpus == 0)
			return guest_raw;
		vcpu = 0;
	}
	v = &ts->vcpus[vcpu];
	if (ts->kind == KS_TSYNC_TIMESHIFT)
		return ks_timesync_timeshift(v->samples, v->nr_samples, ts->interpolate, guest_raw);
	if (v->nr_pieces == 0) {
		if (ts->vcpus[0].nr_pieces == 0)
			return guest_raw;
		v = &ts->vcpus[0];
	}
	return offset_to_host(v, guest_raw);
}

/* ------------------------------------------------------------------ */

uint64_t ks_timesync_tsc2nsec(const struct ks_source_clock *clock, uint64_t raw)
{
	uint64_t ns = raw;

	if (!clock)
		return raw;
	if (clock->has_tsc2nsec && clock->tsc_mult)
		ns = (uint64_t)(((unsigned __int128)raw * clock->tsc_mult) >> clock->tsc_shift);
	return ns + (uint64_t)clock->ts_offset;
}

int ks_timesync_parse_offset_arg(const char *arg, uint32_t *vcpu, uint64_t *offset)
{
	uint64_t v;
	int64_t neg;
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return -1;
	if (ks_parse_u64(arg, (size_t)(eq - arg), 10, &v) < 0 || v >= 4096)
		return -1;
	if (eq[1] == '-' ? ks_parse_i64(eq + 1, strlen(eq + 1), 0, &neg) < 0
			 : ks_parse_u64(eq + 1, strlen(eq + 1), 0, offset) < 0)
		return -1;
	if (eq[1] == '-')
		*offset = (uint64_t)neg;
	*vcpu = (uint32_t)v;
	return 0;
}
