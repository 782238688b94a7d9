/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfetto.c - a ks_timeline as Chrome trace-event JSON, the format
 * ui.perfetto.dev and chrome://tracing load ("JSON Object Format").
 *
 * Layout: process 1 "Host CPUs" with one thread per host CPU (guest-mode
 * slices of the vCPUs that ran there); then one process per VM with two
 * threads per vCPU: its states ("X" complete events named after the state,
 * "HOST <reason>" for exits) and the guest tasks running on it ("X") with the
 * guest's other events as thread-scoped instant events ("i").  Timestamps
 * are microseconds from the first event, with nanosecond precision.  Each
 * VM has an "exits/s" counter ("C" events; ks_timeline_exit_rates()).
 * Written with the project's JSON writer (json.h).
 */
#include <stdio.h>

#include "kvmscope/host_json.h"
#include "kvmscope/json.h"
#include "kvmscope/timeline.h"

#define HOST_PID 1
#define VM_PID(vm) (2 + (int64_t)(vm))
#define STATE_TID(vi) (1000 + 2 * (int64_t)(vi))
#define TASK_TID(vi) (1001 + 2 * (int64_t)(vi))

static void meta_event(struct ks_json *j, const char *what, int64_t pid, int64_t tid,
		       const char *key, const char *name, int64_t sort)
{
	ks_json_begin_object(j);
	ks_json_kv_string(j, "name", what);
	ks_json_kv_string(j, "ph", "M");
	ks_json_kv_i64(j, "pid", pid);
	ks_json_kv_i64(j, "tid", tid);
	ks_json_key(j, "args");
	ks_json_begin_object(j);
	if (key)
		ks_json_kv_string(j, key, name);
	else
		ks_json_kv_i64(j, "sort_index", sort);
	ks_json_end_object(j);
	ks_json_end_object(j);
}

static void time_kv(struct ks_json *j, const char *key, uint64_t ns)
{
	ks_json_key(j, key);
	ks_json_decimal(j, (int64_t)ns, 3);
}

static void begin_slice(struct ks_json *j, const struct ks_timeline *tl, const char *name,
			const char *cat, int64_t pid, int64_t tid, uint64_t start, uint64_t end)
{
	ks_json_begin_object(j);
	ks_json_kv_string(j, "name", name);
	ks_json_kv_string(j, "cat", cat);
	ks_json_kv_string(j, "ph", "X");
	ks_json_kv_i64(j, "pid", pid);
	ks_json_kv_i64(j, "tid", tid);
	time_kv(j, "ts", start - tl->first_ts);
	time_kv(j, "dur", end - start);
}

static void write_metadata(struct ks_json *j, const struct ks_timeline *tl)
{
	char name[160];
	uint32_t i;
	int32_t cpu, max_cpu = -1;
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
	const struct ks_tl_cpu_slice *s;

	meta_event(j, "process_name", HOST_PID, 0, "name", "Host CPUs", 0);
	meta_event(j, "process_sort_index", HOST_PID, 0, NULL, NULL, 0);
	while ((s = ks_tl_cursor_next(c)))
		if (s->cpu > max_cpu)
			max_cpu = s->cpu;
	ks_tl_cursor_free(c);
	for (cpu = 0; cpu <= max_cpu && cpu < 4096; cpu++) {
		snprintf(name, sizeof(name), "CPU %d", cpu);
		meta_event(j, "thread_name", HOST_PID, cpu + 1, "name", name, 0);
		meta_event(j, "thread_sort_index", HOST_PID, cpu + 1, NULL, NULL, cpu);
	}
	for (i = 0; i < tl->nr_vms; i++) {
		meta_event(j, "process_name", VM_PID(i), 0, "name", tl->vms[i].name, 0);
		meta_event(j, "process_sort_index", VM_PID(i), 0, NULL, NULL, 1 + i);
	}
	for (i = 0; i < tl->nr_vcpus; i++) {
		const struct ks_tl_vcpu *v = &tl->vcpus[i];
		snprintf(name, sizeof(name), "vCPU %u (%s-%d)", v->vcpu_id, v->comm, v->tid);
		meta_event(j, "thread_name", VM_PID(v->vm), STATE_TID(i), "name", name, 0);
		meta_event(j, "thread_sort_index", VM_PID(v->vm), STATE_TID(i), NULL, NULL,
			   2 * (int64_t)v->vcpu_id);
		if (tl->vms[v->vm].guest_input < 0)
			continue; /* no guest trace: no guest tasks */
		snprintf(name, sizeof(name), "vCPU %u guest tasks", v->vcpu_id);
		meta_event(j, "thread_name", VM_PID(v->vm), TASK_TID(i), "name", name, 0);
		meta_event(j, "thread_sort_index", VM_PID(v->vm), TASK_TID(i), NULL, NULL,
			   2 * (int64_t)v->vcpu_id + 1);
	}
}

static void write_states(struct ks_json *j, const struct ks_timeline *tl)
{
	char name[96];
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_INTERVALS);
	const struct ks_tl_interval *iv;

	while ((iv = ks_tl_cursor_next(c))) {
		const struct ks_tl_vcpu *v = &tl->vcpus[iv->vcpu];
		const char *reason = tl->reasons[iv->reason];

		if (reason[0])
			snprintf(name, sizeof(name), "%s %s", ks_vstate_name(iv->state), reason);
		else
			snprintf(name, sizeof(name), "%s", ks_vstate_name(iv->state));
		begin_slice(j, tl, name, "vcpu_state", VM_PID(v->vm), STATE_TID(iv->vcpu), iv->start,
			    iv->end);
		ks_json_key(j, "args");
		ks_json_begin_object(j);
		ks_json_kv_string(j, "state", ks_vstate_name(iv->state));
		if (reason[0])
			ks_json_kv_string(j, "exit_reason", reason);
		ks_json_end_object(j);
		ks_json_end_object(j);
	}
	ks_tl_cursor_free(c);
}

static void write_cpus(struct ks_json *j, const struct ks_timeline *tl)
{
	char name[160];
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_CPU_SLICES);
	const struct ks_tl_cpu_slice *s;

	while ((s = ks_tl_cursor_next(c))) {
		const struct ks_tl_vcpu *v = &tl->vcpus[s->vcpu];
		if (s->cpu < 0)
			continue;
		snprintf(name, sizeof(name), "%s vCPU %u", tl->vms[v->vm].name, v->vcpu_id);
		begin_slice(j, tl, name, "host_cpu", HOST_PID, s->cpu + 1, s->start, s->end);
		ks_json_end_object(j);
	}
	ks_tl_cursor_free(c);
}

static void write_guest(struct ks_json *j, const struct ks_timeline *tl)
{
	struct ks_tl_cursor *c = ks_tl_cursor_new(tl, KS_TL_GUEST_TASKS);
	const struct ks_tl_guest_item *g;
	uint64_t i;

	while ((g = ks_tl_cursor_next(c))) {
		begin_slice(j, tl, tl->names[g->name], "guest_task", VM_PID(tl->vcpus[g->vcpu].vm),
			    TASK_TID(g->vcpu), g->start, g->end);
		ks_json_end_object(j);
	}
	ks_tl_cursor_free(c);
	for (i = 0; i < tl->nr_gevents; i++) {
		const struct ks_tl_guest_item *g = &tl->gevents[i];
		ks_json_begin_object(j);
		ks_json_kv_string(j, "name", tl->names[g->name]);
		ks_json_kv_string(j, "cat", "guest_event");
		ks_json_kv_string(j, "ph", "i");
		ks_json_kv_string(j, "s", "t");
		ks_json_kv_i64(j, "pid", VM_PID(tl->vcpus[g->vcpu].vm));
		ks_json_kv_i64(j, "tid", TASK_TID(g->vcpu));
		time_kv(j, "ts", g->start - tl->first_ts);
		ks_json_end_object(j);
	}
}

/* Exits per second of each VM ("C" events on the VM's process). */
static void write_counters(struct ks_json *j, const struct ks_timeline *tl)
{
	struct ks_tl_rates r;
	uint64_t b;
	uint32_t vm;

	if (ks_timeline_exit_rates(tl, &r) < 0)
		return;
	for (vm = 0; vm < r.nr_vms; vm++)
		for (b = 0; b < r.nr_buckets; b++) {
			ks_json_begin_object(j);
			ks_json_kv_string(j, "name", "exits/s");
			ks_json_kv_string(j, "ph", "C");
			ks_json_kv_i64(j, "pid", VM_PID(vm));
			ks_json_kv_i64(j, "tid", 0);
			time_kv(j, "ts", b * r.bucket_ns);
			ks_json_key(j, "args");
			ks_json_begin_object(j);
			ks_json_kv_u64(j, "exits/s", ks_tl_rate_per_s(&r, r.count[vm * r.nr_buckets + b]));
			ks_json_end_object(j);
			ks_json_end_object(j);
		}
	ks_tl_rates_free(&r);
}

void ks_timeline_write_json(const struct ks_timeline *tl, FILE *out)
{
	struct ks_json j;

	ks_json_init(&j, out, false);
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "displayTimeUnit", "ns");
	ks_json_key(&j, "traceEvents");
	ks_json_begin_array(&j);
	write_metadata(&j, tl);
	write_states(&j, tl);
	write_cpus(&j, tl);
	write_guest(&j, tl);
	write_counters(&j, tl);
	ks_json_end_array(&j);
	ks_json_key(&j, "otherData");
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "generator", "kvmscope timeline");
	ks_json_kv_u64(&j, "first_ts_ns", tl->first_ts);
	ks_json_end_object(&j);
	ks_host_json_threads(ks_timeline_host(tl), &j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}
