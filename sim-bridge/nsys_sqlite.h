/*
 * nsys_sqlite.h - Nsight Systems SQLite exports (`nsys export --type
 * sqlite`), read with SQLite on a second, read-only connection
 * (cs_import_nsys_sqlite): a hardware run in ns from the session start;
 * one device per GPU (TARGET_INFO_GPU); ranges for kernels, memcpy,
 * memset, CUDA runtime calls, NVTX ranges and marks, CUDA graph launches;
 * the GPU_METRICS table, when the capture had --gpu-metrics-devices, as
 * the run's time series (docs/import-formats.md). Columns are looked up by
 * name, so the exports of nsys 2023.x to 2026.x read alike; a missing
 * table or column is named in the error.
 */
#ifndef CS_NSYS_SQLITE_H
#define CS_NSYS_SQLITE_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

/* Imports the export at path. 0, or a negative errno with the reason in
 * err (a file that is not an nsys export: which tables are missing). */
int cs_import_nsys_sqlite(cs_producer *p, const char *path, const cs_import_opts *o,
			  char *err, size_t errlen);

/* Whether the SQLite file at path is an nsys export (it has StringIds and
 * one of the activity, NVTX or GPU metrics tables). 1, 0, or -1 when it
 * cannot be opened. */
int cs_nsys_sqlite_sniff(const char *path);

#endif
