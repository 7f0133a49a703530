/*
 * csv.h - a streaming RFC 4180 CSV writer (cs_csv_*).
 *
 * Fields are buffered and handed to a sink in pieces of about 64 KiB, so a
 * series of any length is written without being built whole in memory: the
 * CLI's sink is stdout, the HTTP server's is a response callback. Doubles
 * are written in the shortest form that reads back bit-exactly; NaN
 * (absent) is an empty field.
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Receives n bytes; returns 0 or a negative errno to stop writing. */
typedef int (*cs_csv_sink_fn)(void *ctx, const void *p, size_t n);

typedef struct cs_csv {
	cs_buf buf;
	cs_csv_sink_fn sink;
	void *ctx;
	int row_open; /* a field was written in the current row */
	int rc;       /* first sink error; later writes are dropped */
} cs_csv;

/* A sink that appends to the cs_buf ctx. */
int cs_csv_buf_sink(void *ctx, const void *p, size_t n);

/* Starts a writer; sink and ctx are borrowed for its life. */
void cs_csv_init(cs_csv *w, cs_csv_sink_fn sink, void *ctx);

void cs_csv_str(cs_csv *w, const char *s);  /* quoted when needed */
void cs_csv_u64(cs_csv *w, uint64_t v);
void cs_csv_i64(cs_csv *w, int64_t v);
void cs_csv_f64(cs_csv *w, double v);       /* NaN -> empty */
void cs_csv_empty(cs_csv *w);
void cs_csv_end_row(cs_csv *w);             /* CRLF, per RFC 4180 */

/* Hands buffered bytes to the sink; returns the first sink error or 0. */
int cs_csv_flush(cs_csv *w);

/* Flushes and frees the buffer; returns what cs_csv_flush returns. */
int cs_csv_finish(cs_csv *w);

/* Writes v in the shortest decimal form that strtod reads back exactly,
 * integers without a fraction ("12", "-0", "inf"); out holds 32 bytes.
 * Returns the length. Shared with the JSON writer. */
size_t cs_format_f64(char out[32], double v);

#endif
