/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_prefetch.c - the prefetch thread: while the main thread parses
 * the window, it reads (or, mapped, populates) the next chunk of the data
 * section and frames its records (perfdata_frame.c); the main thread posts
 * a job, takes the result (copying the still-needed tail in front of the
 * read bytes and swapping the buffers) and stops the thread at close.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfdata_impl.h"

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

/* Whether a job of a mapped data section goes on with the next chunk: a
 * main thread busy with the rounds before it would otherwise find only
 * one chunk framed when it comes back, and frame the rest of a long round
 * itself, chunk by chunk, while this thread waits (rounds of a million
 * records: 56 of 70 chunks).  So a job goes on until the main thread asks
 * for it, while its frames hold fewer than two FINISHED_ROUNDs (with two,
 * the main thread has a round to deliver; rounds within a chunk never make
 * a job longer, so their records are still in the cache when delivered),
 * and while its frames stay within 1/128 of the memory budget (2 MB by
 * default: rounds of 100k records took 20% less wall time, and 7 MB more
 * peak RSS, than with one chunk a job; a million records a round, 5%). */
static bool job_goes_on(struct pd_prefetch *pf)
{
	const struct pd_source *s = pf->src;
	bool stop;

	if (!pf->mapped || !pf->framed || pf->flushes >= 2 ||
	    pf->off + pf->len >= s->data_end || pf->frames_end + STRADDLE_MAX < pf->off + pf->len ||
	    pf->nbuilt * sizeof(struct pd_entry) > s->base.limits.memory / 128)
		return false;
	pthread_mutex_lock(&pf->lock);
	stop = pf->stop || pf->quit;
	pthread_mutex_unlock(&pf->lock);
	return !stop;
}

/* The job made longer by chunks (see job_goes_on) and each framed; the
 * pages of the chunks before the last are given back (the main thread
 * faults them in again when it gets to their records: segments are not
 * read when queued), so that a long round framed ahead does not stay in
 * memory. */
static void job_extend(struct pd_prefetch *pf)
{
	const struct pd_source *s = pf->src;
	uint64_t page = s->page, kept = (pf->off + page - 1) & ~(page - 1), end, n, to, fail;

	while (job_goes_on(pf)) {
		end = pf->off + pf->len;
		n = s->data_end - end < s->map_chunk ? s->data_end - end : s->map_chunk;
		if (populate(pf->dst + pf->len, n, end, &fail) < 0)
			break;
		pf->len += n;
		if (!pd_frame_more_any(pf))
			break;
		to = end & ~(page - 1);
		if (to > kept) {
			madvise(pf->dst + (kept - pf->off), to - kept, MADV_DONTNEED);
			kept = to;
		}
	}
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
			      pd_read_full(pf->fd, pf->off, pf->dst, pf->len, fail_off);

	pf->framed = false;
	if (!result && pf->straddle) {
		pd_frame_job_any(pf);
		job_extend(pf);
		pd_frames_publish(pf);
	}
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

/* Start the thread (once, at the first refill of a large data section,
 * with PF_BUF bytes for the window and the spare buffer).  Failing to start
 * only means reading synchronously. */
void pd_prefetch_start(struct pd_source *s)
{
	struct pd_prefetch *pf = &s->pf;
	sigset_t all, old;
	uint8_t *b;
	int ret;

	pf->tried = true;
	if (s->win_len)
		return;
	if (s->data_end - s->data_off > s->map_min && pd_map_cheap(s) && pd_map_data(s)) {
		pf->mapped = true;
	} else if (s->data_end - s->data_off <= PF_BUF) {
		return;
	} else {
		b = pd_buffer_alloc(PF_BUF);
		if (!b)
			return;
		free(s->mem);
		s->mem = s->buf = b;
		s->mem_cap = PF_BUF;
		pf->spare = pd_buffer_alloc(PF_BUF);
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
void pd_prefetch_next(struct pd_source *s)
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
	pf->stop = false;
	pthread_cond_signal(&pf->cond);
	pthread_mutex_unlock(&pf->lock);
	pf->posted = true;
}

/* Finish the posted read: wait for it, or if the thread has not started it
 * yet (a busy machine may not have run the thread), do it here (USE) or
 * drop it.  Returns its result (see pd_read_full). */
int pd_prefetch_finish(struct pd_prefetch *pf, bool use)
{
	bool steal;
	int result;

	pthread_mutex_lock(&pf->lock);
	steal = pf->request;
	pf->request = false;
	pf->stop = true;
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
void pd_frames_take(struct pd_source *s)
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
int pd_prefetch_take(struct pd_source *s, uint64_t low, uint64_t need_end,
			 struct ks_error *err)
{
	struct pd_prefetch *pf = &s->pf;
	uint64_t end = s->win_off + s->win_len, tail, cap;
	uint8_t *old;
	int result;

	if (!pf->posted)
		return 0;
	if (pf->off != end || low > end || end - low > TAIL_MAX || need_end > end + pf->len) {
		pd_prefetch_finish(pf, false);
		return 0;
	}
	tail = end - low;
	memcpy(pf->spare + TAIL_MAX - tail, s->buf + (low - s->win_off), tail);
	result = pd_prefetch_finish(pf, true);
	if (result)
		return pd_read_error(s, result, pf->fail_off, err);
	old = s->mem;
	cap = s->mem_cap;
	s->mem = pf->spare;
	s->mem_cap = pf->spare_cap;
	pf->spare = old;
	pf->spare_cap = cap;
	s->buf = s->mem + TAIL_MAX - tail;
	s->win_off = low;
	s->win_len = tail + pf->len;
	pd_frames_take(s);
	pd_prefetch_next(s);
	return 1;
}

/* Stop and join the thread (any state: reading, idle or never started). */
void pd_prefetch_stop(struct pd_prefetch *pf)
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
