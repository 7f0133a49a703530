/*
 * accelsim_log.h - Accel-Sim / GPGPU-Sim stdout with per-kernel
 * statistics (cs_import_accelsim_log): one sample and one sim-kernel range
 * per kernel, cumulative totals differenced between kernels, the clock
 * domains from "GPGPU-Sim uArch: clock freqs:". Both the old (non-zero
 * lines only) and the new (all lines, TOTAL_ACCESS) forms are read. This
 * is what kernel-level correlation reads.
 */
#ifndef CS_ACCELSIM_LOG_H
#define CS_ACCELSIM_LOG_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_accelsim_log(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *opts, char *err, size_t errlen);

int cs_accelsim_log_sniff(const char *text);

#endif
