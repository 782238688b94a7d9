/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_impl.h - what the perf.data reader's files share: the reader's
 * state (struct pd_source, the prefetch thread's struct pd_prefetch, the
 * queue entries and frames), the functions one file gives the others, and
 * the per-record steps both threads run, kept here as inline functions so
 * that the record path stays one compiled loop per byte order.  The reader
 * is nine rooms:
 *   perfdata.c           opening and closing a source, reading the file
 *   perfdata_header.c    the file header, the attrs and their ids, features
 *   perfdata_window.c    the data window: heap buffer or mapping, refills
 *   perfdata_prefetch.c  the prefetch thread: posting, taking, stopping
 *   perfdata_frame.c     framing a chunk's records in the prefetch thread
 *                        (runs sorted by time, segments)
 *   perfdata_order.c     perf's ordering queue (ordered_events: queueing,
 *                        sorting, flushing) and the segments' heap
 *   perfdata_spill.c     the queue's sorted runs spilled to a temporary
 *                        file when a round would pass the memory budget
 *   perfdata_decode.c    decoding records off the fast path (variable
 *                        samples, trailers, COMM, FORK/EXIT, LOST)
 *   perfdata_next.c      reading records and delivering them in perf's
 *                        order, decoded into struct ks_record
 * See perfdata.c for how the parts work together.
 */
#ifndef KVMSCOPE_PERFDATA_IMPL_H
#define KVMSCOPE_PERFDATA_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"
#include "source_impl.h"
#include "util/hashmap.h"
#include "util/spill.h"

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
/* pd_map_trim(): pages given back in aligned blocks of TRIM_STEP; those of
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
	size_t nbuilt;               /* frames in frames_tmp (a job's so far) */
	unsigned flushes;            /* FINISHED_ROUNDs among them */
	bool stop;                   /* (under lock) the main thread waits for the job */
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
 * file offset after its last record and its first record's key bits (the
 * low 16 of a queue key)}, {its last time, 0}.  The main thread keeps it
 * as a cursor into the file (struct pd_seg), not as entries, and reads
 * its records only when they are delivered: a job framed far ahead
 * (job_extend) leaves the pages of its segments given back. */
#define MARK_SEG 3
/* Segments only where a round has grown past SEG_ROUND chunks (16 MB by
 * default: rounds of 100k records are entries; an eighth of a memory
 * budget below 128 MB), and for stretches of SEG_MIN records or more: the
 * queue's entries cost the main thread less per record (their merge is
 * done by the prefetch thread; the segments' by the main thread, record
 * by record: 2 CPUs' stretches of 20k records, 0.078 s of CPU as entries
 * for 1.2 M records, 0.11 s as segments).  In a longer round the pages of
 * its entries fault in again while it is merged; next_merged() gives them
 * back (retrim_pending), else they would stay until the round is done
 * (rounds of a million records: 61 MB peak with 16 MB of entries a round,
 * 42 MB with). */
#define SEG_ROUND 4
#define SEG_MIN 64
#define MARK_KIND(f) ((f).ts & 3)
#define MARK_RUN_LEN(f) (((f).ts >> 2) & 0x3fffffffu)
#define MARK_RUN_SKIP(f) ((f).ts >> 32)
#define RUN_MAX 0x3fffffffu /* entries a run's head can count */
#define STRADDLE_MAX (64u << 10) /* a record's size is 16 bits */

/* The framing loop asks for the bytes this far ahead: it is the first to
 * touch them, and the hardware's prefetch stops at page boundaries (2048
 * and 4096 took 3-4% off the wall time of `kvmscope stat` on the benchmark
 * file, median of 21 interleaved rounds; 512 less). */
#define FRAME_PREFETCH 2048

/* A pending segment: the cursor of a stretch of the file whose records are
 * queue entries in time order.  off, ts, key: its next record's offset,
 * time and queue key (pd_entry); end: the offset after its last record;
 * last: its last record's time; rel: the mapped pages below it have been
 * given back (seg_advance). */
struct pd_seg {
	uint64_t ts, off, key, end, last, rel;
};

/* A spilled run (perfdata_spill.c): sorted queue entries in the spill
 * file, read back RUN_CHUNK bytes at a time.  ts, key: its next entry;
 * low: the lowest file offset of its records. */
#define RUN_CHUNK (64u << 10)
struct pd_run {
	uint64_t ts, key, low;
	struct ks_rlog log;
	struct ks_rlog_cur cur;
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
	/* q_low: the lowest file offset of q[q_head, q_n) (UINT64_MAX if
	 * none), kept as entries are queued; known while q_low_ok, which a
	 * flush that makes entries ready clears (pending_low() scans again) */
	uint64_t q_low;
	bool q_low_ok;
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
	/* Spilled runs (perfdata_spill.c): a min-heap by (time, offset) of
	 * runs, each at its next entry; delivered up to seg_limit as the
	 * segments.  run_bad: a run could not be read back. */
	struct pd_run **run;
	uint32_t nrun, run_cap;
	bool run_bad;
	struct ks_spill spill; /* set up with the first run (run_cap) */
	uint64_t trimmed; /* mapped pages below this were given back (pd_map_trim) */
	uint32_t merges;  /* next_merged() calls since the last retrim_pending() */
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

/* ---- what one file of the reader gives the others ---- */

/* perfdata.c: reading the file */
int pd_read_full(int fd, uint64_t off, uint8_t *dst, uint64_t len, uint64_t *fail_off);
int pd_read_error(struct pd_source *s, int result, uint64_t off, struct ks_error *err);
int pd_pread_full(struct pd_source *s, uint64_t off, void *dst, uint64_t len,
		  struct ks_error *err);
uint8_t *pd_pread_alloc(struct pd_source *s, uint64_t off, uint64_t len, struct ks_error *err);

/* perfdata_header.c: the header, attrs, ids and features */
int pd_attr_of_id_miss(const struct pd_source *s, uint64_t id, struct pd_idcache *c);
int pd_read_header(struct pd_source *s, struct ks_error *err);
void pd_id_positions(struct pd_source *s);
void pd_lookup_events(struct pd_source *s);

/* perfdata_window.c: the data window (heap buffer or mapping) */
uint64_t pd_window_held(const struct pd_source *s);
uint8_t *pd_buffer_alloc(size_t size);
bool pd_map_cheap(const struct pd_source *s);
bool pd_map_data(struct pd_source *s);
void pd_map_trim(struct pd_source *s, uint64_t from, uint64_t to);
int pd_window_fill(struct pd_source *s, uint64_t off, uint64_t n, struct ks_error *err);

/* perfdata_prefetch.c: the prefetch thread */
void pd_prefetch_start(struct pd_source *s);
void pd_prefetch_next(struct pd_source *s);
int pd_prefetch_finish(struct pd_prefetch *pf, bool use);
void pd_frames_take(struct pd_source *s);
int pd_prefetch_take(struct pd_source *s, uint64_t low, uint64_t need_end,
		     struct ks_error *err);
void pd_prefetch_stop(struct pd_prefetch *pf);

/* perfdata_frame.c: framing a chunk's records in the prefetch thread */
void pd_frame_job_any(struct pd_prefetch *pf);
bool pd_frame_more_any(struct pd_prefetch *pf);
void pd_frames_publish(struct pd_prefetch *pf);

/* perfdata_order.c: perf's ordering queue and the segments */
int pd_ordering_budget(struct pd_source *s, uint64_t qcap, uint64_t win, uint64_t off,
		       struct ks_error *err);
int pd_queue_reserve(struct pd_source *s, uint64_t n, struct ks_error *err);
void pd_merge(const struct pd_entry *a, uint64_t na, const struct pd_entry *b, uint64_t nb,
	      struct pd_entry *out);
struct pd_entry *pd_sort_entries(struct pd_entry *a, struct pd_entry *b, uint64_t n);
void pd_flush_queue(struct pd_source *s, bool final);
int pd_queue_run(struct pd_source *s, struct ks_error *err);
int pd_queue_seg(struct pd_source *s, struct ks_error *err);

/* perfdata_spill.c: the queue's runs in the spill file */
int pd_spill_run(struct pd_source *s, const struct pd_entry *a, uint64_t na,
		 const struct pd_entry *b, uint64_t nb, struct ks_error *err);
void pd_run_advance(struct pd_source *s);
int pd_spill_error(struct pd_source *s, uint64_t off, const char *what, struct ks_error *err);
uint64_t pd_runs_low(const struct pd_source *s);
void pd_runs_free(struct pd_source *s);

/* perfdata_decode.c: decoding the records off the fast path */
void pd_parse_trailer(struct pd_source *s, const struct pd_attr *a, const uint8_t *end,
		      struct ks_record *r);
int pd_short_sample(struct pd_source *s, uint64_t off, const char *what, struct ks_error *err);
int pd_sample_variable(struct pd_source *s, const struct pd_attr *a, const uint8_t *p,
		       const uint8_t *end, uint64_t off, struct ks_record *r,
		       struct ks_error *err);
void pd_decode_comm(struct pd_source *s, const uint8_t *rec, const uint8_t *end,
		    struct ks_record *r);
void pd_decode_task(struct pd_source *s, uint32_t type, const uint8_t *rec,
		    struct ks_record *r);
void pd_decode_lost(struct pd_source *s, uint64_t lost, struct ks_record *r);

/* perfdata_next.c: delivering the records in perf's order */
int pd_next_batch(struct ks_source *base, struct ks_record *recs, int max,
		  struct ks_error *err);

/* The sample walk's bounds check (perfdata_decode.c, decode_sample()):
 * the bytes [p, end) hold N more, else the error naming WHAT. */
#define NEED(n, what)                                          \
	do {                                                   \
		if ((uint64_t)(end - p) < (uint64_t)(n))       \
			return pd_short_sample(s, off, what, err); \
	} while (0)

/* ---- byte order and the record path's shared steps ---- */

/* The record path (framing, ordering, decoding) is written once with the
 * byte order as a parameter SWAP and marked HOT: pd_next_batch() makes one
 * instance for each order, so that no read tests the order at run time. */
#define HOT static inline __attribute__((always_inline))

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

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

/* The attr of id ID (perf: synthesized records have id 0 = first attr),
 * through the cache IDC (each thread has its own). */
HOT int attr_of_id(const struct pd_source *s, struct pd_idcache *idc, uint64_t id)
{
	struct pd_idcache *c = &idc[id & (ID_CACHE - 1)];

	if (!id)
		return 0;
	if (__builtin_expect(c->id != id, 0))
		return pd_attr_of_id_miss(s, id, c);
	return c->attr;
}

/* Whether perf's queue would be empty: no record pending in either part. */
static inline bool queue_idle(const struct pd_source *s)
{
	return s->q_n == s->q_head && s->ph_n == s->ph_head && !s->nseg && !s->nrun;
}

/* Whether records are ready for delivery: queued ones up to q_ready, or
 * segments' or spilled runs' up to seg_limit. */
static inline bool queue_ready(const struct pd_source *s)
{
	return s->q_head < s->q_ready || (s->nseg && s->seg[0].ts <= s->seg_limit) ||
	       (s->nrun && s->run[0]->ts <= s->seg_limit);
}

/* The next record after the frames up to FI. */
static inline uint64_t frames_pos(const struct pd_source *s, size_t fi)
{
	return fi < s->nframes ? s->frames[fi].key >> 16 : s->frames_end;
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
static inline uint64_t user_payload(const struct pd_source *s, uint32_t type, const uint8_t *rec,
			     uint32_t size)
{
	if (type == R_AUXTRACE && size >= 16)
		return rd64(s, rec + 8);
	if (type == R_HEADER_TRACING_DATA && size >= 12)
		return rd32(s, rec + 8);
	return 0;
}

/* The key of the record of TYPE at OFF with attr index ATTR (pd_entry). */
static inline uint64_t queue_key(const struct pd_source *s, uint64_t off, uint32_t type,
				 int attr)
{
	if (type != R_SAMPLE)
		return off << 16 | (uint64_t)(attr + 1);
	return off << 16 | KEY_SAMPLE | (s->attrs[attr].skip ? KEY_SKIP : 0) | (uint64_t)(attr + 1);
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

/* Whether segment A's next record comes before B's: by time, then by file
 * offset, the order of the stable sort of the entries as pushed. */
static inline bool seg_before(const struct pd_seg *a, const struct pd_seg *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->off < b->off);
}

/* Put X at the root of s->seg's heap (its old root is gone) and restore
 * the heap order: the hole moves down while a child comes first.  X is
 * passed by value, not read back from the root: its time and key were
 * just stored field by field, and a load of the whole would wait for
 * them (10% of the delivery loop's time at rounds of a million records). */
static inline void seg_sift_root(struct pd_source *s, struct pd_seg x)
{
	struct pd_seg *h = s->seg;
	uint32_t n = s->nseg, i = 0, c;

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

/* The first segment's record delivered: move its cursor on, give back the
 * mapped pages it has left behind, and restore the heap order. */
HOT void seg_advance(struct pd_source *s, bool swap)
{
	struct pd_seg g = s->seg[0];

	g.off += ld16(s->buf + (g.off - s->win_off) + 6, swap);
	/* not the block the cursor is in, nor the one before: a fault maps a
	 * file's large folio, and its neighbours, at once (measured on kernel
	 * 6.18: trimming up to the cursor's block kept about as much mapped
	 * as not trimming) */
	if (s->map && g.off - g.rel >= 2 * TRIM_STEP) {
		uint64_t to = (g.off & ~(TRIM_STEP - 1)) - TRIM_STEP;

		if (to > g.rel) {
			pd_map_trim(s, g.rel, to);
			g.rel = to;
		}
	}
	if (g.off < g.end && !seg_load(s, &g, swap)) {
		s->seg_bad = g.off;
		g.off = g.end;
	}
	if (g.off >= g.end) {
		if (!--s->nseg)
			return;
		g = s->seg[s->nseg];
	}
	seg_sift_root(s, g);
}

#endif /* KVMSCOPE_PERFDATA_IMPL_H */
