/*
 * nsys_stats.h - Nsight Systems' stats reports as text (cs_import_nsys_stats):
 * what `nsys stats` prints, as CSV (--format csv) or in its column format,
 * and what `nsys profile --stats=true` writes into a job's log: several
 * reports one after another, among nsys's own lines.
 *
 *   trace reports (cuda_gpu_trace, cuda_api_trace, nvtx ... trace): every
 *       row a range at its own time: kernels with device, stream and
 *       correlation id, copies and memsets with bytes, API calls, NVTX
 *   summary reports (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
 *       cuda_gpu_mem_size_sum, nvtx_sum, osrt_sum, and their older names):
 *       one sample and range per name (krows.h), with its share, total,
 *       count and the average, median, minimum, maximum and deviation
 *
 * Reports are found by their header's columns, units read from the
 * header's parentheses ("Total Time (ns)", "Bytes (MB)"); thousands
 * separators in the column format are dropped. The first report's kind
 * (trace or summaries) is the run's; reports of the other kind are named
 * in a warning.
 */
#ifndef CS_NSYS_STATS_H
#define CS_NSYS_STATS_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_nsys_stats(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
			 char *err, size_t errlen);

/* 1 when a file's head holds a report header of nsys stats. */
int cs_nsys_stats_sniff(const char *head);

#endif
