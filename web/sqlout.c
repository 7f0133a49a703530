/* sqlout.c - statement rows to CSV or JSON; see sqlout.h. */
#include "sqlout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct cs_sqlout {
	sqlite3_stmt *st;
	int json, ncol;
	uint64_t max_rows, max_bytes;
	uint64_t handed; /* bytes of earlier pieces */
	int64_t rows;
	int started, done, truncated;
};

cs_sqlout *cs_sqlout_open(sqlite3_stmt *st, int json, uint64_t max_rows, uint64_t max_bytes)
{
	cs_sqlout *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	*o = (cs_sqlout){st, json, sqlite3_column_count(st), max_rows, max_bytes, 0, 0, 0, 0, 0};
	return o;
}

void cs_sqlout_close(cs_sqlout *o) { free(o); }
int64_t cs_sqlout_rows(const cs_sqlout *o) { return o->rows; }

/* The most bytes the current row can take once formatted (hex doubles a
 * blob, escaping can make text six times longer in JSON and twice in CSV,
 * numbers take 30): a row
 * that cannot fit what is left of max_bytes is refused before any of it
 * is formatted (two zeroblob(1e9) would otherwise be 4 GB of hex first). */
static int row_over_budget(const cs_sqlout *o, size_t buffered)
{
	if (!o->max_bytes)
		return 0;
	uint64_t need = 2;
	for (int c = 0; c < o->ncol; c++) {
		uint64_t n = (uint64_t)sqlite3_column_bytes(o->st, c);
		int t = sqlite3_column_type(o->st, c);
		/* text at its most escaped: \u00XX per byte in JSON, every
		 * quote doubled in CSV */
		uint64_t text = o->json ? 6 * n : 2 * n;
		need += (t == SQLITE_BLOB ? 2 * n : t == SQLITE_TEXT ? text : 30) + 4;
		if (o->json) /* "name": */
			need += 4 + strlen(sqlite3_column_name(o->st, c));
	}
	return o->handed + buffered + need > o->max_bytes;
}

/* A blob as hex: room made once, then written in place (two calls per
 * byte made a 30 MB blob take seconds). */
static void hex(cs_buf *b, const uint8_t *p, int n)
{
	static const char digits[] = "0123456789abcdef";
	if (n <= 0 || cs_buf_reserve(b, 2 * (size_t)n) < 0)
		return;
	uint8_t *o = b->data + b->len;
	for (size_t i = 0; i < (size_t)n; i++) {
		o[2 * i] = (uint8_t)digits[p[i] >> 4];
		o[2 * i + 1] = (uint8_t)digits[p[i] & 15];
	}
	b->len += 2 * (size_t)n;
}

static void csv_row(cs_sqlout *o, cs_csv *w)
{
	for (int c = 0; c < o->ncol; c++) {
		switch (sqlite3_column_type(o->st, c)) {
		case SQLITE_INTEGER:
			cs_csv_i64(w, sqlite3_column_int64(o->st, c));
			break;
		case SQLITE_FLOAT:
			cs_csv_f64(w, sqlite3_column_double(o->st, c));
			break;
		case SQLITE_TEXT:
			cs_csv_str(w, (const char *)sqlite3_column_text(o->st, c));
			break;
		case SQLITE_BLOB: {
			const void *p = sqlite3_column_blob(o->st, c);
			cs_csv_empty(w);
			hex(&w->buf, p, sqlite3_column_bytes(o->st, c));
			break;
		}
		default:
			cs_csv_empty(w);
		}
	}
	cs_csv_end_row(w);
}

static void json_row(cs_sqlout *o, cs_buf *b)
{
	if (o->rows)
		cs_buf_put_u8(b, ',');
	cs_buf_put_u8(b, '{');
	int first = 1;
	for (int c = 0; c < o->ncol; c++) {
		cs_json_key(b, &first, sqlite3_column_name(o->st, c));
		switch (sqlite3_column_type(o->st, c)) {
		case SQLITE_INTEGER:
			cs_json_i64(b, sqlite3_column_int64(o->st, c));
			break;
		case SQLITE_FLOAT:
			cs_json_f64(b, sqlite3_column_double(o->st, c));
			break;
		case SQLITE_TEXT:
			cs_json_str(b, (const char *)sqlite3_column_text(o->st, c));
			break;
		case SQLITE_BLOB:
			cs_buf_put_u8(b, '"');
			hex(b, sqlite3_column_blob(o->st, c), sqlite3_column_bytes(o->st, c));
			cs_buf_put_u8(b, '"');
			break;
		default:
			cs_json_raw(b, "null");
		}
	}
	cs_buf_put_u8(b, '}');
}

int cs_sqlout_next(cs_sqlout *o, cs_buf *out, size_t want)
{
	if (o->done)
		return 0;
	size_t start = out->len;
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, out);
	if (!o->started) {
		o->started = 1;
		if (o->json) {
			cs_buf_put_u8(out, '[');
		} else {
			for (int c = 0; c < o->ncol; c++)
				cs_csv_str(&w, sqlite3_column_name(o->st, c));
			cs_csv_end_row(&w);
		}
	}
	int rc = SQLITE_ROW, err = 0;
	while (out->len + w.buf.len - start < want && (rc = sqlite3_step(o->st)) == SQLITE_ROW) {
		if (o->max_rows && (uint64_t)o->rows == o->max_rows) {
			o->truncated = 1;
			err = -E2BIG;
			break;
		}
		if (row_over_budget(o, out->len + w.buf.len - start)) {
			err = -EFBIG;
			break;
		}
		if (o->json)
			json_row(o, out);
		else
			csv_row(o, &w);
		o->rows++;
		if (w.rc)
			break;
	}
	int frc = cs_csv_finish(&w);
	if (!err && frc)
		err = frc;
	if (!err && rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = -EIO;
	if (!err && rc == SQLITE_DONE) {
		o->done = 1;
		if (o->json)
			cs_json_raw(out, "]\n");
	}
	o->handed += out->len - start;
	if (err)
		return err;
	return o->done ? 0 : 1;
}

/* The CLI's whole-statement form: every piece handed to sink. */
static int64_t run_all(sqlite3_stmt *st, int json, cs_csv_sink_fn sink, void *ctx,
		       uint64_t max_rows, uint64_t max_bytes, int *truncated)
{
	cs_sqlout *o = cs_sqlout_open(st, json, max_rows, max_bytes);
	if (!o)
		return -ENOMEM;
	cs_buf b = CS_BUF_INIT;
	int rc;
	do {
		b.len = 0;
		rc = cs_sqlout_next(o, &b, 64u << 10);
		if (rc >= 0 && b.len && sink(ctx, b.data, b.len))
			rc = -EIO;
	} while (rc == 1);
	if (truncated)
		*truncated = rc == -E2BIG;
	int64_t rows = cs_sqlout_rows(o);
	cs_sqlout_close(o);
	cs_buf_free(&b);
	return rc == -E2BIG ? rows : rc < 0 ? rc : rows;
}

int64_t cs_sqlout_csv(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		      uint64_t max_rows, uint64_t max_bytes, int *truncated)
{
	return run_all(st, 0, sink, ctx, max_rows, max_bytes, truncated);
}

int64_t cs_sqlout_json(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		       uint64_t max_rows, uint64_t max_bytes, int *truncated)
{
	return run_all(st, 1, sink, ctx, max_rows, max_bytes, truncated);
}
