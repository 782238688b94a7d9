/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elfsyms.c - symbols of an ELF file (guest vmlinux, static guest binaries)
 * through libelf: .symtab (else .dynsym), functions and text labels.
 *
 * A vmlinux's values are link-time addresses; the caller relocates them for
 * KASLR with BIAS = runtime _stext - ELF _stext (see profile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symtab.h"

static int open_elf(const char *path, int *fd, Elf **elf, struct ks_error *err)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", path, strerror(errno));
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		return ks_error_at(err, path, 0, "not an ELF file");
	}
	return 0;
}

static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dynhdr;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr h;

		if (!gelf_getshdr(scn, &h))
			continue;
		if (h.sh_type == SHT_SYMTAB) {
			*shdr = h;
			return scn;
		}
		if (h.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dynhdr = h;
		}
	}
	if (dyn)
		*shdr = dynhdr;
	return dyn;
}

static bool wanted(const GElf_Sym *s, const char *name)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (!name || !*name || name[0] == '$' || s->st_shndx == SHN_UNDEF ||
	    s->st_shndx == SHN_ABS)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC ||
	       (type == STT_NOTYPE && GELF_ST_BIND(s->st_info) != STB_LOCAL);
}

static int add_symbols(struct ks_symtab *t, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
		       uint64_t bias, const char *dso, uint64_t *stext)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
	int added = 0;

	if (!data || !shdr->sh_entsize)
		return 0;
	n = shdr->sh_size / shdr->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (name && stext && (!strcmp(name, "_stext") || (!*stext && !strcmp(name, "_text"))))
			*stext = sym.st_value;
		if (!wanted(&sym, name))
			continue;
		if (ks_symtab_add(t, sym.st_value + bias, sym.st_size, name, dso) < 0)
			return -1;
		added++;
	}
	return added;
}

int ks_elf_symbols_load(struct ks_symtab *t, const char *path, uint64_t bias, const char *dso,
			uint64_t *stext, struct ks_error *err)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf *elf;
	int fd, n;

	if (stext)
		*stext = 0;
	if (open_elf(path, &fd, &elf, err) < 0)
		return -1;
	scn = find_symtab(elf, &shdr);
	n = scn ? add_symbols(t, elf, scn, &shdr, bias, dso, stext) : 0;
	elf_end(elf);
	close(fd);
	if (n < 0)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	if (n == 0)
		return ks_error_at(err, path, 0, "no function symbols (stripped?)");
	return 0;
}

int ks_elf_min_vaddr(const char *path, uint64_t *vaddr, struct ks_error *err)
{
	size_t i, n = 0;
	Elf *elf;
	int fd;

	*vaddr = UINT64_MAX;
	if (open_elf(path, &fd, &elf, err) < 0)
		return -1;
	if (elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < *vaddr)
				*vaddr = ph.p_vaddr;
		}
	}
	elf_end(elf);
	close(fd);
	if (*vaddr == UINT64_MAX)
		return ks_error_at(err, path, 0, "no PT_LOAD segment");
	*vaddr &= ~(uint64_t)0xfff;
	return 0;
}

/* ---- code bytes ---- */

static int add_code_seg(struct ks_codemap *m, int fd, const GElf_Phdr *ph, uint64_t bias,
			const char *path, struct ks_error *err)
{
	struct ks_code_seg *n, *sg;
	uint8_t *bytes;
	ssize_t got;

	if (ph->p_filesz > KS_CODE_MAX)
		return ks_error_at(err, path, ph->p_offset, "code segment of %llu bytes (limit %u MB)",
				   (unsigned long long)ph->p_filesz, KS_CODE_MAX >> 20);
	bytes = malloc(ph->p_filesz ? ph->p_filesz : 1);
	if (!bytes)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	got = pread(fd, bytes, ph->p_filesz, (off_t)ph->p_offset);
	if (got < 0 || (uint64_t)got != ph->p_filesz) {
		free(bytes);
		return ks_error_at(err, path, ph->p_offset, "code segment runs past the end of the file");
	}
	n = realloc(m->seg, (m->n + 1) * sizeof(*n));
	if (!n) {
		free(bytes);
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	m->seg = n;
	sg = &m->seg[m->n++];
	sg->start = ph->p_vaddr + bias;
	sg->end = sg->start + ph->p_filesz;
	sg->bytes = bytes;
	return 0;
}

int ks_elf_code_load(struct ks_codemap *m, const char *path, uint64_t bias, struct ks_error *err)
{
	size_t i, n = 0;
	Elf *elf;
	int fd, rc = 0;

	if (open_elf(path, &fd, &elf, err) < 0)
		return -1;
	if (elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n && rc == 0; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
				rc = add_code_seg(m, fd, &ph, bias, path, err);
		}
	}
	elf_end(elf);
	close(fd);
	return rc;
}

int ks_codemap_read(const struct ks_codemap *m, uint64_t va, void *buf, size_t len)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct ks_code_seg *sg = &m->seg[i];

		if (va >= sg->start && va < sg->end && len <= sg->end - va) {
			memcpy(buf, sg->bytes + (va - sg->start), len);
			return 0;
		}
	}
	return -1;
}

void ks_codemap_free(struct ks_codemap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->seg[i].bytes);
	free(m->seg);
	m->seg = NULL;
	m->n = 0;
}
