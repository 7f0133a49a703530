/*
 * http_reply.c - what every handler answers with: JSON and error replies,
 * request arguments, one-cell JSON queries, and streamed responses (a
 * producer refilled a piece at a time, in bounded memory).
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "json.h"
#include "runs.h"
#include "log.h"
#include "text.h"

/* ---- responses ---- */

enum MHD_Result cs_http_reply(struct MHD_Connection *c, cs_http *h, unsigned status,
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

enum MHD_Result cs_http_error(struct MHD_Connection *c, cs_http *h, unsigned status,
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
	enum MHD_Result r = cs_http_reply(c, h, status, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

enum MHD_Result cs_http_json_text(struct MHD_Connection *c, cs_http *h, const char *text)
{
	cs_buf b = CS_BUF_INIT;
	cs_json_sql(&b, text);
	cs_json_raw(&b, "\n");
	enum MHD_Result r = cs_http_reply(c, h, 200, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

const char *cs_http_arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* Parses an optional non-negative integer argument; 0 ok, -1 bad. */
int cs_http_arg_u64(struct MHD_Connection *c, const char *name, uint64_t *v, int *have)
{
	const char *s = cs_http_arg(c, name);
	*have = s && *s;
	if (!*have)
		return 0;
	return cs_parse_u64(s, v) ? -1 : 0;
}

int cs_http_arg_time(struct MHD_Connection *c, cs_store *s, int64_t run, const char *name,
		     uint64_t *v, int *have, char *err, size_t errlen)
{
	const char *t = cs_http_arg(c, name);
	char why[1024];
	*have = t && *t;
	if (!*have || cs_runs_time(s, run, t, v, why, sizeof why) == 0)
		return 0;
	snprintf(err, errlen, "%s: %s", name, why);
	return -1;
}

/* The post processor's iterator: a field's value may come in pieces (off
 * counts from its start); a field given twice keeps its first value. */
static enum MHD_Result form_piece(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *filename, const char *ctype, const char *enc,
				  const char *data, uint64_t off, size_t size)
{
	req *rq = cls;
	(void)kind, (void)filename, (void)ctype, (void)enc;
	form_field *f = NULL;
	for (unsigned i = 0; i < rq->nfields && !f; i++)
		if (!strcmp(rq->fields[i].name, key))
			f = &rq->fields[i];
	if (f && off == 0)
		f->repeated = 1; /* its second value begins: not taken */
	if (f && f->repeated)
		return MHD_YES;
	if (!f) {
		if (rq->nfields == MAX_FORM_FIELDS)
			return MHD_YES; /* past the fields any endpoint reads */
		f = &rq->fields[rq->nfields];
		*f = (form_field){strdup(key), CS_BUF_INIT, 0};
		if (!f->name)
			return MHD_NO;
		rq->nfields++;
	}
	return size && cs_buf_append(&f->value, data, size) ? MHD_NO : MHD_YES;
}

static void form_clear(req *rq)
{
	for (unsigned i = 0; i < rq->nfields; i++) {
		free(rq->fields[i].name);
		cs_buf_free(&rq->fields[i].value);
	}
	rq->nfields = 0;
}

void cs_http_form_begin(struct MHD_Connection *c, const char *method, req *rq)
{
	const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	if (!strcmp(method, "POST") && ctype &&
	    !strncasecmp(ctype, "application/x-www-form-urlencoded", 33))
		rq->form = MHD_create_post_processor(c, 4096, form_piece, rq);
}

void cs_http_form_feed(req *rq, const char *data, size_t n)
{
	if (rq->form && MHD_post_process(rq->form, data, n) != MHD_YES) {
		/* not a form after all (a SQL body sent with this type): the
		 * body as it is is what counts, none of its fields */
		MHD_destroy_post_processor(rq->form);
		rq->form = NULL;
		form_clear(rq);
	}
}

void cs_http_form_end(req *rq)
{
	/* destroying it hands on what it still held of the last field */
	if (rq->form)
		MHD_destroy_post_processor(rq->form);
	rq->form = NULL;
}

const char *cs_http_form_value(req *rq, const char *name)
{
	for (unsigned i = 0; i < rq->nfields; i++)
		if (!strcmp(rq->fields[i].name, name)) {
			cs_buf *v = &rq->fields[i].value;
			if (cs_buf_put_u8(v, 0))
				return NULL;
			v->len--; /* the NUL stays past the value */
			return v->data ? (const char *)v->data : "";
		}
	return NULL;
}

void cs_http_req_free(req *rq)
{
	cs_http_form_end(rq);
	form_clear(rq);
	cs_buf_free(&rq->body);
	free(rq);
}

/* A request's store: its connection's thread alone uses it (a thread
 * per connection). */
cs_store *cs_http_open_store(cs_http *h, char *err, size_t errlen)
{
	return cs_store_open(h->db, CS_OPEN_READONLY | CS_OPEN_ONE_THREAD, err, errlen);
}

/* Refills s->pending; returns 0 or a negative errno. */
static int stream_fill(stream *s)
{
	if (s->q)
		return cs_http_query_fill(s);
	if (s->ranges)
		return cs_http_ranges_fill(s);
	if (s->series) {
		int rc = cs_series_csv_next(s->series, &s->pending);
		if (rc == 0)
			s->done = 1;
		return rc < 0 ? rc : 0;
	}
	return -EINVAL; /* a stream is one of the above */
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
			const char *why = s->why[0] ? s->why : cs_store_errmsg(s->s);
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

void cs_http_stream_free(stream *s)
{
	if (s->followed && s->h->o.follow)
		s->h->o.follow(s->h->o.metrics_ctx, -1);
	cs_series_csv_close(s->series);
	cs_follow_close(s->follow);
	cs_query_close(s->q); /* before the store whose connection it used */
	cs_ranges_close(s->ranges);
	cs_store_close(s->s);
	cs_buf_free(&s->pending);
	free(s);
}

/* libmicrohttpd is done with a streamed response. */
static void stream_done(void *cls)
{
	stream *s = cls;
	atomic_fetch_sub(&s->h->streams_open, 1);
	cs_http_stream_free(s);
}

/* Hands s (and its store) to MHD as a streamed response: text/csv unless
 * ctype says otherwise. */
enum MHD_Result cs_http_stream_as(struct MHD_Connection *c, cs_http *h, stream *s,
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

enum MHD_Result cs_http_stream(struct MHD_Connection *c, cs_http *h, stream *s,
				    const char *filename)
{
	return cs_http_stream_as(c, h, s, filename, NULL);
}
