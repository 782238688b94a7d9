/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guestsyms.c - guest symbol tables (symbols/symtab.h) and ORC setup for the
 * sample and unwind commands: see include/kvmscope/guestsyms.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvmscope/limits.h"
#include "kvmscope/guestsyms.h"
#include "symbols/symtab.h"

static int load_vmlinux(struct ks_symtab *t, const char *path, uint64_t extra, struct ks_error *err)
{
	uint64_t runtime = 0, elf_stext = 0, bias = extra;
	struct ks_symtab *probe = ks_symtab_new();
	int rc;

	if (!probe)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	rc = ks_elf_symbols_load(probe, path, 0, KS_DSO_KERNEL, &elf_stext, err);
	ks_symtab_free(probe);
	if (rc < 0)
		return rc;
	if (elf_stext && (ks_symtab_addr_of(t, "_stext", &runtime) ||
			  ks_symtab_addr_of(t, "_text", &runtime)))
		bias = runtime - elf_stext;
	return ks_elf_symbols_load(t, path, bias, KS_DSO_KERNEL, NULL, err);
}

static int load_binary(struct ks_symtab *u, struct ks_codemap *code, const char *spec,
		       struct ks_error *err)
{
	char path[4096], *colon;
	uint64_t load, vaddr = 0, bias = 0;
	const char *base;

	snprintf(path, sizeof(path), "%s", spec);
	colon = strrchr(path, ':');
	if (colon) {
		*colon = 0;
		if (ks_parse_u64(colon + 1, strlen(colon + 1), 0, &load) < 0)
			return ks_error_set(err, "--guest-binary %s: bad load address", spec);
		if (ks_elf_min_vaddr(path, &vaddr, err) < 0)
			return -1;
		bias = load - vaddr;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (ks_elf_code_load(code, path, bias, err) < 0)
		return -1;
	return ks_elf_symbols_load(u, path, bias, base, NULL, err);
}

int ks_guestsyms_load(struct ks_guestsyms *gs, const struct ks_guestsyms_opts *o,
		      struct ks_error *err)
{
	memset(gs, 0, sizeof(*gs));
	if (o->kallsyms || o->modules || o->vmlinux) {
		gs->kernel = ks_symtab_new();
		if (!gs->kernel)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		if (o->kallsyms && ks_kallsyms_load(gs->kernel, o->kallsyms, err) < 0)
			return -1;
		if (o->modules && ks_modules_load(gs->kernel, o->modules, err) < 0)
			return -1;
		if (o->vmlinux && load_vmlinux(gs->kernel, o->vmlinux, o->kaslr_offset, err) < 0)
			return -1;
		ks_symtab_finish(gs->kernel);
	}
	if (o->nbinaries) {
		gs->user = ks_symtab_new();
		gs->user_code = calloc(1, sizeof(*gs->user_code));
		if (!gs->user || !gs->user_code)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
		for (int i = 0; i < o->nbinaries; i++)
			if (load_binary(gs->user, gs->user_code, o->binaries[i], err) < 0)
				return -1;
		ks_symtab_finish(gs->user);
	}
	return 0;
}

void ks_guestsyms_free(struct ks_guestsyms *gs)
{
	ks_symtab_free(gs->kernel);
	ks_symtab_free(gs->user);
	gs->kernel = gs->user = NULL;
	if (gs->user_code)
		ks_codemap_free(gs->user_code);
	free(gs->user_code);
	gs->user_code = NULL;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define CODE_CHECK 1024u

/* Compare the file's aligned 1 KB block around VA with guest memory. */
static int8_t check_space(struct ks_guestcode *c, struct ks_vmem *v, uint64_t va)
{
	uint8_t file[CODE_CHECK], guest[CODE_CHECK];
	uint64_t base = va & ~(uint64_t)(CODE_CHECK - 1);

	c->checks++;
	if (ks_codemap_read(c->map, base, file, CODE_CHECK) < 0 ||
	    ks_vmem_read(v, base, guest, CODE_CHECK) < 0)
		return 0; /* cannot tell: guest memory is read this time */
	if (memcmp(file, guest, CODE_CHECK)) {
		c->mismatches++;
		return -1;
	}
	return 1;
}

int ks_guestcode_read(void *ctx, struct ks_vmem *v, uint64_t va, void *buf, size_t len)
{
	struct ks_guestcode *c = ctx;
	uint64_t pgd = v->cr3 & 0x000ffffffffff000ull & ~0x1000ull; /* PTI pair: one space */
	unsigned slot = (unsigned)((pgd >> 13) % KS_CODE_SPACES);
	double now;

	if (!c->map || ks_is_kernel_addr(va) || ks_codemap_read(c->map, va, buf, len) < 0)
		return -1;
	now = mono_s();
	if (c->space[slot].pgd != pgd || now - c->space[slot].at > KS_CODE_RECHECK_S) {
		c->space[slot].pgd = pgd;
		c->space[slot].at = now;
		c->space[slot].ok = check_space(c, v, va);
	}
	if (c->space[slot].ok <= 0)
		return -1;
	c->from_file++;
	return 0;
}

const char *ks_guestsyms_name(const struct ks_guestsyms *gs, uint64_t ip, bool offsets,
			      char *buf, size_t size)
{
	const struct ks_symtab *t = ks_is_kernel_addr(ip) ? gs->kernel : gs->user;
	struct ks_resolved r;

	if (!t || !ks_symtab_lookup(t, ip, &r)) {
		snprintf(buf, size, "[unknown]");
		return buf;
	}
	if (offsets)
		snprintf(buf, size, "%s+0x%" PRIx64, r.name, r.offset);
	else
		snprintf(buf, size, "%s", r.name);
	return buf;
}

int ks_guestsyms_check_kernel(const struct ks_symtab *k, struct ks_vmem *vm, uint64_t cr3,
			      uint64_t cr4, uint64_t guest_stext, struct ks_error *err)
{
	static const char want[] = "Linux version ";
	char buf[sizeof(want)];
	uint64_t stext, banner;
	int rc;

	if (!k)
		return 0;
	if (guest_stext && (ks_symtab_addr_of(k, "_stext", &stext) ||
			    ks_symtab_addr_of(k, "_text", &stext)) && stext != guest_stext)
		return ks_error_set(err, "these kallsyms are not of the running guest kernel "
				    "(_stext at 0x%" PRIx64 ", the guest's at 0x%" PRIx64 ")", stext,
				    guest_stext);
	if (!ks_symtab_addr_of(k, "linux_banner", &banner))
		return 0;
	/* KPTI: a user CR3 is the odd page of the pair, the kernel's the even */
	ks_vmem_reset(vm, cr3 & ~0x1000ull, cr4);
	rc = ks_vmem_read(vm, banner, buf, sizeof(want) - 1);
	if (rc < 0 && (cr3 & 0x1000)) {
		ks_vmem_reset(vm, cr3, cr4);
		rc = ks_vmem_read(vm, banner, buf, sizeof(want) - 1);
	}
	ks_vmem_reset(vm, cr3, cr4);
	if (rc < 0 || memcmp(buf, want, sizeof(want) - 1))
		return ks_error_set(err, "these kallsyms are not of the running guest kernel "
				    "(no \"%s\" at their linux_banner, 0x%" PRIx64 ")", "Linux version",
				    banner);
	return 0;
}

static bool need(const struct ks_symtab *k, const char *name, uint64_t *addr, struct ks_error *err)
{
	if (ks_symtab_addr_of(k, name, addr))
		return true;
	ks_error_set(err, "ORC: the guest kallsyms lack %s (kallsyms_all and kptr_restrict=0 needed)",
		     name);
	return false;
}

static void detect_layout(struct ks_vmem *vm, const struct ks_symtab *k, struct ks_orc_info *info)
{
	uint64_t banner, hdr;

	info->layout = KS_ORC_PRE_6_4;
	if (ks_symtab_addr_of(k, "linux_banner", &banner) &&
	    ks_vmem_read(vm, banner, info->banner, sizeof(info->banner) - 1) == 0) {
		info->banner[sizeof(info->banner) - 1] = 0;
		info->banner[strcspn(info->banner, "\n")] = 0;
		if (ks_orc_layout_from_banner(info->banner, &info->layout) == 0) {
			info->layout_from_banner = true;
			return;
		}
	}
	info->banner[0] = 0;
	if (ks_symtab_addr_of(k, "__start_orc_header", &hdr))
		info->layout = KS_ORC_6_4;
}

int ks_guest_orc_setup(struct ks_orc *orc, struct ks_vmem *vm, const struct ks_symtab *k,
		       int layout, struct ks_orc_info *info, struct ks_error *err)
{
	uint64_t a, b, c, d, etext;

	memset(info, 0, sizeof(*info));
	if (!k)
		return ks_error_set(err, "ORC: guest kallsyms are needed (--guest-kallsyms)");
	/* The symbol table keeps one name per address: __stop_orc_unwind_ip
	 * shares its address with __start_orc_unwind, so derive what is hidden. */
	if (!need(k, "__start_orc_unwind_ip", &a, err) || !need(k, "__start_orc_unwind", &c, err))
		return -1;
	if (!ks_symtab_addr_of(k, "__stop_orc_unwind_ip", &b))
		b = c;
	if (!ks_symtab_addr_of(k, "__stop_orc_unwind", &d) && b > a)
		d = c + (b - a) / 4 * 6;
	if (b <= a || d <= c)
		return ks_error_set(err, "ORC: table bounds in the guest kallsyms make no sense");
	if (layout == KS_ORC_AUTO)
		detect_layout(vm, k, info);
	else
		info->layout = (enum ks_orc_layout)layout;
	if (ks_orc_load(orc, vm, a, b, c, d, info->layout, err) < 0)
		return -1;
	if (ks_symtab_addr_of(k, "_etext", &etext))
		orc->text_end = etext;
	return 0;
}

int ks_stack_fold(const struct ks_guestsyms *gs, const struct ks_stack *s, bool annotate,
		  char *buf, size_t size)
{
	size_t len = 0;
	char name[512];

	buf[0] = 0;
	for (unsigned i = s->n; i-- > 0;) {
		const struct ks_frame *f = &s->f[i];
		int w;

		ks_guestsyms_name(gs, f->ip, false, name, sizeof(name));
		for (char *p = name; *p; p++)
			if (*p == ';' || *p == ' ')
				*p = '_';
		w = snprintf(buf + len, size - len, "%s%s%s", len ? ";" : "", name,
			     annotate ? (f->kernel ? "_[g.k]" : "_[g.u]") : "");
		if (w < 0 || (size_t)w >= size - len)
			return -1;
		len += (size_t)w;
	}
	return (int)len;
}

void ks_stack_print(FILE *out, const struct ks_guestsyms *gs, const struct ks_stack *s)
{
	char name[512];

	for (unsigned i = 0; i < s->n; i++)
		fprintf(out, "  #%-2u 0x%016" PRIx64 " %s [%s]\n", i, s->f[i].ip,
			ks_guestsyms_name(gs, s->f[i].ip, true, name, sizeof(name)),
			s->f[i].kernel ? "k" : "u");
	fprintf(out, "  (%u frames, stop: %s%s)\n", s->n, ks_unwind_stop_name(s->stop),
		s->via_regs ? ", through pt_regs" : "");
}
