/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata.c - perf.data reader (file mode, both byte orders).
 *
 * ks_perfdata_open() reads (pread) the header, the attrs with their id
 * arrays and the feature sections into heap buffers (tracing data goes into
 * the source's tep_handle through tracing_data.c), then ks_source_next()
 * walks the data section through a sliding window: a heap buffer holding
 * the file bytes [win_off, win_off + win_len), refilled with large reads.
 * Records are ordered exactly like perf 6.1's ordered_events: records with a
 * timestamp are queued as {ts, offset|attr} pairs (no copy: the payload
 * stays in the window), records without one are delivered when read, and
 * each PERF_RECORD_FINISHED_ROUND delivers the queued records up to the
 * previous round's maximum timestamp.  Records are decoded only when
 * delivered.  The window always holds every byte from the oldest queued
 * record to the read position; a refill first moves that tail to the start
 * of the buffer, so memory stays flat with file size (the buffer only grows
 * for a round bigger than it, up to MAX_WINDOW).  For data sections larger
 * than one window, a prefetch thread reads the next region into a spare
 * buffer while the records of the current one are parsed; a refill then
 * copies the tail in front of it and swaps the buffers (see "prefetching";
 * big tails, jumps and a failed thread start fall back to a plain read).
 * A refill happens only before the next record is decoded, so the pointers
 * of a delivered record stay valid until the next ks_source_next() call.
 * Long rounds: a round's records are, per CPU, already in time order in
 * the file; in a round larger than SEG_ROUND chunks, the prefetch thread
 * sends such a stretch of SEG_MIN records or more as a segment, which the main thread keeps as a cursor into the file
 * instead of queuing its records, and a flush merges the segments' records
 * (a heap by time, then offset) with the queue's.  A round larger than a
 * prefetch's tail switches a read data section to the mapping, whose pages
 * behind the read position and behind each cursor are given back and
 * fault in again when merged: memory does not grow with a round's size.
 *
 * Every header, record and sample field is read in the file's byte order
 * and converted to host order; tracepoint payloads are left as they are
 * (ks_field swaps them, tep knows the file's endianness).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "util/byteorder.h"
#include "ctx_impl.h"
#include "event/lazy_events.h"
#include "source_impl.h"
#include "tracing_data.h"
#include "util/hashmap.h"

/* perf_event_attr.sample_type bits (include/uapi/linux/perf_event.h). */
#define S_IP (1ull << 0)
#define S_TID (1ull << 1)
#define S_TIME (1ull << 2)
#define S_ADDR (1ull << 3)
#define S_READ (1ull << 4)
#define S_CALLCHAIN (1ull << 5)
#define S_ID (1ull << 6)
#define S_CPU (1ull << 7)
#define S_PERIOD (1ull << 8)
#define S_STREAM_ID (1ull << 9)
#define S_RAW (1ull << 10)
#define S_BRANCH_STACK (1ull << 11)
#define S_REGS_USER (1ull << 12)
#define S_STACK_USER (1ull << 13)
#define S_WEIGHT (1ull << 14)
#define S_DATA_SRC (1ull << 15)
#define S_IDENTIFIER (1ull << 16)
#define S_TRANSACTION (1ull << 17)
#define S_REGS_INTR (1ull << 18)
#define S_PHYS_ADDR (1ull << 19)
#define S_AUX (1ull << 20)
#define S_CGROUP (1ull << 21)
#define S_DATA_PAGE_SIZE (1ull << 22)
#define S_CODE_PAGE_SIZE (1ull << 23)
#define S_WEIGHT_STRUCT (1ull << 24)
/* The fixed-size u64 slots perf counts in evsel->sample_size. */
#define S_FIXED (S_IP | S_TID | S_TIME | S_ADDR | S_ID | S_STREAM_ID | S_CPU | \
		 S_PERIOD | S_IDENTIFIER)
#define S_TRAILER (S_TID | S_TIME | S_ID | S_STREAM_ID | S_CPU | S_IDENTIFIER)

#define F_TOTAL_TIME_ENABLED (1ull << 0)
#define F_TOTAL_TIME_RUNNING (1ull << 1)
#define F_ID (1ull << 2)
#define F_GROUP (1ull << 3)
#define F_LOST (1ull << 4)

#define BRANCH_HW_INDEX (1ull << 17)
#define TYPE_TRACEPOINT 2
#define ATTR_SAMPLE_ID_ALL_BIT 18

enum {
	R_MMAP = 1, R_LOST = 2, R_COMM = 3, R_EXIT = 4, R_FORK = 7, R_SAMPLE = 9,
	R_LOST_SAMPLES = 13,
	R_USER_START = 64, R_HEADER_TRACING_DATA = 66, R_FINISHED_ROUND = 68,
	R_ID_INDEX = 69, R_AUXTRACE = 71,
};

enum {
	FEAT_TRACING_DATA = 1, FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_ARCH = 6,
	FEAT_NRCPUS = 7, FEAT_CPUID = 9, FEAT_SAMPLE_TIME = 21, FEAT_BITS = 256,
};

#define HEADER_SIZE 104
#define HEADER_SIZE_NO_FEATURES 72
#define ATTR_VER0 64
#define MAX_ATTRS 4096
#define MAX_FILE (1ull << 48) /* offsets share a u64 with a 16-bit attr index */
/* Data window: 2 MB to start (small enough to stay in cache, which makes
 * both the kernel's copy and the parsing cheaper), read in chunks of at
 * least READ_MIN, doubled when the queued records fill half of it. */
#define WINDOW_INIT (2ull << 20)
#define READ_MIN (512ull << 10)
#define MAX_WINDOW (1ull << 30)   /* pending records of one round: at most */
/* Prefetching (data sections larger than the first PF_BUF window): while
 * the main thread parses the window, a thread reads the next READ_SIZE
 * bytes into the spare buffer at TAIL_MAX; a refill copies the still-needed
 * tail (at most TAIL_MAX bytes) in front of them and swaps the buffers.
 * 4 MB reads: half the tail copies of 2 MB ones, and ~15% less CPU in the
 * reader on a 2M-pair kvm file; larger ones gain nothing more. */
#define TAIL_MAX (2ull << 20)
#define READ_SIZE (4ull << 20)
#define PF_BUF (TAIL_MAX + READ_SIZE)
#define HUGE_PAGE (2ull << 20)
#define IDS_CHUNK 4096            /* attr ids read per pread */
/* map_trim(): pages given back in aligned blocks of TRIM_STEP; those of
 * the last TRIM_HOLD bytes before the read position are kept (the pending
 * records of rounds up to about that size are then not faulted in again) */
#define TRIM_STEP (2ull << 20)
#define TRIM_HOLD (8ull << 20)

struct pd_attr {
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t branch_sample_type;
	uint32_t nregs_user, nregs_intr;
	bool sample_id_all;
	uint32_t fixed_size;   /* bytes of the fixed u64 slots of a sample */
	uint32_t time_pos;     /* offset of TIME in a sample body */
	uint32_t trailer_size; /* bytes of the sample_id_all trailer */
	uint32_t tail_fixed;   /* bytes of PHYS_ADDR..CODE_PAGE_SIZE */
	uint32_t read_times;   /* u64s of time_enabled/running in READ */
	uint32_t read_each;    /* u64s per value in READ */
	/* A sample_type without variable-size fields but RAW: a sample is
	 * the fixed slots, RAW's size and payload, then after_raw bytes. */
	bool fixed_layout;
	uint32_t after_raw;
	/* Offsets in a sample body of the fixed slots, -1 = absent. */
	int32_t identifier_at, ip_at, tid_at, id_at, cpu_at, period_at;
	bool skip;             /* not selected (pd_select): samples not delivered */
	struct tep_event *event;
};

/* A queued record: its timestamp and (file offset << 16 | KEY_SAMPLE if
 * it is a sample | KEY_SKIP if it is a sample of an event not selected
 * (pd_select) | attr index + 1). */
#define KEY_SAMPLE 0x8000u
#define KEY_SKIP 0x4000u
#define KEY_ATTR 0x1fffu
_Static_assert(MAX_ATTRS < KEY_ATTR, "attr indexes + 1 fit KEY_ATTR");
struct pd_entry {
	uint64_t ts;
	uint64_t key;
};



/* A slot of the id -> attr cache in front of pd_idmap: ids of one attr are
 * usually consecutive numbers, so their low bits pick distinct slots. */
#define ID_CACHE 256
struct pd_idcache {
	uint64_t id;   /* 0 = empty (id 0 never gets here) */
	int32_t attr;
};

/* The background reader.  Main thread only: tried, running, posted, spare.
 * Set by the main thread under lock when posting: dst, off, len.  Shared
 * under lock: request (posted, not yet taken by the thread), busy (the
 * thread is reading), quit, result, fail_off.  From posting until the read
 * is waited for, spare[TAIL_MAX, ...) belongs to whoever reads it and the
 * main thread touches only spare[0, TAIL_MAX). */
struct pd_prefetch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool tried, running, posted;
	bool request, busy, quit;
	int fd;
	int result;        /* 0, an errno, or -1: the file ends early */
	uint64_t fail_off; /* where the read failed */
	uint8_t *dst;
	uint64_t off, len;
	uint8_t *spare;    /* the other buffer, spare_cap >= PF_BUF bytes */
	uint64_t spare_cap;

	/* Framing (frame_job): having read a chunk, the thread also frames
	 * its records as read_records() would queue them, from the first
	 * record at or after walk_from that does not end before the chunk (a
	 * record boundary in the main thread's window win_buf, which starts
	 * at file offset win_off and ends where the chunk starts; the main
	 * thread frames the records before it and does not touch the window
	 * until the read is finished); only where the straddle buffer could be
	 * had.  Set when posting: walk_from, win_buf, win_off.  Set by the
	 * job: the rest. */
	struct pd_source *src;
	bool mapped;                 /* jobs populate the mapping instead of reading */
	uint8_t *give_back;          /* mapped pages a job gives back first */
	uint64_t give_back_len;
	bool framed;
	uint64_t walk_from, win_off;
	const uint8_t *win_buf;
	struct pd_entry *frames;     /* the records of [frames_from, frames_end) */
	struct pd_entry *frames_tmp; /* where runs_build() puts them in runs */
	size_t nframes, frames_cap, tmp_cap;
	uint64_t frames_from, frames_end;
	uint8_t *straddle;           /* a record across the chunk's start */
	uint64_t round_off;          /* the last FINISHED_ROUND framed (runs_build) */
	struct pd_idcache idc[ID_CACHE];
};

/* A frame is a queue entry (ts, key) as read_records() makes it, or a
 * marker, whose key has no attr bits (its record's file offset << 16) and
 * whose ts says what it is (MARK_KIND): MARK_FLUSH for FINISHED_ROUND,
 * MARK_MAIN for a record read_records() reads itself (any other kind, no
 * time, an unknown id, too short), MARK_RUN for the head of a run of
 * queue entries sorted by time (its offset is the run's first record's,
 * MARK_RUN_LEN entries follow it: the samples of events not selected,
 * MARK_RUN_SKIP of them, after the others, each part sorted; runs_build). */
#define MARK_MAIN 0
#define MARK_FLUSH 1
#define MARK_RUN 2
/* MARK_SEG: a segment, a stretch of at least SEG_MIN queue entries in file
 * order that is already in time order (a CPU's records of a round), sent
 * as three frames instead of its entries: the head {MARK_SEG | its length
 * as MARK_RUN_LEN, its first record's offset}, then {its first time, the
 * file offset after its last record}, {its last time, 0}.  The main thread
 * keeps it as a cursor into the file (struct pd_seg), not as entries. */
#define MARK_SEG 3
/* Segments only where a round has grown past SEG_ROUND chunks (4 MB by
 * default; an eighth of a memory budget below 32 MB), and for stretches
 * of SEG_MIN records or more: the queue's entries cost the main thread
 * less per record (their merge is done by the prefetch thread; the
 * segments' by the main thread, record by record: 2 CPUs' stretches of
 * 20k records, 0.078 s of CPU as entries for 1.2 M records, 0.11 s as
 * segments), but in a long round the pages of its entries, faulted in
 * again while it is merged, stay mapped until it is done (rounds of a
 * million records: 65-71 MB peak with 12 MB of entries a round). */
#define SEG_ROUND 1
#define SEG_MIN 64
#define MARK_KIND(f) ((f).ts & 3)
#define MARK_RUN_LEN(f) (((f).ts >> 2) & 0x3fffffffu)
#define MARK_RUN_SKIP(f) ((f).ts >> 32)
#define RUN_MAX 0x3fffffffu /* entries a run's head can count */
#define STRADDLE_MAX (64u << 10) /* a record's size is 16 bits */

/* A pending segment: the cursor of a stretch of the file whose records are
 * queue entries in time order.  off, ts, key: its next record's offset,
 * time and queue key (pd_entry); end: the offset after its last record;
 * last: its last record's time; rel: the mapped pages below it have been
 * given back (seg_advance). */
struct pd_seg {
	uint64_t ts, off, key, end, last, rel;
};

struct pd_source {
	struct ks_source base;
	int fd;
	uint64_t file_size;
	uint64_t map_min;   /* data sections larger than this are mapped */
	uint64_t map_chunk; /* bytes the prefetch thread populates at a time */
	uint8_t *hdr;     /* the file header (HEADER_SIZE bytes, zero-padded) */
	bool swap;        /* file byte order differs from host */
	bool big_endian;  /* file byte order */

	struct pd_attr *attrs;
	uint32_t nr_attrs;
	struct ks_hmap ids; /* sample id -> attr index (uint16_t); id 0 is
			     * never stored (it always means the first attr) */
	struct pd_idcache idc[ID_CACHE]; /* direct-mapped by the id's low bits */
	int32_t id_pos;   /* u64 index of the id in a sample body, -1 = none */
	int32_t is_pos;   /* u64 index from the end of other records, -1 = none */

	uint64_t data_off, data_end, pos;
	uint64_t first_sample_time, last_sample_time;

	/* ordered_events state; q_sorted: q[q_head, q_n) is in time order */
	struct pd_entry *q, *tmp;
	uint64_t q_cap, q_head, q_ready, q_n;
	bool q_sorted;
	/* The queued samples of events not selected (KEY_SKIP), where the
	 * prefetch thread's runs put them: they are never delivered, so
	 * they take part in the ordering (the queue's maximum time, the
	 * last flush's time, whether the queue is empty) but not in the
	 * delivery loop.  ph[ph_head, ph_n), in time order if ph_sorted.
	 * Such a sample may also sit in q (it is then skipped when
	 * delivered): the two hold the queue of perf's ordered_events. */
	struct pd_entry *ph, *ph_tmp;
	uint64_t ph_cap, ph_head, ph_n;
	bool ph_sorted;
	uint64_t next_flush, max_timestamp, q_max, last_flush;
	/* Pending segments (MARK_SEG): a min-heap by (time, offset) of
	 * cursors, each at its next record; those with a time up to seg_limit
	 * are ready (set by a flush, 0 once the flush is delivered).
	 * flush_any: the current flush has delivered a record (last_flush). */
	struct pd_seg *seg;
	uint32_t nseg, seg_cap;
	uint64_t seg_limit;
	bool flush_any;
	uint64_t trimmed; /* mapped pages below this were given back (map_trim) */
	uint64_t page;    /* the page size */
	uint64_t seg_bad; /* a segment's record that changed under us, 0 = none */
	bool finished;
	uint64_t rounds;  /* FINISHED_ROUND records seen */

	/* data window: file bytes [win_off, win_off + win_len) at buf, which
	 * lies in the allocation [mem, mem + mem_cap), or in the mapping of
	 * the file's bytes [map_off, map_off + map_len) at map (large data
	 * sections); released: the mapping's pages below it were given back */
	uint8_t *mem, *buf;
	uint64_t mem_cap, win_off, win_len;
	uint8_t *map;
	uint64_t map_off, map_len, released;
	struct pd_prefetch pf;

	uint64_t *chain;
	uint64_t chain_cap;
	char comm[64];

	/* frames taken from the prefetch thread: frames[fi, nframes) are
	 * the records from s->pos to frames_end */
	struct pd_entry *frames;
	size_t nframes, frames_cap, fi;
	uint64_t frames_end;
	uint64_t framed_ahead; /* entries queued from the frames */
};

/* ---- byte order ---- */

/* The record path (framing, ordering, decoding) is written once with the
 * byte order as a parameter SWAP and marked HOT: pd_next_batch() makes one
 * instance for each order, so that no read tests the order at run time. */
#define HOT static inline __attribute__((always_inline))

HOT uint64_t ld64(const uint8_t *p, bool swap) { return ks_load64(p, swap); }
HOT uint32_t ld32(const uint8_t *p, bool swap) { return ks_load32(p, swap); }
HOT uint16_t ld16(const uint8_t *p, bool swap) { return ks_load16(p, swap); }

static inline uint64_t rd64(const struct pd_source *s, const uint8_t *p)
{
	return ld64(p, s->swap);
}

static inline uint32_t rd32(const struct pd_source *s, const uint8_t *p)
{
	return ld32(p, s->swap);
}

static inline uint16_t rd16(const struct pd_source *s, const uint8_t *p)
{
	return ld16(p, s->swap);
}

/* ---- id -> attr map ---- */

static int idmap_put(struct ks_hmap *m, uint64_t id, uint16_t attr)
{
	uint16_t *v;
	bool created;

	if (!id)
		return 0;
	v = ks_hmap_put(m, id, &created);
	if (!v)
		return -1;
	*v = attr;
	return 0;
}

static int idmap_get(const struct ks_hmap *m, uint64_t id)
{
	const uint16_t *v = id ? ks_hmap_get(m, id) : NULL;

	return v ? *v : -1;
}

static __attribute__((noinline)) int attr_of_id_miss(const struct pd_source *s, uint64_t id,
						      struct pd_idcache *c)
{
	c->attr = idmap_get(&s->ids, id);
	c->id = id;
	return c->attr;
}

/* The attr of id ID (perf: synthesized records have id 0 = first attr),
 * through the cache IDC (each thread has its own). */
HOT int attr_of_id(const struct pd_source *s, struct pd_idcache *idc, uint64_t id)
{
	struct pd_idcache *c = &idc[id & (ID_CACHE - 1)];

	if (!id)
		return 0;
	if (__builtin_expect(c->id != id, 0))
		return attr_of_id_miss(s, id, c);
	return c->attr;
}

/* ---- file reading ---- */

/* Read LEN bytes at file offset OFF of FD into DST (any thread).  Returns
 * 0, an errno, or -1 if the file ends early; *FAIL_OFF is where it failed. */
static int read_full(int fd, uint64_t off, uint8_t *dst, uint64_t len, uint64_t *fail_off)
{
	while (len) {
		ssize_t n = pread(fd, dst, len > (1u << 30) ? (1u << 30) : len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*fail_off = off;
			return n < 0 ? errno : -1;
		}
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* The error of a failed read_full(). */
static int read_error(struct pd_source *s, int result, uint64_t off, struct ks_error *err)
{
	if (result > 0)
		return ks_error_at(err, s->base.path, off, "cannot read: %s", strerror(result));
	return ks_error_at(err, s->base.path, off,
			   "the file ends early (it was truncated while being read)");
}

/* Read LEN bytes at file offset OFF into DST.  The caller has checked the
 * range against the file size; a short read means the file shrank. */
static int pread_full(struct pd_source *s, uint64_t off, void *dst, uint64_t len,
		      struct ks_error *err)
{
	uint64_t fail_off = off;
	int ret = read_full(s->fd, off, dst, len, &fail_off);

	return ret ? read_error(s, ret, fail_off, err) : 0;
}

/* LEN bytes at OFF in a new heap buffer (plus one zero byte), or NULL. */
static uint8_t *pread_alloc(struct pd_source *s, uint64_t off, uint64_t len,
			    struct ks_error *err)
{
	uint8_t *p = malloc(len + 1);

	if (!p) {
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
		return NULL;
	}
	p[len] = 0;
	if (pread_full(s, off, p, len, err) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* ---- header, attrs, features ---- */

static bool section_ok(const struct pd_source *s, uint64_t off, uint64_t size)
{
	return off <= s->file_size && size <= s->file_size - off;
}

/* The {offset, size} pair at P, which is at file offset AT. */
static int read_section(struct pd_source *s, const uint8_t *p, uint64_t at, uint64_t *off,
			uint64_t *size, const char *what, struct ks_error *err)
{
	*off = rd64(s, p);
	*size = rd64(s, p + 8);
	if (!section_ok(s, *off, *size))
		return ks_error_at(err, s->base.path, at,
				   "%s section (offset %llu, size %llu) lies outside the file (%llu bytes)",
				   what, (unsigned long long)*off, (unsigned long long)*size,
				   (unsigned long long)s->file_size);
	return 0;
}

/* Offset of the fixed slot BIT in a sample body of sample_type T (the slots
 * in their documented order, which is not the order of their bits), -1 if
 * absent. */
static int32_t slot_pos(uint64_t t, uint64_t bit)
{
	static const uint64_t order[] = { S_IDENTIFIER, S_IP, S_TID, S_TIME, S_ADDR, S_ID,
					  S_STREAM_ID, S_CPU, S_PERIOD };
	int32_t pos = 0;
	size_t i;

	if (!(t & bit))
		return -1;
	for (i = 0; order[i] != bit; i++)
		if (t & order[i])
			pos += 8;
	return pos;
}

static void attr_derive(struct pd_attr *a)
{
	uint64_t t = a->sample_type;
	uint32_t before_time = 0;

	a->fixed_size = 8 * (uint32_t)__builtin_popcountll(t & S_FIXED);
	a->trailer_size = a->sample_id_all ? 8 * (uint32_t)__builtin_popcountll(t & S_TRAILER) : 0;
	before_time = 8 * (uint32_t)__builtin_popcountll(t & (S_IDENTIFIER | S_IP | S_TID));
	a->time_pos = before_time;
	a->identifier_at = slot_pos(t, S_IDENTIFIER);
	a->ip_at = slot_pos(t, S_IP);
	a->tid_at = slot_pos(t, S_TID);
	a->id_at = slot_pos(t, S_ID);
	a->cpu_at = slot_pos(t, S_CPU);
	a->period_at = slot_pos(t, S_PERIOD);
	a->tail_fixed = 8 * (uint32_t)__builtin_popcountll(t & (S_PHYS_ADDR | S_CGROUP |
							   S_DATA_PAGE_SIZE | S_CODE_PAGE_SIZE));
	a->read_times = (uint32_t)__builtin_popcountll(a->read_format & (F_TOTAL_TIME_ENABLED |
									 F_TOTAL_TIME_RUNNING));
	a->read_each = 1 + (uint32_t)__builtin_popcountll(a->read_format & (F_ID | F_LOST));
	a->fixed_layout = !(t & (S_READ | S_CALLCHAIN | S_BRANCH_STACK | S_REGS_USER |
				 S_STACK_USER | S_REGS_INTR | S_AUX));
	a->after_raw = a->tail_fixed + ((t & (S_WEIGHT | S_WEIGHT_STRUCT)) ? 8 : 0) +
		       8 * (uint32_t)__builtin_popcountll(t & (S_DATA_SRC | S_TRANSACTION));
}

/* Parse one attr of AVAIL bytes at P (fields past AVAIL read as 0). */
static void attr_parse(struct pd_source *s, struct pd_attr *a, const uint8_t *p, uint32_t avail)
{
	uint8_t raw[128] = { 0 };
	uint64_t flags;
	uint32_t bit = ATTR_SAMPLE_ID_ALL_BIT;

	memcpy(raw, p, avail < sizeof(raw) ? avail : sizeof(raw));
	a->type = rd32(s, raw);
	a->config = rd64(s, raw + 8);
	a->sample_type = rd64(s, raw + 24);
	a->read_format = rd64(s, raw + 32);
	flags = rd64(s, raw + 40);
	/* Bitfields: a big-endian ABI allocates them from the top bit down. */
	a->sample_id_all = s->big_endian ? (flags >> (63 - bit)) & 1 : (flags >> bit) & 1;
	a->branch_sample_type = rd64(s, raw + 72);
	a->nregs_user = (uint32_t)__builtin_popcountll(rd64(s, raw + 80));
	a->nregs_intr = (uint32_t)__builtin_popcountll(rd64(s, raw + 96));
	attr_derive(a);
}

/* Map the NR ids at file offset OFF (already bounds-checked) to attr I. */
static int read_ids(struct pd_source *s, uint64_t off, uint64_t nr, uint16_t i,
		    struct ks_error *err)
{
	uint8_t chunk[8 * IDS_CHUNK];
	uint64_t n, j;

	while (nr) {
		n = nr < IDS_CHUNK ? nr : IDS_CHUNK;
		if (pread_full(s, off, chunk, 8 * n, err) < 0)
			return -1;
		for (j = 0; j < n; j++)
			if (idmap_put(&s->ids, rd64(s, chunk + 8 * j), i) < 0)
				return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
		off += 8 * n;
		nr -= n;
	}
	return 0;
}

/* Parse the attrs in RAW (the attrs section, read from file offset OFF). */
static int parse_attrs(struct pd_source *s, const uint8_t *raw, uint64_t off,
		       uint64_t attr_size, struct ks_error *err)
{
	uint64_t i, ids_off, ids_size, at;
	uint32_t avail, asize;
	const uint8_t *p;

	for (i = 0; i < s->nr_attrs; i++) {
		at = off + i * attr_size;
		p = raw + i * attr_size;
		asize = rd32(s, p + 4);
		avail = (uint32_t)(attr_size - 16);
		if (asize && asize < avail)
			avail = asize;
		attr_parse(s, &s->attrs[i], p, avail);
		if (read_section(s, p + attr_size - 16, at + attr_size - 16, &ids_off, &ids_size,
				 "attr ids", err) < 0)
			return -1;
		if (ids_size % 8)
			return ks_error_at(err, s->base.path, at + attr_size - 8,
					   "attr ids size %llu is not a multiple of 8",
					   (unsigned long long)ids_size);
		if (read_ids(s, ids_off, ids_size / 8, (uint16_t)i, err) < 0)
			return -1;
	}
	return 0;
}

static int read_attrs(struct pd_source *s, uint64_t attr_size, struct ks_error *err)
{
	uint64_t off, size;
	uint8_t *raw;
	int ret;

	if (read_section(s, s->hdr + 24, 24, &off, &size, "attrs", err) < 0)
		return -1;
	if (attr_size < ATTR_VER0 + 16 || attr_size > 4096)
		return ks_error_at(err, s->base.path, 16, "absurd attr size %llu",
				   (unsigned long long)attr_size);
	if (size % attr_size || size / attr_size == 0 || size / attr_size > MAX_ATTRS)
		return ks_error_at(err, s->base.path, 24,
				   "absurd attrs section size %llu for attr size %llu",
				   (unsigned long long)size, (unsigned long long)attr_size);
	s->nr_attrs = (uint32_t)(size / attr_size);
	s->attrs = calloc(s->nr_attrs, sizeof(*s->attrs));
	if (!s->attrs)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	raw = pread_alloc(s, off, size, err);
	if (!raw)
		return -1;
	ret = parse_attrs(s, raw, off, attr_size, err);
	free(raw);
	return ret;
}

/* perf's id_pos / is_pos, from the first attr (perf requires they agree). */
static void id_positions(struct pd_source *s)
{
	uint64_t t = s->attrs[0].sample_type;

	s->id_pos = s->is_pos = -1;
	if (t & S_IDENTIFIER) {
		s->id_pos = 0;
		s->is_pos = 1;
	} else if (t & S_ID) {
		s->id_pos = __builtin_popcountll(t & (S_IP | S_TID | S_TIME | S_ADDR));
		s->is_pos = 1 + __builtin_popcountll(t & (S_CPU | S_STREAM_ID));
	}
}

/* A perf feature string: u32 length, then the (padded) text, at P (SIZE bytes). */
static void feat_string(struct pd_source *s, const uint8_t *p, uint64_t size, char *dst,
			size_t cap)
{
	uint32_t len;
	size_t n;

	dst[0] = 0;
	if (size < 4)
		return;
	len = rd32(s, p);
	if (len > size - 4)
		len = (uint32_t)(size - 4);
	p += 4;
	for (n = 0; n < len && n + 1 < cap && p[n]; n++)
		dst[n] = (char)p[n];
	dst[n] = 0;
}

/* Feature FEAT, whose bytes (SIZE of them, file offset OFF) are at P. */
static int parse_feature(struct pd_source *s, int feat, const uint8_t *p, uint64_t off,
			 uint64_t size, struct ks_error *err)
{
	struct ks_source_info *info = &s->base.info;

	switch (feat) {
	case FEAT_TRACING_DATA:
		return ks_tracing_data_load(s->base.ctx, &s->base.tep, &s->base.meta, p, size,
					    s->base.path, off, &s->base.limits, &s->base.lazy, err);
	case FEAT_HOSTNAME:
		feat_string(s, p, size, info->hostname, sizeof(info->hostname));
		break;
	case FEAT_OSRELEASE:
		feat_string(s, p, size, info->osrelease, sizeof(info->osrelease));
		break;
	case FEAT_ARCH:
		feat_string(s, p, size, info->arch, sizeof(info->arch));
		break;
	case FEAT_CPUID:
		feat_string(s, p, size, info->cpuid, sizeof(info->cpuid));
		break;
	case FEAT_NRCPUS:
		if (size >= 8)
			info->nr_cpus = (int)(rd32(s, p) & 0x7fffffff);
		if (info->nr_cpus > 65536) /* the most a trace.dat (convert) holds */
			return ks_error_at(err, s->base.path, off,
					   "implausible CPU count %d in the NRCPUS feature", info->nr_cpus);
		break;
	case FEAT_SAMPLE_TIME:
		if (size >= 16) {
			s->first_sample_time = rd64(s, p);
			s->last_sample_time = rd64(s, p + 8);
		}
		break;
	default:
		break;
	}
	return 0;
}

/* How many bytes of feature FEAT (SIZE in the file) the reader needs. */
static uint64_t feature_need(int feat, uint64_t size)
{
	uint64_t cap;

	switch (feat) {
	case FEAT_TRACING_DATA:
		return size;
	case FEAT_HOSTNAME:
	case FEAT_OSRELEASE:
	case FEAT_ARCH:
	case FEAT_CPUID:
		cap = 4 + 128;
		break;
	case FEAT_NRCPUS:
		cap = 8;
		break;
	case FEAT_SAMPLE_TIME:
		cap = 16;
		break;
	default: /* CMDLINE, topology, build ids...: not needed */
		return 0;
	}
	return size < cap ? size : cap;
}

static int read_feature(struct pd_source *s, int feat, uint64_t off, uint64_t size,
			struct ks_error *err)
{
	uint64_t need = feature_need(feat, size);
	uint8_t *p;
	int ret;

	if (!need && feat != FEAT_TRACING_DATA)
		return 0;
	p = pread_alloc(s, off, need, err);
	if (!p)
		return -1;
	ret = parse_feature(s, feat, p, off, need, err);
	free(p);
	return ret;
}

static int read_features(struct pd_source *s, uint64_t header_size, struct ks_error *err)
{
	uint64_t words[FEAT_BITS / 64] = { 0 }, table, off, size;
	uint8_t entry[16];
	int feat, w;

	if (header_size < HEADER_SIZE)
		return 0;
	for (w = 0; w < FEAT_BITS / 64; w++)
		words[w] = rd64(s, s->hdr + 72 + 8 * w);
	table = s->data_end;
	for (feat = 1; feat < FEAT_BITS; feat++) {
		if (!((words[feat / 64] >> (feat % 64)) & 1))
			continue;
		if (!section_ok(s, table, 16))
			return ks_error_at(err, s->base.path, table,
					   "feature table runs past the end of the file");
		if (pread_full(s, table, entry, 16, err) < 0)
			return -1;
		if (read_section(s, entry, table, &off, &size, "feature", err) < 0)
			return -1;
		if (read_feature(s, feat, off, size, err) < 0)
			return -1;
		table += 16;
	}
	return 0;
}

static int read_header(struct pd_source *s, struct ks_error *err)
{
	bool host_big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	uint64_t header_size, attr_size, size, got;
	const uint8_t *h;

	got = s->file_size < HEADER_SIZE ? s->file_size : HEADER_SIZE;
	s->hdr = calloc(1, HEADER_SIZE);
	if (!s->hdr)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	if (pread_full(s, 0, s->hdr, got, err) < 0)
		return -1;
	h = s->hdr;
	if (got < 8 || (memcmp(h, "PERFILE2", 8) && memcmp(h, "2ELIFREP", 8)))
		return ks_error_at(err, s->base.path, 0, "not a perf.data file (bad magic)");
	s->big_endian = memcmp(h, "2ELIFREP", 8) == 0;
	s->swap = s->big_endian != host_big;
	tep_set_file_bigendian(s->base.tep, s->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (got < 24)
		return ks_error_at(err, s->base.path, got, "truncated perf.data header");
	header_size = rd64(s, h + 8);
	if (header_size == 16)
		return ks_error_at(err, s->base.path, 8,
				   "pipe-mode perf.data is not supported (record with -o FILE)");
	if (header_size != HEADER_SIZE && header_size != HEADER_SIZE_NO_FEATURES)
		return ks_error_at(err, s->base.path, 8, "bad perf.data header size %llu",
				   (unsigned long long)header_size);
	if (got < header_size)
		return ks_error_at(err, s->base.path, got, "truncated perf.data header");
	attr_size = rd64(s, h + 16);
	if (read_attrs(s, attr_size, err) < 0)
		return -1;
	if (read_section(s, h + 40, 40, &s->data_off, &size, "data", err) < 0)
		return -1;
	s->data_end = s->data_off + size;
	s->pos = s->data_off;
	s->win_off = s->data_off;
	return read_features(s, header_size, err);
}

static void lookup_events(struct pd_source *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_attrs; i++)
		if (s->attrs[i].type == TYPE_TRACEPOINT)
			s->attrs[i].event = ks_source_event_by_id(&s->base, (int)s->attrs[i].config);
}

/* ---- ordering (perf 6.1 ordered_events) ---- */

static int queue_grow(struct pd_source *s)
{
	uint64_t cap = s->q_cap ? s->q_cap * 2 : 4096;
	struct pd_entry *q = realloc(s->q, cap * sizeof(*q));
	struct pd_entry *t;

	if (!q)
		return -1;
	s->q = q;
	t = realloc(s->tmp, cap * sizeof(*t));
	if (!t)
		return -1;
	s->tmp = t;
	s->q_cap = cap;
	return 0;
}

/* The mapped bytes map_trim() keeps before the read position: TRIM_HOLD,
 * less under a memory budget below 64 MB (an eighth of it, 4 MB at least). */
static uint64_t trim_hold(const struct pd_source *s)
{
	uint64_t h = (s->base.limits.memory / 8) & ~(TRIM_STEP - 1);

	return h > TRIM_HOLD ? TRIM_HOLD : h < 2 * TRIM_STEP ? 2 * TRIM_STEP : h;
}

/* The window's bytes held in memory: a mapped window's pages are given
 * back behind the read position (map_trim) and the prefetch thread
 * populates a chunk or two ahead. */
static uint64_t window_held(const struct pd_source *s)
{
	return s->map ? trim_hold(s) + 2 * s->map_chunk : s->win_len;
}

/* Whether holding a queue of QCAP entries and a window of WIN bytes for
 * ordering stays within limits.memory; else the error, at offset OFF.
 * perf queues every record until a FINISHED_ROUND (or the end): a file
 * without them (valid, but not written by perf record) is held whole. */
static int ordering_budget(struct pd_source *s, uint64_t qcap, uint64_t win, uint64_t off,
			   struct ks_error *err)
{
	uint64_t held = (qcap + s->ph_cap) * 2 * sizeof(struct pd_entry) + win;
	uint64_t lim = s->base.limits.memory;
	char hint[96];

	if (held <= lim)
		return 0;
	ks_limit_hint(hint, sizeof(hint), "memory", lim);
	if (!s->rounds)
		return ks_error_code_at(err, KS_E_LIMIT, s->base.path, off,
				   "no FINISHED_ROUND records: ordering the records by time "
				   "would hold more than the memory budget %s", hint);
	return ks_error_code_at(err, KS_E_LIMIT, s->base.path, off,
			   "a round between FINISHED_ROUND records holds more than the "
			   "memory budget %s", hint);
}

/* The queue (and its scratch array) grown to CAP entries at least. */
static int queue_grow_to(struct pd_source *s, uint64_t cap, struct ks_error *err)
{
	while (s->q_cap < cap) {
		if (ordering_budget(s, s->q_cap ? s->q_cap * 2 : 4096, window_held(s), s->pos, err) < 0)
			return -1;
		if (queue_grow(s) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	}
	return 0;
}

/* Room for N more entries: drop the delivered ones if needed, then grow. */
static __attribute__((noinline)) int queue_reserve(struct pd_source *s, uint64_t n,
						   struct ks_error *err)
{
	if (s->q_head && s->q_cap - s->q_n < n) {
		memmove(s->q, s->q + s->q_head, (s->q_n - s->q_head) * sizeof(*s->q));
		s->q_n -= s->q_head;
		s->q_ready -= s->q_head;
		s->q_head = 0;
	}
	return queue_grow_to(s, s->q_n + n, err);
}

/* Whether perf's queue would be empty: no record pending in either part. */
static inline bool queue_idle(const struct pd_source *s)
{
	return s->q_n == s->q_head && s->ph_n == s->ph_head && !s->nseg;
}

/* Whether records are ready for delivery: queued ones up to q_ready, or
 * segments' up to seg_limit. */
static inline bool queue_ready(const struct pd_source *s)
{
	return s->q_head < s->q_ready || (s->nseg && s->seg[0].ts <= s->seg_limit);
}

/* Room for N more samples of events not selected (and as much scratch). */
static __attribute__((noinline)) int skipped_reserve(struct pd_source *s, uint64_t n,
						     struct ks_error *err)
{
	uint64_t cap;
	struct pd_entry *p;

	if (s->ph_head && s->ph_cap - s->ph_n < n) {
		memmove(s->ph, s->ph + s->ph_head, (s->ph_n - s->ph_head) * sizeof(*s->ph));
		s->ph_n -= s->ph_head;
		s->ph_head = 0;
	}
	for (cap = s->ph_cap ? s->ph_cap : 4096; cap < s->ph_n + n; cap *= 2)
		;
	if (cap == s->ph_cap)
		return 0;
	if (ordering_budget(s, s->q_cap + cap - s->ph_cap, window_held(s), s->pos, err) < 0)
		return -1;
	p = realloc(s->ph, cap * sizeof(*p));
	if (!p)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	s->ph = p;
	p = realloc(s->ph_tmp, cap * sizeof(*p));
	if (!p)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	s->ph_tmp = p;
	s->ph_cap = cap;
	return 0;
}

HOT int queue_push(struct pd_source *s, uint64_t ts, uint64_t key, struct ks_error *err)
{
	bool empty = queue_idle(s);

	if (ts < s->last_flush)
		s->base.stats.out_of_order++;
	if (s->q_n == s->q_cap && queue_reserve(s, 1, err) < 0)
		return -1;
	s->q[s->q_n++] = (struct pd_entry){ ts, key };
	s->q_sorted = false;
	/* perf sets max_timestamp only when the event goes to the queue's tail. */
	if (empty || ts >= s->q_max) {
		s->max_timestamp = ts;
		s->q_max = ts;
	}
	return 0;
}

/* End of the non-decreasing run starting at I. */
static uint64_t run_end(const struct pd_entry *a, uint64_t i, uint64_t n)
{
	for (i++; i < n && a[i - 1].ts <= a[i].ts; i++)
		;
	return i;
}

/* First index in a[lo, hi) whose ts is > TS (STRICT) or >= TS. */
static uint64_t bound(const struct pd_entry *a, uint64_t lo, uint64_t hi, uint64_t ts,
		      bool strict)
{
	while (lo < hi) {
		uint64_t m = lo + (hi - lo) / 2;

		if (strict ? a[m].ts <= ts : a[m].ts < ts)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* Stable merge of the sorted runs A[0, NA) and B[0, NB) into OUT (ties:
 * A first).  A's head up to B[0] and B's tail from A's last on are copied
 * as they are; only the overlapping middle is merged.  Runs from
 * consecutive rounds rarely overlap much. */
static void merge(const struct pd_entry *a, uint64_t na, const struct pd_entry *b, uint64_t nb,
		  struct pd_entry *out)
{
	const struct pd_entry *pa, *pb;
	struct pd_entry *po;
	uint64_t first, last;

	if (!na || !nb || a[na - 1].ts <= b[0].ts) {
		memcpy(out, a, na * sizeof(*a));
		memcpy(out + na, b, nb * sizeof(*b));
		return;
	}
	first = bound(a, 0, na, b[0].ts, true);
	last = bound(b, 0, nb, a[na - 1].ts, false);
	memcpy(out, a, first * sizeof(*a));
	pa = a + first;
	pb = b;
	po = out + first;
	while (pa < a + na && pb < b + last) {
		/* branch-free (the order is unpredictable): the source's
		 * address picked by a mask, which compilers do not turn back
		 * into a branch as they do a conditional expression */
		uintptr_t from_b = pb->ts < pa->ts, pick = -from_b;
		uintptr_t src = (uintptr_t)pa ^ (((uintptr_t)pa ^ (uintptr_t)pb) & pick);

		*po++ = *(const struct pd_entry *)src;
		pb += from_b;
		pa += from_b ^ 1;
	}
	memcpy(po, pa, (size_t)(a + na - pa) * sizeof(*a));
	po += a + na - pa;
	memcpy(po, pb, (size_t)(b + nb - pb) * sizeof(*b));
}

/* One pass of a natural merge sort: merge the pairs of sorted runs of
 * src[0, n) into dst[0, n).  Returns how many runs src had. */
static uint64_t merge_pass(const struct pd_entry *src, uint64_t n, struct pd_entry *dst)
{
	uint64_t i = 0, runs = 0;

	while (i < n) {
		uint64_t mid = run_end(src, i, n), hi;

		runs++;
		if (mid == n) {
			memcpy(dst + i, src + i, (n - i) * sizeof(*src));
			break;
		}
		hi = run_end(src, mid, n);
		runs++;
		merge(src + i, mid - i, src + mid, hi - mid, dst + i);
		i = hi;
	}
	return runs;
}

/* Stable sort of A[0, N) (N > 0) with B, as large, for scratch; returns
 * the one that holds the result.  A sorted A costs one scan; a pass over
 * at most two runs leaves one, so no pass is needed just to find out that
 * the result is sorted. */
static struct pd_entry *sort_entries(struct pd_entry *a, struct pd_entry *b, uint64_t n)
{
	struct pd_entry *t;
	uint64_t runs;

	if (run_end(a, 0, n) == n)
		return a;
	do {
		runs = merge_pass(a, n, b);
		t = a;
		a = b;
		b = t;
	} while (runs > 2);
	return a;
}

/* The pending entries sorted where they are (the queue and its scratch
 * array swap when the result is in the scratch array: outside the pending
 * entries neither holds anything). */
static void sort_queue(struct pd_source *s)
{
	uint64_t h = s->q_head;
	struct pd_entry *t = s->q;

	if (!s->q_sorted && s->q_n > h &&
	    sort_entries(s->q + h, s->tmp + h, s->q_n - h) != s->q + h) {
		s->q = s->tmp;
		s->tmp = t;
	}
	s->q_sorted = true;
}

/* The skipped samples up to LIMIT leave the queue as if delivered:
 * counted, not decoded.  Returns the time of the last of them, 0 if none. */
static uint64_t flush_skipped(struct pd_source *s, uint64_t limit)
{
	uint64_t h = s->ph_head, hi, last = 0, unknown = 0, i;
	struct pd_entry *t = s->ph;

	if (s->ph_n == h)
		return 0;
	if (!s->ph_sorted && sort_entries(s->ph + h, s->ph_tmp + h, s->ph_n - h) != s->ph + h) {
		s->ph = s->ph_tmp;
		s->ph_tmp = t;
	}
	s->ph_sorted = true;
	hi = limit ? bound(s->ph, h, s->ph_n, limit, true) : h;
	for (i = h; i < hi; i++) {
		const struct pd_attr *a = &s->attrs[(s->ph[i].key & KEY_ATTR) - 1];

		unknown += a->type == TYPE_TRACEPOINT && !a->event;
	}
	if (hi > h)
		last = s->ph[hi - 1].ts;
	s->base.stats.filtered += hi - h;
	s->base.stats.unknown_events += unknown;
	s->ph_head = hi;
	return last;
}

/* perf's ordered_events__flush(ROUND or FINAL). */
static void flush_queue(struct pd_source *s, bool final)
{
	uint64_t limit, hi, skipped_last;

	if (queue_idle(s))
		return;
	sort_queue(s);
	limit = final ? UINT64_MAX : s->next_flush;
	hi = limit ? bound(s->q, s->q_head, s->q_n, limit, true) : s->q_head;
	s->q_ready = hi;
	/* the last record delivered: the later of the two parts' last */
	skipped_last = flush_skipped(s, limit);
	if (hi > s->q_head)
		s->last_flush = s->q[hi - 1].ts;
	if (skipped_last && (hi == s->q_head || skipped_last > s->last_flush))
		s->last_flush = skipped_last;
	/* the segments' records up to LIMIT are merged in as delivered
	 * (next_batch), which moves last_flush on */
	s->seg_limit = limit;
	s->flush_any = hi > s->q_head || skipped_last;
	if (!final)
		s->next_flush = s->max_timestamp;
}

/* ---- the data window ---- */

/* The lowest file offset still needed: OFF or a queued record's. */
static uint64_t pending_low(const struct pd_source *s, uint64_t off)
{
	uint64_t low = off, i, o;

	for (i = s->q_head; i < s->q_n; i++) {
		o = s->q[i].key >> 16;
		if (o < low)
			low = o;
	}
	for (i = 0; i < s->nseg; i++)
		if (s->seg[i].off < low)
			low = s->seg[i].off;
	return low;
}

/* Drop the window bytes below LOW: move the rest to the allocation start. */
static void window_compact(struct pd_source *s, uint64_t low)
{
	uint64_t end = s->win_off + s->win_len;

	if (low >= end) {
		s->win_off = low;
		s->win_len = 0;
	} else if (low > s->win_off || s->buf != s->mem) {
		memmove(s->mem, s->buf + (low - s->win_off), end - low);
		s->win_len = end - low;
		s->win_off = low;
	}
	s->buf = s->mem;
}

/* A read buffer of SIZE bytes on transparent huge pages where the kernel
 * offers them: faulting in 4 KB pages costs more than the reads themselves
 * on some virtual machines (12 MB: 33 ms vs 1 ms, measured on this VM). */
static void buffer_hint_huge(void *p, size_t size)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure is harmless */
}

static uint8_t *buffer_alloc(size_t size)
{
	void *p;

	if (posix_memalign(&p, HUGE_PAGE, size))
		return NULL;
	buffer_hint_huge(p, size);
	return p;
}

/* Make room for at least NEED window bytes plus a large read (the window
 * starts at the allocation). */
static int window_reserve(struct pd_source *s, uint64_t need, struct ks_error *err)
{
	uint64_t want = s->win_len + READ_MIN, left = s->data_end - s->win_off, cap;
	uint8_t *b;

	if (want < 2 * s->win_len) /* keep memmove cost amortized */
		want = 2 * s->win_len;
	if (want > left)
		want = left;
	if (want < need)
		want = need;
	if (want <= s->mem_cap)
		return 0;
	if (ordering_budget(s, s->q_cap, need, s->win_off + need, err) < 0)
		return -1;
	if (need > MAX_WINDOW)
		return ks_error_at(err, s->base.path, s->win_off,
				   "a round of more than %llu MB without FINISHED_ROUND; "
				   "the records cannot be ordered in bounded memory",
				   (unsigned long long)(MAX_WINDOW >> 20));
	cap = s->mem_cap ? s->mem_cap : WINDOW_INIT;
	while (cap < want)
		cap *= 2;
	if (cap > MAX_WINDOW)
		cap = MAX_WINDOW;
	if (cap > left)
		cap = left;
	b = realloc(s->mem, cap);
	if (!b)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory (%llu MB window)", s->base.path,
				    (unsigned long long)(cap >> 20));
	s->mem = s->buf = b;
	s->mem_cap = cap;
	return 0;
}

/* ---- prefetching ---- */

static void frame_job_any(struct pd_prefetch *pf);

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* Fault in the mapped file bytes [P, P + LEN) (file offset OFF), so that
 * the main thread does not stop on them.  Returns 0, or -1 (*FAIL_OFF
 * set) when they are not all there: the file was truncated under us. */
static int populate(const uint8_t *p, uint64_t len, uint64_t off, uint64_t *fail_off)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = (uintptr_t)p + len;

	if (!madvise((void *)lo, hi - lo, MADV_POPULATE_READ) || errno == EINVAL)
		return 0; /* EINVAL: a kernel before 5.14; the pages fault in as read */
	*fail_off = off;
	return -1;
}

/* A posted job: the read, then the framing if asked for. */
static int run_job(struct pd_prefetch *pf, uint64_t *fail_off)
{
	int result;

	if (pf->give_back_len) {
		madvise(pf->give_back, pf->give_back_len, MADV_DONTNEED);
		pf->give_back_len = 0;
	}
	result = pf->mapped ? populate(pf->dst, pf->len, pf->off, fail_off) :
			      read_full(pf->fd, pf->off, pf->dst, pf->len, fail_off);

	pf->framed = false;
	if (!result && pf->straddle)
		frame_job_any(pf);
	return result;
}

/* The prefetch thread: serve one posted read at a time until quit. */
static void *prefetch_main(void *arg)
{
	struct pd_prefetch *pf = arg;
	uint64_t fail_off = 0;
	int result;

	pthread_mutex_lock(&pf->lock);
	for (;;) {
		while (!pf->request && !pf->quit)
			pthread_cond_wait(&pf->cond, &pf->lock);
		if (pf->quit)
			break;
		pf->request = false;
		pf->busy = true;
		pthread_mutex_unlock(&pf->lock);
		result = run_job(pf, &fail_off);
		pthread_mutex_lock(&pf->lock);
		pf->result = result;
		pf->fail_off = fail_off;
		pf->busy = false;
		pthread_cond_signal(&pf->cond);
	}
	pthread_mutex_unlock(&pf->lock);
	return NULL;
}

/* Data sections larger than s->map_min are mapped, and the prefetch thread
 * populates and frames them s->map_chunk bytes at a time (set at open from
 * the context, ks_ctx_perfdata_tune). */
_Static_assert(PF_BUF == KS_PD_MAP_MIN, "the first window and the mapping threshold");

/* Whether the page cache maps the data section in 2 MB pieces: a 2 MB
 * piece from its middle is mapped and populated, which takes one fault
 * where the kernel maps a large folio at once (a file read back through
 * readahead on kernel 6.18's ext4) and 32 or more where it maps 4 KB pages
 * (a file as its writer left it in the cache).  Mapping a 511 MB data
 * section costs 4 ms of kernel time then, and 35 ms else, against 19-25
 * ms for reading it into the buffers: the data section is mapped only in
 * the first case (or when the context's tuning asks for it). */
static bool map_cheap(const struct pd_source *s)
{
	uint64_t lo = ((s->data_off + s->data_end) / 2) & ~(HUGE_PAGE - 1);
	struct rusage before, after;
	bool cheap = false;
	void *m;

	if (s->map_min != KS_PD_MAP_MIN)
		return true;
	if (lo < s->data_off || s->data_end - lo < HUGE_PAGE)
		return false;
	m = mmap(NULL, HUGE_PAGE, PROT_READ, MAP_SHARED, s->fd, (off_t)lo);
	if (m == MAP_FAILED)
		return false;
	if (!getrusage(RUSAGE_THREAD, &before) && !madvise(m, HUGE_PAGE, MADV_POPULATE_READ) &&
	    !getrusage(RUSAGE_THREAD, &after))
		cheap = after.ru_minflt + after.ru_majflt - before.ru_minflt - before.ru_majflt <= 2;
	munmap(m, HUGE_PAGE);
	return cheap;
}

/* Map the data section (read-only, shared with the page cache: no copy);
 * the window then is the mapping from data_off on, up to what has been
 * populated.  False where the file cannot be mapped. */
static bool map_data(struct pd_source *s)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t off = s->data_off & ~(page - 1), len = s->data_end - off;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, (off_t)off);

	if (m == MAP_FAILED)
		return false;
	free(s->mem);
	s->mem = NULL;
	s->mem_cap = 0;
	s->map = m;
	s->map_off = s->released = off;
	s->map_len = len;
	s->win_off = s->data_off;
	s->win_len = 0;
	s->buf = s->map + (s->data_off - off);
	return true;
}

/* Start the thread (once, at the first refill of a large data section,
 * with PF_BUF bytes for the window and the spare buffer).  Failing to start
 * only means reading synchronously. */
static void prefetch_start(struct pd_source *s)
{
	struct pd_prefetch *pf = &s->pf;
	sigset_t all, old;
	uint8_t *b;
	int ret;

	pf->tried = true;
	if (s->win_len)
		return;
	if (s->data_end - s->data_off > s->map_min && map_cheap(s) && map_data(s)) {
		pf->mapped = true;
	} else if (s->data_end - s->data_off <= PF_BUF) {
		return;
	} else {
		b = buffer_alloc(PF_BUF);
		if (!b)
			return;
		free(s->mem);
		s->mem = s->buf = b;
		s->mem_cap = PF_BUF;
		pf->spare = buffer_alloc(PF_BUF);
		if (!pf->spare)
			return;
		pf->spare_cap = PF_BUF;
	}
	pf->fd = s->fd;
	pf->src = s;
	pf->round_off = s->data_off;
	pf->straddle = malloc(STRADDLE_MAX);
	if (pthread_mutex_init(&pf->lock, NULL))
		goto no_thread;
	if (pthread_cond_init(&pf->cond, NULL)) {
		pthread_mutex_destroy(&pf->lock);
		goto no_thread;
	}
	/* asynchronous signals go to the caller's threads, never to ours; a
	 * fault of our own (SIGBUS: the file was cut while mapped) stays
	 * deliverable, or the kernel kills the process before the caller's
	 * handler can say what happened */
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&pf->thread, NULL, prefetch_main, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&pf->cond);
		pthread_mutex_destroy(&pf->lock);
		goto no_thread;
	}
	pf->running = true;
	return;
no_thread:
	free(pf->spare);
	pf->spare = NULL;
}

/* Post the read of the region after the window into the spare buffer. */
static void prefetch_next(struct pd_source *s)
{
	struct pd_prefetch *pf = &s->pf;
	uint64_t end = s->win_off + s->win_len, chunk;

	if (!pf->running || end >= s->data_end)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->dst = pf->mapped ? s->map + (end - s->map_off) : pf->spare + TAIL_MAX;
	pf->off = end;
	chunk = pf->mapped ? s->map_chunk : READ_SIZE;
	pf->len = s->data_end - end < chunk ? s->data_end - end : chunk;
	/* frame on from where the frames taken end, else from where the main
	 * thread is (then the job first walks over the window's records) */
	pf->walk_from = s->nframes ? s->frames_end : s->pos;
	pf->win_buf = s->buf;
	pf->win_off = s->win_off;
	pf->request = true;
	pthread_cond_signal(&pf->cond);
	pthread_mutex_unlock(&pf->lock);
	pf->posted = true;
}

/* Finish the posted read: wait for it, or if the thread has not started it
 * yet (a busy machine may not have run the thread), do it here (USE) or
 * drop it.  Returns its result (see read_full). */
static int prefetch_finish(struct pd_prefetch *pf, bool use)
{
	bool steal;
	int result;

	pthread_mutex_lock(&pf->lock);
	steal = pf->request;
	pf->request = false;
	while (pf->busy)
		pthread_cond_wait(&pf->cond, &pf->lock);
	result = pf->result;
	pthread_mutex_unlock(&pf->lock);
	pf->posted = false;
	if (steal)
		result = use ? run_job(pf, &pf->fail_off) : 0;
	return result;
}

/* The frames of the finished job, if they start where the main thread
 * is (the record across the old window's end): swap them in. */
static void frames_take(struct pd_source *s)
{
	struct pd_prefetch *pf = &s->pf;
	struct pd_entry *t = s->frames;
	size_t cap = s->frames_cap;

	s->fi = s->nframes = 0;
	if (!pf->framed || pf->frames_from != s->pos)
		return;
	s->frames = pf->frames;
	s->frames_cap = pf->frames_cap;
	s->nframes = pf->nframes;
	s->frames_end = pf->frames_end;
	pf->frames = t;
	pf->frames_cap = cap;
}

/* Refill from the posted read so the window covers [LOW, NEED_END): copy
 * the tail [LOW, window end) in front of the prefetched bytes and swap the
 * buffers.  Returns 1 if done, 0 if the prefetch does not fit the request
 * (it is then finished and dropped; the caller reads synchronously), <0 on
 * a read error. */
static int prefetch_take(struct pd_source *s, uint64_t low, uint64_t need_end,
			 struct ks_error *err)
{
	struct pd_prefetch *pf = &s->pf;
	uint64_t end = s->win_off + s->win_len, tail, cap;
	uint8_t *old;
	int result;

	if (!pf->posted)
		return 0;
	if (pf->off != end || low > end || end - low > TAIL_MAX || need_end > end + pf->len) {
		prefetch_finish(pf, false);
		return 0;
	}
	tail = end - low;
	memcpy(pf->spare + TAIL_MAX - tail, s->buf + (low - s->win_off), tail);
	result = prefetch_finish(pf, true);
	if (result)
		return read_error(s, result, pf->fail_off, err);
	old = s->mem;
	cap = s->mem_cap;
	s->mem = pf->spare;
	s->mem_cap = pf->spare_cap;
	pf->spare = old;
	pf->spare_cap = cap;
	s->buf = s->mem + TAIL_MAX - tail;
	s->win_off = low;
	s->win_len = tail + pf->len;
	frames_take(s);
	prefetch_next(s);
	return 1;
}

/* Stop and join the thread (any state: reading, idle or never started). */
static void prefetch_stop(struct pd_prefetch *pf)
{
	if (pf->running) {
		pthread_mutex_lock(&pf->lock);
		pf->quit = true;
		pthread_cond_signal(&pf->cond);
		pthread_mutex_unlock(&pf->lock);
		pthread_join(pf->thread, NULL);
		pthread_cond_destroy(&pf->cond);
		pthread_mutex_destroy(&pf->lock);
		pf->running = pf->posted = false;
	}
	free(pf->spare);
	pf->spare = NULL;
	free(pf->straddle);
	pf->straddle = NULL;
	free(pf->frames);
	free(pf->frames_tmp);
	pf->frames = pf->frames_tmp = NULL;
}

#define RELEASE_STEP (8ull << 20)

/* Give back the mapping's pages below LOW (no record from there on is
 * needed), in steps: peak memory stays a few chunks. */
static void map_release(struct pd_source *s, uint64_t low)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), to = low & ~(page - 1);
	uint8_t *from = s->map + (s->released - s->map_off);

	if (to < s->released + RELEASE_STEP || s->pf.give_back_len)
		return;
	if (s->pf.running) { /* the next job does it */
		s->pf.give_back = from;
		s->pf.give_back_len = to - s->released;
	} else {
		madvise(from, to - s->released, MADV_DONTNEED);
	}
	s->released = to;
}

static void map_trim(struct pd_source *s, uint64_t from, uint64_t to);

/* The window of a mapped data section up to NEED_END at least: the chunk
 * the thread populated (and framed), or further by itself.  LOW: the lowest
 * file offset still needed. */
static int map_fill(struct pd_source *s, uint64_t low, uint64_t need_end, struct ks_error *err)
{
	struct pd_prefetch *pf = &s->pf;
	uint64_t end = s->win_off + s->win_len;
	int result;

	if (pf->posted) {
		result = prefetch_finish(pf, true);
		if (result)
			return read_error(s, result, pf->fail_off, err);
		if (pf->off == end) {
			s->win_len += pf->len;
			frames_take(s);
		}
	}
	end = s->win_off + s->win_len;
	if (need_end > end) {
		end = s->data_end - need_end > s->map_chunk ? need_end + s->map_chunk : s->data_end;
		s->win_len = end - s->win_off;
	}
	map_release(s, low);
	/* the pending records far behind (long rounds, in segments) are read
	 * again when merged: their pages need not stay */
	if (s->trimmed < low)
		s->trimmed = low;
	if (need_end > s->trimmed + trim_hold(s) + TRIM_STEP) {
		uint64_t to = (need_end - trim_hold(s)) & ~(TRIM_STEP - 1);

		map_trim(s, s->trimmed, to);
		s->trimmed = to;
	}
	prefetch_next(s);
	return 0;
}

/* Switch a read data section (one map_cheap() found dearer to map) to
 * the mapping: the window would have to hold more than a prefetch's tail
 * (a round of more than TAIL_MAX bytes, whose reads would be copied and
 * moved ever more), while the mapping holds any round, and map_trim()
 * keeps its pages few.  False if it cannot be mapped. */
static bool map_switch(struct pd_source *s)
{
	uint64_t end = s->win_off + s->win_len;

	if (s->pf.posted)
		prefetch_finish(&s->pf, false);
	if (!map_data(s))
		return false;
	s->win_len = end - s->win_off;
	s->pf.mapped = true;
	free(s->pf.spare);
	s->pf.spare = NULL;
	s->pf.spare_cap = 0;
	return true;
}

/* Refill so the window covers [OFF, OFF + N) (inside the data section),
 * keeping every queued record: from the prefetched region when it fits,
 * else by compacting and reading synchronously.  Only called before the
 * next record is decoded: it moves and may reallocate the window. */
static int window_fill(struct pd_source *s, uint64_t off, uint64_t n, struct ks_error *err)
{
	uint64_t low = pending_low(s, off), end, len;
	int ret;

	s->fi = s->nframes = 0; /* they end before OFF */
	if (!s->pf.tried)
		prefetch_start(s);
	if (s->map)
		return map_fill(s, low, off + n, err);
	ret = prefetch_take(s, low, off + n, err);
	if (ret)
		return ret < 0 ? -1 : 0;
	if (s->pf.running && off + n - low > TAIL_MAX &&
	    s->data_end - s->data_off > s->map_min && map_switch(s))
		return map_fill(s, low, off + n, err);
	window_compact(s, low);
	if (window_reserve(s, off + n - s->win_off, err) < 0)
		return -1;
	end = s->win_off + s->win_len;
	len = s->mem_cap - s->win_len;
	if (len > s->data_end - end)
		len = s->data_end - end;
	if (pread_full(s, end, s->buf + s->win_len, len, err) < 0)
		return -1;
	s->win_len += len;
	prefetch_next(s);
	return 0;
}

/* ---- record decoding ---- */

/* Walk the sample_id_all trailer that ends at END. */
static void parse_trailer(struct pd_source *s, const struct pd_attr *a, const uint8_t *end,
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

static int short_sample(struct pd_source *s, uint64_t off, const char *what, struct ks_error *err)
{
	return ks_error_at(err, s->base.path, off,
			   "sample shorter than its sample_type needs (at %s)", what);
}

#define NEED(n, what)                                          \
	do {                                                   \
		if ((uint64_t)(end - p) < (uint64_t)(n))       \
			return short_sample(s, off, what, err); \
	} while (0)

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
			return short_sample(s, off, "READ", err);
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
		return short_sample(s, off, "CALLCHAIN", err);
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
		return short_sample(s, off, "BRANCH_STACK", err);
	*pp = p + 24 * nr;
	return 0;
}

/* The fixed slots, IDENTIFIER .. PERIOD, of the sample body at P (size
 * already checked), each from its offset: no walk, so no chain of
 * dependent adds.  Returns the end of the slots. */
HOT const uint8_t *sample_fixed(const struct pd_attr *a, const uint8_t *p, struct ks_record *r,
			       bool swap)
{
	if (a->identifier_at >= 0)
		r->id = ld64(p + a->identifier_at, swap);
	if (a->ip_at >= 0)
		r->ip = ld64(p + a->ip_at, swap);
	if (a->tid_at >= 0) {
		r->pid = (int32_t)ld32(p + a->tid_at, swap);
		r->tid = (int32_t)ld32(p + a->tid_at + 4, swap);
	}
	if (a->sample_type & S_TIME)
		r->ts = r->raw_ts = ld64(p + a->time_pos, swap);
	if (a->id_at >= 0)
		r->id = ld64(p + a->id_at, swap);
	if (a->cpu_at >= 0)
		r->cpu = (int32_t)ld32(p + a->cpu_at, swap);
	if (a->period_at >= 0)
		r->period = ld64(p + a->period_at, swap);
	return p + a->fixed_size;
}

/* The variable part after PERIOD, in the documented order. */
static int sample_variable(struct pd_source *s, const struct pd_attr *a, const uint8_t *p,
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

/* A sample of a fixed layout (see pd_attr) in one bounds check.  Returns
 * false when the sample is too short: the general walk then names what is
 * missing. */
HOT bool fixed_sample(const struct pd_attr *a, const uint8_t *rec, uint32_t size,
		     struct ks_record *r, bool swap)
{
	uint32_t body = size - 8, raw = 0, left;
	const uint8_t *p = rec + 8;

	if (!(a->sample_type & S_RAW)) {
		if (body < a->fixed_size + a->after_raw)
			return false;
	} else {
		if (body < a->fixed_size + 4)
			return false;
		raw = ld32(p + a->fixed_size, swap);
		left = body - a->fixed_size - 4;
		if (raw > left || left - raw < a->after_raw)
			return false;
		r->data = p + a->fixed_size + 4;
		r->size = raw;
	}
	sample_fixed(a, p, r, swap);
	return true;
}

HOT int decode_sample(struct pd_source *s, const struct pd_attr *a, const uint8_t *rec,
		      uint32_t size, uint64_t off, struct ks_record *r, struct ks_error *err,
		      bool swap)
{
	const uint8_t *p = rec + 8, *end = rec + size;

	if (!a->fixed_layout || !fixed_sample(a, rec, size, r, swap)) {
		NEED(a->fixed_size, "the fixed fields");
		p = sample_fixed(a, p, r, swap);
		if (sample_variable(s, a, p, end, off, r, err) < 0)
			return -1;
	}
	r->type = KS_REC_EVENT;
	r->event = a->event;
	if (a->type == TYPE_TRACEPOINT && !a->event)
		s->base.stats.unknown_events++;
	return 1;
}

#undef NEED

static void decode_comm(struct pd_source *s, const uint8_t *rec, const uint8_t *end,
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

static void decode_task(struct pd_source *s, uint32_t type, const uint8_t *rec,
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

static void decode_lost(struct pd_source *s, uint64_t lost, struct ks_record *r)
{
	r->type = KS_REC_LOST;
	r->lost = lost;
	s->base.stats.lost_events += lost;
	s->base.stats.lost_records++;
}

/* Zero R, then cpu/tid/pid = -1 (unknown).  Done per record, so in
 * constant-size pieces the compiler turns into vector stores rather than one
 * "rep stos" with its large start-up cost. */
static inline void record_clear(struct ks_record *r)
{
	char *p = (char *)r;

	_Static_assert(sizeof(*r) > 128 && sizeof(*r) <= 192, "adjust record_clear()");
	memset(p, 0, 64);
	memset(p + 64, 0, 64);
	memset(p + 128, 0, sizeof(*r) - 128);
	r->cpu = r->tid = r->pid = -1;
}

/* Decode the kernel record at OFF (of attr A, or NULL) into R.  Returns
 * 1 if it is delivered, 0 if it is a kind the reader skips. */
HOT int decode_record(struct pd_source *s, uint64_t off, const struct pd_attr *a,
		      struct ks_record *r, struct ks_error *err, bool swap)
{
	const uint8_t *rec = s->buf + (off - s->win_off);
	uint32_t type = ld32(rec, swap);
	uint32_t size = ld16(rec + 6, swap);
	const uint8_t *end = rec + size;
	uint32_t body_min;

	record_clear(r);
	r->offset = off;
	r->misc = ld16(rec + 4, swap);
	if (type == R_SAMPLE)
		return decode_sample(s, a, rec, size, off, r, err, swap);
	if (a && a->sample_id_all && a->trailer_size <= size - 8) {
		parse_trailer(s, a, end, r);
		end -= a->trailer_size;
	}
	body_min = type == R_COMM ? 16 : type == R_FORK || type == R_EXIT ? 32 :
		   type == R_LOST ? 24 : type == R_LOST_SAMPLES ? 16 : 8;
	if ((uint64_t)(end - rec) < body_min)
		return ks_error_at(err, s->base.path, off, "record of type %u is too short (%u bytes)",
				   type, size);
	switch (type) {
	case R_COMM:
		decode_comm(s, rec, end, r);
		return 1;
	case R_FORK:
	case R_EXIT:
		decode_task(s, type, rec, r);
		return 1;
	case R_LOST:
		decode_lost(s, rd64(s, rec + 16), r);
		return 1;
	case R_LOST_SAMPLES:
		decode_lost(s, rd64(s, rec + 8), r);
		return 1;
	default:
		s->base.stats.skipped++;
		return 0;
	}
}

/* ---- reading the data section ---- */

/* PERF_RECORD_ID_INDEX: {id, idx, cpu, tid} entries.  As in perf, idx is
 * the mmap index, not the attr: the entries only refine ids that the attr id
 * arrays already map, so they are checked but do not change the map. */
static int id_index(struct pd_source *s, const uint8_t *rec, uint32_t size, uint64_t off,
		    struct ks_error *err)
{
	uint64_t nr;

	if (size < 16)
		return ks_error_at(err, s->base.path, off, "ID_INDEX record too short");
	nr = rd64(s, rec + 8);
	if (nr > (size - 16) / 32)
		return ks_error_at(err, s->base.path, off, "ID_INDEX holds %llu entries, "
				   "more than its size allows", (unsigned long long)nr);
	return 0;
}

/* perf's evlist__event2evsel(): the attr of a kernel record, -1 if unknown. */
HOT int record_attr(const struct pd_source *s, struct pd_idcache *idc, uint32_t type,
		    const uint8_t *rec, uint32_t size, bool swap)
{
	uint32_t n = (size - 8) / 8;

	if (s->nr_attrs == 1)
		return 0;
	if (type != R_SAMPLE && !s->attrs[0].sample_id_all)
		return 0;
	if (type == R_SAMPLE) {
		if (s->id_pos < 0)
			return 0;
		if ((uint32_t)s->id_pos >= n)
			return -1;
		return attr_of_id(s, idc, ld64(rec + 8 + 8 * (uint32_t)s->id_pos, swap));
	}
	if (s->is_pos < 0)
		return 0;
	if ((uint32_t)s->is_pos > n)
		return -1;
	return attr_of_id(s, idc, ld64(rec + 8 + 8 * (n - (uint32_t)s->is_pos), swap));
}

/* perf's evsel__parse_sample_timestamp(); *ts = ~0 when there is none. */
HOT int record_ts(const struct pd_source *s, const struct pd_attr *a, uint32_t type,
		  const uint8_t *rec, uint32_t size, uint64_t off, uint64_t *ts,
		  struct ks_error *err, bool swap)
{
	*ts = UINT64_MAX;
	if (!(a->sample_type & S_TIME))
		return 0;
	if (type == R_SAMPLE) {
		if (size - 8 < a->fixed_size)
			return ks_error_at(err, s->base.path, off,
					   "sample of %u bytes is shorter than its sample_type needs",
					   size);
		*ts = ld64(rec + 8 + a->time_pos, swap);
		return 0;
	}
	if (!a->sample_id_all || a->trailer_size > size - 8)
		return 0;
	*ts = ld64(rec + size - a->trailer_size + ((a->sample_type & S_TID) ? 8 : 0), swap);
	return 0;
}

/* The payload a user record carries after its SIZE bytes (AUXTRACE data,
 * tracing data). */
static uint64_t user_payload(const struct pd_source *s, uint32_t type, const uint8_t *rec,
			     uint32_t size)
{
	if (type == R_AUXTRACE && size >= 16)
		return rd64(s, rec + 8);
	if (type == R_HEADER_TRACING_DATA && size >= 12)
		return rd32(s, rec + 8);
	return 0;
}

/* Handle a user record (type >= 64); *len may grow (AUXTRACE payload). */
static int user_record(struct pd_source *s, uint32_t type, const uint8_t *rec, uint32_t size,
		       uint64_t off, uint64_t *len, struct ks_error *err)
{
	uint64_t extra = user_payload(s, type, rec, size);

	if (type == R_FINISHED_ROUND) {
		s->rounds++;
		flush_queue(s, false);
		return 0;
	}
	if (type == R_ID_INDEX)
		return id_index(s, rec, size, off, err);
	if (extra > s->data_end - off - size)
		return ks_error_at(err, s->base.path, off,
				   "record payload of %llu bytes runs past the data section",
				   (unsigned long long)extra);
	*len += extra;
	s->base.stats.skipped++;
	return 0;
}

/* ---- queueing many entries at once ---- */

/* The key of the record of TYPE at OFF with attr index ATTR (pd_entry). */
static inline uint64_t queue_key(const struct pd_source *s, uint64_t off, uint32_t type,
				 int attr)
{
	if (type != R_SAMPLE)
		return off << 16 | (uint64_t)(attr + 1);
	return off << 16 | KEY_SAMPLE | (s->attrs[attr].skip ? KEY_SKIP : 0) | (uint64_t)(attr + 1);
}

/* The queue's tail, in locals while a loop queues entries (stores to the
 * entries would make the compiler reload the source's fields). */
struct qtail {
	struct pd_entry *q;
	uint64_t n, cap, q_max, last_flush, max_ts, out_of_order;
	bool empty;
};

static inline struct qtail qtail_load(const struct pd_source *s)
{
	return (struct qtail){ s->q, s->q_n, s->q_cap, s->q_max, s->last_flush,
			       s->max_timestamp, 0, queue_idle(s) };
}

/* queue_push() with room checked by the caller (t->n < t->cap). */
static inline void qtail_push(struct qtail *t, struct pd_entry e)
{
	t->out_of_order += e.ts < t->last_flush;
	t->q[t->n++] = e;
	/* perf sets max_timestamp only when the event goes to the queue's tail */
	if (t->empty || e.ts >= t->q_max) {
		t->max_ts = e.ts;
		t->q_max = e.ts;
	}
	t->empty = false;
}

static inline void qtail_store(const struct qtail *t, struct pd_source *s)
{
	if (t->n != s->q_n)
		s->q_sorted = false;
	s->q_n = t->n;
	s->q_max = t->q_max;
	s->max_timestamp = t->max_ts;
	s->base.stats.out_of_order += t->out_of_order;
}

/* The queue entry of the sample REC (SIZE bytes, all there) at OFF, as
 * read_records() would queue it; false when it is not a sample with a time
 * that read_records() would queue (it then takes it itself). */
HOT bool sample_entry(const struct pd_source *s, struct pd_idcache *idc, const uint8_t *rec,
		      uint32_t size, uint64_t off, struct pd_entry *e, bool swap)
{
	const struct pd_attr *a;
	uint64_t ts;
	int attr = 0;

	if (ld32(rec, swap) != R_SAMPLE || size < 8)
		return false;
	if (s->nr_attrs > 1 && s->id_pos >= 0) {
		uint32_t id_at = 8 + 8 * (uint32_t)s->id_pos;

		if (size < id_at + 8)
			return false;
		attr = attr_of_id(s, idc, ld64(rec + id_at, swap));
		if (attr < 0)
			return false;
	}
	a = &s->attrs[attr];
	if (!(a->sample_type & S_TIME) || size - 8 < a->fixed_size)
		return false;
	ts = ld64(rec + 8 + a->time_pos, swap);
	if (!ts || ts == UINT64_MAX)
		return false;
	*e = (struct pd_entry){ ts, queue_key(s, off, R_SAMPLE, attr) };
	return true;
}

/* The samples with a time that follow s->pos and lie wholly in the window
 * (nearly every record of a recording) queued in one loop.  Stops before
 * the first record that needs more (another type, no time, an unknown id,
 * a full queue, a damaged header): read_records() takes that one. */
HOT void queue_samples(struct pd_source *s, bool swap)
{
	uint64_t off = s->pos, win_end = s->win_off + s->win_len;
	struct qtail t = qtail_load(s);

	while (win_end - off >= 8 && t.n < t.cap) {
		const uint8_t *rec = s->buf + (off - s->win_off);
		uint32_t size = ld16(rec + 6, swap);
		struct pd_entry e;

		if (size > win_end - off || !sample_entry(s, s->idc, rec, size, off, &e, swap))
			break;
		qtail_push(&t, e);
		off += size;
	}
	s->pos = off;
	qtail_store(&t, s);
}

/* ---- framing in the prefetch thread ---- */

/* N bytes of the record at POS for a job: in the main thread's window, in
 * the chunk just read, or assembled from both when it starts before the
 * chunk and ends in it.  NULL when they are not all there. */
static __attribute__((noinline)) const uint8_t *job_bytes_slow(struct pd_prefetch *pf,
								uint64_t pos, uint64_t n)
{
	uint64_t start = pf->off, end = pf->off + pf->len;

	if (pos > end || n > end - pos)
		return NULL;
	if (pos >= start)
		return pf->dst + (pos - start);
	if (pos < pf->win_off)
		return NULL;
	if (n <= start - pos)
		return pf->win_buf + (pos - pf->win_off);
	if (n > STRADDLE_MAX)
		return NULL;
	memcpy(pf->straddle, pf->win_buf + (pos - pf->win_off), start - pos);
	memcpy(pf->straddle + (start - pos), pf->dst, pos + n - start);
	return pf->straddle;
}

static inline const uint8_t *job_bytes(struct pd_prefetch *pf, uint64_t pos, uint64_t n)
{
	if (pos >= pf->off && pos - pf->off <= pf->len && n <= pf->len - (pos - pf->off))
		return pf->dst + (pos - pf->off);
	return job_bytes_slow(pf, pos, n);
}

/* The first record from walk_from on that does not end before the chunk
 * (the main thread frames those); UINT64_MAX if a header on the way is
 * damaged (the main thread then reports it). */
static uint64_t job_first(const struct pd_source *s, const struct pd_prefetch *pf)
{
	uint64_t pos = pf->walk_from, start = pf->off;

	if (pos < pf->win_off)
		return UINT64_MAX;
	while (pos < start && start - pos >= 8) {
		const uint8_t *rec = pf->win_buf + (pos - pf->win_off);
		uint32_t type = rd32(s, rec), size = rd16(s, rec + 6);
		uint64_t extra;

		if (size < 8 || size > s->data_end - pos)
			return UINT64_MAX;
		if (size > start - pos)
			break;
		extra = type >= R_USER_START ? user_payload(s, type, rec, size) : 0;
		if (extra > s->data_end - pos - size)
			return UINT64_MAX;
		pos += size + extra;
	}
	return pos;
}

static int frames_grow(struct pd_prefetch *pf)
{
	size_t cap = pf->frames_cap ? 2 * pf->frames_cap : 16384;
	struct pd_entry *f = realloc(pf->frames, cap * sizeof(*f));

	if (!f)
		return -1;
	pf->frames = f;
	pf->frames_cap = cap;
	return 0;
}

/* SRC[0, LEN) into DST, the samples of events not selected (NSKIP of
 * them) after the others, each part in its order; branch-free, as which
 * part an entry goes to is unpredictable. */
static void split_copy(const struct pd_entry *src, size_t len, size_t nskip,
		       struct pd_entry *dst)
{
	struct pd_entry *keep = dst, *skip = dst + len - nskip;
	size_t i;

	for (i = 0; i < len; i++) {
		uintptr_t to_skip = !!(src[i].key & KEY_SKIP), pick = -to_skip;
		uintptr_t to = (uintptr_t)keep ^ (((uintptr_t)keep ^ (uintptr_t)skip) & pick);

		*(struct pd_entry *)to = src[i];
		skip += to_skip;
		keep += to_skip ^ 1;
	}
}

/* merge() of A[0, NA) and B[0, NB) whose result goes through split_copy():
 * one pass. */
static void merge_split(const struct pd_entry *a, size_t na, const struct pd_entry *b, size_t nb,
			size_t nskip, struct pd_entry *out)
{
	const struct pd_entry *ea = a + na, *eb = b + nb;
	struct pd_entry *keep = out, *skip = out + na + nb - nskip;

	while (a < ea || b < eb) {
		/* from B when A is done or B's head is earlier (ties: A first) */
		uintptr_t from_b = a == ea || (b < eb && b->ts < a->ts), pick = -from_b;
		const struct pd_entry *e =
			(const struct pd_entry *)((uintptr_t)a ^ (((uintptr_t)a ^ (uintptr_t)b) & pick));
		uintptr_t to_skip = !!(e->key & KEY_SKIP), spick = -to_skip;
		uintptr_t to = (uintptr_t)keep ^ (((uintptr_t)keep ^ (uintptr_t)skip) & spick);

		*(struct pd_entry *)to = *e;
		b += from_b;
		a += from_b ^ 1;
		skip += to_skip;
		keep += to_skip ^ 1;
	}
}

/* The entries F[i, j) as one run behind a MARK_RUN head at OUT[o] (see
 * runs_build); returns the frames' end in OUT. */
static size_t run_emit(struct pd_entry *f, size_t i, size_t j, struct pd_entry *out, size_t o)
{
	struct pd_entry *sorted;
	size_t k, first_drop = 0, drops = 0, nskip = !!(f[i].key & KEY_SKIP), len = j - i;

	/* where its time first goes back: a round's records are a sorted
	 * stretch per CPU */
	for (k = i + 1; k < j; k++) {
		bool drop = f[k].ts < f[k - 1].ts;

		if (drop && !drops)
			first_drop = k;
		drops += drop;
		nskip += !!(f[k].key & KEY_SKIP);
	}
	out[o] = (struct pd_entry){ (uint64_t)nskip << 32 | (uint64_t)len << 2 | MARK_RUN,
				    f[i].key & ~0xffffull };
	if (!nskip) {
		if (!drops) {
			memcpy(out + o + 1, f + i, len * sizeof(*f));
		} else if (drops == 1) {
			merge(f + i, first_drop - i, f + first_drop, j - first_drop, out + o + 1);
		} else {
			sorted = sort_entries(f + i, out + o + 1, len);
			if (sorted != out + o + 1)
				memcpy(out + o + 1, sorted, len * sizeof(*sorted));
		}
	} else if (!drops) {
		split_copy(f + i, len, nskip, out + o + 1);
	} else if (drops == 1) {
		merge_split(f + i, first_drop - i, f + first_drop, j - first_drop, nskip,
			    out + o + 1);
	} else {
		/* sorted in one of the two, split into the other */
		sorted = sort_entries(f + i, out + o + 1, len);
		if (sorted == f + i) {
			split_copy(f + i, len, nskip, out + o + 1);
		} else {
			split_copy(out + o + 1, len, nskip, f + i);
			memcpy(out + o + 1, f + i, len * sizeof(*f));
		}
	}
	return o + 1 + len;
}

/* The frames F[0, N) in runs: each run of queue entries between markers
 * sorted by time, stably, behind a MARK_RUN head, into pf->frames_tmp,
 * which then becomes pf->frames.  The queue gets a round as one sorted
 * run, which its flush merges with what is left of the round before in
 * one pass, and the flush's result does not change: a stable sort of the
 * entries pushed gives the same result whatever their order was, and the
 * counts of out-of-order entries and the queue's maximum time do not
 * depend on it (queue_run).  A run is a round's stretches of one CPU's
 * records each in time order: the scan that finds its end counts where
 * time goes back, so that a run of one or two stretches (one CPU or two)
 * is copied or merged at once, without sort_entries()' scans.  In a round
 * past SEG_ROUND chunks (from the last FINISHED_ROUND this thread framed),
 * a stretch in time order of SEG_MIN entries or more goes as a segment
 * (MARK_SEG) instead: the main thread merges it from the file, so that a
 * long round's records need no memory of their own.  END: the file offset after the
 * last frame's record.  Returns the number of frames, 0 when memory for
 * them could not be had (the main thread then frames the chunk). */
static size_t runs_build(struct pd_prefetch *pf, size_t n, uint64_t end)
{
	struct pd_entry *f = pf->frames, *out;
	size_t i, j, k, e, piece, o = 0, cap = 2 * n + 1, c;
	uint64_t big = SEG_ROUND * (pf->mapped ? pf->src->map_chunk : READ_SIZE);

	if (big > pf->src->base.limits.memory / 8) /* a lowered budget */
		big = pf->src->base.limits.memory / 8;

	if (cap > pf->tmp_cap) { /* the frames and a head per run: a run per marker, one more */
		out = realloc(pf->frames_tmp, cap * sizeof(*out));
		if (!out)
			return 0;
		pf->frames_tmp = out;
		pf->tmp_cap = cap;
	}
	out = pf->frames_tmp;
	for (i = 0; i < n; i = j) {
		if (!(f[i].key & KEY_ATTR)) {
			if (MARK_KIND(f[i]) == MARK_FLUSH)
				pf->round_off = f[i].key >> 16;
			out[o++] = f[i];
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < n && j - i < RUN_MAX && (f[j].key & KEY_ATTR); j++)
			;
		if ((f[i].key >> 16) - pf->round_off < big) { /* a round still small */
			o = run_emit(f, i, j, out, o);
			continue;
		}
		/* the run's stretches in time order: the long ones are
		 * segments, the short ones between them runs */
		for (piece = k = i; k < j; k = e) {
			for (e = k + 1; e < j && f[e].ts >= f[e - 1].ts; e++)
				;
			if (e - k < SEG_MIN)
				continue;
			if (piece < k)
				o = run_emit(f, piece, k, out, o);
			out[o++] = (struct pd_entry){ (uint64_t)(e - k) << 2 | MARK_SEG,
						      f[k].key & ~0xffffull };
			out[o++] = (struct pd_entry){ f[k].ts,
						      (e < n ? f[e].key >> 16 : end) << 16 };
			out[o++] = (struct pd_entry){ f[e - 1].ts, 0 };
			piece = e;
		}
		if (piece < j)
			o = run_emit(f, piece, j, out, o);
	}
	pf->frames_tmp = pf->frames;
	pf->frames = out;
	c = pf->tmp_cap;
	pf->tmp_cap = pf->frames_cap;
	pf->frames_cap = c;
	return o;
}

/* The frame of the record REC (SIZE bytes) at POS; *LEN its length with
 * any payload after it.  False when it cannot be framed: the frames end. */
HOT bool frame_record(const struct pd_source *s, struct pd_prefetch *pf, const uint8_t *rec,
		      uint32_t size, uint64_t pos, struct pd_entry *f, uint64_t *len, bool swap)
{
	uint32_t type = ld32(rec, swap);
	struct ks_error scratch;
	uint64_t ts;
	int attr;

	*f = (struct pd_entry){ MARK_MAIN, pos << 16 };
	*len = size;
	if (type >= R_USER_START) {
		uint64_t extra = user_payload(s, type, rec, size);

		if (extra > s->data_end - pos - size)
			return false;
		*len += extra;
		if (type == R_FINISHED_ROUND)
			f->ts = MARK_FLUSH;
		return true;
	}
	attr = record_attr(s, pf->idc, type, rec, size, swap);
	if (attr < 0 || record_ts(s, &s->attrs[attr], type, rec, size, pos, &ts, &scratch, swap) < 0 ||
	    !ts || ts == UINT64_MAX)
		return true;
	*f = (struct pd_entry){ ts, queue_key(s, pos, type, attr) };
	return true;
}

/* The framing loop asks for the bytes this far ahead: it is the first to
 * touch them, and the hardware's prefetch stops at page boundaries (2048
 * and 4096 took 3-4% off the wall time of `kvmscope stat` on the benchmark
 * file, median of 21 interleaved rounds; 512 less). */
#define FRAME_PREFETCH 2048

/* The samples with a time from POS on that lie wholly in the chunk framed
 * in one loop (*NP frames so far); returns where it stopped. */
HOT uint64_t frame_samples(const struct pd_source *s, struct pd_prefetch *pf, uint64_t pos,
			   size_t *np, bool swap)
{
	uint64_t end = pf->off + pf->len;
	size_t n = *np;

	while (pos >= pf->off && end - pos >= 8 && n < pf->frames_cap) {
		const uint8_t *rec = pf->dst + (pos - pf->off);
		uint32_t size = ld16(rec + 6, swap);

		__builtin_prefetch(rec + FRAME_PREFETCH);
		if (size > end - pos || !sample_entry(s, pf->idc, rec, size, pos, &pf->frames[n], swap))
			break;
		n++;
		pos += size;
	}
	*np = n;
	return pos;
}

/* Frame the records from the first that does not end before the chunk up
 * to the first that does not end in it (or cannot be framed). */
HOT void frame_job(const struct pd_source *s, struct pd_prefetch *pf, bool swap)
{
	uint64_t pos = job_first(s, pf), len;
	size_t n = 0;

	if (pos == UINT64_MAX)
		return;
	pf->frames_from = pos;
	for (;;) {
		const uint8_t *rec;
		uint32_t size;

		pos = frame_samples(s, pf, pos, &n, swap);
		rec = job_bytes(pf, pos, 8);
		if (!rec)
			break;
		size = ld16(rec + 6, swap);
		if (size < 8 || size > s->data_end - pos)
			break;
		rec = job_bytes(pf, pos, size);
		if (!rec || (n == pf->frames_cap && frames_grow(pf) < 0) ||
		    !frame_record(s, pf, rec, size, pos, &pf->frames[n], &len, swap))
			break;
		n++;
		pos += len;
	}
	pf->nframes = runs_build(pf, n, pos);
	pf->frames_end = pos;
	pf->framed = pf->nframes > 0 || n == 0;
}

static void frame_job_any(struct pd_prefetch *pf)
{
	if (pf->src->swap)
		frame_job(pf->src, pf, true);
	else
		frame_job(pf->src, pf, false);
}

/* The next record after the frames up to FI. */
static inline uint64_t frames_pos(const struct pd_source *s, size_t fi)
{
	return fi < s->nframes ? s->frames[fi].key >> 16 : s->frames_end;
}

/* How many of the sorted entries F[0, N) come before time T. */
static inline uint64_t count_before(const struct pd_entry *f, uint64_t n, uint64_t t)
{
	uint64_t i = 0;

	while (i < n && f[i].ts < t)
		i++;
	return i;
}

/* Queue the run whose MARK_RUN head is at s->fi, as queue_push() one by
 * one would: each of its parts is sorted, so their last entries are their
 * latest, and the entries before the last flush's time are at their
 * starts.  Where the queue's entries are in time order, the run's first
 * part is merged with them at once (a stable merge: the queue's entries
 * first among equal times, as the flush's stable sort would order them),
 * so the flush need not sort; its second part, the samples of events not
 * selected, goes to s->ph, out of the delivery loop's way. */
static int queue_run(struct pd_source *s, struct ks_error *err)
{
	const struct pd_entry *f = &s->frames[s->fi + 1];
	uint64_t n = MARK_RUN_LEN(s->frames[s->fi]), nskip = MARK_RUN_SKIP(s->frames[s->fi]);
	uint64_t nk = n - nskip, run_max, pending = s->q_n - s->q_head;
	const struct pd_entry *fs = f + nk;
	bool idle = queue_idle(s), sorted = s->q_sorted || !pending;
	struct pd_entry *t;

	if (!nk) {
		/* only samples of events not selected: the queue is as it was */
	} else if (sorted && pending && s->q[s->q_n - 1].ts > f[0].ts) {
		/* into the scratch array's start (no entry is ready: the
		 * frames are taken only then) */
		if (queue_grow_to(s, pending + nk, err) < 0)
			return -1;
		merge(s->q + s->q_head, pending, f, nk, s->tmp);
		t = s->q;
		s->q = s->tmp;
		s->tmp = t;
		s->q_head = s->q_ready = 0;
		s->q_n = pending;
		s->q_sorted = true;
	} else {
		if (queue_reserve(s, nk, err) < 0)
			return -1;
		memcpy(s->q + s->q_n, f, nk * sizeof(*f));
		s->q_sorted = sorted;
	}
	if (nskip) {
		if (s->ph_cap - s->ph_n < nskip && skipped_reserve(s, nskip, err) < 0)
			return -1;
		if (s->ph_n == s->ph_head)
			s->ph_sorted = true;
		else if (s->ph[s->ph_n - 1].ts > fs[0].ts)
			s->ph_sorted = false;
		memcpy(s->ph + s->ph_n, fs, nskip * sizeof(*fs));
		s->ph_n += nskip;
	}
	s->base.stats.out_of_order += count_before(f, nk, s->last_flush) +
				      count_before(fs, nskip, s->last_flush);
	/* the run's latest: the later of its two parts' last */
	run_max = nk ? f[nk - 1].ts : 0;
	if (nskip && fs[nskip - 1].ts > run_max)
		run_max = fs[nskip - 1].ts;
	if (n && (idle || run_max >= s->q_max)) {
		s->q_max = run_max;
		s->max_timestamp = run_max;
	}
	s->q_n += nk;
	s->framed_ahead += n;
	s->fi += 1 + n;
	s->pos = frames_pos(s, s->fi);
	return 0;
}

/* ---- segments ---- */

/* Whether segment A's next record comes before B's: by time, then by file
 * offset, the order of the stable sort of the entries as pushed. */
static inline bool seg_before(const struct pd_seg *a, const struct pd_seg *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->off < b->off);
}

/* Restore the heap order of s->seg from I down. */
static inline void seg_down(struct pd_source *s, uint32_t i)
{
	struct pd_seg *h = s->seg, x = h[i];
	uint32_t n = s->nseg, c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && seg_before(&h[c + 1], &h[c]))
			c++;
		if (!seg_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void seg_up(struct pd_source *s, uint32_t i)
{
	struct pd_seg *h = s->seg, x = h[i];

	while (i && seg_before(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/* The time and queue key of the record at G's offset, as frame_record()
 * made them; false if it has none (the file changed under us). */
HOT bool seg_load(struct pd_source *s, struct pd_seg *g, bool swap)
{
	const uint8_t *rec = s->buf + (g->off - s->win_off);
	uint32_t type = ld32(rec, swap), size = ld16(rec + 6, swap);
	struct ks_error scratch;
	uint64_t ts;
	int attr;

	if (size < 8 || size > g->end - g->off)
		return false;
	attr = record_attr(s, s->idc, type, rec, size, swap);
	if (attr < 0 || record_ts(s, &s->attrs[attr], type, rec, size, g->off, &ts, &scratch,
				  swap) < 0 || !ts || ts == UINT64_MAX)
		return false;
	g->ts = ts;
	g->key = queue_key(s, g->off, type, attr);
	return true;
}

/* Give back the mapped pages of the file bytes [FROM, TO) (page-aligned
 * inward): a pending record there faults its page in again from the page
 * cache when it is decoded, so that the pages of pending rounds do not
 * stay in memory (a round can be far larger than the budget). */
static void map_trim(struct pd_source *s, uint64_t from, uint64_t to)
{
	uint64_t lo = (from + s->page - 1) & ~(s->page - 1), hi = to & ~(s->page - 1);

	if (lo < s->map_off)
		lo = s->map_off;
	if (hi > lo)
		madvise(s->map + (lo - s->map_off), hi - lo, MADV_DONTNEED);
}

/* Segment G's records before time T (at its start: it is sorted). */
static uint64_t seg_count_before(struct pd_source *s, struct pd_seg g, uint64_t t, bool swap)
{
	uint64_t n = 0;

	while (g.off < g.end && seg_load(s, &g, swap) && g.ts < t) {
		n++;
		g.off += ld16(s->buf + (g.off - s->win_off) + 6, swap);
	}
	return n;
}

/* Queue the segment whose MARK_SEG head is at s->fi, as queue_push() one
 * by one would its entries (see queue_run): a cursor at its first record,
 * or, when it continues the stretch of a pending one (cut where a chunk
 * ended), that one made longer. */
HOT int queue_seg(struct pd_source *s, struct ks_error *err, bool swap)
{
	const struct pd_entry *f = &s->frames[s->fi];
	uint64_t n = MARK_RUN_LEN(f[0]), first = f[1].ts, last = f[2].ts;
	struct pd_seg g = { .off = f[0].key >> 16, .end = f[1].key >> 16, .last = last };
	bool idle = queue_idle(s);
	struct pd_seg *h;
	uint32_t i;

	g.rel = g.off;
	if (s->fi + 3 > s->nframes || !seg_load(s, &g, swap) || g.ts != first)
		return ks_error_at(err, s->base.path, g.off, "record changed while being read");
	if (first < s->last_flush)
		s->base.stats.out_of_order += seg_count_before(s, g, s->last_flush, swap);
	for (i = 0; i < s->nseg && s->seg[i].end != g.off; i++)
		;
	if (i < s->nseg && s->seg[i].last <= first) {
		s->seg[i].end = g.end;
		s->seg[i].last = last;
	} else {
		if (s->nseg == s->seg_cap) {
			uint32_t cap = s->seg_cap ? 2 * s->seg_cap : 16;

			if (ordering_budget(s, s->q_cap + cap * sizeof(*h) / sizeof(struct pd_entry),
					    window_held(s), g.off, err) < 0)
				return -1;
			h = realloc(s->seg, cap * sizeof(*h));
			if (!h)
				return ks_error_set(err, "%s: out of memory", s->base.path);
			s->seg = h;
			s->seg_cap = cap;
		}
		s->seg[s->nseg++] = g;
		seg_up(s, s->nseg - 1);
	}
	if (idle || last >= s->q_max) {
		s->q_max = last;
		s->max_timestamp = last;
	}
	s->framed_ahead += n;
	s->fi += 3;
	s->pos = frames_pos(s, s->fi);
	return 0;
}

/* The first segment's record delivered: move its cursor on, give back the
 * mapped pages it has left behind, and restore the heap order. */
HOT void seg_advance(struct pd_source *s, bool swap)
{
	struct pd_seg *g = &s->seg[0];

	g->off += ld16(s->buf + (g->off - s->win_off) + 6, swap);
	/* not the block the cursor is in, nor the one before: a fault maps a
	 * file's large folio, and its neighbours, at once (measured on kernel
	 * 6.18: trimming up to the cursor's block kept about as much mapped
	 * as not trimming) */
	if (s->map && g->off - g->rel >= 2 * TRIM_STEP) {
		uint64_t to = (g->off & ~(TRIM_STEP - 1)) - TRIM_STEP;

		if (to > g->rel) {
			map_trim(s, g->rel, to);
			g->rel = to;
		}
	}
	if (g->off < g->end && !seg_load(s, g, swap)) {
		s->seg_bad = g->off;
		g->off = g->end;
	}
	if (g->off >= g->end)
		s->seg[0] = s->seg[--s->nseg];
	if (s->nseg > 1)
		seg_down(s, 0);
}

/* Take the frames from s->pos on until one read_records() must read
 * itself, or a FINISHED_ROUND made records ready.  A marker before s->pos
 * is of a record read_records() read; any other frame not at s->pos (which
 * cannot happen) drops the frames, and read_records() frames them. */
HOT int take_frames(struct pd_source *s, struct ks_error *err, bool swap)
{
	while (s->fi < s->nframes && !queue_ready(s)) {
		const struct pd_entry *f = &s->frames[s->fi];
		uint64_t off = f->key >> 16;

		if (off < s->pos && MARK_KIND(*f) != MARK_RUN && MARK_KIND(*f) != MARK_SEG) {
			s->fi++;
			continue;
		}
		if (off != s->pos) {
			s->fi = s->nframes = 0;
			break;
		}
		if (MARK_KIND(*f) == MARK_RUN) {
			if (queue_run(s, err) < 0)
				return -1;
		} else if (MARK_KIND(*f) == MARK_SEG) {
			if (queue_seg(s, err, swap) < 0)
				return -1;
		} else if (MARK_KIND(*f) == MARK_FLUSH) {
			s->pos = frames_pos(s, ++s->fi);
			s->rounds++;
			flush_queue(s, false);
		} else {
			break;
		}
	}
	return 0;
}

/* Read records until something can be delivered.  Returns 1 with R filled
 * (a record delivered at once), 0 (queue ready or end), <0 on error. */
HOT int read_records(struct pd_source *s, struct ks_record *r, struct ks_error *err, bool swap)
{
	s->seg_limit = 0; /* the last flush is delivered */
	while (!queue_ready(s)) {
		uint64_t off = s->pos, len, ts;
		const uint8_t *rec;
		uint32_t type, size;
		int attr, ret;

		if (s->fi < s->nframes) {
			if (take_frames(s, err, swap) < 0)
				return -1;
			if (queue_ready(s))
				break;
		}
		queue_samples(s, swap);
		off = s->pos;
		if (s->data_end - off < 8) {
			if (s->data_end != off)
				return ks_error_at(err, s->base.path, off,
						   "truncated record header at the end of the data");
			flush_queue(s, true);
			s->finished = true;
			return 0;
		}
		/* a refill may bring frames from here on: take them first */
		if (off + 8 > s->win_off + s->win_len) {
			if (window_fill(s, off, 8, err) < 0)
				return -1;
			continue;
		}
		rec = s->buf + (off - s->win_off);
		type = ld32(rec, swap);
		size = ld16(rec + 6, swap);
		if (size < 8 || size > s->data_end - off)
			return ks_error_at(err, s->base.path, off,
					   "record of type %u has size %u: %s", type, size,
					   size < 8 ? "smaller than its header" :
					   "runs past the data section");
		if (off + size > s->win_off + s->win_len) {
			if (window_fill(s, off, size, err) < 0)
				return -1;
			continue;
		}
		len = size;
		if (type >= R_USER_START) {
			if (user_record(s, type, rec, size, off, &len, err) < 0)
				return -1;
			s->pos += len;
			continue;
		}
		s->pos += len;
		attr = record_attr(s, s->idc, type, rec, size, swap);
		if (attr < 0) {
			s->base.stats.skipped++;
			continue;
		}
		if (record_ts(s, &s->attrs[attr], type, rec, size, off, &ts, err, swap) < 0)
			return -1;
		if (ts && ts != UINT64_MAX) {
			if (queue_push(s, ts, queue_key(s, off, type, attr), err) < 0)
				return -1;
			continue;
		}
		ret = decode_record(s, off, &s->attrs[attr], r, err, swap);
		if (ret)
			return ret;
	}
	return 0;
}

/* A sample of an event not selected: counted, not decoded. */
static inline void filter_sample(struct pd_source *s, const struct pd_attr *a)
{
	s->base.stats.filtered++;
	if (a->type == TYPE_TRACEPOINT && !a->event)
		s->base.stats.unknown_events++;
}

/* A record decoded into a buffer of the source (a COMM name without its
 * NUL, a callchain) ends a batch: the next one would overwrite it. */
static inline bool ends_batch(const struct ks_record *r)
{
	return r->type != KS_REC_EVENT || r->nr_callchain;
}

/* The records are decoded in time order, which jumps between the CPUs'
 * chunks of the file: the first two cache lines of the one PREFETCH_AHEAD
 * places on are asked for early (a record is about 120 bytes; 16 places
 * took 10% off the wall time of `kvmscope stat` on the 2,000,000-pair
 * benchmark file, against the next record only, median of 16 interleaved
 * rounds). */
#define PREFETCH_AHEAD 16

static inline void prefetch_record(const struct pd_source *s, uint64_t off)
{
	const uint8_t *p = s->buf + (off - s->win_off);

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
}

/* Up to MAX records into RECS.  The queue's ready records are decoded in
 * place from the window, which moves only when more of the file is read:
 * that happens only before the first record of a batch.  A record that
 * fails to decode is left queued, so the batch before it is delivered and
 * the next call reports the error. */
/* next_batch() while segments are pending: the queue's ready entries and
 * the segments' records up to s->seg_limit merged by (time, offset).
 * Returns the records in RECS[0, *NP) on, or <0 on an error. */
HOT int next_merged(struct pd_source *s, struct ks_record *recs, int max, int *np,
		    struct ks_error *err, bool swap)
{
	int n = *np, ret = 0;

	while (n < max) {
		struct pd_seg *g = s->nseg && s->seg[0].ts <= s->seg_limit ? &s->seg[0] : NULL;
		const struct pd_attr *a;
		struct pd_entry e;
		bool from_q = s->q_head < s->q_ready;

		if (s->seg_bad) {
			ret = ks_error_at(err, s->base.path, s->seg_bad, "record changed while being read");
			break;
		}
		if (!g && !from_q)
			break;
		if (g && from_q) {
			e = s->q[s->q_head];
			if (e.ts < g->ts || (e.ts == g->ts && (e.key >> 16) < g->off))
				g = NULL;
		}
		if (g) {
			e = (struct pd_entry){ g->ts, g->key };
			if (!s->flush_any || e.ts > s->last_flush)
				s->last_flush = e.ts;
			s->flush_any = true;
		} else {
			e = s->q[s->q_head++];
		}
		a = (e.key & KEY_ATTR) ? &s->attrs[(e.key & KEY_ATTR) - 1] : NULL;
		if (e.key & KEY_SKIP) {
			filter_sample(s, a);
			ret = 0;
		} else {
			if (g)
				__builtin_prefetch(s->buf + (g->off - s->win_off) + FRAME_PREFETCH);
			ret = decode_record(s, e.key >> 16, a, &recs[n], err, swap);
			if (ret < 0) {
				if (!g)
					s->q_head--;
				break;
			}
		}
		if (g)
			seg_advance(s, swap);
		if (ret && ends_batch(&recs[n++])) {
			ret = 0;
			break;
		}
		ret = 0;
	}
	*np = n;
	return ret < 0 && !n ? ret : 0;
}

HOT int next_batch(struct pd_source *s, struct ks_record *recs, int max, struct ks_error *err,
		   bool swap)
{
	int n = 0, ret;

	for (;;) {
		if (s->nseg) {
			if (next_merged(s, recs, max, &n, err, swap) < 0)
				return -1;
			if (n)
				return n;
		}
		while (!s->nseg && s->q_head < s->q_ready && n < max) {
			struct pd_entry e = s->q[s->q_head++];
			uint64_t attr_bits = e.key & KEY_ATTR;
			const struct pd_attr *a = attr_bits ? &s->attrs[attr_bits - 1] : NULL;

			if (e.key & KEY_SKIP) {
				filter_sample(s, a);
				continue;
			}
			if (s->q_head + PREFETCH_AHEAD < s->q_ready)
				prefetch_record(s, s->q[s->q_head + PREFETCH_AHEAD].key >> 16);
			ret = decode_record(s, e.key >> 16, a, &recs[n], err, swap);
			if (ret < 0) {
				if (!n)
					return ret;
				s->q_head--;
				return n;
			}
			if (ret && ends_batch(&recs[n++]))
				return n;
		}
		if (n || s->finished)
			return n;
		ret = read_records(s, recs, err, swap);
		if (ret)
			return ret;
	}
}

static int pd_next_batch(struct ks_source *base, struct ks_record *recs, int max,
			 struct ks_error *err)
{
	struct pd_source *s = (struct pd_source *)base;

	return s->swap ? next_batch(s, recs, max, err, true) : next_batch(s, recs, max, err, false);
}

static int pd_next(struct ks_source *base, struct ks_record *r, struct ks_error *err)
{
	return pd_next_batch(base, r, 1, err);
}

uint64_t ks_perfdata_framed_ahead(const struct ks_source *base)
{
	return ((const struct pd_source *)base)->framed_ahead;
}

/* Skip the samples of every attr whose event is not wanted (or unknown). */
static int pd_select(struct ks_source *base, bool (*want)(void *ctx, struct tep_event *ev),
		     void *ctx)
{
	struct pd_source *s = (struct pd_source *)base;
	uint32_t i;

	for (i = 0; i < s->nr_attrs; i++)
		s->attrs[i].skip = !s->attrs[i].event || !want(ctx, s->attrs[i].event);
	return 0;
}

static void pd_close(struct ks_source *base)
{
	struct pd_source *s = (struct pd_source *)base;

	ks_lazy_detach(base->lazy); /* before the texts it parses from */
	ks_source_meta_free(&base->meta);
	prefetch_stop(&s->pf);
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	ks_ctx_tep_put(base->ctx, base->tep);
	free(s->attrs);
	ks_hmap_free(&s->ids);
	free(s->q);
	free(s->tmp);
	free(s->ph);
	free(s->ph_tmp);
	free(s->seg);
	free(s->chain);
	free(s->mem);
	free(s->hdr);
	free(s->frames);
	free(base->path);
	free(s);
}

static const struct ks_source_ops pd_ops = {
	.name = "perf.data",
	.next = pd_next,
	.next_batch = pd_next_batch,
	.close = pd_close,
	.select = pd_select,
};

static int open_file(struct pd_source *s, struct ks_error *err)
{
	struct stat st;

	s->fd = open(s->base.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (s->fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", s->base.path, strerror(errno));
	if (fstat(s->fd, &st) < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot stat: %s", s->base.path, strerror(errno));
	if (!S_ISREG(st.st_mode)) /* perf's pipe format is not read: it needs a file */
		return ks_source_check_regular(s->base.path, s->fd, err);
	if (st.st_size < 8)
		return ks_error_at(err, s->base.path, 0, "not a perf.data file (too short)");
	if ((uint64_t)st.st_size >= MAX_FILE)
		return ks_error_at(err, s->base.path, 0, "file too large");
	s->file_size = (uint64_t)st.st_size;
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

int ks_perfdata_open(struct ks_source **out, const char *path, const struct ks_source_opts *o,
		     struct ks_error *err)
{
	struct pd_source *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	ks_source_apply_opts(&s->base, o);
	ks_ctx_perfdata_windows(s->base.ctx, &s->map_min, &s->map_chunk);
	if (!s->map_chunk)
		s->map_chunk = READ_SIZE;
	s->fd = -1;
	ks_hmap_init(&s->ids, sizeof(uint16_t));
	s->page = (uint64_t)sysconf(_SC_PAGESIZE);
	s->base.ops = &pd_ops;
	s->base.path = strdup(path);
	s->base.tep = tep_alloc();
	if (!s->base.path || !s->base.tep) {
		pd_close(&s->base);
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	}
	if (open_file(s, err) < 0 || read_header(s, err) < 0) {
		pd_close(&s->base);
		return -1;
	}
	id_positions(s);
	lookup_events(s);
	s->base.info.format = "perf.data";
	snprintf(s->base.info.clock, sizeof(s->base.info.clock), "perf");
	s->base.info.big_endian = s->big_endian;
	*out = &s->base;
	return 0;
}
