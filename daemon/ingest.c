/*
 * ingest.c - socket readers, the bounded queue and the single writer
 * thread; see ingest.h.
 */
#define _GNU_SOURCE
#include "ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "collectors.h"
#include "log.h"
#include "reader.h"
#include "prom.h"
#include "wire.h"

/* What the writer knows about one connection. Created by the accept loop,
 * owned by the writer thread from the first queued item, freed by it on
 * the connection's CLOSE item. */
typedef struct conn_state {
	struct cs_ingest *in;
	uint64_t id;
	atomic_int abort;      /* set by the writer: the reader closes the socket */
	/* The socket, for the writer to cut a failed connection at once (the
	 * reader may be blocked in read()): valid while !reader_done, which
	 * the reader sets before the accept loop may close the fd. */
	pthread_mutex_t fd_mu;
	int fd;
	int reader_done;
	cs_apply *a; /* its frames onto the store: the open run, its ids */
	struct conn_state *next_open, *prev_open; /* in cs_ingest.open while a run is open */
} conn_state;

enum item_kind { ITEM_MSG, ITEM_CLOSE, ITEM_STOP, ITEM_DELETE };

/* A deletion asked by another thread (cs_ingest_delete_run), done by the
 * writer: the caller waits on done. */
typedef struct del_req {
	const char *uuid; /* the run, by its uuid: ids are reused */
	int64_t run;      /* what it resolved to */
	int rc, done;
	char err[512];
} del_req;

typedef struct item {
	struct item *next;
	enum item_kind kind;
	conn_state *conn;
	size_t bytes;
	cs_wire_msg msg;
	del_req *del;
} item;

typedef struct conn_thread {
	pthread_t tid;
	int fd;
	int done;
	uint64_t opened_ms;
	atomic_int busy; /* began a run or registered: never evicted as idle */
	int evicted;     /* under conns_mu */
	conn_state *cs;
	cs_ingest *in;
	struct conn_thread *next;
} conn_thread;

struct cs_ingest {
	cs_store *s;
	cs_ingest_opts o;
	char path[512];
	int listen_fd;
	int wake[2]; /* wakes the accept loop */
	pthread_t accept_tid, writer_tid;
	cs_ingest_stats st;
	/* the queue */
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full, del_done;
	item *head, *tail;
	uint64_t qbytes;
	/* connections */
	pthread_mutex_t conns_mu;
	conn_thread *conns;
	uint64_t next_id;
	int stopping;
	int writer_rc;
	/* the writer thread's own */
	conn_state *open;        /* connections with a run open */
	atomic_int degraded;     /* 0, or ENOSPC / EIO: the store cannot write */
	int64_t *lost;           /* runs cut by the failure, to mark incomplete */
	size_t nlost, lost_cap;
	uint64_t retry_at;       /* when degraded, next attempt to resume */
	/* readers' buffers (unfinished frames), bounded */
	atomic_uint_fast64_t partial_bytes;
	uint64_t partial_budget;
	atomic_int followers; /* live followers (HTTP): partial chunks sooner */
};

#define RESUME_RETRY_MS 1000
/* Free space the database's file system needs before ingest resumes:
 * this, or an eighth of a smaller file system. */
#define RESUME_FREE_BYTES (16u << 20)

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the queue ---- */

static size_t msg_bytes(const cs_wire_msg *m)
{
	if (m->type == CS_WIRE_SAMPLES)
		return 64 + (size_t)m->u.samples.n * (16 + 8 * (size_t)m->u.samples.m);
	if (m->type == CS_WIRE_RANGES)
		return 64 + (size_t)m->u.ranges.count * 96;
	return 256;
}

static void push(cs_ingest *in, item *it)
{
	pthread_mutex_lock(&in->mu);
	/* A full queue blocks the reader (back-pressure); one item is always
	 * admitted into an empty queue, however large. */
	if (it->kind == ITEM_MSG && in->head && in->qbytes + it->bytes > in->o.queue_bytes) {
		atomic_fetch_add(&in->st.queue_waits, 1);
		while (in->head && in->qbytes + it->bytes > in->o.queue_bytes)
			pthread_cond_wait(&in->not_full, &in->mu);
	}
	it->next = NULL;
	if (in->tail)
		in->tail->next = it;
	else
		in->head = it;
	in->tail = it;
	in->qbytes += it->bytes;
	atomic_store(&in->st.queue_bytes, in->qbytes);
	atomic_fetch_add(&in->st.queue_items, 1);
	pthread_cond_signal(&in->not_empty);
	pthread_mutex_unlock(&in->mu);
}

/* Pops one item, waiting until deadline_ms (monotonic); NULL on time-out. */
static item *pop(cs_ingest *in, uint64_t deadline_ms)
{
	pthread_mutex_lock(&in->mu);
	while (!in->head) {
		uint64_t now = mono_ms();
		if (now >= deadline_ms)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t wait = deadline_ms - now;
		ts.tv_sec += (time_t)(wait / 1000);
		ts.tv_nsec += (long)(wait % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&in->not_empty, &in->mu, &ts);
	}
	item *it = in->head;
	if (it) {
		in->head = it->next;
		if (!in->head)
			in->tail = NULL;
		in->qbytes -= it->bytes;
		atomic_store(&in->st.queue_bytes, in->qbytes);
		atomic_fetch_sub(&in->st.queue_items, 1);
		pthread_cond_broadcast(&in->not_full);
	}
	pthread_mutex_unlock(&in->mu);
	return it;
}

/* ---- the writer thread ---- */

static void conn_fail(cs_ingest *in, conn_state *c, const char *what, const char *why)
{
	atomic_fetch_add(&in->st.rejected, 1);
	if (!cs_apply_failed(c->a))
		cs_log(CS_LOG_WARN, "ingest: connection %llu (pid %lld): %s: %s; closing it",
		       (unsigned long long)c->id, (long long)cs_apply_pid(c->a), what, why);
	atomic_store(&c->abort, 1);
	/* Close it now, not when the producer next writes. */
	pthread_mutex_lock(&c->fd_mu);
	if (!c->reader_done)
		shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&c->fd_mu);
}

static void open_link(cs_ingest *in, conn_state *c)
{
	c->prev_open = NULL;
	c->next_open = in->open;
	if (in->open)
		in->open->prev_open = c;
	in->open = c;
}

static void open_unlink(cs_ingest *in, conn_state *c)
{
	if (c->prev_open)
		c->prev_open->next_open = c->next_open;
	else if (in->open == c)
		in->open = c->next_open;
	if (c->next_open)
		c->next_open->prev_open = c->prev_open;
	c->next_open = c->prev_open = NULL;
}

/* Remembers a run to mark incomplete; without memory the next start's
 * sweep marks it. */
static void lost_add(cs_ingest *in, int64_t run)
{
	if (in->nlost == in->lost_cap) {
		size_t cap = in->lost_cap ? in->lost_cap * 2 : 16;
		int64_t *l = realloc(in->lost, cap * sizeof *l);
		if (!l)
			return;
		in->lost = l;
		in->lost_cap = cap;
	}
	in->lost[in->nlost++] = run;
}

static const char *degraded_reason(int e)
{
	return e == ENOSPC ? "disk full" : "I/O error";
}

/* Tells the producer what became of its run (the ACK frame).
 * Never blocks: a producer that does not read gets what fits in its
 * socket buffer, and a connection already gone gets nothing. */
static void send_ack(conn_state *c, uint8_t status, uint64_t samples, const char *message)
{
	cs_buf b = CS_BUF_INIT;
	cs_wire_msg m = {.type = CS_WIRE_ACK};
	m.u.ack = (cs_wire_ack){status, samples, (char *)cs_apply_uuid(c->a), (char *)message};
	if (cs_wire_encode(&b, &m) == 0) {
		pthread_mutex_lock(&c->fd_mu);
		if (!c->reader_done && send(c->fd, b.data, b.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			cs_log(CS_LOG_DEBUG, "ingest: connection %llu: ACK not sent: %s",
			       (unsigned long long)c->id, strerror(errno));
		pthread_mutex_unlock(&c->fd_mu);
	}
	cs_buf_free(&b);
}

/* A store failure that may have lost written data (the disk is full, an
 * I/O error) is a state, not a per-connection error: what is uncommitted
 * is rolled back, every open run is cut (its producer's connection
 * closed) and remembered to be marked incomplete, and new runs are
 * refused until the store can write again (try_resume). Returns 1 when
 * rc (or the store) says so. */
static int degrade(cs_ingest *in, int rc)
{
	if (rc != -ENOSPC && rc != -EIO && !cs_store_tx_lost(in->s))
		return 0;
	int e = rc == -ENOSPC ? ENOSPC : EIO;
	size_t cut = 0;
	char why[700];
	snprintf(why, sizeof why, "the daemon's database cannot be written (%s: %s); the run "
		 "is kept up to its last commit and marked incomplete", degraded_reason(e),
		 cs_store_errmsg(in->s));
	for (conn_state *c = in->open; c; c = c->next_open) {
		lost_add(in, cs_apply_run(c->a));
		cut++;
	}
	cs_store_abort(in->s); /* frees every writer */
	while (in->open) {
		conn_state *c = in->open;
		open_unlink(in, c);
		send_ack(c, CS_WIRE_ACK_FAILED, 0, why); /* read by the producer before the close */
		conn_fail(in, c, "store", why);
		cs_apply_cut(c->a);
		atomic_fetch_add(&in->st.runs_incomplete, 1);
	}
	if (!atomic_load(&in->degraded))
		cs_log(CS_LOG_ERROR, "ingest: %s: %s; %zu open run(s) cut and to be marked "
		       "incomplete; new runs are refused until the database can be written "
		       "(retrying every %u ms)", degraded_reason(e), cs_store_errmsg(in->s), cut,
		       RESUME_RETRY_MS);
	atomic_store(&in->degraded, e);
	in->retry_at = mono_ms() + RESUME_RETRY_MS;
	return 1;
}

/* While degraded, once a second: when the file system has room, marks
 * the cut runs incomplete (a real write) and resumes. */
static void try_resume(cs_ingest *in)
{
	uint64_t now = mono_ms();
	if (!atomic_load(&in->degraded) || now < in->retry_at)
		return;
	in->retry_at = now + RESUME_RETRY_MS;
	const char *path = cs_store_path(in->s);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path && *path ? path : ".");
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof dir, ".");
	struct statvfs fs;
	if (statvfs(dir, &fs) == 0) {
		uint64_t need = (uint64_t)fs.f_blocks * fs.f_frsize / 8;
		if ((uint64_t)fs.f_bavail * fs.f_frsize < (need < RESUME_FREE_BYTES ? need : RESUME_FREE_BYTES))
			return;
	}
	while (in->nlost) {
		int64_t run = in->lost[in->nlost - 1];
		if (cs_store_mark_incomplete(in->s, run))
			return;
		cs_log(CS_LOG_INFO, "ingest: run %lld marked incomplete", (long long)run);
		in->nlost--;
	}
	atomic_store(&in->degraded, 0);
	cs_log(CS_LOG_INFO, "ingest: the database can be written again; accepting runs");
}

void cs_ingest_followers(cs_ingest *in, int delta)
{
	atomic_fetch_add(&in->followers, delta);
}

const char *cs_ingest_degraded(cs_ingest *in)
{
	int e = atomic_load(&in->degraded);
	return e ? degraded_reason(e) : NULL;
}

/* ---- the hooks of each connection's cs_apply ---- */

static void hook_refused(void *ctx, const char *frame, const char *why)
{
	conn_state *c = ctx;
	conn_fail(c->in, c, frame, why);
}

/* A store call for c's run failed with rc: the whole store degrades, or
 * only c's run fails. */
static int hook_store_failed(void *ctx, const char *frame, int rc)
{
	conn_state *c = ctx;
	(void)frame;
	return degrade(c->in, rc);
}

static const char *hook_refuse_begin(void *ctx, char *buf, size_t len)
{
	conn_state *c = ctx;
	int e = atomic_load(&c->in->degraded);
	if (!e)
		return NULL;
	snprintf(buf, len, "refused: the daemon's database cannot be written (%s); new runs "
		 "are taken again once it can", degraded_reason(e));
	return buf;
}

static void hook_begun(void *ctx, int64_t run)
{
	conn_state *c = ctx;
	cs_ingest *in = c->in;
	open_link(in, c);
	atomic_fetch_add(&in->st.runs_begun, 1);
	if (in->o.collectors)
		cs_collectors_set_run(in->o.collectors, c->id, run, cs_apply_uuid(c->a));
	/* the run's row committed now, not at the next batch: a run that was
	 * begun always leaves a row */
	int crc = cs_store_commit_ex(in->s, 0);
	if (crc)
		degrade(in, crc);
}

static void hook_ending(void *ctx, int64_t run)
{
	conn_state *c = ctx;
	(void)run;
	open_unlink(c->in, c);
}

static void hook_ended(void *ctx, int64_t run, int complete, int rc)
{
	conn_state *c = ctx;
	cs_ingest *in = c->in;
	if (rc) {
		cs_log(CS_LOG_ERROR, "ingest: ending run %lld: %s", (long long)run,
		       cs_store_errmsg(in->s));
		if (degrade(in, rc))
			lost_add(in, run);
	}
	if (!complete)
		atomic_fetch_add(&in->st.runs_incomplete, 1);
}

/* Tells the producer what became of the run it just ended (the ACK frame). */
static void hook_ack(void *ctx, uint8_t status, uint64_t samples, const char *message)
{
	send_ack(ctx, status, samples, message);
}

static void hook_dropped(void *ctx, uint64_t samples)
{
	conn_state *c = ctx;
	atomic_fetch_add(&c->in->st.dropped, samples);
}

static void hook_appended(void *ctx, const cs_batch *b)
{
	conn_state *c = ctx;
	atomic_fetch_add(&c->in->st.samples, b->n);
	atomic_fetch_add(&c->in->st.values, (uint64_t)b->n * b->m);
}

static const cs_apply_hooks ingest_hooks = {
	.refused = hook_refused,
	.store_failed = hook_store_failed,
	.refuse_begin = hook_refuse_begin,
	.begun = hook_begun,
	.ending = hook_ending,
	.ended = hook_ended,
	.ack = hook_ack,
	.dropped = hook_dropped,
	.appended = hook_appended,
};

static void conn_state_free(conn_state *c)
{
	pthread_mutex_destroy(&c->fd_mu);
	cs_apply_free(c->a);
	free(c);
}

/* The writer's half of cs_ingest_delete_run: refused while a producer
 * writes the run or while the store cannot be written. */
static void delete_run(cs_ingest *in, del_req *d)
{
	int rc = cs_read_find_run(in->s, d->uuid, &d->run);
	if (rc)
		snprintf(d->err, sizeof d->err, "no run '%s' (deleted meanwhile?)", d->uuid);
	for (conn_state *c = in->open; c && !rc; c = c->next_open)
		if (cs_apply_run(c->a) == d->run) {
			const char *host = cs_apply_host(c->a);
			snprintf(d->err, sizeof d->err, "run %lld is being written by pid %lld on %s; "
				 "stop the producer first", (long long)d->run,
				 (long long)cs_apply_pid(c->a), host ? host : "this host");
			rc = -EBUSY;
		}
	if (!rc && atomic_load(&in->degraded)) {
		snprintf(d->err, sizeof d->err, "the database cannot be written now (%s)",
			 degraded_reason(atomic_load(&in->degraded)));
		rc = -EROFS;
	}
	if (!rc && (rc = cs_store_delete_run(in->s, d->run)) != 0) {
		snprintf(d->err, sizeof d->err, "%s", cs_store_errmsg(in->s));
		degrade(in, rc);
	}
	pthread_mutex_lock(&in->mu);
	d->rc = rc;
	d->done = 1;
	pthread_cond_broadcast(&in->del_done);
	pthread_mutex_unlock(&in->mu);
}

int cs_ingest_delete_run(cs_ingest *in, const char *uuid, int64_t *run, char *err,
			 size_t errlen)
{
	del_req d = {.uuid = uuid};
	item *it = calloc(1, sizeof *it);
	if (!it) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	it->kind = ITEM_DELETE;
	it->del = &d;
	push(in, it);
	pthread_mutex_lock(&in->mu);
	while (!d.done)
		pthread_cond_wait(&in->del_done, &in->mu);
	pthread_mutex_unlock(&in->mu);
	if (d.rc)
		snprintf(err, errlen, "%s", d.err);
	*run = d.run;
	return d.rc;
}

static void *writer_main(void *arg)
{
	cs_ingest *in = arg;
	uint64_t last_commit = mono_ms(), last_partial = last_commit;
	uint64_t rate_at = last_commit, rate_values = 0;
	int dirty = 0, stop = 0;
	while (!stop) {
		item *it = pop(in, last_commit + in->o.commit_ms);
		if (it) {
			switch (it->kind) {
			case ITEM_MSG:
				cs_apply_frame(it->conn->a, &it->msg);
				dirty = 1;
				break;
			case ITEM_CLOSE:
				if (cs_apply_run(it->conn->a)) {
					cs_log(CS_LOG_INFO,
					       "ingest: connection %llu closed with its run open; "
					       "marked incomplete",
					       (unsigned long long)it->conn->id);
					cs_apply_abandon(it->conn->a);
				}
				conn_state_free(it->conn);
				dirty = 1;
				break;
			case ITEM_STOP:
				stop = 1;
				break;
			case ITEM_DELETE:
				delete_run(in, it->del);
				break;
			}
			cs_wire_msg_free(&it->msg);
			free(it);
		}
		try_resume(in);
		uint64_t now = mono_ms();
		if (now - rate_at >= 1000) {
			uint64_t v = atomic_load(&in->st.values);
			atomic_store(&in->st.values_per_s, (v - rate_values) * 1000 / (now - rate_at));
			rate_values = v;
			rate_at = now;
		}
		int due = now - last_commit >= in->o.commit_ms ||
			  cs_store_pending(in->s) >= in->o.commit_values;
		if (dirty && (due || stop)) {
			uint64_t every = in->o.partial_flush_ms;
			if (atomic_load(&in->followers) > 0 && in->o.live_flush_ms &&
			    in->o.live_flush_ms < every)
				every = in->o.live_flush_ms;
			int partial = stop || now - last_partial >= every;
			int rc = atomic_load(&in->degraded) ? 0 : cs_store_commit_ex(in->s, partial);
			if (rc && !degrade(in, rc)) {
				cs_log(CS_LOG_ERROR, "ingest: commit failed: %s", cs_store_errmsg(in->s));
				if (!in->writer_rc)
					in->writer_rc = rc;
			}
			atomic_fetch_add(&in->st.commits, 1);
			if (partial)
				last_partial = now;
			last_commit = now;
			dirty = 0;
		} else if (!dirty) {
			last_commit = now;
		}
	}
	return NULL;
}

/* ---- connections ---- */

/* A collector's control frame (REGISTER, STATUS, REPLY): handled by the
 * reader, for the registry; 1 when m was one. */
static int control_frame(cs_ingest *in, conn_state *cs, const cs_wire_msg *m, long long pid,
			 const char *host, const char *cmdline, int *registered)
{
	cs_collectors *r = in->o.collectors;
	switch (m->type) {
	case CS_WIRE_REGISTER:
		if (r) {
			cs_collectors_register(r, cs->id, cs->fd, &cs->fd_mu, pid, host, cmdline,
					       &m->u.reg);
			*registered = 1;
		}
		return 1;
	case CS_WIRE_STATUS:
		if (r && *registered)
			cs_collectors_status(r, cs->id, &m->u.report);
		return 1;
	case CS_WIRE_REPLY:
		if (r && *registered)
			cs_collectors_reply(r, cs->id, &m->u.reply);
		return 1;
	default:
		return 0;
	}
}

static void *conn_main(void *arg)
{
	conn_thread *ct = arg;
	cs_ingest *in = ct->in;
	conn_state *cs = ct->cs;
	cs_buf buf = CS_BUF_INIT;
	size_t start = 0;        /* first unparsed byte in buf */
	uint64_t stream_off = 0; /* stream offset of buf[start] */
	char err[512];
	long long pid = 0;
	char *host = NULL, *cmdline = NULL; /* the HELLO's, for a REGISTER */
	int registered = 0;
	size_t charged = 0; /* buf's bytes counted in in->partial_bytes */
	for (;;) {
		if (atomic_load(&cs->abort))
			break;
		/* Decode every complete frame in the buffer. */
		size_t need = 0;
		while (start < buf.len) {
			item *it = calloc(1, sizeof *it);
			if (!it)
				goto out;
			size_t used;
			int rc = cs_wire_decode(buf.data + start, buf.len - start, &it->msg, &used,
						err, sizeof err);
			if (rc == -EAGAIN) {
				free(it);
				need = used;
				break;
			}
			if (rc) {
				free(it);
				atomic_fetch_add(&in->st.frames_bad, 1);
				cs_log(CS_LOG_WARN,
				       "ingest: connection %llu (pid %lld): malformed frame at "
				       "stream offset %llu: %s; closing it",
				       (unsigned long long)cs->id, pid,
				       (unsigned long long)stream_off, err);
				goto out;
			}
			if (it->msg.type == CS_WIRE_RUN_BEGIN || it->msg.type == CS_WIRE_REGISTER)
				atomic_store(&ct->busy, 1);
			if (it->msg.type == CS_WIRE_HELLO) {
				pid = it->msg.u.hello.pid; /* for log lines; cs belongs to the writer */
				free(host);
				free(cmdline);
				host = strdup(it->msg.u.hello.host ? it->msg.u.hello.host : "");
				cmdline = strdup(it->msg.u.hello.cmdline ? it->msg.u.hello.cmdline : "");
			}
			if (control_frame(in, cs, &it->msg, pid, host, cmdline, &registered)) {
				/* the registry's, not the writer's: never queued */
				atomic_fetch_add(&in->st.frames, 1);
				cs_wire_msg_free(&it->msg);
				free(it);
				start += used;
				stream_off += used;
				continue;
			}
			it->kind = ITEM_MSG;
			it->conn = cs;
			it->bytes = msg_bytes(&it->msg);
			atomic_fetch_add(&in->st.frames, 1);
			push(in, it);
			start += used;
			stream_off += used;
		}
		if (start == buf.len) {
			buf.len = start = 0;
			if (buf.cap > (16u << 20)) { /* done with a frame over 8 MiB: give it back */
				atomic_fetch_sub(&in->partial_bytes, charged);
				cs_buf_free(&buf);
				charged = 0;
			}
		} else if (start > (1u << 20)) {
			memmove(buf.data, buf.data + start, buf.len - start);
			buf.len -= start;
			start = 0;
		}
		/* Room for the next read: the buffer grows as a frame's bytes
		 * arrive (at most doubling), not as its header claims, and
		 * what every connection holds counts against one budget. */
		size_t have = buf.len - start;
		size_t want = need > have ? need - have : 0;
		size_t room = want < have ? want : have;
		if (room < (1u << 16))
			room = 1u << 16;
		/* charged before the buffer grows: the budget bounds what is
		 * allocated, not what was found allocated */
		size_t cap = cs_buf_cap_for(&buf, room);
		if (cap > charged) {
			uint64_t total = atomic_fetch_add(&in->partial_bytes, cap - charged) +
					 (cap - charged);
			charged = cap;
			if (total > in->partial_budget) {
				cs_log(CS_LOG_WARN,
				       "ingest: connection %llu (pid %lld): a frame of %zu bytes would "
				       "take the memory held for unfinished frames past its budget "
				       "(%llu bytes: queue_mb, at least 128 MiB); closing it",
				       (unsigned long long)cs->id, pid, need,
				       (unsigned long long)in->partial_budget);
				atomic_fetch_add(&in->st.frames_bad, 1);
				break;
			}
		}
		if (cs_buf_reserve(&buf, room))
			break;
		ssize_t n = read(ct->fd, buf.data + buf.len, buf.cap - buf.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (start < buf.len && n == 0)
				cs_log(CS_LOG_WARN,
				       "ingest: connection %llu (pid %lld): closed in the middle of a "
				       "frame at stream offset %llu",
				       (unsigned long long)cs->id, pid,
				       (unsigned long long)stream_off);
			break;
		}
		buf.len += (size_t)n;
		atomic_fetch_add(&in->st.bytes, (uint64_t)n);
	}
out:
	atomic_fetch_sub(&in->partial_bytes, charged);
	cs_buf_free(&buf);
	if (registered)
		cs_collectors_gone(in->o.collectors, cs->id); /* before the fd closes */
	free(host);
	free(cmdline);
	shutdown(ct->fd, SHUT_RDWR);
	pthread_mutex_lock(&cs->fd_mu);
	cs->reader_done = 1; /* before ct->done: the fd may be closed after */
	pthread_mutex_unlock(&cs->fd_mu);
	item *close_it = calloc(1, sizeof *close_it);
	if (close_it) {
		close_it->kind = ITEM_CLOSE;
		close_it->conn = cs;
		push(in, close_it);
	} else {
		cs_log(CS_LOG_ERROR, "ingest: out of memory closing a connection");
	}
	atomic_fetch_sub(&in->st.conns_open, 1);
	pthread_mutex_lock(&in->conns_mu);
	ct->done = 1;
	pthread_mutex_unlock(&in->conns_mu);
	return NULL;
}

/* Joins and frees finished connection threads. */
static void reap(cs_ingest *in, int all)
{
	pthread_mutex_lock(&in->conns_mu);
	conn_thread **p = &in->conns;
	while (*p) {
		conn_thread *ct = *p;
		if (ct->done || all) {
			*p = ct->next;
			pthread_mutex_unlock(&in->conns_mu);
			pthread_join(ct->tid, NULL);
			close(ct->fd);
			free(ct);
			pthread_mutex_lock(&in->conns_mu);
		} else {
			p = &ct->next;
		}
	}
	pthread_mutex_unlock(&in->conns_mu);
}

/* With every connection taken, closes the oldest that has begun no run
 * and registered nothing for idle_producer_ms (its reader ends as on any
 * close); 1 when one was. Idle HELLOs cannot lock producers out. */
static int evict_idle(cs_ingest *in)
{
	uint64_t now = mono_ms();
	conn_thread *old = NULL;
	if (!in->o.idle_producer_ms)
		return 0;
	pthread_mutex_lock(&in->conns_mu);
	for (conn_thread *ct = in->conns; ct; ct = ct->next)
		if (!ct->done && !atomic_load(&ct->busy) && !ct->evicted &&
		    now - ct->opened_ms >= in->o.idle_producer_ms &&
		    (!old || ct->opened_ms <= old->opened_ms)) /* newest first: the last is oldest */
			old = ct;
	if (old) {
		old->evicted = 1;
		shutdown(old->fd, SHUT_RDWR); /* the fd stays open until reaped */
		atomic_fetch_add(&in->st.conns_evicted, 1);
		cs_log(CS_LOG_WARN,
		       "ingest: all %llu connections taken; closing one that sent nothing past "
		       "its HELLO for %llu ms",
		       (unsigned long long)in->o.max_connections,
		       (unsigned long long)(now - old->opened_ms));
	}
	pthread_mutex_unlock(&in->conns_mu);
	return old != NULL;
}

static void *accept_main(void *arg)
{
	cs_ingest *in = arg;
	for (;;) {
		struct pollfd pf[2] = {{in->listen_fd, POLLIN, 0}, {in->wake[0], POLLIN, 0}};
		int r = poll(pf, 2, 1000);
		reap(in, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (pf[1].revents)
			break;
		if (!(pf[0].revents & POLLIN))
			continue;
		int fd = accept4(in->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (atomic_load(&in->st.conns_open) >= in->o.max_connections && !evict_idle(in)) {
			atomic_fetch_add(&in->st.conns_refused, 1);
			cs_log(CS_LOG_WARN, "ingest: %llu connections open, refusing another",
			       (unsigned long long)in->o.max_connections);
			close(fd);
			continue;
		}
		conn_thread *ct = calloc(1, sizeof *ct);
		conn_state *cs = calloc(1, sizeof *cs);
		cs_apply *a = cs ? cs_apply_new(in->s, &ingest_hooks, cs) : NULL;
		if (!ct || !cs || !a) {
			free(ct);
			free(cs);
			cs_apply_free(a);
			close(fd);
			continue;
		}
		cs->in = in;
		cs->a = a;
		cs->id = ++in->next_id;
		cs->fd = fd;
		pthread_mutex_init(&cs->fd_mu, NULL);
		ct->fd = fd;
		ct->cs = cs;
		ct->in = in;
		ct->opened_ms = mono_ms();
		atomic_fetch_add(&in->st.conns_open, 1);
		atomic_fetch_add(&in->st.conns_total, 1);
		pthread_mutex_lock(&in->conns_mu);
		ct->next = in->conns;
		in->conns = ct;
		if (pthread_create(&ct->tid, NULL, conn_main, ct)) {
			in->conns = ct->next;
			pthread_mutex_unlock(&in->conns_mu);
			atomic_fetch_sub(&in->st.conns_open, 1);
			close(fd);
			free(ct);
			conn_state_free(cs);
			continue;
		}
		pthread_mutex_unlock(&in->conns_mu);
	}
	return NULL;
}

static int bind_socket(cs_ingest *in, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	const char *path = in->o.socket_path;
	if (strlen(path) >= sizeof addr.sun_path) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	/* A socket file nobody answers on is a leftover: replace it. */
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
		close(fd);
		snprintf(err, errlen, "%s: another daemon is already listening there", path);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mode_t old = umask(0117);
	int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
	umask(old);
	if (rc || chmod(path, 0660) || listen(fd, 128)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -errno;
	}
	in->listen_fd = fd;
	snprintf(in->path, sizeof in->path, "%s", path);
	return 0;
}

cs_ingest *cs_ingest_start(cs_store *s, const cs_ingest_opts *o, char *err, size_t errlen)
{
	cs_ingest *in = calloc(1, sizeof *in);
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	in->s = s;
	in->o = *o;
	in->partial_budget = o->queue_bytes > 2ull * CS_WIRE_MAX_PAYLOAD ? o->queue_bytes
									  : 2ull * CS_WIRE_MAX_PAYLOAD;
	in->listen_fd = -1;
	cs_store_set_commit_values(s, 0); /* the writer thread decides */
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->not_empty, NULL);
	pthread_cond_init(&in->not_full, NULL);
	pthread_cond_init(&in->del_done, NULL);
	pthread_mutex_init(&in->conns_mu, NULL);
	if (pipe2(in->wake, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		free(in);
		return NULL;
	}
	if (bind_socket(in, err, errlen)) {
		close(in->wake[0]);
		close(in->wake[1]);
		free(in);
		return NULL;
	}
	pthread_create(&in->writer_tid, NULL, writer_main, in);
	pthread_create(&in->accept_tid, NULL, accept_main, in);
	return in;
}

int cs_ingest_stop(cs_ingest *in)
{
	if (write(in->wake[1], "x", 1) != 1)
		cs_log(CS_LOG_ERROR, "ingest: cannot wake the accept loop");
	pthread_join(in->accept_tid, NULL);
	close(in->listen_fd);
	unlink(in->path);
	/* Close every connection; each reader queues its CLOSE and ends. */
	pthread_mutex_lock(&in->conns_mu);
	for (conn_thread *ct = in->conns; ct; ct = ct->next)
		shutdown(ct->fd, SHUT_RDWR);
	pthread_mutex_unlock(&in->conns_mu);
	reap(in, 1);
	item *stop = calloc(1, sizeof *stop);
	stop->kind = ITEM_STOP;
	push(in, stop);
	pthread_join(in->writer_tid, NULL);
	int rc = in->writer_rc;
	if (cs_store_checkpoint(in->s))
		cs_log(CS_LOG_WARN, "ingest: %s", cs_store_errmsg(in->s));
	cs_store_close(in->s);
	close(in->wake[0]);
	close(in->wake[1]);
	pthread_mutex_destroy(&in->mu);
	pthread_cond_destroy(&in->not_empty);
	pthread_cond_destroy(&in->not_full);
	pthread_cond_destroy(&in->del_done);
	pthread_mutex_destroy(&in->conns_mu);
	if (in->nlost)
		cs_log(CS_LOG_WARN, "ingest: %zu cut run(s) still 'running' in the file; the next "
		       "start marks them incomplete", in->nlost);
	free(in->lost);
	free(in);
	return rc;
}

void cs_ingest_metrics_text(cs_ingest *in, cs_buf *out)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} m[] = {
#define M(n, t, h, f) {n, t, h, offsetof(cs_ingest_stats, f)}
		M("cyclescope_ingest_values_total", "counter", "Values handed to the store", values),
		M("cyclescope_ingest_values_per_second", "gauge", "Ingest rate over the last second", values_per_s),
		M("cyclescope_ingest_samples_total", "counter", "Samples handed to the store", samples),
		M("cyclescope_ingest_frames_total", "counter", "Frames decoded", frames),
		M("cyclescope_ingest_bytes_total", "counter", "Bytes read from producers", bytes),
		M("cyclescope_ingest_bad_frames_total", "counter", "Connections closed for a malformed frame", frames_bad),
		M("cyclescope_ingest_rejected_total", "counter", "Records the store refused", rejected),
		M("cyclescope_ingest_dropped_samples_total", "counter", "Samples dropped after a refusal", dropped),
		M("cyclescope_ingest_connections", "gauge", "Producer connections open", conns_open),
		M("cyclescope_ingest_connections_total", "counter", "Producer connections accepted", conns_total),
		M("cyclescope_ingest_connections_refused_total", "counter", "Connections over the limit", conns_refused),
		M("cyclescope_ingest_connections_evicted_total", "counter", "Idle connections closed to let a new one in", conns_evicted),
		M("cyclescope_ingest_queue_items", "gauge", "Records waiting for the writer", queue_items),
		M("cyclescope_ingest_queue_bytes", "gauge", "Bytes waiting for the writer", queue_bytes),
		M("cyclescope_ingest_backpressure_total", "counter", "Times a reader waited on a full queue", queue_waits),
		M("cyclescope_store_commits_total", "counter", "Store commits", commits),
		M("cyclescope_runs_begun_total", "counter", "Runs started through the socket", runs_begun),
		M("cyclescope_runs_incomplete_total", "counter", "Runs that ended incomplete", runs_incomplete),
#undef M
	};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		cs_prom_metric(out, m[i].name, m[i].type, m[i].help,
			       atomic_load((atomic_uint_fast64_t *)((char *)&in->st + m[i].off)));
	cs_prom_metric(out, "cyclescope_ingest_partial_bytes", "gauge",
		       "Bytes held for frames not yet complete", atomic_load(&in->partial_bytes));
	cs_prom_metric(out, "cyclescope_store_degraded", "gauge",
		       "1 while the database cannot be written (disk full, I/O error)",
		       atomic_load(&in->degraded) != 0);
}
