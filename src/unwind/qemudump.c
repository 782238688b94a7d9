/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qemudump.c - reader of QEMU dump-guest-memory ELF files (see qemudump.h).
 *
 * libelf parses the ELF header, program headers and notes (from memory:
 * the file is mapped read-only).  PT_LOAD segments map guest physical
 * addresses (p_paddr) to file offsets; QEMU notes carry one QEMUCPUState
 * per vCPU in vCPU order; an optional VMCOREINFO note carries the guest's
 * KERNELOFFSET and friends.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmscope/limits.h"
#include "kvmscope/qemudump.h"

#define MAX_VCPUS 1024
#define MAX_SEGMENTS 4096
#define QEMU_STATE_MIN 0x1b0 /* up to and including cr[4] */
#define VMCOREINFO_MAX (64u << 10)

struct seg { uint64_t paddr, size, offset; };

struct ks_qemudump {
	const uint8_t *data;
	size_t len;
	void *map;
	Elf *elf;
	struct seg *segs;
	size_t nsegs;
	struct ks_x86_regs regs[MAX_VCPUS];
	size_t nvcpus;
	char *vmcoreinfo;
	struct ks_gmem mem;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void qemu_state(const uint8_t *p, struct ks_x86_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->rax = rd64(p + 8);
	r->rbx = rd64(p + 16);
	r->rcx = rd64(p + 24);
	r->rdx = rd64(p + 32);
	r->rsi = rd64(p + 40);
	r->rdi = rd64(p + 48);
	r->rsp = rd64(p + 56);
	r->rbp = rd64(p + 64);
	r->r8 = rd64(p + 72);
	r->r9 = rd64(p + 80);
	r->r10 = rd64(p + 88);
	r->r11 = rd64(p + 96);
	r->r12 = rd64(p + 104);
	r->r13 = rd64(p + 112);
	r->r14 = rd64(p + 120);
	r->r15 = rd64(p + 128);
	r->rip = rd64(p + 136);
	r->rflags = rd64(p + 144);
	r->cs = rd32(p + 152);
	r->ss = rd32(p + 152 + 5 * 24);
	r->cr0 = rd64(p + 392);
	r->cr2 = rd64(p + 408);
	r->cr3 = rd64(p + 416);
	r->cr4 = rd64(p + 424);
}

static int dump_read_phys(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct ks_qemudump *d = ctx;
	uint8_t *out = buf;

	while (len) {
		const struct seg *s = NULL;
		size_t n;

		for (size_t i = 0; i < d->nsegs; i++)
			if (pa >= d->segs[i].paddr && pa - d->segs[i].paddr < d->segs[i].size) {
				s = &d->segs[i];
				break;
			}
		if (!s)
			return -1;
		n = (size_t)(s->size - (pa - s->paddr));
		if (n > len)
			n = len;
		memcpy(out, d->data + s->offset + (pa - s->paddr), n);
		out += n;
		pa += n;
		len -= n;
	}
	return 0;
}

static int add_note(struct ks_qemudump *d, const char *name, const GElf_Nhdr *nh, const uint8_t *desc,
		    const char *path, uint64_t off, struct ks_error *err)
{
	if (!strcmp(name, "QEMU")) {
		if (nh->n_descsz < QEMU_STATE_MIN)
			return ks_error_at(err, path, off, "QEMU note of %u bytes (at least %u expected)",
					   nh->n_descsz, QEMU_STATE_MIN);
		if (d->nvcpus >= MAX_VCPUS)
			return ks_error_at(err, path, off, "more than %d vCPU notes", MAX_VCPUS);
		qemu_state(desc, &d->regs[d->nvcpus++]);
	} else if (!strcmp(name, "VMCOREINFO") && !d->vmcoreinfo && nh->n_descsz < VMCOREINFO_MAX) {
		d->vmcoreinfo = strndup((const char *)desc, nh->n_descsz);
		if (!d->vmcoreinfo)
			return ks_error_code(err, KS_E_NOMEM, "out of memory");
	}
	return 0;
}

static int read_notes(struct ks_qemudump *d, const GElf_Phdr *ph, const char *path,
		      struct ks_error *err)
{
	Elf_Data *data = elf_getdata_rawchunk(d->elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t pos = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return ks_error_at(err, path, ph->p_offset, "unreadable PT_NOTE segment: %s",
				   elf_errmsg(-1));
	while ((pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
		char name[16] = "";
		const uint8_t *base = data->d_buf;
		if (nh.n_namesz && nh.n_namesz < sizeof(name))
			memcpy(name, base + name_off, nh.n_namesz);
		name[sizeof(name) - 1] = 0;
		if (add_note(d, name, &nh, base + desc_off, path, ph->p_offset + desc_off, err) < 0)
			return -1;
	}
	return 0;
}

static int read_phdrs(struct ks_qemudump *d, const char *path, struct ks_error *err)
{
	size_t n;

	if (elf_getphdrnum(d->elf, &n) != 0)
		return ks_error_at(err, path, 0, "no program headers: %s", elf_errmsg(-1));
	if (n > MAX_SEGMENTS) {
		/* paging=true: a LOAD segment per guest virtual mapping, each
		 * with its virtual address (paging=false leaves p_vaddr 0) */
		for (size_t i = 0; i < n && i < 64; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(d->elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr)
				return ks_error_at(err, path, 0, "%zu program headers: a paging dump "
						   "(dump-guest-memory paging=true) is not supported; "
						   "use paging=false", n);
		}
		return ks_error_at(err, path, 0, "%zu program headers (at most %d)", n, MAX_SEGMENTS);
	}
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(d->elf, (int)i, &ph))
			return ks_error_at(err, path, 0, "bad program header %zu", i);
		if (ph.p_type == PT_NOTE && read_notes(d, &ph, path, err) < 0)
			return -1;
		if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		if (ph.p_offset > d->len || ph.p_filesz > d->len - ph.p_offset)
			return ks_error_at(err, path, ph.p_offset,
					   "LOAD segment of %llu bytes runs past the end of the file",
					   (unsigned long long)ph.p_filesz);
		d->segs[d->nsegs++] = (struct seg){ ph.p_paddr, ph.p_filesz, ph.p_offset };
		d->mem.size += ph.p_filesz;
	}
	return 0;
}

struct ks_qemudump *ks_qemudump_open_mem(const uint8_t *data, size_t len, const char *name,
					 struct ks_error *err)
{
	struct ks_qemudump *d = calloc(1, sizeof(*d));
	GElf_Ehdr eh;

	if (!d) {
		ks_error_code(err, KS_E_NOMEM, "out of memory");
		return NULL;
	}
	d->data = data;
	d->len = len;
	elf_version(EV_CURRENT);
	/* QEMU's other formats (dump-guest-memory -z/-l/-s, and makedumpfile's
	 * output): say what the file is rather than "not an ELF file" */
	if (len >= 12 && (!memcmp(data, "KDUMP   ", 8) || !memcmp(data, "DISKDUMP", 8) ||
			  !memcmp(data, "makedumpfile", 12))) {
		ks_error_at(err, name, 0, "a kdump-compressed dump; kvmscope reads ELF dumps "
			    "(dump-guest-memory with format elf, the default)");
		goto fail;
	}
	d->elf = elf_memory((char *)data, len);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF || !gelf_getehdr(d->elf, &eh)) {
		ks_error_at(err, name, 0, "not an ELF file");
		goto fail;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 || eh.e_type != ET_CORE) {
		ks_error_at(err, name, 0, "not an x86-64 ELF core file (QEMU dump-guest-memory)");
		goto fail;
	}
	if (read_phdrs(d, name, err) < 0)
		goto fail;
	if (d->nvcpus == 0) {
		ks_error_at(err, name, 0, "no QEMU vCPU notes (dump made by QEMU with paging off?)");
		goto fail;
	}
	d->mem.read_phys = dump_read_phys;
	d->mem.ctx = d;
	return d;
fail:
	ks_qemudump_close(d);
	return NULL;
}

struct ks_qemudump *ks_qemudump_open(const char *path, struct ks_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *map;
	struct ks_qemudump *d;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ks_error_set(err, "%s: cannot open: %m", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		ks_error_set(err, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" :
			     "not a regular file (a dump is read in place: save it to a file)");
		return NULL;
	}
	if (st.st_size < 64) {
		close(fd);
		ks_error_at(err, path, 0, "file too short for an ELF header");
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		ks_error_set(err, "%s: cannot map: %m", path);
		return NULL;
	}
	d = ks_qemudump_open_mem(map, (size_t)st.st_size, path, err);
	if (!d) {
		munmap(map, (size_t)st.st_size);
		return NULL;
	}
	d->map = map;
	return d;
}

void ks_qemudump_close(struct ks_qemudump *d)
{
	if (!d)
		return;
	if (d->elf)
		elf_end(d->elf);
	if (d->map)
		munmap(d->map, d->len);
	free(d->segs);
	free(d->vmcoreinfo);
	free(d);
}

size_t ks_qemudump_vcpus(const struct ks_qemudump *d) { return d->nvcpus; }
const struct ks_gmem *ks_qemudump_mem(struct ks_qemudump *d) { return &d->mem; }
const char *ks_qemudump_vmcoreinfo(const struct ks_qemudump *d) { return d->vmcoreinfo; }

int ks_qemudump_regs(const struct ks_qemudump *d, size_t vcpu, struct ks_x86_regs *r)
{
	if (vcpu >= d->nvcpus)
		return -1;
	*r = d->regs[vcpu];
	return 0;
}

int ks_qemudump_vmcoreinfo_u64(const struct ks_qemudump *d, const char *key, uint64_t *val)
{
	size_t kl = strlen(key);

	for (const char *p = d->vmcoreinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1;

			return ks_parse_u64(v, strcspn(v, "\n"), 16, val);
		}
	}
	return -1;
}
