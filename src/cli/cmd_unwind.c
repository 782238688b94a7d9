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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmscope/guestsyms.h"
#include "kvmscope/qemudump.h"
#include "kvmscope/unwind.h"

static const char usage_text[] =
	"usage: kvmscope unwind [options] DUMP\n"
	"\n"
	"Print every vCPU's guest call chain (kernel and user) from a QEMU\n"
	"dump-guest-memory ELF file (QMP: dump-guest-memory paging=false).\n"
	"\n"
	"      --guest-kallsyms F    guest /proc/kallsyms of the same boot\n"
	"      --guest-modules F     guest /proc/modules\n"
	"      --guest-vmlinux F     guest vmlinux (relocated by the kallsyms' _stext, else\n"
	"                            by the dump's VMCOREINFO KERNELOFFSET)\n"
	"      --guest-binary P[:A]  guest user program P loaded at A (repeatable)\n"
	"      --kernel-unwind M     auto (default), orc, fp or none\n"
	"      --orc-layout L        auto (default), pre-6.4 or 6.4\n"
	"      --folded              folded stacks (vcpuN;root;...;leaf 1) instead\n"
	"      --vcpu N              only this vCPU\n"
	"  -h, --help                this help\n";

struct unwind_args {
	const char *dump;
	struct ks_guestsyms_opts syms;
	enum ks_kunwind kunwind;
	bool kunwind_auto, folded;
	int layout;
	long vcpu;
};

enum { O_KALLSYMS = 256, O_MODULES, O_VMLINUX, O_BINARY, O_KUNWIND, O_LAYOUT, O_FOLDED, O_VCPU };

enum ks_kunwind parse_kernel_unwind(const char *cmd, const char *s, bool *is_auto)
{
	static const char *const names[] = { "auto", "orc", "fp", "none", NULL };
	static const enum ks_kunwind values[] = {
		KS_KUNWIND_ORC, KS_KUNWIND_ORC, KS_KUNWIND_FP, KS_KUNWIND_NONE,
	};
	int i = parse_choice(cmd, "--kernel-unwind", s, names);

	*is_auto = i == 0;
	return values[i];
}

int parse_orc_layout(const char *cmd, const char *s)
{
	static const char *const names[] = { "auto", "pre-6.4", "6.4", NULL };
	static const int values[] = { KS_ORC_AUTO, KS_ORC_PRE_6_4, KS_ORC_6_4 };

	return values[parse_choice(cmd, "--orc-layout", s, names)];
}

static void parse_args(int argc, char **argv, struct unwind_args *a)
{
	static const struct option opts[] = {
		{ "guest-kallsyms", required_argument, NULL, O_KALLSYMS },
		{ "guest-modules", required_argument, NULL, O_MODULES },
		{ "guest-vmlinux", required_argument, NULL, O_VMLINUX },
		{ "guest-binary", required_argument, NULL, O_BINARY },
		{ "kernel-unwind", required_argument, NULL, O_KUNWIND },
		{ "orc-layout", required_argument, NULL, O_LAYOUT },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "vcpu", required_argument, NULL, O_VCPU },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->kunwind = KS_KUNWIND_ORC;
	a->kunwind_auto = true;
	a->layout = KS_ORC_AUTO;
	a->vcpu = -1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_KALLSYMS: a->syms.kallsyms = optarg; break;
		case O_MODULES: a->syms.modules = optarg; break;
		case O_VMLINUX: a->syms.vmlinux = optarg; break;
		case O_BINARY:
			if (a->syms.nbinaries >= KS_GUESTSYMS_MAX_BINARIES)
				usage_error("unwind", "too many --guest-binary");
			a->syms.binaries[a->syms.nbinaries++] = optarg;
			break;
		case O_KUNWIND:
			a->kunwind = parse_kernel_unwind("unwind", optarg, &a->kunwind_auto);
			break;
		case O_LAYOUT: a->layout = parse_orc_layout("unwind", optarg); break;
		case O_FOLDED: a->folded = true; break;
		case O_VCPU: a->vcpu = strtol(optarg, NULL, 0); break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: usage_error("unwind", "unknown option");
		}
	}
	if (optind != argc - 1)
		usage_error("unwind", "expected one dump file");
	a->dump = argv[optind];
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
	load_symbols(&a, d, &gs);
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
