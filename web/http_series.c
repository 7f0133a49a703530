/*
 * http_series.c - a run's samples: series.csv, trace.json, the follow
 * stream, plot.svg and phases.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "phases.h"
#include "trace.h"
#include "plot.h"

/* get_series and get_ranges take ownership of s: the stream closes it. */
enum MHD_Result cs_http_get_series(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *ref)
{
	const char *run = ref->idtext;
	cs_series_req q = {.run = run, .to = UINT64_MAX};
	uint64_t dev = 0, nb = 0;
	int have_b;
	if (cs_http_arg_u64(c, "device", &dev, &q.have_device) || dev > UINT32_MAX)
		return owned_error(c, h, s, 400, "device: expected a device index");
	char terr[1100];
	if (cs_http_arg_time(c, s, ref->id, "from", &q.from, &q.have_from, terr, sizeof terr) ||
	    cs_http_arg_time(c, s, ref->id, "to", &q.to, &q.have_to, terr, sizeof terr))
		return owned_error(c, h, s, 400, "%s", terr);
	if (cs_http_arg_u64(c, "buckets", &nb, &have_b) || (have_b && (nb < 1 || nb > 1000000)))
		return owned_error(c, h, s, 400, "buckets: expected an integer 1..1000000");
	if (cs_http_arg_u64(c, "since", &q.since, &q.have_since))
		return owned_error(c, h, s, 400, "since: expected a non-negative integer sample seq");
	q.device = (uint32_t)dev;
	q.buckets = (uint32_t)nb;
	q.metrics = cs_http_arg(c, "metric");
	if (q.metrics && !*q.metrics)
		q.metrics = NULL;
	q.exprs = cs_http_arg(c, "expr");
	if (q.exprs && !*q.exprs)
		q.exprs = NULL;
	q.range = cs_http_arg(c, "range");
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
	return cs_http_stream(c, h, st, "series.csv");
}

/* A trace is built whole before it is sent: over HTTP at most this much
 * (two at once with http_busy 2); `cyclescope export` allows 512 MiB. */
#define TRACE_HTTP_MAX_BYTES (128u << 20)

/* GET /api/v1/runs/{run}/trace.json?metric=&from=&to=&buckets=&raw=1: the
 * Trace Event JSON of `cyclescope export --format perfetto`. Stops when its
 * client has gone. */
enum MHD_Result cs_http_get_trace(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const cs_http_run *ref)
{
	const char *run = ref->spec;
	uint64_t from = 0, to = 0, nb = 0;
	int have;
	char terr[1100];
	if (cs_http_arg_time(c, s, ref->id, "from", &from, &have, terr, sizeof terr) ||
	    cs_http_arg_time(c, s, ref->id, "to", &to, &have, terr, sizeof terr))
		return cs_http_error(c, h, 400, "%s", terr);
	if (cs_http_arg_u64(c, "buckets", &nb, &have) < 0 || (have && (nb == 0 || nb > 1000000)))
		return cs_http_error(c, h, 400, "buckets: expected 1..1000000");
	const char *raw = cs_http_arg(c, "raw");
	cs_trace_req rq = {.run = run, .metrics = cs_http_arg(c, "metric"), .from = from, .to = to,
			   .buckets = (uint32_t)nb, .raw = raw && strcmp(raw, "0"),
			   .max_bytes = TRACE_HTTP_MAX_BYTES, .cancelled = cs_http_client_gone, .cancel_ctx = c};
	char err[1200];
	cs_buf b = CS_BUF_INIT;
	int rc = cs_trace_json(s, &rq, &b, err, sizeof err);
	enum MHD_Result r = rc < 0 ? cs_http_error(c, h, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : rc == -E2BIG ? 413 : 500, "%s", err)
				   : cs_http_reply(c, h, 200, "application/json", &b);
	cs_buf_free(&b);
	return r;
}

/* GET /api/v1/runs/{run}/follow?metric=&device=&from=&poll_ms=&heartbeat_ms=:
 * the run's samples and ranges as Server-Sent Events as they are
 * committed, until the run ends (web/follow.c). Takes ownership of s. */
enum MHD_Result cs_http_get_follow(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *ref)
{
	const char *run = ref->idtext;
	cs_follow_req q = {.run = run, .metrics = cs_http_arg(c, "metric")};
	uint64_t dev = 0, poll = 100, hb = 2000;
	int have;
	if (cs_http_arg_u64(c, "device", &dev, &q.have_device) < 0 || dev > UINT32_MAX)
		return owned_error(c, h, s, 400, "device: expected a device index");
	char terr[1100];
	if (cs_http_arg_time(c, s, ref->id, "from", &q.from, &q.have_from, terr, sizeof terr))
		return owned_error(c, h, s, 400, "%s", terr);
	if (cs_http_arg_u64(c, "poll_ms", &poll, &have) < 0 || poll < 20 || poll > 10000)
		return owned_error(c, h, s, 400, "poll_ms: expected 20..10000");
	if (cs_http_arg_u64(c, "heartbeat_ms", &hb, &have) < 0 || hb < 100 || hb > 60000)
		return owned_error(c, h, s, 400, "heartbeat_ms: expected 100..60000");
	q.device = (uint32_t)dev;
	int status;
	char err[1200];
	if (cs_http_guard_stream(h, c, err, sizeof err))
		return owned_error(c, h, s, 429, "%s", err);
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
	return cs_http_stream_as(c, h, st, "follow", "text/event-stream");
}

/* GET /api/v1/runs/{run}/plot.svg?metric=&expr=&from=&to=&device=&buckets=
 * &rate=&ranges=&width=: the figure `cyclescope plot` draws (web/plot.c). */
enum MHD_Result cs_http_get_plot(struct MHD_Connection *c, cs_http *h, cs_store *s,
				 const cs_http_run *ref)
{
	const char *run = ref->spec;
	cs_plot_req rq = {.run = run};
	uint64_t dev = 0, nb = 0, width = 0;
	int have;
	if (cs_http_arg_u64(c, "device", &dev, &rq.have_device) < 0 || dev > UINT32_MAX)
		return cs_http_error(c, h, 400, "device: expected a device index");
	char terr[1100];
	if (cs_http_arg_time(c, s, ref->id, "from", &rq.from, &rq.have_from, terr, sizeof terr) ||
	    cs_http_arg_time(c, s, ref->id, "to", &rq.to, &rq.have_to, terr, sizeof terr))
		return cs_http_error(c, h, 400, "%s", terr);
	if (cs_http_arg_u64(c, "buckets", &nb, &have) < 0 || (have && (nb < 2 || nb > 10000)))
		return cs_http_error(c, h, 400, "buckets: expected 2..10000");
	if (cs_http_arg_u64(c, "width", &width, &have) < 0 || (have && (width < 320 || width > 4000)))
		return cs_http_error(c, h, 400, "width: expected 320..4000 px");
	rq.device = (uint32_t)dev;
	rq.buckets = (uint32_t)nb;
	rq.width = (double)width;
	rq.metrics = cs_http_arg(c, "metric");
	rq.exprs = cs_http_arg(c, "expr");
	rq.rate = cs_http_arg(c, "rate");
	rq.ranges = cs_http_arg(c, "ranges");
	rq.a = cs_http_arg(c, "a");
	rq.b = cs_http_arg(c, "b");
	if (!rq.a != !rq.b)
		return cs_http_error(c, h, 400, "a, b: give both (the overlap phases shaded), or neither");
	char err[1200];
	int status = 500;
	cs_buf b = CS_BUF_INIT;
	enum MHD_Result r = cs_plot_svg(s, &rq, &b, &status, err, sizeof err) < 0
				    ? cs_http_error(c, h, (unsigned)status, "%s", err)
				    : cs_http_reply(c, h, 200, "image/svg+xml", &b);
	cs_buf_free(&b);
	return r;
}

int cs_http_phases_format(struct MHD_Connection *c)
{
	const char *fmt = cs_http_arg(c, "format");
	return !fmt || !strcmp(fmt, "json") ? CS_PHASES_JSON
	       : !strcmp(fmt, "csv")	    ? CS_PHASES_CSV
	       : !strcmp(fmt, "text")	    ? CS_PHASES_TEXT
					    : -1;
}

enum MHD_Result cs_http_phases_reply(struct MHD_Connection *c, cs_http *h, int rc, int format,
				     cs_buf *b, const char *err)
{
	if (rc < 0)
		return cs_http_error(c, h, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : 500, "%s", err);
	return cs_http_reply(c, h, 200, format == CS_PHASES_JSON ? "application/json"
				 : format == CS_PHASES_CSV ? "text/csv; charset=utf-8"
							   : "text/plain; charset=utf-8", b);
}

/* GET /api/v1/runs/{run}/phases?a=&b=&metric=&device=&format=: what
 * `cyclescope phases` prints (web/phases.c), JSON by default. */
enum MHD_Result cs_http_get_phases(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *ref)
{
	const char *run = ref->spec;
	uint64_t dev = 0;
	int have;
	if (cs_http_arg_u64(c, "device", &dev, &have) < 0 || dev > UINT32_MAX)
		return cs_http_error(c, h, 400, "device: expected a device index");
	int format = cs_http_phases_format(c);
	if (format < 0)
		return cs_http_error(c, h, 400, "format: json, csv or text");
	cs_phases_request rq = {.run = run, .a = cs_http_arg(c, "a"), .b = cs_http_arg(c, "b"),
				.metrics = cs_http_arg(c, "metric"), .device = (uint32_t)dev, .format = format};
	char err[1200];
	cs_buf b = CS_BUF_INIT;
	int rc = cs_phases_out(s, &rq, &b, err, sizeof err);
	enum MHD_Result r = cs_http_phases_reply(c, h, rc, format, &b, err);
	cs_buf_free(&b);
	return r;
}
