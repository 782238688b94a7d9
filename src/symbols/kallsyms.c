/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kallsyms.c - guest kernel symbols from text: /proc/kallsyms, /proc/modules,
 * and the kallsyms text a trace.dat stores (trace-cmd saves the recording
 * machine's /proc/kallsyms in every file; the reader keeps it as stored).
 *
 * Lines that do not parse are skipped (a kallsyms file may be truncated);
 * a file with no symbol at all is an error.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "kvmscope/limits.h"
#include "kvmscope/source.h"

#include "symbols/symtab.h"

#define KS_TEXT_MAX (512u << 20)

int ks_read_text_file(const char *path, size_t max, char **buf, size_t *len,
		      struct ks_error *err)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	struct stat st;
	char *b;

	*buf = NULL;
	if (!f)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return ks_error_set(err, "%s: is a directory", path);
	}
	b = malloc(cap + 1);
	while (b) {
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (n < cap)
			break;
		if (cap >= max) {
			free(b);
			fclose(f);
			return ks_error_at(err, path, cap, "file larger than %zu bytes", max);
		}
		cap *= 2;
		char *nb = realloc(b, cap + 1);
		if (!nb)
			free(b);
		b = nb;
	}
	if (!b) {
		fclose(f);
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	}
	if (ferror(f)) {
		int e = errno;

		free(b);
		fclose(f);
		return ks_error_set(err, "%s: cannot read: %s", path, strerror(e));
	}
	fclose(f);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* Next line of TEXT[*pos..len) into LINE (truncated to cap-1). */
static bool next_line(const char *text, size_t len, size_t *pos, char *line, size_t cap)
{
	size_t start = *pos, end, n;

	if (start >= len)
		return false;
	end = start;
	while (end < len && text[end] != '\n')
		end++;
	n = end - start < cap - 1 ? end - start : cap - 1;
	memcpy(line, text + start, n);
	line[n] = '\0';
	*pos = end + 1;
	return true;
}

/* "ffffffff81000000 T _stext [mod]" -> addr, type, name, module (or NULL). */
static bool parse_kallsyms_line(char *line, uint64_t *addr, char *type, char **name, char **mod)
{
	size_t n = ks_parse_u64_prefix(line, strlen(line), 16, addr);
	char *p = line + n;

	if (!n || !isspace((unsigned char)*p))
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || !isspace((unsigned char)p[1]))
		return false;
	*type = *p;
	p += 2;
	while (*p == ' ' || *p == '\t')
		p++;
	*name = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (p == *name)
		return false;
	*mod = NULL;
	if (*p) {
		*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			char *close = strchr(p, ']');

			if (close)
				close[1] = '\0';
			*mod = p;
		}
	}
	return true;
}

int ks_kallsyms_parse(struct ks_symtab *t, const char *text, size_t len, const char *path,
		      struct ks_error *err)
{
	char line[1024], *name, *mod, type;
	size_t pos = 0, added = 0;
	uint64_t addr;

	while (next_line(text, len, &pos, line, sizeof(line))) {
		if (!parse_kallsyms_line(line, &addr, &type, &name, &mod))
			continue;
		if (type == 'a' || type == 'A' || name[0] == '$')
			continue;
		if (ks_symtab_add(t, addr, 0, name, mod) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
		added++;
	}
	if (!added)
		return ks_error_at(err, path, 0, "no kallsyms lines (\"ADDR TYPE NAME\")");
	return 0;
}

int ks_kallsyms_load(struct ks_symtab *t, const char *path, struct ks_error *err)
{
	char *buf;
	size_t len;
	int r;

	if (ks_read_text_file(path, KS_TEXT_MAX, &buf, &len, err) < 0)
		return -1;
	r = ks_kallsyms_parse(t, buf, len, path, err);
	free(buf);
	return r;
}

int ks_modules_parse(struct ks_symtab *t, const char *text, size_t len, const char *path,
		     struct ks_error *err)
{
	char line[1024], name[256], dso[260];
	unsigned long long size, addr;
	uint64_t addr64;
	size_t pos = 0, added = 0;

	while (next_line(text, len, &pos, line, sizeof(line))) {
		char *p = strstr(line, " 0x");

		if (sscanf(line, "%255s %llu", name, &size) != 2 || !p)
			continue;
		if (ks_parse_u64(p + 1, strcspn(p + 1, " \t"), 16, &addr64) < 0)
			continue;
		addr = addr64;
		if (!addr || addr + size < addr)
			continue;
		snprintf(dso, sizeof(dso), "[%s]", name);
		if (ks_symtab_add_map(t, addr, addr + size, dso) < 0)
			return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
		added++;
	}
	if (!added)
		return ks_error_at(err, path, 0, "no module lines (\"NAME SIZE ... 0xADDR\")");
	return 0;
}

int ks_modules_load(struct ks_symtab *t, const char *path, struct ks_error *err)
{
	char *buf;
	size_t len;
	int r;

	if (ks_read_text_file(path, KS_TEXT_MAX, &buf, &len, err) < 0)
		return -1;
	r = ks_modules_parse(t, buf, len, path, err);
	free(buf);
	return r;
}

int ks_symtab_from_source(struct ks_symtab *t, const struct ks_source *src, struct ks_error *err)
{
	size_t len;
	const char *text;

	/* a text the file holds but that cannot be read says why */
	if (ks_source_text_get(src, KS_TEXT_KALLSYMS, &text, &len, err) < 0)
		return -1;
	if (!text || !len)
		return ks_error_set(err, "%s: the trace has no kallsyms", ks_source_path(src));
	return ks_kallsyms_parse(t, text, len, ks_source_path(src), err);
}
