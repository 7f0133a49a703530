/*
 * follow.h - a running run followed as it is committed (cs_follow_*), for
 * GET /api/v1/runs/{run}/follow: Server-Sent Events carrying the samples
 * and ranges committed since the last look, as series.csv and ranges.csv
 * rows, until the run ends.
 *
 *   event: header     data: t0,t1,<metric>,...   (once, first)
 *   event: samples    data: one series.csv row per line
 *   event: ranges     data: one ranges.csv row per line (its header first
 *                     in the first such event)
 *   event: end        data: {"status":"complete","samples":N}
 *
 * Each look reads at most CS_FOLLOW_ROWS samples and ranges, so a follower
 * of a run of any length holds a bounded buffer; the next look goes on
 * from there. The caller does the waiting between looks (web/http.c).
 */
#ifndef CS_FOLLOW_H
#define CS_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

#define CS_FOLLOW_ROWS 20000

typedef struct cs_follow_req {
	const char *run;     /* id, name or uuid */
	const char *metrics; /* comma-separated; NULL = all */
	int have_device;
	uint32_t device;     /* default: the run's first device */
	uint64_t from;       /* first t0 to send; default: the run's start */
	int have_from;
} cs_follow_req;

typedef struct cs_follow cs_follow;

/* Borrows s until close. NULL with *status (404, 400, 500) and err. */
cs_follow *cs_follow_open(cs_store *s, const cs_follow_req *r, int *status, char *err,
			  size_t errlen);

/* One look: appends the events for what was committed since the last one
 * to out. Returns 1 when it appended something, 2 when there was nothing
 * new (look again later), 0 when the run has ended and everything was
 * sent (an end event appended), or a negative errno (message in err). */
int cs_follow_next(cs_follow *f, cs_buf *out, char *err, size_t errlen);

void cs_follow_close(cs_follow *f);

#endif
