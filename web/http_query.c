/*
 * http_query.c - POST /api/v1/query: one read-only statement in a sandbox
 * (an authorizer, a progress handler with a deadline and a gone-client
 * check, row and byte limits), answered whole or streamed.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <microhttpd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

uint64_t cs_http_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A query answer is built in memory up to this size, and answered with
 * its real status (413, 504, 400) when anything fails; past it, the answer
 * is streamed a piece at a time in bounded memory, and a failure after the
 * 200 ends it with the '# error:' line (docs/http-api.md). */
#define STREAM_AFTER (1u << 20)

/* A refused or failed query's status. */
static unsigned fail_status(cs_query_fail f)
{
	switch (f) {
	case CS_QUERY_TIMEOUT:
		return 504;
	case CS_QUERY_TOO_BIG:
		return 413;
	case CS_QUERY_NOMEM:
		return 503;
	default:
		return 400;
	}
}

int cs_http_query_fill(stream *s)
{
	int rc = cs_query_next(s->q, &s->pending, STREAM_BLOCK);
	if (rc == 0)
		s->done = 1;
	if (rc < 0)
		cs_query_failure(s->q, s->why, sizeof s->why);
	return rc < 0 ? rc : 0;
}

static int client_gone(void *c) { return cs_http_client_gone(c); }

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
	if (!x)
		return owned_error(c, h, s, 503, "out of memory");
	x->h = h;
	x->s = s;
	const cs_query_opts o = {json, 0, h->o.query_timeout_ms, h->o.query_max_rows,
				 h->o.query_max_bytes, (int)MAX_BODY, client_gone, c};
	cs_query_fail f;
	char why[300];
	x->q = cs_query_open(s, sql, &o, &f, why, sizeof why);
	if (!x->q) {
		cs_http_stream_free(x);
		return cs_http_error(c, h, fail_status(f), "%s%s", f == CS_QUERY_USAGE ? "sql: " : "",
				     why);
	}
	int rc = 1;
	while (rc == 1 && x->pending.len < STREAM_AFTER)
		rc = cs_query_next(x->q, &x->pending, STREAM_BLOCK);
	if (rc == 1) {
		/* more than STREAM_AFTER: the rest streams (the stream owns
		 * the store and the query from here) */
		return cs_http_stream_as(c, h, x, json ? "query.json" : "query.csv",
				       json ? "application/json" : NULL);
	}
	enum MHD_Result r;
	if (rc < 0) {
		f = cs_query_failure(x->q, why, sizeof why);
		r = f == CS_QUERY_GONE ? MHD_NO /* nobody to answer */
				       : cs_http_error(c, h, fail_status(f), "%s", why);
	} else {
		r = cs_http_reply(c, h, 200, json ? "application/json" : "text/csv; charset=utf-8; header=present",
			  &x->pending);
	}
	cs_http_stream_free(x);
	return r;
}
