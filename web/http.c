/*
 * http.c - the HTTP server: start and stop, the request handler, the
 * token, the embedded UI and the router, which hands each endpoint family
 * to its file (http_int.h); docs/http-api.md.
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report.h"
#include "log.h"
#include "prom.h"
#include "reader.h"
#include "runs.h"
#include "text.h"
#include "ui.h"

/* ---- routing ---- */

/* want == got in time that depends on want's length only. */
static int same_secret(const char *want, const char *got)
{
	size_t n = strlen(want), len = got ? strlen(got) : 0;
	unsigned char diff = (unsigned char)(len != n);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < len ? got[i] : 0) ^ want[i]);
	return diff == 0;
}

/* The token as "Authorization: Bearer TOKEN"; for GET and HEAD also as
 * the query parameter access_token, which the UI puts on what a browser
 * fetches without headers (its follow stream's EventSource, download
 * links). Never from a cookie: a browser would send that along with
 * other sites' requests too. */
static int token_ok(cs_http *h, struct MHD_Connection *c, int get)
{
	if (!h->token[0])
		return 1;
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!auth) {
		const char *q = get ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
								  "access_token")
				    : NULL;
		return q && same_secret(h->token, q);
	}
	char want[300];
	snprintf(want, sizeof want, "Bearer %s", h->token);
	return same_secret(want, auth);
}

/* GET / and GET /ui/NAME: the embedded UI (ui.h); uPlot from the build
 * tree, as the report reads it. */
static enum MHD_Result get_ui(struct MHD_Connection *c, cs_http *h, const char *name)
{
	int js = !strcmp(name, "uPlot.iife.min.js"), css = !strcmp(name, "uPlot.min.css");
	if (js || css) {
		char *j = NULL, *k = NULL, err[1100];
		if (cs_report_assets(&j, &k, err, sizeof err) < 0)
			return cs_http_error(c, h, 503, "%s", err);
		cs_buf b = {.data = (uint8_t *)(js ? j : k), .len = strlen(js ? j : k)};
		enum MHD_Result r = cs_http_reply(c, h, 200, js ? "text/javascript; charset=utf-8"
						  : "text/css; charset=utf-8", &b);
		free(j);
		free(k);
		return r;
	}
	const cs_ui_file *f = cs_ui_find(name);
	if (!f)
		return cs_http_error(c, h, 404, "no such UI file: %s", name);
	cs_buf b = {.data = (uint8_t *)f->data, .len = f->len};
	return cs_http_reply(c, h, 200, f->type, &b);
}

/* One request as the router hands it on. */
typedef struct call {
	cs_http *h;
	struct MHD_Connection *c;
	const char *url, *method;
	const char *rest; /* the URL past the route's path */
	req *rq;
} call;

enum {
	M_GET = 1, /* and HEAD */
	M_POST = 2,
	M_DELETE = 4,
	M_ANY = 7, /* the handler answers each method itself */
};

static unsigned method_bit(const char *m)
{
	return !strcmp(m, "GET") || !strcmp(m, "HEAD") ? M_GET
	       : !strcmp(m, "POST")			 ? M_POST
	       : !strcmp(m, "DELETE")			 ? M_DELETE
							 : 0;
}

static enum MHD_Result metrics_page(const call *x)
{
	cs_http *h = x->h;
	cs_buf b = CS_BUF_INIT;
	cs_prom_metric(&b, "cyclescope_http_requests_total", "counter", "HTTP requests",
		       atomic_load(&h->requests));
	cs_prom_metric(&b, "cyclescope_http_errors_total", "counter", "HTTP responses 4xx/5xx",
		       atomic_load(&h->errors));
	cs_prom_metric(&b, "cyclescope_http_bytes_served_total", "counter", "Response body bytes",
		       atomic_load(&h->bytes));
	cs_prom_metric(&b, "cyclescope_http_streams", "gauge", "Streamed responses in flight",
		       atomic_load(&h->streams_open));
	cs_prom_metric(&b, "cyclescope_http_slow_closed_total", "counter",
		       "Connections closed for sending their headers too slowly, or to make room",
		       atomic_load(&h->slow_closed));
	if (h->o.metrics)
		h->o.metrics(h->o.metrics_ctx, &b);
	enum MHD_Result r = cs_http_reply(x->c, h, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
	cs_buf_free(&b);
	return r;
}

static enum MHD_Result ui_index(const call *x) { return get_ui(x->c, x->h, "index.html"); }
static enum MHD_Result ui_file(const call *x) { return get_ui(x->c, x->h, x->rest); }
static enum MHD_Result ui_icon(const call *x) { return get_ui(x->c, x->h, "favicon.svg"); }
static enum MHD_Result report(const call *x) { return cs_http_do_correlate(x->c, x->h, 1); }
static enum MHD_Result correlate(const call *x) { return cs_http_do_correlate(x->c, x->h, 0); }
static enum MHD_Result jobs(const call *x) { return cs_http_do_jobs(x->c, x->h, x->rest); }
static enum MHD_Result correlations(const call *x)
{
	return cs_http_do_correlations(x->c, x->h, x->rest);
}

static enum MHD_Result collectors(const call *x)
{
	if (x->rq->too_big)
		return cs_http_error(x->c, x->h, 413, "request body exceeds %u bytes", MAX_BODY);
	return cs_http_do_collectors(x->c, x->h, x->url + 8, x->method, x->rq);
}

static enum MHD_Result health(const call *x)
{
	char err[600];
	cs_store *s = cs_http_open_store(x->h, err, sizeof err);
	if (!s)
		return cs_http_error(x->c, x->h, 503, "database: %s", err);
	cs_store_close(s);
	const char *why = x->h->o.degraded ? x->h->o.degraded(x->h->o.metrics_ctx) : NULL;
	if (why) {
		char body[160];
		snprintf(body, sizeof body,
			 "{\"status\":\"degraded\",\"reason\":\"%s\",\"version\":\"0.1.0\",\"api\":1}",
			 why);
		return cs_http_json_text(x->c, x->h, body);
	}
	return cs_http_json_text(x->c, x->h, "{\"status\":\"ok\",\"version\":\"0.1.0\",\"api\":1}");
}

static enum MHD_Result query(const call *x)
{
	struct MHD_Connection *c = x->c;
	req *rq = x->rq;
	if (rq->too_big)
		return cs_http_error(c, x->h, 413, "request body exceeds %u bytes", MAX_BODY);
	const char *sql = cs_http_arg(c, "sql");
	if (!strcmp(x->method, "POST") && !sql) {
		/* a form's sql= field; a body that is no form (curl -d
		 * @file.sql sends a form's content type too) is the SQL */
		sql = cs_http_form_value(rq, "sql");
		if (!sql) {
			cs_buf_put_u8(&rq->body, 0);
			sql = (const char *)rq->body.data;
		}
	}
	char err[600];
	cs_store *s = cs_http_open_store(x->h, err, sizeof err);
	if (!s)
		return cs_http_error(c, x->h, 503, "database: %s", err);
	return cs_http_do_query(c, x->h, s, sql, cs_http_arg(c, "format")); /* it closes s */
}

static enum MHD_Result runs(const call *x)
{
	char err[600];
	cs_store *s = cs_http_open_store(x->h, err, sizeof err);
	if (!s)
		return cs_http_error(x->c, x->h, 503, "database: %s", err);
	enum MHD_Result r = cs_http_get_runs(x->c, x->h, s);
	cs_store_close(s);
	return r;
}

/* ---- /api/v1/runs/RUN[/PART] ---- */

/* DELETE /api/v1/runs/RUN, by uuid: ids are reused, and another request
 * may delete and an import reuse this one meanwhile. The writer deletes. */
static enum MHD_Result run_delete(struct MHD_Connection *c, cs_http *h, cs_store *s,
				  const cs_http_run *r)
{
	int64_t run = r->id;
	cs_run_summary sum;
	const char *uuid = cs_runs_summary(s, run, &sum) == 0 ? sum.uuid : "";
	if (h->o.read_only)
		return cs_http_error(c, h, 403, "this daemon is read-only (read_only = 1): "
						   "it deletes no runs");
	char why[600] = "";
	int rc = !h->o.delete_run ? -ENOTSUP
		 : h->o.delete_run(h->o.metrics_ctx, uuid, &run, why, sizeof why);
	if (rc == -ENOTSUP)
		return cs_http_error(c, h, 405, "this daemon does not delete runs");
	if (rc)
		return cs_http_error(c, h, rc == -EBUSY ? 409 : rc == -ENOENT ? 404 : 503, "%s", why);
	char body[64];
	snprintf(body, sizeof body, "{\"deleted\":%lld}", (long long)run);
	return cs_http_json_text(c, h, body);
}

static const struct run_route {
	const char *part; /* after RUN/ ("" for the run itself) */
	unsigned methods;
	int owns;         /* the handler closes the store */
	cs_http_run_fn fn;
} run_routes[] = {
	{"", M_GET, 0, cs_http_get_run},
	{"", M_DELETE, 0, run_delete},
	{"metrics", M_GET, 0, cs_http_get_run_metrics},
	{"series.csv", M_GET, 1, cs_http_get_series},
	{"ranges.csv", M_GET, 1, cs_http_get_ranges},
	{"density.csv", M_GET, 0, cs_http_get_density},
	{"follow", M_GET, 1, cs_http_get_follow},
	{"phases", M_GET, 0, cs_http_get_phases},
	{"trace.json", M_GET, 0, cs_http_get_trace},
	{"plot.svg", M_GET, 0, cs_http_get_plot},
};

static enum MHD_Result one_run(const call *x)
{
	char spec[256];
	const char *slash = strchr(x->rest, '/');
	size_t len = slash ? (size_t)(slash - x->rest) : strlen(x->rest);
	if (!len || len >= sizeof spec)
		return cs_http_error(x->c, x->h, 404, "no such endpoint: %s", x->url);
	memcpy(spec, x->rest, len);
	spec[len] = 0;
	const char *part = slash ? slash + 1 : "";
	unsigned m = method_bit(x->method), allowed = 0;
	const struct run_route *rt = NULL;
	for (size_t i = 0; i < sizeof run_routes / sizeof *run_routes; i++)
		if (!strcmp(part, run_routes[i].part)) {
			allowed |= run_routes[i].methods;
			if (run_routes[i].methods & m)
				rt = &run_routes[i];
		}
	char err[600];
	cs_store *s = cs_http_open_store(x->h, err, sizeof err);
	if (!s)
		return cs_http_error(x->c, x->h, 503, "database: %s", err);
	int64_t run;
	int rc = cs_read_find_run(s, spec, &run);
	enum MHD_Result r;
	if (rc)
		r = cs_http_error(x->c, x->h, rc == -ENOENT ? 404 : 500, "%s", cs_store_errmsg(s));
	else if (!allowed)
		r = cs_http_error(x->c, x->h, 404, "no such endpoint: %s", x->url);
	else if (!rt)
		r = cs_http_error(x->c, x->h, 405, "use GET%s", allowed & M_DELETE ? " or DELETE" : "");
	else {
		cs_http_run ref = {run, spec, ""};
		snprintf(ref.idtext, sizeof ref.idtext, "%lld", (long long)run);
		r = rt->fn(x->c, x->h, s, &ref);
		if (rt->owns)
			return r;
	}
	cs_store_close(s);
	return r;
}

/* ---- who may ask ---- */

/* Whether the host part of a Host header (or of an Origin) names this
 * daemon: an IP address, localhost, this machine's host name (short or
 * whole), or one of http_hosts. A name a page's author controls and
 * points at 127.0.0.1 (DNS rebinding) is none of these. */
static int host_ok(const cs_http *h, const char *hostport, size_t len)
{
	char host[256];
	if (len && hostport[0] == '[') { /* [v6]:port */
		const char *end = memchr(hostport, ']', len);
		if (!end || (size_t)(end - hostport - 1) >= sizeof host)
			return 0;
		memcpy(host, hostport + 1, (size_t)(end - hostport - 1));
		host[end - hostport - 1] = 0;
		struct in6_addr a6;
		return inet_pton(AF_INET6, host, &a6) == 1;
	}
	const char *colon = memchr(hostport, ':', len);
	size_t n = colon ? (size_t)(colon - hostport) : len;
	if (!n || n >= sizeof host)
		return 0;
	memcpy(host, hostport, n);
	host[n] = 0;
	if (host[n - 1] == '.') /* "localhost." */
		host[--n] = 0;
	struct in_addr a4;
	if (inet_pton(AF_INET, host, &a4) == 1 || !strcasecmp(host, "localhost"))
		return 1;
	/* the machine's name as gethostname() gives it, its first label, and
	 * (with a token, which any address but loopback requires) any whole
	 * name beginning with that label: gpu17.example.org for gpu17 */
	size_t short_len = strcspn(h->hostname, "."), first = strcspn(host, ".");
	if (h->hostname[0] && (!strcasecmp(host, h->hostname) ||
			       ((n == short_len || (h->token[0] && first == short_len)) &&
				!strncasecmp(host, h->hostname, short_len))))
		return 1;
	const char *p = h->hosts, *item;
	size_t l;
	while (cs_list_next(&p, &item, &l)) {
		while (l && *item == ' ')
			item++, l--;
		while (l && item[l - 1] == ' ')
			l--;
		if (l == n && !strncasecmp(item, host, n))
			return 1;
	}
	return 0;
}

/* Refuses what another site could make a browser send: any request under
 * a Host that is no name of this daemon, and a request that changes
 * something (not GET or HEAD) whose Origin is another site's. A client
 * that is no browser sends no Origin and is not asked for one. */
static int foreign(cs_http *h, struct MHD_Connection *c, int get, enum MHD_Result *r)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	if (host && !host_ok(h, host, strlen(host))) {
		*r = cs_http_error(c, h, 403, "Host '%.200s' is no name of this daemon (an IP address, "
				   "localhost, %s, or one of http_hosts in its config)", host,
				   h->hostname[0] ? h->hostname : "its host name");
		return 1;
	}
	const char *origin = get ? NULL : MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (!origin)
		return 0;
	const char *hp = strstr(origin, "://");
	hp = hp ? hp + 3 : "";
	if (host ? !strcasecmp(hp, host) : host_ok(h, hp, strlen(hp)))
		return 0;
	*r = cs_http_error(c, h, 403, "Origin '%.200s' is another site: what changes the daemon "
			   "is taken from its own pages, or from clients that are no browser", origin);
	return 1;
}

/* ---- the table ---- */

enum {
	PUBLIC = 1, /* no token: the UI's own files hold no data (docs/ui.md) */
	LIGHT = 2,  /* never waits for a busy slot (health, metrics, control) */
	PREFIX = 4, /* path is a prefix: rest is what follows it */
};

static const struct route {
	const char *path;
	unsigned methods;
	unsigned flags;
	const char *allow; /* the 405's "use ..." */
	enum MHD_Result (*fn)(const call *x);
} routes[] = {
	{"/", M_GET, PUBLIC, "GET", ui_index},
	{"/ui/", M_GET, PUBLIC | PREFIX, "GET", ui_file},
	/* browsers ask every page's origin for an icon */
	{"/favicon.ico", M_GET, PUBLIC, "GET", ui_icon},
	{"/favicon.svg", M_GET, PUBLIC, "GET", ui_icon},
	{"/metrics", M_GET, LIGHT, "GET", metrics_page},
	{"/report", M_GET, 0, "GET", report},
	{"/api/v1/report", M_GET, 0, "GET", report},
	{"/api/v1/health", M_GET, LIGHT, "GET", health},
	{"/api/v1/query", M_GET | M_POST, 0, "GET or POST", query},
	{"/api/v1/correlate", M_GET, 0, "GET", correlate},
	{"/api/v1/correlations", M_GET, PREFIX, "GET", correlations},
	{"/api/v1/collectors", M_ANY, LIGHT, "", collectors},
	{"/api/v1/collectors/", M_ANY, LIGHT | PREFIX, "", collectors},
	{"/api/v1/runs", M_GET, 0, "GET (or DELETE /api/v1/runs/RUN)", runs},
	{"/api/v1/jobs", M_GET, PREFIX, "GET", jobs},
	{"/api/v1/runs/", M_GET | M_DELETE, PREFIX, "GET (or DELETE /api/v1/runs/RUN)", one_run},
};

static const struct route *find_route(const char *url)
{
	for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
		const struct route *r = &routes[i];
		if (r->flags & PREFIX ? !strncmp(url, r->path, strlen(r->path)) : !strcmp(url, r->path))
			return r;
	}
	return NULL;
}

static enum MHD_Result route(cs_http *h, struct MHD_Connection *c, const struct route *rt,
			     const char *url, const char *method, req *rq)
{
	unsigned m = method_bit(method);
	enum MHD_Result r;
	if (foreign(h, c, m == M_GET, &r))
		return r;
	if (!(rt && rt->flags & PUBLIC) && !token_ok(h, c, m == M_GET))
		return cs_http_error(c, h, 401, "missing or wrong bearer token (Authorization: Bearer ...)");
	if (!rt)
		return cs_http_error(c, h, 404, "no such endpoint: %s", url);
	if (rt->methods != M_ANY && !(rt->methods & m))
		return cs_http_error(c, h, 405, "use %s", rt->allow);
	call x = {h, c, url, method, url + strlen(rt->path), rq};
	return rt->fn(&x);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	cs_http *h = cls;
	(void)version;
	req *rq = *con_cls;
	if (!rq) {
		rq = calloc(1, sizeof *rq);
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/* Readers run below ingest: this is the connection's own
		 * thread (one per connection), so lowering its priority keeps
		 * many concurrent readers from starving the writer. */
		if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE))
			(void)0; /* not fatal: the request is served either way */
		cs_http_form_begin(c, method, rq);
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MAX_BODY) {
			rq->too_big = 1;
		} else {
			cs_buf_append(&rq->body, upload, *upload_size);
			cs_http_form_feed(rq, upload, *upload_size);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	/* the whole request (headers and body) is in: the connection is no
	 * longer one the guard may close */
	cs_http_form_end(rq);
	cs_http_guard_waiting(h, c, 0);
	atomic_fetch_add(&h->requests, 1);
	/* Health and metrics never wait behind data work. */
	const struct route *rt = find_route(url);
	int light = rt && rt->flags & LIGHT;
	if (!light)
		sem_wait(&h->busy);
	enum MHD_Result r = route(h, c, rt, url, method, rq);
	if (!light)
		sem_post(&h->busy);
	return r;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	cs_http_guard_waiting(cls, c, 1);
	req *rq = *con_cls;
	if (rq)
		cs_http_req_free(rq);
	*con_cls = NULL;
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) {
		snprintf(err, errlen, "listen: expected HOST:PORT, got '%s'", listen);
		return -EINVAL;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = 0;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535 || !colon[1]) {
		snprintf(err, errlen, "listen: bad port in '%s'", listen);
		return -EINVAL;
	}
	memset(ss, 0, sizeof *ss);
	if (host[0] == '[') {
		size_t hl = strlen(host);
		if (hl < 3 || host[hl - 1] != ']') {
			snprintf(err, errlen, "listen: bad IPv6 address in '%s'", listen);
			return -EINVAL;
		}
		host[hl - 1] = 0;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1) {
			snprintf(err, errlen, "listen: bad IPv6 address in '%s'", listen);
			return -EINVAL;
		}
		*len = sizeof *a6;
		return AF_INET6;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
		snprintf(err, errlen, "listen: '%s' is not an IPv4 address (or [IPv6])", host);
		return -EINVAL;
	}
	*len = sizeof *a4;
	return AF_INET;
}

int cs_http_check_listen(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int family = parse_listen(listen, &ss, &sl, err, errlen);
	if (family < 0)
		return family;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, rc = 0;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s%s", listen, strerror(errno),
			 errno == EADDRINUSE ? " (another daemon? pass --listen HOST:PORT)"
			 : errno == EADDRNOTAVAIL ? " (not an address of this machine)" : "");
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* libmicrohttpd's own error lines go to our log, at debug level: the
 * caller reports what failed in its own words. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	cs_log(CS_LOG_DEBUG, "libmicrohttpd: %s", line);
}

cs_http *cs_http_start(const cs_http_opts *o, char *err, size_t errlen)
{
	cs_http *h = calloc(1, sizeof *h);
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->o = *o;
	snprintf(h->db, sizeof h->db, "%s", o->db_path);
	snprintf(h->token, sizeof h->token, "%s", o->token ? o->token : "");
	snprintf(h->hosts, sizeof h->hosts, "%s", o->hosts ? o->hosts : "");
	if (gethostname(h->hostname, sizeof h->hostname))
		h->hostname[0] = 0;
	h->o.db_path = h->db;
	h->o.token = h->token;
	h->o.hosts = h->hosts;
	h->o.listen = NULL;
	sem_init(&h->busy, 0, o->busy ? o->busy : 2);
	pthread_mutex_init(&h->gmu, NULL);
	pthread_cond_init(&h->gcv, NULL);
	struct sockaddr_storage ss;
	socklen_t sl;
	int family = parse_listen(o->listen, &ss, &sl, err, errlen);
	if (family < 0) {
		sem_destroy(&h->busy);
		free(h);
		return NULL;
	}
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | (family == AF_INET6 ? MHD_USE_IPv6 : 0);
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, &ss,
				  MHD_OPTION_CONNECTION_LIMIT,
				  (o->connections ? o->connections : 64) * MHD_HEADROOM,
				  MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s ? o->timeout_s : 60,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256u << 10),
				  MHD_OPTION_NOTIFY_COMPLETED, completed, h,
				  MHD_OPTION_NOTIFY_CONNECTION, cs_http_guard_notify, h,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (h->mhd && pthread_create(&h->guard, NULL, cs_http_guard_main, h)) {
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
	}
	if (!h->mhd) {
		snprintf(err, errlen, "cannot listen on %s (address in use, or not an address of "
				      "this machine?)",
			 o->listen);
		sem_destroy(&h->busy);
		free(h);
		return NULL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage bound = {0};
	socklen_t bl = sizeof bound;
	if (info && getsockname(info->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
		h->port = ntohs(bound.ss_family == AF_INET6 /* NOLINT(clang-analyzer-core.CallAndMessage) */
					? ((struct sockaddr_in6 *)&bound)->sin6_port
					: ((struct sockaddr_in *)&bound)->sin_port);
	return h;
}

unsigned cs_http_port(const cs_http *h) { return h->port; }

void cs_http_stop(cs_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->gmu);
	h->gstop = 1;
	pthread_cond_signal(&h->gcv);
	pthread_mutex_unlock(&h->gmu);
	pthread_join(h->guard, NULL);
	MHD_stop_daemon(h->mhd);
	sem_destroy(&h->busy);
	pthread_mutex_destroy(&h->gmu);
	pthread_cond_destroy(&h->gcv);
	free(h);
}

