/*
 * qmp_stats.h - KVM statistics of a running QEMU through QMP's query-stats
 * (QEMU >= 7.1): the binary stats KVM keeps per VM and per vCPU (exits,
 * halt_exits, io_exits, insn_emulation, halt_poll_success_ns, ...).
 *
 *	struct ks_qmpx *q;
 *	if (ks_qmpx_connect(&q, "/run/vm1.qmp", 1000, &err) < 0) ...;
 *	struct ks_qmpx_stats st = { 0 };
 *	if (ks_qmpx_query_stats(q, &st, &err) == 0) for (i < st.n) use(&st.s[i]);
 *	ks_qmpx_stats_free(&st); ks_qmpx_close(q);
 *
 * The replies are parsed by ks_qmpx_parse_schemas() / ks_qmpx_parse_stats(),
 * which take any bytes (a fuzz target feeds them).
 */
#ifndef KVMSCOPE_QMP_STATS_H
#define KVMSCOPE_QMP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ks_qmpx_stat {
	char name[64];     /* KVM's name: "exits", "halt_poll_success_ns" */
	int32_t vcpu;      /* -1: a VM statistic; else the vCPU's index in QEMU's reply */
	bool cumulative;   /* a counter; else instant or peak (a gauge) */
	char unit[16];     /* schema unit: "", "seconds", "bytes", "cycles", "boolean" */
	double value;      /* times base^exponent of the schema (seconds, bytes) */
};

struct ks_qmpx_stats {
	struct ks_qmpx_stat *s;
	size_t n, cap;
};

/* What query-stats-schemas says of each statistic. */
struct ks_qmpx_schema_entry {
	char name[64];
	bool vcpu;         /* target vcpu (else vm) */
	bool cumulative;
	char unit[16];
	int base, exponent;
};

struct ks_qmpx_schema {
	struct ks_qmpx_schema_entry *e;
	size_t n, cap;
};

/* Parse the reply (one JSON object) of query-stats-schemas into SCH. */
int ks_qmpx_parse_schemas(struct ks_qmpx_schema *sch, const char *json, size_t len,
			 struct ks_error *err);
/* Parse the reply of query-stats for target VCPU (or vm), appending to OUT
 * the statistics with a single number or boolean value (histograms are
 * skipped), scaled and typed by SCH (NULL: unscaled gauges). */
int ks_qmpx_parse_stats(struct ks_qmpx_stats *out, const struct ks_qmpx_schema *sch, bool vcpu,
		       const char *json, size_t len, struct ks_error *err);
void ks_qmpx_schema_free(struct ks_qmpx_schema *sch);
void ks_qmpx_stats_free(struct ks_qmpx_stats *st);

struct ks_qmpx;
/* Connect to QEMU's QMP unix socket PATH, negotiate, read the schemas and
 * the VM's name; each exchange waits at most TIMEOUT_MS. */
int ks_qmpx_connect(struct ks_qmpx **out, const char *path, int timeout_ms, struct ks_error *err);
/* The VM's name (query-name; "" when it has none) and QEMU's pid. */
const char *ks_qmpx_name(const struct ks_qmpx *q);
int32_t ks_qmpx_pid(const struct ks_qmpx *q);
/* The VM's and every vCPU's statistics, appended to OUT (n reset first). */
int ks_qmpx_query_stats(struct ks_qmpx *q, struct ks_qmpx_stats *out, struct ks_error *err);
void ks_qmpx_close(struct ks_qmpx *q);

#endif
