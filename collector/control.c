/*
 * control.c - the collector's control link; see control.h.
 */
#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "producer.h"
#include "wire.h"

#define MAX_REPLIES 32
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define BACKOFF_RESET_MS 10000 /* a connection that lived this long was good */

typedef struct pending_reply {
	uint32_t id;
	int ok;
	char message[256];
} pending_reply;

struct cs_link {
	cs_link_opts o;
	char *job, *devices, *metrics;
	cs_out *out;
	cs_producer *p; /* the link thread's (set before it starts) */
	int wake[2];    /* wakes the thread: replies queued, stop */
	pthread_t tid;
	int started;

	pthread_mutex_t mu;
	cs_engine *engine;            /* under mu */
	pending_reply q[MAX_REPLIES]; /* under mu */
	unsigned nq;
	int stopping;                 /* under mu */

	/* the link thread's */
	uint8_t buf[8192];
	size_t len;
	uint64_t status_at;
	int backoff;           /* ms before the next reconnection */
	uint64_t connected_at; /* mono ms of the last connection */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* REGISTER with the collector's state now (strings borrowed from l). */
static void register_msg(cs_link *l, cs_wire_msg *m)
{
	pthread_mutex_lock(&l->mu);
	cs_engine *e = l->engine;
	pthread_mutex_unlock(&l->mu);
	memset(m, 0, sizeof *m);
	m->type = CS_WIRE_REGISTER;
	m->u.reg = (cs_wire_register){
		.control = CS_WIRE_CONTROL_VERSION,
		.mode = l->o.mode,
		.state = (uint8_t)(e ? cs_engine_state(e) : CS_ENGINE_IDLE),
		.interval_ns = e ? cs_engine_interval(e) : l->o.min_interval_ns,
		.min_interval_ns = l->o.min_interval_ns,
		.max_interval_ns = l->o.max_interval_ns,
		.job = l->job,
		.devices = l->devices,
		.metrics = l->metrics,
	};
}

static int send_status(cs_link *l)
{
	pthread_mutex_lock(&l->mu);
	cs_engine *e = l->engine;
	pthread_mutex_unlock(&l->mu);
	if (!e)
		return 0; /* nothing to say yet: the next look says it */
	cs_engine_stats st;
	cs_engine_stats_get(e, &st);
	cs_wire_msg m = {.type = CS_WIRE_STATUS};
	m.u.report = (cs_wire_report){(uint8_t)cs_engine_state(e), cs_engine_interval(e),
				      st.samples, st.dropped, st.windows_opened};
	return cs_producer_send_frame(l->p, &m) < 0 ? -1 : 1;
}

static int send_reply(cs_link *l, uint32_t id, int ok, const char *message)
{
	cs_wire_msg m = {.type = CS_WIRE_REPLY};
	m.u.reply = (cs_wire_reply){id, ok ? CS_WIRE_REPLY_DONE : CS_WIRE_REPLY_REFUSED,
				    (char *)message};
	return cs_producer_send_frame(l->p, &m);
}

/* A COMMAND frame: to the engine, or refused here. */
static int command(cs_link *l, const cs_wire_command *k)
{
	pthread_mutex_lock(&l->mu);
	cs_engine *e = l->engine;
	pthread_mutex_unlock(&l->mu);
	cs_engine_cmd c = {.id = k->id, .op = k->op, .value = k->value};
	snprintf(c.name, sizeof c.name, "%s", k->name ? k->name : "");
	int rc = e ? cs_engine_command(e, &c) : -EAGAIN;
	if (rc == 0)
		return 0;
	return send_reply(l, k->id, 0, rc == -EAGAIN ? "the collector is still starting"
							: "the collector is busy or closing");
}

/* Reads what arrived; -1 when the connection is gone or spoke nonsense. */
static int take_input(cs_link *l)
{
	ssize_t n = recv(cs_producer_fd(l->p), l->buf + l->len, sizeof l->buf - l->len, 0);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -1;
	l->len += (size_t)n;
	for (;;) {
		cs_wire_msg m;
		size_t used;
		char err[256];
		int rc = cs_wire_decode(l->buf, l->len, &m, &used, err, sizeof err);
		if (rc == -EAGAIN) {
			if (used > sizeof l->buf) {
				cs_log(CS_LOG_WARN, "collector: a daemon frame of %zu bytes is more than "
				       "a control frame can be; control link closed", used);
				return -1;
			}
			return 0;
		}
		if (rc) {
			/* A frame with a good header and a bad payload is skipped
			 * alone: the stream stays in step, the data connection
			 * with it. Anything else means the stream is lost. */
			size_t whole = l->len >= CS_WIRE_HEADER_LEN
				? CS_WIRE_HEADER_LEN + (size_t)cs_get_u32(l->buf + 8) : 0;
			int framed = whole && cs_get_u32(l->buf) == CS_WIRE_MAGIC &&
				     l->buf[4] == CS_WIRE_VERSION && whole <= sizeof l->buf;
			if (!framed) {
				cs_log(CS_LOG_WARN, "collector: the daemon's stream is out of step (%s); "
				       "reconnecting", err);
				return -1;
			}
			if (whole > l->len)
				return 0; /* the rest of it first */
			cs_log(CS_LOG_WARN, "collector: a malformed frame from the daemon was skipped "
			       "(%s)", err);
			used = whole;
			memmove(l->buf, l->buf + used, l->len - used);
			l->len -= used;
			continue;
		}
		if (m.type == CS_WIRE_COMMAND && command(l, &m.u.command) < 0) {
			cs_wire_msg_free(&m);
			return -1;
		}
		cs_wire_msg_free(&m);
		memmove(l->buf, l->buf + used, l->len - used);
		l->len -= used;
	}
}

/* Waits ms on the wake pipe; 1 when stopping. */
static int nap(cs_link *l, int ms)
{
	struct pollfd pf = {l->wake[0], POLLIN, 0};
	if (poll(&pf, 1, ms) > 0) {
		char junk[64];
		while (read(l->wake[0], junk, sizeof junk) > 0)
			;
	}
	pthread_mutex_lock(&l->mu);
	int stop = l->stopping;
	pthread_mutex_unlock(&l->mu);
	return stop;
}

/* The connection is gone: a new one with a bounded back-off, while no
 * run began on the old one. 0, or -1 to end the link. */
static int reconnect(cs_link *l)
{
	char err[512];
	l->len = 0;
	/* the back-off goes on across connections the daemon cut at once
	 * (a daemon that refuses this collector is not hammered) */
	if (mono_ms() - l->connected_at >= BACKOFF_RESET_MS)
		l->backoff = BACKOFF_MIN_MS;
	cs_log(CS_LOG_WARN, "collector: the daemon closed the control link; reconnecting");
	for (unsigned tries = 1;; tries++) {
		if (nap(l, l->backoff))
			return -1;
		l->backoff = l->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : l->backoff * 2;
		int had_run = 0;
		cs_wire_msg reg;
		register_msg(l, &reg);
		l->p = cs_out_reconnect(l->out, &reg, &had_run, err, sizeof err);
		if (l->p) {
			l->connected_at = mono_ms();
			pthread_mutex_lock(&l->mu);
			cs_engine *e = l->engine;
			pthread_mutex_unlock(&l->mu);
			if (had_run && e)
				cs_engine_sink_reset(e);
			cs_log(CS_LOG_INFO, "collector: registered again with the daemon "
			       "(attempt %u)%s", tries,
			       had_run ? "; what follows goes to a new run" : "");
			return 0;
		}
		if (strstr(err, "not to a daemon")) {
			cs_log(CS_LOG_WARN, "collector: %s; no more commands", err);
			return -1;
		}
	}
}

static void *link_main(void *arg)
{
	cs_link *l = arg;
	unsigned period = l->o.status_ms ? l->o.status_ms : 1000;
	for (;;) {
		pending_reply q[MAX_REPLIES];
		pthread_mutex_lock(&l->mu);
		unsigned nq = l->nq;
		memcpy(q, l->q, nq * sizeof *q);
		l->nq = 0;
		int stop = l->stopping;
		pthread_mutex_unlock(&l->mu);
		if (stop)
			break;
		int lost = 0;
		for (unsigned i = 0; i < nq && !lost; i++)
			lost = send_reply(l, q[i].id, q[i].ok, q[i].message) < 0;
		uint64_t now = mono_ms();
		/* every period, and at once after answers (what a command
		 * changed shows without waiting for the period) */
		if (!lost && (now - l->status_at >= period || nq)) {
			int sent = send_status(l);
			lost = sent < 0;
			if (sent > 0)
				/* after answers once more soon: the samplers start
				 * right after the answer to an OPEN */
				l->status_at = nq && period > 50 ? now - period + 50 : now;
		}
		if (!lost) {
			uint64_t left = l->status_at + period - now;
			struct pollfd pf[2] = {{cs_producer_fd(l->p), POLLIN, 0},
					       {l->wake[0], POLLIN, 0}};
			int r = poll(pf, 2, (int)(left > period ? period : left));
			if (r > 0 && pf[1].revents) {
				char junk[64];
				while (read(l->wake[0], junk, sizeof junk) > 0)
					;
			}
			if (r > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
				lost = take_input(l) < 0;
		}
		if (lost && reconnect(l) < 0)
			break;
	}
	return NULL;
}

cs_link *cs_link_start(const cs_link_opts *o, cs_out *out, char *err, size_t errlen)
{
	cs_producer *p = cs_out_connect(out, err, errlen);
	if (!p)
		return NULL;
	cs_link *l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->o = *o;
	l->out = out;
	l->p = p;
	l->wake[0] = l->wake[1] = -1;
	pthread_mutex_init(&l->mu, NULL);
	/* UTF-8 as the wire wants it (a stray byte becomes U+FFFD) */
	l->job = cs_utf8_fix(o->job ? o->job : "");
	l->devices = cs_utf8_fix(o->devices ? o->devices : "");
	l->metrics = cs_utf8_fix(o->metrics ? o->metrics : "");
	if (!l->job)
		l->job = strdup(o->job ? o->job : "");
	if (!l->devices)
		l->devices = strdup(o->devices ? o->devices : "");
	if (!l->metrics)
		l->metrics = strdup(o->metrics ? o->metrics : "");
	if (!l->job || !l->devices || !l->metrics ||
	    pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "out of memory or descriptors");
		cs_link_free(l);
		return NULL;
	}
	cs_wire_msg reg;
	register_msg(l, &reg);
	if (cs_producer_send_frame(l->p, &reg) < 0) {
		snprintf(err, errlen, "the daemon closed the connection at registration");
		cs_link_free(l);
		return NULL;
	}
	l->connected_at = mono_ms();
	l->backoff = BACKOFF_MIN_MS;
	if (pthread_create(&l->tid, NULL, link_main, l) != 0) {
		snprintf(err, errlen, "cannot start the control thread");
		cs_link_free(l);
		return NULL;
	}
	l->started = 1;
	return l;
}

void cs_link_set_engine(cs_link *l, cs_engine *e)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->engine = e;
	pthread_mutex_unlock(&l->mu);
	if (write(l->wake[1], "e", 1) < 0) {
		/* the pipe is full: the thread wakes anyway */
	}
}

void cs_link_reply_fn(void *ctx, uint32_t id, int ok, const char *message)
{
	cs_link *l = ctx;
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	if (!l->stopping && l->nq < MAX_REPLIES) {
		pending_reply *r = &l->q[l->nq++];
		r->id = id;
		r->ok = ok;
		snprintf(r->message, sizeof r->message, "%s", message ? message : "");
	}
	pthread_mutex_unlock(&l->mu);
	if (write(l->wake[1], "r", 1) < 0) {
		/* the pipe is full: the thread wakes anyway */
	}
}

void cs_link_stop(cs_link *l)
{
	if (!l || !l->started)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = 1;
	pthread_mutex_unlock(&l->mu);
	if (write(l->wake[1], "s", 1) < 0) {
		/* the pipe is full: the thread wakes anyway */
	}
	pthread_join(l->tid, NULL);
	l->started = 0;
	if (l->p && l->len)
		cs_producer_unread(l->p, l->buf, l->len);
	l->len = 0;
}

void cs_link_free(cs_link *l)
{
	if (!l)
		return;
	cs_link_stop(l);
	if (l->wake[0] >= 0)
		close(l->wake[0]);
	if (l->wake[1] >= 0)
		close(l->wake[1]);
	pthread_mutex_destroy(&l->mu);
	free(l->job);
	free(l->devices);
	free(l->metrics);
	free(l);
}
