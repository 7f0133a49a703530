/*
 * engine.c - the collector pipeline (engine.h).
 *
 * Three kinds of threads meet here:
 *   application threads  cs_engine_range / cs_engine_window_*: copy and
 *                        queue, or count a drop; never wait for I/O;
 *   the control thread   owns every source call; decodes each started
 *                        source until it reports no more records, then
 *                        sleeps decode_ms (or until woken by a request);
 *   the sender thread    the only caller of the sink; begins the run once
 *                        the sources handed in so far are configured
 *                        (so the metadata can say which trigger mode each
 *                        device uses), then forwards queued items in order.
 * Everything shared is under e->mu. The queue is FIFO, so a device is
 * declared before its first samples and a window range follows the
 * samples decoded inside it.
 */
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "log.h"

#define ENGINE_DEFAULT_QUEUE (64u << 20)
#define DRAIN_MAX_PASSES 100000u /* bound on decodes in one final drain */

enum item_type { ITEM_SAMPLES = 1, ITEM_RANGE, ITEM_DEVICE };

typedef struct item {
	struct item *next;
	int type;
	size_t bytes; /* counted against queue_bytes (0 for devices) */
	union {
		struct {
			uint32_t device;
			uint32_t n;
			uint64_t *t0, *t1;
			double *values;
		} s;
		cs_range r;
		cs_device_info d;
	} u;
	/* strings and arrays follow */
} item;

typedef struct dev {
	struct dev *next;
	cs_pm_source *src; /* NULL once destroyed */
	uint32_t device;
	cs_pm_setup setup; /* strings copied, owned here */
	int configured;
	int started;
	int failed;
	uint64_t seq; /* next sample seq (assigned by the sender) */
} dev;

struct cs_engine {
	cs_engine_opts o;
	cs_metric_info *metrics; /* copies */
	char **metric_names;
	char *meta_extra;
	const cs_sink_ops *sink;
	void *sink_ctx;

	pthread_mutex_t mu;
	pthread_cond_t ctl_cv;  /* wakes the control thread */
	pthread_cond_t send_cv; /* wakes the sender */
	pthread_cond_t done_cv; /* the sender finished */

	/* under mu */
	item *head, *tail;
	size_t queued_bytes;
	cs_pm_source *incoming[64];
	unsigned nincoming;
	unsigned pending_config; /* handed in, not yet configured */
	int depth;               /* open windows */
	uint64_t window_gen;     /* windows opened from depth 0 */
	char window_name[128];   /* the latest such window's opener */
	uint64_t window_t0;      /* its open time */
	uint64_t window_t1;      /* the last close time */
	int stopping;     /* close requested: control thread winds down */
	int ctl_done;     /* control thread finished; sender may end */
	int sender_done;
	cs_engine_stats st;
	dev *devs;        /* owned by the control thread after configure */
	uint64_t sink_dropped; /* samples lost to a failed sink */
	int sink_failed;
	int sink_end_rc;

	const char *status;
	pthread_t ctl, snd;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Appends it; with a limit, refuses when the queue would exceed it.
 * Called with mu held. */
static int enqueue_locked(cs_engine *e, item *it, int limited)
{
	if (limited && e->queued_bytes + it->bytes > e->o.queue_bytes)
		return -ENOBUFS;
	it->next = NULL;
	if (e->tail)
		e->tail->next = it;
	else
		e->head = it;
	e->tail = it;
	e->queued_bytes += it->bytes;
	pthread_cond_signal(&e->send_cv);
	return 0;
}

static char *copy_str(char **cursor, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *out = *cursor;
	memcpy(out, s, n);
	*cursor += n;
	return out;
}

static size_t str_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

int cs_engine_range(cs_engine *e, const cs_range *r)
{
	if (!e || !r)
		return -EINVAL;
	size_t extra = str_size(r->kind) + str_size(r->name);
	item *it = malloc(sizeof *it + extra);
	if (!it) {
		pthread_mutex_lock(&e->mu);
		e->st.ranges_dropped++;
		pthread_mutex_unlock(&e->mu);
		return -ENOBUFS;
	}
	it->type = ITEM_RANGE;
	it->bytes = sizeof *it + extra;
	it->u.r = *r;
	char *cur = (char *)(it + 1);
	it->u.r.kind = copy_str(&cur, r->kind);
	it->u.r.name = copy_str(&cur, r->name);
	pthread_mutex_lock(&e->mu);
	int rc = e->sender_done ? -ENOBUFS : enqueue_locked(e, it, 1);
	if (rc < 0)
		e->st.ranges_dropped++;
	pthread_mutex_unlock(&e->mu);
	if (rc < 0)
		free(it);
	return rc;
}

/* Control thread: queues a batch's samples, or counts them dropped. */
static void queue_samples(cs_engine *e, const dev *d, const cs_pm_batch *b)
{
	size_t m = e->o.nmetrics;
	size_t bytes = sizeof(item) + (size_t)b->n * (2 * sizeof(uint64_t) + m * sizeof(double));
	item *it = NULL;
	pthread_mutex_lock(&e->mu);
	int room = e->queued_bytes + bytes <= e->o.queue_bytes;
	pthread_mutex_unlock(&e->mu);
	if (room)
		it = malloc(bytes);
	if (it) {
		it->type = ITEM_SAMPLES;
		it->bytes = bytes;
		it->u.s.device = d->device;
		it->u.s.n = b->n;
		it->u.s.t0 = (uint64_t *)(it + 1);
		it->u.s.t1 = it->u.s.t0 + b->n;
		void *vals = (char *)(it + 1) + 2 * (size_t)b->n * sizeof(uint64_t);
		it->u.s.values = vals;
		memcpy(it->u.s.t0, b->t0, b->n * sizeof(uint64_t));
		memcpy(it->u.s.t1, b->t1, b->n * sizeof(uint64_t));
		memcpy(it->u.s.values, b->values, (size_t)b->n * m * sizeof(double));
		/* A non-finite value is absent, never a number. */
		for (size_t i = 0; i < (size_t)b->n * m; i++)
			if (!isfinite(it->u.s.values[i]))
				it->u.s.values[i] = NAN;
	}
	pthread_mutex_lock(&e->mu);
	if (!it || enqueue_locked(e, it, 1) < 0) {
		e->st.dropped += b->n;
		free(it);
	}
	pthread_mutex_unlock(&e->mu);
}

static void queue_device(cs_engine *e, const dev *d)
{
	const cs_pm_setup *s = &d->setup;
	size_t extra = str_size(s->device_name) + str_size(s->chip) + str_size(s->uuid);
	item *it = malloc(sizeof *it + extra);
	if (!it)
		return; /* the samples still get a bare device row */
	it->type = ITEM_DEVICE;
	it->bytes = 0;
	memset(&it->u.d, 0, sizeof it->u.d);
	char *cur = (char *)(it + 1);
	it->u.d.index = d->device;
	it->u.d.name = copy_str(&cur, s->device_name);
	it->u.d.chip = copy_str(&cur, s->chip);
	it->u.d.uuid = copy_str(&cur, s->uuid);
	it->u.d.sm_count = s->sm_count;
	it->u.d.clock_hz = s->clock_hz;
	it->u.d.mem_clock_hz = s->mem_clock_hz;
	pthread_mutex_lock(&e->mu);
	enqueue_locked(e, it, 0);
	pthread_mutex_unlock(&e->mu);
}

static void queue_window(cs_engine *e, const char *name, uint64_t t0, uint64_t t1)
{
	cs_range r;
	cs_range_init(&r, "window", name, t0, t1 >= t0 ? t1 : t0);
	if (cs_engine_range(e, &r) == 0) {
		pthread_mutex_lock(&e->mu);
		e->st.windows++;
		pthread_mutex_unlock(&e->mu);
	}
}

/* Decodes d until it has nothing more (or fails). Returns 1 when a batch
 * said more records remain (the caller loops again soon). */
static int decode_dev(cs_engine *e, dev *d, unsigned max_passes)
{
	char err[512];
	for (unsigned pass = 0; pass < max_passes; pass++) {
		cs_pm_batch b;
		memset(&b, 0, sizeof b);
		err[0] = '\0';
		int rc = d->src->ops->decode(d->src, &b, err, sizeof err);
		pthread_mutex_lock(&e->mu);
		e->st.decodes++;
		e->st.overflows += b.overflows;
		e->st.dropped += b.lost;
		pthread_mutex_unlock(&e->mu);
		if (rc < 0) {
			cs_log(CS_LOG_ERROR, "collector: device %u: PM sampling decode failed: %s; "
			       "sampling of this device stops, tracing goes on",
			       d->device, err[0] ? err : strerror(-rc));
			d->failed = 1;
			return 0;
		}
		if (b.n)
			queue_samples(e, d, &b);
		if (!b.more)
			return 0;
	}
	return 1;
}

static void start_dev(dev *d)
{
	char err[512] = "";
	if (d->failed || d->started || !d->configured)
		return;
	int rc = d->src->ops->start(d->src, err, sizeof err);
	if (rc < 0) {
		cs_log(CS_LOG_ERROR, "collector: device %u: cannot start PM sampling: %s",
		       d->device, err[0] ? err : strerror(-rc));
		d->failed = 1;
		return;
	}
	d->started = 1;
}

/* Stops d and drains what it recorded before the stop. */
static void stop_dev(cs_engine *e, dev *d)
{
	char err[512] = "";
	if (!d->started)
		return;
	int rc = d->src->ops->stop(d->src, err, sizeof err);
	d->started = 0;
	if (rc < 0)
		cs_log(CS_LOG_WARN, "collector: device %u: stopping PM sampling: %s",
		       d->device, err[0] ? err : strerror(-rc));
	if (!d->failed)
		decode_dev(e, d, DRAIN_MAX_PASSES);
}

static void configure_dev(cs_engine *e, cs_pm_source *src)
{
	dev *d = calloc(1, sizeof *d);
	char err[1024] = "";
	if (!d) {
		src->ops->destroy(src);
		return;
	}
	d->src = src;
	d->device = src->device;
	const char **names = (const char **)e->metric_names;
	cs_pm_config cfg = {
		.metrics = names,
		.nmetrics = e->o.nmetrics,
		.interval_ns = e->o.interval_ns,
		.buffer_bytes = e->o.buffer_bytes,
		.max_samples = e->o.max_samples,
	};
	int rc = src->ops->configure(src, &cfg, &d->setup, err, sizeof err);
	/* The setup's strings belong to the source, which goes away first. */
	d->setup.trigger = dup_or_null(d->setup.trigger);
	d->setup.device_name = dup_or_null(d->setup.device_name);
	d->setup.chip = dup_or_null(d->setup.chip);
	d->setup.uuid = dup_or_null(d->setup.uuid);
	if (rc < 0) {
		cs_log(CS_LOG_ERROR, "collector: device %u: PM sampling disabled: %s",
		       src->device, err[0] ? err : strerror(-rc));
		d->failed = 1;
	} else {
		d->configured = 1;
		cs_log(CS_LOG_INFO, "collector: device %u: %s, %zu metrics, %s interval %llu%s",
		       src->device, d->setup.chip ? d->setup.chip : "?", e->o.nmetrics,
		       d->setup.trigger ? d->setup.trigger : "?",
		       (unsigned long long)d->setup.interval,
		       d->setup.trigger && strstr(d->setup.trigger, "sysclk") ? " cycles" : " ns");
	}
	queue_device(e, d);
	pthread_mutex_lock(&e->mu);
	d->next = e->devs;
	e->devs = d;
	if (d->configured)
		e->st.devices++;
	int want = e->o.mode == CS_ENGINE_CONTINUOUS || e->depth > 0;
	pthread_mutex_unlock(&e->mu);
	if (want)
		start_dev(d);
	pthread_mutex_lock(&e->mu);
	e->pending_config--;
	pthread_cond_broadcast(&e->send_cv);
	pthread_mutex_unlock(&e->mu);
}

static void set_samplers(cs_engine *e, int on)
{
	for (dev *d = e->devs; d; d = d->next) {
		if (on)
			start_dev(d);
		else
			stop_dev(e, d);
	}
}

static void *control_main(void *arg)
{
	cs_engine *e = arg;
	int window = e->o.mode == CS_ENGINE_WINDOW;
	int running = !window; /* samplers wanted on */
	uint64_t seen_gen = 0;
	char wname[sizeof e->window_name] = "";
	uint64_t wt0 = 0;
	for (;;) {
		pthread_mutex_lock(&e->mu);
		cs_pm_source *in[64];
		unsigned nin = e->nincoming;
		memcpy(in, e->incoming, nin * sizeof *in);
		e->nincoming = 0;
		int stopping = e->stopping;
		int depth = e->depth;
		uint64_t gen = e->window_gen;
		char name[sizeof e->window_name];
		memcpy(name, e->window_name, sizeof name);
		uint64_t t0 = e->window_t0, t1 = e->window_t1;
		pthread_mutex_unlock(&e->mu);

		for (unsigned i = 0; i < nin; i++)
			configure_dev(e, in[i]);
		if (stopping)
			break;
		if (window) {
			/* A window that opened (and perhaps already closed) since
			 * the last look starts the samplers; back at depth 0 they
			 * stop, so even a short synchronous call gets its window. */
			if (gen != seen_gen && !running) {
				set_samplers(e, 1);
				running = 1;
				memcpy(wname, name, sizeof wname);
				wt0 = t0;
			}
			seen_gen = gen;
			if (running && depth == 0) {
				set_samplers(e, 0);
				running = 0;
				queue_window(e, wname, wt0, t1);
			}
		}
		int more = 0;
		for (dev *d = e->devs; d; d = d->next)
			if (d->started && !d->failed)
				more |= decode_dev(e, d, 64);
		if (more)
			continue;
		struct timespec ts;
		deadline_in(&ts, e->o.decode_ms);
		pthread_mutex_lock(&e->mu);
		if (!e->stopping && !e->nincoming &&
		    (!window || (e->window_gen == seen_gen && (e->depth > 0) == running)))
			pthread_cond_timedwait(&e->ctl_cv, &e->mu, &ts);
		pthread_mutex_unlock(&e->mu);
	}
	/* Final: stop every sampler and drain what it recorded. */
	set_samplers(e, 0);
	if (window && running)
		queue_window(e, wname, wt0, now_ns());
	pthread_mutex_lock(&e->mu);
	for (dev *d = e->devs; d; d = d->next) {
		d->src->ops->destroy(d->src);
		d->src = NULL;
	}
	e->ctl_done = 1;
	pthread_cond_broadcast(&e->send_cv);
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

void cs_engine_add_source(cs_engine *e, cs_pm_source *src)
{
	if (!e || !src)
		return;
	pthread_mutex_lock(&e->mu);
	int ok = !e->stopping && e->nincoming < sizeof e->incoming / sizeof *e->incoming;
	if (ok) {
		e->incoming[e->nincoming++] = src;
		e->pending_config++;
		pthread_cond_signal(&e->ctl_cv);
	}
	pthread_mutex_unlock(&e->mu);
	if (!ok) {
		cs_log(CS_LOG_WARN, "collector: device %u not sampled (collector closing or "
		       "too many devices at once)", src->device);
		src->ops->destroy(src);
	}
}

void cs_engine_window_open(cs_engine *e, const char *name, uint64_t t_ns)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	if (e->depth++ == 0) {
		e->window_gen++;
		snprintf(e->window_name, sizeof e->window_name, "%s", name ? name : "window");
		e->window_t0 = t_ns;
		pthread_cond_signal(&e->ctl_cv);
	}
	pthread_mutex_unlock(&e->mu);
}

void cs_engine_window_close(cs_engine *e, uint64_t t_ns)
{
	if (!e)
		return;
	char name[sizeof e->window_name];
	uint64_t t0 = 0;
	int closed = 0;
	pthread_mutex_lock(&e->mu);
	if (e->depth > 0 && --e->depth == 0) {
		closed = 1;
		memcpy(name, e->window_name, sizeof name);
		t0 = e->window_t0;
		e->window_t1 = t_ns;
		pthread_cond_signal(&e->ctl_cv);
	}
	pthread_mutex_unlock(&e->mu);
	/* In window mode the control thread records the window after it has
	 * stopped and drained the samplers; otherwise it is just a range. */
	if (closed && e->o.mode != CS_ENGINE_WINDOW)
		queue_window(e, name, t0, t_ns);
}

int cs_engine_window_depth(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	int d = e->depth;
	pthread_mutex_unlock(&e->mu);
	return d;
}

/* --- sender ------------------------------------------------------------ */

static void json_str(cs_buf *b, const char *s)
{
	cs_buf_put_u8(b, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\') {
			cs_buf_put_u8(b, '\\');
			cs_buf_put_u8(b, *c);
		} else if (*c < 0x20) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\u%04x", *c);
			cs_buf_append(b, esc, 6);
		} else {
			cs_buf_put_u8(b, *c);
		}
	}
	cs_buf_put_u8(b, '"');
}

static void json_raw(cs_buf *b, const char *s)
{
	cs_buf_append(b, s, strlen(s));
}

/* The run's metadata: the engine's settings, each configured device's
 * sampler setup, then the caller's members. */
static char *build_meta(cs_engine *e)
{
	cs_buf b = {0};
	char num[64];
	json_raw(&b, "{\"mode\":");
	json_str(&b, e->o.mode == CS_ENGINE_WINDOW ? "window" : "continuous");
	snprintf(num, sizeof num, ",\"interval_ns\":%llu,\"buffer_bytes\":%llu",
		 (unsigned long long)e->o.interval_ns, (unsigned long long)e->o.buffer_bytes);
	json_raw(&b, num);
	json_raw(&b, ",\"metrics\":[");
	for (size_t i = 0; i < e->o.nmetrics; i++) {
		if (i)
			json_raw(&b, ",");
		json_str(&b, e->metric_names[i]);
	}
	json_raw(&b, "],\"pm_sampling\":[");
	int first = 1;
	pthread_mutex_lock(&e->mu);
	for (const dev *d = e->devs; d; d = d->next) {
		if (!first)
			json_raw(&b, ",");
		first = 0;
		snprintf(num, sizeof num, "{\"device\":%u,\"sampled\":%s", d->device,
			 d->configured ? "true" : "false");
		json_raw(&b, num);
		if (d->configured) {
			json_raw(&b, ",\"trigger\":");
			json_str(&b, d->setup.trigger ? d->setup.trigger : "");
			snprintf(num, sizeof num, ",\"interval\":%llu,\"bytes_per_sample\":%llu",
				 (unsigned long long)d->setup.interval,
				 (unsigned long long)d->setup.bytes_per_sample);
			json_raw(&b, num);
		}
		json_raw(&b, "}");
	}
	pthread_mutex_unlock(&e->mu);
	json_raw(&b, "]");
	if (e->meta_extra) {
		/* "{...}" -> ",..." */
		const char *s = e->meta_extra;
		while (*s == ' ' || *s == '\n' || *s == '\t')
			s++;
		size_t n = strlen(s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
			n--;
		if (n > 2 && s[0] == '{' && s[n - 1] == '}') {
			json_raw(&b, ",");
			cs_buf_append(&b, s + 1, n - 2);
		}
	}
	json_raw(&b, "}");
	cs_buf_put_u8(&b, 0);
	return (char *)b.data;
}

static void sink_failed(cs_engine *e, const char *what, int rc)
{
	if (e->sink_failed)
		return;
	e->sink_failed = 1;
	const char *msg = e->sink->errmsg ? e->sink->errmsg(e->sink_ctx) : NULL;
	cs_log(CS_LOG_ERROR, "collector: output failed (%s: %s); further data is counted as dropped",
	       what, msg && *msg ? msg : strerror(-rc));
}

static dev *find_dev(cs_engine *e, uint32_t device)
{
	for (dev *d = e->devs; d; d = d->next)
		if (d->device == device)
			return d;
	return NULL;
}

static void send_item(cs_engine *e, item *it, const uint32_t *ids)
{
	int rc = 0;
	switch (it->type) {
	case ITEM_DEVICE:
		if (!e->sink_failed && (rc = e->sink->add_device(e->sink_ctx, &it->u.d)) < 0 &&
		    rc != -EEXIST)
			sink_failed(e, "device", rc);
		break;
	case ITEM_RANGE:
		if (e->sink_failed) {
			pthread_mutex_lock(&e->mu);
			e->st.ranges_dropped++;
			pthread_mutex_unlock(&e->mu);
			break;
		}
		rc = e->sink->add_range(e->sink_ctx, &it->u.r);
		pthread_mutex_lock(&e->mu);
		if (rc < 0)
			e->st.ranges_dropped++;
		else
			e->st.ranges++;
		pthread_mutex_unlock(&e->mu);
		if (rc < 0)
			sink_failed(e, "range", rc);
		break;
	case ITEM_SAMPLES: {
		pthread_mutex_lock(&e->mu);
		dev *d = find_dev(e, it->u.s.device);
		pthread_mutex_unlock(&e->mu);
		cs_batch b = {
			.device = it->u.s.device,
			.seq0 = d ? d->seq : 0,
			.n = it->u.s.n,
			.m = (uint32_t)e->o.nmetrics,
			.metrics = ids,
			.t0 = it->u.s.t0,
			.t1 = it->u.s.t1,
			.values = it->u.s.values,
		};
		if (!e->sink_failed && d)
			rc = e->sink->append(e->sink_ctx, &b);
		pthread_mutex_lock(&e->mu);
		if (e->sink_failed || !d || rc < 0) {
			e->st.dropped += b.n;
		} else {
			e->st.samples += b.n;
			d->seq += b.n;
		}
		pthread_mutex_unlock(&e->mu);
		if (rc < 0)
			sink_failed(e, "samples", rc);
		break;
	}
	}
}

static void *sender_main(void *arg)
{
	cs_engine *e = arg;
	uint32_t *ids = calloc(e->o.nmetrics ? e->o.nmetrics : 1, sizeof *ids);
	int begun = 0;
	if (!ids)
		e->sink_failed = 1;
	for (;;) {
		struct timespec ts;
		deadline_in(&ts, e->o.flush_ms);
		pthread_mutex_lock(&e->mu);
		while (!e->head && !e->ctl_done &&
		       pthread_cond_timedwait(&e->send_cv, &e->mu, &ts) != ETIMEDOUT)
			;
		/* Begin only once the sources handed in so far are configured. */
		while (!begun && e->pending_config && !e->ctl_done)
			pthread_cond_wait(&e->send_cv, &e->mu);
		item *list = e->head;
		e->head = e->tail = NULL;
		e->queued_bytes = 0;
		int last = e->ctl_done;
		pthread_mutex_unlock(&e->mu);

		if (!begun && (list || last)) {
			begun = 1;
			char *meta = build_meta(e);
			int rc = meta ? e->sink->begin(e->sink_ctx, meta) : -ENOMEM;
			free(meta);
			for (size_t i = 0; rc == 0 && i < e->o.nmetrics; i++)
				rc = e->sink->add_metric(e->sink_ctx, &e->metrics[i], &ids[i]);
			if (rc < 0)
				sink_failed(e, "run begin", rc);
		}
		while (list) {
			item *next = list->next;
			send_item(e, list, ids);
			free(list);
			list = next;
		}
		if (!e->sink_failed) {
			int rc = e->sink->flush(e->sink_ctx);
			if (rc < 0)
				sink_failed(e, "flush", rc);
		}
		if (last) {
			pthread_mutex_lock(&e->mu);
			int empty = !e->head;
			pthread_mutex_unlock(&e->mu);
			if (empty)
				break;
		}
	}
	cs_run_counters c;
	pthread_mutex_lock(&e->mu);
	c.dropped = e->st.dropped;
	c.overflows = e->st.overflows;
	pthread_mutex_unlock(&e->mu);
	int rc = 0;
	if (!e->sink_failed)
		rc = e->sink->end(e->sink_ctx, e->status, &c);
	if (rc < 0)
		sink_failed(e, "run end", rc);
	free(ids);
	pthread_mutex_lock(&e->mu);
	e->sink_end_rc = e->sink_failed ? -EIO : 0;
	e->sender_done = 1;
	pthread_cond_broadcast(&e->done_cv);
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

/* --- lifecycle --------------------------------------------------------- */

/* Frees what the engine holds but keeps the handle (and its mutex)
 * valid, so that a late cs_engine_range() from an application thread
 * finds a closed engine rather than freed memory. */
static void engine_release(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	item *head = e->head;
	e->head = e->tail = NULL;
	dev *devs = e->devs;
	e->devs = NULL;
	pthread_mutex_unlock(&e->mu);
	for (item *it = head; it;) {
		item *next = it->next;
		free(it);
		it = next;
	}
	for (dev *d = devs; d;) {
		dev *next = d->next;
		free((char *)d->setup.trigger);
		free((char *)d->setup.device_name);
		free((char *)d->setup.chip);
		free((char *)d->setup.uuid);
		free(d);
		d = next;
	}
	for (size_t i = 0; e->metric_names && i < e->o.nmetrics; i++) {
		free(e->metric_names[i]);
		free((char *)e->metrics[i].unit);
		free((char *)e->metrics[i].kind);
	}
	free(e->metric_names);
	free(e->metrics);
	free(e->meta_extra);
	e->metric_names = NULL;
	e->metrics = NULL;
	e->meta_extra = NULL;
}

cs_engine *cs_engine_new(const cs_engine_opts *o, const cs_sink_ops *ops,
			 void *ctx, char *err, size_t errlen)
{
	cs_engine *e = calloc(1, sizeof *e);
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->o = *o;
	e->o.meta = NULL;
	e->o.metrics = NULL;
	if (!e->o.queue_bytes)
		e->o.queue_bytes = ENGINE_DEFAULT_QUEUE;
	if (!e->o.decode_ms)
		e->o.decode_ms = 10;
	if (!e->o.flush_ms)
		e->o.flush_ms = 100;
	if (!e->o.close_ms)
		e->o.close_ms = 10000;
	e->sink = ops;
	e->sink_ctx = ctx;
	e->status = "complete";
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->ctl_cv, NULL);
	pthread_cond_init(&e->send_cv, NULL);
	pthread_cond_init(&e->done_cv, NULL);
	e->metrics = calloc(o->nmetrics ? o->nmetrics : 1, sizeof *e->metrics);
	e->metric_names = calloc(o->nmetrics ? o->nmetrics : 1, sizeof *e->metric_names);
	if (!e->metrics || !e->metric_names)
		goto nomem;
	for (size_t i = 0; i < o->nmetrics; i++) {
		e->metric_names[i] = strdup(o->metrics[i].name);
		e->metrics[i].name = e->metric_names[i];
		e->metrics[i].unit = dup_or_null(o->metrics[i].unit);
		e->metrics[i].kind = dup_or_null(o->metrics[i].kind);
		e->metrics[i].cumulative = o->metrics[i].cumulative;
		if (!e->metric_names[i])
			goto nomem;
	}
	if (o->meta && !(e->meta_extra = strdup(o->meta)))
		goto nomem;
	if (pthread_create(&e->ctl, NULL, control_main, e) != 0) {
		snprintf(err, errlen, "cannot start the collector's control thread");
		goto fail;
	}
	if (pthread_create(&e->snd, NULL, sender_main, e) != 0) {
		snprintf(err, errlen, "cannot start the collector's sender thread");
		pthread_mutex_lock(&e->mu);
		e->stopping = 1;
		pthread_cond_signal(&e->ctl_cv);
		pthread_mutex_unlock(&e->mu);
		pthread_join(e->ctl, NULL);
		goto fail;
	}
	return e;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	engine_release(e);
	e->sender_done = 1;
	cs_engine_free(e);
	return NULL;
}

void cs_engine_stats_get(cs_engine *e, cs_engine_stats *st)
{
	pthread_mutex_lock(&e->mu);
	*st = e->st;
	pthread_mutex_unlock(&e->mu);
}

int cs_engine_close(cs_engine *e, const char *status, cs_engine_stats *st)
{
	if (!e)
		return 0;
	pthread_mutex_lock(&e->mu);
	e->status = status ? status : "complete";
	e->stopping = 1;
	pthread_cond_signal(&e->ctl_cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->ctl, NULL);

	struct timespec ts;
	deadline_in(&ts, e->o.close_ms);
	pthread_mutex_lock(&e->mu);
	pthread_cond_broadcast(&e->send_cv);
	while (!e->sender_done &&
	       pthread_cond_timedwait(&e->done_cv, &e->mu, &ts) != ETIMEDOUT)
		;
	int done = e->sender_done;
	cs_engine_stats s = e->st;
	int rc = e->sink_end_rc;
	pthread_mutex_unlock(&e->mu);
	if (st)
		*st = s;
	int clean = s.dropped == 0 && s.overflows == 0 && s.ranges_dropped == 0;
	cs_log(clean ? CS_LOG_INFO : CS_LOG_WARN,
	       "collector: %llu samples from %u device(s), %llu dropped, %llu overflows; "
	       "%llu ranges, %llu dropped; %llu windows",
	       (unsigned long long)s.samples, s.devices, (unsigned long long)s.dropped,
	       (unsigned long long)s.overflows, (unsigned long long)s.ranges,
	       (unsigned long long)s.ranges_dropped, (unsigned long long)s.windows);
	if (!done) {
		/* The output is stuck (a daemon that stopped reading): leave the
		 * sender behind rather than hold the application's exit. */
		cs_log(CS_LOG_ERROR, "collector: output did not finish within %u ms; "
		       "the run stays incomplete", e->o.close_ms);
		pthread_detach(e->snd);
		return -ETIMEDOUT;
	}
	pthread_join(e->snd, NULL);
	engine_release(e);
	return rc;
}

void cs_engine_free(cs_engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	int done = e->sender_done;
	pthread_mutex_unlock(&e->mu);
	if (!done)
		return; /* a detached sender still uses it */
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->ctl_cv);
	pthread_cond_destroy(&e->send_cv);
	pthread_cond_destroy(&e->done_cv);
	free(e);
}

/* --- the producer sink ------------------------------------------------- */

static int ps_begin(void *ctx, const char *meta)
{
	cs_producer_sink *ps = ctx;
	cs_run_info info = ps->info;
	info.meta = meta;
	return cs_producer_begin(ps->p, &info);
}

static int ps_add_device(void *ctx, const cs_device_info *d)
{
	return cs_producer_add_device(((cs_producer_sink *)ctx)->p, d);
}

static int ps_add_metric(void *ctx, const cs_metric_info *m, uint32_t *id)
{
	return cs_producer_add_metric(((cs_producer_sink *)ctx)->p, m, id);
}

static int ps_append(void *ctx, const cs_batch *b)
{
	return cs_producer_append(((cs_producer_sink *)ctx)->p, b);
}

static int ps_add_range(void *ctx, const cs_range *r)
{
	return cs_producer_add_range(((cs_producer_sink *)ctx)->p, r);
}

static int ps_flush(void *ctx)
{
	return cs_producer_flush(((cs_producer_sink *)ctx)->p);
}

static int ps_end(void *ctx, const char *status, const cs_run_counters *c)
{
	return cs_producer_end(((cs_producer_sink *)ctx)->p, status, c);
}

static const char *ps_errmsg(void *ctx)
{
	return cs_producer_errmsg(((cs_producer_sink *)ctx)->p);
}

const cs_sink_ops cs_producer_sink_ops = {
	.begin = ps_begin,
	.add_device = ps_add_device,
	.add_metric = ps_add_metric,
	.append = ps_append,
	.add_range = ps_add_range,
	.flush = ps_flush,
	.end = ps_end,
	.errmsg = ps_errmsg,
};
