/*
 * http_jobs.c - GET /api/v1/jobs, /api/v1/jobs/{job}/phases and
 * /api/v1/jobs/{job}/figure.svg (docs/http-api.md): the runs labelled
 * with a job, taken together.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "http_int.h"
#include "jobfig.h"
#include "jobphases.h"
#include "phases.h"
#include "runs.h"
#include "text.h"

static int align_arg(struct MHD_Connection *c, int *align)
{
	const char *a = cs_http_arg(c, "align");
	*align = a && !strcmp(a, "collectives") ? CS_JOB_ALIGN_COLLECTIVES : CS_JOB_ALIGN_NONE;
	return !a || !strcmp(a, "collectives") || !strcmp(a, "none") ? 0 : -1;
}

static enum MHD_Result job_phases(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *job)
{
	int format = cs_http_phases_format(c), align;
	if (format < 0)
		return cs_http_error(c, h, 400, "format: json, csv or text");
	if (align_arg(c, &align) < 0)
		return cs_http_error(c, h, 400, "align: collectives or none");
	cs_jobphases_request rq = {.job = job, .a = cs_http_arg(c, "a"), .b = cs_http_arg(c, "b"),
				   .metrics = cs_http_arg(c, "metric"), .align = align,
				   .format = format};
	char err[1200];
	cs_buf b = CS_BUF_INIT;
	int rc = cs_jobphases_out(s, &rq, &b, err, sizeof err);
	enum MHD_Result r = cs_http_phases_reply(c, h, rc, format, &b, err);
	cs_buf_free(&b);
	return r;
}

static enum MHD_Result job_figure(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const char *job)
{
	cs_jobfig_request rq = {.job = job, .a = cs_http_arg(c, "a"), .b = cs_http_arg(c, "b")};
	if (align_arg(c, &rq.align) < 0)
		return cs_http_error(c, h, 400, "align: collectives or none");
	int have_from, have_to, have_n;
	uint64_t n = 0;
	const char *from = cs_http_arg(c, "from"), *to = cs_http_arg(c, "to");
	char terr[600];
	have_from = from && *from, have_to = to && *to;
	if (have_from && cs_time_ns(from, &rq.from, &rq.from_abs, terr, sizeof terr))
		return cs_http_error(c, h, 400, "from: %s", terr);
	if (have_to && cs_time_ns(to, &rq.to, &rq.to_abs, terr, sizeof terr))
		return cs_http_error(c, h, 400, "to: %s", terr);
	if (have_from != have_to || (have_from && rq.from_abs == rq.to_abs && rq.to <= rq.from))
		return cs_http_error(c, h, 400, "from and to go together, from < to");
	if (cs_http_arg_u64(c, "instances", &n, &have_n) || (have_n && (n < 1 || n > 100000)))
		return cs_http_error(c, h, 400, "instances: expected 1..100000");
	rq.have_window = have_from;
	rq.max_instances = (size_t)n;
	char err[1200] = "";
	cs_buf b = CS_BUF_INIT;
	int rc = cs_jobfig_svg(s, &rq, &b, err, sizeof err);
	enum MHD_Result r =
		rc < 0 ? cs_http_error(c, h, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : 500, "%s", err)
		       : cs_http_reply(c, h, 200, "image/svg+xml", &b);
	cs_buf_free(&b);
	return r;
}

enum MHD_Result cs_http_do_jobs(struct MHD_Connection *c, cs_http *h, const char *rest)
{
	char err[600];
	char job[256];
	const char *part = NULL;
	if (*rest && *rest != '/')
		return cs_http_error(c, h, 404, "no such endpoint: /api/v1/jobs%s", rest);
	if (*rest == '/')
		rest++;
	if (*rest) {
		const char *slash = strrchr(rest, '/');
		size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
		if (!slash || !len || len >= sizeof job)
			return cs_http_error(c, h, 404, "no such endpoint: use /api/v1/jobs, "
					     "/api/v1/jobs/JOB/phases or /api/v1/jobs/JOB/figure.svg");
		memcpy(job, rest, len);
		job[len] = '\0';
		part = slash + 1;
		if (strcmp(part, "phases") && strcmp(part, "figure.svg"))
			return cs_http_error(c, h, 404, "no such endpoint: /api/v1/jobs/%s/%s (phases or "
					     "figure.svg)", job, part);
	}
	cs_store *s = cs_http_open_store(h, err, sizeof err);
	if (!s)
		return cs_http_error(c, h, 503, "database: %s", err);
	enum MHD_Result r;
	if (!part) {
		cs_buf b = CS_BUF_INIT;
		if (cs_runs_jobs_json(s, &b) == 0) {
			cs_buf_append(&b, "\n", 1);
			r = cs_http_reply(c, h, 200, "application/json", &b);
		} else {
			r = cs_http_error(c, h, 500, "%s", cs_store_errmsg(s));
		}
		cs_buf_free(&b);
	} else if (!strcmp(part, "phases")) {
		r = job_phases(c, h, s, job);
	} else {
		r = job_figure(c, h, s, job);
	}
	cs_store_close(s);
	return r;
}
