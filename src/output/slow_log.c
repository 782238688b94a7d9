/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * slow_log.c - the slow-exit log's lines (see include/kvmscope/slow_log.h).
 *
 * Times are the exit's (the occurrence's begin), in seconds with nine
 * decimals on the input's clock, as `kvmscope dump -t` and trace-cmd
 * report -t print them, so that a line can be found in the dump.  The
 * log streams: nothing is kept but the count.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kvmscope/guestsyms.h"
#include "kvmscope/json.h"
#include "kvmscope/slow_log.h"
#include "kvmscope/stat.h"

#define SYM_WIDTH 36

static void heading(struct ks_slow_log *log)
{
	fprintf(log->out, "Exits slower than %s (time: the exit, seconds on the input's clock)\n\n",
		log->than_text);
	fprintf(log->out, "%19s %13s  %-24s %5s %8s  %-22s %-18s  %s%*s%s\n", "time(s)",
		"duration(us)", "VM", "vCPU", "tid", "reason", "guest ip",
		log->guest_syms ? "guest symbol" : "", log->guest_syms ? SYM_WIDTH - 10 : 0, "",
		"detail");
}

/* The guest symbol of OCC's address into BUF; false when none is known. */
static bool symbol(const struct ks_slow_log *log, const struct ks_stat_occurrence *o, char *buf,
		   size_t len)
{
	buf[0] = '\0';
	if (!log->guest_syms || !o->has_ip)
		return false;
	ks_guestsyms_name(log->guest_syms, o->ip, true, buf, len);
	if (!strcmp(buf, "[unknown]"))
		buf[0] = '\0';
	return buf[0] != '\0';
}

static void vm_text(const struct ks_stat *st, int32_t vm, char *buf, size_t len)
{
	const char *name = vm > 0 ? ks_stat_vm_name(st, vm) : NULL;

	if (vm < 0)
		snprintf(buf, len, "unknown");
	else if (name)
		snprintf(buf, len, "%d(%s)", vm, name);
	else
		snprintf(buf, len, "%d", vm);
}

static void json_line(struct ks_slow_log *log, const struct ks_stat_occurrence *o,
		      const char *reason, const char *detail, bool has_detail, const char *sym)
{
	const char *name = o->vm > 0 ? ks_stat_vm_name(log->st, o->vm) : NULL;
	struct ks_json j;
	char ip[24];

	ks_json_init(&j, log->out, false);
	ks_json_begin_object(&j);
	ks_json_kv_string(&j, "type", "slow_exit");
	ks_json_kv_u64(&j, "time_ns", o->begin_ts);
	ks_json_kv_u64(&j, "end_ns", o->end_ts);
	ks_json_kv_u64(&j, "duration_ns", o->ns);
	ks_json_kv_i64(&j, "vm", o->vm);
	ks_json_key(&j, "vm_name");
	if (name)
		ks_json_string(&j, name);
	else
		ks_json_null(&j);
	ks_json_kv_i64(&j, "vcpu", o->vcpu);
	ks_json_kv_i64(&j, "tid", o->tid);
	ks_json_kv_string(&j, "reason", reason);
	ks_json_key(&j, "guest_ip");
	if (o->has_ip) {
		snprintf(ip, sizeof(ip), "%#" PRIx64, o->ip);
		ks_json_string(&j, ip);
	} else {
		ks_json_null(&j);
	}
	ks_json_key(&j, "guest_symbol");
	if (sym[0])
		ks_json_string(&j, sym);
	else
		ks_json_null(&j);
	ks_json_key(&j, "detail");
	if (has_detail) {
		ks_json_begin_object(&j);
		ks_json_kv_string(&j, "class", o->detail_class);
		ks_json_kv_u64(&j, "key", o->detail_key);
		ks_json_kv_string(&j, "name", detail);
		ks_json_end_object(&j);
	} else {
		ks_json_null(&j);
	}
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

void ks_slow_log_add(struct ks_slow_log *log, const struct ks_stat_occurrence *o)
{
	char reason[64], detail[96], vm[64], vcpu[16], ip[24], sym[160];
	bool has_detail;

	if (o->ns <= log->than_ns)
		return;
	ks_stat_occurrence_key(log->st, o, reason, sizeof(reason));
	has_detail = ks_stat_occurrence_detail(log->st, o, detail, sizeof(detail));
	symbol(log, o, sym, sizeof(sym));
	if (log->json) {
		json_line(log, o, reason, detail, has_detail, sym);
		log->count++;
		return;
	}
	if (!log->count && !log->no_heading)
		heading(log);
	log->count++;
	vm_text(log->st, o->vm, vm, sizeof(vm));
	if (o->vcpu >= 0)
		snprintf(vcpu, sizeof(vcpu), "%d", o->vcpu);
	else
		snprintf(vcpu, sizeof(vcpu), "?");
	if (o->has_ip)
		snprintf(ip, sizeof(ip), "%#" PRIx64, o->ip);
	else
		snprintf(ip, sizeof(ip), "-");
	fprintf(log->out, "%9" PRIu64 ".%09" PRIu64 " %9" PRIu64 ".%03" PRIu64
		"  %-24s %5s %8d  %-22s ", o->begin_ts / 1000000000, o->begin_ts % 1000000000,
		o->ns / 1000, o->ns % 1000, vm, vcpu, o->tid, reason);
	if (log->guest_syms && has_detail)
		fprintf(log->out, "%-18s  %-*s  %s %s\n", ip, SYM_WIDTH, sym, o->detail_class, detail);
	else if (log->guest_syms)
		fprintf(log->out, "%-18s  %s\n", ip, sym);
	else if (has_detail)
		fprintf(log->out, "%-18s  %s %s\n", ip, o->detail_class, detail);
	else
		fprintf(log->out, "%s\n", ip);
}

void ks_slow_log_end(struct ks_slow_log *log)
{
	if (log->json)
		return;
	if (log->count)
		fprintf(log->out, "\n%" PRIu64 " exit%s slower than %s.\n\n", log->count,
			log->count == 1 ? "" : "s", log->than_text);
	else
		fprintf(log->out, "No exit slower than %s.\n\n", log->than_text);
}
