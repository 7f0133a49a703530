/*
 * series_csv.h - a run's series as wide CSV, produced a piece at a time
 * (cs_series_csv_*). `cyclescope export` and GET /api/v1/runs/{id}/series.csv
 * both use it, so the CLI and the HTTP API write the same bytes.
 *
 * The rows are series_rows.h's. Shape: t0,t1,<metric>,... one row per
 * sample (raw), or t0,t1 and <metric>:min,:max,:mean,:sum,:count per
 * metric (buckets > 0); expressions are columns after the metrics, named
 * as written. A leading device column when any exported device is not
 * device 0. With since, a seq column (the sample's number on its device)
 * follows the device column, so that a client that polls asks next for
 * what came after the last seq it saw.
 */
#ifndef CS_SERIES_CSV_H
#define CS_SERIES_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "csv.h"
#include "ranges.h"
#include "series_rows.h"
#include "store.h"

typedef struct cs_series_csv cs_series_csv;

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
