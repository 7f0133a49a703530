/*
 * ranges.h - a run's ranges read in time order (cs_ranges_*): the cursor
 * ranges.csv and the Perfetto export read through, so the ranges table's
 * SQL stays in the store.
 */
#ifndef CS_RANGES_H
#define CS_RANGES_H

#include <stdint.h>

#include "store.h"

/* Which ranges a window [from, to) keeps. */
enum {
	CS_RANGES_OVERLAP = 0,  /* those that overlap it, and instants inside it */
	CS_RANGES_TOUCHING = 1, /* those that end at from or later and start before to */
	CS_RANGES_STRICT = 2,   /* those that overlap it by more than a point */
};

/* A zeroed query with run set and to = UINT64_MAX reads every range. */
typedef struct cs_ranges_query {
	int64_t run;
	uint64_t from, to;  /* the window; to = UINT64_MAX: open */
	/* which ranges the window keeps (CS_RANGES_*) */
	int window;
	const char *kinds;  /* comma-separated kinds; NULL or "" = any */
	const char *name;   /* NULL = any; else the name, or a GLOB with name_glob */
	int name_glob;
	int name_not;       /* with name_glob: the names the GLOB does not match */
	int have_device;    /* keep ranges of device and those of none (host) */
	int64_t device;
	uint64_t limit;     /* 0 = all; else the longest limit of them */
	int longest_first;  /* the rows longest first, not by t0 */
	/* by_id: instead of all the above but run and limit, the ranges from
	 * id since_id on, in the order they were stored, limit the first
	 * ones (a follower's next look) */
	int by_id;
	int64_t since_id;
	/* lean: only id, kind, name, t0, t1 and device are read (the row's
	 * other fields zero, args NULL) */
	int lean;
	/* arg: a JSON path into each row's args ("$.app"): its value as text
	 * in the row's arg (NULL when absent); not with lean */
	const char *arg;
} cs_ranges_query;

/* The optional columns a row has (CS_RANGE_HAS_*). */
enum {
	CS_RANGE_HAS_DEVICE = 1,
	CS_RANGE_HAS_STREAM = 2,
	CS_RANGE_HAS_CORRELATION = 4,
	CS_RANGE_HAS_PID = 8,
	CS_RANGE_HAS_TID = 16,
	CS_RANGE_HAS_BYTES = 32,
};

/* One range; kind and name borrowed until the next cs_ranges_next. */
typedef struct cs_range_row {
	int64_t id;
	const char *kind, *name;
	int64_t t0, t1;
	int64_t device, stream, correlation_id, pid, tid, bytes;
	unsigned has; /* CS_RANGE_HAS_* */
	const char *args; /* JSON object text, NULL = none */
	const char *arg;  /* the query's arg path's value as text, NULL = none */
} cs_range_row;

typedef struct cs_ranges_cursor cs_ranges_cursor;

/* The ranges q selects, by t0 then id (by id with by_id). Strings in q are borrowed until
 * the cursor is closed; s must outlive it. NULL on failure
 * (cs_store_errmsg(s) says why). */
cs_ranges_cursor *cs_ranges_open(cs_store *s, const cs_ranges_query *q);

/* The next range into *r: 1, 0 at the end, or a negative errno. */
int cs_ranges_next(cs_ranges_cursor *c, cs_range_row *r);

/* Accepts NULL. */
void cs_ranges_close(cs_ranges_cursor *c);

/* One kind of a run's ranges: how many, on how many streams, and up to
 * three of their distinct names (the first by name), ", "-separated (cut
 * at 255 bytes). */
typedef struct cs_ranges_kind {
	char kind[64];
	int64_t count;
	int64_t streams; /* distinct streams among them */
	char names[256];
} cs_ranges_kind;

/* The run's range kinds, by kind, into *out (caller frees with free()),
 * their number in *n. 0 or an error. */
int cs_ranges_kinds(cs_store *s, int64_t run, cs_ranges_kind **out, size_t *n);

/* The id of run's first range that ends at or after t, else the id the
 * next range stored will have (or above): where a follower starts. 0 or
 * an error. */
int cs_ranges_first_id(cs_store *s, int64_t run, uint64_t t, int64_t *id);

/* How a window's ranges fill it, per kind and stream, in bins equal
 * parts of [from, to): a range counts in the bin where its part in the
 * window starts; busy is the time of its part in that bin. What a lane
 * draws where its ranges are too many to draw one by one. */
typedef struct cs_ranges_bin {
	char kind[64];
	int64_t stream;
	int has_stream;
	uint32_t bin;
	int64_t count, busy;
} cs_ranges_bin;

/* The non-empty bins, by kind, stream and bin, into *out (caller frees
 * with free()), their number in *n. 0 or an error. */
int cs_ranges_density(cs_store *s, int64_t run, uint64_t from, uint64_t to, uint32_t bins,
		      cs_ranges_bin **out, size_t *n);

/* The first start and last end of run's ranges: 0, or -ENODATA when it
 * has none, or an error. */
int cs_ranges_extent(cs_store *s, int64_t run, uint64_t *t0, uint64_t *t1);

#endif
