/*
 * ingest.h - the daemon's ingest side (cs_ingest_*): a Unix stream socket
 * that many producers write wire frames to, one reader thread per
 * connection that decodes them, a bounded queue, and the single writer
 * thread that applies them to the store and commits in batches.
 *
 * Back-pressure: when the queue holds queue_bytes, reader threads block on
 * it and stop reading their sockets, so producers block in send(); nothing is
 * dropped. A malformed frame or a protocol violation closes only that
 * connection (one log line with the reason and the byte offset); its run
 * ends as 'incomplete' with everything received before committed.
 */
#ifndef CS_INGEST_H
#define CS_INGEST_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

typedef struct cs_ingest_stats {
	atomic_uint_fast64_t values;       /* values committed to the store's writer */
	atomic_uint_fast64_t samples;
	atomic_uint_fast64_t frames;
	atomic_uint_fast64_t bytes;        /* read from sockets */
	atomic_uint_fast64_t frames_bad;   /* connections closed for a bad frame */
	atomic_uint_fast64_t rejected;     /* records the store refused */
	atomic_uint_fast64_t dropped;      /* samples dropped after a refusal */
	atomic_uint_fast64_t conns_open;
	atomic_uint_fast64_t conns_total;
	atomic_uint_fast64_t conns_refused;
	atomic_uint_fast64_t conns_evicted;
	atomic_uint_fast64_t queue_items;
	atomic_uint_fast64_t queue_bytes;
	atomic_uint_fast64_t queue_waits;  /* times a reader blocked on a full queue */
	atomic_uint_fast64_t commits;
	atomic_uint_fast64_t runs_begun;
	atomic_uint_fast64_t runs_incomplete;
	atomic_uint_fast64_t values_per_s; /* over the last full second */
} cs_ingest_stats;

typedef struct cs_ingest_opts {
	const char *socket_path;
	uint64_t queue_bytes;
	uint64_t commit_ms;
	uint64_t commit_values;
	uint64_t partial_flush_ms;
	uint64_t max_connections;
	struct cs_collectors *collectors; /* collectors that register (REGISTER)
					     go here; NULL = none (borrowed) */
	uint64_t live_flush_ms; /* partial chunks this often while followed */
	/* with max_connections open, a connection that has begun no run and
	 * registered no collector this long after it opened is closed to let
	 * a new one in; 0 = never */
	uint64_t idle_producer_ms;
} cs_ingest_opts;

typedef struct cs_ingest cs_ingest;

/* Takes ownership of store s (the writer thread is its only user from now
 * on), binds the socket (mode 0660; a stale socket file is replaced, a live
 * one is an error) and starts the threads. NULL with the reason in err. */
cs_ingest *cs_ingest_start(cs_store *s, const cs_ingest_opts *o, char *err, size_t errlen);

/* Stops accepting, closes every connection (their runs end incomplete),
 * drains the queue, commits, checkpoints the WAL, closes the store and
 * frees everything. Returns 0 or the first store error. */
int cs_ingest_stop(cs_ingest *in);

/* A follower of a running run came (delta 1) or went (-1): while any
 * follows, partially filled chunks are written every live_flush_ms
 * rather than every partial_flush_ms, so new samples show within it. */
void cs_ingest_followers(cs_ingest *in, int delta);

/* NULL while the store takes writes, else why not ("disk full", "I/O
 * error"): open runs were cut and new ones are refused until it can. */
const char *cs_ingest_degraded(cs_ingest *in);

/* Deletes the run of that uuid through the writer thread (the store's one
 * writer; by uuid, since ids are reused): 0 with its id in *run, -ENOENT
 * when it is gone, -EBUSY while a producer is writing it, -EROFS while the
 * store cannot be written, or the store's error; the reason in err.
 * Blocks until done. */
int cs_ingest_delete_run(cs_ingest *in, const char *uuid, int64_t *run, char *err,
			 size_t errlen);

/* Appends the counters in Prometheus text format. */
void cs_ingest_metrics_text(cs_ingest *in, cs_buf *out);

#endif
