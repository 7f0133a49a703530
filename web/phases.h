/*
 * phases.h - the overlap analysis (cs_phases_*): a run's timeline split by
 * the ranges matching A (an NCCL collective, an NVTX range) and those
 * matching B (a GEMM) into phases - only A, A and B overlapped, only B,
 * neither - with each phase's duration, share and per-metric sum, mean
 * rate and peak rate; and B's tail, the time B keeps running after its
 * last overlap with A, with the metrics' mean rates there against B's
 * isolated time outside the tail. Shared by `cyclescope phases` and GET
 * /api/v1/runs/{run}/phases (docs/phases.md).
 */
#ifndef CS_PHASES_H
#define CS_PHASES_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

enum cs_phases_format { CS_PHASES_TEXT = 0, CS_PHASES_JSON, CS_PHASES_CSV };

typedef struct cs_phases_request {
	const char *run;     /* id, name or uuid */
	const char *a, *b;   /* [KIND:]GLOB over range names: "kernel:nccl*", "*gemm*" */
	const char *metrics; /* names or globs, comma-separated; NULL = every metric */
	uint32_t device;
	int format;          /* cs_phases_format */
} cs_phases_request;

/* Appends the answer to out. 0, or -ENOENT (no run, a glob matching no
 * range: the message lists the run's range kinds and a few names, no
 * metric matching), -EINVAL (a malformed argument), -ENOMEM, with the
 * reason in err. */
int cs_phases_out(cs_store *s, const cs_phases_request *rq, cs_buf *out, char *err,
		  size_t errlen);

/* A duration in the run's unit as words: "3.500 ms" or "12000 cycles". */
const char *cs_phases_dur(double d, int ns, char *buf, size_t len);

/* The same for the runs of one job, by rank (sim-bridge/jobphases.h):
 * per rank its phases, exposed and waiting time; per collective instance
 * each rank's start and end, the start skew, the straggler and each
 * rank's wait for it and exposed time; the job's summary. */
typedef struct cs_jobphases_request {
	const char *job;
	const char *a, *b, *metrics;
	int align;           /* CS_JOB_ALIGN_* */
	int format;          /* cs_phases_format */
} cs_jobphases_request;

int cs_jobphases_out(cs_store *s, const cs_jobphases_request *rq, cs_buf *out, char *err,
		     size_t errlen);

#endif
