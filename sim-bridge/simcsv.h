/*
 * simcsv.h - comma-separated simulator and tool outputs (docs/sim-bridge.md):
 *
 *   accelsim-perf  Accel-Sim's perf_counter_*.csv.gz: one row every
 *                  -gpgpu_runtime_stat cycles of the global cycle
 *                  (gpu_tot_sim_cycle + gpu_sim_cycle), running totals
 *                  differenced into per-interval values, NAME_<i> columns
 *                  also summed into NAME.
 *   accelwattch    gpgpusim_metric_trace_report__*.log.gz and
 *                  gpgpusim_power_trace_report__*.log.gz: one row per
 *                  sample period (opts->sample_cycles, default 500).
 *   pm-cupti-csv   Accel-Sim's pm_cupti_tools output_<N>.csv: metric
 *                  columns, StartTimestamp, EndTimestamp (ns); a hw run.
 *   kernbench      t_ns,component,stat,value rows (metric component.stat).
 *   csv long form  t,metric,value or t0,t1,metric,value rows.
 *
 * Every field may end in ',' (a trailing empty field is ignored); gzip or
 * plain. Errors name the file, line and column.
 */
#ifndef CS_SIMCSV_H
#define CS_SIMCSV_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_accelsim_perf(cs_producer *p, const char *buf, size_t len,
			    const cs_import_opts *o, char *err, size_t errlen);
int cs_import_accelwattch(cs_producer *p, const char *buf, size_t len,
			  const cs_import_opts *o, char *err, size_t errlen);
int cs_import_pm_cupti_csv(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *o, char *err, size_t errlen);
int cs_import_csv_long(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		       char *err, size_t errlen);
int cs_import_kernbench(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
			char *err, size_t errlen);

/* The format a header line (the text's first line) names, or NULL:
 * "accelsim-perf", "accelwattch", "pm-cupti-csv", "kernbench",
 * "csv-long", "csv". */
const char *cs_simcsv_sniff(const char *text);

#endif
