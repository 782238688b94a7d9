/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * orc.c - the guest kernel's ORC unwind tables, read out of guest memory.
 *
 * vmlinux carries two parallel tables: .orc_unwind_ip (s32 per entry, the
 * ip relative to the entry's own address) and .orc_unwind (6-byte entries:
 * s16 sp_offset, s16 bp_offset, then a byte of sp_reg:4/bp_reg:4 and a byte
 * whose bits changed in Linux 6.4:
 *   before 6.4: type:2 (0 call, 1 regs, 2 regs partial), end:1
 *   6.4 and on: type:3 (0 undefined, 1 end of stack, 2 call, 3 regs,
 *               4 regs partial), signal:1
 * Both are normalised to struct ks_orc_entry.  kallsyms gives the table
 * bounds (__start_orc_unwind_ip ...); ips are made absolute and searched
 * with a binary search (the kernel's orc_lookup block index is only an
 * accelerator for the same answer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmscope/orc.h"

#define ORC_ENTRY_SIZE 6
#define ORC_MAX_ENTRIES KS_ORC_MAX_ENTRIES
/* the ip table is read in pieces of this many entries, straight into the
 * table of absolute ips (no copy of the raw table) */
#define IP_PIECE 4096

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

void ks_orc_decode(const uint8_t raw[6], enum ks_orc_layout layout, struct ks_orc_entry *e)
{
	uint8_t regs = raw[4], bits = raw[5];

	e->sp_offset = (int16_t)le16(raw);
	e->bp_offset = (int16_t)le16(raw + 2);
	e->sp_reg = regs & 0xf;
	e->bp_reg = regs >> 4;
	if (layout == KS_ORC_6_4) {
		static const uint8_t map[8] = { KS_ORC_UNDEFINED, KS_ORC_END, KS_ORC_CALL, KS_ORC_REGS,
						KS_ORC_REGS_PARTIAL, KS_ORC_UNDEFINED, KS_ORC_UNDEFINED,
						KS_ORC_UNDEFINED };
		e->type = map[bits & 7];
		e->signal = (bits >> 3) & 1;
		if (e->type == KS_ORC_REGS || e->type == KS_ORC_REGS_PARTIAL)
			e->signal = 1;
		return;
	}
	if (e->sp_reg == KS_ORC_REG_UNDEFINED) {
		e->type = (bits >> 2) & 1 ? KS_ORC_END : KS_ORC_UNDEFINED;
		e->signal = 0;
		return;
	}
	switch (bits & 3) {
	case 0: e->type = KS_ORC_CALL; break;
	case 1: e->type = KS_ORC_REGS; break;
	case 2: e->type = KS_ORC_REGS_PARTIAL; break;
	default: e->type = KS_ORC_UNDEFINED; break;
	}
	e->signal = e->type == KS_ORC_REGS || e->type == KS_ORC_REGS_PARTIAL;
}

struct ip_pair { uint64_t ip; uint32_t idx; };

static int cmp_pair(const void *a, const void *b)
{
	const struct ip_pair *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The kernel sorts the tables at build time; sort anyway if they are not. */
static int sort_tables(struct ks_orc *o)
{
	struct ip_pair *p = malloc(o->n * sizeof(*p));
	uint8_t *e;

	if (!p)
		return -1;
	e = malloc(o->n * ORC_ENTRY_SIZE);
	if (!e) {
		free(p);
		return -1;
	}
	for (size_t i = 0; i < o->n; i++)
		p[i] = (struct ip_pair){ o->ips[i], (uint32_t)i };
	qsort(p, o->n, sizeof(*p), cmp_pair);
	for (size_t i = 0; i < o->n; i++) {
		o->ips[i] = p[i].ip;
		memcpy(e + i * ORC_ENTRY_SIZE, o->entries + (size_t)p[i].idx * ORC_ENTRY_SIZE,
		       ORC_ENTRY_SIZE);
	}
	free(o->entries);
	o->entries = e;
	free(p);
	return 0;
}

int ks_orc_from_tables(struct ks_orc *o, const uint8_t *ip_tab, size_t ip_len, uint64_t ip_base,
		       const uint8_t *orc_tab, size_t orc_len, enum ks_orc_layout layout,
		       struct ks_error *err)
{
	size_t n = ip_len / 4;
	bool sorted = true;

	memset(o, 0, sizeof(*o));
	if (ip_len % 4 || n == 0 || n > ORC_MAX_ENTRIES || orc_len != n * ORC_ENTRY_SIZE)
		return ks_error_set(err, "ORC tables: %zu ip bytes and %zu entry bytes do not match",
				    ip_len, orc_len);
	o->ips = malloc(n * sizeof(*o->ips));
	o->entries = malloc(orc_len);
	if (!o->ips || !o->entries) {
		ks_orc_free(o);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	memcpy(o->entries, orc_tab, orc_len);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = ip_tab + 4 * i;
		int32_t rel = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
					(uint32_t)p[3] << 24);
		o->ips[i] = ip_base + 4 * i + (uint64_t)(int64_t)rel;
		if (i && o->ips[i] < o->ips[i - 1])
			sorted = false;
	}
	o->n = n;
	o->layout = layout;
	if (!sorted && sort_tables(o) < 0) {
		ks_orc_free(o);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	return 0;
}

/* Whether the first and last byte of the LEN bytes at VA can be read. */
static bool ends_readable(struct ks_vmem *v, uint64_t va, uint64_t len)
{
	uint8_t b;

	return ks_vmem_read(v, va, &b, 1) == 0 && ks_vmem_read(v, va + len - 1, &b, 1) == 0;
}

int ks_orc_load(struct ks_orc *o, struct ks_vmem *v, uint64_t start_ip, uint64_t stop_ip,
		uint64_t start_orc, uint64_t stop_orc, enum ks_orc_layout layout,
		struct ks_error *err)
{
	uint64_t n, ip_len, orc_len, mem = v->m ? v->m->size : 0;
	uint8_t piece[IP_PIECE * 4];
	bool sorted = true;

	memset(o, 0, sizeof(*o));
	/* every size is checked before anything is allocated or read: the
	 * bounds come from a kallsyms file, the memory may be a crafted dump
	 * whose page tables map one page at every address */
	if (stop_ip <= start_ip || stop_orc <= start_orc || (stop_ip - start_ip) % 4)
		return ks_error_set(err, "ORC: implausible table bounds from kallsyms");
	ip_len = stop_ip - start_ip;
	orc_len = stop_orc - start_orc;
	n = ip_len / 4;
	if (orc_len / ORC_ENTRY_SIZE != n || orc_len % ORC_ENTRY_SIZE)
		return ks_error_set(err, "ORC: tables of %llu ip bytes and %llu entry bytes do not match",
				    (unsigned long long)ip_len, (unsigned long long)orc_len);
	if (n > ORC_MAX_ENTRIES)
		return ks_error_set(err, "ORC: kallsyms give tables of %llu entries (limit %u)",
				    (unsigned long long)n, ORC_MAX_ENTRIES);
	if (mem && ip_len + orc_len > mem)
		return ks_error_set(err, "ORC: kallsyms give tables of %llu bytes, more than the "
				    "guest's %llu bytes of memory", (unsigned long long)(ip_len + orc_len),
				    (unsigned long long)mem);
	if (!ends_readable(v, start_ip, ip_len) || !ends_readable(v, start_orc, orc_len))
		return ks_error_set(err, "ORC: cannot read the tables out of guest memory (0x%llx)",
				    (unsigned long long)start_ip);
	o->ips = malloc(n * sizeof(*o->ips));
	o->entries = malloc(orc_len);
	if (!o->ips || !o->entries) {
		ks_orc_free(o);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < n; i += IP_PIECE) {
		uint64_t k = n - i < IP_PIECE ? n - i : IP_PIECE;

		if (ks_vmem_read(v, start_ip + 4 * i, piece, (size_t)k * 4) < 0) {
			ks_orc_free(o);
			return ks_error_set(err, "ORC: cannot read the tables out of guest memory (0x%llx)",
					    (unsigned long long)(start_ip + 4 * i));
		}
		for (uint64_t j = 0; j < k; j++) {
			const uint8_t *p = piece + 4 * j;
			int32_t rel = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
						(uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);

			o->ips[i + j] = start_ip + 4 * (i + j) + (uint64_t)(int64_t)rel;
			if (i + j && o->ips[i + j] < o->ips[i + j - 1])
				sorted = false;
		}
	}
	if (ks_vmem_read(v, start_orc, o->entries, (size_t)orc_len) < 0) {
		ks_orc_free(o);
		return ks_error_set(err, "ORC: cannot read the tables out of guest memory (0x%llx)",
				    (unsigned long long)start_orc);
	}
	o->n = (size_t)n;
	o->layout = layout;
	if (!sorted && sort_tables(o) < 0) {
		ks_orc_free(o);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	return 0;
}

void ks_orc_free(struct ks_orc *o)
{
	free(o->ips);
	free(o->entries);
	o->ips = NULL;
	o->entries = NULL;
	o->n = 0;
}

bool ks_orc_find(const struct ks_orc *o, uint64_t ip, struct ks_orc_entry *e)
{
	size_t lo = 0, hi;

	if (!o || !o->n || ip < o->ips[0] || (o->text_end && ip >= o->text_end))
		return false;
	hi = o->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->ips[mid] <= ip)
			lo = mid;
		else
			hi = mid;
	}
	ks_orc_decode(o->entries + lo * ORC_ENTRY_SIZE, o->layout, e);
	return true;
}

int ks_orc_layout_from_banner(const char *banner, enum ks_orc_layout *layout)
{
	unsigned major, minor;
	const char *p = strstr(banner, "Linux version ");

	if (!p || sscanf(p + 14, "%u.%u", &major, &minor) != 2)
		return -1;
	*layout = (major > 6 || (major == 6 && minor >= 4)) ? KS_ORC_6_4 : KS_ORC_PRE_6_4;
	return 0;
}
