/*
 * reader.h - reading series back (cs_read_*): raw wide scans and bucketed
 * aggregates, plus the look-ups readers need (runs, metrics, devices).
 *
 * A scan covers one (run, device) and m metrics of it, over the samples
 * whose t0 lies in [from, to). Results come through a callback, one row at a
 * time, so callers stream them (CSV to a socket) without building them whole.
 * A callback returns 0 to go on or a negative errno to stop the scan; that
 * value is then returned.
 *
 * Errors: 0 or a negative errno, message in cs_store_errmsg().
 * Threads: as the cs_store they use.
 */
#ifndef CS_READER_H
#define CS_READER_H

#include <stdint.h>

#include "chunk.h"
#include "store.h"

typedef struct cs_scan {
	int64_t run;
	uint32_t device;
	uint32_t m;               /* number of metrics */
	const uint32_t *metrics;  /* metric ids, borrowed for the call */
	uint64_t from;            /* first t0 included */
	uint64_t to;              /* first t0 excluded; UINT64_MAX = no end */
	/* Raw scans only: with seq_to > 0, the samples numbered
	 * [seq_from, seq_to) instead of a time span (from/to unused). */
	uint64_t seq_from, seq_to;
} cs_scan;

/* One sample: values[k] for metrics[k], NaN when absent. The array is
 * borrowed for the duration of the call. */
typedef int (*cs_row_fn)(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1,
			 const double *values);

int cs_read_raw(cs_store *s, const cs_scan *q, cs_row_fn fn, void *ctx);

/* The same scan, one chunk of rows per call, for callers that pull (an HTTP
 * response callback). cs_raw_open copies q; NULL on error (message in the
 * store). cs_raw_next emits the rows of the next chunk and returns 1 while
 * more may follow, 0 at the end, or an error / the callback's non-zero
 * value. */
typedef struct cs_raw_iter cs_raw_iter;
cs_raw_iter *cs_raw_open(cs_store *s, const cs_scan *q);
int cs_raw_next(cs_raw_iter *it, cs_row_fn fn, void *ctx);
void cs_raw_close(cs_raw_iter *it);

/* How much of the data a bucketed scan had to unpack. */
typedef struct cs_read_stats {
	uint64_t chunks_whole;   /* chunk aggregates used as they are */
	uint64_t blocks_whole;   /* block aggregates used as they are */
	uint64_t blocks_decoded; /* blocks unpacked value by value */
	uint64_t timelines_decoded;
	uint64_t values_decoded;
} cs_read_stats;

/* Bucket i of n over [from, to): [t0, t1) and aggs[k] for metrics[k]
 * (count 0 = no value). Borrowed for the call. */
typedef int (*cs_bucket_fn)(void *ctx, uint32_t i, uint64_t t0, uint64_t t1,
			    const cs_agg *aggs);

/* Aggregates the scan into nbuckets equal buckets over [from, to) (to must
 * be finite and > from). A sample falls in bucket floor((t0 - from) *
 * nbuckets / (to - from)). Every bucket is reported, empty ones included.
 * stats may be NULL. */
int cs_read_buckets(cs_store *s, const cs_scan *q, uint32_t nbuckets,
		    cs_bucket_fn fn, void *ctx, cs_read_stats *stats);

/* Buckets [b0, b1) of the same nbuckets over [from, to), exactly as
 * cs_read_buckets reports them, reading only their time: a caller streams
 * many buckets a part at a time in bounded memory. */
int cs_read_buckets_part(cs_store *s, const cs_scan *q, uint32_t nbuckets, uint32_t b0,
			 uint32_t b1, cs_bucket_fn fn, void *ctx, cs_read_stats *stats);

/* cs_read_buckets' arithmetic, for callers that bucket samples of their
 * own: the bucket of a time t in [from, to), and where bucket i starts. */
uint32_t cs_read_bucket_of(uint64_t from, uint64_t to, uint32_t nbuckets, uint64_t t);
uint64_t cs_read_bucket_start(uint64_t from, uint64_t to, uint32_t nbuckets, uint32_t i);

/* Looks up a metric of a run by name. Returns 0, or -ENOENT with a message
 * that lists what the run has. */
int cs_read_metric_id(cs_store *s, int64_t run, const char *name,
		      uint32_t *id);

/* All metric ids of a run in id order. *ids is malloc'd; caller frees. */
int cs_read_metric_ids(cs_store *s, int64_t run, uint32_t **ids,
		       uint32_t *count);

/* The name of metric id of run, copied into out. */
int cs_read_metric_name(cs_store *s, int64_t run, uint32_t id, char *out,
			size_t outlen);

/* The devices that have samples in a run, ascending. *devs is malloc'd;
 * caller frees. */
int cs_read_devices(cs_store *s, int64_t run, uint32_t **devs,
		    uint32_t *count);

/* The run's sample span: first and last t0. -ENOENT for no such run,
 * -ENODATA for a run without samples. */
int cs_read_run_span(cs_store *s, int64_t run, uint64_t *t_min,
		     uint64_t *t_max);

/* The run's whole extent: the first sample's t0 and an end past every
 * sample (the run's recorded t_max, the last sample's end, when it is
 * beyond the last t0 + 1), so the last sample counts whole. The errors of
 * cs_read_run_span. */
int cs_read_run_extent(cs_store *s, int64_t run, uint64_t *start, uint64_t *end);

/* Resolves a run given by id or by exact name (the newest of that name).
 * Returns 0 or -ENOENT. */
int cs_read_find_run(cs_store *s, const char *spec, int64_t *run);


#endif
