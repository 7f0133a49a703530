/*
 * http_query.c - POST /api/v1/query: one read-only statement in a sandbox
 * (an authorizer, a progress handler with a deadline and a gone-client
 * check, row and byte limits), answered whole or streamed.
 */
#define _GNU_SOURCE
#include "http_int.h"

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
#include "store.h"
#include "ui.h"

/* ---- the query sandbox ---- */

/* 1 when the client of c has gone (closed or reset its connection): work
 * for it can stop. Cheap: one poll() of the socket, no waiting. */
int cs_http_client_gone(void *ctx)
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

uint64_t cs_http_mono_ms(void)
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
	uint64_t now = cs_http_mono_ms();
	if (now >= sb->deadline_ms) {
		sb->timed_out = 1;
		return 1;
	}
	if (sb->conn && now >= sb->next_check_ms) {
		sb->next_check_ms = now + 50;
		if (cs_http_client_gone(sb->conn)) {
			sb->gone = 1;
			return 1;
		}
	}
	return 0;
}


/* The value of field name in an application/x-www-form-urlencoded body
 * (decoded in place: '+' is a space, %XX a byte), or NULL. What curl -d
 * 'sql=...' and HTML forms send. */
const char *cs_http_form_field(char *body, const char *name)
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

int cs_http_query_fill(stream *s)
{
	int rc = cs_sqlout_next(s->q, &s->pending, STREAM_BLOCK);
	if (rc == 0)
		s->done = 1;
	if (rc < 0)
		query_why(s, rc);
	return rc < 0 ? rc : 0;
}

/* Takes ownership of s (the store). */
enum MHD_Result cs_http_do_query(struct MHD_Connection *c, cs_http *h, cs_store *s,
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
	*sb = (sandbox){"", cs_http_mono_ms() + h->o.query_timeout_ms, 0, c, 0, 0};
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
		r = cs_http_error(c, h, 400, "%s", sb->why[0] ? sb->why : sqlite3_errmsg(db));
		goto out;
	}
	if (!x->st) {
		r = cs_http_error(c, h, 400, "sql: holds no statement");
		goto out;
	}
	if (tail && tail[strspn(tail, " \t\r\n;")]) {
		r = cs_http_error(c, h, 400, "sql: one statement at a time");
		goto out;
	}
	if (!sqlite3_stmt_readonly(x->st)) {
		r = cs_http_error(c, h, 400, "only read-only statements are allowed");
		goto out;
	}
	x->q = cs_sqlout_open(x->st, json, h->o.query_max_rows, h->o.query_max_bytes);
	rc = x->q ? 1 : -ENOMEM;
	while (rc == 1 && x->pending.len < STREAM_AFTER)
		rc = cs_sqlout_next(x->q, &x->pending, STREAM_BLOCK);
	if (rc == 1) {
		/* more than STREAM_AFTER: the rest streams (the stream owns
		 * the store, the statement and the sandbox from here) */
		return cs_http_stream_as(c, h, x, json ? "query.json" : "query.csv",
				       json ? "application/json" : NULL);
	}
	if (sb->gone)
		r = MHD_NO; /* nobody to answer */
	else if (rc == -ENOMEM || sqlite3_errcode(db) == SQLITE_NOMEM)
		r = cs_http_error(c, h, 503, "out of memory for this result; narrow the query");
	else if (rc < 0) {
		query_why(x, rc);
		r = cs_http_error(c, h, sb->timed_out ? 504 : rc == -EFBIG || rc == -E2BIG ||
						   sqlite3_errcode(db) == SQLITE_TOOBIG ? 413 : 400,
			  "%s", x->why);
	} else {
		r = cs_http_reply(c, h, 200, json ? "application/json" : "text/csv; charset=utf-8; header=present",
			  &x->pending);
	}
out:
	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_set_authorizer(db, NULL, NULL);
	cs_http_stream_free(x);
	return r;
}
