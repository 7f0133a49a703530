/*
 * trace.h - a run as a Trace Event JSON file, the format ui.perfetto.dev
 * and chrome://tracing load (cs_trace_json): each device a process, each
 * range kind a track (kernels and copies per stream, API calls and NVTX
 * per thread), each metric a counter track, bucketed (the mean of each
 * bucket) or raw. Shared by `cyclescope export --format perfetto` and GET
 * /api/v1/runs/{run}/trace.json (docs/http-api.md).
 */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

typedef struct cs_trace_req {
	const char *run;      /* id, name or uuid */
	const char *metrics;  /* comma-separated names, or "all"; NULL = every
				 metric, or the two its pages open on for a run
				 of more than 64 */
	uint64_t from, to;    /* window in the run's unit; to 0 = the run's end */
	uint32_t buckets;     /* counter points per metric and device (0 = 2000) */
	int raw;              /* every sample instead of buckets */
	uint64_t max_bytes;   /* a longer trace is refused (-E2BIG); 0 = 512 MiB */
	int (*cancelled)(void *ctx); /* 1 when its asker has gone; NULL = never */
	void *cancel_ctx;
} cs_trace_req;

/* Appends the trace to out. 0, or -ENOENT (no run, an unknown metric),
 * -EINVAL, -E2BIG, -ENOMEM with the reason in err, or -ECANCELED. */
int cs_trace_json(cs_store *s, const cs_trace_req *rq, cs_buf *out, char *err, size_t errlen);

#endif
