/*
 * output.c - the collector's output and status line; see output.h.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "producer.h"

struct cs_out {
	cs_out_opts o;
	pthread_mutex_t mu; /* p, which the control link may replace
			       (cs_out_reconnect), and every call on it */
	int begun;          /* under mu: a run began on p */
	int linked;         /* a control link connected: the run's place is
			       the daemon */
	int stale;          /* under mu: p replaced under a run; calls fail
			       until the engine begins the next run */
	cs_store *store;
	cs_producer *p;
	char where[600]; /* "the daemon at PATH" or "FILE" */
	char err[512];
	char msg[512];   /* o_errmsg's copy (the sender thread's) */
};

cs_out *cs_out_new(const cs_out_opts *o)
{
	cs_out *out = calloc(1, sizeof *out);
	if (out) {
		out->o = *o;
		pthread_mutex_init(&out->mu, NULL);
		out->p = o->producer;
		snprintf(out->where, sizeof out->where, "%s", o->producer ? "the given output" : "");
	}
	return out;
}

/* The daemon's socket: 0, or -ENOTCONN with the reason in err. */
static int open_socket(cs_out *out, char *sock, size_t socklen, char *err, size_t errlen)
{
	if (out->o.socket && *out->o.socket)
		snprintf(sock, socklen, "%s", out->o.socket);
	else
		cs_producer_default_socket(sock, socklen);
	out->p = cs_producer_socket(sock, err, errlen);
	if (!out->p)
		return -ENOTCONN;
	cs_producer_set_send_timeout(out->p, out->o.send_timeout_ms);
	/* the run's end waits for the daemon's commit no longer than a
	 * stalled send would */
	cs_producer_set_ack_timeout(out->p, out->o.send_timeout_ms);
	snprintf(out->where, sizeof out->where, "the daemon at %.500s", sock);
	return 0;
}

/* The daemon's socket unless db_only, else (or when no daemon answers)
 * the database file. */
static int out_open(cs_out *out)
{
	char err[512], sock[512];
	if (!out->o.db_only) {
		if (open_socket(out, sock, sizeof sock, err, sizeof err) == 0)
			return 0;
		cs_log(CS_LOG_INFO, "collector: no daemon at %s (%s); writing the database file",
		       sock, err);
	}
	const char *db = out->o.db && *out->o.db ? out->o.db : "cyclescope.db";
	out->store = cs_store_open(db, CS_OPEN_CREATE, err, sizeof err);
	if (!out->store) {
		snprintf(out->err, sizeof out->err, "cannot open %.200s: %.280s", db, err);
		return -EIO;
	}
	out->p = cs_producer_direct(out->store);
	if (!out->p) {
		snprintf(out->err, sizeof out->err, "out of memory");
		return -ENOMEM;
	}
	snprintf(out->where, sizeof out->where, "%.590s", db);
	return 0;
}

static int o_begin(void *ctx, const char *meta)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	out->begun = 1;
	out->stale = 0;
	/* Once a daemon took this collector (its control link), a run that
	 * begins while it is away waits for the reconnection (counted as
	 * dropped until then) rather than going to a file. */
	int rc = out->p ? 0 : out->linked ? -ECONNRESET : out_open(out);
	if (rc == 0) {
		cs_run_info info = out->o.info;
		info.meta = meta;
		rc = cs_producer_begin(out->p, &info);
	}
	pthread_mutex_unlock(&out->mu);
	return rc;
}

cs_producer *cs_out_connect(cs_out *out, char *err, size_t errlen)
{
	char sock[512];
	pthread_mutex_lock(&out->mu);
	if (!out->p && !out->begun && !out->o.db_only &&
	    open_socket(out, sock, sizeof sock, err, errlen) == 0)
		out->linked = 1;
	else if (out->o.db_only)
		snprintf(err, errlen, "the output is the database file only");
	cs_producer *p = out->p && !out->store ? out->p : NULL;
	pthread_mutex_unlock(&out->mu);
	return p;
}

cs_producer *cs_out_reconnect(cs_out *out, const struct cs_wire_msg *first, int *had_run,
			      char *err, size_t errlen)
{
	char sock[512];
	pthread_mutex_lock(&out->mu);
	cs_producer *p = NULL;
	/* a run begun on the lost connection (or on one before it that
	 * failed too) is owed a new one until the engine begins it */
	out->stale |= out->begun;
	out->begun = 0;
	*had_run = out->stale;
	if (out->store || out->o.producer) {
		snprintf(err, errlen, "the run goes to %s, not to a daemon", out->where);
	} else {
		/* the old run ends there as the daemon left it: incomplete */
		cs_producer_free(out->p);
		out->p = NULL;
		if (open_socket(out, sock, sizeof sock, err, errlen) == 0) {
			/* the first frame before the sender can use it: REGISTER
			 * precedes any RUN_BEGIN on the new connection */
			if (!first || cs_producer_send_frame(out->p, first) == 0) {
				p = out->p;
			} else {
				snprintf(err, errlen, "the daemon closed the new connection at once");
				cs_producer_free(out->p);
				out->p = NULL;
			}
		}
	}
	pthread_mutex_unlock(&out->mu);
	return p;
}

void cs_out_child(cs_out *out)
{
	if (out && out->p && !out->o.producer)
		close(cs_producer_fd(out->p));
}

static int o_add_device(void *ctx, const cs_device_info *d)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_add_device(out->p, d);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static int o_add_metric(void *ctx, const cs_metric_info *m, uint32_t *id)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_add_metric(out->p, m, id);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static int o_append(void *ctx, const cs_batch *b)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_append(out->p, b);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static int o_add_range(void *ctx, const cs_range *r)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_add_range(out->p, r);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static int o_flush(void *ctx)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_flush(out->p);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static int o_end(void *ctx, const char *status, const cs_run_counters *c)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	int rc = out->stale || !out->p ? -ECONNRESET : cs_producer_end(out->p, status, c);
	pthread_mutex_unlock(&out->mu);
	return rc;
}

static const char *o_errmsg(void *ctx)
{
	cs_out *out = ctx;
	pthread_mutex_lock(&out->mu);
	/* a copy: the link may free the producer once the lock is gone */
	snprintf(out->msg, sizeof out->msg, "%s",
		 out->stale ? "the daemon's connection was lost; the samples go to a new "
			      "run once the collector has reconnected"
		 : out->p   ? cs_producer_errmsg(out->p)
			    : out->err);
	pthread_mutex_unlock(&out->mu);
	return out->msg;
}

const cs_sink_ops cs_out_sink_ops = {
	.begin = o_begin,
	.add_device = o_add_device,
	.add_metric = o_add_metric,
	.append = o_append,
	.add_range = o_add_range,
	.flush = o_flush,
	.end = o_end,
	.errmsg = o_errmsg,
};

/* One line of tab-separated key=value fields, one write(2) with
 * O_APPEND: lines of concurrent processes (a launcher's workers) never
 * interleave. */
static void status_line(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void status_line(const char *path, const char *fmt, ...)
{
	if (!path || !*path)
		return;
	char line[1024];
	int n = snprintf(line, sizeof line, "pid=%ld\t", (long)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	for (size_t i = (size_t)n; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[len++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, len);
	(void)w;
	close(fd);
}

void cs_out_status_none(const char *path, const char *reason)
{
	status_line(path, "status=none\treason=%s", reason ? reason : "unknown");
}

void cs_out_free(cs_out *o)
{
	if (!o)
		return;
	if (!o->o.producer)
		cs_producer_free(o->p);
	cs_store_close(o->store);
	pthread_mutex_destroy(&o->mu);
	free(o);
}

void cs_out_finish(cs_out *o, int close_rc, const cs_engine_stats *st, const char *why_none)
{
	if (!o)
		return;
	if (!st->run_begun) {
		cs_out_status_none(o->o.status_path,
				   why_none ? why_none : "no GPU work was recorded");
	} else {
		const char *label = o->p ? cs_producer_run_label(o->p) : "";
		status_line(o->o.status_path,
			    "status=%s\trun=%s\twhere=%s\tsamples=%llu\tdropped=%llu\t"
			    "overflows=%llu\tbad_records=%llu\tranges=%llu",
			    close_rc == 0 ? "recorded" : "incomplete", label && *label ? label : "?",
			    o->where, (unsigned long long)st->samples,
			    (unsigned long long)st->dropped, (unsigned long long)st->overflows,
			    (unsigned long long)st->bad_records, (unsigned long long)st->ranges);
	}
	if (close_rc == -ETIMEDOUT)
		return; /* the sender thread may still be in the producer: leak */
	cs_out_free(o);
}
