/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_unwind.c - kvmscope unwind: every vCPU's stack from a QEMU
 * dump-guest-memory ELF file.
 *
 * Registers come from the per-vCPU QEMU notes (cr3 included); memory from
 * the dump's LOAD segments through the same page walk and unwinders as
 * `kvmscope sample`.  Prints one block per vCPU (the format of
 * `kvmscope sample --stacks`) or folded lines with --folded.
 * See kvmscope-unwind(1).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/guestsyms.h"
#include "kvmscope/qemudump.h"
#include "kvmscope/unwind.h"

static const struct opt_cmd unwind_cmd = {
	.name = "unwind",
	.synopsis = "[options] DUMP",
	.intro = "Print every vCPU's guest call chain (kernel and user) from a QEMU\n"
		 "dump-guest-memory ELF file (QMP: dump-guest-memory paging=false).\n",
	.outro = "See kvmscope-unwind(1).\n",
};

struct unwind_args {
	const char *dump;
	struct ks_guestsyms_opts syms;
	enum ks_kunwind kunwind;
	bool kunwind_auto, folded;
	int layout, kunwind_idx, layout_idx;
	long long vcpu;
};

const char *const kunwind_names[] = { "auto", "orc", "fp", "none", NULL };
const enum ks_kunwind kunwind_values[] = {
	KS_KUNWIND_ORC, KS_KUNWIND_ORC, KS_KUNWIND_FP, KS_KUNWIND_NONE,
};
const char *const orc_layout_names[] = { "auto", "pre-6.4", "6.4", NULL };
const int orc_layout_values[] = { KS_ORC_AUTO, KS_ORC_PRE_6_4, KS_ORC_6_4 };

static void parse_args(int argc, char **argv, struct unwind_args *a)
{
	const struct opt opts[] = {
		OPT_STRING(0, "guest-kallsyms", &a->syms.kallsyms, "F",
			   "guest /proc/kallsyms of the same boot"),
		OPT_STRING(0, "guest-modules", &a->syms.modules, "F", "guest /proc/modules"),
		OPT_STRING(0, "guest-vmlinux", &a->syms.vmlinux, "F",
			   "guest vmlinux (relocated by the kallsyms' _stext, else\n"
			   "by the dump's VMCOREINFO KERNELOFFSET)"),
		OPT_LIST(0, "guest-binary", a->syms.binaries, &a->syms.nbinaries,
			 KS_GUESTSYMS_MAX_BINARIES, "P[:A]",
			 "guest user program P loaded at A (repeatable)"),
		OPT_KERNEL_UNWIND(&a->kunwind_idx),
		OPT_ORC_LAYOUT(&a->layout_idx),
		OPT_FLAG(0, "folded", &a->folded, "folded stacks (vcpuN;root;...;leaf 1) instead"),
		OPT_INT(0, "vcpu", &a->vcpu, "N", "only this vCPU", 0, 1 << 20),
		OPT_END(),
	};
	int first;

	memset(a, 0, sizeof(*a));
	a->vcpu = -1;
	first = parse_options(&unwind_cmd, opts, argc, argv);
	a->kunwind = kunwind_values[a->kunwind_idx];
	a->kunwind_auto = a->kunwind_idx == 0;
	a->layout = orc_layout_values[a->layout_idx];
	if (first != argc - 1)
		usage_error("unwind", first == argc ? "expected a dump file" :
			    "expected one dump file, not several");
	a->dump = argv[first];
}

static void setup_unwinder(struct unwind_args *a, struct ks_qemudump *d, struct ks_guestsyms *gs,
			   struct ks_orc *orc, struct ks_unwinder *u)
{
	struct ks_x86_regs r;
	struct ks_vmem vm;
	struct ks_orc_info info;
	struct ks_error err;

	u->user = true;
	u->kernel = a->kunwind;
	if (a->kunwind != KS_KUNWIND_ORC)
		return;
	ks_qemudump_regs(d, 0, &r);
	ks_vmem_init(&vm, ks_qemudump_mem(d));
	ks_vmem_reset(&vm, r.cr3, r.cr4);
	if (ks_guest_orc_setup(orc, &vm, gs->kernel, a->layout, &info, &err) < 0) {
		if (!a->kunwind_auto)
			die("%s", err.msg);
		fprintf(stderr, "kvmscope: %s; kernel frames by frame pointers\n", err.msg);
		u->kernel = KS_KUNWIND_FP;
		return;
	}
	u->orc = orc;
}

static void load_symbols(struct unwind_args *a, struct ks_qemudump *d, struct ks_guestsyms *gs)
{
	struct ks_error err;
	uint64_t off;

	/* Without kallsyms a vmlinux is placed by VMCOREINFO's KASLR slide. */
	if (a->syms.vmlinux && !a->syms.kallsyms &&
	    ks_qemudump_vmcoreinfo_u64(d, "KERNELOFFSET", &off) == 0)
		a->syms.kaslr_offset = off;
	if (ks_guestsyms_load(gs, &a->syms, &err) < 0)
		die("%s", err.msg);
}

/* kallsyms of another boot (or kernel) give [unknown] frames: say so. */
static void check_kernel_symbols(const struct unwind_args *a, struct ks_qemudump *d,
				 const struct ks_guestsyms *gs)
{
	uint64_t stext = 0;
	struct ks_x86_regs r;
	struct ks_error err;
	struct ks_vmem vm;

	if (!a->syms.kallsyms || !gs->kernel)
		return;
	if (ks_qemudump_vmcoreinfo_u64(d, "SYMBOL(_stext)", &stext) < 0)
		stext = 0;
	ks_qemudump_regs(d, 0, &r);
	ks_vmem_init(&vm, ks_qemudump_mem(d));
	if (ks_guestsyms_check_kernel(gs->kernel, &vm, r.cr3, r.cr4, stext, &err) < 0)
		die("%s: %s", a->syms.kallsyms, err.msg);
}

int cmd_unwind(int argc, char **argv)
{
	struct unwind_args a;
	struct ks_guestsyms gs;
	struct ks_error err;
	struct ks_qemudump *d;
	struct ks_orc orc = { 0 };
	struct ks_unwinder u = { 0 };
	static struct ks_stack st;
	struct ks_vmem vm;
	char line[16384];
	uint64_t off;

	parse_args(argc, argv, &a);
	d = ks_qemudump_open(a.dump, &err);
	if (!d)
		die("%s", err.msg);
	if (a.vcpu >= 0 && (size_t)a.vcpu >= ks_qemudump_vcpus(d))
		die("%s: --vcpu %lld: the dump holds %zu vCPU%s (0-%zu)", a.dump, a.vcpu,
		    ks_qemudump_vcpus(d), ks_qemudump_vcpus(d) == 1 ? "" : "s",
		    ks_qemudump_vcpus(d) ? ks_qemudump_vcpus(d) - 1 : 0);
	load_symbols(&a, d, &gs);
	check_kernel_symbols(&a, d, &gs);
	setup_unwinder(&a, d, &gs, &orc, &u);
	if (!a.folded && ks_qemudump_vmcoreinfo_u64(d, "KERNELOFFSET", &off) == 0)
		printf("vmcoreinfo: KERNELOFFSET=0x%" PRIx64 "\n", off);
	ks_vmem_init(&vm, ks_qemudump_mem(d));
	for (size_t i = 0; i < ks_qemudump_vcpus(d); i++) {
		struct ks_x86_regs r;
		if (a.vcpu >= 0 && (size_t)a.vcpu != i)
			continue;
		ks_qemudump_regs(d, i, &r);
		ks_vmem_reset(&vm, r.cr3, r.cr4);
		ks_unwind(&u, &vm, &r, &st);
		if (a.folded) {
			if (ks_stack_fold(&gs, &st, false, line, sizeof(line)) < 0)
				snprintf(line, sizeof(line), "[truncated]");
			printf("vcpu%zu;%s 1\n", i, line);
			continue;
		}
		printf("vcpu %zu rip 0x%016" PRIx64 " rsp 0x%016" PRIx64 " cr3 0x%" PRIx64 "\n", i,
		       r.rip, r.rsp, r.cr3);
		ks_stack_print(stdout, &gs, &st);
	}
	ks_orc_free(&orc);
	ks_guestsyms_free(&gs);
	ks_qemudump_close(d);
	return 0;
}
