/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_report.h - the text and JSON of `kvmscope pmu` (src/output/pmu_report.c).
 *
 *	ks_pmu_host_print(stdout, h);            // pmu check
 *	ks_pmu_trace_json(stdout, pt);           // pmu report --json
 */
#ifndef KVMSCOPE_PMU_REPORT_H
#define KVMSCOPE_PMU_REPORT_H

#include <stdio.h>

#include "pmu_host.h"
#include "pmu_trace.h"

/* `pmu check`: capabilities, counter holders and VMs with a verdict each. */
void ks_pmu_host_print(FILE *out, const struct ks_pmu_host *h);
void ks_pmu_host_json(FILE *out, const struct ks_pmu_host *h);
/* `pmu report`: INPUT and FORMAT name the trace in the text's first line. */
void ks_pmu_trace_print(FILE *out, struct ks_pmu_trace *pt, const char *input,
			const char *format);
void ks_pmu_trace_json(FILE *out, struct ks_pmu_trace *pt);

#endif
