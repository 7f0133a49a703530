/* sqlout.c - statement rows to CSV or JSON; see sqlout.h. */
#include "sqlout.h"

#include <errno.h>
#include <stdio.h>

#include "json.h"

/* Counts what reaches the caller's sink, so that a value can be refused
 * before it is formatted: a result never grows past max_bytes in memory
 * (a row of two zeroblob(1e9) would otherwise be 4 GB of hex first). */
typedef struct budget {
	cs_csv_sink_fn sink;
	void *ctx;
	uint64_t sent, max;
} budget;

static int counted_sink(void *ctx, const void *p, size_t n)
{
	budget *b = ctx;
	b->sent += n;
	return b->sink(b->ctx, p, n);
}

/* The most bytes column c can take once formatted (hex doubles a blob,
 * escaping can make text six times longer), against what is left. */
static int over_budget(const budget *b, size_t buffered, sqlite3_stmt *st, int c)
{
	if (!b->max)
		return 0;
	uint64_t n = (uint64_t)sqlite3_column_bytes(st, c);
	int t = sqlite3_column_type(st, c);
	uint64_t need = t == SQLITE_BLOB ? 2 * n + 2 : t == SQLITE_TEXT ? n + 2 : 32;
	return b->sent + buffered + need > b->max;
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

int64_t cs_sqlout_csv(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		      uint64_t max_rows, uint64_t max_bytes, int *truncated)
{
	budget bg = {sink, ctx, 0, max_bytes};
	int over = 0;
	cs_csv w;
	cs_csv_init(&w, counted_sink, &bg);
	int ncol = sqlite3_column_count(st);
	for (int c = 0; c < ncol; c++)
		cs_csv_str(&w, sqlite3_column_name(st, c));
	cs_csv_end_row(&w);
	int64_t rows = 0;
	int rc;
	if (truncated)
		*truncated = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (max_rows && (uint64_t)rows == max_rows) {
			if (truncated)
				*truncated = 1;
			break;
		}
		for (int c = 0; c < ncol && !over; c++) {
			if ((over = over_budget(&bg, w.buf.len, st, c)))
				break;
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_INTEGER:
				cs_csv_i64(&w, sqlite3_column_int64(st, c));
				break;
			case SQLITE_FLOAT:
				cs_csv_f64(&w, sqlite3_column_double(st, c));
				break;
			case SQLITE_TEXT:
				cs_csv_str(&w, (const char *)sqlite3_column_text(st, c));
				break;
			case SQLITE_BLOB: {
				const void *p = sqlite3_column_blob(st, c);
				cs_csv_empty(&w);
				hex(&w.buf, p, sqlite3_column_bytes(st, c));
				break;
			}
			default:
				cs_csv_empty(&w);
			}
		}
		if (over)
			break;
		cs_csv_end_row(&w);
		rows++;
		if (w.rc)
			break;
	}
	if (over) {
		cs_buf_free(&w.buf); /* what is buffered is not sent */
		return -EFBIG;
	}
	int out = cs_csv_finish(&w);
	if (out)
		return out;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	return rows;
}

int64_t cs_sqlout_json(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		       uint64_t max_rows, uint64_t max_bytes, int *truncated)
{
	budget bg = {sink, ctx, 0, max_bytes};
	int over = 0;
	cs_buf b = CS_BUF_INIT;
	int ncol = sqlite3_column_count(st);
	int64_t rows = 0;
	int rc, out = 0;
	if (truncated)
		*truncated = 0;
	cs_buf_put_u8(&b, '[');
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (max_rows && (uint64_t)rows == max_rows) {
			if (truncated)
				*truncated = 1;
			break;
		}
		if (rows)
			cs_buf_put_u8(&b, ',');
		cs_buf_put_u8(&b, '{');
		int first = 1;
		for (int c = 0; c < ncol && !over; c++) {
			if ((over = over_budget(&bg, b.len, st, c)))
				break;
			cs_json_key(&b, &first, sqlite3_column_name(st, c));
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_INTEGER:
				cs_json_i64(&b, sqlite3_column_int64(st, c));
				break;
			case SQLITE_FLOAT:
				cs_json_f64(&b, sqlite3_column_double(st, c));
				break;
			case SQLITE_TEXT:
				cs_json_str(&b, (const char *)sqlite3_column_text(st, c));
				break;
			case SQLITE_BLOB:
				cs_buf_put_u8(&b, '"');
				hex(&b, sqlite3_column_blob(st, c), sqlite3_column_bytes(st, c));
				cs_buf_put_u8(&b, '"');
				break;
			default:
				cs_json_raw(&b, "null");
			}
		}
		if (over)
			break;
		cs_buf_put_u8(&b, '}');
		rows++;
		if (b.len >= (64u << 10)) {
			out = counted_sink(&bg, b.data, b.len);
			b.len = 0;
			if (out)
				break;
		}
	}
	if (over) {
		cs_buf_free(&b);
		return -EFBIG;
	}
	cs_json_raw(&b, "]\n");
	if (!out)
		out = counted_sink(&bg, b.data, b.len);
	cs_buf_free(&b);
	if (out)
		return out;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	return rows;
}
