/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hashmap.h - the library's one hash table: u64 keys, fixed-size values
 * stored inline (a pointer, an index, or a small struct).
 *
 * Open addressing with linear probing, in one array of slots (key, then the
 * value).  Every insertion first makes room: the table grows (doubles) when
 * it would be more than half full, so there is always an empty slot and
 * every probe ends.  A probe longer than KS_HMAP_PROBE_MAX (keys crafted to
 * share a home slot) makes the table rehash once with another seed at its
 * size; the seeds are a fixed sequence, so iteration order, and whatever
 * depends on it, is the same on every run.  Any u64 is a valid key (the
 * one value the table uses to mark empty slots is kept in a spare slot).
 *
 * Wide keys: a table made by ks_hmap_init_wide() has keys of K 64-bit
 * words (a pair, a triple...), hashed and compared whole, and is used only
 * through the *_wide functions (which also work on a K = 1 table).  A slot
 * is empty when all K words of its key are KS_HMAP_EMPTY; that one key is
 * kept in the spare slot, so every key is valid, those whose first word is
 * KS_HMAP_EMPTY included (they live in the table, the empty test looks at
 * the other words when the first is KS_HMAP_EMPTY).  A lookup whose K is
 * a constant may be inlined: ks_hmap_get_wide_k.
 *
 *	struct ks_hmap m;
 *	ks_hmap_init(&m, sizeof(struct thread *));
 *	struct thread **v = ks_hmap_put(&m, tid, &created);  // NULL: no memory
 *	struct thread **f = ks_hmap_get(&m, tid);            // NULL: absent
 *	ks_hmap_free(&m);
 *
 * The value pointers returned stay valid until the next put or del.
 * Allocation failure is returned (NULL / -1), never fatal.
 */
#ifndef KVMSCOPE_UTIL_HASHMAP_H
#define KVMSCOPE_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The key marking empty slots (itself stored in the spare slot). */
#define KS_HMAP_EMPTY UINT64_MAX
/* A longer probe on insertion rehashes with the next seed (once per size). */
#define KS_HMAP_PROBE_MAX 48

struct ks_hmap {
	unsigned char *slots;  /* cap + 1 slots of stride bytes; [cap] = spare */
	size_t cap;            /* a power of two, 0 before the first put */
	size_t len;            /* keys stored, the spare's included */
	size_t vsize, stride;
	size_t kwords;         /* 64-bit words per key (1: ks_hmap_init) */
	uint64_t seed;
	unsigned shift;        /* 64 - log2(cap) */
	unsigned nseed;        /* index of seed in the sequence */
	bool reseeded;         /* rehashed for a long probe at this cap */
	bool has_spare;        /* key KS_HMAP_EMPTY present */
};

void ks_hmap_init(struct ks_hmap *m, size_t vsize);
/* A table whose keys are KEY_WORDS (>= 1) 64-bit words. */
void ks_hmap_init_wide(struct ks_hmap *m, size_t key_words, size_t vsize);
void ks_hmap_free(struct ks_hmap *m);

static inline uint64_t ks_hmap_hash(uint64_t key, uint64_t seed)
{
	/* murmur3's finaliser over key ^ seed: every key bit moves the
	 * top bits, which pick the slot */
	key ^= seed;
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	key ^= key >> 33;
	return key;
}

#define KS_HMAP_ALWAYS_INLINE static inline __attribute__((always_inline))

/* The hash of a key of KW words (KW = 1: ks_hmap_hash).  Each word, xored
 * with the seed, is multiplied by an odd constant and rotated left by 21
 * bits per place; these are xored, and murmur3's finaliser mixes the sum.
 * The words are mixed side by side, not one into the hash of the others,
 * so that hashing a wide key costs little more than a one-word one.  Every
 * step is invertible given the other words (a key with one word changed
 * has another hash), and the rotations keep the words' places apart (the
 * one difference a product passes on unchanged, its top bit, lands on
 * another bit for each place).  Unrolled when KW is a constant. */
KS_HMAP_ALWAYS_INLINE uint64_t ks_hmap_hash_wide(const uint64_t *key, size_t kw, uint64_t seed)
{
	const uint64_t mul = 0x9e3779b97f4a7c15ull; /* 2^64 / phi, odd */
	uint64_t h;
	size_t i;

	if (kw == 1)
		return ks_hmap_hash(key[0], seed);
	h = (key[0] ^ seed) * mul;
	_Pragma("GCC unroll 16")
	for (i = 1; i < kw; i++) {
		uint64_t w = (key[i] ^ seed) * mul;
		unsigned r = (unsigned)(21 * i) & 63;

		h ^= r ? w << r | w >> (64 - r) : w;
	}
	return ks_hmap_hash(h, seed);
}

static inline uint64_t *ks_hmap_key_at(const struct ks_hmap *m, size_t i)
{
	return (uint64_t *)(void *)(m->slots + i * m->stride);
}

/* The value of KEY, or NULL.  ks_hmap_get, _put, _del and _probes are for
 * tables of one-word keys (ks_hmap_init). */
static inline void *ks_hmap_get(const struct ks_hmap *m, uint64_t key)
{
	size_t i, mask = m->cap - 1;

	if (key == KS_HMAP_EMPTY)
		return m->has_spare ? ks_hmap_key_at(m, m->cap) + 1 : NULL;
	if (!m->cap)
		return NULL;
	for (i = (size_t)(ks_hmap_hash(key, m->seed) >> m->shift);; i = (i + 1) & mask) {
		uint64_t *k = ks_hmap_key_at(m, i);

		if (*k == key)
			return k + 1;
		if (*k == KS_HMAP_EMPTY)
			return NULL;
	}
}

/* The value of KEY, created zeroed (*CREATED true) if absent.  NULL when
 * out of memory (the table is unchanged). */
void *ks_hmap_put(struct ks_hmap *m, uint64_t key, bool *created);

/* Remove KEY; returns whether it was there.  Never allocates. */
bool ks_hmap_del(struct ks_hmap *m, uint64_t key);

/* Iteration: start with *POS = 0; returns the next value and its key, or
 * NULL at the end.  No put or del during an iteration. */
void *ks_hmap_next(const struct ks_hmap *m, size_t *pos, uint64_t *key);

/* The same for keys of m->kwords words (any table). */
void *ks_hmap_get_wide(const struct ks_hmap *m, const uint64_t *key);
void *ks_hmap_put_wide(struct ks_hmap *m, const uint64_t *key, bool *created);
bool ks_hmap_del_wide(struct ks_hmap *m, const uint64_t *key);
size_t ks_hmap_probes_wide(const struct ks_hmap *m, const uint64_t *key);
/* Iteration; *KEY points at the key's words in the table (valid as the
 * value is). */
void *ks_hmap_next_wide(const struct ks_hmap *m, size_t *pos, const uint64_t **key);

/* Whether the KW words at A and B are equal: compared one by one (the
 * first differs for almost every other key in a probe). */
KS_HMAP_ALWAYS_INLINE bool ks_hmap_key_eq(const uint64_t *a, const uint64_t *b, size_t kw)
{
	size_t i;

	_Pragma("GCC unroll 16")
	for (i = 0; i < kw; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Whether the KW words at KEY are the empty marker (all KS_HMAP_EMPTY). */
KS_HMAP_ALWAYS_INLINE bool ks_hmap_is_marker(const uint64_t *key, size_t kw)
{
	size_t i;

	_Pragma("GCC unroll 16")
	for (i = 0; i < kw; i++)
		if (key[i] != KS_HMAP_EMPTY)
			return false;
	return true;
}

/* ks_hmap_get_wide with KW, the table's key words, given by the caller:
 * inlined, with KW a constant the hash and the comparisons are unrolled
 * (ks_hmap_get_wide itself is this for every KW up to 4). */
KS_HMAP_ALWAYS_INLINE void *ks_hmap_get_wide_k(const struct ks_hmap *m, const uint64_t *key,
					       size_t kw)
{
	size_t i, mask = m->cap - 1;

	if (key[0] == KS_HMAP_EMPTY && ks_hmap_is_marker(key, kw))
		return m->has_spare ? ks_hmap_key_at(m, m->cap) + kw : NULL;
	if (!m->cap)
		return NULL;
	for (i = (size_t)(ks_hmap_hash_wide(key, kw, m->seed) >> m->shift);; i = (i + 1) & mask) {
		uint64_t *k = ks_hmap_key_at(m, i);

		if (ks_hmap_key_eq(k, key, kw))
			return k + kw;
		if (k[0] == KS_HMAP_EMPTY && ks_hmap_is_marker(k, kw))
			return NULL;
	}
}

static inline size_t ks_hmap_len(const struct ks_hmap *m)
{
	return m->len;
}

/* Bytes the table holds (for budgets). */
static inline size_t ks_hmap_bytes(const struct ks_hmap *m)
{
	return m->cap ? (m->cap + 1) * m->stride : 0;
}

/* Slots a lookup of KEY examines (1 = its home slot); for tests. */
size_t ks_hmap_probes(const struct ks_hmap *m, uint64_t key);

/* Make room for N keys in all without further growth.  -1 if out of
 * memory. */
int ks_hmap_reserve(struct ks_hmap *m, size_t n);

#endif
