/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_decode.c - decoding records off the fast path: the walk of a
 * sample with variable-size fields (READ, CALLCHAIN, BRANCH_STACK, regs,
 * stacks...), the sample_id_all trailer of other records, and COMM,
 * FORK/EXIT and LOST records.  Fixed-layout samples are decoded inline
 * where they are delivered (perfdata_next.c).
 */
#include <stdlib.h>

#include "perfdata_impl.h"

/* Walk the sample_id_all trailer that ends at END. */
void pd_parse_trailer(struct pd_source *s, const struct pd_attr *a, const uint8_t *end,
			  struct ks_record *r)
{
	uint64_t t = a->sample_type;
	const uint8_t *p = end - a->trailer_size;

	if (t & S_TID) {
		r->pid = (int32_t)rd32(s, p);
		r->tid = (int32_t)rd32(s, p + 4);
		p += 8;
	}
	if (t & S_TIME) {
		r->ts = r->raw_ts = rd64(s, p);
		p += 8;
	}
	if (t & S_ID) {
		r->id = rd64(s, p);
		p += 8;
	}
	if (t & S_STREAM_ID)
		p += 8;
	if (t & S_CPU)
		r->cpu = (int32_t)rd32(s, p);
}

int pd_short_sample(struct pd_source *s, uint64_t off, const char *what, struct ks_error *err)
{
	return ks_error_at(err, s->base.path, off,
			   "sample shorter than its sample_type needs (at %s)", what);
}

static int skip_read(struct pd_source *s, const struct pd_attr *a, const uint8_t **pp,
		     const uint8_t *end, uint64_t off, struct ks_error *err)
{
	const uint8_t *p = *pp;
	uint64_t nr, each = a->read_each, times = a->read_times;

	if (a->read_format & F_GROUP) {
		NEED(8, "READ");
		nr = rd64(s, p);
		p += 8;
		NEED(8 * times, "READ");
		p += 8 * times;
		if (nr > (uint64_t)(end - p) / (8 * each))
			return pd_short_sample(s, off, "READ", err);
		p += 8 * each * nr;
	} else {
		NEED(8 * (times + each), "READ");
		p += 8 * (times + each);
	}
	*pp = p;
	return 0;
}

static int take_callchain(struct pd_source *s, const uint8_t **pp, const uint8_t *end,
			  uint64_t off, struct ks_record *r, struct ks_error *err)
{
	const uint8_t *p = *pp;
	uint64_t nr, i;

	NEED(8, "CALLCHAIN");
	nr = rd64(s, p);
	p += 8;
	if (nr > (uint64_t)(end - p) / 8)
		return pd_short_sample(s, off, "CALLCHAIN", err);
	r->nr_callchain = (uint32_t)nr;
	if (!s->swap && !((uintptr_t)p & 7)) {
		r->callchain = (const uint64_t *)(const void *)p;
	} else if (nr) {
		if (nr > s->chain_cap) {
			uint64_t *c = realloc(s->chain, nr * sizeof(*c));

			if (!c)
				return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
			s->chain = c;
			s->chain_cap = nr;
		}
		for (i = 0; i < nr; i++)
			s->chain[i] = rd64(s, p + 8 * i);
		r->callchain = s->chain;
	}
	*pp = p + 8 * nr;
	return 0;
}

/* Skip { u64 size; char data[size]; } (AUX) or the STACK_USER variant. */
static int skip_sized(struct pd_source *s, const uint8_t **pp, const uint8_t *end, uint64_t off,
		      bool dyn_size, const char *what, struct ks_error *err)
{
	const uint8_t *p = *pp;
	uint64_t size;

	NEED(8, what);
	size = rd64(s, p);
	p += 8;
	NEED(size, what);
	p += size;
	if (dyn_size && size) {
		NEED(8, what);
		p += 8;
	}
	*pp = p;
	return 0;
}

static int skip_regs(struct pd_source *s, const uint8_t **pp, const uint8_t *end, uint64_t off,
		     uint32_t nregs, const char *what, struct ks_error *err)
{
	const uint8_t *p = *pp;
	uint64_t abi;

	NEED(8, what);
	abi = rd64(s, p);
	p += 8;
	if (abi) {
		NEED(8ull * nregs, what);
		p += 8ull * nregs;
	}
	*pp = p;
	return 0;
}

static int skip_branch(struct pd_source *s, const struct pd_attr *a, const uint8_t **pp,
		       const uint8_t *end, uint64_t off, struct ks_error *err)
{
	const uint8_t *p = *pp;
	uint64_t nr;

	NEED(8, "BRANCH_STACK");
	nr = rd64(s, p);
	p += 8;
	if (a->branch_sample_type & BRANCH_HW_INDEX) {
		NEED(8, "BRANCH_STACK");
		p += 8;
	}
	if (nr > (uint64_t)(end - p) / 24)
		return pd_short_sample(s, off, "BRANCH_STACK", err);
	*pp = p + 24 * nr;
	return 0;
}

/* The variable part after PERIOD, in the documented order. */
int pd_sample_variable(struct pd_source *s, const struct pd_attr *a, const uint8_t *p,
			   const uint8_t *end, uint64_t off, struct ks_record *r,
			   struct ks_error *err)
{
	uint64_t t = a->sample_type;
	uint32_t size;

	if ((t & S_READ) && skip_read(s, a, &p, end, off, err) < 0)
		return -1;
	if ((t & S_CALLCHAIN) && take_callchain(s, &p, end, off, r, err) < 0)
		return -1;
	if (t & S_RAW) {
		NEED(4, "RAW");
		size = rd32(s, p);
		p += 4;
		NEED(size, "RAW");
		r->data = p;
		r->size = size;
		p += size;
	}
	if ((t & S_BRANCH_STACK) && skip_branch(s, a, &p, end, off, err) < 0)
		return -1;
	if ((t & S_REGS_USER) && skip_regs(s, &p, end, off, a->nregs_user, "REGS_USER", err) < 0)
		return -1;
	if ((t & S_STACK_USER) && skip_sized(s, &p, end, off, true, "STACK_USER", err) < 0)
		return -1;
	if (t & (S_WEIGHT | S_WEIGHT_STRUCT)) {
		NEED(8, "WEIGHT");
		p += 8;
	}
	if (t & S_DATA_SRC) {
		NEED(8, "DATA_SRC");
		p += 8;
	}
	if (t & S_TRANSACTION) {
		NEED(8, "TRANSACTION");
		p += 8;
	}
	if ((t & S_REGS_INTR) && skip_regs(s, &p, end, off, a->nregs_intr, "REGS_INTR", err) < 0)
		return -1;
	NEED(a->tail_fixed, "PHYS_ADDR..CODE_PAGE_SIZE");
	p += a->tail_fixed;
	if ((t & S_AUX) && skip_sized(s, &p, end, off, false, "AUX", err) < 0)
		return -1;
	return 0;
}

void pd_decode_comm(struct pd_source *s, const uint8_t *rec, const uint8_t *end,
			struct ks_record *r)
{
	const uint8_t *name = rec + 16;
	size_t max = end > name ? (size_t)(end - name) : 0;

	r->type = KS_REC_COMM;
	r->pid = (int32_t)rd32(s, rec + 8);
	r->tid = (int32_t)rd32(s, rec + 12);
	if (memchr(name, 0, max)) {
		r->comm = (const char *)name;
	} else {
		if (max >= sizeof(s->comm))
			max = sizeof(s->comm) - 1;
		memcpy(s->comm, name, max);
		s->comm[max] = 0;
		r->comm = s->comm;
	}
}

void pd_decode_task(struct pd_source *s, uint32_t type, const uint8_t *rec,
			struct ks_record *r)
{
	r->type = type == R_FORK ? KS_REC_FORK : KS_REC_EXIT;
	r->pid = (int32_t)rd32(s, rec + 8);
	r->ppid = (int32_t)rd32(s, rec + 12);
	r->tid = (int32_t)rd32(s, rec + 16);
	r->ptid = (int32_t)rd32(s, rec + 20);
	if (!r->ts)
		r->ts = r->raw_ts = rd64(s, rec + 24);
}

void pd_decode_lost(struct pd_source *s, uint64_t lost, struct ks_record *r)
{
	r->type = KS_REC_LOST;
	r->lost = lost;
	s->base.stats.lost_events += lost;
	s->base.stats.lost_records++;
}
