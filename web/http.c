/*
 * http.c - HTTP handlers; see http.h and docs/http-api.md.
 */
#define _GNU_SOURCE
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "corr_out.h"
#include "wire.h"
#include "report.h"
#include "json.h"
#include "log.h"
#include "corr_job.h"
#include "phases.h"
#include "series_csv.h"
#include "trace.h"
#include "sqlout.h"
#include "prom.h"
#include "reader.h"
#include "follow.h"
#include "plot.h"
#include "runs_json.h"
#include "store.h"
#include "ui.h"

#define MAX_BODY (1u << 20)
#define STREAM_BLOCK (64u << 10)
#define READER_NICE 10

/* One open connection, for the guard against slow clients: how long it
 * has been waiting for a request's headers, and from where. */
typedef struct conn_info {
	struct conn_info *next, *prev;
	int fd;
	uint64_t since_ms;   /* accepted, or the last request ended */
	int waiting;         /* 1 while the next request's headers are awaited */
	struct sockaddr_storage addr;
} conn_info;

struct cs_http {
	struct MHD_Daemon *mhd;
	char db[512];
	char token[256];
	cs_http_opts o;
	unsigned port;
	sem_t busy; /* data work at once: more requests wait their turn */
	atomic_uint_fast64_t requests, errors, bytes, streams_open, slow_closed;
	/* the slow-client guard (guard_*) */
	pthread_mutex_t gmu;
	pthread_cond_t gcv;
	conn_info *conns;
	unsigned nconns;
	int gstop;
	pthread_t guard;
};

/* Per-request state (POST bodies). */
typedef struct req {
	cs_buf body;
	int too_big;
	char *owned[4]; /* decoded form fields (post_arg) */
	unsigned nowned;
} req;

/* ---- responses ---- */

static enum MHD_Result queue(struct MHD_Connection *c, cs_http *h, unsigned status,
			     const char *type, cs_buf *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(body->len, body->data,
								 MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	atomic_fetch_add(&h->bytes, body->len);
	if (status >= 400)
		atomic_fetch_add(&h->errors, 1);
	return ret;
}

static enum MHD_Result error(struct MHD_Connection *c, cs_http *h, unsigned status,
			     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result error(struct MHD_Connection *c, cs_http *h, unsigned status,
			     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cs_buf b = CS_BUF_INIT;
	cs_json_raw(&b, "{\"error\":");
	cs_json_str(&b, msg);
	cs_json_raw(&b, "}\n");
	enum MHD_Result r = queue(c, h, status, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

static enum MHD_Result json_text(struct MHD_Connection *c, cs_http *h, const char *text)
{
	cs_buf b = CS_BUF_INIT;
	cs_json_sql(&b, text);
	cs_json_raw(&b, "\n");
	enum MHD_Result r = queue(c, h, 200, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* Parses an optional non-negative integer argument; 0 ok, -1 bad. */
static int arg_u64(struct MHD_Connection *c, const char *name, uint64_t *v, int *have)
{
	const char *s = arg(c, name);
	*have = s && *s;
	if (!*have)
		return 0;
	char *end;
	errno = 0;
	if (*s == '-' || *s == '+')
		return -1;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static cs_store *open_store(cs_http *h, char *err, size_t errlen)
{
	return cs_store_open(h->db, CS_OPEN_READONLY, err, errlen);
}

/* Runs a query returning one JSON text cell. */
static enum MHD_Result json_query(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *sql, int nbind, const char *const *binds,
				  int not_found_if_null)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = cs_store_db(s);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return error(c, h, 500, "%s", sqlite3_errmsg(db));
	for (int i = 0; i < nbind; i++)
		if (binds[i])
			sqlite3_bind_text(st, i + 1, binds[i], -1, SQLITE_TRANSIENT);
	enum MHD_Result r;
	if (sqlite3_step(st) != SQLITE_ROW)
		r = error(c, h, 500, "%s", sqlite3_errmsg(db));
	else if (sqlite3_column_type(st, 0) == SQLITE_NULL && not_found_if_null)
		r = error(c, h, 404, "no such run");
	else
		r = json_text(c, h, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

#define MAX_NAME_GLOB 4096
#define CORR_MAX_BINS 10000000u      /* per side: 80 MB of doubles */
#define CORR_MAX_WORK 200000000u     /* lag steps x bins */

/* ---- handlers ---- */

static enum MHD_Result get_runs(struct MHD_Connection *c, cs_http *h, cs_store *s)
{
	const char *kind = arg(c, "kind"), *name = arg(c, "name");
	uint64_t since = 0;
	int have_since;
	if (arg_u64(c, "since", &since, &have_since))
		return error(c, h, 400, "since: expected a non-negative integer (ns since the epoch)");
	if (kind && strcmp(kind, "hw") && strcmp(kind, "sim"))
		return error(c, h, 400, "kind: expected hw or sim");
	/* SQLite refuses GLOB patterns over 50000 bytes as an error (a 500);
	 * no run name is anywhere near that long. */
	if (name && strlen(name) > MAX_NAME_GLOB)
		return error(c, h, 400, "name: a name or glob of at most %d bytes", MAX_NAME_GLOB);
	char since_s[32];
	snprintf(since_s, sizeof since_s, "%llu", (unsigned long long)since);
	const char *binds[3] = {kind, name, have_since ? since_s : NULL};
	return json_query(c, h, s,
			  "SELECT json_group_array(json_object(" CS_RUN_JSON_FIELDS "))"
			  " FROM (SELECT * FROM runs WHERE (?1 IS NULL OR kind = ?1)"
			  " AND (?2 IS NULL OR name = ?2 OR name GLOB ?2)"
			  " AND (?3 IS NULL OR start_ns >= CAST(?3 AS INTEGER)) ORDER BY id) r",
			  3, binds, 0);
}

static const char metrics_sql[] =
	"SELECT json_group_array(json_object('id', id, 'name', name, 'unit', unit,"
	" 'kind', kind, 'cumulative', json(CASE cumulative WHEN 1 THEN 'true' ELSE 'false' END)))"
	" FROM (SELECT * FROM metrics WHERE run = ?1 ORDER BY id)";

static enum MHD_Result get_run(struct MHD_Connection *c, cs_http *h, cs_store *s, int64_t run,
			       int metrics_only)
{
	char id[32];
	snprintf(id, sizeof id, "%lld", (long long)run);
	const char *binds[1] = {id};
	if (metrics_only)
		return json_query(c, h, s, metrics_sql, 1, binds, 0);
	/* the metrics its page opens on (plot.h), a JSON array */
	char defaults[1024];
	cs_buf dj = CS_BUF_INIT;
	cs_plot_defaults(s, run, defaults, sizeof defaults);
	cs_json_raw(&dj, "[");
	char *save = NULL;
	int first = 1;
	for (char *tok = strtok_r(defaults, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		cs_json_raw(&dj, first ? "" : ",");
		cs_json_str(&dj, tok);
		first = 0;
	}
	cs_json_raw(&dj, "]");
	cs_buf_put_u8(&dj, 0);
	char *dtext = (char *)dj.data;
	const char *binds2[2] = {id, dtext ? dtext : "[]"};
	enum MHD_Result res = json_query(
		c, h, s,
		"SELECT json_object(" CS_RUN_JSON_FIELDS ","
		" 'default_metrics', json(?2),"
		" 'device_list', (SELECT json_group_array(json_object('index', idx, 'name', name,"
		"   'chip', chip, 'uuid', uuid, 'sm_count', sm_count, 'clock_hz', clock_hz,"
		"   'mem_clock_hz', mem_clock_hz)) FROM devices WHERE run = r.id),"
		" 'metric_list', (SELECT json_group_array(json_object('id', id, 'name', name,"
		"   'unit', unit, 'kind', kind)) FROM (SELECT * FROM metrics WHERE run = r.id"
		"   ORDER BY id)),"
		" 'range_summary', (SELECT json_group_array(json_object('kind', kind, 'count', n,"
		"   't0', t0, 't1', t1, 'names', names)) FROM (SELECT kind, count(*) AS n,"
		"   min(t0) AS t0, max(t1) AS t1, count(DISTINCT name) AS names FROM ranges"
		"   WHERE run = r.id GROUP BY kind)))"
		" FROM runs r WHERE r.id = CAST(?1 AS INTEGER)",
		2, binds2, 1);
	cs_buf_free(&dj);
	return res;
}

/* A streamed response: a producer that appends pieces to pending. */
typedef struct sandbox sandbox;

typedef struct stream {
	cs_http *h;
	cs_store *s;
	cs_series_csv *series; /* series.csv */
	cs_follow *follow;     /* follow: events as the run is committed */
	int followed;          /* counted by opts.follow */
	unsigned poll_ms, heartbeat_ms;
	sqlite3_stmt *st;      /* ranges.csv, or the query's statement */
	cs_sqlout *q;          /* a query answer past STREAM_AFTER */
	sandbox *sb;           /* its limits (progress handler, authorizer) */
	char why[300];         /* what failed, for the error line */
	int header_done;
	cs_buf pending;
	size_t sent;
	int done;
	int failed; /* the error line is in pending: end with an error after it */
} stream;

static int query_fill(stream *s);

/* Refills s->pending; returns 0 or a negative errno. */
static int stream_fill(stream *s)
{
	if (s->q)
		return query_fill(s);
	if (s->series) {
		int rc = cs_series_csv_next(s->series, &s->pending);
		if (rc == 0)
			s->done = 1;
		return rc < 0 ? rc : 0;
	}
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, &s->pending);
	int ncol = sqlite3_column_count(s->st);
	if (!s->header_done) {
		for (int i = 0; i < ncol; i++)
			cs_csv_str(&w, sqlite3_column_name(s->st, i));
		cs_csv_end_row(&w);
		s->header_done = 1;
	}
	int rc = SQLITE_ROW;
	for (int rows = 0; rows < 4096 && (rc = sqlite3_step(s->st)) == SQLITE_ROW; rows++) {
		for (int i = 0; i < ncol; i++) {
			if (sqlite3_column_type(s->st, i) == SQLITE_NULL)
				cs_csv_empty(&w);
			else if (sqlite3_column_type(s->st, i) == SQLITE_INTEGER)
				cs_csv_i64(&w, sqlite3_column_int64(s->st, i));
			else
				cs_csv_str(&w, (const char *)sqlite3_column_text(s->st, i));
		}
		cs_csv_end_row(&w);
	}
	if (rc == SQLITE_DONE)
		s->done = 1;
	int out = cs_csv_finish(&w);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? out : -EIO;
}

/* follow: one look at the store at a time (it takes a busy slot only for
 * the look), waiting between looks without one; a heartbeat comment when
 * nothing came for heartbeat_ms, so that proxies and clients see the
 * stream alive and a gone client is noticed. */
static void follow_fill(stream *s)
{
	unsigned waited = 0;
	for (;;) {
		char err[600] = "";
		sem_wait(&s->h->busy);
		int rc = cs_follow_next(s->follow, &s->pending, err, sizeof err);
		sem_post(&s->h->busy);
		if (rc < 0) {
			cs_buf_printf(&s->pending, "event: error\ndata: %s\n\n", err);
			s->done = 1;
			return;
		}
		if (rc == 0)
			s->done = 1;
		if (rc != 2)
			return;
		if (waited >= s->heartbeat_ms) {
			cs_buf_printf(&s->pending, ": heartbeat\n\n");
			return;
		}
		struct timespec ts = {0, (long)s->poll_ms * 1000000L};
		nanosleep(&ts, NULL);
		waited += s->poll_ms;
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	stream *s = cls;
	(void)pos;
	while (s->follow && s->sent == s->pending.len) {
		s->pending.len = 0;
		s->sent = 0;
		if (s->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		follow_fill(s);
	}
	while (s->sent == s->pending.len) {
		s->pending.len = 0;
		s->sent = 0;
		if (s->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->failed)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		sem_wait(&s->h->busy);
		size_t before = s->pending.len;
		int rc = stream_fill(s);
		if (rc) {
			/* The 200 is out: what went wrong goes in a last line
			 * (docs/http-api.md), then the transfer ends unfinished so
			 * that clients see an error too (curl: exit 18). */
			const char *why = s->why[0] ? s->why
					  : s->series ? cs_store_errmsg(s->s)
						      : sqlite3_errmsg(cs_store_db(s->s));
			char line[600];
			int n = snprintf(line, sizeof line, "%s# error: %s\r\n",
					 s->q && s->pending.len && s->pending.data[s->pending.len - 1] != '\n'
						 ? "\r\n" : "",
					 why && *why ? why : strerror(-rc));
			if (!s->q) /* a query's pieces are whole rows: keep them */
				s->pending.len = before;
			cs_buf_append(&s->pending, line, n > 0 && (size_t)n < sizeof line
								? (size_t)n : sizeof line - 1);
			s->failed = 1;
		}
		sem_post(&s->h->busy);
	}
	size_t n = s->pending.len - s->sent;
	if (n > max)
		n = max;
	memcpy(buf, s->pending.data + s->sent, n);
	s->sent += n;
	atomic_fetch_add(&s->h->bytes, n);
	return (ssize_t)n;
}

static void stream_free(stream *s)
{
	if (s->followed && s->h->o.follow)
		s->h->o.follow(s->h->o.metrics_ctx, -1);
	cs_series_csv_close(s->series);
	cs_follow_close(s->follow);
	cs_sqlout_close(s->q);
	sqlite3_finalize(s->st);
	cs_store_close(s->s);
	free(s->sb); /* after the connection that used it as a callback's context */
	cs_buf_free(&s->pending);
	free(s);
}

/* libmicrohttpd is done with a streamed response. */
static void stream_done(void *cls)
{
	stream *s = cls;
	atomic_fetch_sub(&s->h->streams_open, 1);
	stream_free(s);
}

/* Hands s (and its store) to MHD as a streamed response: text/csv unless
 * ctype says otherwise. */
static enum MHD_Result queue_stream_as(struct MHD_Connection *c, cs_http *h, stream *s,
				       const char *filename, const char *ctype)
{
	s->h = h;
	atomic_fetch_add(&h->streams_open, 1);
	struct MHD_Response *r =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, s,
						  stream_done);
	if (!r) {
		stream_done(s);
		return MHD_NO;
	}
	char disp[256];
	snprintf(disp, sizeof disp, "inline; filename=\"%s\"", filename);
	MHD_add_response_header(r, "Content-Type",
				ctype ? ctype : "text/csv; charset=utf-8; header=present");
	MHD_add_response_header(r, "Content-Disposition", disp);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	enum MHD_Result ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result queue_stream(struct MHD_Connection *c, cs_http *h, stream *s,
				    const char *filename)
{
	return queue_stream_as(c, h, s, filename, NULL);
}

/* error() for handlers that own s: closes it first. */
#define owned_error(c, h, s, ...) (cs_store_close(s), error(c, h, __VA_ARGS__))

/* get_series and get_ranges take ownership of s: the stream closes it. */
static enum MHD_Result get_series(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *run)
{
	cs_series_req q = {.run = run, .to = UINT64_MAX};
	uint64_t dev = 0, nb = 0;
	int have_b;
	if (arg_u64(c, "device", &dev, &q.have_device) || dev > UINT32_MAX)
		return owned_error(c, h, s, 400, "device: expected a device index");
	if (arg_u64(c, "from", &q.from, &q.have_from))
		return owned_error(c, h, s, 400, "from: expected a non-negative integer time");
	if (arg_u64(c, "to", &q.to, &q.have_to))
		return owned_error(c, h, s, 400, "to: expected a non-negative integer time");
	if (arg_u64(c, "buckets", &nb, &have_b) || (have_b && (nb < 1 || nb > 1000000)))
		return owned_error(c, h, s, 400, "buckets: expected an integer 1..1000000");
	if (arg_u64(c, "since", &q.since, &q.have_since))
		return owned_error(c, h, s, 400, "since: expected a non-negative integer sample seq");
	q.device = (uint32_t)dev;
	q.buckets = (uint32_t)nb;
	q.metrics = arg(c, "metric");
	if (q.metrics && !*q.metrics)
		q.metrics = NULL;
	q.exprs = arg(c, "expr");
	if (q.exprs && !*q.exprs)
		q.exprs = NULL;
	q.range = arg(c, "range");
	if (q.range && !*q.range)
		return owned_error(c, h, s, 400, "range: empty name");
	int status;
	char err[1200];
	cs_series_csv *x = cs_series_csv_open(s, &q, &status, err, sizeof err);
	if (!x)
		return owned_error(c, h, s, (unsigned)status, "%s", err);
	stream *st = calloc(1, sizeof *st);
	if (!st) {
		cs_series_csv_close(x);
		return owned_error(c, h, s, 500, "out of memory");
	}
	st->s = s;
	st->series = x;
	return queue_stream(c, h, st, "series.csv");
}

/* ranges.csv: from/to keep the ranges that overlap [from, to) (instants
 * inside it included); kind a
 * comma-separated list of kinds; limit caps the rows (the longest first
 * when capped, so a zoomed-out view keeps what is visible). */
/* SQL demangle(name): a kernel name demangled (as it is when it is not
 * mangled), for ranges.csv's last column. */
static void sql_demangle(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	if (!name) {
		sqlite3_result_null(ctx);
		return;
	}
	char out[1024];
	sqlite3_result_text(ctx, cs_cjob_demangle(name, out, sizeof out), -1, SQLITE_TRANSIENT);
}

static enum MHD_Result get_ranges(struct MHD_Connection *c, cs_http *h, cs_store *s, int64_t run)
{
	uint64_t from = 0, to = INT64_MAX, limit = 0;
	int have_from, have_to, have_limit;
	if (arg_u64(c, "from", &from, &have_from) || from > INT64_MAX)
		return owned_error(c, h, s, 400, "from: expected a non-negative integer time");
	if (arg_u64(c, "to", &to, &have_to) || to > INT64_MAX)
		return owned_error(c, h, s, 400, "to: expected a non-negative integer time");
	if (arg_u64(c, "limit", &limit, &have_limit) || (have_limit && (limit < 1 || limit > 10000000)))
		return owned_error(c, h, s, 400, "limit: expected an integer 1..10000000");
	if (have_from && have_to && to <= from)
		return owned_error(c, h, s, 400, "to: must be greater than from");
	const char *kind = arg(c, "kind");
	stream *st = calloc(1, sizeof *st);
	if (!st)
		return owned_error(c, h, s, 500, "out of memory");
	sqlite3_create_function(cs_store_db(s), "demangle", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				sql_demangle, NULL, NULL);
	if (sqlite3_prepare_v2(cs_store_db(s),
			       "SELECT kind, name, t0, t1, device, stream, correlation_id, pid, tid, bytes,"
			       " demangle(name) AS demangled"
			       " FROM (SELECT * FROM ranges WHERE run = ?1 AND t0 < ?3"
			       " AND (t1 > ?2 OR (t1 = t0 AND t0 >= ?2))"
			       " AND (?4 IS NULL OR instr(',' || ?4 || ',', ',' || kind || ',') > 0)"
			       " ORDER BY CASE WHEN ?5 IS NULL THEN 0 ELSE t0 - t1 END LIMIT coalesce(?5, -1))"
			       " ORDER BY t0, id",
			       -1, &st->st, NULL) != SQLITE_OK) {
		free(st);
		return owned_error(c, h, s, 500, "%s", sqlite3_errmsg(cs_store_db(s)));
	}
	sqlite3_bind_int64(st->st, 1, run);
	sqlite3_bind_int64(st->st, 2, (sqlite3_int64)from);
	sqlite3_bind_int64(st->st, 3, (sqlite3_int64)to);
	if (kind && *kind)
		sqlite3_bind_text(st->st, 4, kind, -1, SQLITE_TRANSIENT);
	if (have_limit)
		sqlite3_bind_int64(st->st, 5, (sqlite3_int64)limit);
	st->s = s;
	return queue_stream(c, h, st, "ranges.csv");
}

/* ---- the query sandbox ---- */

/* 1 when the client of c has gone (closed or reset its connection): work
 * for it can stop. Cheap: one poll() of the socket, no waiting. */
static int client_gone(void *ctx)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(ctx, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!i)
		return 0;
	struct pollfd pf = {i->connect_fd, POLLRDHUP, 0};
	return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

struct sandbox {
	char why[256];
	uint64_t deadline_ms;
	int timed_out;
	struct MHD_Connection *conn; /* checked for a client gone */
	uint64_t next_check_ms;
	int gone;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int authorize(void *ctx, int action, const char *a, const char *b, const char *db,
		     const char *trigger)
{
	sandbox *sb = ctx;
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
		snprintf(sb->why, sizeof sb->why, "only reading is allowed (UPDATE of %s)", a ? a : "?");
		return SQLITE_DENY;
	case SQLITE_FUNCTION:
		if (b && !strcasecmp(b, "load_extension")) {
			snprintf(sb->why, sizeof sb->why, "load_extension() is not allowed");
			return SQLITE_DENY;
		}
		/* fts3_tokenizer() hands out (and takes) libsqlite3 pointers. */
		if (b && !strcasecmp(b, "fts3_tokenizer")) {
			snprintf(sb->why, sizeof sb->why, "fts3_tokenizer() is not allowed");
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
		snprintf(sb->why, sizeof sb->why, "PRAGMA %s%s%s is not allowed (read-only pragmas only)",
			 a ? a : "", b ? " = " : "", b ? b : "");
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		snprintf(sb->why, sizeof sb->why, "ATTACH and DETACH are not allowed");
		return SQLITE_DENY;
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
		snprintf(sb->why, sizeof sb->why, "transactions are not allowed");
		return SQLITE_DENY;
	default:
		snprintf(sb->why, sizeof sb->why,
			 "only reading is allowed (this statement would change the database)");
		return SQLITE_DENY;
	}
}

static int progress(void *ctx)
{
	sandbox *sb = ctx;
	uint64_t now = mono_ms();
	if (now >= sb->deadline_ms) {
		sb->timed_out = 1;
		return 1;
	}
	if (sb->conn && now >= sb->next_check_ms) {
		sb->next_check_ms = now + 50;
		if (client_gone(sb->conn)) {
			sb->gone = 1;
			return 1;
		}
	}
	return 0;
}


/* The value of field name in an application/x-www-form-urlencoded body
 * (decoded in place: '+' is a space, %XX a byte), or NULL. What curl -d
 * 'sql=...' and HTML forms send. */
static const char *form_field(char *body, const char *name)
{
	size_t nl = strlen(name);
	for (char *f = body; f && *f; f = strchr(f, '&') ? strchr(f, '&') + 1 : NULL) {
		if (strncmp(f, name, nl) || f[nl] != '=')
			continue;
		char *v = f + nl + 1;
		char *end = strchr(v, '&');
		if (end)
			*end = 0;
		for (char *p = v; *p; p++)
			if (*p == '+')
				*p = ' ';
		MHD_http_unescape(v);
		return v;
	}
	return NULL;
}

/* A query answer is built in memory up to this size, and answered with
 * its real status (413, 504, 400) when anything fails; past it, the answer
 * is streamed a piece at a time in bounded memory, and a failure after the
 * 200 ends it with the '# error:' line (docs/http-api.md). */
#define STREAM_AFTER (1u << 20)

/* The query's limits as an error message for the streamed answer. */
static void query_why(stream *s, int rc)
{
	sandbox *sb = s->sb;
	cs_http *h = s->h;
	if (sb->timed_out)
		snprintf(s->why, sizeof s->why, "query ran past the %llu ms limit",
			 (unsigned long long)h->o.query_timeout_ms);
	else if (rc == -EFBIG || sqlite3_errcode(cs_store_db(s->s)) == SQLITE_TOOBIG)
		snprintf(s->why, sizeof s->why, "result exceeds the %llu-byte limit; narrow the query",
			 (unsigned long long)h->o.query_max_bytes);
	else if (rc == -E2BIG)
		snprintf(s->why, sizeof s->why, "result exceeds the %llu-row limit; add a LIMIT or "
			 "narrow it", (unsigned long long)h->o.query_max_rows);
	else
		snprintf(s->why, sizeof s->why, "%s",
			 sb->why[0] ? sb->why : sqlite3_errmsg(cs_store_db(s->s)));
}

static int query_fill(stream *s)
{
	int rc = cs_sqlout_next(s->q, &s->pending, STREAM_BLOCK);
	if (rc == 0)
		s->done = 1;
	if (rc < 0)
		query_why(s, rc);
	return rc < 0 ? rc : 0;
}

/* Takes ownership of s (the store). */
static enum MHD_Result do_query(struct MHD_Connection *c, cs_http *h, cs_store *s,
				const char *sql, const char *format)
{
	if (!sql || !*sql)
		return owned_error(c, h, s, 400, "sql: missing (GET ?sql=... or POST a body)");
	int json = 0;
	if (format && !strcmp(format, "json"))
		json = 1;
	else if (format && *format && strcmp(format, "csv"))
		return owned_error(c, h, s, 400, "format: expected csv or json");
	stream *x = calloc(1, sizeof *x);
	sandbox *sb = calloc(1, sizeof *sb);
	if (!x || !sb) {
		free(x);
		free(sb);
		return owned_error(c, h, s, 503, "out of memory");
	}
	*sb = (sandbox){"", mono_ms() + h->o.query_timeout_ms, 0, c, 0, 0};
	x->h = h;
	x->s = s;
	x->sb = sb;
	sqlite3 *db = cs_store_db(s);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, (int)MAX_BODY);
	/* No single string or blob bigger than the whole answer may be made
	 * (zeroblob(1e9) was built, then hex-formatted, then refused). */
	uint64_t maxlen = h->o.query_max_bytes / 2 + 1;
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, maxlen > 1000000000u ? 1000000000 : (int)maxlen);
	sqlite3_set_authorizer(db, authorize, sb);
	sqlite3_progress_handler(db, 1000, progress, sb);
	const char *tail = NULL;
	enum MHD_Result r;
	int rc = sqlite3_prepare_v2(db, sql, -1, &x->st, &tail);
	if (rc != SQLITE_OK) {
		r = error(c, h, 400, "%s", sb->why[0] ? sb->why : sqlite3_errmsg(db));
		goto out;
	}
	if (!x->st) {
		r = error(c, h, 400, "sql: holds no statement");
		goto out;
	}
	if (tail && tail[strspn(tail, " \t\r\n;")]) {
		r = error(c, h, 400, "sql: one statement at a time");
		goto out;
	}
	if (!sqlite3_stmt_readonly(x->st)) {
		r = error(c, h, 400, "only read-only statements are allowed");
		goto out;
	}
	x->q = cs_sqlout_open(x->st, json, h->o.query_max_rows, h->o.query_max_bytes);
	rc = x->q ? 1 : -ENOMEM;
	while (rc == 1 && x->pending.len < STREAM_AFTER)
		rc = cs_sqlout_next(x->q, &x->pending, STREAM_BLOCK);
	if (rc == 1) {
		/* more than STREAM_AFTER: the rest streams (the stream owns
		 * the store, the statement and the sandbox from here) */
		return queue_stream_as(c, h, x, json ? "query.json" : "query.csv",
				       json ? "application/json" : NULL);
	}
	if (sb->gone)
		r = MHD_NO; /* nobody to answer */
	else if (rc == -ENOMEM || sqlite3_errcode(db) == SQLITE_NOMEM)
		r = error(c, h, 503, "out of memory for this result; narrow the query");
	else if (rc < 0) {
		query_why(x, rc);
		r = error(c, h, sb->timed_out ? 504 : rc == -EFBIG || rc == -E2BIG ||
						   sqlite3_errcode(db) == SQLITE_TOOBIG ? 413 : 400,
			  "%s", x->why);
	} else {
		r = queue(c, h, 200, json ? "application/json" : "text/csv; charset=utf-8; header=present",
			  &x->pending);
	}
out:
	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_set_authorizer(db, NULL, NULL);
	stream_free(x);
	return r;
}

/* ---- routing ---- */

/* want == got in time that depends on want's length only. */
static int same_secret(const char *want, const char *got)
{
	size_t n = strlen(want), len = got ? strlen(got) : 0;
	unsigned char diff = (unsigned char)(len != n);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < len ? got[i] : 0) ^ want[i]);
	return diff == 0;
}

/* The token as "Authorization: Bearer TOKEN"; for GET and HEAD also as
 * the query parameter access_token, which the UI puts on what a browser
 * fetches without headers (its follow stream's EventSource, download
 * links). Never from a cookie: a browser would send that along with
 * other sites' requests too. */
static int token_ok(cs_http *h, struct MHD_Connection *c, int get)
{
	if (!h->token[0])
		return 1;
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!auth) {
		const char *q = get ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
								  "access_token")
				    : NULL;
		return q && same_secret(h->token, q);
	}
	char want[300];
	snprintf(want, sizeof want, "Bearer %s", h->token);
	return same_secret(want, auth);
}

/* GET / and GET /ui/NAME: the embedded UI (ui.h); uPlot from the build
 * tree, as the report reads it. */
static enum MHD_Result get_ui(struct MHD_Connection *c, cs_http *h, const char *name)
{
	int js = !strcmp(name, "uPlot.iife.min.js"), css = !strcmp(name, "uPlot.min.css");
	if (js || css) {
		char *j = NULL, *k = NULL, err[1100];
		if (cs_report_assets(&j, &k, err, sizeof err) < 0)
			return error(c, h, 503, "%s", err);
		cs_buf b = {.data = (uint8_t *)(js ? j : k), .len = strlen(js ? j : k)};
		enum MHD_Result r = queue(c, h, 200, js ? "text/javascript; charset=utf-8"
						  : "text/css; charset=utf-8", &b);
		free(j);
		free(k);
		return r;
	}
	const cs_ui_file *f = cs_ui_find(name);
	if (!f)
		return error(c, h, 404, "no such UI file: %s", name);
	cs_buf b = {.data = (uint8_t *)f->data, .len = f->len};
	return queue(c, h, 200, f->type, &b);
}

/* The correlate/report parameters into rq; NULL, or the reason a 400
 * gets (static text). */
static const char *corr_params(struct MHD_Connection *c, cs_corr_request *rq, double *clock_hz)
{
	uint64_t bin = 0, lag = 0;
	int have;
	if (arg_u64(c, "bin_cycles", &bin, &have) < 0)
		return "bin_cycles: expected a positive integer";
	if (arg_u64(c, "max_lag", &lag, &have) < 0 || lag > 100000)
		return "max_lag: expected an integer from 0 to 100000";
	*clock_hz = 0;
	const char *mhz = arg(c, "hw_clock_mhz");
	if (mhz) {
		char *end;
		*clock_hz = strtod(mhz, &end) * 1e6;
		if (*end || !(*clock_hz > 0))
			return "hw_clock_mhz: expected a positive number";
	}
	const char *fmt = arg(c, "format");
	int format = !fmt || !strcmp(fmt, "json") ? CS_CORR_JSON
		     : !strcmp(fmt, "csv")		? CS_CORR_CSV
		     : !strcmp(fmt, "text")		? CS_CORR_TEXT
		     : !strcmp(fmt, "svg")		? CS_CORR_SVG
							: -1;
	if (format < 0)
		return "format: json, csv, text or svg";
	uint64_t pair = 0;
	if (arg_u64(c, "pair", &pair, &have) < 0 || pair > 100000)
		return "pair: expected the index of a pair, from 0";
	const char *k = arg(c, "kernels");
	*rq = (cs_corr_request){
		.hw = arg(c, "hw"), .sim = arg(c, "sim"),
		.hw_metric = arg(c, "hw_metric"), .sim_metric = arg(c, "sim_metric"),
		.hw_window = arg(c, "hw_window"), .sim_window = arg(c, "sim_window"),
		.hw_clock_hz = *clock_hz, .sim_clock = arg(c, "sim_clock"), .bin_cycles = (double)bin, .max_lag = (int)lag,
		.kernels = k && strcmp(k, "0") && strcmp(k, "false"), .format = format,
		.svg_pair = (int)pair,
	};
	if (!rq->hw || !rq->sim)
		return "hw and sim (run ids or names) are required";
	return NULL;
}

/* The correlation's messages name the CLI's options; over HTTP they
 * name the request's fields (the UI's form fields) instead. */
static void http_field_names(char *err)
{
	static const char *const opt[][2] = {
		{"--hw-clock-mhz", "hw_clock_mhz"}, {"--sim-clock", "sim_clock"},
		{"--bin-cycles", "bin_cycles"},	    {"--max-lag", "max_lag"},
		{"--hw-window", "hw_window"},	    {"--sim-window", "sim_window"},
	};
	for (size_t i = 0; i < sizeof opt / sizeof *opt; i++) {
		char *at;
		size_t a = strlen(opt[i][0]), b = strlen(opt[i][1]);
		while ((at = strstr(err, opt[i][0]))) {
			memmove(at + b, at + a, strlen(at + a) + 1);
			memcpy(at, opt[i][1], b);
		}
	}
}

/* GET /api/v1/correlate: the same request and answer as `cyclescope
 * correlate` (web/corr_out.c); GET /report (and /api/v1/report): the page
 * `cyclescope report` writes (web/report.c). */
static enum MHD_Result do_correlate(struct MHD_Connection *c, cs_http *h, int report)
{
	cs_corr_request rq;
	double clock_hz;
	const char *bad = corr_params(c, &rq, &clock_hz);
	if (bad)
		return error(c, h, 400, "%s", bad);
	char err[1100];
	cs_store *s = open_store(h, err, sizeof err);
	if (!s)
		return error(c, h, 503, "database: %s", err);
	/* A server's bounds: the query time limit, and a search no bigger
	 * than about a second of work (max_lag=100000 on a 1e8-cycle run took
	 * 9 min 36 s). */
	rq.max_bins = CORR_MAX_BINS;
	rq.max_work = CORR_MAX_WORK;
	rq.deadline_ms = mono_ms() + h->o.query_timeout_ms;
	rq.cancelled = client_gone;
	rq.cancel_ctx = c;
	cs_buf b = CS_BUF_INIT;
	int rc = report ? cs_report_html(s, &rq, &b, err, sizeof err)
			: cs_corr_out(s, &rq, &b, err, sizeof err);
	cs_store_close(s);
	enum MHD_Result r;
	if (rc < 0)
		http_field_names(err); /* each name shorter than its option: it fits */
	if (rc == -ECANCELED)
		r = MHD_NO; /* the client went away */
	else if (rc < 0)
		r = error(c, h, rc == -ENOENT || rc == -ENODATA ? 404
				: rc == -EINVAL || rc == -E2BIG ? 400 : rc == -ETIMEDOUT ? 504 : 500,
			  "%s", err);
	else
		r = queue(c, h, 200, report ? "text/html; charset=utf-8"
				     : rq.format == CS_CORR_JSON ? "application/json"
				     : rq.format == CS_CORR_CSV ? "text/csv; charset=utf-8"
				     : rq.format == CS_CORR_SVG ? "image/svg+xml"
								 : "text/plain; charset=utf-8", &b);
	cs_buf_free(&b);
	return r;
}

/* GET /api/v1/runs/{run}/trace.json?metric=&from=&to=&buckets=&raw=1: the
 * Trace Event JSON of `cyclescope export --format perfetto`. */
static enum MHD_Result get_trace(struct MHD_Connection *c, cs_http *h, cs_store *s, const char *run)
{
	uint64_t from = 0, to = 0, nb = 0;
	int have;
	if (arg_u64(c, "from", &from, &have) < 0 || arg_u64(c, "to", &to, &have) < 0)
		return error(c, h, 400, "from, to: expected times in the run's unit");
	if (arg_u64(c, "buckets", &nb, &have) < 0 || (have && (nb == 0 || nb > 1000000)))
		return error(c, h, 400, "buckets: expected 1..1000000");
	const char *raw = arg(c, "raw");
	cs_trace_req rq = {.run = run, .metrics = arg(c, "metric"), .from = from, .to = to,
			   .buckets = (uint32_t)nb, .raw = raw && strcmp(raw, "0")};
	char err[1200];
	cs_buf b = CS_BUF_INIT;
	int rc = cs_trace_json(s, &rq, &b, err, sizeof err);
	enum MHD_Result r = rc < 0 ? error(c, h, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : rc == -E2BIG ? 413 : 500, "%s", err)
				   : queue(c, h, 200, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

/* GET /api/v1/runs/{run}/follow?metric=&device=&from=&poll_ms=&heartbeat_ms=:
 * the run's samples and ranges as Server-Sent Events as they are
 * committed, until the run ends (web/follow.c). Takes ownership of s. */
static enum MHD_Result get_follow(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *run)
{
	cs_follow_req q = {.run = run, .metrics = arg(c, "metric")};
	uint64_t dev = 0, poll = 100, hb = 2000;
	int have;
	if (arg_u64(c, "device", &dev, &q.have_device) < 0 || dev > UINT32_MAX)
		return owned_error(c, h, s, 400, "device: expected a device index");
	if (arg_u64(c, "from", &q.from, &q.have_from) < 0)
		return owned_error(c, h, s, 400, "from: expected a non-negative integer time");
	if (arg_u64(c, "poll_ms", &poll, &have) < 0 || poll < 20 || poll > 10000)
		return owned_error(c, h, s, 400, "poll_ms: expected 20..10000");
	if (arg_u64(c, "heartbeat_ms", &hb, &have) < 0 || hb < 100 || hb > 60000)
		return owned_error(c, h, s, 400, "heartbeat_ms: expected 100..60000");
	q.device = (uint32_t)dev;
	int status;
	char err[1200];
	cs_follow *f = cs_follow_open(s, &q, &status, err, sizeof err);
	if (!f)
		return owned_error(c, h, s, (unsigned)status, "%s", err);
	stream *st = calloc(1, sizeof *st);
	if (!st) {
		cs_follow_close(f);
		return owned_error(c, h, s, 500, "out of memory");
	}
	st->s = s;
	st->h = h;
	st->follow = f;
	st->poll_ms = (unsigned)poll;
	st->heartbeat_ms = (unsigned)hb;
	if (h->o.follow) {
		h->o.follow(h->o.metrics_ctx, 1);
		st->followed = 1;
	}
	return queue_stream_as(c, h, st, "follow", "text/event-stream");
}

/* GET /api/v1/runs/{run}/plot.svg?metric=&expr=&from=&to=&device=&buckets=
 * &rate=&ranges=&width=: the figure `cyclescope plot` draws (web/plot.c). */
static enum MHD_Result get_plot(struct MHD_Connection *c, cs_http *h, cs_store *s, const char *run)
{
	cs_plot_req rq = {.run = run};
	uint64_t dev = 0, nb = 0, width = 0;
	int have;
	if (arg_u64(c, "device", &dev, &rq.have_device) < 0 || dev > UINT32_MAX)
		return error(c, h, 400, "device: expected a device index");
	if (arg_u64(c, "from", &rq.from, &rq.have_from) < 0)
		return error(c, h, 400, "from: expected a non-negative integer time");
	if (arg_u64(c, "to", &rq.to, &rq.have_to) < 0)
		return error(c, h, 400, "to: expected a non-negative integer time");
	if (arg_u64(c, "buckets", &nb, &have) < 0 || (have && (nb < 2 || nb > 10000)))
		return error(c, h, 400, "buckets: expected 2..10000");
	if (arg_u64(c, "width", &width, &have) < 0 || (have && (width < 320 || width > 4000)))
		return error(c, h, 400, "width: expected 320..4000 px");
	rq.device = (uint32_t)dev;
	rq.buckets = (uint32_t)nb;
	rq.width = (double)width;
	rq.metrics = arg(c, "metric");
	rq.exprs = arg(c, "expr");
	rq.rate = arg(c, "rate");
	rq.ranges = arg(c, "ranges");
	char err[1200];
	int status = 500;
	cs_buf b = CS_BUF_INIT;
	enum MHD_Result r = cs_plot_svg(s, &rq, &b, &status, err, sizeof err) < 0
				    ? error(c, h, (unsigned)status, "%s", err)
				    : queue(c, h, 200, "image/svg+xml", &b);
	cs_buf_free(&b);
	return r;
}

/* GET /api/v1/runs/{run}/phases?a=&b=&metric=&device=&format=: what
 * `cyclescope phases` prints (web/phases.c), JSON by default. */
static enum MHD_Result get_phases(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *run)
{
	uint64_t dev = 0;
	int have;
	if (arg_u64(c, "device", &dev, &have) < 0 || dev > UINT32_MAX)
		return error(c, h, 400, "device: expected a device index");
	const char *fmt = arg(c, "format");
	int format = !fmt || !strcmp(fmt, "json") ? CS_PHASES_JSON
		     : !strcmp(fmt, "csv")		? CS_PHASES_CSV
		     : !strcmp(fmt, "text")		? CS_PHASES_TEXT
							: -1;
	if (format < 0)
		return error(c, h, 400, "format: json, csv or text");
	cs_phases_request rq = {.run = run, .a = arg(c, "a"), .b = arg(c, "b"),
				.metrics = arg(c, "metric"), .device = (uint32_t)dev, .format = format};
	char err[1200];
	cs_buf b = CS_BUF_INIT;
	int rc = cs_phases_out(s, &rq, &b, err, sizeof err);
	enum MHD_Result r;
	if (rc < 0)
		r = error(c, h, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : 500, "%s", err);
	else
		r = queue(c, h, 200, format == CS_PHASES_JSON ? "application/json"
				     : format == CS_PHASES_CSV ? "text/csv; charset=utf-8"
							       : "text/plain; charset=utf-8", &b);
	cs_buf_free(&b);
	return r;
}

/* An argument of a POST: the query string's, else the form body's. */
static const char *post_arg(struct MHD_Connection *c, req *rq, const char *name)
{
	const char *v = arg(c, name);
	if (v || !rq->body.len)
		return v;
	const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	if (!ctype || strncmp(ctype, "application/x-www-form-urlencoded", 33))
		return NULL;
	/* form_field decodes in place: work on a copy per field */
	char *copy = malloc(rq->body.len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, rq->body.data, rq->body.len);
	copy[rq->body.len] = 0;
	const char *f = rq->nowned < 4 ? form_field(copy, name) : NULL;
	char *out = f ? strdup(f) : NULL;
	if (out)
		rq->owned[rq->nowned++] = out;
	free(copy);
	return out;
}

/* A command's outcome as an HTTP status. */
static unsigned command_status(int rc)
{
	return !rc ? 200 : rc == -ENOENT ? 404 : rc == -EPERM ? 409 : rc == -EAGAIN ? 429
	       : rc == -ETIMEDOUT ? 504 : 502;
}

/* The command of a POST /api/v1/collectors/... path tail ("/window", ...);
 * 0 when none. */
static int command_op(const char *tail)
{
	return !strcmp(tail, "window")	       ? CS_WIRE_OP_OPEN
	       : !strcmp(tail, "window/close") ? CS_WIRE_OP_CLOSE
	       : !strcmp(tail, "interval")     ? CS_WIRE_OP_INTERVAL
	       : !strcmp(tail, "flush")	       ? CS_WIRE_OP_FLUSH
						: 0;
}

/* /api/v1/collectors[/{id}]/(window|window/close|interval|flush): the live
 * collectors, and commands to one of them or to those a pid, a job or
 * all=1 selects (docs/http-api.md). */
static enum MHD_Result do_collectors(struct MHD_Connection *c, cs_http *h, const char *path,
				     const char *method, req *rq)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	const char *fmt = arg(c, "format");
	int format = !fmt || !strcmp(fmt, "json") ? 0 : !strcmp(fmt, "text") ? 1
		     : !strcmp(fmt, "csv")			? 2
								: -1;
	if (format < 0)
		return error(c, h, 400, "format: json, text or csv");
	if (!strcmp(path, "collectors")) {
		if (!get)
			return error(c, h, 405, "use GET");
		cs_buf b = CS_BUF_INIT;
		if (h->o.collectors)
			h->o.collectors(h->o.metrics_ctx, format, &b);
		else
			cs_buf_append(&b, format == 0 ? "[]" : "", format == 0 ? 2 : 0);
		enum MHD_Result r = queue(c, h, 200, format == 0 ? "application/json"
					      : format == 2 ? "text/csv; charset=utf-8"
							    : "text/plain; charset=utf-8", &b);
		cs_buf_free(&b);
		return r;
	}
	/* collectors/ID/TAIL or collectors/TAIL (by selector) */
	const char *rest = path + 11, *tail = rest;
	uint64_t one = 0;
	int by_id = rest[0] >= '0' && rest[0] <= '9';
	if (by_id) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(rest, &end, 10);
		if (errno || *end != '/')
			return error(c, h, 404, "no such endpoint: /api/v1/%s", path);
		one = v;
		tail = end + 1;
	}
	int op = command_op(tail);
	if (!op)
		return error(c, h, 404, "no such endpoint: /api/v1/%s", path);
	if (strcmp(method, "POST"))
		return error(c, h, 405, "use POST");
	if (h->o.read_only)
		return error(c, h, 403, "this daemon is read-only (read_only = 1): it sends no "
				       "commands to collectors");
	if (!h->o.command || !h->o.select)
		return error(c, h, 405, "this daemon sends no commands");
	uint64_t value = 0;
	const char *name = post_arg(c, rq, "name");
	if (op == CS_WIRE_OP_OPEN) {
		const char *sec = post_arg(c, rq, "seconds");
		char *e2 = NULL;
		double v = sec ? strtod(sec, &e2) : 0;
		if (sec && (e2 == sec || *e2 || !(v > 0 && v <= 604800)))
			return error(c, h, 400, "seconds: expected a duration in seconds, "
					       "more than 0 and at most 604800 (a week)");
		value = (uint64_t)(v * 1e9 + 0.5);
	} else if (op == CS_WIRE_OP_INTERVAL) {
		const char *ns = post_arg(c, rq, "ns");
		char *e2 = NULL;
		errno = 0;
		value = ns && *ns != '-' ? strtoull(ns, &e2, 10) : 0;
		if (!e2 || e2 == ns || *e2 || errno || !value)
			return error(c, h, 400, "ns: expected the new sampling interval in ns");
	}
	if (name && strlen(name) > 120)
		return error(c, h, 400, "name: at most 120 bytes");
	if (name && cs_utf8_bad(name, strlen(name)) >= 0)
		return error(c, h, 400, "name: not UTF-8 (byte %ld)", cs_utf8_bad(name, strlen(name)));
	for (const char *q = name; q && *q; q++)
		if ((unsigned char)*q < 0x20)
			return error(c, h, 400, "name: no control characters");
	uint64_t ids[256];
	size_t n = 0;
	if (by_id) {
		ids[n++] = one;
	} else {
		const char *pid = post_arg(c, rq, "pid"), *job = post_arg(c, rq, "job");
		const char *all = post_arg(c, rq, "all");
		char *e2 = NULL;
		long long p = pid ? strtoll(pid, &e2, 10) : -1;
		if (pid && (e2 == pid || *e2 || p < 0))
			return error(c, h, 400, "pid: expected a process id");
		if (!pid && !(job && *job) && !(all && !strcmp(all, "1")))
			return error(c, h, 400, "pid, job or all=1: which collectors (or POST "
					       "/api/v1/collectors/ID/%s)", tail);
		n = h->o.select(h->o.metrics_ctx, p, job, ids, sizeof ids / sizeof *ids);
		if (!n)
			return error(c, h, 404, "no live collector matches");
	}
	int rcs[sizeof ids / sizeof *ids];
	char(*ms)[512] = malloc(n * sizeof *ms);
	if (!ms || h->o.command(h->o.metrics_ctx, ids, n, op, value, name ? name : "", rcs,
				(char *)ms, sizeof *ms) < 0) {
		free(ms);
		return error(c, h, 500, "out of memory");
	}
	cs_buf b = CS_BUF_INIT;
	unsigned status = 200;
	if (format == 0 && !by_id)
		cs_json_raw(&b, "[");
	for (size_t i = 0; i < n; i++) {
		int rc = rcs[i];
		const char *msg = ms[i];
		if (by_id)
			status = command_status(rc);
		if (format == 0) {
			char num[32];
			snprintf(num, sizeof num, "%llu", (unsigned long long)ids[i]);
			cs_json_raw(&b, i ? ",{\"collector\":" : "{\"collector\":");
			cs_json_raw(&b, num);
			cs_json_raw(&b, rc ? ",\"status\":" : ",\"status\":200,\"done\":");
			if (rc) {
				snprintf(num, sizeof num, "%u", command_status(rc));
				cs_json_raw(&b, num);
				cs_json_raw(&b, ",\"error\":");
			}
			cs_json_str(&b, msg);
			cs_json_raw(&b, "}");
		} else {
			char line[600];
			int len = snprintf(line, sizeof line, "collector %llu: %s%s\n",
					   (unsigned long long)ids[i], rc ? "not done: " : "", msg);
			cs_buf_append(&b, line, (size_t)len < sizeof line ? (size_t)len
									   : sizeof line - 1);
		}
	}
	free(ms);
	if (format == 0 && !by_id)
		cs_json_raw(&b, "]");
	struct MHD_Response *resp = MHD_create_response_from_buffer(b.len, b.data,
								     MHD_RESPMEM_MUST_COPY);
	cs_buf_free(&b);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", format == 0 ? "application/json"
							   : "text/plain; charset=utf-8");
	if (status == 429)
		MHD_add_response_header(resp, "Retry-After", "1");
	if (status >= 400)
		atomic_fetch_add(&h->errors, 1);
	enum MHD_Result r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result route(cs_http *h, struct MHD_Connection *c, const char *url,
			     const char *method, req *rq)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	int post = !strcmp(method, "POST");
	/* The UI's own files hold no data: served without the token, so
	 * that the page can ask for it (docs/ui.md). */
	if (!strcmp(url, "/") || !strncmp(url, "/ui/", 4)) {
		if (!get)
			return error(c, h, 405, "use GET");
		return get_ui(c, h, url[1] ? url + 4 : "index.html");
	}
	/* browsers ask every page's origin for an icon */
	if (!strcmp(url, "/favicon.ico") || !strcmp(url, "/favicon.svg")) {
		if (!get)
			return error(c, h, 405, "use GET");
		return get_ui(c, h, "favicon.svg");
	}
	if (!token_ok(h, c, get))
		return error(c, h, 401, "missing or wrong bearer token (Authorization: Bearer ...)");
	if (!strcmp(url, "/metrics")) {
		if (!get)
			return error(c, h, 405, "use GET");
		cs_buf b = CS_BUF_INIT;
		cs_prom_metric(&b, "cyclescope_http_requests_total", "counter", "HTTP requests",
			       atomic_load(&h->requests));
		cs_prom_metric(&b, "cyclescope_http_errors_total", "counter",
			       "HTTP responses 4xx/5xx", atomic_load(&h->errors));
		cs_prom_metric(&b, "cyclescope_http_bytes_served_total", "counter",
			       "Response body bytes", atomic_load(&h->bytes));
		cs_prom_metric(&b, "cyclescope_http_streams", "gauge", "Streamed responses in flight",
			       atomic_load(&h->streams_open));
		cs_prom_metric(&b, "cyclescope_http_slow_closed_total", "counter",
			       "Connections closed for sending their headers too slowly, or to make room",
			       atomic_load(&h->slow_closed));
		if (h->o.metrics)
			h->o.metrics(h->o.metrics_ctx, &b);
		enum MHD_Result r = queue(c, h, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
		cs_buf_free(&b);
		return r;
	}
	if (!strcmp(url, "/report") || !strcmp(url, "/api/v1/report")) {
		if (!get)
			return error(c, h, 405, "use GET");
		return do_correlate(c, h, 1);
	}
	if (strncmp(url, "/api/v1/", 8))
		return error(c, h, 404, "no such endpoint: %s", url);
	const char *path = url + 8;
	char err[600];
	if (!strcmp(path, "health")) {
		if (!get)
			return error(c, h, 405, "use GET");
		cs_store *s = open_store(h, err, sizeof err);
		if (!s)
			return error(c, h, 503, "database: %s", err);
		cs_store_close(s);
		const char *why = h->o.degraded ? h->o.degraded(h->o.metrics_ctx) : NULL;
		if (why) {
			char body[160];
			snprintf(body, sizeof body,
				 "{\"status\":\"degraded\",\"reason\":\"%s\",\"version\":\"0.1.0\",\"api\":1}",
				 why);
			return json_text(c, h, body);
		}
		return json_text(c, h, "{\"status\":\"ok\",\"version\":\"0.1.0\",\"api\":1}");
	}
	if (!strcmp(path, "query")) {
		if (!get && !post)
			return error(c, h, 405, "use GET or POST");
		if (rq->too_big)
			return error(c, h, 413, "request body exceeds %u bytes", MAX_BODY);
		const char *sql = arg(c, "sql");
		if (post && !sql) {
			cs_buf_put_u8(&rq->body, 0);
			sql = (const char *)rq->body.data;
			const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
			/* a form's sql= field; a body that is no form (curl -d
			 * @file.sql sends this content type too) is the SQL */
			const char *field = ctype && !strncmp(ctype, "application/x-www-form-urlencoded", 33)
						    ? form_field((char *)rq->body.data, "sql")
						    : NULL;
			if (field)
				sql = field;
		}
		cs_store *s = open_store(h, err, sizeof err);
		if (!s)
			return error(c, h, 503, "database: %s", err);
		return do_query(c, h, s, sql, arg(c, "format")); /* it closes s */
	}
	if (!strcmp(path, "correlate")) {
		if (!get)
			return error(c, h, 405, "use GET");
		return do_correlate(c, h, 0);
	}
	if (!strcmp(path, "collectors") || !strncmp(path, "collectors/", 11))
		return do_collectors(c, h, path, method, rq);
	if (!strcmp(path, "runs") || !strncmp(path, "runs/", 5)) {
		if (!get && (strcmp(method, "DELETE") || !strcmp(path, "runs")))
			return error(c, h, 405, "use GET (or DELETE /api/v1/runs/RUN)");
		cs_store *s = open_store(h, err, sizeof err);
		if (!s)
			return error(c, h, 503, "database: %s", err);
		if (!strcmp(path, "runs")) {
			enum MHD_Result r = get_runs(c, h, s);
			cs_store_close(s);
			return r;
		}
		char spec[256];
		const char *rest = path + 5, *slash = strchr(rest, '/');
		size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
		if (!len || len >= sizeof spec) {
			cs_store_close(s);
			return error(c, h, 404, "no such endpoint: %s", url);
		}
		memcpy(spec, rest, len);
		spec[len] = 0;
		const char *sub = slash ? slash + 1 : "";
		int64_t run;
		int rc = cs_read_find_run(s, spec, &run);
		if (rc) {
			enum MHD_Result r = error(c, h, rc == -ENOENT ? 404 : 500, "%s",
						  cs_store_errmsg(s));
			cs_store_close(s);
			return r;
		}
		enum MHD_Result r;
		if (!*sub && !strcmp(method, "DELETE")) {
			/* by uuid: ids are reused, and another request may delete
			 * and an import reuse this one meanwhile */
			char uuid[128] = "";
			sqlite3_stmt *us = NULL;
			if (sqlite3_prepare_v2(cs_store_db(s), "SELECT uuid FROM runs WHERE id = ?1",
					       -1, &us, NULL) == SQLITE_OK) {
				sqlite3_bind_int64(us, 1, run);
				if (sqlite3_step(us) == SQLITE_ROW)
					snprintf(uuid, sizeof uuid, "%s",
						 (const char *)sqlite3_column_text(us, 0));
			}
			sqlite3_finalize(us);
			cs_store_close(s);
			if (h->o.read_only)
				return error(c, h, 403, "this daemon is read-only (read_only = 1): "
						       "it deletes no runs");
			char why[600] = "";
			rc = !h->o.delete_run ? -ENOTSUP
			     : h->o.delete_run(h->o.metrics_ctx, uuid, &run, why, sizeof why);
			if (rc == -ENOTSUP)
				return error(c, h, 405, "this daemon does not delete runs");
			if (rc)
				return error(c, h, rc == -EBUSY ? 409 : rc == -ENOENT ? 404 : 503, "%s",
					     why);
			char body[64];
			snprintf(body, sizeof body, "{\"deleted\":%lld}", (long long)run);
			return json_text(c, h, body);
		}
		if (!get) {
			cs_store_close(s);
			return error(c, h, 405, "use GET%s", *sub ? "" : " or DELETE");
		}
		if (!*sub) {
			r = get_run(c, h, s, run, 0);
		} else if (!strcmp(sub, "metrics")) {
			r = get_run(c, h, s, run, 1);
		} else if (!strcmp(sub, "series.csv")) {
			char id[32];
			snprintf(id, sizeof id, "%lld", (long long)run);
			return get_series(c, h, s, id);
		} else if (!strcmp(sub, "ranges.csv")) {
			return get_ranges(c, h, s, run);
		} else if (!strcmp(sub, "follow")) {
			char id[32];
			snprintf(id, sizeof id, "%lld", (long long)run);
			return get_follow(c, h, s, id);
		} else if (!strcmp(sub, "phases")) {
			r = get_phases(c, h, s, spec);
		} else if (!strcmp(sub, "trace.json")) {
			r = get_trace(c, h, s, spec);
		} else if (!strcmp(sub, "plot.svg")) {
			r = get_plot(c, h, s, spec);
		} else {
			r = error(c, h, 404, "no such endpoint: %s", url);
		}
		cs_store_close(s);
		return r;
	}
	return error(c, h, 404, "no such endpoint: %s", url);
}

/* ---- the slow-client guard ----
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client sending
 * a byte a second holds its connection (and, one thread per connection, a
 * thread) for ever, and 64 of them locked everyone out, token or not (the
 * token is read with the headers). So:
 *  - a request (its headers and its body) must arrive within
 *    header_timeout_s of the connection's start (or of the previous
 *    request's end, keep-alive); a watchdog closes connections past it;
 *  - connections still waiting for their request may hold all but a reserve of
 *    the connection slots, and one address may hold at most per_ip: a new
 *    connection past either closes the longest-waiting such connection
 *    that has waited at least GUARD_MIN_AGE_MS (a client that sends its
 *    request at once has sent it by then), else it is admitted into the
 *    headroom above the slots (libmicrohttpd's limit is twice them);
 * so a client whose headers come at once always finds a slot. */

/* libmicrohttpd's connection limit, as a multiple of the guard's. */
#define MHD_HEADROOM 2u

static uint64_t guard_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return 0;
}

/* Closes ci's socket (libmicrohttpd then ends the connection). gmu held. */
static void guard_cut(cs_http *h, conn_info *ci)
{
	shutdown(ci->fd, SHUT_RDWR);
	ci->waiting = 0;
	atomic_fetch_add(&h->slow_closed, 1);
}

/* A connection younger than this is never closed to make room: a client
 * that sends its request at once has sent it by then (right after a burst
 * of slow connections, the oldest waiting one could be a quick client's). */
#define GUARD_MIN_AGE_MS 250

/* The connection waiting longest for its request, at least
 * GUARD_MIN_AGE_MS, from addr's host when addr is given. gmu held. */
static conn_info *guard_oldest(cs_http *h, const struct sockaddr_storage *addr, uint64_t now)
{
	conn_info *best = NULL;
	for (conn_info *ci = h->conns; ci; ci = ci->next)
		if (ci->waiting && now - ci->since_ms >= GUARD_MIN_AGE_MS &&
		    (!addr || same_host(&ci->addr, addr)) && (!best || ci->since_ms < best->since_ms))
			best = ci;
	return best;
}

static void guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode code)
{
	cs_http *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		conn_info *ci = *socket_context;
		if (!ci)
			return;
		pthread_mutex_lock(&h->gmu);
		if (ci->prev)
			ci->prev->next = ci->next;
		else
			h->conns = ci->next;
		if (ci->next)
			ci->next->prev = ci->prev;
		h->nconns--;
		pthread_mutex_unlock(&h->gmu);
		free(ci);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fdi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	conn_info *ci = calloc(1, sizeof *ci);
	if (!ci || !fdi) {
		free(ci);
		if (fdi)
			shutdown(fdi->connect_fd, SHUT_RDWR); /* no memory: refuse it */
		return;
	}
	ci->fd = fdi->connect_fd;
	ci->since_ms = guard_now();
	ci->waiting = 1;
	if (ai && ai->client_addr)
		memcpy(&ci->addr, ai->client_addr,
		       ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							  : sizeof(struct sockaddr_in));
	pthread_mutex_lock(&h->gmu);
	unsigned waiting = 0, same = 0;
	for (conn_info *o = h->conns; o; o = o->next) {
		waiting += (unsigned)o->waiting;
		same += (unsigned)same_host(&o->addr, &ci->addr);
	}
	unsigned slots = h->o.connections ? h->o.connections : 64;
	unsigned reserve = slots / 8 < 4 ? 4 : slots / 8;
	unsigned per_ip = h->o.per_ip ? h->o.per_ip : slots;
	int over_ip = same + 1 > per_ip;
	/* The guard admits; libmicrohttpd's own limit is set higher
	 * (MHD_HEADROOM) so that connections still being torn down after a
	 * cut never make it refuse a new one before the guard sees it. */
	if (over_ip || waiting + 1 + reserve > slots || h->nconns + 1 > slots) {
		conn_info *victim = guard_oldest(h, over_ip ? &ci->addr : NULL, ci->since_ms);
		if (victim)
			guard_cut(h, victim);
		else if (h->nconns + 1 >= slots * MHD_HEADROOM)
			guard_cut(h, ci); /* refused: nobody to make room, no headroom left */
		/* else admitted into the headroom: the young ones waiting now
		 * are closed when they have waited GUARD_MIN_AGE_MS */
	}
	ci->next = h->conns;
	if (h->conns)
		h->conns->prev = ci;
	h->conns = ci;
	h->nconns++;
	pthread_mutex_unlock(&h->gmu);
	*socket_context = ci;
}

static conn_info *guard_info(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* waiting 0: c's request headers are in; 1: a request ended and the next
 * one's headers are timed from now (keep-alive). */
static void guard_waiting(cs_http *h, struct MHD_Connection *c, int waiting)
{
	conn_info *ci = guard_info(c);
	if (!ci)
		return;
	pthread_mutex_lock(&h->gmu);
	ci->waiting = waiting;
	if (waiting)
		ci->since_ms = guard_now();
	pthread_mutex_unlock(&h->gmu);
}

static void *guard_main(void *arg)
{
	cs_http *h = arg;
	uint64_t limit = (uint64_t)(h->o.header_timeout_s ? h->o.header_timeout_s : 10) * 1000;
	pthread_mutex_lock(&h->gmu);
	while (!h->gstop) {
		uint64_t now = guard_now();
		for (conn_info *ci = h->conns; ci; ci = ci->next)
			if (ci->waiting && now - ci->since_ms >= limit)
				guard_cut(h, ci);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&h->gcv, &h->gmu, &ts);
	}
	pthread_mutex_unlock(&h->gmu);
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	cs_http *h = cls;
	(void)version;
	req *rq = *con_cls;
	if (!rq) {
		rq = calloc(1, sizeof *rq);
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/* Readers run below ingest: this is the connection's own
		 * thread (one per connection), so lowering its priority keeps
		 * many concurrent readers from starving the writer. */
		if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE))
			(void)0; /* not fatal: the request is served either way */
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MAX_BODY)
			rq->too_big = 1;
		else
			cs_buf_append(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	/* the whole request (headers and body) is in: the connection is no
	 * longer one the guard may close */
	guard_waiting(h, c, 0);
	atomic_fetch_add(&h->requests, 1);
	/* Health and metrics never wait behind data work. */
	int light = !strcmp(url, "/api/v1/health") || !strcmp(url, "/metrics") ||
		    !strncmp(url, "/api/v1/collectors", 18);
	if (!light)
		sem_wait(&h->busy);
	enum MHD_Result r = route(h, c, url, method, rq);
	if (!light)
		sem_post(&h->busy);
	return r;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	guard_waiting(cls, c, 1);
	req *rq = *con_cls;
	if (rq) {
		cs_buf_free(&rq->body);
		for (unsigned i = 0; i < rq->nowned; i++)
			free(rq->owned[i]);
		free(rq);
	}
	*con_cls = NULL;
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) {
		snprintf(err, errlen, "listen: expected HOST:PORT, got '%s'", listen);
		return -EINVAL;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = 0;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535 || !colon[1]) {
		snprintf(err, errlen, "listen: bad port in '%s'", listen);
		return -EINVAL;
	}
	memset(ss, 0, sizeof *ss);
	if (host[0] == '[') {
		size_t hl = strlen(host);
		if (hl < 3 || host[hl - 1] != ']') {
			snprintf(err, errlen, "listen: bad IPv6 address in '%s'", listen);
			return -EINVAL;
		}
		host[hl - 1] = 0;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1) {
			snprintf(err, errlen, "listen: bad IPv6 address in '%s'", listen);
			return -EINVAL;
		}
		*len = sizeof *a6;
		return AF_INET6;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
		snprintf(err, errlen, "listen: '%s' is not an IPv4 address (or [IPv6])", host);
		return -EINVAL;
	}
	*len = sizeof *a4;
	return AF_INET;
}

int cs_http_check_listen(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int family = parse_listen(listen, &ss, &sl, err, errlen);
	if (family < 0)
		return family;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, rc = 0;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s%s", listen, strerror(errno),
			 errno == EADDRINUSE ? " (another daemon? pass --listen HOST:PORT)"
			 : errno == EADDRNOTAVAIL ? " (not an address of this machine)" : "");
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* libmicrohttpd's own error lines go to our log, at debug level: the
 * caller reports what failed in its own words. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	cs_log(CS_LOG_DEBUG, "libmicrohttpd: %s", line);
}

cs_http *cs_http_start(const cs_http_opts *o, char *err, size_t errlen)
{
	cs_http *h = calloc(1, sizeof *h);
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->o = *o;
	snprintf(h->db, sizeof h->db, "%s", o->db_path);
	snprintf(h->token, sizeof h->token, "%s", o->token ? o->token : "");
	h->o.db_path = h->db;
	h->o.token = h->token;
	h->o.listen = NULL;
	sem_init(&h->busy, 0, o->busy ? o->busy : 2);
	pthread_mutex_init(&h->gmu, NULL);
	pthread_cond_init(&h->gcv, NULL);
	struct sockaddr_storage ss;
	socklen_t sl;
	int family = parse_listen(o->listen, &ss, &sl, err, errlen);
	if (family < 0) {
		sem_destroy(&h->busy);
		free(h);
		return NULL;
	}
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | (family == AF_INET6 ? MHD_USE_IPv6 : 0);
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, &ss,
				  MHD_OPTION_CONNECTION_LIMIT,
				  (o->connections ? o->connections : 64) * MHD_HEADROOM,
				  MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s ? o->timeout_s : 60,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256u << 10),
				  MHD_OPTION_NOTIFY_COMPLETED, completed, h,
				  MHD_OPTION_NOTIFY_CONNECTION, guard_notify, h,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (h->mhd && pthread_create(&h->guard, NULL, guard_main, h)) {
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
	}
	if (!h->mhd) {
		snprintf(err, errlen, "cannot listen on %s (address in use, or not an address of "
				      "this machine?)",
			 o->listen);
		sem_destroy(&h->busy);
		free(h);
		return NULL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage bound = {0};
	socklen_t bl = sizeof bound;
	if (info && getsockname(info->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
		h->port = ntohs(bound.ss_family == AF_INET6 /* NOLINT(clang-analyzer-core.CallAndMessage) */
					? ((struct sockaddr_in6 *)&bound)->sin6_port
					: ((struct sockaddr_in *)&bound)->sin_port);
	return h;
}

unsigned cs_http_port(const cs_http *h) { return h->port; }

void cs_http_stop(cs_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->gmu);
	h->gstop = 1;
	pthread_cond_signal(&h->gcv);
	pthread_mutex_unlock(&h->gmu);
	pthread_join(h->guard, NULL);
	MHD_stop_daemon(h->mhd);
	sem_destroy(&h->busy);
	pthread_mutex_destroy(&h->gmu);
	pthread_cond_destroy(&h->gcv);
	free(h);
}
