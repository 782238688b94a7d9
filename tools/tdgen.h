/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tdgen.h - what the trace.dat generators (gen-tracedat-layouts,
 * gen-merge-pair) share: real event formats read from a directory and
 * parsed, and event payloads that fill the fields those formats print.
 * Included once by each generator (static functions, one tep handle).
 */
#ifndef KVMSCOPE_TOOLS_TDGEN_H
#define KVMSCOPE_TOOLS_TDGEN_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "kvmscope/tracedat_writer.h"

struct fmt {
	char *text;
	size_t len;
	struct tep_event *ev;
};

static struct tep_handle *tep;

static void die(const char *what, const struct ks_error *err)
{
	fprintf(stderr, "%s: %s%s%s\n", program_invocation_short_name, what, err ? ": " : "",
		err ? err->msg : "");
	exit(1);
}

/* DIR/NAME.format, parsed into tep under the system "kvm". */
static void load_format(const char *dir, const char *name, struct fmt *f)
{
	char path[4096];
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), "%s/%s.format", dir, name);
	fp = fopen(path, "rb");
	if (!fp || fseek(fp, 0, SEEK_END) < 0 || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) < 0)
		die(path, NULL);
	f->text = malloc((size_t)n + 1);
	if (!f->text || fread(f->text, 1, (size_t)n, fp) != (size_t)n)
		die(path, NULL);
	fclose(fp);
	f->text[n] = '\0';
	f->len = (size_t)n;
	if (tep_parse_format(tep, &f->ev, f->text, f->len, "kvm") != 0 || !f->ev)
		die("cannot parse a format", NULL);
}

static void put_field(struct tep_event *ev, uint8_t *p, const char *name, uint64_t v)
{
	struct tep_format_field *fl = tep_find_field(ev, name);

	if (fl && fl->size <= 8)
		memcpy(p + fl->offset, &v, (size_t)fl->size); /* little-endian host */
}

/* A payload of EV (at most 256 bytes) for event number N of vCPU VCPU run
 * by thread PID: common fields, then the fields the kvm formats print. */
static uint32_t payload(struct tep_event *ev, uint8_t *p, int32_t pid, uint32_t vcpu, uint64_t n)
{
	struct tep_format_field *fl;
	uint32_t size = 8;
	uint16_t type = (uint16_t)ev->id;

	memset(p, 0, 256);
	for (fl = ev->format.fields; fl; fl = fl->next)
		if ((uint32_t)(fl->offset + fl->size) > size)
			size = (uint32_t)(fl->offset + fl->size);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	/* EXTERNAL_INTERRUPT, HLT, IO_INSTRUCTION */
	put_field(ev, p, "exit_reason", n % 3 == 0 ? 1 : n % 3 == 1 ? 12 : 30);
	put_field(ev, p, "guest_rip", 0xffffffff81000000ull + (n % 4096) * 16);
	put_field(ev, p, "rip", 0xffffffff81000000ull + (n % 4096) * 16);
	put_field(ev, p, "vcpu_id", vcpu);
	put_field(ev, p, "isa", 1);
	put_field(ev, p, "info1", n % 977);
	put_field(ev, p, "rw", n & 1);
	put_field(ev, p, "port", 0x60 + n % 32);
	put_field(ev, p, "size", 1u << (n % 3));
	put_field(ev, p, "count", 1 + (n % 5 == 0));
	put_field(ev, p, "val", n % 251);
	put_field(ev, p, "write", n & 1);
	put_field(ev, p, "ecx", 0x10 + n % 8);
	put_field(ev, p, "data", n * 7919);
	return size;
}

/* DIR/NAME created with O, holding the formats FMTS[0 .. N). */
static struct ks_tdw *create_with(const char *dir, const char *name, const struct ks_tdw_opts *o,
				  const struct fmt *fmts, int n)
{
	char path[4096];
	struct ks_error err;
	struct ks_tdw *w;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	w = ks_tdw_create(path, o, &err);
	if (!w)
		die("cannot create", &err);
	for (i = 0; i < n; i++)
		if (ks_tdw_add_event_format(w, "kvm", fmts[i].text, fmts[i].len, &err) < 0)
			die("cannot add a format", &err);
	return w;
}

/* Event N of EV on CPU (also its vCPU number) of buffer INST (0: the
 * top-level one) at TS, by thread PID. */
static void add_event(struct ks_tdw *w, uint32_t inst, uint32_t cpu, uint64_t ts,
		      struct tep_event *ev, int32_t pid, uint64_t n)
{
	uint8_t p[256];
	uint32_t size = payload(ev, p, pid, cpu, n);
	struct ks_error err;

	if (ks_tdw_add_instance_event(w, inst, cpu, ts, p, size, &err) < 0)
		die("cannot add an event", &err);
}

static void finish(struct ks_tdw *w)
{
	struct ks_error err;

	if (ks_tdw_close(w, &err) < 0)
		die("cannot write", &err);
}

#endif
