/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * orc.h - the guest kernel's ORC unwind tables (pre-6.4 or 6.4+ entry
 * layout): decoded from raw sections or loaded out of guest memory.
 */
#ifndef KVMSCOPE_ORC_H
#define KVMSCOPE_ORC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmscope/error.h"
#include "kvmscope/vmem.h"

enum ks_orc_layout { KS_ORC_PRE_6_4 = 0, KS_ORC_6_4 = 1 };
enum ks_orc_type { KS_ORC_UNDEFINED, KS_ORC_END, KS_ORC_CALL, KS_ORC_REGS, KS_ORC_REGS_PARTIAL };
enum ks_orc_reg {
	KS_ORC_REG_UNDEFINED = 0, KS_ORC_REG_PREV_SP = 1, KS_ORC_REG_DX = 2, KS_ORC_REG_DI = 3,
	KS_ORC_REG_BP = 4, KS_ORC_REG_SP = 5, KS_ORC_REG_R10 = 6, KS_ORC_REG_R13 = 7,
	KS_ORC_REG_BP_INDIRECT = 8, KS_ORC_REG_SP_INDIRECT = 9,
};

struct ks_orc_entry {
	int16_t sp_offset, bp_offset;
	uint8_t sp_reg, bp_reg, type, signal;
};

struct ks_orc {
	uint64_t *ips;        /* absolute, sorted */
	uint8_t *entries;     /* 6 bytes each */
	size_t n;
	enum ks_orc_layout layout;
	uint64_t text_end;    /* ips past this have no entry (0 = unknown) */
};

/* From the raw sections: IP_TAB holds N s32 offsets relative to each slot,
 * the first slot at guest address IP_BASE; ORC_TAB holds N 6-byte entries. */
int ks_orc_from_tables(struct ks_orc *o, const uint8_t *ip_tab, size_t ip_len, uint64_t ip_base,
		       const uint8_t *orc_tab, size_t orc_len, enum ks_orc_layout layout,
		       struct ks_error *err);
/* Read both tables out of guest memory.  The bounds are checked before
 * anything is allocated: N = (STOP_IP - START_IP) / 4 entries, at most
 * KS_ORC_MAX_ENTRIES (real kernels have under a million), 6 * N entry
 * bytes, 10 * N bytes in all within the guest memory's size (when known),
 * and the first and last bytes of both tables readable. */
#define KS_ORC_MAX_ENTRIES (4u << 20)
int ks_orc_load(struct ks_orc *o, struct ks_vmem *v, uint64_t start_ip, uint64_t stop_ip,
		uint64_t start_orc, uint64_t stop_orc, enum ks_orc_layout layout,
		struct ks_error *err);
void ks_orc_free(struct ks_orc *o);
bool ks_orc_find(const struct ks_orc *o, uint64_t ip, struct ks_orc_entry *e);
void ks_orc_decode(const uint8_t raw[6], enum ks_orc_layout layout, struct ks_orc_entry *e);
/* "Linux version 6.1.0 ..." -> layout by version (6.4+ is new). */
int ks_orc_layout_from_banner(const char *banner, enum ks_orc_layout *layout);

#endif
