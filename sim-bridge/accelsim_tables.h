/*
 * accelsim_tables.h - Accel-Sim's own tabular outputs, one kernel per row
 * (docs/sim-bridge.md): get_stats.py's CSV (cs_import_accelsim_stats, a
 * simulator run: one sim-kernel per app--kernel row, one metric per
 * statistic) and AccelWattch's hardware-profiler CSVs
 * (cs_import_accelwattch_hw: hw_perf.csv's Benchmark,Kernel,... and the
 * power-validation CSV; a hardware run of kernels). Kernels are laid end
 * to end on a cycle axis (their gpu_sim_cycle / gpu_tot_sim_cycle /
 * Elapsed_Cycles, else 1000 cycles each).
 */
#ifndef CS_ACCELSIM_TABLES_H
#define CS_ACCELSIM_TABLES_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_accelsim_stats(cs_producer *p, const char *buf, size_t len,
			     const cs_import_opts *o, char *err, size_t errlen);
int cs_import_accelwattch_hw(cs_producer *p, const char *buf, size_t len,
			     const cs_import_opts *o, char *err, size_t errlen);

/* "accelsim-stats", "accelwattch-hw" or NULL for a file's head. */
const char *cs_accelsim_tables_sniff(const char *text);

/* Whether the head is a GPGPU-Sim config file (gpgpusim.config): option
 * lines, not statistics. */
int cs_gpgpusim_config_sniff(const char *text);

#endif
