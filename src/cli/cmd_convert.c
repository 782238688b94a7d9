/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_convert.c - kvmscope convert: any input to a trace-cmd trace.dat file.
 *
 *	kvmscope convert -i perf.data -o trace.dat [--file-version 6|7]
 *			 [--compression zstd|zlib|none]
 *
 * Reads the input through ks_source_open (perf.data tracepoint samples,
 * trace.dat, ftrace text) and writes every tracepoint event with the
 * tracedat writer: one CPU stream per record CPU, the input's metadata as
 * it stores it (event formats, header_page / header_event, kallsyms, printk
 * formats, saved cmdlines; formats regenerated from libtraceevent's parse
 * only for inputs that store none), plus cmdlines from COMM records.  Timestamps: a trace.dat recorded with
 * x86-tsc and TSC2NSEC keeps its raw counters and the TSC2NSEC option, so
 * `trace-cmd report` converts them exactly as for the original; everything
 * else is written in nanoseconds with the "local" clock.
 *
 * A trace.dat whose records keep their times (no time window, TimeShift or
 * OFFSET moving them) is copied page by page instead: its ring-buffer pages
 * go to the output as they are (decompressed and compressed again as asked),
 * without decoding an event, and straight to the file (the writer's
 * streaming mode): every event, lost-event marks included.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>

#include "kvmscope/limits.h"
#include "cli.h"
#include "options.h"
#include "kvmscope/source.h"
#include "kvmscope/tracedat.h"
#include "kvmscope/vmident.h"
#include "kvmscope/tracedat_writer.h"
#include "util/hashmap.h"

static const struct opt_cmd convert_cmd = {
	.name = "convert",
	.synopsis = "-i INPUT -o OUTPUT [options]",
	.intro = "Write the tracepoint events of any input (perf.data, trace.dat, ftrace text;\n"
		 "type detected from the content; - is standard input) as a trace-cmd trace.dat\n"
		 "file that trace-cmd report and KernelShark open.\n",
	.outro = "An input whose records hold no tracepoint event (a perf.data of samples\n"
		 "only), or a --time window without events, is refused: no output is written.\n"
		 "An empty recording converts to an empty trace.dat.\n"
		 "See kvmscope-convert(1).\n",
};

struct convert_args {
	const char *input, *output;
	struct tdw_format fmt;
	bool quiet;
	struct time_window time;
};

/* tid -> comm: the threads in the order they were first seen (the order of
 * the saved cmdlines written), found by tid through a hash table of
 * indexes. */
struct comm_slot {
	int32_t tid;
	bool named;
	bool renamed; /* the stored cmdlines name it otherwise: its line dropped */
	int32_t tgid; /* its process as the input's records say, 0 if unknown */
	char comm[32];
};

struct comm_map {
	struct comm_slot *slots;
	size_t cap, len;
	struct ks_hmap index; /* tid -> uint32_t index into slots */
};

static struct comm_slot *comm_find(struct comm_map *m, int32_t tid)
{
	bool created;
	uint32_t *i = ks_hmap_put(&m->index, (uint64_t)(uint32_t)tid, &created);

	if (!i)
		die("out of memory");
	if (!created)
		return &m->slots[*i];
	if (m->len == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct comm_slot *n = m->len < UINT32_MAX ? realloc(m->slots, ncap * sizeof(*n)) : NULL;

		if (!n)
			die("out of memory");
		m->slots = n;
		m->cap = ncap;
	}
	*i = (uint32_t)m->len;
	memset(&m->slots[m->len], 0, sizeof(m->slots[0]));
	m->slots[m->len].tid = tid;
	return &m->slots[m->len++];
}

/* The output's slot in the command line's list of temporary files. */
static int out_slot = -1;

/* Remove the unfinished output (its temporary file only) and die. */
static _Noreturn void writer_failed(struct ks_tdw *w, const struct ks_error *err)
{
	cli_output_release(out_slot);
	ks_tdw_abort(w);
	die("%s", err->msg);
}

static void parse_args(int argc, char **argv, struct convert_args *a)
{
	const struct opt opts[] = {
		OPT_INPUT('i', "input", &a->input, "input file (- for standard input)",
			  "convert one input at a time ('kvmscope merge' shows several together)"),
		OPT_STRING('o', "output", &a->output, "FILE", "output trace.dat"),
		OPT_TDW_FORMAT(&a->fmt),
		OPT_TIME(&a->time),
		OPT_FLAG('q', "quiet", &a->quiet, "no summary line and no progress line on stderr"),
		OPT_END(),
	};
	int first;

	a->fmt = (struct tdw_format)TDW_FORMAT_INIT;
	first = parse_options(&convert_cmd, opts, argc, argv);
	if (first < argc && !a->input)
		a->input = argv[first++];
	else if (first < argc)
		usage_error("convert", "takes one input file ('%s' and '%s' were given); convert "
			    "one input at a time", a->input, argv[first]);
	if (first < argc)
		usage_error("convert", "unexpected argument '%s'", argv[first]);
	if (!a->input || !a->output)
		usage_error("convert", "both -i INPUT and -o OUTPUT are needed");
	tdw_format_resolve("convert", opts, &a->fmt);
}

static void set_opts(struct ks_source *src, const struct convert_args *a, struct ks_tdw_opts *o,
		     char *uname, size_t uname_len)
{
	const struct ks_source_clock *c = ks_source_clock(src);
	const struct ks_source_info *info = ks_source_info(src);
	const char *stored_uname = ks_source_text(src, KS_TEXT_UNAME, NULL);
	struct tep_handle *tep = ks_source_tep(src);

	memset(o, 0, sizeof(*o));
	o->file_version = a->fmt.version;
	o->compression = a->fmt.compression;
	o->nr_cpus = info->nr_cpus > 0 ? (uint32_t)info->nr_cpus : 1;
	if (tep) {
		int ps = tep_get_page_size(tep), ls = tep_get_long_size(tep);
		int hps = tep_get_header_page_size(tep);
		o->page_size = ps >= 4096 && !(ps & (ps - 1)) ? (uint32_t)ps : 4096;
		o->long_size = ls == 4 ? 4 : 8;
		o->kernel_long_size = hps == 4 ? 4 : 8;
	}
	o->clock = "local";
	/* a trace.dat keeps its stored timestamps (raw counters, TSC2NSEC and
	 * clock) unless something else moved its times (TimeShift, OFFSET) */
	if (c->raw_counter && c->has_tsc2nsec) {
		o->clock = "x86-tsc";
		o->has_tsc2nsec = true;
		o->tsc_mult = c->tsc_mult;
		o->tsc_shift = c->tsc_shift;
		o->tsc_offset = c->tsc_offset;
	} else if (c->raw_counter) {
		o->clock = c->name;
	}
	/* pages keep their stored times: copied as they are when those are
	 * what the event path would write */
	o->stream = !a->time.set && ks_tracedat_pages(src, NULL, NULL, NULL) == 0 &&
		    ks_tracedat_meta(src)->page_size == o->page_size &&
		    (c->raw_counter || (!c->moved && !c->ts_offset && !(c->has_tsc2nsec && c->tsc_mult)));
	if (c->has_trace_id) {
		o->has_trace_id = true;
		o->trace_id = c->trace_id;
	}
	if (stored_uname)
		o->uname = stored_uname;
	else if (info->osrelease[0]) {
		snprintf(uname, uname_len, "Linux %s %s %s", info->hostname[0] ? info->hostname : "-",
			 info->osrelease, info->arch);
		o->uname = uname;
	}
}

/* GUEST options of a host trace.dat: name, trace id, vCPU -> host tid. */
static void copy_guests(struct ks_tdw *w, struct ks_source *src)
{
	const struct ks_source_guest *guests;
	size_t g, n = ks_source_guests(src, &guests);
	struct ks_error err;
	uint32_t i;

	for (g = 0; g < n; g++) {
		const struct ks_source_guest *gu = &guests[g];
		size_t nlen = strlen(gu->name ? gu->name : "") + 1;
		size_t size = nlen + 8 + 4 + 8 * (size_t)gu->nr_vcpus;
		uint8_t *d = malloc(size), *p = d;
		if (!d)
			die("out of memory");
		memcpy(p, gu->name ? gu->name : "", nlen), p += nlen;
		memcpy(p, &gu->trace_id, 8), p += 8;
		memcpy(p, &gu->nr_vcpus, 4), p += 4;
		for (i = 0; i < gu->nr_vcpus; i++, p += 8) {
			memcpy(p, &gu->vcpus[i].vcpu, 4);
			memcpy(p + 4, &gu->vcpus[i].host_tid, 4);
		}
		if (ks_tdw_add_option(w, 13, d, (uint32_t)size, &err) < 0) {
			writer_failed(w, &err);
		}
		free(d);
	}
}

struct convert_counts {
	uint64_t events, no_format, no_cpu, lost, other;
};

struct copy_pages {
	struct ks_tdw *w;
	struct convert_counts *n;
	struct ks_source *src;
	struct ks_progress *prog;
};

static void note_comm(struct comm_map *comms, const struct ks_record *rec)
{
	struct comm_slot *s = comm_find(comms, rec->tid);

	if (rec->type == KS_REC_COMM && rec->comm) {
		snprintf(s->comm, sizeof(s->comm), "%s", rec->comm);
		s->named = true;
	}
}

static void copy_records(struct ks_source *src, struct ks_tdw *w, bool raw_ts,
			 struct comm_map *comms, struct convert_counts *n, struct ks_progress *prog)
{
	struct ks_record rec;
	struct ks_error err;
	int r;

	while ((r = ks_source_next(src, &rec, &err)) > 0) {
		/* thread -> process, which a trace.dat does not record */
		if (rec.tid > 0 && rec.pid > 0 && rec.type != KS_REC_EXIT)
			comm_find(comms, rec.tid)->tgid = rec.pid;
		cli_progress(prog, src);
		if (rec.type == KS_REC_COMM && rec.tid >= 0) {
			note_comm(comms, &rec);
			continue;
		}
		if (rec.type == KS_REC_LOST) {
			n->lost += rec.lost;
			continue;
		}
		if (rec.type != KS_REC_EVENT) {
			n->other++;
			continue;
		}
		if (!rec.event || !rec.data || !rec.size) {
			n->no_format++;
			continue;
		}
		if (rec.cpu < 0) {
			n->no_cpu++;
			continue;
		}
		if (rec.tid >= 0)
			comm_find(comms, rec.tid);
		if (ks_tdw_add_event(w, (uint32_t)rec.cpu, raw_ts ? rec.raw_ts : rec.ts, rec.data,
				     rec.size, &err) < 0) {
			writer_failed(w, &err);
		}
		n->events++;
	}
	if (r < 0) {
		writer_failed(w, &err);
	}
}

static int copy_page(void *arg, uint32_t cpu, const void *page, uint32_t size, uint32_t events,
		     struct ks_error *err)
{
	struct copy_pages *cp = arg;

	cp->n->events += events;
	if (ks_progress_due(cp->prog)) {
		uint64_t done, total;

		ks_source_position(cp->src, &done, &total);
		ks_progress_show(cp->prog, done, total, cp->n->events);
	}
	return ks_tdw_add_page(cp->w, cpu, page, size, err);
}

/* A trace.dat's pages as they are (the writer streams them). */
static void copy_pages(struct ks_source *src, struct ks_tdw *w, struct convert_counts *n,
		       struct ks_progress *prog)
{
	struct copy_pages cp = { w, n, src, prog };
	struct ks_error err;

	if (ks_tracedat_pages(src, copy_page, &cp, &err) != 0)
		writer_failed(w, &err);
}

/* Nothing to write: no output at all rather than a trace.dat without events. */
static _Noreturn void refuse_empty(struct ks_tdw *w, const struct convert_args *a,
				   const struct convert_counts *n)
{
	cli_output_release(out_slot);
	ks_tdw_abort(w);
	if (a->time.set)
		die("%s: no tracepoint events in the time window; nothing written to %s", a->input,
		    a->output);
	if (n->no_format || n->other)
		die("%s: no tracepoint events to convert (%" PRIu64 " records are samples or "
		    "events without a tracepoint format; record tracepoints, e.g. perf record "
		    "-e 'kvm:*'); nothing written to %s", a->input, n->no_format + n->other,
		    a->output);
	die("%s: no events; nothing written to %s", a->input, a->output); /* (not reached) */
}

/* The COMM-named slot of the task a stored "PID COMM" line names under
 * another name (the kernel's cache of names is older than the COMM record
 * for a reused pid), or NULL. */
static struct comm_slot *line_overridden(struct comm_map *comms, const char *line, size_t n)
{
	char buf[64];
	const char *sp = memchr(line, ' ', n);
	int64_t pid;
	uint32_t *i;

	if (!sp || n >= sizeof(buf))
		return NULL;
	memcpy(buf, line, n);
	buf[n] = 0;
	if (ks_parse_i64(buf, (size_t)(sp - line), 10, &pid) < 0 || pid < 0 || pid > INT32_MAX ||
	    !(i = ks_hmap_get(&comms->index, (uint64_t)(uint32_t)pid)))
		return NULL;
	return comms->slots[*i].named && strcmp(comms->slots[*i].comm, buf + (sp - line) + 1)
	       ? &comms->slots[*i] : NULL;
}

/* The stored cmdlines as they are, but the lines a COMM record renames
 * (perf shows the COMM record's name; one name per pid in a trace.dat). */
static void set_stored_cmdlines(struct ks_tdw *w, struct comm_map *comms, const char *text,
				size_t len)
{
	char *kept = NULL;
	size_t at = 0, nk = 0;
	struct ks_error err;

	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		struct comm_slot *s = line_overridden(comms, text + at, n);

		if (s) {
			s->renamed = true;
			if (!kept) {
				if (!(kept = malloc(len)))
					die("out of memory");
				memcpy(kept, text, at);
				nk = at;
			}
		} else if (kept) {
			memcpy(kept + nk, text + at, n + (nl != NULL));
			nk += n + (nl != NULL);
		}
		at += n + (nl != NULL);
	}
	if (ks_tdw_set_cmdlines(w, kept ? kept : text, kept ? nk : len, &err) < 0)
		writer_failed(w, &err);
	free(kept);
}

/* The thread -> process map (the VM of a vCPU thread) in kvmscope's own
 * option, which trace-cmd skips: from the input's records, or a
 * trace.dat's own option as it is. */
static void write_tgids(struct ks_tdw *w, struct ks_source *src, const struct comm_map *comms)
{
	const struct ks_vmident *in = ks_tracedat_vmident(src);
	struct ks_vmident v = { 0 };
	struct ks_error err;
	char *text;
	size_t len = 0, i;
	int r = 0;

	if (in) { /* a trace.dat that has the map already: kept as it is */
		for (i = 0; r == 0 && i < in->ntasks; i++)
			r = ks_vmident_add_task(&v, in->tasks[i].tid, in->tasks[i].tgid);
		for (i = 0; r == 0 && i < in->nprocs; i++)
			r = ks_vmident_add_proc(&v, in->procs[i].tgid, in->procs[i].comm,
						in->procs[i].name);
	}
	for (i = 0; r == 0 && !in && i < comms->len; i++) {
		const struct comm_slot *c = &comms->slots[i];

		if (c->tid <= 0 || c->tgid <= 0)
			continue;
		r = ks_vmident_add_task(&v, c->tid, c->tgid);
		if (r == 0 && c->tid == c->tgid && c->named) /* the process's own name */
			r = ks_vmident_add_proc(&v, c->tgid, c->comm, "");
	}
	if (r < 0)
		die("out of memory");
	if (!v.ntasks && !v.nprocs) {
		ks_vmident_free(&v);
		return;
	}
	text = ks_vmident_format(&v, &len);
	ks_vmident_free(&v);
	if (!text)
		die("out of memory");
	if (len <= UINT32_MAX &&
	    ks_tdw_add_option(w, KS_VMIDENT_OPTION, text, (uint32_t)len, &err) < 0)
		writer_failed(w, &err);
	free(text);
}

/* Saved cmdlines: the input's own text as stored (but the lines its COMM
 * records rename), then the tasks of its COMM records that text does not
 * name; without a stored text, COMM records first, else what the input's
 * tep knows of each task seen. */
static void write_cmdlines(struct ks_tdw *w, struct ks_source *src, struct comm_map *comms)
{
	struct tep_handle *tep = ks_source_tep_comms(src);
	size_t i, len;
	const char *stored = ks_source_text(src, KS_TEXT_CMDLINES, &len);
	struct ks_error err;

	if (stored)
		set_stored_cmdlines(w, comms, stored, len);
	for (i = 0; i < comms->len; i++) {
		struct comm_slot *s = &comms->slots[i];
		const char *comm = s->named ? s->comm : NULL;
		if (s->tid < 0)
			continue;
		if (stored && (!comm || (tep && tep_is_pid_registered(tep, s->tid) && !s->renamed)))
			continue;
		if (!comm && tep && tep_is_pid_registered(tep, s->tid))
			comm = tep_data_comm_from_pid(tep, s->tid);
		if (!comm || (s->tid == 0 && !s->named))
			continue;
		if (ks_tdw_add_cmdline(w, s->tid, comm, &err) < 0) {
			writer_failed(w, &err);
		}
	}
}

/* The input's metadata as it stores it: event formats, header_page and
 * header_event, kallsyms and printk formats, copied byte for byte.  An
 * input without stored formats (ftrace text) gets them regenerated from
 * libtraceevent's parse. */
static uint64_t copy_metadata(struct ks_tdw *w, struct ks_source *src)
{
	static const struct {
		enum ks_source_text_id id;
		int (*set)(struct ks_tdw *, const char *, size_t, struct ks_error *);
	} texts[] = {
		{ KS_TEXT_HEADER_PAGE, ks_tdw_set_header_page },
		{ KS_TEXT_HEADER_EVENT, ks_tdw_set_header_event },
		{ KS_TEXT_KALLSYMS, ks_tdw_set_kallsyms },
		{ KS_TEXT_PRINTK, ks_tdw_set_printk_formats },
	};
	const struct ks_source_format *f;
	size_t n = ks_source_formats(src, &f), i, len;
	struct ks_error err;

	for (i = 0; i < n; i++)
		if (ks_tdw_add_event_format(w, f[i].system, f[i].text, f[i].len, &err) < 0)
			writer_failed(w, &err);
	if (!n && ks_source_tep(src) && ks_tdw_add_tep_formats(w, ks_source_tep(src), &err) < 0)
		writer_failed(w, &err);
	if (!n && ks_source_tep(src))
		n = (size_t)tep_get_events_count(ks_source_tep(src));
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const char *t = ks_source_text(src, texts[i].id, &len);

		if (t && texts[i].set(w, t, len, &err) < 0)
			writer_failed(w, &err);
	}
	return n;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_args a = { 0 };
	const char *inputs[2] = { NULL, NULL };
	struct convert_counts n = { 0 };
	struct ks_outfile *of;
	int r;
	struct comm_map comms = { 0 };
	struct ks_source *src;
	struct ks_tdw_opts o;
	struct ks_error err;
	struct ks_tdw *w;
	struct ks_progress prog;
	char uname[512];
	uint64_t nformats = 0;

	ks_hmap_init(&comms.index, sizeof(uint32_t));
	parse_args(argc, argv, &a);
	a.input = cli_input(a.input);
	/* the output is checked and opened before the input is read: never
	 * the input itself, a directory or something that cannot seek */
	inputs[0] = a.input;
	of = cli_output_open(a.output, inputs, KS_OUTFILE_NO_STDOUT);
	out_slot = cli_output_slot(of);
	if (cli_source_open(&src, a.input, KS_OPEN_EVENTS_BY_RECORD, NULL, &err) < 0)
		die("%s", err.msg); /* the temporary file goes at exit */
	apply_time_window(src, a.input, &a.time);
	set_opts(src, &a, &o, uname, sizeof(uname));
	w = ks_tdw_create_out(of, &o, &err);
	if (!w) {
		cli_output_release(out_slot);
		die("%s", err.msg);
	}
	cli_progress_init(&prog, "convert", a.quiet, false);
	nformats = copy_metadata(w, src);
	copy_guests(w, src);
	if (o.stream) { /* a trace.dat has no COMM records: the cmdlines are complete */
		write_cmdlines(w, src, &comms);
		write_tgids(w, src, &comms);
		copy_pages(src, w, &n, &prog);
		ks_progress_end(&prog);
	} else {
		copy_records(src, w, ks_source_clock(src)->raw_counter, &comms, &n, &prog);
		ks_progress_end(&prog);
		if (!n.events && (a.time.set || n.no_format || n.other))
			refuse_empty(w, &a, &n);
		write_cmdlines(w, src, &comms);
		write_tgids(w, src, &comms);
	}
	/* the file gets its name here, complete, or not at all */
	r = ks_tdw_close(w, &err);
	cli_output_release(out_slot);
	if (r < 0)
		die("%s", err.msg);
	if (!a.quiet)
		fprintf(stderr, "kvmscope convert: %s -> %s: %" PRIu64 " events%s, %" PRIu64
			" formats, v%d %s%s%s\n", a.input, a.output, n.events,
			o.stream ? " copied as pages" : "", nformats, a.fmt.version,
			a.fmt.compression, o.has_tsc2nsec ? ", x86-tsc with TSC2NSEC" : "",
			n.no_format ? " (records without a tracepoint format skipped)" : "");
	if (!a.quiet && n.lost)
		fprintf(stderr, "kvmscope convert: the input reports %" PRIu64
			" lost events; they are not marked in the output\n", n.lost);
	free(comms.slots);
	ks_hmap_free(&comms.index);
	ks_source_close(src);
	return 0;
}
