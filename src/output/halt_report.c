/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * halt_report.c - printing the halt polling view (halt.h): a table per VM
 * and vCPU, the window's changes, and the recommended window per VM; or
 * the same as JSON (integer nanoseconds).
 */
#include <inttypes.h>
#include <stdio.h>

#include "kvmscope/halt.h"
#include "kvmscope/json.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void json_hist(struct ks_json *j, const char *key, const uint64_t *hist)
{
	unsigned b;

	ks_json_key(j, key);
	ks_json_begin_object(j);
	ks_json_kv_u64(j, "p50_ns", ks_halt_quantile(hist, 0.5));
	ks_json_kv_u64(j, "p99_ns", ks_halt_quantile(hist, 0.99));
	ks_json_kv_u64(j, "max_ns", ks_halt_quantile(hist, 1.0));
	ks_json_key(j, "buckets"); /* [largest value of the bucket, count] */
	ks_json_begin_array(j);
	for (b = 0; b < KS_HALT_BUCKETS; b++) {
		if (!hist[b])
			continue;
		ks_json_begin_array(j);
		ks_json_u64(j, ks_halt_bucket_max(b));
		ks_json_u64(j, hist[b]);
		ks_json_end_array(j);
	}
	ks_json_end_array(j);
	ks_json_end_object(j);
}

static void json_advice(struct ks_json *j, const struct ks_halt_advice *a)
{
	ks_json_begin_object(j);
	ks_json_kv_i64(j, "vm", a->vm);
	ks_json_kv_i64(j, "vcpus", a->nvcpus);
	ks_json_kv_u64(j, "valid_halts", a->halts);
	ks_json_kv_u64(j, "span_ns", a->span_ns);
	ks_json_kv_u64(j, "budget_ns", a->budget_ns);
	ks_json_kv_u64(j, "halt_poll_ns", a->window_ns);
	ks_json_kv_u64(j, "polled_halts", a->wins);
	ks_json_kv_u64(j, "poll_cpu_ns", a->cost_ns);
	ks_json_kv_u64(j, "poll_cpu_successful_ns", a->cost_ok_ns);
	ks_json_kv_u64(j, "poll_cpu_wasted_ns", a->cost_wasted_ns);
	ks_json_kv_u64(j, "recorded_polled_halts", a->rec_wins);
	ks_json_kv_u64(j, "recorded_poll_cpu_ns", a->rec_cost_ns);
	ks_json_end_object(j);
}

static void print_json(FILE *out, struct ks_halt *h, const struct ks_halt_print_opts *o)
{
	const struct ks_halt_vcpu *const *vs;
	const struct ks_halt_change *ch;
	const int32_t *vms;
	struct ks_halt_advice adv;
	uint64_t dropped;
	size_t i, n = ks_halt_vcpus(h, &vs), nch = ks_halt_changes(h, &ch, &dropped);
	size_t nvm = ks_halt_vms(h, &vms);
	struct ks_json j;

	ks_json_init(&j, out, true);
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "input", o->input);
	ks_json_kv_string(&j, "event", "halt");
	ks_json_kv_double(&j, "poll_budget_pct", o->budget_pct);
	ks_json_key(&j, "vcpus");
	ks_json_begin_array(&j);
	for (i = 0; i < n; i++) {
		const struct ks_halt_vcpu *v = vs[i];

		ks_json_begin_object(&j);
		ks_json_kv_i64(&j, "vm", v->vm);
		ks_json_kv_i64(&j, "vcpu", v->vcpu);
		ks_json_kv_u64(&j, "halts", v->halts);
		ks_json_kv_u64(&j, "polled", v->polled);
		ks_json_kv_u64(&j, "waited", v->waited);
		ks_json_kv_u64(&j, "invalid", v->invalid);
		ks_json_kv_u64(&j, "poll_successful_ns", v->poll_ok_ns);
		ks_json_kv_u64(&j, "poll_wasted_ns", v->poll_wasted_ns);
		ks_json_kv_u64(&j, "window_grows", v->grows);
		ks_json_kv_u64(&j, "window_shrinks", v->shrinks);
		if (v->window_known) {
			ks_json_kv_u64(&j, "window_first_ns", v->window_first);
			ks_json_kv_u64(&j, "window_last_ns", v->window_last);
			ks_json_kv_u64(&j, "window_min_ns", v->window_min);
			ks_json_kv_u64(&j, "window_max_ns", v->window_max);
		}
		json_hist(&j, "polled_latency", v->lat_polled);
		json_hist(&j, "waited_latency", v->lat_waited);
		ks_json_end_object(&j);
	}
	ks_json_end_array(&j);
	ks_json_key(&j, "window_changes");
	ks_json_begin_array(&j);
	for (i = 0; i < nch; i++) {
		ks_json_begin_object(&j);
		ks_json_kv_u64(&j, "ts", ch[i].ts);
		ks_json_kv_i64(&j, "vm", ch[i].vm);
		ks_json_kv_i64(&j, "vcpu", ch[i].vcpu);
		ks_json_kv_string(&j, "change", ch[i].grow ? "grow" : "shrink");
		ks_json_kv_u64(&j, "old_ns", ch[i].old_ns);
		ks_json_kv_u64(&j, "new_ns", ch[i].new_ns);
		ks_json_end_object(&j);
	}
	ks_json_end_array(&j);
	ks_json_kv_u64(&j, "window_changes_not_listed", dropped);
	ks_json_kv_u64(&j, "events_of_vcpus_not_counted", ks_halt_dropped_vcpus(h));
	ks_json_key(&j, "recommendations");
	ks_json_begin_array(&j);
	for (i = 0; i < nvm; i++)
		if (ks_halt_recommend(h, vms[i], o->budget_pct, &adv) == 0)
			json_advice(&j, &adv);
	ks_json_end_array(&j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

static void print_text(FILE *out, struct ks_halt *h, const struct ks_halt_print_opts *o)
{
	const struct ks_halt_vcpu *const *vs;
	const struct ks_halt_change *ch;
	const int32_t *vms;
	struct ks_halt_advice a;
	uint64_t dropped;
	size_t i, n = ks_halt_vcpus(h, &vs), nch = ks_halt_changes(h, &ch, &dropped);
	size_t nvm = ks_halt_vms(h, &vms);

	fprintf(out, "%s: halt polling (kvm_vcpu_wakeup, kvm_halt_poll_ns)\n\n", o->input);
	fprintf(out, "%8s %5s %9s %8s %8s %8s %13s %13s %10s %10s %10s %10s %12s\n", "VM", "vCPU",
		"Halts", "Polled%", "Waited", "Invalid", "PollOK(us)", "PollWaste(us)",
		"PolledP50", "PolledP99", "WaitedP50", "WaitedP99", "Window(ns)");
	for (i = 0; i < n; i++) {
		const struct ks_halt_vcpu *v = vs[i];
		char win[40];

		if (v->window_known)
			snprintf(win, sizeof(win), "%u..%u", v->window_min, v->window_max);
		else
			snprintf(win, sizeof(win), "-");
		fprintf(out, "%8d %5d %9" PRIu64 " %7.2f%% %8" PRIu64 " %8" PRIu64
			" %13.2f %13.2f %10.2f %10.2f %10.2f %10.2f %12s\n",
			v->vm, v->vcpu, v->halts, pct(v->polled, v->halts), v->waited, v->invalid,
			v->poll_ok_ns / 1e3, v->poll_wasted_ns / 1e3,
			ks_halt_quantile(v->lat_polled, 0.5) / 1e3,
			ks_halt_quantile(v->lat_polled, 0.99) / 1e3,
			ks_halt_quantile(v->lat_waited, 0.5) / 1e3,
			ks_halt_quantile(v->lat_waited, 0.99) / 1e3, win);
	}
	fputs("(latencies in us: the halt's duration, polling included, for halts that ended\n"
	      " while polling and for those that slept)\n", out);
	if (ks_halt_dropped_vcpus(h))
		fprintf(out, "%" PRIu64 " events of vCPUs past the first 4096 were not counted.\n",
			ks_halt_dropped_vcpus(h));
	if (nch) {
		fprintf(out, "\nPoll window changes (%zu%s)\n", nch + (size_t)dropped,
			dropped ? ", the first listed" : "");
		for (i = 0; i < nch && i < 20; i++)
			fprintf(out, "  %14.6f s  VM %d vCPU %d  %s %u -> %u ns\n", ch[i].ts / 1e9,
				ch[i].vm, ch[i].vcpu, ch[i].grow ? "grow  " : "shrink", ch[i].old_ns,
				ch[i].new_ns);
		if (nch > 20)
			fprintf(out, "  ... %zu more (--json lists %zu)\n", nch - 20, nch);
	}
	fprintf(out, "\nRecommended halt_poll_ns (polling may cost %.2f%% of the VM's vCPU time)\n",
		o->budget_pct);
	for (i = 0; i < nvm; i++) {
		const char *name = ks_halt_vm_name(h, vms[i]);

		if (ks_halt_recommend(h, vms[i], o->budget_pct, &a) < 0)
			continue;
		fprintf(out, "  VM %d%s%s%s: halt_poll_ns=%" PRIu64 ": polls %" PRIu64 " of %" PRIu64
			" valid halts (recorded: %" PRIu64 ") for %.6f CPU s (%.6f successful,"
			" %.6f wasted; recorded %.6f) of a %.6f CPU s budget\n",
			vms[i], name ? " (" : "", name ? name : "", name ? ")" : "", a.window_ns,
			a.wins, a.halts, a.rec_wins, a.cost_ns / 1e9, a.cost_ok_ns / 1e9,
			a.cost_wasted_ns / 1e9, a.rec_cost_ns / 1e9, a.budget_ns / 1e9);
	}
}

int ks_halt_print(FILE *out, struct ks_halt *h, const struct ks_halt_print_opts *o)
{
	if (o->json)
		print_json(out, h, o);
	else
		print_text(out, h, o);
	return 0;
}
