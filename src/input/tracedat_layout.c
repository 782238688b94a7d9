/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracedat_layout.c - the trace.dat file header and its two layouts (v6:
 * metadata in a fixed order then the CPU tables; v7: sections named by
 * options), and the source info filled from them (tracedat_impl.h).
 */
#include "tracedat_impl.h"

/* ------------------------------------------------------------------ */
/* file header and the two layouts */

/* What follows the last options section (at END): trace-cmd and kvmscope
 * write the strings section there, last or before a latency section.  A
 * file without BUFFER options is a recording without data (trace-cmd
 * convert writes one) or one cut before the BUFFER options were written:
 * then a flyrecord section or nothing follows.  A section there cut short
 * is a file cut short. */
static int check_finished(struct tracedat *td, uint64_t end, struct ks_error *err)
{
	uint8_t hdr[16];
	uint64_t left = end <= td->file_size ? td->file_size - end : 0;
	uint16_t id;

	if (!left && !td->have_buffer_option)
		return ks_error_at(err, td->src.path, end,
				   "truncated: the file ends after its options, which name no data "
				   "(the recording was not finished)");
	if (!left)
		return 0;
	if (left < 16)
		return ks_error_at(err, td->src.path, end,
				   "truncated: a section header of %llu bytes (16 expected) ends the file",
				   (unsigned long long)left);
	if (td_pread_at(td, hdr, 16, end, "section header", err) < 0)
		return -1;
	id = td_get16(td, hdr);
	if ((id == OPT_BUFFER || id == OPT_BUFFER_TEXT) && !td->have_buffer_option)
		return ks_error_at(err, td->src.path, end,
				   "truncated: data section without a BUFFER option naming it "
				   "(the recording was not finished)");
	if (id == OPT_STRINGS && td_get64(td, hdr + 8) > left - 16)
		return ks_error_at(err, td->src.path, end,
				   "truncated: section %u of %llu bytes runs past the end of the file "
				   "(%llu bytes)", id, (unsigned long long)td_get64(td, hdr + 8),
				   (unsigned long long)td->file_size);
	return 0;
}

int td_parse_v7(struct tracedat *td, struct rd *hdr, struct ks_error *err)
{
	uint64_t off, end = 0;
	int n = 0;

	hdr->what = "options offset";
	if (td_rd_u64(hdr, &off, err) < 0)
		return -1;
	/* trace-cmd writes the offset of the first options section once the
	 * metadata is written, and the BUFFER options (where the data is)
	 * last: without them the recording was never finished */
	if (!off)
		return ks_error_at(err, td->src.path, hdr->pos - 8,
				   "truncated: the options offset is 0 (the recording was not finished)");
	while (off) {
		struct rd r = { .td = td };
		uint16_t id;
		uint8_t *data;
		uint64_t len;
		int ret;

		if (++n > MAX_OPTION_SECTIONS)
			return ks_error_at(err, td->src.path, off, "more than %d options sections",
					   MAX_OPTION_SECTIONS);
		if (td_load_section(td, off, n == 1 ? "file header" : "previous options section", &id,
				 &data, &len, err) < 0)
			return -1;
		if (id != OPT_DONE) {
			td_section_free(td, data, len);
			return ks_error_at(err, td->src.path, off,
					   "section id %u where an options section was expected", id);
		}
		r.mem = data;
		r.end = len;
		r.base = off;
		end = td->section_end;
		ret = td_parse_options(td, &r, &off, err);
		td_section_free(td, data, len);
		if (ret < 0)
			return -1;
	}
	return check_finished(td, end, err);
}

/* v6: NCPU (offset, size) pairs at R give the CPU data of buffer B. */
static int read_v6_cpu_table(struct tracedat *td, struct tdbuffer *b, struct rd *r, uint32_t ncpu,
			     struct ks_error *err)
{
	uint32_t i;

	if (td_add_cursors(td, b, ncpu, r->pos, err) < 0)
		return -1;
	r->what = "flyrecord CPU table";
	for (i = 0; i < ncpu; i++) {
		uint64_t at = r->pos, off, size;
		if (td_rd_u64(r, &off, err) < 0 || td_rd_u64(r, &size, err) < 0 ||
		    td_set_cursor(td, b, i, i, off, size, at, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_v6_flyrecord(struct tracedat *td, struct rd *r, uint32_t ncpu,
			      struct ks_error *err)
{
	struct tdbuffer *b = td_add_tdbuffer(td, "", r->pos, r->pos, err);

	return b ? read_v6_cpu_table(td, b, r, ncpu, err) : -1;
}

/* v6 instances: at each BUFFER option's offset, "flyrecord\0" and the CPU table. */
static int parse_v6_instances(struct tracedat *td, struct ks_error *err)
{
	uint32_t i, n = td->nr_buffers;

	for (i = 0; i < n; i++) {
		struct tdbuffer *b = &td->buffers[i];
		struct rd r = { .td = td, .pos = b->offset, .end = td->file_size,
				.what = "buffer instance" };
		char kind[10];

		if (!b->name[0])
			continue;
		if (b->offset > td->file_size)
			return ks_error_at(err, td->src.path, b->offset,
					   "buffer \"%s\" lies outside the file", b->name);
		if (td_rd_bytes(&r, kind, 10, err) < 0)
			return -1;
		if (memcmp(kind, "flyrecord", 10))
			return ks_error_at(err, td->src.path, b->offset,
					   "buffer \"%s\": expected \"flyrecord\"", b->name);
		if (read_v6_cpu_table(td, b, &r, td->meta.cpu_count, err) < 0)
			return -1;
	}
	return 0;
}

int td_parse_v6(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	uint32_t ncpu;
	uint64_t next;
	char kind[10];

	if (td_parse_header_info(r, err) < 0 || td_parse_ftrace_formats(r, err) < 0 ||
	    td_parse_event_formats(r, err) < 0 || td_parse_kallsyms(r, err) < 0 ||
	    td_parse_printk(r, err) < 0 || td_parse_cmdlines(r, err) < 0)
		return -1;
	r->what = "CPU count";
	if (td_rd_u32(r, &ncpu, err) < 0)
		return -1;
	if (ncpu > 1u << 16)
		return ks_error_at(err, td->src.path, r->pos - 4, "implausible CPU count %u", ncpu);
	td->meta.cpu_count = ncpu;
	r->what = "data kind";
	if (td_rd_bytes(r, kind, 10, err) < 0)
		return -1;
	if (!memcmp(kind, "options  ", 10)) {
		if (td_parse_options(td, r, &next, err) < 0)
			return -1;
		r->what = "data kind";
		if (td_rd_bytes(r, kind, 10, err) < 0)
			return -1;
	}
	if (!memcmp(kind, "latency  ", 10)) {
		/* the rest of the file is the text of the trace */
		td->latency = td->meta.has_latency = true;
		td->latency_offset = r->pos;
		return 0;
	}
	if (memcmp(kind, "flyrecord", 10))
		return ks_error_at(err, td->src.path, r->pos - 10,
				   "unknown data kind (not flyrecord or latency)");
	if (parse_v6_flyrecord(td, r, ncpu, err) < 0)
		return -1;
	return parse_v6_instances(td, err);
}

static int parse_compression(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	uint64_t at = r->pos;

	r->what = "compression header";
	if (td_rd_string(r, td->meta.compression, sizeof(td->meta.compression), err) < 0 ||
	    td_rd_string(r, td->meta.compression_version, sizeof(td->meta.compression_version), err) < 0)
		return -1;
	if (!strcmp(td->meta.compression, "none"))
		td->comp = COMP_NONE;
	else if (!strcmp(td->meta.compression, "zlib"))
		td->comp = COMP_ZLIB;
	else if (!strcmp(td->meta.compression, "zstd"))
		td->comp = COMP_ZSTD;
	else
		return ks_error_at(err, td->src.path, at,
				   "unsupported compression algorithm \"%s\" (known: none, zlib, zstd)",
				   td->meta.compression);
	return 0;
}

int td_parse_file_header(struct tracedat *td, struct rd *r, struct ks_error *err)
{
	char magic[10], version[8];
	uint8_t endian, lsize;
	uint32_t psize;

	r->what = "file header";
	if (td_rd_bytes(r, magic, 10, err) < 0)
		return -1;
	if (memcmp(magic, KS_TRACEDAT_MAGIC, 10))
		return ks_error_at(err, td->src.path, 0, "not a trace.dat file (bad magic)");
	if (td_rd_string(r, version, sizeof(version), err) < 0)
		return -1;
	if (strcmp(version, "6") && strcmp(version, "7"))
		return ks_error_at(err, td->src.path, 10,
				   "unsupported trace.dat version \"%s\" (only 6 and 7)", version);
	td->meta.version = version[0] - '0';
	if (td_rd_bytes(r, &endian, 1, err) < 0 || td_rd_bytes(r, &lsize, 1, err) < 0)
		return -1;
	if (endian > 1 || (lsize != 4 && lsize != 8))
		return ks_error_at(err, td->src.path, r->pos - 2,
				   "bad endian flag %u or long size %u", endian, lsize);
	td->meta.big_endian = endian;
	td->swap = (endian == 1) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	td->meta.long_size = lsize;
	if (td_rd_u32(r, &psize, err) < 0)
		return -1;
	if (psize < 64 || psize > (1u << 24) || (psize & (psize - 1)))
		return ks_error_at(err, td->src.path, r->pos - 4, "bad page size %u", psize);
	td->meta.page_size = td->page_size = psize;
	strcpy(td->meta.compression, "none");
	if (td->meta.version >= 7)
		return parse_compression(td, r, err);
	return 0;
}

/* ------------------------------------------------------------------ */
/* info */

static void copy_word(char *dst, size_t max, const char *src, size_t len)
{
	if (len >= max)
		len = max - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* UNAME is "sysname nodename release version... machine". */
static void info_from_uname(struct ks_source_info *info, const char *uname)
{
	const char *words[3], *p = uname, *last = NULL;
	size_t lens[3], last_len = 0;
	int n = 0;

	while (*p) {
		size_t len;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		len = strcspn(p, " \n");
		if (n < 3) {
			words[n] = p;
			lens[n] = len;
		}
		n++;
		last = p;
		last_len = len;
		p += len;
		if (*p == '\n')
			break;
	}
	if (n >= 3) {
		copy_word(info->hostname, sizeof(info->hostname), words[1], lens[1]);
		copy_word(info->osrelease, sizeof(info->osrelease), words[2], lens[2]);
	}
	if (n >= 4 && last)
		copy_word(info->arch, sizeof(info->arch), last, last_len);
}

/* trace-cmd treats these clocks as raw counters unless TSC2NSEC is given. */
static bool clock_is_counter(const char *clock)
{
	return clock && (!strcmp(clock, "x86-tsc") || !strcmp(clock, "counter") ||
			 !strcmp(clock, "uptime"));
}

uint32_t td_top_buffer(const struct tracedat *td)
{
	uint32_t i;

	for (i = 0; i < td->nr_buffers; i++)
		if (!td->buffers[i].name[0])
			return i;
	return 0;
}

void td_fill_info(struct tracedat *td)
{
	struct ks_tracedat_meta *m = &td->meta;
	struct ks_source_info *info = &td->src.info;

	if (m->version == 6)
		snprintf(td->format, sizeof(td->format), "trace.dat v6");
	else if (td->comp == COMP_NONE)
		snprintf(td->format, sizeof(td->format), "trace.dat v7");
	else
		snprintf(td->format, sizeof(td->format), "trace.dat v7 (%s)", m->compression);
	info->format = td->format;
	info->big_endian = m->big_endian;
	if (m->uname)
		info_from_uname(info, m->uname);
	if (m->clock)
		copy_word(info->clock, sizeof(info->clock), m->clock, strlen(m->clock));
	if (m->version >= 7 && td->have_top) {
		const struct tdbuffer *top = &td->buffers[td_top_buffer(td)];
		uint32_t i, max = 0;
		for (i = top->first; i < top->first + top->nr_cpus; i++)
			if (td->cpus[i].cpu + 1 > max)
				max = td->cpus[i].cpu + 1;
		/* trace-cmd reports the larger of CPUCOUNT and the buffer's CPUs */
		info->nr_cpus = (int)(max > m->cpu_count ? max : m->cpu_count);
	} else {
		info->nr_cpus = (int)m->cpu_count;
	}
	m->ts_in_ns = m->has_tsc2nsec || (m->clock && !clock_is_counter(m->clock));
	m->tsync_applied = m->has_time_shift && m->tsync_nr_cpus > 0;
}

/* What the source interface hands out (ks_source_clock, ks_source_guests,
 * ks_source_text(KS_TEXT_UNAME)) from the options read.  Returns 0 or -1
 * (out of memory). */
int td_fill_source_meta(struct tracedat *td)
{
	const struct ks_tracedat_meta *m = &td->meta;
	struct ks_source_meta *sm = &td->src.meta;
	uint32_t i;

	sm->clock = (struct ks_source_clock){
		.name = m->clock,
		.raw_counter = !m->tsync_applied && m->ts_offset == 0 &&
			       (m->has_tsc2nsec ? m->tsc_mult != 0 : m->clock != NULL),
		.has_tsc2nsec = m->has_tsc2nsec, .tsc_mult = m->tsc_mult,
		.ts_ticks = !m->ts_in_ns,
		.tsc_shift = m->tsc_shift, .tsc_offset = m->tsc_offset,
		.ts_offset = m->ts_offset, .moved = m->tsync_applied,
		.has_trace_id = m->has_trace_id, .trace_id = m->trace_id,
	};
	/* the generic TimeShift types have the reader's layouts */
	_Static_assert(sizeof(struct ks_source_tsync_cpu) == sizeof(struct ks_tracedat_tsync_cpu) &&
		       sizeof(struct ks_source_tsync_sample) ==
		       sizeof(struct ks_tracedat_tsync_sample), "TimeShift layouts differ");
	if (m->has_time_shift && m->tsync_nr_cpus > 0) {
		sm->has_timeshift = true;
		sm->timeshift = (struct ks_source_timeshift){
			.peer_id = m->tsync_peer_id, .flags = m->tsync_flags,
			.nr_cpus = m->tsync_nr_cpus,
			.cpus = (const struct ks_source_tsync_cpu *)m->tsync_cpus,
		};
	}
	sm->buffers = (const char *const *)m->buffer_names;
	sm->nr_buffers = m->nr_buffers;
	if (m->uname && ks_source_meta_set_text(sm, KS_TEXT_UNAME, m->uname, strlen(m->uname),
						false) < 0)
		return -1;
	sm->procs = td->vmident.procs;
	sm->nr_procs = td->vmident.nprocs;
	if (!m->nr_guests)
		return 0;
	sm->guests = calloc(m->nr_guests, sizeof(*sm->guests));
	if (!sm->guests)
		return -1;
	/* struct ks_source_vcpu and struct ks_tracedat_vcpu have one layout */
	_Static_assert(sizeof(struct ks_source_vcpu) == sizeof(struct ks_tracedat_vcpu),
		       "vCPU map layouts differ");
	for (i = 0; i < m->nr_guests; i++)
		sm->guests[i] = (struct ks_source_guest){
			.name = m->guests[i].name ? m->guests[i].name : "",
			.trace_id = m->guests[i].trace_id,
			.nr_vcpus = m->guests[i].nr_vcpus,
			.vcpus = (const struct ks_source_vcpu *)m->guests[i].vcpus,
		};
	sm->nr_guests = m->nr_guests;
	return 0;
}

