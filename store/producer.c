/*
 * producer.c - direct and socket producers; see producer.h and
 * docs/protocol.md.
 */
#define _GNU_SOURCE
#include "producer.h"
#include "runs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "wire.h"

/* Keep frames well under the protocol's 64 MiB limit. */
#define MAX_FRAME_BYTES (8u << 20)

struct cs_producer {
	cs_store *s;     /* direct */
	cs_writer *w;    /* direct, the open run */
	int fd;          /* socket, -1 for direct */
	int in_run;
	uint32_t nmetrics;
	int64_t run;
	cs_buf out;
	char label[300];
	char uuid[256];    /* socket: the open (or last) run's uuid */
	unsigned ack_ms;   /* socket: how long a RUN_END waits for its ACK */
	uint64_t acked_samples;
	char errmsg[512];
	const char *labels;    /* merged into each run's meta.labels */
	const cs_range *extra; /* added before a complete end */
	size_t nextra;
	pthread_mutex_t wmu;   /* socket: one frame sequence on the wire at a time */
	uint8_t unread[4096];  /* socket: bytes a control reader took, for wait_ack */
	size_t nunread;
};

static const char *clean(const char *s, char **fixed, int *n);
static void free_fixed(char **fixed, int n);
static int perr(cs_producer *p, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(cs_producer *p, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->errmsg, sizeof p->errmsg, fmt, ap);
	va_end(ap);
	return rc;
}

const char *cs_producer_errmsg(const cs_producer *p) { return p->errmsg; }
const char *cs_producer_run_label(const cs_producer *p) { return p->label; }
int64_t cs_producer_run(const cs_producer *p) { return p->run; }

void cs_producer_default_socket(char *out, size_t outlen)
{
	const char *env = getenv("CYCLESCOPE_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (env && *env)
		snprintf(out, outlen, "%s", env);
	else if (xdg && *xdg)
		snprintf(out, outlen, "%s/cyclescope.sock", xdg);
	else
		snprintf(out, outlen, "/run/cyclescope/ingest.sock");
}

cs_producer *cs_producer_direct(cs_store *s)
{
	cs_producer *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->s = s;
	p->fd = -1;
	pthread_mutex_init(&p->wmu, NULL);
	return p;
}

/* Sends len bytes whole, under wmu: frames of another thread (a control
 * link's) never land inside these. 0 or -errno. */
static int send_all(cs_producer *p, const uint8_t *data, size_t len)
{
	size_t off = 0;
	int rc = 0;
	pthread_mutex_lock(&p->wmu);
	while (off < len) {
		ssize_t n = send(p->fd, data + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	pthread_mutex_unlock(&p->wmu);
	return rc;
}

static int closing_ack(cs_producer *p);

/* Writes the whole of out to the socket; blocks while the daemon applies
 * back-pressure. */
static int flush_out(cs_producer *p)
{
	int rc = p->out.len ? send_all(p, p->out.data, p->out.len) : 0;
	p->out.len = 0;
	if (rc == -EAGAIN || rc == -EWOULDBLOCK)
		return perr(p, -ETIMEDOUT, "sending to the daemon: no progress "
			    "within the send timeout (the daemon stopped reading)");
	if ((rc == -EPIPE || rc == -ECONNRESET) && closing_ack(p))
		return -EIO;
	if (rc)
		return perr(p, rc, "sending to the daemon: %s%s", strerror(-rc),
			    rc == -EPIPE || rc == -ECONNRESET
				    ? " (the daemon closed the connection; its log says why)"
				    : "");
	return 0;
}

int cs_producer_send_frame(cs_producer *p, const cs_wire_msg *m)
{
	if (p->fd < 0)
		return -ENOTCONN;
	cs_buf b = CS_BUF_INIT;
	int rc = cs_wire_encode(&b, m);
	if (!rc)
		rc = send_all(p, b.data, b.len);
	cs_buf_free(&b);
	return rc;
}

int cs_producer_fd(const cs_producer *p) { return p->fd; }

void cs_producer_unread(cs_producer *p, const void *data, size_t len)
{
	if (len > sizeof p->unread - p->nunread)
		len = sizeof p->unread - p->nunread;
	memcpy(p->unread + p->nunread, data, len);
	p->nunread += len;
}

static int send_msg(cs_producer *p, const cs_wire_msg *m)
{
	int rc = cs_wire_encode(&p->out, m);
	if (rc)
		return perr(p, rc, "encoding a %s frame: %s", cs_wire_type_name(m->type),
			    strerror(-rc));
	return p->out.len >= (1u << 16) ? flush_out(p) : 0;
}

cs_producer *cs_producer_socket(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return NULL;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	/* Non-blocking for the connect: a daemon that stopped accepting (its
	 * backlog full) is an error at once, never a hang in the caller (an
	 * application's cuInit, for the collector). Blocking afterwards. */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot reach the daemon: %s", path,
			 e == EAGAIN ? "it accepts no more connections now (its backlog is full)"
				     : strerror(e));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	cs_producer *p = calloc(1, sizeof *p);
	if (!p) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->fd = fd;
	p->ack_ms = CS_PRODUCER_ACK_MS;
	pthread_mutex_init(&p->wmu, NULL);
	char host[256] = "", cmdline[4096] = "";
	gethostname(host, sizeof host - 1);
	/* who is sending: the process's command line, arguments by spaces */
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(cmdline, 1, sizeof cmdline - 1, f) : 0;
	if (f)
		fclose(f);
	for (size_t i = 0; n && i < n - 1; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	cmdline[n] = '\0';
	char *fixed[1];
	int nfixed = 0;
	cs_wire_msg m = {.type = CS_WIRE_HELLO};
	m.u.hello = (cs_wire_hello){(uint32_t)getpid(), host,
				    (char *)clean(cmdline, fixed, &nfixed), "0.1.0"};
	int rc = send_msg(p, &m) || flush_out(p);
	free_fixed(fixed, nfixed);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, p->errmsg);
		cs_producer_free(p);
		return NULL;
	}
	return p;
}

static int begin_run(cs_producer *p, const cs_run_info *info)
{
	if (p->in_run)
		return perr(p, -EBUSY, "a run is already open");
	p->nmetrics = 0;
	if (p->fd < 0) {
		char err[512];
		p->w = cs_writer_begin(p->s, info, err, sizeof err);
		if (!p->w)
			return perr(p, -EINVAL, "%s", err);
		p->run = cs_writer_run(p->w);
		snprintf(p->label, sizeof p->label, "run %lld", (long long)p->run);
		p->in_run = 1;
		return 0;
	}
	char uuid[37];
	if (!info->uuid)
		cs_store_uuid(uuid);
	else if (strlen(info->uuid) >= sizeof p->uuid)
		return perr(p, -EINVAL, "a run uuid of %zu bytes (at most %zu)", strlen(info->uuid),
			    sizeof p->uuid - 1);
	cs_wire_msg m = {.type = CS_WIRE_RUN_BEGIN};
	m.u.run_begin = (cs_wire_run_begin){
		.kind = strcmp(info->kind, "sim") ? CS_WIRE_KIND_HW : CS_WIRE_KIND_SIM,
		.time_unit = strcmp(info->time_unit, "cycle") ? CS_WIRE_UNIT_NS : CS_WIRE_UNIT_CYCLE,
		.start_ns = info->start_ns,
		.clock_hz = info->clock_hz,
		.uuid = (char *)(info->uuid ? info->uuid : uuid),
		.source = (char *)info->source,
		.name = (char *)info->name,
		.meta = (char *)info->meta,
	};
	snprintf(p->uuid, sizeof p->uuid, "%s", info->uuid ? info->uuid : uuid);
	snprintf(p->label, sizeof p->label, "run %s", p->uuid);
	p->run = 0;
	int rc = send_msg(p, &m);
	if (!rc)
		p->in_run = 1;
	return rc;
}

static int add_device(cs_producer *p, const cs_device_info *d)
{
	if (p->fd < 0) {
		int rc = cs_writer_add_device(p->w, d);
		return rc ? perr(p, rc, "%s", cs_store_errmsg(p->s)) : 0;
	}
	cs_wire_msg m = {.type = CS_WIRE_DEVICE};
	m.u.device = (cs_wire_device){d->index,	      d->sm_count,	   d->clock_hz,
				      d->mem_clock_hz, (char *)d->name, (char *)d->chip,
				      (char *)d->uuid};
	return send_msg(p, &m);
}

static int add_metric(cs_producer *p, const cs_metric_info *mi, uint32_t *id)
{
	if (p->fd < 0) {
		int rc = cs_writer_add_metric(p->w, mi, id);
		return rc ? perr(p, rc, "%s", cs_store_errmsg(p->s)) : 0;
	}
	if (!mi->name || !*mi->name)
		return perr(p, -EINVAL, "metric name is empty");
	int kind = cs_wire_metric_kind_from_name(mi->kind ? mi->kind : "counter");
	if (kind < 0)
		return perr(p, -EINVAL, "metric %s: unknown kind '%s'", mi->name, mi->kind);
	cs_wire_metric wm = {p->nmetrics, (uint8_t)kind, (uint8_t)!!mi->cumulative,
			     (char *)mi->name, (char *)mi->unit};
	cs_wire_msg m = {.type = CS_WIRE_METRICS};
	m.u.metrics = (cs_wire_metrics){1, &wm};
	int rc = send_msg(p, &m);
	if (!rc)
		*id = p->nmetrics++;
	return rc;
}

int cs_producer_append(cs_producer *p, const cs_batch *b)
{
	if (p->fd < 0) {
		int rc = cs_writer_append(p->w, b);
		return rc ? perr(p, rc, "%s", cs_store_errmsg(p->s)) : 0;
	}
	size_t per_sample = 16 + (size_t)b->m * 8;
	uint32_t step = (uint32_t)(MAX_FRAME_BYTES / per_sample);
	if (step == 0)
		step = 1;
	if (step > CS_WIRE_MAX_SAMPLES)
		step = CS_WIRE_MAX_SAMPLES;
	for (uint32_t i = 0; i < b->n; i += step) {
		uint32_t n = b->n - i < step ? b->n - i : step;
		cs_wire_msg m = {.type = CS_WIRE_SAMPLES};
		m.u.samples = (cs_wire_samples){b->device,
						b->m,
						n,
						b->seq0 + i,
						(uint32_t *)b->metrics,
						(uint64_t *)b->t0 + i,
						(uint64_t *)b->t1 + i,
						(double *)b->values + (size_t)i * b->m};
		int rc = send_msg(p, &m);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_range(cs_producer *p, const cs_range *r)
{
	if (p->fd < 0) {
		int rc = cs_writer_add_range(p->w, r);
		return rc ? perr(p, rc, "%s", cs_store_errmsg(p->s)) : 0;
	}
	unsigned kind = cs_wire_range_kind_from_name(r->kind ? r->kind : "");
	if (!kind)
		return perr(p, -EINVAL, "unknown range kind '%s'", r->kind ? r->kind : "");
	cs_wire_range wr = {(uint8_t)kind, r->t0, r->t1, r->device, r->stream, r->correlation_id,
			    r->pid, r->tid, r->bytes, (char *)r->name};
	cs_wire_msg m = {.type = CS_WIRE_RANGES};
	m.u.ranges = (cs_wire_ranges){1, &wr};
	return send_msg(p, &m);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to ms for the daemon's ACK of the run just ended: the run is
 * committed when it comes. Frames of other types are skipped. With ms 0 it
 * reads only what has already arrived. */
static int wait_ack(cs_producer *p, unsigned ms)
{
	uint8_t buf[4096];
	size_t len = p->nunread;
	memcpy(buf, p->unread, len);
	p->nunread = 0;
	int64_t deadline = mono_ms() + ms;
	for (;;) {
		cs_wire_msg m;
		size_t used;
		char err[256];
		int rc = cs_wire_decode(buf, len, &m, &used, err, sizeof err);
		if (rc == 0) {
			memmove(buf, buf + used, len - used);
			len -= used;
			if (m.type != CS_WIRE_ACK) {
				cs_wire_msg_free(&m);
				continue;
			}
			cs_wire_ack a = m.u.ack;
			if (strcmp(a.uuid, p->uuid))
				rc = perr(p, -EPROTO, "the daemon acknowledged run %s, not %s", a.uuid, p->uuid);
			else if (a.status == CS_WIRE_ACK_FAILED)
				rc = perr(p, -EIO, "the daemon could not store %s: %s", p->label, a.message);
			else
				p->acked_samples = a.samples;
			cs_wire_msg_free(&m);
			return rc;
		}
		if (rc != -EAGAIN || used > sizeof buf)
			return perr(p, -EPROTO, "reading the daemon's answer: %s",
				    rc == -EAGAIN ? "frame too long" : err);
		int64_t left = deadline - mono_ms();
		struct pollfd pf = {p->fd, POLLIN, 0};
		int r = left > 0 || !ms ? poll(&pf, 1, left > 0 ? (int)left : 0) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return perr(p, -ETIMEDOUT, "the daemon did not acknowledge %s within %u ms: "
				    "it may not have stored it (the daemon's log says why)",
				    p->label, ms);
		ssize_t n = r < 0 ? -1 : recv(p->fd, buf + len, sizeof buf - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return perr(p, -ECONNRESET, "the daemon closed the connection before "
				    "acknowledging %s: it was not stored, or not all of it (the "
				    "daemon's log says why)", p->label);
		len += (size_t)n;
	}
}

/* The daemon closed the connection: an ACK of this run it sent first
 * (status 4: the disk is full, the run refused) says why. 1 when one did
 * (p's error is its message). */
static int closing_ack(cs_producer *p)
{
	return wait_ack(p, 0) == -EIO;
}

static int send_end(cs_producer *p, uint8_t status, const cs_run_counters *c)
{
	cs_wire_msg m = {.type = CS_WIRE_RUN_END};
	m.u.run_end = (cs_wire_run_end){status, 0, 0, c ? c->dropped : 0, c ? c->overflows : 0,
					c ? c->bad_records : 0, c ? c->empty_samples : 0};
	int rc = send_msg(p, &m);
	rc = rc ? rc : flush_out(p);
	return rc || !p->ack_ms ? rc : wait_ack(p, p->ack_ms);
}

void cs_producer_extra_ranges(cs_producer *p, const cs_range *r, size_t n)
{
	p->extra = r;
	p->nextra = n;
}

int cs_producer_end(cs_producer *p, const char *status, const cs_run_counters *c)
{
	if (!p->in_run)
		return perr(p, -EINVAL, "no run is open");
	for (size_t i = 0; status && !strcmp(status, "complete") && i < p->nextra; i++) {
		int rc = cs_producer_add_range(p, &p->extra[i]);
		if (rc < 0)
			return rc;
	}
	p->in_run = 0;
	if (p->fd < 0) {
		cs_writer *w = p->w;
		p->w = NULL;
		int rc = cs_writer_end(w, status, c);
		return rc ? perr(p, rc, "%s", cs_store_errmsg(p->s)) : 0;
	}
	return send_end(p, status && !strcmp(status, "complete") ? CS_WIRE_COMPLETE
								: CS_WIRE_INCOMPLETE,
			c);
}

int cs_producer_set_send_timeout(cs_producer *p, unsigned ms)
{
	if (p->fd < 0)
		return 0;
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	return setsockopt(p->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) ? -errno : 0;
}

int cs_producer_flush(cs_producer *p) { return p->fd < 0 ? 0 : flush_out(p); }

void cs_producer_set_ack_timeout(cs_producer *p, unsigned ms) { p->ack_ms = ms; }

uint64_t cs_producer_acked_samples(const cs_producer *p) { return p->acked_samples; }

void cs_producer_discard(cs_producer *p)
{
	if (!p || !p->in_run)
		return;
	p->in_run = 0;
	if (p->fd < 0) {
		cs_writer_discard(p->w);
		p->w = NULL;
		return;
	}
	send_end(p, CS_WIRE_DISCARD, NULL);
}

void cs_producer_free(cs_producer *p)
{
	if (!p)
		return;
	if (p->in_run)
		cs_producer_end(p, "incomplete", NULL);
	if (p->fd >= 0) {
		flush_out(p);
		close(p->fd);
	}
	cs_buf_free(&p->out);
	pthread_mutex_destroy(&p->wmu);
	free(p);
}

/* ---- text from elsewhere is made UTF-8 before it is stored or sent ----
 * (the wire refuses other bytes; a stray byte becomes U+FFFD) */

/* s, or its UTF-8-clean copy, which is added to fixed[] to be freed. */
static const char *clean(const char *s, char **fixed, int *n)
{
	char *f = cs_utf8_fix(s);
	if (!f)
		return s;
	fixed[(*n)++] = f;
	return f;
}

static void free_fixed(char **fixed, int n)
{
	while (n--)
		free(fixed[n]);
}

void cs_producer_labels(cs_producer *p, const char *labels)
{
	p->labels = labels;
}

int cs_producer_begin(cs_producer *p, const cs_run_info *info)
{
	char *fixed[7];
	int n = 0;
	cs_run_info c = *info;
	if (p->labels) {
		char *merged;
		int rc = cs_meta_with_labels(c.meta, p->labels, &merged);
		if (rc)
			return perr(p, rc, "labels %s: expected a JSON object of strings", p->labels);
		fixed[n++] = merged;
		c.meta = merged;
	}
	c.source = clean(c.source, fixed, &n);
	c.name = clean(c.name, fixed, &n);
	c.host = clean(c.host, fixed, &n);
	c.cmdline = clean(c.cmdline, fixed, &n);
	c.meta = clean(c.meta, fixed, &n);
	c.uuid = clean(c.uuid, fixed, &n);
	int rc = begin_run(p, &c);
	free_fixed(fixed, n);
	return rc;
}

int cs_producer_add_device(cs_producer *p, const cs_device_info *d)
{
	char *fixed[3];
	int n = 0;
	cs_device_info c = *d;
	c.name = clean(c.name, fixed, &n);
	c.chip = clean(c.chip, fixed, &n);
	c.uuid = clean(c.uuid, fixed, &n);
	int rc = add_device(p, &c);
	free_fixed(fixed, n);
	return rc;
}

static cs_unit_fn unit_source;

void cs_producer_unit_source(cs_unit_fn fn)
{
	unit_source = fn;
}

int cs_producer_add_metric(cs_producer *p, const cs_metric_info *mi, uint32_t *id)
{
	char *fixed[2];
	int n = 0;
	cs_metric_info c = *mi;
	if ((!c.unit || !*c.unit) && unit_source && c.name)
		c.unit = unit_source(c.name);
	c.name = clean(c.name, fixed, &n);
	c.unit = clean(c.unit, fixed, &n);
	int rc = add_metric(p, &c, id);
	free_fixed(fixed, n);
	return rc;
}

int cs_producer_add_range(cs_producer *p, const cs_range *r)
{
	char *fixed[1];
	int n = 0;
	cs_range c = *r;
	c.name = clean(c.name, fixed, &n);
	int rc = add_range(p, &c);
	free_fixed(fixed, n);
	return rc;
}
