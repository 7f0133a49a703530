/*
 * ship.h - shipping the store to ClickHouse (cs_ship_*): runs, devices,
 * metrics, ranges and samples go into tables it creates when absent, over
 * ClickHouse's HTTP interface (libcurl, RowBinary inserts, every response
 * checked). docs/fleet.md has the tables and the guarantees.
 *
 * Exactly once in effect: what a target confirmed is recorded in the local
 * database (outbox.h marks) only after ClickHouse answered 200, batch by
 * batch; a batch re-sent after a crash between the two carries the same
 * rows with the same keys, and every table is a ReplacingMergeTree on
 * them, so it collapses (FINAL reads, or after merges). Rows of a run go to
 * one shard (sharding by host and run), so a re-sent batch meets its twin.
 *
 * cs_ship_once ships what is pending now and returns (the `ship` command);
 * cs_ship_start runs that every interval on its own thread (the daemon's
 * [sink.clickhouse]), backing off while ClickHouse is down or refusing and
 * logging once per change of state; the local file keeps collecting.
 */
#ifndef CS_SHIP_H
#define CS_SHIP_H

#include <stdint.h>

#include "buf.h"

typedef struct cs_ship_opts {
	const char *db_path;  /* local database: read, and written for marks */
	const char *url;      /* ClickHouse HTTP, e.g. http://127.0.0.1:8123 */
	const char *database; /* created if absent */
	const char *prefix;   /* table name prefix ("" = none) */
	const char *host;     /* this node's name in every row ("" = hostname) */
	const char *cluster;  /* "" or a cluster name: also *_all Distributed
				 tables, inserted through with
				 insert_distributed_sync */
	const char *user, *password; /* "" = none (or user:pass@ in url) */
	uint64_t batch_rows;  /* sample rows per insert */
	uint64_t interval_ms; /* cs_ship_start: how often to look */
	uint64_t timeout_s;   /* per request */
	int64_t only_run;     /* cs_ship_once: one run id (0 = all) */
} cs_ship_opts;

typedef struct cs_ship_stats {
	uint64_t rows;     /* sample rows confirmed */
	uint64_t ranges;   /* range rows confirmed */
	uint64_t batches;  /* inserts confirmed */
	uint64_t bytes;    /* request bodies confirmed */
	uint64_t runs;     /* runs brought up to date */
} cs_ship_stats;

/* Ships everything pending now. 0, or a negative errno with what failed
 * (the request, ClickHouse's own message or curl's) in err; stats (may be
 * NULL) counts what was confirmed either way. */
int cs_ship_once(const cs_ship_opts *o, cs_ship_stats *stats, char *err, size_t errlen);

typedef struct cs_ship cs_ship;

/* Copies o and starts the shipping thread. NULL with the reason in err. */
cs_ship *cs_ship_start(const cs_ship_opts *o, char *err, size_t errlen);

/* Stops the thread (after the request in flight) and frees sh; what was
 * not confirmed is shipped by the next start. Accepts NULL. */
void cs_ship_stop(cs_ship *sh);

/* Appends the shipper's counters in Prometheus text format. */
void cs_ship_metrics_text(cs_ship *sh, cs_buf *out);

#endif
