/*
 * cmd_serve.c - `cyclescope serve`: the node's daemon. It owns the database
 * (the single writer), takes runs from producers on the ingest socket and
 * serves the HTTP API, until SIGTERM or SIGINT, when it stops accepting,
 * drains and commits everything queued, checkpoints the WAL and exits 0.
 * SIGHUP reopens the log file. Under systemd (Type=notify) it says READY=1
 * once the ingest socket and HTTP listen, and STOPPING=1 when it starts to
 * drain; sd_notify does nothing where $NOTIFY_SOCKET is unset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "blobcache.h"
#include "cmds.h"
#include "collectors.h"
#include "config.h"
#include "http.h"
#include "ingest.h"
#include "log.h"
#include "ship.h"

static int run_serve(int argc, char **argv);

const cs_cmd cs_cmd_serve = {
	"serve", run_serve, "run the daemon: ingest socket, single writer, HTTP API",
	"usage: cyclescope serve [--db F] [--listen HOST:PORT] [--socket PATH]\n"
	"                        [--config F] [--token T] [--log F] [--ship-to URL]\n"
	"                        [--read-only]\n\n"
	"Runs the node's daemon in the foreground: producers (the collector,\n"
	"'cyclescope import --socket') stream runs into the ingest socket, one\n"
	"writer thread commits them to the database, and the HTTP API\n"
	"(docs/http-api.md) serves runs, CSV series, SQL and Prometheus metrics.\n\n"
	"Options (each overrides $CYCLESCOPE_*, which overrides the config file):\n"
	"  --db F            database (default ./cyclescope.db)\n"
	"  --listen H:P      HTTP address (default 127.0.0.1:7070; port 0 = any free port)\n"
	"  --socket PATH     ingest socket (default $XDG_RUNTIME_DIR/cyclescope.sock or\n"
	"                    /run/cyclescope/ingest.sock)\n"
	"  --config F        config file (configs/cyclescope.conf documents every key)\n"
	"  --token T         bearer token required on every HTTP request; mandatory\n"
	"                    when --listen is not a loopback address\n"
	"  --log F           log to F instead of standard error (SIGHUP reopens it)\n"
	"  --ship-to URL     ship everything committed to ClickHouse's HTTP interface\n"
	"                    (sink.clickhouse.url; the other [sink.clickhouse] keys in\n"
	"                    the config file; docs/fleet.md)\n"
	"  --read-only       refuse what changes anything over HTTP: collector commands\n"
	"                    (triggers) and run deletion (read_only = 1)\n\n"
	"Stop it with SIGTERM or Ctrl-C: queued data is committed before it exits.\n",
};

static FILE *log_file;
static char log_path[512];

static void open_log(void)
{
	if (!log_path[0])
		return;
	FILE *f = fopen(log_path, "a");
	if (!f) {
		cs_log(CS_LOG_ERROR, "cannot open log %s: %s", log_path, strerror(errno));
		return;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	cs_log_set_stream(f);
	if (log_file)
		fclose(log_file);
	log_file = f;
}

static int set_level(const char *name)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			cs_log_set_level((enum cs_log_level)i);
			return 0;
		}
	return -1;
}

/* Decompressed chunk payloads kept for the requests after: the UI asks
 * for the same runs again and again (zoom, pan, reload). */
#define SERVE_BLOB_CACHE_MB 32
#define SERVE_SQLITE_HEAP_MB 256
/* ...and no more than this at all, whatever a request asks. */
#define SERVE_SQLITE_HARD_HEAP_MB 1024

typedef struct parts {
	cs_ingest *in;
	cs_ship *ship;
	cs_collectors *reg;
} parts;

static void metrics_cb(void *ctx, cs_buf *out)
{
	parts *p = ctx;
	cs_ingest_metrics_text(p->in, out);
	cs_collectors_metrics_text(p->reg, out);
	cs_ship_metrics_text(p->ship, out);
}

static const char *degraded_cb(void *ctx)
{
	return cs_ingest_degraded(((parts *)ctx)->in);
}

static int delete_cb(void *ctx, const char *uuid, int64_t *run, char *err, size_t errlen)
{
	return cs_ingest_delete_run(((parts *)ctx)->in, uuid, run, err, errlen);
}

static void collectors_cb(void *ctx, int format, cs_buf *out)
{
	cs_collectors_list(((parts *)ctx)->reg, format, out);
}

static size_t select_cb(void *ctx, int64_t pid, const char *job, uint64_t *ids, size_t max)
{
	return cs_collectors_select(((parts *)ctx)->reg, pid, job, ids, max);
}

static int command_cb(void *ctx, const uint64_t *ids, size_t n, int op, uint64_t value,
		      const char *name, int *rc, char *msgs, size_t msglen)
{
	cs_collector_result *res = calloc(n ? n : 1, sizeof *res);
	if (!res)
		return -ENOMEM;
	cs_collectors_command(((parts *)ctx)->reg, ids, n, op, value, name, 2000, res);
	for (size_t i = 0; i < n; i++) {
		rc[i] = res[i].rc;
		snprintf(msgs + i * msglen, msglen, "%s", res[i].msg);
	}
	free(res);
	return 0;
}

static void follow_cb(void *ctx, int delta)
{
	cs_ingest_followers(((parts *)ctx)->in, delta);
}

static int run_serve(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_serve;
	const char *db = NULL, *listen = NULL, *sock = NULL, *conf = NULL, *token = NULL,
		   *logf = NULL, *ship_to = NULL;
	int read_only = 0;
	const cs_opt opts[] = {{"db", &db, NULL},	  {"listen", &listen, NULL},
			       {"socket", &sock, NULL},	  {"config", &conf, NULL},
			       {"token", &token, NULL},	  {"log", &logf, NULL},
			       {"ship-to", &ship_to, NULL}, {"read-only", NULL, &read_only},
			       {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	cs_config c;
	char err[1024];
	cs_config_defaults(&c);
	if (conf) {
		cs_cli_input text;
		if (cs_cli_read_file(conf, &text, err, sizeof err))
			return cs_cli_fail(cmd, "%s", err);
		rc = cs_config_parse(&c, text.data ? text.data : "", text.len, conf, err, sizeof err);
		cs_cli_free_file(&text);
		if (rc)
			return cs_cli_fail(cmd, "%s", err);
	}
	if (cs_config_from_env(&c, err, sizeof err))
		return cs_cli_fail(cmd, "%s", err);
	const char *flags[][2] = {{"db", db},	    {"listen", listen}, {"socket", sock},
				  {"token", token}, {"log", logf}, {"sink.clickhouse.url", ship_to}};
	for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
		if (flags[i][1] && cs_config_set(&c, flags[i][0], flags[i][1], err, sizeof err))
			return cs_cli_usage_error(cmd, "--%s", err);
	/* The address first: its syntax is a usage error, a port in use a
	 * failure, and neither leaves a database file behind. */
	if ((rc = cs_http_check_listen(c.listen, err, sizeof err)) == -EINVAL)
		return cs_cli_usage_error(cmd, "--%s", err);
	if (rc < 0)
		return cs_cli_fail(cmd, "%s", err);
	if (read_only)
		c.read_only = 1;
	if (!cs_config_is_loopback(c.listen) && !c.token[0])
		return cs_cli_fail(cmd,
				   "refusing to listen on %s without a token: pass --token (or "
				   "token = ... in the config, or $CYCLESCOPE_TOKEN)",
				   c.listen);
	set_level(c.log_level);
	snprintf(log_path, sizeof log_path, "%s", c.log);
	open_log();

	/* Every thread inherits this mask; signals are taken by sigwait below. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/* The default socket's directory may not exist yet. */
	char dir[512];
	snprintf(dir, sizeof dir, "%s", c.socket);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0750) && errno != EEXIST)
			return cs_cli_fail(cmd, "%s: %s (pass --socket PATH)", dir, strerror(errno));
	}
	cs_store *s = cs_store_open(c.db, CS_OPEN_CREATE, err, sizeof err);
	if (!s)
		return cs_cli_fail(cmd, "%s", err);
	cs_collectors *reg = cs_collectors_new();
	if (!reg) {
		cs_store_close(s);
		return cs_cli_fail(cmd, "out of memory");
	}
	cs_ingest_opts io = {c.socket,	     c.queue_mb << 20,	 c.commit_ms,
			     c.commit_values, c.partial_flush_ms, c.max_connections,
			     reg,	     c.live_flush_ms,	 c.idle_producer_ms};
	/* 64 MiB of page cache a connection: the writer's and every
	 * request's share this much. */
	cs_store_set_process_heap_mb(SERVE_SQLITE_HEAP_MB, SERVE_SQLITE_HARD_HEAP_MB);
	cs_blobcache_set_limit((size_t)SERVE_BLOB_CACHE_MB << 20);
	/* Blocks of 32 MiB and more (frames, answers) are mapped and given back
	 * when freed: glibc otherwise raises this threshold after the first
	 * such free and keeps later ones in its heap, where the budgets above
	 * cannot see them go. Smaller ones (a part of a figure's or a trace's
	 * aggregates) are reused from the heap. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	cs_ingest *in = cs_ingest_start(s, &io, err, sizeof err);
	if (!in) {
		cs_store_close(s);
		cs_collectors_free(reg);
		return cs_cli_fail(cmd, "%s", err);
	}
	parts p = {in, NULL, reg};
	if (c.ch.url[0]) {
		cs_ship_opts so = {.db_path = c.db, .url = c.ch.url, .database = c.ch.database,
				   .prefix = c.ch.table_prefix, .host = c.ch.host, .cluster = c.ch.cluster,
				   .user = c.ch.user, .password = c.ch.password,
				   .batch_rows = c.ch.batch_rows, .interval_ms = c.ch.interval_ms,
				   .timeout_s = c.ch.timeout_s};
		if (!(p.ship = cs_ship_start(&so, err, sizeof err))) {
			cs_ingest_stop(in);
			return cs_cli_fail(cmd, "sink.clickhouse: %s", err);
		}
	}
	cs_http_opts ho = {c.db,
			   c.listen,
			   c.token,
			   (unsigned)c.http_connections,
			   (unsigned)c.http_busy,
			   (unsigned)c.http_timeout_s,
			   (unsigned)c.http_header_timeout_s,
			   (unsigned)c.http_per_ip_connections,
			   c.query_timeout_ms,
			   c.query_max_rows,
			   c.query_max_bytes,
			   metrics_cb,
			   &p,
			   degraded_cb,
			   delete_cb,
			   collectors_cb,
			   select_cb,
			   command_cb,
			   follow_cb,
			   (int)c.read_only,
			   c.http_hosts};
	cs_http *h = cs_http_start(&ho, err, sizeof err);
	if (!h) {
		cs_ship_stop(p.ship);
		cs_ingest_stop(in);
		return cs_cli_fail(cmd, "%s", err);
	}
	char host[128];
	snprintf(host, sizeof host, "%s", c.listen);
	char *colon = strrchr(host, ':');
	if (colon)
		*colon = 0;
	fprintf(stderr, "cyclescope serve: database %s, ingest socket %s, http://%s:%u/\n", c.db,
		c.socket, host, cs_http_port(h));
	/* The line above is for the terminal; a log file gets its own. */
	if (c.log[0])
		cs_log(CS_LOG_INFO, "serving %s on http://%s:%u/ and %s", c.db, host,
		       cs_http_port(h), c.socket);
	sd_notifyf(0, "READY=1\nSTATUS=serving %s on http://%s:%u/ and %s", c.db, host,
		   cs_http_port(h), c.socket);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGHUP) {
			open_log();
			cs_log(CS_LOG_INFO, "log reopened");
			continue;
		}
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: draining the ingest queue");
	cs_log(CS_LOG_INFO, "stopping: draining the ingest queue");
	cs_http_stop(h);
	cs_ship_stop(p.ship);
	rc = cs_ingest_stop(in);
	cs_collectors_free(reg);
	fprintf(stderr, "cyclescope serve: stopped%s\n", rc ? " with a store error (see the log)" : ", everything committed");
	cs_log_set_stream(NULL);
	if (log_file)
		fclose(log_file);
	return rc ? CS_EXIT_FAIL : CS_EXIT_OK;
}
