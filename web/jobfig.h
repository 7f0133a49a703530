/*
 * jobfig.h - a job's figure as SVG (cs_jobfig_svg): its ranks stacked on
 * one time axis with each collective's hidden and exposed time, the
 * straggler of every instance in red and the instances' start skew above.
 * Shared by `cyclescope plot --job` and GET /api/v1/jobs/{job}/figure.svg.
 */
#ifndef CS_JOBFIG_H
#define CS_JOBFIG_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

typedef struct cs_jobfig_request {
	const char *job;
	const char *a, *b;      /* as phases --job */
	int align;              /* CS_JOB_ALIGN_* */
	int have_window;        /* from/to (ns): from the job's origin, or
				   absolute times with from_abs/to_abs */
	uint64_t from, to;
	int from_abs, to_abs;
	size_t max_instances;   /* without a window: the first N (0 = 20) */
} cs_jobfig_request;

/* Appends the SVG to out: 0, or the errors of cs_jobphases_compute. */
int cs_jobfig_svg(cs_store *s, const cs_jobfig_request *rq, cs_buf *out, char *err,
		  size_t errlen);

#endif
