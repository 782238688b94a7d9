/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text_layout.h - how the printed text of an event reads back into its
 * fields: a table per event, one row per field.  The ftrace text reader
 * (src/input/ftrace_text_fields.c) runs the rows; an architecture lists
 * the layouts of its own events beside their formats (the text_layouts of
 * struct ks_arch), the reader those of generic code.
 *
 * An event whose kernel text and trace-cmd plugin's text differ has one
 * layout per text, in a row of the table with the same name: the first
 * whose WHEN key the line has (NULL: any line) reads it.  The layouts of
 * one event list the same fields in the same order.
 *
 *	static const struct ks_text_field entry_fields[] = {
 *		{ .field = "vcpu_id", .key = "vcpu ", .base = 10 },
 *		{ .field = "rip", .key = "rip " },
 *		{ .field = "immediate_exit", .kind = KS_TEXT_FLAG,
 *		  .key = "[immediate exit]" },
 *		{ .field = NULL },
 *	};
 *	{ .system = "kvm", .name = "kvm_entry", .fields = entry_fields },
 */
#ifndef KVMSCOPE_ARCH_TEXT_LAYOUT_H
#define KVMSCOPE_ARCH_TEXT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct ks_code_name;

enum ks_text_kind {
	KS_TEXT_NUM = 0,   /* the number after KEY, in BASE (0: C's prefixes) */
	KS_TEXT_WORD,      /* the index in WORDS of the word after KEY */
	KS_TEXT_FLAG,      /* 1 when the text holds KEY anywhere, else 0 */
	KS_TEXT_CONST,     /* VALUE */
	KS_TEXT_EXIT,      /* the code of the exit reason named after KEY, up
			    * to STOP (see struct ks_text_exit) */
	KS_TEXT_EXIT_SEL,  /* that exit's table selector (x86: the isa) */
};

/* Flags of a row. */
enum {
	KS_TEXT_OPTIONAL = 1 << 0,  /* absent or unreadable: 0 */
	KS_TEXT_FOLLOWS = 1 << 1,   /* right after the previous row's value:
				     * KEY there (NULL: none), then spaces */
	KS_TEXT_SIGNED = 1 << 2,    /* a '-' may precede the number */
	KS_TEXT_OR_NUMBER = 1 << 3, /* WORD: none of WORDS: a number there */
	KS_TEXT_LAST = 1 << 4,      /* after KEY's last place in the text */
	KS_TEXT_VCPU_SET = 1 << 5,  /* the value is the thread's vCPU from now on */
	KS_TEXT_VCPU_GET = 1 << 6,  /* absent: the thread's vCPU (else 0) */
};

/* The exit reason of a KS_TEXT_EXIT row: a name of the architecture's
 * tables (its exit_code hook), then one of SUFFIXES (NSUFFIXES; their
 * codes are or'ed in: x86 VMX " FAILED_VMENTRY"); or a number, as
 * "UNKNOWN (N)" (trace-cmd's kvm plugin) or N, whose selector is the last
 * exit's of the input, else the one of the first row of UNNAMED (ended by
 * MIN 0) whose MIN the code reaches. */
struct ks_text_sel {
	uint64_t min;
	int32_t sel;
};

struct ks_text_exit {
	const struct ks_code_name *suffixes;
	size_t nsuffixes;
	const struct ks_text_sel *unnamed;
};

/* One field of an event's text.  KEY starts the text or follows a space
 * ("rip ", "pid="); NULL: the value starts the text. */
struct ks_text_field {
	const char *field;           /* NULL ends the rows */
	enum ks_text_kind kind;
	const char *key;
	int base;
	unsigned flags;
	const char *const *words;    /* WORD: NULL ends */
	uint64_t value;              /* CONST */
	const char *stop;            /* EXIT: the text after the name */
	const struct ks_text_exit *exit;
};

struct ks_text_layout {
	const char *system, *name;   /* NULL name ends a table */
	const char *when;            /* a key the line must have; NULL: any */
	const struct ks_text_field *fields;
};

#endif
