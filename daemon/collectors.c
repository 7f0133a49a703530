/*
 * collectors.c - the registry of live collectors; see collectors.h.
 */
#define _GNU_SOURCE
#include "collectors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "csv.h"
#include "json.h"
#include "log.h"
#include "prom.h"

typedef struct entry {
	struct entry *next;
	uint64_t id;
	int fd;
	pthread_mutex_t *fd_mu;
	int64_t pid;
	char *host, *cmdline, *job, *devices, *metrics;
	uint8_t mode, state;
	uint64_t interval_ns, min_interval_ns, max_interval_ns;
	uint64_t samples, dropped, windows;
	double samples_per_s;
	uint64_t status_ms;   /* monotonic ms of the last STATUS */
	uint64_t since_ns;    /* wall clock at REGISTER */
	int64_t run;          /* 0 = none yet */
	char uuid[64];
	double tokens;        /* rate limit */
	uint64_t tokens_ms;
	uint64_t commands, refused, limited;
} entry;

/* A command waiting for its REPLY. */
typedef struct waiter {
	struct waiter *next;
	uint64_t conn;
	uint32_t cmd;
	int done, ok, gone;
	char msg[256];
} waiter;

struct cs_collectors {
	pthread_mutex_t mu;
	pthread_cond_t replied;
	entry *list;
	waiter *waiting;
	uint32_t next_cmd;
	uint64_t commands, refused, limited; /* over every collector ever */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

cs_collectors *cs_collectors_new(void)
{
	cs_collectors *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&r->replied, &a);
	pthread_condattr_destroy(&a);
	return r;
}

static void entry_free(entry *e)
{
	free(e->host);
	free(e->cmdline);
	free(e->job);
	free(e->devices);
	free(e->metrics);
	free(e);
}

void cs_collectors_free(cs_collectors *r)
{
	if (!r)
		return;
	while (r->list) {
		entry *e = r->list;
		r->list = e->next;
		entry_free(e);
	}
	pthread_cond_destroy(&r->replied);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static entry *find(cs_collectors *r, uint64_t id)
{
	for (entry *e = r->list; e; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

static void set_str(char **dst, const char *s)
{
	char *c = strdup(s ? s : "");
	if (c) {
		free(*dst);
		*dst = c;
	}
}

void cs_collectors_register(cs_collectors *r, uint64_t id, int fd, pthread_mutex_t *fd_mu,
			    int64_t pid, const char *host, const char *cmdline,
			    const cs_wire_register *g)
{
	pthread_mutex_lock(&r->mu);
	entry *e = find(r, id);
	if (!e && (e = calloc(1, sizeof *e))) {
		e->id = id;
		e->since_ns = wall_ns();
		e->tokens = CS_COLLECTORS_BURST;
		e->tokens_ms = mono_ms();
		e->next = r->list;
		r->list = e;
	}
	if (e) {
		e->fd = fd;
		e->fd_mu = fd_mu;
		e->pid = pid;
		set_str(&e->host, host);
		set_str(&e->cmdline, cmdline);
		set_str(&e->job, g->job);
		set_str(&e->devices, g->devices);
		set_str(&e->metrics, g->metrics);
		e->mode = g->mode;
		e->state = g->state;
		e->interval_ns = g->interval_ns;
		e->min_interval_ns = g->min_interval_ns;
		e->max_interval_ns = g->max_interval_ns;
		e->status_ms = mono_ms();
	}
	pthread_mutex_unlock(&r->mu);
	cs_log(CS_LOG_INFO, "collectors: %llu registered: pid %lld on %s%s%s",
	       (unsigned long long)id, (long long)pid, host && *host ? host : "?",
	       g->job && *g->job ? ", job " : "", g->job && *g->job ? g->job : "");
}

void cs_collectors_status(cs_collectors *r, uint64_t id, const cs_wire_report *s)
{
	pthread_mutex_lock(&r->mu);
	entry *e = find(r, id);
	if (e) {
		uint64_t now = mono_ms();
		if (now > e->status_ms && s->samples >= e->samples)
			e->samples_per_s = (double)(s->samples - e->samples) * 1000.0 /
					   (double)(now - e->status_ms);
		e->status_ms = now;
		e->state = s->state;
		e->interval_ns = s->interval_ns;
		e->samples = s->samples;
		e->dropped = s->dropped;
		e->windows = s->windows;
	}
	pthread_mutex_unlock(&r->mu);
}

void cs_collectors_reply(cs_collectors *r, uint64_t id, const cs_wire_reply *y)
{
	pthread_mutex_lock(&r->mu);
	for (waiter *w = r->waiting; w; w = w->next) {
		if (w->conn == id && w->cmd == y->id) {
			w->done = 1;
			w->ok = y->status == CS_WIRE_REPLY_DONE;
			snprintf(w->msg, sizeof w->msg, "%s", y->message ? y->message : "");
			pthread_cond_broadcast(&r->replied);
		}
	}
	entry *e = find(r, id);
	if (e && y->status != CS_WIRE_REPLY_DONE) {
		e->refused++;
		r->refused++;
	}
	pthread_mutex_unlock(&r->mu);
}

void cs_collectors_gone(cs_collectors *r, uint64_t id)
{
	pthread_mutex_lock(&r->mu);
	for (entry **p = &r->list; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			entry *e = *p;
			*p = e->next;
			entry_free(e);
			break;
		}
	}
	for (waiter *w = r->waiting; w; w = w->next)
		if (w->conn == id) {
			w->gone = 1;
			pthread_cond_broadcast(&r->replied);
		}
	pthread_mutex_unlock(&r->mu);
}

void cs_collectors_set_run(cs_collectors *r, uint64_t id, int64_t run, const char *uuid)
{
	pthread_mutex_lock(&r->mu);
	entry *e = find(r, id);
	if (e) {
		e->run = run;
		snprintf(e->uuid, sizeof e->uuid, "%s", uuid ? uuid : "");
	}
	pthread_mutex_unlock(&r->mu);
}

static const char *mode_name(uint8_t m)
{
	return m == CS_WIRE_MODE_ARMED ? "armed" : m == CS_WIRE_MODE_WINDOW ? "window"
									      : "continuous";
}

static const char *state_name(uint8_t s)
{
	return s == CS_WIRE_STATE_SAMPLING ? "sampling" : s == CS_WIRE_STATE_OFF ? "off"
										  : "idle";
}

static void key_u64(cs_buf *b, int *first, const char *k, uint64_t v)
{
	cs_json_key(b, first, k);
	cs_json_i64(b, (int64_t)v);
}

static void key_str(cs_buf *b, int *first, const char *k, const char *v)
{
	cs_json_key(b, first, k);
	cs_json_str(b, v ? v : "");
}

static void json_entry(cs_buf *out, const entry *e, uint64_t now)
{
	int first = 1;
	cs_json_raw(out, "{");
	key_u64(out, &first, "id", e->id);
	cs_json_key(out, &first, "pid");
	cs_json_i64(out, e->pid);
	key_str(out, &first, "host", e->host);
	key_str(out, &first, "cmdline", e->cmdline);
	key_str(out, &first, "job", e->job);
	key_str(out, &first, "mode", mode_name(e->mode));
	key_str(out, &first, "state", state_name(e->state));
	key_str(out, &first, "devices", e->devices);
	key_str(out, &first, "metrics", e->metrics);
	key_u64(out, &first, "interval_ns", e->interval_ns);
	key_u64(out, &first, "min_interval_ns", e->min_interval_ns);
	key_u64(out, &first, "max_interval_ns", e->max_interval_ns);
	key_u64(out, &first, "samples", e->samples);
	cs_json_key(out, &first, "samples_per_s");
	cs_json_f64(out, e->samples_per_s);
	key_u64(out, &first, "dropped", e->dropped);
	key_u64(out, &first, "windows", e->windows);
	key_u64(out, &first, "commands", e->commands);
	key_u64(out, &first, "refused", e->refused);
	key_u64(out, &first, "rate_limited", e->limited);
	key_u64(out, &first, "since_ns", e->since_ns);
	key_u64(out, &first, "status_age_ms", now - e->status_ms);
	cs_json_key(out, &first, "run");
	if (e->run) {
		cs_json_str(out, e->uuid);
		key_u64(out, &first, "run_id", (uint64_t)e->run);
	} else {
		cs_json_raw(out, "null");
	}
	cs_json_raw(out, "}");
}

/* The row's fields, as the text table and the CSV show them. */
#define NCOLS 11
static void row_fields(const entry *e, char f[NCOLS][96], const char *cols[NCOLS])
{
	snprintf(f[0], 96, "%llu", (unsigned long long)e->id);
	snprintf(f[1], 96, "%lld", (long long)e->pid);
	snprintf(f[2], 96, "%.95s", e->host);
	snprintf(f[3], 96, "%.95s", *e->job ? e->job : "-");
	snprintf(f[4], 96, "%s", mode_name(e->mode));
	snprintf(f[5], 96, "%s", state_name(e->state));
	snprintf(f[6], 96, "%.95s", e->devices);
	snprintf(f[7], 96, "%.0f", e->samples_per_s);
	snprintf(f[8], 96, "%llu", (unsigned long long)e->dropped);
	snprintf(f[9], 96, "%.95s", e->run ? e->uuid : "-");
	for (int i = 0; i < NCOLS - 1; i++)
		cols[i] = f[i];
	cols[NCOLS - 1] = e->cmdline;
}

void cs_collectors_list(cs_collectors *r, int format, cs_buf *out)
{
	static const char *const head[NCOLS] = {"id", "pid", "host", "job", "mode", "state",
						"devices", "samples_per_s", "dropped", "run",
						"cmdline"};
	pthread_mutex_lock(&r->mu);
	uint64_t now = mono_ms(); /* after the lock: no STATUS is newer */
	size_t n = 0;
	for (entry *e = r->list; e; e = e->next)
		n++;
	entry **v = calloc(n ? n : 1, sizeof *v);
	size_t i = n;
	for (entry *e = r->list; v && e; e = e->next)
		v[--i] = e; /* oldest first: the list is newest first */
	if (!v)
		n = 0;
	if (format == CS_COLLECTORS_JSON) {
		cs_json_raw(out, "[");
		for (i = 0; i < n; i++) {
			if (i)
				cs_json_raw(out, ",");
			json_entry(out, v[i], now);
		}
		cs_json_raw(out, "]");
	} else if (format == CS_COLLECTORS_CSV) {
		/* RFC 4180, as every CSV of the daemon */
		cs_csv w;
		cs_csv_init(&w, cs_csv_buf_sink, out);
		for (int k = 0; k < NCOLS; k++)
			cs_csv_str(&w, head[k]);
		cs_csv_end_row(&w);
		for (i = 0; i < n; i++) {
			char f[NCOLS][96];
			const char *cols[NCOLS];
			row_fields(v[i], f, cols);
			for (int k = 0; k < NCOLS; k++)
				cs_csv_str(&w, cols[k]);
			cs_csv_end_row(&w);
		}
		cs_csv_finish(&w);
	} else {
		size_t w[NCOLS];
		for (int k = 0; k < NCOLS; k++)
			w[k] = strlen(head[k]);
		for (i = 0; i < n; i++) {
			char f[NCOLS][96];
			const char *cols[NCOLS];
			row_fields(v[i], f, cols);
			for (int k = 0; k < NCOLS - 1; k++)
				if (strlen(cols[k]) > w[k])
					w[k] = strlen(cols[k]);
		}
		char line[2048];
		for (size_t row = 0; row <= n; row++) {
			char f[NCOLS][96];
			const char *cols[NCOLS];
			if (row)
				row_fields(v[row - 1], f, cols);
			size_t len = 0;
			for (int k = 0; k < NCOLS; k++) {
				const char *c = row ? cols[k] : head[k];
				int right = k == 0 || k == 1 || k == 7 || k == 8;
				int width = (int)w[k];
				if (k == NCOLS - 1)
					len += (size_t)snprintf(line + len, sizeof line - len, "%s", c);
				else if (right)
					len += (size_t)snprintf(line + len, sizeof line - len, "%*s  ",
								width, c);
				else
					len += (size_t)snprintf(line + len, sizeof line - len, "%-*s  ",
								width, c);
				if (len >= sizeof line)
					len = sizeof line - 1;
			}
			cs_buf_append(out, line, len);
			cs_buf_put_u8(out, '\n');
		}
		if (!n)
			cs_buf_append(out, "(no live collectors)\n", 21);
	}
	pthread_mutex_unlock(&r->mu);
	free(v);
}

void cs_collectors_metrics_text(cs_collectors *r, cs_buf *out)
{
	uint64_t live = 0, sampling = 0;
	pthread_mutex_lock(&r->mu);
	for (entry *e = r->list; e; e = e->next) {
		live++;
		sampling += e->state == CS_WIRE_STATE_SAMPLING;
	}
	uint64_t commands = r->commands, refused = r->refused, limited = r->limited;
	pthread_mutex_unlock(&r->mu);
	cs_prom_metric(out, "cyclescope_collectors", "gauge",
		       "Live collectors registered with this daemon", live);
	cs_prom_metric(out, "cyclescope_collectors_sampling", "gauge",
		       "Live collectors sampling now", sampling);
	cs_prom_metric(out, "cyclescope_collector_commands_total", "counter",
		       "Commands sent to collectors", commands);
	cs_prom_metric(out, "cyclescope_collector_commands_refused_total", "counter",
		       "Commands collectors refused", refused);
	cs_prom_metric(out, "cyclescope_collector_commands_limited_total", "counter",
		       "Commands refused by the rate limit", limited);
}

size_t cs_collectors_select(cs_collectors *r, int64_t pid, const char *job, uint64_t *ids,
			    size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&r->mu);
	for (entry *e = r->list; e && n < max; e = e->next)
		if ((pid < 0 || e->pid == pid) && (!job || !*job || !strcmp(e->job, job)))
			ids[n++] = e->id;
	pthread_mutex_unlock(&r->mu);
	for (size_t i = 0; i < n / 2; i++) { /* newest first: oldest first */
		uint64_t t = ids[i];
		ids[i] = ids[n - 1 - i];
		ids[n - 1 - i] = t;
	}
	return n;
}

/* Takes a token from e's bucket; 0 when none is left. Under mu. */
static int take_token(entry *e)
{
	uint64_t now = mono_ms();
	e->tokens += (double)(now - e->tokens_ms) * CS_COLLECTORS_RATE / 1000.0;
	if (e->tokens > CS_COLLECTORS_BURST)
		e->tokens = CS_COLLECTORS_BURST;
	e->tokens_ms = now;
	if (e->tokens < 1.0)
		return 0;
	e->tokens -= 1.0;
	return 1;
}

/* Sends the command to e, under r->mu; 0 with the waiter linked in, or
 * the refusal in res. */
static int send_one(cs_collectors *r, entry *e, int op, uint64_t value, const char *name,
		    waiter *w, cs_collector_result *res)
{
	if (!take_token(e)) {
		e->limited++;
		r->limited++;
		snprintf(res->msg, sizeof res->msg, "collector %llu takes at most %d commands at "
			 "once and %.0f a second; retry in %.1f s", (unsigned long long)e->id,
			 CS_COLLECTORS_BURST, CS_COLLECTORS_RATE,
			 (1.0 - e->tokens) / CS_COLLECTORS_RATE);
		return res->rc = -EAGAIN;
	}
	uint32_t cmd = ++r->next_cmd;
	cs_wire_msg m = {.type = CS_WIRE_COMMAND};
	m.u.command = (cs_wire_command){cmd, (uint8_t)op, value, (char *)name};
	cs_buf b = CS_BUF_INIT;
	int rc = cs_wire_encode(&b, &m);
	if (!rc) {
		/* never blocks: a collector that stopped reading loses it; a
		 * frame sent in part would put the stream out of step, so the
		 * connection is cut then (the collector reconnects) */
		pthread_mutex_lock(e->fd_mu);
		ssize_t n = send(e->fd, b.data, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0 && n < (ssize_t)b.len)
			shutdown(e->fd, SHUT_RDWR);
		pthread_mutex_unlock(e->fd_mu);
		rc = n == (ssize_t)b.len ? 0 : -EPIPE;
	}
	cs_buf_free(&b);
	if (rc) {
		snprintf(res->msg, sizeof res->msg, "collector %llu's connection did not take "
			 "the command", (unsigned long long)e->id);
		return res->rc = -EPIPE;
	}
	e->commands++;
	r->commands++;
	*w = (waiter){.next = r->waiting, .conn = e->id, .cmd = cmd};
	r->waiting = w;
	return 0;
}

int cs_collectors_command(cs_collectors *r, const uint64_t *ids, size_t n, int op,
			  uint64_t value, const char *name, unsigned wait_ms,
			  cs_collector_result *res)
{
	waiter *w = calloc(n ? n : 1, sizeof *w);
	if (!w) {
		for (size_t i = 0; i < n; i++) {
			res[i].rc = -ENOMEM;
			snprintf(res[i].msg, sizeof res[i].msg, "out of memory");
		}
		return -ENOMEM;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += wait_ms / 1000;
	ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->mu);
	/* every command out first, then every answer awaited against one
	 * deadline: eight ranks start their windows together */
	for (size_t i = 0; i < n; i++) {
		res[i].id = ids[i];
		res[i].rc = 1; /* sent, not answered */
		res[i].msg[0] = '\0';
		entry *e = find(r, ids[i]);
		if (!e) {
			res[i].rc = -ENOENT;
			snprintf(res[i].msg, sizeof res[i].msg, "no live collector %llu",
				 (unsigned long long)ids[i]);
		} else {
			send_one(r, e, op, value, name, &w[i], &res[i]);
		}
	}
	for (;;) {
		int pending = 0;
		for (size_t i = 0; i < n; i++)
			pending |= res[i].rc == 1 && !w[i].done && !w[i].gone;
		if (!pending || pthread_cond_timedwait(&r->replied, &r->mu, &ts) == ETIMEDOUT)
			break;
	}
	for (size_t i = 0; i < n; i++) {
		if (res[i].rc != 1)
			continue;
		for (waiter **p = &r->waiting; *p; p = &(*p)->next)
			if (*p == &w[i]) {
				*p = w[i].next;
				break;
			}
		if (w[i].done) {
			snprintf(res[i].msg, sizeof res[i].msg, "%s", w[i].msg);
			res[i].rc = w[i].ok ? 0 : -EPERM;
		} else if (w[i].gone) {
			snprintf(res[i].msg, sizeof res[i].msg, "collector %llu went away before "
				 "answering", (unsigned long long)ids[i]);
			res[i].rc = -ENOENT;
		} else {
			snprintf(res[i].msg, sizeof res[i].msg, "collector %llu did not answer "
				 "within %u ms", (unsigned long long)ids[i], wait_ms);
			res[i].rc = -ETIMEDOUT;
		}
	}
	pthread_mutex_unlock(&r->mu);
	free(w);
	return 0;
}
