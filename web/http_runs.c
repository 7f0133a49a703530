/*
 * http_runs.c - GET /api/v1/runs, /runs/{run}, /runs/{run}/metrics and
 * /runs/{run}/ranges.csv.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "json.h"
#include "plot.h"
#include "runs.h"
#include "text.h"

/* ---- handlers ---- */

/* The JSON the store appended to b (rc 0) as the answer, or its error:
 * 404 for no such run, else 500 with the store's message. */
static enum MHD_Result json_answer(struct MHD_Connection *c, cs_http *h, cs_store *s, int rc,
				   cs_buf *b)
{
	enum MHD_Result r;
	if (rc == -ENOENT) {
		r = cs_http_error(c, h, 404, "no such run");
	} else if (rc) {
		r = cs_http_error(c, h, 500, "%s", cs_store_errmsg(s));
	} else {
		cs_json_raw(b, "\n");
		r = cs_http_reply(c, h, 200, "application/json", b);
	}
	cs_buf_free(b);
	return r;
}

enum MHD_Result cs_http_get_runs(struct MHD_Connection *c, cs_http *h, cs_store *s)
{
	cs_runs_filter f = {.kind = cs_http_arg(c, "kind"), .name = cs_http_arg(c, "name"),
			    .job = cs_http_arg(c, "job")};
	if (cs_http_arg_u64(c, "since", &f.since_ns, &f.have_since))
		return cs_http_error(c, h, 400, "since: expected a non-negative integer (ns since the epoch)");
	if (f.kind && strcmp(f.kind, "hw") && strcmp(f.kind, "sim"))
		return cs_http_error(c, h, 400, "kind: expected hw or sim");
	/* SQLite refuses GLOB patterns over 50000 bytes as an error (a 500);
	 * no run name is anywhere near that long. */
	if (f.name && strlen(f.name) > MAX_NAME_GLOB)
		return cs_http_error(c, h, 400, "name: a name or glob of at most %d bytes", MAX_NAME_GLOB);
	cs_buf b = CS_BUF_INIT;
	int rc = cs_runs_json(s, &f, &b);
	return json_answer(c, h, s, rc, &b);
}

enum MHD_Result cs_http_get_run_metrics(struct MHD_Connection *c, cs_http *h, cs_store *s,
					const cs_http_run *r)
{
	cs_buf b = CS_BUF_INIT;
	return json_answer(c, h, s, cs_runs_metrics_json(s, r->id, &b), &b);
}

enum MHD_Result cs_http_get_run(struct MHD_Connection *c, cs_http *h, cs_store *s,
				const cs_http_run *r)
{
	int64_t run = r->id;
	cs_buf b = CS_BUF_INIT;
	/* the metrics its page opens on (plot.h), a JSON array */
	char defaults[1024];
	cs_buf dj = CS_BUF_INIT;
	cs_plot_defaults(s, run, defaults, sizeof defaults);
	cs_json_raw(&dj, "[");
	const char *p = defaults, *item;
	size_t len;
	int first = 1;
	while (cs_list_next(&p, &item, &len)) {
		if (!len)
			continue;
		cs_json_raw(&dj, first ? "" : ",");
		cs_json_strn(&dj, item, len);
		first = 0;
	}
	cs_json_raw(&dj, "]");
	cs_buf_put_u8(&dj, 0);
	int rc = cs_runs_run_json(s, run, dj.data ? (const char *)dj.data : "[]", &b);
	cs_buf_free(&dj);
	return json_answer(c, h, s, rc, &b);
}

/* ranges.csv: from/to keep the ranges that overlap [from, to) (instants
 * inside it included); kind a
 * comma-separated list of kinds; limit caps the rows (the longest first
 * when capped, so a zoomed-out view keeps what is visible). */
/* Refills s->pending with ranges.csv: the header, then rows of the cursor
 * with the demangled name last. */
int cs_http_ranges_fill(stream *s)
{
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, &s->pending);
	if (!s->header_done) {
		cs_ranges_csv_header(&w);
		s->header_done = 1;
	}
	cs_range_row r;
	int rc = 1;
	for (int rows = 0; rows < 4096 && (rc = cs_ranges_next(s->ranges, &r)) == 1; rows++)
		cs_ranges_csv_row(&w, &r);
	if (rc == 0)
		s->done = 1;
	int out = cs_csv_finish(&w);
	return rc >= 0 ? out : rc;
}

enum MHD_Result cs_http_get_ranges(struct MHD_Connection *c, cs_http *h, cs_store *s,
				   const cs_http_run *r)
{
	int64_t run = r->id;
	uint64_t from = 0, to = INT64_MAX, limit = 0;
	int have_from, have_to, have_limit;
	char terr[1100];
	if (cs_http_arg_time(c, s, run, "from", &from, &have_from, terr, sizeof terr) ||
	    cs_http_arg_time(c, s, run, "to", &to, &have_to, terr, sizeof terr))
		return owned_error(c, h, s, 400, "%s", terr);
	if (cs_http_arg_u64(c, "limit", &limit, &have_limit) || (have_limit && (limit < 1 || limit > 10000000)))
		return owned_error(c, h, s, 400, "limit: expected an integer 1..10000000");
	if (have_from && have_to && to <= from)
		return owned_error(c, h, s, 400, "to: must be greater than from");
	stream *st = calloc(1, sizeof *st);
	if (!st)
		return owned_error(c, h, s, 500, "out of memory");
	cs_ranges_query q = {.run = run, .from = from, .to = to, .kinds = cs_http_arg(c, "kind"),
			     .limit = have_limit ? limit : 0};
	st->ranges = cs_ranges_open(s, &q);
	if (!st->ranges) {
		free(st);
		return owned_error(c, h, s, 500, "%s", cs_store_errmsg(s));
	}
	st->s = s;
	return cs_http_stream(c, h, st, "ranges.csv");
}

/* GET /api/v1/runs/{run}/density.csv?from=&to=&bins=: how the window's
 * ranges fill it, per kind and stream and bin (cs_ranges_density): what
 * the UI's lanes draw where ranges are too many to draw one by one. */
enum MHD_Result cs_http_get_density(struct MHD_Connection *c, cs_http *h, cs_store *s,
				    const cs_http_run *r)
{
	uint64_t from = 0, to = 0, bins = 1000;
	int have_from, have_to, have;
	char terr[1100];
	if (cs_http_arg_time(c, s, r->id, "from", &from, &have_from, terr, sizeof terr) ||
	    cs_http_arg_time(c, s, r->id, "to", &to, &have_to, terr, sizeof terr))
		return cs_http_error(c, h, 400, "%s", terr);
	if (cs_http_arg_u64(c, "bins", &bins, &have) || bins < 1 || bins > 10000)
		return cs_http_error(c, h, 400, "bins: expected an integer 1..10000");
	uint64_t lo = 0, hi = 0;
	if (!have_from || !have_to) {
		int rc = cs_ranges_extent(s, r->id, &lo, &hi);
		if (rc == -ENODATA)
			lo = hi = 0;
		else if (rc < 0)
			return cs_http_error(c, h, 500, "%s", cs_store_errmsg(s));
		from = have_from ? from : lo;
		to = have_to ? to : hi + 1;
	}
	if (to <= from || to > INT64_MAX)
		return cs_http_error(c, h, 400, "to: must be greater than from");
	cs_ranges_bin *b = NULL;
	size_t n = 0;
	if (cs_ranges_density(s, r->id, from, to, (uint32_t)bins, &b, &n))
		return cs_http_error(c, h, 500, "%s", cs_store_errmsg(s));
	cs_buf out = CS_BUF_INIT;
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, &out);
	static const char *const head[] = {"kind", "stream", "t0", "t1", "count", "busy"};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		cs_csv_str(&w, head[i]);
	cs_csv_end_row(&w);
	double per = (double)(to - from) / (double)bins;
	for (size_t i = 0; i < n; i++) {
		cs_csv_str(&w, b[i].kind);
		if (b[i].has_stream)
			cs_csv_i64(&w, b[i].stream);
		else
			cs_csv_empty(&w);
		cs_csv_u64(&w, from + (uint64_t)(per * b[i].bin));
		cs_csv_u64(&w, b[i].bin + 1 == bins ? to : from + (uint64_t)(per * (b[i].bin + 1)));
		cs_csv_i64(&w, b[i].count);
		cs_csv_i64(&w, b[i].busy);
		cs_csv_end_row(&w);
	}
	free(b);
	if (cs_csv_finish(&w)) {
		cs_buf_free(&out);
		return cs_http_error(c, h, 500, "out of memory");
	}
	return cs_http_reply(c, h, 200, "text/csv; charset=utf-8", &out);
}
