/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_io.c - the trace.dat reader's access to its file: byte order,
 * the run's memory budget, the metadata reader (struct rd over the file or
 * a loaded block), decompression and v7 sections (tracedat_impl.h).
 */
#include "util/byteorder.h"
#include "tracedat_impl.h"

/* ------------------------------------------------------------------ */
/* byte order helpers */

uint16_t td_get16(const struct tracedat *td, const void *p)
{
	return ks_load16(p, td->swap);
}

uint32_t td_get32(const struct tracedat *td, const void *p)
{
	return ks_load32(p, td->swap);
}

uint64_t td_get64(const struct tracedat *td, const void *p)
{
	return ks_load64(p, td->swap);
}

int td_pread_at(struct tracedat *td, void *dst, uint64_t n, uint64_t off,
		    const char *what, struct ks_error *err)
{
	uint8_t *d = dst;
	uint64_t done = 0;

	if (off > td->file_size || n > td->file_size - off)
		return ks_error_at(err, td->src.path, off,
				   "truncated: %s of %llu bytes runs past the end of the file (%llu bytes)",
				   what, (unsigned long long)n, (unsigned long long)td->file_size);
	while (done < n) {
		ssize_t r = pread(td->fd, d + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ks_error_code_at(err, KS_E_IO, td->src.path, off + done, "cannot read %s: %s", what,
					   r < 0 ? strerror(errno) : "unexpected end of file");
		done += (uint64_t)r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the run's budget */

/* Take N more bytes of the memory budget for data read at AT. */
int td_mem_take(struct tracedat *td, uint64_t n, uint64_t at, struct ks_error *err)
{
	uint64_t lim = td->src.limits.memory;
	char hint[96];

	if (n <= lim && td->mem_held <= lim - n) {
		td->mem_held += n;
		return 0;
	}
	return ks_error_code_at(err, KS_E_LIMIT, td->src.path, at,
			   "the file needs more than %llu MiB of decompressed data in memory at once %s",
			   (unsigned long long)(lim >> 20), ks_limit_hint(hint, sizeof(hint), "memory", lim));
}

void td_mem_give(struct tracedat *td, uint64_t n)
{
	td->mem_held = n < td->mem_held ? td->mem_held - n : 0;
}

/* N more metadata objects (WHAT, declared at AT). */
int td_obj_take(struct tracedat *td, uint64_t n, uint64_t at, const char *what,
		    struct ks_error *err)
{
	uint64_t lim = td->src.limits.objects;
	char hint[96];

	if (n <= lim && td->objects <= lim - n) {
		td->objects += n;
		return 0;
	}
	return ks_error_code_at(err, KS_E_LIMIT, td->src.path, at,
			   "the file declares more than %llu metadata objects (at %s) %s",
			   (unsigned long long)lim, what, ks_limit_hint(hint, sizeof(hint), "objects", lim));
}

/* Room for N + 1 items of SIZE bytes in the array *P of capacity *CAP
 * (grown by doubling: options handled in linear time), the growth counted
 * against the memory budget. */
int td_grow(struct tracedat *td, void **p, uint32_t *cap, uint64_t n, size_t size, uint64_t at,
		struct ks_error *err)
{
	uint64_t want;
	void *q;

	if (n < *cap)
		return 0;
	want = *cap ? (uint64_t)*cap * 2 : 8;
	while (want <= n)
		want *= 2;
	if (want > UINT32_MAX)
		return ks_error_at(err, td->src.path, at, "too many items");
	if (td_mem_take(td, (want - *cap) * size, at, err) < 0)
		return -1;
	q = realloc(*p, want * size);
	if (!q)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	*p = q;
	*cap = (uint32_t)want;
	return 0;
}

/* ------------------------------------------------------------------ */
/* A reader over a memory block (a loaded or decompressed section) or over
 * the file itself (v6 metadata, which is not in sections). */

uint64_t td_rd_errpos(const struct rd *r)
{
	return r->mem ? r->base : r->pos;
}

/* N file bytes at OFF through the read-ahead block (the metadata is read
 * in fields of a few bytes: one pread each cost more than parsing them). */
static int read_ahead(struct tracedat *td, void *dst, uint64_t n, uint64_t off, const char *what,
		      struct ks_error *err)
{
	uint64_t len;

	if (n > READ_AHEAD || off > td->file_size || n > td->file_size - off)
		return td_pread_at(td, dst, n, off, what, err);
	if (off < td->ra_off || off + n > td->ra_off + td->ra_len) {
		len = td->file_size - off < READ_AHEAD ? td->file_size - off : READ_AHEAD;
		td->ra_len = 0;
		if (!td->ra && !(td->ra = malloc(READ_AHEAD)))
			return td_pread_at(td, dst, n, off, what, err);
		if (td_pread_at(td, td->ra, len, off, what, err) < 0)
			return -1;
		td->ra_off = off;
		td->ra_len = len;
	}
	memcpy(dst, td->ra + (off - td->ra_off), n);
	return 0;
}

int td_rd_bytes(struct rd *r, void *dst, uint64_t n, struct ks_error *err)
{
	if (n > r->end - r->pos)
		return ks_error_at(err, r->td->src.path, td_rd_errpos(r),
				   "%s is truncated (needs %llu more bytes, %llu left)", r->what,
				   (unsigned long long)n, (unsigned long long)(r->end - r->pos));
	if (r->mem)
		memcpy(dst, r->mem + r->pos, n);
	else if (read_ahead(r->td, dst, n, r->pos, r->what, err) < 0)
		return -1;
	r->pos += n;
	return 0;
}

int td_rd_u16(struct rd *r, uint16_t *v, struct ks_error *err)
{
	uint8_t b[2];
	if (td_rd_bytes(r, b, 2, err) < 0)
		return -1;
	*v = td_get16(r->td, b);
	return 0;
}

int td_rd_u32(struct rd *r, uint32_t *v, struct ks_error *err)
{
	uint8_t b[4];
	if (td_rd_bytes(r, b, 4, err) < 0)
		return -1;
	*v = td_get32(r->td, b);
	return 0;
}

int td_rd_u64(struct rd *r, uint64_t *v, struct ks_error *err)
{
	uint8_t b[8];
	if (td_rd_bytes(r, b, 8, err) < 0)
		return -1;
	*v = td_get64(r->td, b);
	return 0;
}

/* Read N bytes into a new NUL-terminated buffer (N bounded by what is left),
 * counted against the memory budget until td_rd_free(). */
int td_rd_alloc(struct rd *r, uint64_t n, char **out, struct ks_error *err)
{
	char *buf;

	*out = NULL;
	if (n > r->end - r->pos)
		return ks_error_at(err, r->td->src.path, td_rd_errpos(r),
				   "%s%s: a block of %llu bytes runs past its end (%llu bytes left)",
				   /* in the file (v6): cut short, unless absurd */
				   !r->mem && n < PLAUSIBLE ? "truncated: " : "", r->what,
				   (unsigned long long)n,
				   (unsigned long long)(r->end - r->pos));
	if (td_mem_take(r->td, n + 1, td_rd_errpos(r), err) < 0)
		return -1;
	buf = malloc(n + 1);
	if (!buf)
		return ks_error_code_at(err, KS_E_NOMEM, r->td->src.path, td_rd_errpos(r), "out of memory");
	if (td_rd_bytes(r, buf, n, err) < 0) {
		free(buf);
		td_mem_give(r->td, n + 1);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* Free a block of N bytes from td_rd_alloc(). */
void td_rd_free(struct rd *r, char *buf, uint64_t n)
{
	free(buf);
	td_mem_give(r->td, n + 1);
}

/* Read a NUL-terminated string of at most MAX-1 characters. */
int td_rd_string(struct rd *r, char *dst, size_t max, struct ks_error *err)
{
	size_t i;

	for (i = 0; i < max; i++) {
		if (td_rd_bytes(r, dst + i, 1, err) < 0)
			return -1;
		if (dst[i] == '\0')
			return 0;
	}
	return ks_error_at(err, r->td->src.path, td_rd_errpos(r),
			   "%s: string longer than %zu bytes", r->what, max - 1);
}

int td_rd_expect(struct rd *r, const char *magic, size_t len, struct ks_error *err)
{
	char buf[16];
	uint64_t at = td_rd_errpos(r);

	if (td_rd_bytes(r, buf, len, err) < 0)
		return -1;
	if (memcmp(buf, magic, len))
		return ks_error_at(err, r->td->src.path, at, "%s: expected \"%s\"", r->what, magic);
	return 0;
}

/* ------------------------------------------------------------------ */
/* decompression */

int td_decompress(struct tracedat *td, const void *in, uint32_t in_len, void *out,
		      uint32_t out_len, uint64_t at, struct ks_error *err)
{
	if (td->comp == COMP_ZLIB) {
		uLongf got = out_len;
		int r = uncompress(out, &got, in, in_len);
		if (r != Z_OK || got != out_len)
			return ks_error_at(err, td->src.path, at,
					   "corrupt zlib block (%s, %lu of %u bytes)",
					   r == Z_OK ? "short" : zError(r), (unsigned long)got, out_len);
		return 0;
	}
	if (td->comp == COMP_ZSTD) {
		size_t got = ZSTD_decompress(out, out_len, in, in_len);
		if (ZSTD_isError(got) || got != out_len)
			return ks_error_at(err, td->src.path, at, "corrupt zstd block (%s)",
					   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
		return 0;
	}
	return ks_error_at(err, td->src.path, at, "compressed block in an uncompressed file");
}

/* The header "u32 csize, u32 usize" of the compressed block at AT (which
 * must end by LIMIT and hold at most MAX_OUT bytes). */
int td_compressed_header(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
			     uint32_t *csizep, uint32_t *usizep, struct ks_error *err)
{
	uint8_t hdr[8];
	uint32_t csize, usize;

	if (at > limit || limit - at < 8)
		return ks_error_at(err, td->src.path, at, "%scompressed block header runs past its section",
				   at > td->file_size || td->file_size - at < 8 ? "truncated: " : "");
	if (td_pread_at(td, hdr, 8, at, "compressed block header", err) < 0)
		return -1;
	csize = td_get32(td, hdr);
	usize = td_get32(td, hdr + 4);
	if (csize > limit - at - 8)
		return ks_error_at(err, td->src.path, at,
				   "%scompressed block of %u bytes runs past its section",
				   csize > td->file_size - at - 8 ? "truncated: " : "", csize);
	if (usize > max_out)
		return ks_error_at(err, td->src.path, at,
				   "compressed block claims %u decompressed bytes (limit %u)", usize, max_out);
	*csizep = csize;
	*usizep = usize;
	return 0;
}

/* Read one compressed block "u32 csize, u32 usize, data" at AT into a new
 * buffer.  *NEXT = offset after the block. */
int td_load_compressed(struct tracedat *td, uint64_t at, uint64_t limit, uint32_t max_out,
			   uint8_t **out, uint32_t *out_len, uint64_t *next, struct ks_error *err)
{
	uint8_t *in, *buf;
	uint32_t csize, usize;

	*out = NULL;
	if (td_compressed_header(td, at, limit, max_out, &csize, &usize, err) < 0)
		return -1;
	/* the decompressed block stays counted until the caller frees it
	 * (td_mem_give(usize + 1)); the compressed one only until here */
	if (td_mem_take(td, (uint64_t)usize + 1, at, err) < 0)
		return -1;
	if (td_mem_take(td, (uint64_t)csize + 1, at, err) < 0) {
		td_mem_give(td, (uint64_t)usize + 1);
		return -1;
	}
	in = malloc(csize ? csize : 1);
	buf = malloc(usize ? usize : 1);
	if (!in || !buf) {
		free(in);
		free(buf);
		td_mem_give(td, (uint64_t)usize + csize + 2);
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, at, "out of memory");
	}
	if (td_pread_at(td, in, csize, at + 8, "compressed block", err) < 0 ||
	    td_decompress(td, in, csize, buf, usize, at, err) < 0) {
		free(in);
		free(buf);
		td_mem_give(td, (uint64_t)usize + csize + 2);
		return -1;
	}
	free(in);
	td_mem_give(td, (uint64_t)csize + 1);
	*out = buf;
	*out_len = usize;
	*next = at + 8 + csize;
	return 0;
}

/* Add the LEN bytes of the section at OFF just loaded into *DATA to the
 * total; past MAX_SECTION, free them and fail. */
int td_count_section_bytes(struct tracedat *td, uint64_t off, uint8_t **data, uint64_t len,
			       struct ks_error *err)
{
	td->section_bytes += len;
	if (td->section_bytes <= MAX_SECTION)
		return 0;
	free(*data);
	*data = NULL;
	td_mem_give(td, len + 1);
	return ks_error_at(err, td->src.path, off,
			   "the metadata sections hold more than %u MB in all", MAX_SECTION >> 20);
}

/* Add OFF to the sections loaded.  Returns 1 if it is new, 0 if it was
 * loaded before, -1 when out of memory. */
static int section_add(struct tracedat *td, uint64_t off)
{
	bool created;

	if (!ks_hmap_put(&td->sections, off, &created))
		return -1;
	return created;
}

/* The header of the v7 section at OFF, not read before (see td_load_section). */
int td_section_header(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
			  uint16_t *flagsp, uint64_t *sizep, struct ks_error *err)
{
	uint8_t hdr[16];
	uint16_t flags;
	uint64_t size;
	int fresh;

	fresh = section_add(td, off);
	if (fresh < 0)
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, off, "out of memory");
	if (!fresh)
		return ks_error_at(err, td->src.path, off,
				   "the %s points at a section already read (a loop?)", what);
	if (td_pread_at(td, hdr, 16, off, "section header", err) < 0)
		return -1;
	*id = td_get16(td, hdr);
	flags = td_get16(td, hdr + 2);
	size = td_get64(td, hdr + 8);
	td->section_end = off + 16 + size;
	if (size > td->file_size - off - 16)
		return ks_error_at(err, td->src.path, off,
				   "truncated: section %u of %llu bytes runs past the end of the file (%llu bytes)",
				   *id, (unsigned long long)size, (unsigned long long)td->file_size);
	*flagsp = flags;
	*sizep = size;
	return 0;
}

/* Load a v7 section at OFF (header + payload, decompressed) into memory.
 * Each section is loaded once (a second time is an error naming WHAT),
 * and all of them together hold at most MAX_SECTION bytes: a small file
 * cannot make the reader parse or decompress far more than it holds. */
int td_load_section(struct tracedat *td, uint64_t off, const char *what, uint16_t *id,
			uint8_t **data, uint64_t *len, struct ks_error *err)
{
	uint16_t flags;
	uint64_t size;

	*data = NULL;
	if (td_section_header(td, off, what, id, &flags, &size, err) < 0)
		return -1;
	if (flags & SEC_FL_COMPRESS) {
		uint32_t ulen;
		uint64_t next;
		if (td_load_compressed(td, off + 16, off + 16 + size, MAX_SECTION, data, &ulen, &next,
				    err) < 0)
			return -1;
		*len = ulen;
		return td_count_section_bytes(td, off, data, ulen, err);
	}
	if (size > MAX_SECTION)
		return ks_error_at(err, td->src.path, off, "section of %llu bytes is too large",
				   (unsigned long long)size);
	if (td_mem_take(td, size + 1, off, err) < 0)
		return -1;
	*data = malloc(size ? size : 1);
	if (!*data) {
		td_mem_give(td, size + 1);
		return ks_error_code_at(err, KS_E_NOMEM, td->src.path, off, "out of memory");
	}
	if (td_pread_at(td, *data, size, off + 16, "section", err) < 0) {
		free(*data);
		*data = NULL;
		td_mem_give(td, size + 1);
		return -1;
	}
	*len = size;
	return td_count_section_bytes(td, off, data, size, err);
}

/* Free a section from td_load_section() (LEN bytes). */
void td_section_free(struct tracedat *td, uint8_t *data, uint64_t len)
{
	free(data);
	td_mem_give(td, len + 1);
}

