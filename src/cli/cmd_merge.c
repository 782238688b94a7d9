/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_merge.c - kvmscope merge: a host trace and its guests' traces, merged
 * on the host's clock and printed like `trace-cmd report -i HOST -i GUEST`.
 *
 *	kvmscope merge [-t] [--tsc-offset VCPU=OFF]... [--no-sync] [--quality] [--json]
 *	               -i HOST [-i GUEST[@NAME]]...
 *
 * The work is done by ks_merge (include/kvmscope/merge.h); the text and
 * the JSON by the printer of merge_print.h.
 */
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli.h"
#include "options.h"
#include "kvmscope/host.h"
#include "kvmscope/json.h"
#include "kvmscope/merge.h"
#include "kvmscope/merge_print.h"

#include <event-parse.h>

static const struct opt_cmd merge_cmd = {
	.name = "merge",
	.synopsis = "[-t] [--tsc-offset VCPU=OFF]... [--no-sync] [--quality] [--json]\n"
		    "                      -i HOST [-i GUEST[@NAME]]...",
	.intro = "Print the events of a host trace and of its guests' traces in host time\n"
		 "order, each line prefixed with its file, like trace-cmd report with several\n"
		 "inputs.  Guest time is moved to host time with the guest trace.dat's\n"
		 "TimeShift option, else with the host's kvm_write_tsc_offset events.\n"
		 "--json gives the same events as one JSON document, each with its host\n"
		 "thread's VM and vCPU, and the host threads' attribution (\"threads\").\n",
	.outro = "See kvmscope-merge(1).\n",
};

/* The merge whose guests name the functions at kvm_entry / kvm_exit rips. */
static struct ks_merge *symbolising;

/*
 * libtraceevent's kvm plugin asks this hook (a weak symbol in the plugin,
 * which the executable's exported one overrides, as trace-cmd's does) for
 * the function at a guest rip: *VAL becomes the function's start and the
 * plugin prints " func" or " func+0xOFF" after the address.
 */
const char *tep_plugin_kvm_get_func(struct tep_event *event, struct tep_record *record,
				    unsigned long long *val);
void tep_plugin_kvm_put_func(const char *func);

const char *tep_plugin_kvm_get_func(struct tep_event *event, struct tep_record *record,
				    unsigned long long *val)
{
	uint64_t start = *val;
	const char *func;

	if (!symbolising || !event || !record)
		return NULL;
	func = ks_merge_guest_function(symbolising, tep_data_pid(event->tep, record), *val,
				       &start);
	if (func)
		*val = start;
	return func;
}

void tep_plugin_kvm_put_func(const char *func)
{
	(void)func; /* the name belongs to the guest's tep */
}

/* " (VM 483882(guest NAME))": the host VM of guest I's vCPU threads, as
 * the host model (and so every command) has it; "" when none is known. */
static void guest_vm(struct ks_merge *m, int i, char *buf, size_t len)
{
	const struct ks_host *h = ks_merge_host(m);
	uint32_t v, n = ks_merge_nr_vcpus(m, i);

	buf[0] = '\0';
	for (v = 0; v < n; v++) {
		const struct ks_attr_thread *t = ks_host_find(h, ks_merge_vcpu_tid(m, i, v));
		char label[128];

		if (!t || !t->events || t->vm < 0)
			continue;
		snprintf(buf, len, " (VM %s)", ks_host_vm_label(h, t->vm, label, sizeof(label)));
		return;
	}
}

static void print_quality(struct ks_merge *m, uint32_t nr_offsets)
{
	struct ks_merge_quality q;

	ks_merge_quality(m, &q);
	fprintf(stderr,
		"sync quality: %llu guest events checked, %llu before the host trace, "
		"%llu outside their vCPU's guest-mode windows",
		(unsigned long long)q.checked, (unsigned long long)q.before_host,
		(unsigned long long)q.outside);
	if (q.outside)
		fprintf(stderr, " (worst %llu ns, at %llu.%09llu in %s)",
			(unsigned long long)q.worst_ns,
			(unsigned long long)(q.worst_ts / 1000000000ull),
			(unsigned long long)(q.worst_ts % 1000000000ull),
			ks_merge_name(m, q.worst_input));
	if (!q.checked)
		fputs(" (no guest vCPU thread is known: the host's GUEST option names none of the "
		      "guests)", stderr);
	/* how each guest was synced: a check of nothing says nothing */
	for (int i = 1; i < ks_merge_nr_inputs(m); i++) {
		enum ks_timesync_kind k = ks_merge_sync_kind(m, i);
		char vm[128];

		guest_vm(m, i, vm, sizeof(vm));
		fprintf(stderr, "; %s%s synced by %s", ks_merge_name(m, i), vm,
			k == KS_TSYNC_TIMESHIFT ? "its TimeShift option" :
			k == KS_TSYNC_TSC_OFFSET && nr_offsets ? "--tsc-offset" :
			k == KS_TSYNC_TSC_OFFSET ? "the host's kvm_write_tsc_offset events" :
			"nothing (timestamps as recorded)");
	}
	fputc('\n', stderr);
}

/* A guest none of whose vCPUs the host trace maps to a host thread (its
 * GUEST option names another trace, or none): its events are interleaved
 * by timestamp only, which the output alone does not show. */
static void warn_unmatched(struct ks_merge *m)
{
	for (int i = 1; i < ks_merge_nr_inputs(m); i++) {
		uint32_t v, n = ks_merge_nr_vcpus(m, i);

		for (v = 0; v < n && ks_merge_vcpu_tid(m, i, v) < 0; v++)
			;
		if (v < n)
			continue;
		warnx_("%s: no host vCPU thread matches this guest: the host trace %s names none "
		       "of its vCPUs (no GUEST option of its trace id); its events are "
		       "interleaved by time only", ks_merge_name(m, i), ks_merge_name(m, 0));
	}
}

int cmd_merge(int argc, char **argv)
{
	struct merge_inputs in;
	struct ks_merge_printer *pr;
	struct ks_merge *m;
	struct ks_merge_rec r;
	struct ks_error err;
	bool quality = false, json = false;
	struct ks_json j;
	struct time_window time = { 0 };
	uint64_t win_start = 0, win_end = UINT64_MAX;
	FILE *sink = NULL;
	bool quiet = false;
	struct ks_progress prog;
	int rc, first;

	merge_inputs_init(&in, argc);
	{
		const struct opt opts[] = {
			OPT_LIST('i', NULL, in.specs, &in.n, argc, "FILE[@NAME]",
				 "an input; the first is the host (files may also be\n"
				 "given without -i); NAME replaces the file name"),
			OPT_FLAG('t', NULL, &in.opts.nsec, "nanosecond timestamps"),
			MERGE_INPUT_OPTS(&in),
			OPT_FLAG(0, "quality", &quality, "print the sync quality check on stderr"),
			OPT_FLAG(0, "json", &json, "one JSON document: the inputs and clock offsets, the\n"
				 "events with their VM and vCPU, the host threads"),
			OPT_TIME(&time),
			OPT_FLAG('q', "quiet", &quiet, "no progress line on stderr"),
			OPT_END(),
		};

		first = parse_options(&merge_cmd, opts, argc, argv);
	}
	m = merge_inputs_open(&in, "merge", first, argc, argv);
	warn_unmatched(m);
	pr = ks_merge_printer_new(m, in.opts.nsec);
	if (!pr)
		die("out of memory");
	/* the window is in host time (guest events compared after their move
	 * to it); percentages are of the host trace's span */
	if (resolve_time_window(in.specs[0], &time, &win_start, &win_end) &&
	    !(sink = fopen("/dev/null", "w")))
		die("/dev/null: cannot open: %s", strerror(errno));
	cli_stdout_blocks();
	symbolising = ks_merge_nr_inputs(m) > 1 ? m : NULL;
	if (json) {
		ks_json_init(&j, stdout, true);
		ks_merge_json_begin(pr, &j);
	} else {
		ks_merge_print_headers(pr, stdout);
	}
	cli_progress_init(&prog, "merge", quiet, true);
	while ((rc = ks_merge_next(m, &r, &err)) > 0 && r.rec->ts <= win_end) {
		if (ks_progress_due(&prog))
			cli_progress_merge(&prog, m);
		/* before the window: formatted, not printed, so that the
		 * plugins learn task names on the way as trace-cmd's do */
		if (r.rec->ts < win_start)
			ks_merge_print(pr, &r, sink);
		else if (json)
			ks_merge_json_event(pr, &j, &r);
		else
			ks_merge_print(pr, &r, stdout);
	}
	symbolising = NULL;
	ks_progress_end(&prog);
	if (rc < 0)
		die("%s", err.msg);
	if (json)
		ks_merge_json_end(pr, &j);
	if (sink)
		fclose(sink);
	if (quality)
		print_quality(m, in.opts.nr_offsets);
	ks_merge_printer_free(pr);
	ks_merge_close(m);
	merge_inputs_free(&in);
	/* standard output is checked at exit (main.c) */
	return 0;
}
