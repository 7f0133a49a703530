/*
 * query.h - one read-only SQL statement of a user's over the store
 * (cs_query_*): `cyclescope query` and POST /api/v1/query.
 *
 * The statement runs in a sandbox: an authorizer that allows reading only
 * (no ATTACH, no writing pragma, no load_extension), a progress handler
 * that stops it at a deadline or when the asker has gone, a cap on the
 * length of any one value (printf() and format() refuse widths past it:
 * they stay so on the connection until it closes), and row and byte
 * limits on the answer. The
 * answer is CSV (a header of column names, then a row per result row; NULL
 * an empty field, blobs as hex) or JSON (an array of objects keyed by
 * column name), produced a piece at a time so it can be streamed.
 */
#ifndef CS_QUERY_H
#define CS_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

typedef struct cs_query cs_query;

typedef struct cs_query_opts {
	int json;              /* JSON instead of CSV */
	int trusted;           /* no authorizer: the asker owns the file */
	uint64_t timeout_ms;   /* 0: no deadline */
	uint64_t max_rows;     /* 0: no limit */
	uint64_t max_bytes;    /* of the answer; 0: no limit */
	int max_sql;           /* longest SQL text in bytes; 0: SQLite's */
	int (*gone)(void *ctx); /* asked every 50 ms while it runs: 1 stops it */
	void *gone_ctx;
} cs_query_opts;

/* Why a query was refused or stopped. */
typedef enum cs_query_fail {
	CS_QUERY_OK = 0,
	CS_QUERY_USAGE,   /* no statement, or more than one */
	CS_QUERY_REFUSED, /* a syntax error, not allowed, or not read-only */
	CS_QUERY_TIMEOUT, /* ran past timeout_ms */
	CS_QUERY_TOO_BIG, /* past max_rows, max_bytes or the value length cap */
	CS_QUERY_GONE,    /* gone() said the asker left */
	CS_QUERY_NOMEM,
	CS_QUERY_FAILED,  /* any other error of a step */
} cs_query_fail;

/* Prepares sql on s's connection, which the query holds until
 * cs_query_close(). NULL when refused: *fail and why say why. */
cs_query *cs_query_open(cs_store *s, const char *sql, const cs_query_opts *o,
			cs_query_fail *fail, char *why, size_t whylen);

/* Appends the next piece of the answer to out (the header first; then rows
 * until at least want bytes were added, or the end). 1: more follows;
 * 0: the answer is complete; negative: it failed (cs_query_failure), and
 * what was appended is whole rows. */
int cs_query_next(cs_query *q, cs_buf *out, size_t want);

/* Rows handed out so far. */
int64_t cs_query_rows(const cs_query *q);

/* Why the last cs_query_next() failed, with a message for the asker. */
cs_query_fail cs_query_failure(const cs_query *q, char *why, size_t whylen);

/* Ends the query and takes the sandbox off the connection. Accepts NULL. */
void cs_query_close(cs_query *q);

#endif
