/* sqlout.c - statement rows to CSV or JSON; see sqlout.h. */
#include "sqlout.h"

#include <errno.h>
#include <stdio.h>

#include "json.h"

static void hex(cs_buf *b, const uint8_t *p, int n)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < n; i++) {
		cs_buf_put_u8(b, (uint8_t)digits[p[i] >> 4]);
		cs_buf_put_u8(b, (uint8_t)digits[p[i] & 15]);
	}
}

int64_t cs_sqlout_csv(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		      uint64_t max_rows, int *truncated)
{
	cs_csv w;
	cs_csv_init(&w, sink, ctx);
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
		for (int c = 0; c < ncol; c++) {
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
		cs_csv_end_row(&w);
		rows++;
		if (w.rc)
			break;
	}
	int out = cs_csv_finish(&w);
	if (out)
		return out;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	return rows;
}

int64_t cs_sqlout_json(sqlite3_stmt *st, cs_csv_sink_fn sink, void *ctx,
		       uint64_t max_rows, int *truncated)
{
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
		for (int c = 0; c < ncol; c++) {
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
		cs_buf_put_u8(&b, '}');
		rows++;
		if (b.len >= (64u << 10)) {
			out = sink(ctx, b.data, b.len);
			b.len = 0;
			if (out)
				break;
		}
	}
	cs_json_raw(&b, "]\n");
	if (!out)
		out = sink(ctx, b.data, b.len);
	cs_buf_free(&b);
	if (out)
		return out;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	return rows;
}
