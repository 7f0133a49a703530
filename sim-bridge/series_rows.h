/*
 * series_rows.h - a run's series as rows of numbers, produced a part at a
 * time (cs_srows_*): the one reader behind the wide CSV (series_csv.h:
 * `cyclescope export`, GET .../series.csv, follow) and the figures
 * (plot.h), so both see the same values without a text round trip.
 *
 * Columns: the metrics asked for, then the metric expressions (expr.h's
 * grammar), evaluated sample by sample. A row is one sample (raw), with
 * one value a column (NaN: absent), or one bucket (buckets > 0), with one
 * aggregate a column. With a range name (or glob), only samples whose t0
 * lies inside one of the run's ranges of that name are given. With since,
 * each device's samples numbered above since (delta() goes on from the
 * samples before: up to 64 of them are read).
 */
#ifndef CS_SERIES_ROWS_H
#define CS_SERIES_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"
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

/* The request-error convention of the series rows and of what is built on
 * them (series_csv.h, plot.h, follow.h): the reason formatted into err, the HTTP status
 * into *status; returns -1. */
int cs_series_fail(char *err, size_t errlen, int *status, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

typedef struct cs_srows cs_srows;

typedef struct cs_series_row {
	uint32_t device;
	uint64_t seq; /* raw rows: the sample's number on its device */
	uint64_t t0, t1;
	const double *v; /* raw: one value a column */
	const cs_agg *a; /* buckets: one aggregate a column */
} cs_series_row;

/* Called for each row; nonzero stops the reading and is returned. */
typedef int (*cs_srows_fn)(void *ctx, const cs_series_row *row);

/* Validates the request against the store (borrowed until close). NULL
 * with the reason in err; *status is 404 for an unknown run, 400 for a bad
 * parameter (err names it), 500 otherwise. */
cs_srows *cs_srows_open(cs_store *s, const cs_series_req *r, int *status, char *err,
			size_t errlen);

/* Hands the next part (at least one chunk's rows, or one part of
 * buckets) to fn. 1 while more follows, 0 at the end, or a negative
 * errno (message in cs_store_errmsg) or what fn returned. */
int cs_srows_next(cs_srows *x, cs_srows_fn fn, void *ctx);

/* The columns: metrics, then expressions. A metric's name as stored, an
 * expression's as written. */
uint32_t cs_srows_ncols(const cs_srows *x);
const char *cs_srows_col_name(cs_srows *x, uint32_t k, char *buf, size_t len);
int cs_srows_device_col(const cs_srows *x); /* a device other than 0 is read */
int cs_srows_has_seq(const cs_srows *x);    /* since was given */
uint32_t cs_srows_buckets(const cs_srows *x);

void cs_srows_close(cs_srows *x);

#endif
