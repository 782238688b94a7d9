/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfdata_header.c - the perf.data file's header, read at open: the attrs
 * (sample layouts derived once: where each fixed slot of a sample lies),
 * their id arrays (the id -> attr map and its per-thread cache's slow
 * path), the position of the id in records (perf's id_pos / is_pos), and
 * the feature sections the reader needs (tracing data, host strings, CPU
 * count, sample times).
 */
#include <stdlib.h>

#include <traceevent/event-parse.h>

#include "perfdata_impl.h"
#include "tracing_data.h"

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

__attribute__((noinline)) int pd_attr_of_id_miss(const struct pd_source *s, uint64_t id,
						      struct pd_idcache *c)
{
	c->attr = idmap_get(&s->ids, id);
	c->id = id;
	return c->attr;
}

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
		if (pd_pread_full(s, off, chunk, 8 * n, err) < 0)
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
	raw = pd_pread_alloc(s, off, size, err);
	if (!raw)
		return -1;
	ret = parse_attrs(s, raw, off, attr_size, err);
	free(raw);
	return ret;
}

/* perf's id_pos / is_pos, from the first attr (perf requires they agree). */
void pd_id_positions(struct pd_source *s)
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
	p = pd_pread_alloc(s, off, need, err);
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
		if (pd_pread_full(s, table, entry, 16, err) < 0)
			return -1;
		if (read_section(s, entry, table, &off, &size, "feature", err) < 0)
			return -1;
		if (read_feature(s, feat, off, size, err) < 0)
			return -1;
		table += 16;
	}
	return 0;
}

int pd_read_header(struct pd_source *s, struct ks_error *err)
{
	bool host_big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	uint64_t header_size, attr_size, size, got;
	const uint8_t *h;

	got = s->file_size < HEADER_SIZE ? s->file_size : HEADER_SIZE;
	s->hdr = calloc(1, HEADER_SIZE);
	if (!s->hdr)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", s->base.path);
	if (pd_pread_full(s, 0, s->hdr, got, err) < 0)
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

void pd_lookup_events(struct pd_source *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_attrs; i++)
		if (s->attrs[i].type == TYPE_TRACEPOINT)
			s->attrs[i].event = ks_source_event_by_id(&s->base, (int)s->attrs[i].config);
}
