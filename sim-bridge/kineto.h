/*
 * kineto.h - PyTorch profiler traces (cs_import_kineto): the Chrome-trace
 * JSON that torch.profiler's export_chrome_trace and tensorboard_trace_handler
 * write through Kineto (`*.pt.trace.json`, plain or gzipped), one file per
 * rank of a job.
 *
 * Complete events ("ph": "X"; an event without "ph" but with "dur" counts
 * as one) become ranges by category: kernel -> kernel, gpu_memcpy ->
 * memcpy, gpu_memset -> memset, cuda_runtime and cuda_driver -> api,
 * user_annotation and gpu_user_annotation -> nvtx (the latter with its
 * device and stream). Each keeps its stream, correlation id, pid and tid,
 * bytes (copies, sets) and, in ranges.args, a kernel's grid and block and
 * an NCCL kernel's collective fields. Other categories (cpu_op,
 * python_function, ...) and flow events are counted in the run's metadata,
 * not stored: the flows' ends are already joined by the correlation ids.
 *
 * Times: "ts" and "dur" are microseconds, integers or decimals, read as
 * decimal text so that three decimals are exact nanoseconds; "ts" counts
 * from "baseTimeNanoseconds" when the trace has it (Kineto writes it last,
 * so events are held until the end of the file), else from zero.
 * "deviceProperties" become the run's devices, "distributedInfo" its
 * metadata and its labels (rank, world_size, backend).
 *
 * The JSON is read as a stream (yajl), so memory grows with the ranges
 * kept, not with the file.
 */
#ifndef CS_KINETO_H
#define CS_KINETO_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_kineto(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		     char *err, size_t errlen);

/* 1 when a file's head is a Chrome-trace JSON object with traceEvents or
 * a PyTorch profiler member. */
int cs_kineto_sniff(const char *head);

#endif
