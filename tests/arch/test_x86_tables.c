/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_x86_tables.c - our VMX/SVM exit reason tables against the kernel's.
 *
 * Oracle: the __print_symbolic lists in a real kvm_exit format
 * (tests/fixtures/x86-6.18/kvm_exit.format, from a 6.18 kernel's tracefs).
 * Every { code, "name" } pair the kernel prints must be in our table with
 * the same name, and name -> code must invert it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/ktest.h"
#include "arch/arch.h"
#include "arch/x86.h"
#include "arch/x86_msr.h"

/* Parse "{ CODE, "NAME" }" pairs of the __print_symbolic( that starts at P,
 * up to its closing parenthesis; call CHECK for each.  "0x040 + 3" style
 * codes are summed. */
static int each_pair(const char *p, int isa, int *checked)
{
	int bad = 0;

	while (*p && *p != ')') {
		const char *open = strchr(p, '{'), *close_paren = strchr(p, ')');
		char name[64];
		unsigned long long code, add = 0;
		const char *q, *e;
		char *end;

		if (!open || (close_paren && close_paren < open))
			break;
		q = open + 1;
		code = strtoull(q, &end, 0);
		q = end;
		while (*q == ' ')
			q++;
		if (*q == '+') {
			add = strtoull(q + 1, &end, 0);
			q = end;
		}
		code += add;
		q = strchr(q, '"');
		e = q ? strchr(q + 1, '"') : NULL;
		if (!q || !e || (size_t)(e - q - 1) >= sizeof(name))
			break;
		memcpy(name, q + 1, (size_t)(e - q - 1));
		name[e - q - 1] = 0;
		p = strchr(e, '}');
		if (!p)
			break;
		p++;
		if (code == (unsigned long long)-1)
			continue; /* SVM_EXIT_ERR: -1 never equals a 32-bit exit_reason */
		(*checked)++;
		{
			const char *ours = ks_x86_exit_name(isa, code);
			int risa;
			uint64_t rcode;

			if (!ours || strcmp(ours, name)) {
				kt_fail(__FILE__, __LINE__, "isa %d code %#llx: kernel \"%s\", ours \"%s\"",
					isa, code, name, ours ? ours : "(none)");
				bad++;
			} else if (ks_x86_exit_code(name, &risa, &rcode) || risa != isa ||
				   rcode != code) {
				kt_fail(__FILE__, __LINE__, "name %s does not map back to %#llx", name, code);
				bad++;
			}
		}
	}
	return bad;
}

static void t_tables_match_kernel(void)
{
	char *fmt = kt_read_file("tests/fixtures/x86-6.18/kvm_exit.format", NULL);
	const char *vmx, *svm;
	int checked = 0;

	KT_REQUIRE(fmt);
	vmx = strstr(fmt, "__print_symbolic(REC->exit_reason & 0xffff,");
	svm = strstr(fmt, "__print_symbolic(REC->exit_reason,");
	KT_REQUIRE(vmx && svm);
	each_pair(vmx + strlen("__print_symbolic(REC->exit_reason & 0xffff,"), KS_ISA_VMX,
		  &checked);
	each_pair(svm + strlen("__print_symbolic(REC->exit_reason,"), KS_ISA_SVM, &checked);
	KT_EXPECT(checked > 150);
	free(fmt);
}

static void t_isa_from_cpuid(void)
{
	KT_EQ_INT(ks_x86_isa_from_cpuid("GenuineIntel,6,85,7"), KS_ISA_VMX);
	KT_EQ_INT(ks_x86_isa_from_cpuid("AuthenticAMD,25,1,1"), KS_ISA_SVM);
	KT_EQ_INT(ks_x86_isa_from_cpuid("HygonGenuine,24,0,1"), KS_ISA_SVM);
	KT_EQ_INT(ks_x86_isa_from_cpuid("0x00000000410fd0c0"), KS_ISA_UNKNOWN);
}

/* The vPMU's exit kinds (ks_x86_msr_exit) name the reasons the kernel's
 * tables name (checked above): RDMSR/WRMSR and RDPMC, VMX flags aside. */
static void t_msr_exits(void)
{
	static const struct { const char *name; enum ks_msr_exit kind; } want[] = {
		{ "MSR_READ", KS_MSR_EXIT_ACCESS }, { "MSR_WRITE", KS_MSR_EXIT_ACCESS },
		{ "RDPMC", KS_MSR_EXIT_RDPMC }, { "HLT", KS_MSR_EXIT_OTHER },
		{ "msr", KS_MSR_EXIT_ACCESS }, { "rdpmc", KS_MSR_EXIT_RDPMC },
		{ "hlt", KS_MSR_EXIT_OTHER },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t code;
		int isa;

		KT_REQUIRE(ks_x86_exit_code(want[i].name, &isa, &code) == 0);
		KT_EQ_INT(ks_x86_msr_exit(isa, code), want[i].kind);
		if (isa == KS_ISA_VMX)
			KT_EQ_INT(ks_x86_msr_exit(KS_ISA_UNKNOWN, code | KS_X86_VMX_FAILED_VMENTRY),
				  want[i].kind);
	}
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_tables_match_kernel), KT_CASE(t_isa_from_cpuid),
		KT_CASE(t_msr_exits), { 0 },
	};

	return kt_main(cases);
}
