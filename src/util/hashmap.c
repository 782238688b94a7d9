/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hashmap.c - the library's one hash table.  See hashmap.h.
 *
 * Why it always terminates: put() grows the table before the insertion
 * would make it more than half full, so at least half the slots are empty
 * and a probe (which stops at the key or at an empty slot) ends within cap
 * steps.  Why probes stay short even for crafted keys: a probe longer than
 * KS_HMAP_PROBE_MAX rehashes the table once per size with the next seed,
 * which scatters a set of keys made to share a home under the old one.
 */
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

#define MIN_CAP 8

/* The seed sequence: fixed, so that a run is reproducible. */
static uint64_t seed_of(unsigned n)
{
	return n ? ks_hmap_hash(0x9e3779b97f4a7c15ull * n, 0x2545f4914f6cdd1dull) : 0;
}

static unsigned log2_of(size_t cap)
{
	unsigned b = 0;

	while (((size_t)1 << b) < cap)
		b++;
	return b;
}

void ks_hmap_init_wide(struct ks_hmap *m, size_t key_words, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->kwords = key_words ? key_words : 1;
	m->vsize = vsize;
	m->stride = m->kwords * sizeof(uint64_t) + ((vsize + 7) & ~(size_t)7);
}

void ks_hmap_init(struct ks_hmap *m, size_t vsize)
{
	ks_hmap_init_wide(m, 1, vsize);
}

void ks_hmap_free(struct ks_hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
	m->has_spare = false;
}

static size_t home_of(const struct ks_hmap *m, uint64_t key)
{
	return (size_t)(ks_hmap_hash(key, m->seed) >> m->shift);
}

/* Wide keys: K words compared whole; the all-KS_HMAP_EMPTY key marks an
 * empty slot (and is itself kept in the spare slot).  Each function on
 * them is written once for a KW given (always inlined), and the public
 * one calls it with KW a constant for the usual widths (WITH_KW), so that
 * the hash and the comparisons are unrolled. */
#define WITH_KW(m, call)                                  \
	switch ((m)->kwords) {                            \
	case 1: return call(1);                           \
	case 2: return call(2);                           \
	case 3: return call(3);                           \
	case 4: return call(4);                           \
	default: return call((m)->kwords);                \
	}

KS_HMAP_ALWAYS_INLINE size_t home_wide(const struct ks_hmap *m, const uint64_t *key, size_t kw)
{
	return (size_t)(ks_hmap_hash_wide(key, kw, m->seed) >> m->shift);
}

/* Move the table's keys into a fresh array of CAP slots hashed with seed
 * number NSEED.  Returns the longest probe of the reinsertion, or -1 when
 * out of memory (the table is unchanged). */
static long rehash(struct ks_hmap *m, size_t cap, unsigned nseed)
{
	unsigned char *slots;
	size_t i, longest = 0, mask = cap - 1;
	struct ks_hmap n = *m;

	if (cap > (SIZE_MAX / m->stride) - 1)
		return -1;
	slots = malloc((cap + 1) * m->stride);
	if (!slots)
		return -1;
	n.slots = slots;
	n.cap = cap;
	n.shift = 64 - log2_of(cap);
	n.nseed = nseed;
	n.seed = seed_of(nseed);
	/* every key word of every slot, the spare's too (its key is the
	 * marker, which ks_hmap_next_wide hands out) */
	for (i = 0; i <= cap; i++)
		memset(ks_hmap_key_at(&n, i), 0xff, m->kwords * sizeof(uint64_t));
	if (m->has_spare)
		memcpy(ks_hmap_key_at(&n, cap), ks_hmap_key_at(m, m->cap), m->stride);
	for (i = 0; i < m->cap; i++) {
		const uint64_t *k = ks_hmap_key_at(m, i);
		size_t j, p = 1;

		if (*k == KS_HMAP_EMPTY && ks_hmap_is_marker(k, m->kwords))
			continue;
		for (j = home_wide(&n, k, m->kwords); !ks_hmap_is_marker(ks_hmap_key_at(&n, j), m->kwords);
		     j = (j + 1) & mask)
			p++;
		memcpy(ks_hmap_key_at(&n, j), k, m->stride);
		if (p > longest)
			longest = p;
	}
	free(m->slots);
	*m = n;
	return (long)longest;
}

int ks_hmap_reserve(struct ks_hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : MIN_CAP;

	while (n > cap / 2) {
		if (cap > SIZE_MAX / 4)
			return -1;
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	if (rehash(m, cap, m->nseed) < 0)
		return -1;
	m->reseeded = false;
	return 0;
}

void *ks_hmap_put(struct ks_hmap *m, uint64_t key, bool *created)
{
	size_t i, p, mask;
	uint64_t *k;

	if (key == KS_HMAP_EMPTY) {
		if (!m->cap && ks_hmap_reserve(m, 1) < 0)
			return NULL;
		k = ks_hmap_key_at(m, m->cap);
		*created = !m->has_spare;
		if (*created) {
			memset(k + 1, 0, m->stride - sizeof(*k));
			m->has_spare = true;
			m->len++;
		}
		return k + 1;
	}
	/* room first: at most half full after this insertion (the spare
	 * slot is not in the table) */
	if (ks_hmap_reserve(m, m->len - m->has_spare + 1) < 0)
		return NULL;
	for (;;) {
		mask = m->cap - 1;
		for (i = home_of(m, key), p = 1;; i = (i + 1) & mask, p++) {
			k = ks_hmap_key_at(m, i);
			if (*k == key) {
				*created = false;
				return k + 1;
			}
			if (*k == KS_HMAP_EMPTY)
				break;
		}
		if (p <= KS_HMAP_PROBE_MAX || m->reseeded)
			break;
		/* a crafted cluster: the next seed, once at this size (so
		 * rehashing costs at most as much as the growth) */
		if (rehash(m, m->cap, m->nseed + 1) < 0)
			return NULL;
		m->reseeded = true;
	}
	*k = key;
	memset(k + 1, 0, m->stride - sizeof(*k));
	m->len++;
	*created = true;
	return k + 1;
}

bool ks_hmap_del(struct ks_hmap *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;

	if (key == KS_HMAP_EMPTY) {
		if (!m->has_spare)
			return false;
		m->has_spare = false;
		m->len--;
		return true;
	}
	if (!m->cap)
		return false;
	for (i = home_of(m, key);; i = (i + 1) & mask) {
		uint64_t k = *ks_hmap_key_at(m, i);

		if (k == KS_HMAP_EMPTY)
			return false;
		if (k == key)
			break;
	}
	/* backward shift: pull later keys of the run into the hole if their
	 * home does not lie (cyclically) between the hole and them */
	for (j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint64_t k = *ks_hmap_key_at(m, j);
		size_t h;

		if (k == KS_HMAP_EMPTY)
			break;
		h = home_of(m, k);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			memcpy(ks_hmap_key_at(m, i), ks_hmap_key_at(m, j), m->stride);
			i = j;
		}
	}
	*ks_hmap_key_at(m, i) = KS_HMAP_EMPTY;
	m->len--;
	return true;
}

void *ks_hmap_next_wide(const struct ks_hmap *m, size_t *pos, const uint64_t **key)
{
	while (*pos < m->cap) {
		uint64_t *k = ks_hmap_key_at(m, (*pos)++);

		if (*k != KS_HMAP_EMPTY || !ks_hmap_is_marker(k, m->kwords)) {
			*key = k;
			return k + m->kwords;
		}
	}
	if (*pos == m->cap && m->has_spare) {
		(*pos)++;
		*key = ks_hmap_key_at(m, m->cap);
		return ks_hmap_key_at(m, m->cap) + m->kwords;
	}
	return NULL;
}

void *ks_hmap_next(const struct ks_hmap *m, size_t *pos, uint64_t *key)
{
	const uint64_t *k;
	void *v = ks_hmap_next_wide(m, pos, &k);

	if (v)
		*key = k[0];
	return v;
}

size_t ks_hmap_probes(const struct ks_hmap *m, uint64_t key)
{
	size_t i, p, mask = m->cap - 1;

	if (key == KS_HMAP_EMPTY || !m->cap)
		return 1;
	for (i = home_of(m, key), p = 1;; i = (i + 1) & mask, p++) {
		uint64_t k = *ks_hmap_key_at(m, i);

		if (k == key || k == KS_HMAP_EMPTY)
			return p;
	}
}

/* ------------------------------------------------------------------ */
/* keys of m->kwords words: the same algorithms, keys compared whole */

void *ks_hmap_get_wide(const struct ks_hmap *m, const uint64_t *key)
{
#define GET(kw) ks_hmap_get_wide_k(m, key, kw)
	WITH_KW(m, GET)
#undef GET
}

KS_HMAP_ALWAYS_INLINE void *put_wide(struct ks_hmap *m, const uint64_t *key, bool *created,
				     size_t kw)
{
	size_t i, p, mask, kb = kw * sizeof(uint64_t);
	uint64_t *k;

	if (ks_hmap_is_marker(key, kw)) {
		if (!m->cap && ks_hmap_reserve(m, 1) < 0)
			return NULL;
		k = ks_hmap_key_at(m, m->cap);
		*created = !m->has_spare;
		if (*created) {
			memset(k + kw, 0, m->stride - kb);
			m->has_spare = true;
			m->len++;
		}
		return k + kw;
	}
	if (ks_hmap_reserve(m, m->len - m->has_spare + 1) < 0)
		return NULL;
	for (;;) {
		mask = m->cap - 1;
		for (i = home_wide(m, key, kw), p = 1;; i = (i + 1) & mask, p++) {
			k = ks_hmap_key_at(m, i);
			if (ks_hmap_key_eq(k, key, kw)) {
				*created = false;
				return k + kw;
			}
			if (*k == KS_HMAP_EMPTY && ks_hmap_is_marker(k, kw))
				break;
		}
		if (p <= KS_HMAP_PROBE_MAX || m->reseeded)
			break;
		if (rehash(m, m->cap, m->nseed + 1) < 0)
			return NULL;
		m->reseeded = true;
	}
	memcpy(k, key, kb);
	memset(k + kw, 0, m->stride - kb);
	m->len++;
	*created = true;
	return k + kw;
}

void *ks_hmap_put_wide(struct ks_hmap *m, const uint64_t *key, bool *created)
{
#define PUT(kw) put_wide(m, key, created, kw)
	WITH_KW(m, PUT)
#undef PUT
}

KS_HMAP_ALWAYS_INLINE bool del_wide(struct ks_hmap *m, const uint64_t *key, size_t kw)
{
	size_t i, j, mask = m->cap - 1;

	if (ks_hmap_is_marker(key, kw)) {
		if (!m->has_spare)
			return false;
		m->has_spare = false;
		m->len--;
		return true;
	}
	if (!m->cap)
		return false;
	for (i = home_wide(m, key, kw);; i = (i + 1) & mask) {
		const uint64_t *k = ks_hmap_key_at(m, i);

		if (ks_hmap_key_eq(k, key, kw))
			break;
		if (*k == KS_HMAP_EMPTY && ks_hmap_is_marker(k, kw))
			return false;
	}
	/* backward shift, as in ks_hmap_del */
	for (j = (i + 1) & mask;; j = (j + 1) & mask) {
		const uint64_t *k = ks_hmap_key_at(m, j);
		size_t h;

		if (*k == KS_HMAP_EMPTY && ks_hmap_is_marker(k, kw))
			break;
		h = home_wide(m, k, kw);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			memcpy(ks_hmap_key_at(m, i), k, m->stride);
			i = j;
		}
	}
	memset(ks_hmap_key_at(m, i), 0xff, kw * sizeof(uint64_t));
	m->len--;
	return true;
}

bool ks_hmap_del_wide(struct ks_hmap *m, const uint64_t *key)
{
#define DEL(kw) del_wide(m, key, kw)
	WITH_KW(m, DEL)
#undef DEL
}

size_t ks_hmap_probes_wide(const struct ks_hmap *m, const uint64_t *key)
{
	size_t i, p, kw = m->kwords, mask = m->cap - 1;

	if (ks_hmap_is_marker(key, kw) || !m->cap)
		return 1;
	for (i = home_wide(m, key, kw), p = 1;; i = (i + 1) & mask, p++) {
		const uint64_t *k = ks_hmap_key_at(m, i);

		if (ks_hmap_key_eq(k, key, kw) || (*k == KS_HMAP_EMPTY && ks_hmap_is_marker(k, kw)))
			return p;
	}
}
