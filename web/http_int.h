/*
 * http_int.h - what the HTTP server's files share (web/http*.c): the
 * server's state, per-request state, streamed responses, the reply and
 * argument helpers, and each endpoint family's handler. Not for use
 * outside web/http*.c; the API is http.h.
 */
#ifndef CS_HTTP_INT_H
#define CS_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "buf.h"
#include "follow.h"
#include "http.h"
#include "series_csv.h"
#include "query.h"
#include "store.h"

/* libmicrohttpd's connection limit, as a multiple of the guard's. */
#define MHD_HEADROOM 2u
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
	int streaming;       /* 1 while it holds a follow stream */
	struct sockaddr_storage addr;
} conn_info;

struct cs_http {
	struct MHD_Daemon *mhd;
	char db[512];
	char token[256];
	char hosts[512];    /* o.hosts, kept */
	char hostname[256]; /* this machine's */
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

/* A form field of a POST body (application/x-www-form-urlencoded),
 * decoded by libmicrohttpd's post processor. */
typedef struct form_field {
	char *name;
	cs_buf value;
	int repeated; /* given again: only the first value counts */
} form_field;

#define MAX_FORM_FIELDS 32

/* Per-request state (POST bodies). */
typedef struct req {
	cs_buf body; /* as sent: a query's SQL when it is no form */
	int too_big;
	struct MHD_PostProcessor *form; /* NULL unless the body is a form */
	form_field fields[MAX_FORM_FIELDS];
	unsigned nfields;
} req;

#define MAX_NAME_GLOB 4096
#define CORR_MAX_BINS 10000000u      /* per side: 80 MB of doubles */
#define CORR_MAX_WORK 200000000u     /* lag steps x bins */

/* A streamed response: a producer that appends pieces to pending. */
typedef struct stream {
	cs_http *h;
	cs_store *s;
	cs_series_csv *series; /* series.csv */
	cs_follow *follow;     /* follow: events as the run is committed */
	int followed;          /* counted by opts.follow */
	unsigned poll_ms, heartbeat_ms;
	struct cs_ranges_cursor *ranges; /* ranges.csv */
	cs_query *q;           /* a query answer past STREAM_AFTER */
	char why[300];         /* what failed, for the error line */
	int header_done;
	cs_buf pending;
	size_t sent;
	int done;
	int failed; /* the error line is in pending: end with an error after it */
} stream;


/* cs_http_error() for handlers that own s: closes it first. */
#define owned_error(c, h, s, ...) (cs_store_close(s), cs_http_error(c, h, __VA_ARGS__))

enum MHD_Result cs_http_error(struct MHD_Connection *c, cs_http *h, unsigned status,
			      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* http_reply.c */
/* POST forms: libmicrohttpd's post processor decodes the fields as the
 * body arrives (begin at the request's first call, feed each piece, end
 * once the body is in); a field's value, NUL-terminated, or NULL. */
void cs_http_form_begin(struct MHD_Connection *c, const char *method, req *rq);
void cs_http_form_feed(req *rq, const char *data, size_t n);
void cs_http_form_end(req *rq);
const char *cs_http_form_value(req *rq, const char *name);
void cs_http_req_free(req *rq);
cs_store *cs_http_open_store(cs_http *h, char *err, size_t errlen);
enum MHD_Result cs_http_reply(struct MHD_Connection *c, cs_http *h, unsigned status,
			     const char *type, cs_buf *body);
enum MHD_Result cs_http_json_text(struct MHD_Connection *c, cs_http *h, const char *text);
const char *cs_http_arg(struct MHD_Connection *c, const char *name);
int cs_http_arg_u64(struct MHD_Connection *c, const char *name, uint64_t *v, int *have);
/* An optional time of run (cs_runs_time: from its start unless '@', with
 * units): 0 (*have says whether it was given), or -1 with "NAME: why" in
 * err. */
int cs_http_arg_time(struct MHD_Connection *c, cs_store *s, int64_t run, const char *name,
		     uint64_t *v, int *have, char *err, size_t errlen);
void cs_http_stream_free(stream *s);
enum MHD_Result cs_http_stream_as(struct MHD_Connection *c, cs_http *h, stream *s,
				       const char *filename, const char *ctype);
enum MHD_Result cs_http_stream(struct MHD_Connection *c, cs_http *h, stream *s,
				    const char *filename);

/* A run a request names (/api/v1/runs/RUN/...): its id, the URL's name
 * for it (spec), and the id as text. */
typedef struct cs_http_run {
	int64_t id;
	const char *spec;
	char idtext[24];
} cs_http_run;

/* One part of a run (the route table in http.c). Handlers that stream
 * (series, ranges, follow) take ownership of s; the others leave it. */
typedef enum MHD_Result (*cs_http_run_fn)(struct MHD_Connection *c, cs_http *h, cs_store *s,
					  const cs_http_run *r);

/* http_runs.c */
int cs_http_ranges_fill(stream *s);
enum MHD_Result cs_http_get_runs(struct MHD_Connection *c, cs_http *h, cs_store *s);
enum MHD_Result cs_http_get_run(struct MHD_Connection *c, cs_http *h, cs_store *s,
				const cs_http_run *r);
enum MHD_Result cs_http_get_run_metrics(struct MHD_Connection *c, cs_http *h, cs_store *s,
					const cs_http_run *r);
enum MHD_Result cs_http_get_density(struct MHD_Connection *c, cs_http *h, cs_store *s,
				    const cs_http_run *r);
enum MHD_Result cs_http_get_ranges(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *r);

/* http_series.c */
enum MHD_Result cs_http_get_series(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *r);
enum MHD_Result cs_http_get_trace(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const cs_http_run *r);
enum MHD_Result cs_http_get_follow(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *r);
enum MHD_Result cs_http_get_plot(struct MHD_Connection *c, cs_http *h, cs_store *s,
				 const cs_http_run *r);
/* The format= of a phases request (CS_PHASES_*, JSON when none), -1 when
 * unknown; and its answer: b with the format's type, or err's status. */
int cs_http_phases_format(struct MHD_Connection *c);
enum MHD_Result cs_http_phases_reply(struct MHD_Connection *c, cs_http *h, int rc, int format,
				     cs_buf *b, const char *err);

/* /api/v1/jobs (the jobs and their ranks), /api/v1/jobs/{job}/phases
 * (phases --job) and /api/v1/jobs/{job}/figure.svg; rest is what follows
 * /api/v1/jobs. */
enum MHD_Result cs_http_do_jobs(struct MHD_Connection *c, cs_http *h, const char *rest);

enum MHD_Result cs_http_get_phases(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *r);

/* http_query.c */
int cs_http_client_gone(void *ctx);
uint64_t cs_http_mono_ms(void);
int cs_http_query_fill(stream *s);
enum MHD_Result cs_http_do_query(struct MHD_Connection *c, cs_http *h, cs_store *s,
				const char *sql, const char *format);

/* http_corr.c */
enum MHD_Result cs_http_do_correlate(struct MHD_Connection *c, cs_http *h, int report);
/* GET /api/v1/correlations (the saved suite correlations, JSON),
 * /api/v1/correlations/ID (one's answer) and /api/v1/correlations/trend.svg
 * (http_corr.c); rest is what follows /api/v1/correlations. */
enum MHD_Result cs_http_do_correlations(struct MHD_Connection *c, cs_http *h, const char *rest);

/* http_collectors.c */
const char *cs_http_post_arg(struct MHD_Connection *c, req *rq, const char *name);
enum MHD_Result cs_http_do_collectors(struct MHD_Connection *c, cs_http *h, const char *path,
				     const char *method, req *rq);

/* http_guard.c */
void cs_http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode code);
void cs_http_guard_waiting(cs_http *h, struct MHD_Connection *c, int waiting);
int cs_http_guard_stream(cs_http *h, struct MHD_Connection *c, char *why, size_t len);
void *cs_http_guard_main(void *arg);

#endif
