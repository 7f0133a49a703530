/*
 * http_corr.c - GET /api/v1/correlate and /report: the same request and
 * answer as `cyclescope correlate` and `cyclescope report`.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corrs.h"
#include "report.h"
#include "suite_out.h"

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
	const char *k = cs_http_arg(c, "kernels"), *al = cs_http_arg(c, "aligned");
	*rq = (cs_corr_request){
		.hw = cs_http_arg(c, "hw"), .sim = cs_http_arg(c, "sim"),
		.hw_metric = cs_http_arg(c, "hw_metric"), .sim_metric = cs_http_arg(c, "sim_metric"),
		.hw_window = cs_http_arg(c, "hw_window"), .sim_window = cs_http_arg(c, "sim_window"),
		.hw_clock_hz = *clock_hz, .sim_clock = cs_http_arg(c, "sim_clock"), .bin_cycles = (double)bin, .max_lag = (int)lag,
		.kernels = k && strcmp(k, "0") && strcmp(k, "false"), .format = format,
		.svg_pair = (int)pair, .with_bins = al && strcmp(al, "0") && strcmp(al, "false"),
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
		{"--app-map", "app_map"},
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

/* ---- suites: parameters that repeat (hw=A&hw=B) ---- */

#define SUITE_MAX 64

typedef struct suite_q {
	const char *hw[SUITE_MAX], *sim[SUITE_MAX], *cfg[SUITE_MAX];
	const char *hm[SUITE_MAX], *sm[SUITE_MAX], *both[SUITE_MAX];
	size_t nhw, nsim, ncfg, nhm, nsm, nboth;
	int over; /* a list past SUITE_MAX */
} suite_q;

static enum MHD_Result suite_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	(void)kind;
	suite_q *q = cls;
	struct { const char *name; const char **v; size_t *n; } l[] = {
		{"hw", q->hw, &q->nhw},		  {"sim", q->sim, &q->nsim},
		{"sim_config", q->cfg, &q->ncfg}, {"hw_metric", q->hm, &q->nhm},
		{"sim_metric", q->sm, &q->nsm},	  {"metric", q->both, &q->nboth},
	};
	for (size_t i = 0; value && i < sizeof l / sizeof *l; i++)
		if (!strcmp(key, l[i].name)) {
			if (*l[i].n == SUITE_MAX)
				q->over = 1;
			else
				l[i].v[(*l[i].n)++] = value;
		}
	return MHD_YES;
}

/* GET /api/v1/correlate?suite=1 and /report?suite=1: cyclescope
 * correlate --suite's request and answer (web/suite_out.c). */
static enum MHD_Result do_suite(struct MHD_Connection *c, cs_http *h, int report)
{
	suite_q q;
	memset(&q, 0, sizeof q);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, suite_arg, &q);
	const char *fmt = cs_http_arg(c, "format");
	int format = report ? CS_SUITE_HTML
		     : !fmt || !strcmp(fmt, "json") ? CS_SUITE_JSON
		     : !strcmp(fmt, "csv") ? CS_SUITE_CSV
		     : !strcmp(fmt, "text") ? CS_SUITE_TEXT
		     : !strcmp(fmt, "svg") ? CS_SUITE_SVG : -1;
	if (format < 0)
		return cs_http_error(c, h, 400, "format: json, csv, text or svg");
	if (q.over)
		return cs_http_error(c, h, 400, "at most %d of each of hw, sim, sim_config and metrics",
				     SUITE_MAX);
	if (!q.nhw || !q.nsim)
		return cs_http_error(c, h, 400, "a suite needs hw and sim (runs, GLOBs or job:LABEL)");
	if (q.nhm != q.nsm)
		return cs_http_error(c, h, 400, "hw_metric and sim_metric go in pairs");
	if (!q.nhm && !q.nboth)
		return cs_http_error(c, h, 400, "give metric, or hw_metric and sim_metric");
	size_t ncfg = q.ncfg ? q.ncfg : 1;
	if (q.nsim * ncfg > SUITE_MAX)
		return cs_http_error(c, h, 400, "at most %d configurations", SUITE_MAX);
	double hz = 0;
	const char *mhz = cs_http_arg(c, "hw_clock_mhz");
	if (mhz) {
		char *end;
		hz = strtod(mhz, &end) * 1e6;
		if (*end || !(hz > 0))
			return cs_http_error(c, h, 400, "hw_clock_mhz: expected a positive number");
	}
	cs_suite_group hw[SUITE_MAX], sim[SUITE_MAX];
	cs_suite_stat st[SUITE_MAX * 2];
	char (*lab)[256] = calloc(2 * SUITE_MAX, sizeof *lab);
	if (!lab)
		return cs_http_error(c, h, 503, "out of memory");
	size_t nsim = 0, nst = 0;
	for (size_t g = 0; g < q.nhw; g++)
		cs_suite_group_parse(q.hw[g], NULL, &hw[g], lab[g], sizeof lab[g]);
	for (size_t g = 0; g < q.nsim; g++)
		for (size_t k = 0; k < ncfg; k++, nsim++)
			cs_suite_group_parse(q.sim[g], q.ncfg ? q.cfg[k] : NULL, &sim[nsim], lab[SUITE_MAX + nsim],
				    sizeof lab[0]);
	for (size_t i = 0; i < q.nboth; i++)
		st[nst++] = (cs_suite_stat){q.both[i], q.both[i]};
	for (size_t i = 0; i < q.nhm; i++)
		st[nst++] = (cs_suite_stat){q.hm[i], q.sm[i]};
	const char *amap = cs_http_arg(c, "app_map"); /* the map's lines, \n-separated */
	cs_suite_spec sp = {.hw = hw, .nhw = q.nhw, .sim = sim, .nsim = nsim, .stats = st,
			    .nstats = nst, .app_map = amap, .app_map_len = amap ? strlen(amap) : 0,
			    .app_map_label = "app_map", .hw_clock_hz = hz};
	char err[1100];
	cs_store *s = cs_http_open_store(h, err, sizeof err);
	if (!s) {
		free(lab);
		return cs_http_error(c, h, 503, "database: %s", err);
	}
	cs_buf b = CS_BUF_INIT;
	int rc = cs_suite_out(s, &sp, format, &b, NULL, NULL, err, sizeof err);
	cs_store_close(s);
	free(lab);
	enum MHD_Result r;
	if (rc < 0) {
		http_field_names(err);
		r = cs_http_error(c, h, rc == -ENOENT || rc == -ENODATA ? 404 : rc == -EINVAL ? 400 : 500,
				  "%s", err);
	} else {
		r = cs_http_reply(c, h, 200, format == CS_SUITE_HTML ? "text/html; charset=utf-8"
				     : format == CS_SUITE_JSON ? "application/json"
				     : format == CS_SUITE_CSV ? "text/csv; charset=utf-8"
				     : format == CS_SUITE_SVG ? "image/svg+xml"
							      : "text/plain; charset=utf-8", &b);
	}
	cs_buf_free(&b);
	return r;
}

/* GET /api/v1/correlate: the same request and answer as `cyclescope
 * correlate` (web/corr_out.c); GET /report (and /api/v1/report): the page
 * `cyclescope report` writes (web/report.c). */
enum MHD_Result cs_http_do_correlate(struct MHD_Connection *c, cs_http *h, int report)
{
	const char *suite = cs_http_arg(c, "suite");
	if (suite && strcmp(suite, "0") && strcmp(suite, "false"))
		return do_suite(c, h, report);
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

enum MHD_Result cs_http_do_correlations(struct MHD_Connection *c, cs_http *h, const char *rest)
{
	char err[1100];
	uint64_t id = 0;
	int trend = 0;
	if (*rest && *rest != '/')
		return cs_http_error(c, h, 404, "no such endpoint: /api/v1/correlations%s", rest);
	if (*rest == '/')
		rest++;
	if (!strcmp(rest, "trend.svg")) {
		trend = 1;
	} else if (*rest) {
		char *end;
		id = strtoull(rest, &end, 10);
		if (*end || !id)
			return cs_http_error(c, h, 404, "no such endpoint: use /api/v1/correlations, "
					     "/api/v1/correlations/ID or /api/v1/correlations/trend.svg");
	}
	cs_store *s = cs_http_open_store(h, err, sizeof err);
	if (!s)
		return cs_http_error(c, h, 503, "database: %s", err);
	cs_buf b = CS_BUF_INIT;
	int rc = trend ? cs_suite_trend_svg(s, &b, err, sizeof err)
		 : id ? cs_corrs_result(s, (int64_t)id, &b) : cs_corrs_json(s, &b);
	if (rc < 0 && !trend)
		snprintf(err, sizeof err, "%s", rc == -ENOENT ? "no such saved correlation" : cs_store_errmsg(s));
	cs_store_close(s);
	enum MHD_Result r;
	if (rc < 0) {
		r = cs_http_error(c, h, rc == -ENOENT ? 404 : 500, "%s", err);
	} else {
		if (!trend)
			cs_buf_append(&b, "\n", 1);
		r = cs_http_reply(c, h, 200, trend ? "image/svg+xml" : "application/json", &b);
	}
	cs_buf_free(&b);
	return r;
}
