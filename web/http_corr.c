/*
 * http_corr.c - GET /api/v1/correlate and /report: the same request and
 * answer as `cyclescope correlate` and `cyclescope report`.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The correlate/report parameters into rq; NULL, or the reason a 400
 * gets (static text). */
static const char *corr_params(struct MHD_Connection *c, cs_corr_request *rq, double *clock_hz)
{
	uint64_t bin = 0, lag = 0;
	int have;
	if (cs_http_arg_u64(c, "bin_cycles", &bin, &have) < 0)
		return "bin_cycles: expected a positive integer";
	if (cs_http_arg_u64(c, "max_lag", &lag, &have) < 0 || lag > 100000)
		return "max_lag: expected an integer from 0 to 100000";
	*clock_hz = 0;
	const char *mhz = cs_http_arg(c, "hw_clock_mhz");
	if (mhz) {
		char *end;
		*clock_hz = strtod(mhz, &end) * 1e6;
		if (*end || !(*clock_hz > 0))
			return "hw_clock_mhz: expected a positive number";
	}
	const char *fmt = cs_http_arg(c, "format");
	int format = !fmt || !strcmp(fmt, "json") ? CS_CORR_JSON
		     : !strcmp(fmt, "csv")		? CS_CORR_CSV
		     : !strcmp(fmt, "text")		? CS_CORR_TEXT
		     : !strcmp(fmt, "svg")		? CS_CORR_SVG
							: -1;
	if (format < 0)
		return "format: json, csv, text or svg";
	uint64_t pair = 0;
	if (cs_http_arg_u64(c, "pair", &pair, &have) < 0 || pair > 100000)
		return "pair: expected the index of a pair, from 0";
	const char *k = cs_http_arg(c, "kernels");
	*rq = (cs_corr_request){
		.hw = cs_http_arg(c, "hw"), .sim = cs_http_arg(c, "sim"),
		.hw_metric = cs_http_arg(c, "hw_metric"), .sim_metric = cs_http_arg(c, "sim_metric"),
		.hw_window = cs_http_arg(c, "hw_window"), .sim_window = cs_http_arg(c, "sim_window"),
		.hw_clock_hz = *clock_hz, .sim_clock = cs_http_arg(c, "sim_clock"), .bin_cycles = (double)bin, .max_lag = (int)lag,
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
enum MHD_Result cs_http_do_correlate(struct MHD_Connection *c, cs_http *h, int report)
{
	cs_corr_request rq;
	double clock_hz;
	const char *bad = corr_params(c, &rq, &clock_hz);
	if (bad)
		return cs_http_error(c, h, 400, "%s", bad);
	char err[1100];
	cs_store *s = cs_http_open_store(h, err, sizeof err);
	if (!s)
		return cs_http_error(c, h, 503, "database: %s", err);
	/* A server's bounds: the query time limit, and a search no bigger
	 * than about a second of work (max_lag=100000 on a 1e8-cycle run took
	 * 9 min 36 s). */
	rq.max_bins = CORR_MAX_BINS;
	rq.max_work = CORR_MAX_WORK;
	rq.deadline_ms = cs_http_mono_ms() + h->o.query_timeout_ms;
	rq.cancelled = cs_http_client_gone;
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
		r = cs_http_error(c, h, rc == -ENOENT || rc == -ENODATA ? 404
				: rc == -EINVAL || rc == -E2BIG ? 400 : rc == -ETIMEDOUT ? 504 : 500,
			  "%s", err);
	else
		r = cs_http_reply(c, h, 200, report ? "text/html; charset=utf-8"
				     : rq.format == CS_CORR_JSON ? "application/json"
				     : rq.format == CS_CORR_CSV ? "text/csv; charset=utf-8"
				     : rq.format == CS_CORR_SVG ? "image/svg+xml"
								 : "text/plain; charset=utf-8", &b);
	cs_buf_free(&b);
	return r;
}
