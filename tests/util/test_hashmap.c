/*
 * test_hashmap.c - properties of the shared hash table (src/util/hashmap.c)
 * on adversarial key sets: every key inserted is found with its value, the
 * size is right, the table is never more than half full (so every probe
 * ends), and probes stay short even for keys crafted to share one home
 * slot under the table's first seed.  The reference is a plain sorted
 * array of the keys, not the table's code.
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

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_one_home),
		KT_CASE(t_equal_mod_cap),
		KT_CASE(t_sequential_random_dups),
		KT_CASE(t_large_churn),
		KT_CASE(t_reproducible),
		{ 0 },
	};
	return kt_main(cases);
}
