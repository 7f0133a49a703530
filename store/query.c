/* query.c - a user's read-only statement in a sandbox; see query.h. */
#include "query.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "csv.h"
#include "json.h"
#include "store_int.h"

/* The most arguments a sandboxed printf() takes (SQLite's own default
 * limit on a function's arguments is 127). */
#define AUX_ARGS 127

struct cs_query {
	cs_store *s;
	sqlite3_stmt *st;
	cs_query_opts o;
	int ncol;
	uint64_t handed; /* bytes of earlier pieces */
	int64_t rows;
	int started, done, truncated;
	int err;         /* the last failure's negative errno */
	/* the sandbox */
	char why[256];
	uint64_t deadline_ms, next_check_ms;
	int timed_out, gone;
};

/* printf() and format() of a sandboxed connection: SQLite's own, run on a
 * private connection once the arguments are checked. Owned by the two
 * functions (freed when the second is replaced or the connection closes). */
typedef struct printf_box {
	int refs;
	int value_cap; /* the longest value the connection may make */
	sqlite3 *aux;
	sqlite3_stmt *st[2][AUX_ARGS + 1]; /* [format][argc] */
} printf_box;

static void box_unref(void *p)
{
	printf_box *b = p;
	if (!b || --b->refs)
		return;
	for (int f = 0; f < 2; f++)
		for (int i = 0; i <= AUX_ARGS; i++)
			sqlite3_finalize(b->st[f][i]);
	sqlite3_close(b->aux);
	free(b);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int authorize(void *ctx, int action, const char *a, const char *b, const char *db,
		     const char *trigger)
{
	cs_query *q = ctx;
	(void)db, (void)trigger;
	static const char *const pragmas[] = {"table_info", "table_xinfo", "index_list",
					      "index_info", "index_xinfo", "foreign_key_list",
					      "user_version", "application_id", "page_count",
					      "page_size", "schema_version", "database_list",
					      "collation_list", "function_list", "module_list",
					      "pragma_list"};
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_UPDATE:
		/* SQLite itself checks these when the series table is declared;
		 * no statement of the user's can write on a read-only
		 * connection anyway. */
		if (a && !strcmp(a, "sqlite_master"))
			return SQLITE_OK;
		snprintf(q->why, sizeof q->why, "only reading is allowed (UPDATE of %s)", a ? a : "?");
		return SQLITE_DENY;
	case SQLITE_FUNCTION:
		if (b && !strcasecmp(b, "load_extension")) {
			snprintf(q->why, sizeof q->why, "load_extension() is not allowed");
			return SQLITE_DENY;
		}
		/* fts3_tokenizer() hands out (and takes) libsqlite3 pointers. */
		if (b && !strcasecmp(b, "fts3_tokenizer")) {
			snprintf(q->why, sizeof q->why, "fts3_tokenizer() is not allowed");
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		for (size_t i = 0; a && i < sizeof pragmas / sizeof *pragmas; i++)
			if (!strcasecmp(a, pragmas[i]) &&
			    (!b || !strcmp(pragmas[i], "table_info") ||
			     !strncmp(pragmas[i], "index_", 6) || !strcmp(pragmas[i], "table_xinfo") ||
			     !strcmp(pragmas[i], "foreign_key_list")))
				return SQLITE_OK;
		snprintf(q->why, sizeof q->why, "PRAGMA %s%s%s is not allowed (read-only pragmas only)",
			 a ? a : "", b ? " = " : "", b ? b : "");
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		snprintf(q->why, sizeof q->why, "ATTACH and DETACH are not allowed");
		return SQLITE_DENY;
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
		snprintf(q->why, sizeof q->why, "transactions are not allowed");
		return SQLITE_DENY;
	default:
		snprintf(q->why, sizeof q->why,
			 "only reading is allowed (this statement would change the database)");
		return SQLITE_DENY;
	}
}

static int progress(void *ctx)
{
	cs_query *q = ctx;
	uint64_t now = mono_ms();
	if (q->deadline_ms && now >= q->deadline_ms) {
		q->timed_out = 1;
		return 1;
	}
	if (q->o.gone && now >= q->next_check_ms) {
		q->next_check_ms = now + 50;
		if (q->o.gone(q->o.gone_ctx)) {
			q->gone = 1;
			return 1;
		}
	}
	return 0;
}

/* What the widths and precisions of a printf() format add up to, '*'
 * read from the arguments it takes (args[0] is the format): every
 * conversion takes one argument, but %% and %n take none. */
static long long widths(const unsigned char *f, int argc, sqlite3_value **args)
{
	long long total = 0;
	int next = 1; /* the argument the next conversion takes */
	for (const unsigned char *c = f; c && *c; c++) {
		if (*c != '%')
			continue;
		c++;
		while (*c && strchr("-+ 0#,!", *c))
			c++;
		long long most = 0;
		for (int part = 0; part < 2 && *c; part++) {
			long long v = 0;
			if (*c == '*') {
				v = next < argc ? sqlite3_value_int64(args[next++]) : 0;
				v = v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
				c++;
			} else {
				while (*c >= '0' && *c <= '9' && v < 1000000000000LL)
					v = v * 10 + (*c++ - '0');
				while (*c >= '0' && *c <= '9')
					c++;
			}
			if (v > most)
				most = v;
			if (part == 0 && *c == '.')
				c++;
			else
				break;
		}
		while (*c == 'l')
			c++;
		if (!*c)
			break;
		if (*c != '%' && *c != 'n')
			next++; /* the conversion's own argument */
		total = total > INT64_MAX - most ? INT64_MAX : total + most;
	}
	return total;
}

/* printf() and format() in the sandbox. One call builds its whole value
 * before the progress handler can run again (printf('%.*c', 2e9, 'x') ran
 * 28 s past every deadline), so a width or precision longer than any
 * value may be is refused; the rest goes to SQLite's own function on a
 * private in-memory connection: the same answers. */
static void run_printf(sqlite3_context *ctx, int argc, sqlite3_value **args, int format)
{
	printf_box *q = sqlite3_user_data(ctx);
	const char *fn = format ? "format" : "printf";
	if (argc < 1 || sqlite3_value_type(args[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	char msg[200];
	long long w = widths(sqlite3_value_text(args[0]), argc, args);
	if (w > q->value_cap) {
		snprintf(msg, sizeof msg, "%s(): widths and precisions of %lld in all are over the %d "
			 "bytes one value may take here", fn, w, q->value_cap);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	if (argc > AUX_ARGS) {
		snprintf(msg, sizeof msg, "%s(): more than %d arguments", fn, AUX_ARGS);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	if (!q->aux) {
		if (sqlite3_open_v2(":memory:", &q->aux, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY,
				    NULL) != SQLITE_OK) {
			sqlite3_close(q->aux);
			q->aux = NULL;
			sqlite3_result_error_nomem(ctx);
			return;
		}
		sqlite3_limit(q->aux, SQLITE_LIMIT_LENGTH, q->value_cap);
	}
	sqlite3_stmt **st = &q->st[format][argc];
	if (!*st) {
		char sql[1200];
		int n = snprintf(sql, sizeof sql, "SELECT %s(?1", fn);
		for (int i = 2; i <= argc; i++)
			n += snprintf(sql + n, sizeof sql - (size_t)n, ",?%d", i);
		snprintf(sql + n, sizeof sql - (size_t)n, ")");
		if (sqlite3_prepare_v2(q->aux, sql, -1, st, NULL) != SQLITE_OK) {
			sqlite3_result_error(ctx, sqlite3_errmsg(q->aux), -1);
			return;
		}
	}
	for (int i = 0; i < argc; i++)
		sqlite3_bind_value(*st, i + 1, args[i]);
	if (sqlite3_step(*st) == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(*st, 0));
	else if (sqlite3_errcode(q->aux) == SQLITE_TOOBIG)
		sqlite3_result_error_toobig(ctx);
	else
		sqlite3_result_error(ctx, sqlite3_errmsg(q->aux), -1);
	sqlite3_reset(*st);
	sqlite3_clear_bindings(*st);
}

static void sandbox_printf(sqlite3_context *ctx, int argc, sqlite3_value **args)
{
	run_printf(ctx, argc, args, 0);
}

static void sandbox_format(sqlite3_context *ctx, int argc, sqlite3_value **args)
{
	run_printf(ctx, argc, args, 1);
}

static cs_query *refuse(cs_query *q, cs_query_fail f, cs_query_fail *fail, char *why,
			size_t whylen, const char *msg)
{
	*fail = f;
	snprintf(why, whylen, "%s", msg);
	cs_query_close(q);
	return NULL;
}

cs_query *cs_query_open(cs_store *s, const char *sql, const cs_query_opts *o,
			cs_query_fail *fail, char *why, size_t whylen)
{
	cs_query *q = calloc(1, sizeof *q);
	if (!q) {
		*fail = CS_QUERY_NOMEM;
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	q->s = s;
	q->o = *o;
	if (o->timeout_ms)
		q->deadline_ms = mono_ms() + o->timeout_ms;
	sqlite3 *db = cs_store_db(s);
	if (!o->trusted)
		sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	if (o->max_sql)
		sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, o->max_sql);
	/* No single string or blob bigger than the whole answer may be made
	 * (zeroblob(1e9) was built, then hex-formatted, then refused). */
	if (o->max_bytes) {
		uint64_t maxlen = o->max_bytes / 2 + 1;
		sqlite3_limit(db, SQLITE_LIMIT_LENGTH, maxlen > 1000000000u ? 1000000000 : (int)maxlen);
	}
	if (!o->trusted) {
		/* Sorts, groups and temporary tables spill to files past 16 MiB
		 * of cache, not to memory: ORDER BY random() over zeroblobs
		 * grew the daemon 1.1 GB in 4 s. */
		sqlite3_exec(db, "PRAGMA temp_store = FILE; PRAGMA cache_size = -16384", NULL, NULL,
			     NULL);
		sqlite3_set_authorizer(db, authorize, q);
		/* from here on, printf() and format() on this connection are the
		 * checked ones (they stay so until it closes) */
		printf_box *b = calloc(1, sizeof *b);
		if (!b)
			return refuse(q, CS_QUERY_NOMEM, fail, why, whylen, "out of memory");
		b->refs = 2;
		b->value_cap = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
		if (sqlite3_create_function_v2(db, "printf", -1, SQLITE_UTF8, b, sandbox_printf, NULL,
					       NULL, box_unref) != SQLITE_OK)
			box_unref(b);
		if (sqlite3_create_function_v2(db, "format", -1, SQLITE_UTF8, b, sandbox_format, NULL,
					       NULL, box_unref) != SQLITE_OK)
			box_unref(b);
	}
	if (o->timeout_ms || o->gone)
		sqlite3_progress_handler(db, 1000, progress, q);
	const char *tail = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q->st, &tail) != SQLITE_OK) {
		char msg[300];
		snprintf(msg, sizeof msg, "%s", q->why[0] ? q->why : sqlite3_errmsg(db));
		return refuse(q, sqlite3_errcode(db) == SQLITE_NOMEM ? CS_QUERY_NOMEM
				 : sqlite3_errcode(db) == SQLITE_TOOBIG ? CS_QUERY_TOO_BIG
				 : CS_QUERY_REFUSED, fail, why, whylen, msg);
	}
	if (!q->st)
		return refuse(q, CS_QUERY_USAGE, fail, why, whylen, "the SQL text holds no statement");
	if (tail && tail[strspn(tail, " \t\r\n;")]) {
		char msg[100];
		snprintf(msg, sizeof msg, "one statement at a time (extra text: '%.40s')",
			 tail + strspn(tail, " \t\r\n;"));
		return refuse(q, CS_QUERY_USAGE, fail, why, whylen, msg);
	}
	if (!sqlite3_stmt_readonly(q->st))
		return refuse(q, CS_QUERY_REFUSED, fail, why, whylen,
			      "only read-only statements are allowed");
	q->ncol = sqlite3_column_count(q->st);
	*fail = CS_QUERY_OK;
	return q;
}

void cs_query_close(cs_query *q)
{
	if (!q)
		return;
	sqlite3_finalize(q->st);
	sqlite3 *db = cs_store_db(q->s);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_set_authorizer(db, NULL, NULL);
	free(q);
}

int64_t cs_query_rows(const cs_query *q) { return q->rows; }

cs_query_fail cs_query_failure(const cs_query *q, char *why, size_t whylen)
{
	sqlite3 *db = cs_store_db(q->s);
	if (q->gone) {
		snprintf(why, whylen, "the asker has gone");
		return CS_QUERY_GONE;
	}
	if (q->timed_out) {
		snprintf(why, whylen, "query ran past the %llu ms limit",
			 (unsigned long long)q->o.timeout_ms);
		return CS_QUERY_TIMEOUT;
	}
	if (q->err == -ENOMEM || sqlite3_errcode(db) == SQLITE_NOMEM) {
		snprintf(why, whylen, "out of memory for this result; narrow the query");
		return CS_QUERY_NOMEM;
	}
	if (q->err == -EFBIG || sqlite3_errcode(db) == SQLITE_TOOBIG) {
		snprintf(why, whylen, "result exceeds the %llu-byte limit; narrow the query",
			 (unsigned long long)q->o.max_bytes);
		return CS_QUERY_TOO_BIG;
	}
	if (q->err == -E2BIG) {
		snprintf(why, whylen, "result exceeds the %llu-row limit; add a LIMIT or narrow it",
			 (unsigned long long)q->o.max_rows);
		return CS_QUERY_TOO_BIG;
	}
	snprintf(why, whylen, "%s", q->why[0] ? q->why : sqlite3_errmsg(db));
	return CS_QUERY_FAILED;
}

/* The most bytes the current row can take once formatted (hex doubles a
 * blob, escaping can make text six times longer in JSON and twice in CSV,
 * numbers take 30): a row
 * that cannot fit what is left of max_bytes is refused before any of it
 * is formatted (two zeroblob(1e9) would otherwise be 4 GB of hex first). */
static int row_over_budget(const cs_query *o, size_t buffered)
{
	if (!o->o.max_bytes)
		return 0;
	uint64_t need = 2;
	for (int c = 0; c < o->ncol; c++) {
		uint64_t n = (uint64_t)sqlite3_column_bytes(o->st, c);
		int t = sqlite3_column_type(o->st, c);
		/* text at its most escaped: \u00XX per byte in JSON, every
		 * quote doubled in CSV */
		uint64_t text = o->o.json ? 6 * n : 2 * n;
		need += (t == SQLITE_BLOB ? 2 * n : t == SQLITE_TEXT ? text : 30) + 4;
		if (o->o.json) /* "name": */
			need += 4 + strlen(sqlite3_column_name(o->st, c));
	}
	return o->handed + buffered + need > o->o.max_bytes;
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

static void csv_row(cs_query *o, cs_csv *w)
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

static void json_row(cs_query *o, cs_buf *b)
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

int cs_query_next(cs_query *o, cs_buf *out, size_t want)
{
	if (o->err)
		return o->err;
	if (o->done)
		return 0;
	size_t start = out->len;
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, out);
	if (!o->started) {
		o->started = 1;
		if (o->o.json) {
			cs_buf_put_u8(out, '[');
		} else {
			for (int c = 0; c < o->ncol; c++)
				cs_csv_str(&w, sqlite3_column_name(o->st, c));
			cs_csv_end_row(&w);
		}
	}
	int rc = SQLITE_ROW, err = 0;
	while (out->len + w.buf.len - start < want && (rc = sqlite3_step(o->st)) == SQLITE_ROW) {
		if (o->o.max_rows && (uint64_t)o->rows == o->o.max_rows) {
			o->truncated = 1;
			err = -E2BIG;
			break;
		}
		if (row_over_budget(o, out->len + w.buf.len - start)) {
			err = -EFBIG;
			break;
		}
		if (o->o.json)
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
		if (o->o.json)
			cs_json_raw(out, "]\n");
	}
	o->handed += out->len - start;
	if (err)
		return o->err = err;
	return o->done ? 0 : 1;
}

