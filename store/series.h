/*
 * series.h - the `series` virtual table (cs_series_*).
 *
 *   SELECT * FROM series WHERE run = 3 AND metric = 'lts__t_sectors.sum'
 *                          AND t0 BETWEEN 1000 AND 2000;
 *
 * An eponymous, read-only table with columns (run, device, metric, seq, t0,
 * t1, value): one row per present value of every stored chunk. Absent values
 * (NaN at ingest) have no row. Equality on run, device and metric and ranges
 * on t0 and seq are pushed down, so chunks outside them are never decoded.
 *
 * Built into every cs_store connection, and into the loadable extension
 * cyclescope_series.so for the sqlite3 shell (`.load ./cyclescope_series`).
 */
#ifndef CS_SERIES_H
#define CS_SERIES_H

#include <stdint.h>

#include <sqlite3.h>

/* Counters of what the table's cursors did; for tests and diagnostics. */
typedef struct cs_series_stats {
	uint64_t chunks_decoded;
	uint64_t rows;
} cs_series_stats;

/* Registers the module on db. stats (may be NULL) is borrowed until the
 * connection closes and is updated by cursors on db's thread. Returns a
 * SQLite result code. */
int cs_series_register(sqlite3 *db, cs_series_stats *stats);

#endif
