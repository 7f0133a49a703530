/*
 * nvprof.h - nvprof's CSV output (cs_import_nvprof), as `nvprof --csv`
 * prints it (to stderr, or --log-file), its "==PID==" lines around it:
 *
 *   --print-gpu-trace / --print-api-trace  a timeline: every kernel, copy,
 *       memset or API call is a range at its own time (the units row under
 *       the header honoured per column; concurrent kernels stay concurrent)
 *   --metrics / --events  per kernel and device: one kernel-level sample
 *       each, a metric per "Metric Name" (its Avg; .min and .max beside
 *       it where they differ)
 *   the summary (default, --print-summary)  per name: one sample each with
 *       its time share, total, calls and average/min/max duration
 *
 * The first report's kind (trace, or per-kernel and per-name reports) is
 * the run's; reports of the other kind are named in a warning and not
 * imported.
 */
#ifndef CS_NVPROF_H
#define CS_NVPROF_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_nvprof(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		     char *err, size_t errlen);

/* 1 when a file's head holds one of nvprof's CSV report headers. */
int cs_nvprof_sniff(const char *head);

#endif
