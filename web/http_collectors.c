/*
 * http_collectors.c - /api/v1/collectors: the live collectors, and
 * commands to them (windows, interval, flush).
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "json.h"
#include "log.h"
#include "text.h"

/* An argument of a POST: the query string's, else the form body's. */
const char *cs_http_post_arg(struct MHD_Connection *c, req *rq, const char *name)
{
	const char *v = cs_http_arg(c, name);
	return v ? v : cs_http_form_value(rq, name);
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
enum MHD_Result cs_http_do_collectors(struct MHD_Connection *c, cs_http *h, const char *path,
				     const char *method, req *rq)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	const char *fmt = cs_http_arg(c, "format");
	int format = !fmt || !strcmp(fmt, "json") ? 0 : !strcmp(fmt, "text") ? 1
		     : !strcmp(fmt, "csv")			? 2
								: -1;
	if (format < 0)
		return cs_http_error(c, h, 400, "format: json, text or csv");
	if (!strcmp(path, "collectors")) {
		if (!get)
			return cs_http_error(c, h, 405, "use GET");
		cs_buf b = CS_BUF_INIT;
		if (h->o.collectors)
			h->o.collectors(h->o.metrics_ctx, format, &b);
		else
			cs_buf_append(&b, format == 0 ? "[]" : "", format == 0 ? 2 : 0);
		enum MHD_Result r = cs_http_reply(c, h, 200, format == 0 ? "application/json"
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
			return cs_http_error(c, h, 404, "no such endpoint: /api/v1/%s", path);
		one = v;
		tail = end + 1;
	}
	int op = command_op(tail);
	if (!op)
		return cs_http_error(c, h, 404, "no such endpoint: /api/v1/%s", path);
	if (strcmp(method, "POST"))
		return cs_http_error(c, h, 405, "use POST");
	if (h->o.read_only)
		return cs_http_error(c, h, 403, "this daemon is read-only (read_only = 1): it sends no "
				       "commands to collectors");
	if (!h->o.command || !h->o.select)
		return cs_http_error(c, h, 405, "this daemon sends no commands");
	uint64_t value = 0;
	const char *name = cs_http_post_arg(c, rq, "name");
	if (op == CS_WIRE_OP_OPEN) {
		const char *sec = cs_http_post_arg(c, rq, "seconds");
		char *e2 = NULL;
		double v = sec ? strtod(sec, &e2) : 0;
		/* at least 1 ns: a value that rounds to 0 would mean "open until
		 * closed" */
		if (sec && (e2 == sec || *e2 || !(v >= 1e-9 && v <= 604800)))
			return cs_http_error(c, h, 400, "seconds: expected a duration in seconds, "
					       "at least 1e-9 (1 ns) and at most 604800 (a week)");
		value = (uint64_t)(v * 1e9 + 0.5);
	} else if (op == CS_WIRE_OP_INTERVAL) {
		const char *ns = cs_http_post_arg(c, rq, "ns");
		if (cs_parse_u64(ns, &value) || !value)
			return cs_http_error(c, h, 400, "ns: expected the new sampling interval in ns");
	}
	if (name && strlen(name) > 120)
		return cs_http_error(c, h, 400, "name: at most 120 bytes");
	if (name && cs_utf8_bad(name, strlen(name)) >= 0)
		return cs_http_error(c, h, 400, "name: not UTF-8 (byte %ld)", cs_utf8_bad(name, strlen(name)));
	for (const char *q = name; q && *q; q++)
		if ((unsigned char)*q < 0x20)
			return cs_http_error(c, h, 400, "name: no control characters");
	uint64_t ids[256];
	size_t n = 0;
	if (by_id) {
		ids[n++] = one;
	} else {
		const char *pid = cs_http_post_arg(c, rq, "pid"), *job = cs_http_post_arg(c, rq, "job");
		const char *all = cs_http_post_arg(c, rq, "all");
		char *e2 = NULL;
		long long p = pid ? strtoll(pid, &e2, 10) : -1;
		if (pid && (e2 == pid || *e2 || p < 0))
			return cs_http_error(c, h, 400, "pid: expected a process id");
		if (!pid && !(job && *job) && !(all && !strcmp(all, "1")))
			return cs_http_error(c, h, 400, "pid, job or all=1: which collectors (or POST "
					       "/api/v1/collectors/ID/%s)", tail);
		n = h->o.select(h->o.metrics_ctx, p, job, ids, sizeof ids / sizeof *ids);
		if (!n)
			return cs_http_error(c, h, 404, "no live collector matches");
	}
	int rcs[sizeof ids / sizeof *ids];
	char(*ms)[512] = malloc(n * sizeof *ms);
	if (!ms || h->o.command(h->o.metrics_ctx, ids, n, op, value, name ? name : "", rcs,
				(char *)ms, sizeof *ms) < 0) {
		free(ms);
		return cs_http_error(c, h, 500, "out of memory");
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
