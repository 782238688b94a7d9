/*
 * kallsyms.c - guest kernel symbols from text: /proc/kallsyms, /proc/modules,
 * and the kallsyms libtraceevent keeps for a trace.dat (trace-cmd saves the
 * recording machine's /proc/kallsyms in every file).
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
#include <unistd.h>
#include <event-parse.h>

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
		return ks_error_set(err, "%s: cannot open: %s", path, strerror(errno));
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
		return ks_error_set(err, "%s: out of memory", path);
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
	char *p = line, *end;

	*addr = strtoull(p, &end, 16);
	if (end == p || !isspace((unsigned char)*end))
		return false;
	p = end;
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
			return ks_error_set(err, "%s: out of memory", path);
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
	size_t pos = 0, added = 0;

	while (next_line(text, len, &pos, line, sizeof(line))) {
		char *p = strstr(line, " 0x");

		if (sscanf(line, "%255s %llu", name, &size) != 2 || !p)
			continue;
		addr = strtoull(p + 1, NULL, 16);
		if (!addr || addr + size < addr)
			continue;
		snprintf(dso, sizeof(dso), "[%s]", name);
		if (ks_symtab_add_map(t, addr, addr + size, dso) < 0)
			return ks_error_set(err, "%s: out of memory", path);
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

/*
 * libtraceevent has no iterator over its function map, only
 * tep_print_funcs(), which prints "ADDR NAME [MOD]" lines on stdout.  Send
 * stdout to a temporary file for that call and parse the lines back.
 */
static int capture_tep_funcs(struct tep_handle *tep, char **buf, size_t *len,
			     struct ks_error *err)
{
	char path[] = "/tmp/kvmscope-funcs-XXXXXX";
	int fd = mkstemp(path), saved;

	if (fd < 0)
		return ks_error_set(err, "cannot create a temporary file: %s", strerror(errno));
	unlink(path);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		close(fd);
		if (saved >= 0)
			close(saved);
		return ks_error_set(err, "cannot redirect stdout: %s", strerror(errno));
	}
	tep_print_funcs(tep);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int r = ks_read_text_file(path, KS_TEXT_MAX, buf, len, err);
	close(fd);
	return r;
}

int ks_symtab_from_tep(struct ks_symtab *t, struct tep_handle *tep, struct ks_error *err)
{
	char line[1024], *buf, *name, *mod, *p, *end;
	size_t len, pos = 0, added = 0;
	uint64_t addr;

	if (!tep || !tep_get_function_count(tep))
		return ks_error_set(err, "the trace has no kallsyms");
	if (capture_tep_funcs(tep, &buf, &len, err) < 0)
		return -1;
	while (next_line(buf, len, &pos, line, sizeof(line))) {
		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		name = end + 1;
		p = strchr(name, ' ');
		mod = NULL;
		if (p) {
			*p = '\0';
			if (p[1] == '[')
				mod = p + 1;
		}
		if (!*name || ks_symtab_add(t, addr, 0, name, mod) < 0)
			continue;
		added++;
	}
	free(buf);
	if (!added)
		return ks_error_set(err, "the trace has no kallsyms");
	return 0;
}
