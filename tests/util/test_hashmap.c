/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_hashmap.c - properties of the shared hash table (src/util/hashmap.c)
 * on adversarial key sets: every key inserted is found with its value, the
 * size is right, the table is never more than half full (so every probe
 * ends), and probes stay short even for keys crafted to share one home
 * slot under the table's first seed.  The reference is a plain sorted
 * array of the keys, not the table's code.  The same for wide keys (K
 * 64-bit words): colliding or equal first words, keys differing only in
 * the last word, first words equal to the empty marker, whole keys made
 * to share a home, through the out-of-line functions and the inlined ones
 * (ks_hmap_get_wide_k).
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "util/hashmap.h"

/* A probe bound for every key after all insertions: keys crafted to share
 * a home run into a rehash; random keys at half load stay far below. */
#define PROBE_BOUND (2 * KS_HMAP_PROBE_MAX)

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The inverse of X * C mod 2^64 (C odd), by Newton's iteration. */
static uint64_t mul_inverse(uint64_t c)
{
	uint64_t x = c;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

/* The key whose hash under seed 0 is H: murmur3's finaliser run
 * backwards (x ^= x >> 33 is its own inverse). */
static uint64_t unhash(uint64_t h)
{
	h ^= h >> 33;
	h *= mul_inverse(0xc4ceb9fe1a85ec53ull);
	h ^= h >> 33;
	h *= mul_inverse(0xff51afd7ed558ccdull);
	h ^= h >> 33;
	return h;
}

/* The wide hash of a key of KW words under seed 0 (hashmap.h): the
 * finaliser of the words times 2^64 / phi, word I rotated left 21 * I
 * bits, xored. */
#define WIDE_MUL 0x9e3779b97f4a7c15ull

static uint64_t rotl(uint64_t x, unsigned r)
{
	r &= 63;
	return r ? x << r | x >> (64 - r) : x;
}

/* Set KEY[KW - 1] (KW >= 2) so that the key's hash under seed 0 is H:
 * the last word from the others, the steps undone. */
static void craft_last(uint64_t *key, size_t kw, uint64_t h)
{
	uint64_t x = unhash(h);
	size_t i;

	for (i = 0; i < kw - 1; i++)
		x ^= rotl(key[i] * WIDE_MUL, (unsigned)(21 * i));
	key[kw - 1] = rotl(x, 64 - (unsigned)(21 * (kw - 1)) % 64) * mul_inverse(WIDE_MUL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct val {
	uint64_t key_copy;
	uint32_t n;
};

/* Insert KEYS[0..N) (duplicates allowed), check every property, free. */
static void check_set(const char *what, const uint64_t *keys, size_t n, bool with_deletes)
{
	struct ks_hmap m;
	uint64_t *sorted = malloc((n + 1) * sizeof(*sorted));
	size_t i, distinct = 0, longest = 0, seen = 0, pos = 0;
	uint64_t key;
	struct val *v;

	KT_REQUIRE(sorted);
	ks_hmap_init(&m, sizeof(struct val));
	for (i = 0; i < n; i++) {
		bool created;

		v = ks_hmap_put(&m, keys[i], &created);
		KT_REQUIRE(v);
		if (created) {
			KT_EQ_U64(v->key_copy, 0); /* zeroed */
			v->key_copy = keys[i];
		}
		KT_EQ_U64(v->key_copy, keys[i]);
		v->n++;
		/* never full: at most half the table's slots hold keys */
		KT_REQUIRE(ks_hmap_len(&m) - m.has_spare <= m.cap / 2);
	}
	memcpy(sorted, keys, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (i = 0; i < n; i++) {
		size_t same = 1;

		while (i + same < n && sorted[i + same] == sorted[i])
			same++;
		v = ks_hmap_get(&m, sorted[i]);
		if (!v) {
			kt_fail(__FILE__, __LINE__, "%s: key %llx not found", what,
				(unsigned long long)sorted[i]);
			break;
		}
		KT_EQ_U64(v->key_copy, sorted[i]);
		KT_EQ_U64(v->n, same);
		if (ks_hmap_probes(&m, sorted[i]) > longest)
			longest = ks_hmap_probes(&m, sorted[i]);
		distinct++;
		i += same - 1;
	}
	KT_EQ_U64(ks_hmap_len(&m), distinct);
	if (longest > PROBE_BOUND)
		kt_fail(__FILE__, __LINE__, "%s: a probe of %zu slots (bound %d)", what, longest,
			PROBE_BOUND);
	/* iteration visits each key once */
	while ((v = ks_hmap_next(&m, &pos, &key))) {
		KT_EQ_U64(v->key_copy, key);
		seen++;
	}
	KT_EQ_U64(seen, distinct);
	/* an absent key ends its probe too */
	KT_REQUIRE(!ks_hmap_get(&m, 0x1234567890abcdefull) || n);
	if (with_deletes) {
		/* delete every other distinct key; the rest stay found */
		size_t k = 0, left = distinct;

		for (i = 0; i < n; i++) {
			if (i && sorted[i] == sorted[i - 1])
				continue;
			if (k++ % 2 == 0) {
				KT_REQUIRE(ks_hmap_del(&m, sorted[i]));
				KT_REQUIRE(!ks_hmap_del(&m, sorted[i]));
				left--;
			}
		}
		KT_EQ_U64(ks_hmap_len(&m), left);
		for (i = 0, k = 0; i < n; i++) {
			if (i && sorted[i] == sorted[i - 1])
				continue;
			v = ks_hmap_get(&m, sorted[i]);
			if (k++ % 2 == 0)
				KT_REQUIRE(!v);
			else
				KT_REQUIRE(v && v->key_copy == sorted[i]);
		}
	}
	ks_hmap_free(&m);
	free(sorted);
}

#define N 20000

/* All keys share one home slot under seed 0 at every size up to 2^20. */
static void t_one_home(void)
{
	uint64_t *k = malloc(N * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < N; i++)
		k[i] = unhash((0x5a5ull << 44) | i);
	check_set("one home", k, N, true);
	/* and the same for a small set, below the rehash threshold */
	check_set("one home, 40 keys", k, 40, true);
	free(k);
}

/* Keys equal modulo every power of two up to 2^32 (the old tables'
 * masks), and multiples of the golden ratio constant. */
static void t_equal_mod_cap(void)
{
	uint64_t *k = malloc(N * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < N; i++)
		k[i] = (uint64_t)i << 32;
	check_set("equal mod 2^32", k, N, true);
	for (i = 0; i < N; i++)
		k[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
	check_set("golden multiples", k, N, false);
	free(k);
}

static void t_sequential_random_dups(void)
{
	uint64_t *k = malloc(N * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < N; i++)
		k[i] = i;
	check_set("sequential from 0", k, N, true);
	for (i = 0; i < N; i++)
		k[i] = KS_HMAP_EMPTY - i; /* the empty marker and its neighbours */
	check_set("top of the range", k, N, true);
	for (i = 0; i < N; i++)
		k[i] = rnd();
	check_set("random", k, N, true);
	for (i = 0; i < N; i++)
		k[i] = rnd() % 300; /* many duplicates */
	check_set("duplicates", k, N, true);
	/* pointers as stat keys them: 8-byte aligned, close together */
	for (i = 0; i < N; i++)
		k[i] = 0x55d0c0de0000ull + 0x140 * i;
	check_set("pointers", k, N, false);
	free(k);
}

/* Many thousands of entries, interleaved deletes and re-insertions. */
static void t_large_churn(void)
{
	struct ks_hmap m;
	size_t i, n = 300000;
	bool created;

	ks_hmap_init(&m, sizeof(uint32_t));
	for (i = 0; i < n; i++) {
		uint32_t *v = ks_hmap_put(&m, i * 7919, &created);

		KT_REQUIRE(v && created);
		*v = (uint32_t)i;
	}
	KT_EQ_U64(ks_hmap_len(&m), n);
	for (i = 0; i < n; i += 3)
		KT_REQUIRE(ks_hmap_del(&m, i * 7919));
	for (i = 0; i < n; i++) {
		uint32_t *v = ks_hmap_get(&m, i * 7919);

		if (i % 3 == 0)
			KT_REQUIRE(!v);
		else
			KT_REQUIRE(v && *v == i);
	}
	for (i = 0; i < n; i += 3) {
		uint32_t *v = ks_hmap_put(&m, i * 7919, &created);

		KT_REQUIRE(v && created);
		*v = (uint32_t)i;
	}
	for (i = 0; i < n; i++) {
		uint32_t *v = ks_hmap_get(&m, i * 7919);

		KT_REQUIRE(v && *v == i);
	}
	KT_EQ_U64(ks_hmap_len(&m), n);
	KT_REQUIRE(m.cap >= 2 * n && m.cap <= 4 * n);
	ks_hmap_free(&m);
}

/* The same keys in the same order give the same iteration order (the
 * seeds are a fixed sequence), which output may depend on. */
static void t_reproducible(void)
{
	struct ks_hmap a, b;
	size_t i, pa = 0, pb = 0;
	uint64_t ka, kb;
	bool c;

	ks_hmap_init(&a, 8);
	ks_hmap_init(&b, 8);
	for (i = 0; i < 5000; i++) {
		uint64_t k = unhash((7ull << 50) | i);

		KT_REQUIRE(ks_hmap_put(&a, k, &c) && ks_hmap_put(&b, k, &c));
	}
	while (ks_hmap_next(&a, &pa, &ka)) {
		KT_REQUIRE(ks_hmap_next(&b, &pb, &kb));
		KT_EQ_U64(ka, kb);
	}
	KT_REQUIRE(!ks_hmap_next(&b, &pb, &kb));
	ks_hmap_free(&a);
	ks_hmap_free(&b);
}


/* ------------------------------------------------------------------ */
/* wide keys */

static size_t cmp_kw; /* words per key, for cmp_wide */

static int cmp_wide(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	size_t i;

	for (i = 0; i < cmp_kw; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

struct wval {
	uint64_t first, last; /* copies of the key's first and last words */
	uint32_t n;
};

/* ks_hmap_get_wide_k as callers use it, KW a constant (unrolled). */
static void *get_inline(const struct ks_hmap *m, const uint64_t *key, size_t kw)
{
	switch (kw) {
	case 2: return ks_hmap_get_wide_k(m, key, 2);
	case 3: return ks_hmap_get_wide_k(m, key, 3);
	case 4: return ks_hmap_get_wide_k(m, key, 4);
	default: return ks_hmap_get_wide_k(m, key, kw);
	}
}

/* Insert the N keys of KW words at KEYS (duplicates allowed), check the
 * properties of check_set, delete every other key, free. */
static void check_wide(const char *what, size_t kw, const uint64_t *keys, size_t n)
{
	struct ks_hmap m;
	uint64_t *sorted = malloc((n + 1) * kw * sizeof(*sorted));
	size_t i, distinct = 0, longest = 0, seen = 0, pos = 0, k, left;
	const uint64_t *key;
	struct wval *v;

	KT_REQUIRE(sorted);
	ks_hmap_init_wide(&m, kw, sizeof(struct wval));
	for (i = 0; i < n; i++) {
		const uint64_t *ki = keys + i * kw;
		bool created;

		v = ks_hmap_put_wide(&m, ki, &created);
		KT_REQUIRE(v);
		if (created) {
			KT_EQ_U64(v->n, 0); /* zeroed */
			v->first = ki[0];
			v->last = ki[kw - 1];
		}
		KT_EQ_U64(v->first, ki[0]);
		KT_EQ_U64(v->last, ki[kw - 1]);
		v->n++;
		KT_REQUIRE(ks_hmap_len(&m) - m.has_spare <= m.cap / 2);
	}
	memcpy(sorted, keys, n * kw * sizeof(*sorted));
	cmp_kw = kw;
	qsort(sorted, n, kw * sizeof(*sorted), cmp_wide);
	for (i = 0; i < n; i++) {
		const uint64_t *ki = sorted + i * kw;
		size_t same = 1;

		while (i + same < n && !cmp_wide(sorted + (i + same) * kw, ki))
			same++;
		v = ks_hmap_get_wide(&m, ki);
		if (!v) {
			kt_fail(__FILE__, __LINE__, "%s: key %llx...%llx not found", what,
				(unsigned long long)ki[0], (unsigned long long)ki[kw - 1]);
			break;
		}
		KT_REQUIRE(get_inline(&m, ki, kw) == v);
		KT_EQ_U64(v->first, ki[0]);
		KT_EQ_U64(v->last, ki[kw - 1]);
		KT_EQ_U64(v->n, same);
		if (ks_hmap_probes_wide(&m, ki) > longest)
			longest = ks_hmap_probes_wide(&m, ki);
		distinct++;
		i += same - 1;
	}
	KT_EQ_U64(ks_hmap_len(&m), distinct);
	if (longest > PROBE_BOUND)
		kt_fail(__FILE__, __LINE__, "%s: a probe of %zu slots (bound %d)", what, longest,
			PROBE_BOUND);
	/* iteration visits each key once, with its own words */
	while ((v = ks_hmap_next_wide(&m, &pos, &key))) {
		KT_EQ_U64(v->first, key[0]);
		KT_EQ_U64(v->last, key[kw - 1]);
		KT_REQUIRE(ks_hmap_get_wide(&m, key) == v);
		seen++;
	}
	KT_EQ_U64(seen, distinct);
	/* delete every other distinct key; the rest stay found */
	for (i = 0, k = 0, left = distinct; i < n; i++) {
		const uint64_t *ki = sorted + i * kw;

		if (i && !cmp_wide(ki - kw, ki))
			continue;
		if (k++ % 2 == 0) {
			KT_REQUIRE(ks_hmap_del_wide(&m, ki));
			KT_REQUIRE(!ks_hmap_del_wide(&m, ki));
			left--;
		}
	}
	KT_EQ_U64(ks_hmap_len(&m), left);
	for (i = 0, k = 0; i < n; i++) {
		const uint64_t *ki = sorted + i * kw;

		if (i && !cmp_wide(ki - kw, ki))
			continue;
		v = ks_hmap_get_wide(&m, ki);
		KT_REQUIRE(get_inline(&m, ki, kw) == v);
		if (k++ % 2 == 0)
			KT_REQUIRE(!v);
		else
			KT_REQUIRE(v && v->first == ki[0] && v->last == ki[kw - 1]);
	}
	ks_hmap_free(&m);
	free(sorted);
}

#define NW 12000

/* Pairs: one first word for all, keys differing only in the last word;
 * first words crafted to share a home slot under seed 0 (as one-word
 * keys); whole pairs crafted to share a home under seed 0. */
static void t_wide_pairs(void)
{
	uint64_t *k = malloc(NW * 2 * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < NW; i++)
		k[2 * i] = 42, k[2 * i + 1] = i;
	check_wide("pairs, one first word", 2, k, NW);
	for (i = 0; i < NW; i++)
		k[2 * i] = 42, k[2 * i + 1] = (uint64_t)i << 40;
	check_wide("pairs, last words equal mod 2^40", 2, k, NW);
	for (i = 0; i < NW; i++)
		k[2 * i] = unhash((0x5a5ull << 44) | i), k[2 * i + 1] = i % 7;
	check_wide("pairs, colliding first words", 2, k, NW);
	for (i = 0; i < NW; i++) {
		uint64_t t = (0x3c3ull << 44) | i;

		k[2 * i] = rnd();
		craft_last(k + 2 * i, 2, t);
		KT_EQ_U64(ks_hmap_hash_wide(k + 2 * i, 2, 0), t);
	}
	check_wide("pairs sharing one home", 2, k, NW);
	check_wide("pairs sharing one home, 40 keys", 2, k, 40);
	for (i = 0; i < NW; i++)
		k[2 * i] = rnd() % 50, k[2 * i + 1] = rnd() % 50;
	check_wide("pairs, many duplicates", 2, k, NW);
	free(k);
}

/* Keys whose first word is the empty marker: they live in the table, the
 * all-marker key in the spare slot. */
static void t_wide_empty_first(void)
{
	uint64_t *k = malloc(NW * 3 * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < NW; i++)
		k[2 * i] = KS_HMAP_EMPTY, k[2 * i + 1] = KS_HMAP_EMPTY - i; /* i = 0: all marker */
	check_wide("pairs, first word the marker", 2, k, NW);
	for (i = 0; i < NW; i++)
		k[2 * i] = i % 2 ? KS_HMAP_EMPTY : KS_HMAP_EMPTY - 1, k[2 * i + 1] = i / 2;
	check_wide("pairs, marker and its neighbour", 2, k, NW);
	for (i = 0; i < NW; i++) {
		/* triples of marker words but one, which takes values near it */
		k[3 * i] = k[3 * i + 1] = k[3 * i + 2] = KS_HMAP_EMPTY;
		k[3 * i + i % 3] = KS_HMAP_EMPTY - i / 3;
	}
	check_wide("triples near the marker", 3, k, NW);
	/* the marker key alone, then with one other key */
	for (i = 0; i < 3; i++)
		k[i] = KS_HMAP_EMPTY;
	check_wide("the marker alone", 3, k, 1);
	k[3] = k[4] = KS_HMAP_EMPTY, k[5] = 0;
	check_wide("the marker and one key", 3, k, 2);
	free(k);
}

/* Triples differing only in the middle word, or only in the last; zero
 * keys; random quadruples. */
static void t_wide_triples(void)
{
	uint64_t *k = malloc(NW * 4 * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < NW; i++)
		k[3 * i] = 7, k[3 * i + 1] = (uint64_t)i << 32, k[3 * i + 2] = 9;
	check_wide("triples, middle word", 3, k, NW);
	for (i = 0; i < NW; i++)
		k[3 * i] = 0, k[3 * i + 1] = 0, k[3 * i + 2] = i;
	check_wide("triples, zero but the last", 3, k, NW);
	for (i = 0; i < NW * 4; i++)
		k[i] = rnd();
	check_wide("random quadruples", 4, k, NW);
	/* stat's row keys: a small key, two pairs of int32s, a small table */
	for (i = 0; i < NW; i++) {
		k[4 * i] = i % 61;
		k[4 * i + 1] = (uint64_t)(1000 + i % 7) << 32 | (i / 61) % 9;
		k[4 * i + 2] = (uint64_t)UINT32_MAX << 32 | (i / 549) % 3;
		k[4 * i + 3] = i % 2;
	}
	check_wide("quadruples of small fields", 4, k, NW);
	for (i = 0; i < NW; i++) {
		uint64_t t = (0x2b1ull << 44) | i;

		k[4 * i] = i % 3, k[4 * i + 1] = rnd(), k[4 * i + 2] = 5;
		craft_last(k + 4 * i, 4, t);
		KT_EQ_U64(ks_hmap_hash_wide(k + 4 * i, 4, 0), t);
	}
	check_wide("quadruples sharing one home", 4, k, NW);
	free(k);
}

/* Keys wider than the widths the table unrolls (the general path). */
static void t_wide_six(void)
{
	uint64_t *k = malloc(NW * 6 * sizeof(*k));
	size_t i;

	KT_REQUIRE(k);
	for (i = 0; i < NW * 6; i++)
		k[i] = i % 6 == 5 ? i / 6 : 3;
	check_wide("sextuples, last word", 6, k, NW);
	for (i = 0; i < NW; i++) {
		uint64_t t = (0x1d7ull << 44) | i;

		k[6 * i] = rnd(), k[6 * i + 1] = k[6 * i + 2] = k[6 * i + 3] = k[6 * i + 4] = i;
		craft_last(k + 6 * i, 6, t);
		KT_EQ_U64(ks_hmap_hash_wide(k + 6 * i, 6, 0), t);
	}
	check_wide("sextuples sharing one home", 6, k, NW);
	free(k);
}

/* The wide hash keeps the words' places apart: a key's words permuted,
 * or their top bits flipped (the one difference a product by an odd
 * constant passes on unchanged), give other hashes, under every seed
 * tried. */
static void t_wide_places(void)
{
	static const unsigned char perms[][4] = {
		{ 0, 1, 2, 3 }, { 1, 0, 2, 3 }, { 0, 2, 1, 3 }, { 3, 1, 2, 0 },
		{ 1, 2, 3, 0 }, { 3, 2, 1, 0 }, { 2, 3, 0, 1 }, { 1, 0, 3, 2 },
	};
	const size_t np = sizeof(perms) / sizeof(perms[0]);
	uint64_t h[sizeof(perms) / sizeof(perms[0]) + 16], seen[sizeof(perms) / sizeof(perms[0])][4];
	uint64_t key[4], w[4];
	size_t round, i, j, n, ns, s;

	for (round = 0; round < 200; round++) {
		for (i = 0; i < 4; i++)
			key[i] = round % 2 ? rnd() : rnd() % 4; /* small words: equal ones */
		for (s = 0; s < 3; s++) {
			uint64_t seed = s ? rnd() : 0;

			n = ns = 0;
			for (i = 0; i < np; i++) {
				for (j = 0; j < 4; j++)
					w[j] = key[perms[i][j]];
				for (j = 0; j < ns && memcmp(seen[j], w, sizeof(w)); j++)
					;
				if (j < ns)
					continue; /* equal words: a key already hashed */
				memcpy(seen[ns++], w, sizeof(w));
				h[n++] = ks_hmap_hash_wide(w, 4, seed);
			}
			for (i = 1; i < 16; i++) {
				for (j = 0; j < 4; j++)
					w[j] = key[j] ^ ((i >> j & 1) ? 1ull << 63 : 0);
				h[n++] = ks_hmap_hash_wide(w, 4, seed);
			}
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					KT_REQUIRE(h[i] != h[j]);
		}
	}
}

/* The wide functions on a one-word table agree with the one-word ones. */
static void t_wide_one_word(void)
{
	struct ks_hmap m;
	size_t i;
	bool created;

	ks_hmap_init(&m, sizeof(uint64_t));
	for (i = 0; i < 5000; i++) {
		uint64_t key = i % 2 ? KS_HMAP_EMPTY - i : unhash((9ull << 50) | i);
		uint64_t *v = ks_hmap_put_wide(&m, &key, &created);

		KT_REQUIRE(v && created);
		*v = key;
	}
	KT_REQUIRE(ks_hmap_put(&m, KS_HMAP_EMPTY, &created) && created);
	for (i = 0; i < 5000; i++) {
		uint64_t key = i % 2 ? KS_HMAP_EMPTY - i : unhash((9ull << 50) | i);
		uint64_t *v = ks_hmap_get(&m, key);

		KT_REQUIRE(v && *v == key && ks_hmap_get_wide(&m, &key) == v);
	}
	KT_EQ_U64(ks_hmap_len(&m), 5001);
	ks_hmap_free(&m);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_one_home),
		KT_CASE(t_equal_mod_cap),
		KT_CASE(t_sequential_random_dups),
		KT_CASE(t_large_churn),
		KT_CASE(t_reproducible),
		KT_CASE(t_wide_pairs),
		KT_CASE(t_wide_empty_first),
		KT_CASE(t_wide_triples),
		KT_CASE(t_wide_one_word),
		KT_CASE(t_wide_six),
		KT_CASE(t_wide_places),
		{ 0 },
	};
	return kt_main(cases);
}
