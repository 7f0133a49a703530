/*
 * sqlout.h - streaming a prepared statement's rows out as CSV or JSON
 * (cs_sqlout_*), for `cyclescope query` and the HTTP query endpoint.
 *
 * CSV: a header row of column names, then one row per result row; NULL is
 * an empty field, blobs are written as hex. JSON: an array of objects keyed
 * by column name. Both step the statement to the end (or to max_rows) and
 * hand bytes to the sink as they go.
 */
#ifndef CS_SQLOUT_H
#define CS_SQLOUT_H

#include <stdint.h>

#include <sqlite3.h>

#include "csv.h"

/* The resumable form, for answers streamed a piece at a time. */
typedef struct cs_sqlout cs_sqlout;

/* NULL when out of memory. The statement stays the caller's. */
cs_sqlout *cs_sqlout_open(sqlite3_stmt *st, int json, uint64_t max_rows, uint64_t max_bytes);

/* Appends the next piece to out (the header first; then rows until at
 * least want bytes were added, or the end). 1: more follows; 0: the
 * answer is complete; -E2BIG: max_rows reached (what is out is whole rows);
 * -EFBIG: the next row would take the answer past max_bytes (nothing of
 * it was formatted); -EIO: a step failed (sqlite3_errmsg); -ENOMEM. */
int cs_sqlout_next(cs_sqlout *o, cs_buf *out, size_t want);
int64_t cs_sqlout_rows(const cs_sqlout *o);
void cs_sqlout_close(cs_sqlout *o);

/* Returns the number of rows written (>= 0), or a negative errno / sink
 * error; a SQLite step error is -EIO with its message in
 * sqlite3_errmsg(db). max_rows 0 = no limit; *truncated is set when the
 * limit cut the output (may be NULL). max_bytes 0 = no limit; otherwise a
 * value that would take the output past it is not formatted at all and
 * the call returns -EFBIG. */
int64_t cs_sqlout_csv(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		      uint64_t max_rows, uint64_t max_bytes, int *truncated);
int64_t cs_sqlout_json(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		       uint64_t max_rows, uint64_t max_bytes, int *truncated);

#endif
