/*
 * series_csv.h - a run's series as wide CSV, produced a piece at a time
 * (cs_series_csv_*). `cyclescope export` and GET /api/v1/runs/{id}/series.csv
 * both use it, so the CLI and the HTTP API write the same bytes.
 *
 * Shape: t0,t1,<metric>,... one row per sample (raw), or t0,t1 and
 * <metric>:min,:max,:mean,:sum,:count per metric (buckets > 0). Metric
 * expressions (expr.h's grammar) are columns after the metrics, named as
 * written; they are evaluated sample by sample and bucketed like a metric. A leading
 * device column when any exported device is not device 0. With a range
 * name (or glob), only samples whose t0 lies inside one of the run's ranges
 * of that name are written. With since, a seq column (the sample's number
 * on its device) follows the device column, so that a client that polls
 * asks next for what came after the last seq it saw; delta() goes on
 * from the samples before (up to 64 of them are read), as in the whole
 * export.
 */
#ifndef CS_SERIES_CSV_H
#define CS_SERIES_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "csv.h"
#include "ranges.h"
#include "store.h"

/* The most bucket x metric aggregates one bucketed request holds (about
 * 32 bytes each, 128 MiB): 1000 buckets of 4000 metrics fit. */
#define CS_SERIES_MAX_CELLS 4194304u

typedef struct cs_series_req {
	const char *run;     /* id, name or uuid */
	const char *metrics; /* comma-separated names; NULL = all (none when
				exprs is given) */
	const char *exprs;   /* ';'-separated metric expressions; NULL = none.
				rate(E) is per second on ns runs, per cycle
				on cycle runs */
	int have_device;
	uint32_t device;
	uint64_t from, to; /* to = UINT64_MAX: no end */
	int have_from, have_to;
	uint32_t buckets; /* 0 = raw */
	const char *range; /* NULL = no range filter */
	/* Raw only: each device's samples numbered above since, read from
	 * the timeline at that seq on (the cost follows the new samples, not
	 * the run), with a seq column after the device column. */
	uint64_t since;
	int have_since;
} cs_series_req;

typedef struct cs_series_csv cs_series_csv;

/* The request-error convention of the series CSV and of what is built on
 * it (plot.h, follow.h): the reason formatted into err, the HTTP status
 * into *status; returns -1. */
int cs_series_fail(char *err, size_t errlen, int *status, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Validates the request against the store (borrowed until close). NULL
 * with the reason in err; *status is 404 for an unknown run, 400 for a bad
 * parameter (err names it), 500 otherwise. */
cs_series_csv *cs_series_csv_open(cs_store *s, const cs_series_req *r, int *status,
				  char *err, size_t errlen);

/* Appends the next piece (header, or at least one chunk's rows) to out.
 * Returns 1 while more follows, 0 at the end, or a negative errno (message
 * in cs_store_errmsg). */
int cs_series_csv_next(cs_series_csv *x, cs_buf *out);

void cs_series_csv_close(cs_series_csv *x);

/* ranges.csv's header and one row (the HTTP answer and the follow
 * stream's ranges events): kind, name, t0, t1, device, stream,
 * correlation_id, pid, tid, bytes (empty when absent), demangled. */
void cs_ranges_csv_header(cs_csv *w);
void cs_ranges_csv_row(cs_csv *w, const cs_range_row *r);

#endif
