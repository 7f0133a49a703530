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
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "log.h"
#include "wire.h"

#define ENGINE_DEFAULT_QUEUE (64u << 20)
#define DRAIN_MAX_PASSES 4096u /* bound on decodes in one final drain */
#define MAX_REQS 64
#define MAX_CMDS 16
#define MAX_WINDOW_NS (604800ull * 1000000000ull) /* a command's window: a week */
#define MAX_WINDOWS 1024 /* recent windows kept for ranges_in_windows */
#define WINDOW_MERGE_NS 10000000u /* windows this close become one */

enum item_type { ITEM_SAMPLES = 1, ITEM_RANGE, ITEM_DEVICE };
enum req_op { REQ_ADD = 1, REQ_PARK, REQ_RESUME };

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

/* A request from an application thread to the control thread. */
typedef struct req {
	int op; /* req_op */
	uint32_t device;
	cs_pm_source *src; /* REQ_ADD */
} req;

typedef struct dev {
	struct dev *next;
	cs_pm_source *src; /* NULL once destroyed */
	uint32_t device;
	cs_pm_setup setup; /* strings copied, owned here */
	int configured;
	int started;
	int failed;
	int parked;        /* its context went away: not started again
			      until resumed */
	uint64_t seq;      /* next sample seq (assigned by the sender) */
	/* control thread only: checks on what the source delivers */
	int skip_first;    /* the next sample is the first after a start */
	int have_last;     /* last_t0 is set (never reset: store order) */
	uint64_t last_t0;
	int have_gap_ref;  /* gap_t0/t1 is set (reset at each start) */
	uint64_t gap_t0, gap_t1;
	uint64_t last_decode; /* monotonic ns of the last decode pass */
	int time_trigger;  /* samples are interval_ns long (not SYS cycles) */
} dev;

struct cs_engine {
	cs_engine_opts o;
	cs_metric_info *metrics; /* copies */
	char **metric_names;
	char *meta_extra;
	char *meta_kv;           /* ",\"k\":\"v\"..." from opts.meta_kv, escaped */
	const cs_sink_ops *sink;
	void *sink_ctx;

	pthread_mutex_t mu;
	pthread_cond_t ctl_cv;  /* wakes the control thread */
	pthread_cond_t send_cv; /* wakes the sender */
	pthread_cond_t done_cv; /* the sender or the control thread finished */
	pthread_cond_t req_cv;  /* requests handled (req_done moved) */

	/* under mu */
	item *head, *tail;
	size_t queued_bytes;
	req reqs[MAX_REQS];
	unsigned nreqs;
	uint64_t req_issued;     /* tickets handed out */
	uint64_t req_done;       /* every ticket up to this one is handled */
	unsigned pending_config; /* handed in, not yet configured */
	int depth;               /* open windows */
	uint64_t window_gen;     /* windows opened from depth 0 */
	char window_name[128];   /* the latest such window's opener */
	uint64_t window_t0;      /* its open time */
	uint64_t window_t1;      /* the last close time */
	int stopping;     /* close requested: control thread winds down */
	atomic_int abandoned; /* CUPTI finalised: never call a source again
				 (read before every source call) */
	int abandon_seen; /* the control thread is out of every source call */
	uint32_t known[MAX_REQS]; /* devices handed in (add_source) */
	unsigned nknown;
	int sink_closing; /* the sender took its last look at the queue */
	int ctl_done;     /* control thread finished; sender may end */
	int ctl_left;     /* control thread stuck at close and left behind:
			     the sender writes what it has and ends the run */
	int sender_done;
	cs_engine_stats st;
	dev *devs;        /* owned by the control thread after configure */
	int sink_failed;
	int sink_end_rc;

	const char *status;
	pthread_t ctl, snd;

	/* under mu */
	cs_engine_cmd cmds[MAX_CMDS]; /* commands for the control thread */
	unsigned ncmds;
	int running;                  /* samplers wanted on (for the state) */
	int flush_req;                /* a FLUSH for the sender */
	int sink_reset;               /* a new run on a new connection */
	struct { uint64_t t0, t1; } win[MAX_WINDOWS]; /* ring; t1 = UINT64_MAX while open */
	unsigned nwin, win_next;
	atomic_int win_any;           /* a window was ever opened */
	atomic_int win_open;          /* a window is open now (depth > 0) */
	/* control thread only */
	int cmd_open;                 /* a command's window is open */
	uint64_t cmd_deadline;        /* when it closes (monotonic ns), 0 = on CLOSE */
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The CUPTI clock (CLOCK_REALTIME on Linux): what samples, API calls and
 * activity records are stamped with. Only for window ends. */
static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every wait is on CLOCK_MONOTONIC: a wall-clock step must not stretch or
 * cut a bounded wait. */
static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void cond_init_mono(pthread_cond_t *cv)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}

uint32_t cs_engine_slots(uint64_t interval_ns, unsigned decode_ms, unsigned stall_ms)
{
	if (!interval_ns)
		return 4096;
	uint64_t span_ns = ((uint64_t)decode_ms + stall_ms) * 1000000u;
	uint64_t n = (span_ns + interval_ns - 1) / interval_ns;
	n += n / 4;
	return n < 256 ? 256 : n > 65536 ? 65536 : (uint32_t)n;
}

/* CUPTI finalised itself: no source may be called any more. */
static int gone(cs_engine *e)
{
	return atomic_load(&e->abandoned);
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

static void count_bad(cs_engine *e, uint64_t n)
{
	pthread_mutex_lock(&e->mu);
	e->st.bad_records += n;
	pthread_mutex_unlock(&e->mu);
}

/* Whether [t0, t1] overlaps one of the recent windows. Under mu. */
static int in_window_locked(const cs_engine *e, uint64_t t0, uint64_t t1)
{
	for (unsigned i = 0; i < e->nwin; i++)
		if (t0 <= e->win[i].t1 && t1 >= e->win[i].t0)
			return 1;
	return 0;
}

int cs_engine_range(cs_engine *e, const cs_range *r)
{
	if (!e || !r)
		return -EINVAL;
	/* What the store would refuse is refused here, alone: an activity
	 * record still open at a forced flush (end 0), a clock step. */
	if (!r->kind || !r->name || r->t1 < r->t0 || r->t1 > (uint64_t)INT64_MAX) {
		count_bad(e, 1);
		return -EINVAL;
	}
	/* Armed and idle: the application's callbacks end here, before any
	 * copy or lock. */
	int filter = e->o.ranges_in_windows && strcmp(r->kind, "window") &&
		     strcmp(r->kind, "trigger");
	if (filter && !atomic_load(&e->win_any))
		return 0;
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
	if (filter && !in_window_locked(e, r->t0, r->t1)) {
		pthread_mutex_unlock(&e->mu);
		free(it);
		return 0;
	}
	int rc = e->sender_done || e->sink_closing ? -ENOBUFS : enqueue_locked(e, it, 1);
	if (rc < 0)
		e->st.ranges_dropped++;
	pthread_mutex_unlock(&e->mu);
	if (rc < 0)
		free(it);
	return rc;
}

/* What the checks on one batch found. */
typedef struct batch_check {
	uint64_t empty, bad, skipped, missing;
} batch_check;

/* Control thread: checks a batch's samples in order and copies the good
 * ones into it (when not NULL). A zero-length sample is empty; a zero,
 * inverted or backward timestamp is a bad record; the first sample after
 * a start is skipped; a gap of whole sample lengths since the previous
 * sample is counted as missing samples (KEEP_LATEST overwrites without
 * saying so). Returns the number kept. */
static uint32_t check_batch(cs_engine *e, dev *d, const cs_pm_batch *b, item *it,
			    batch_check *c)
{
	size_t m = e->o.nmetrics;
	uint32_t n = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		uint64_t t0 = b->t0[i], t1 = b->t1[i];
		/* After an empty or bad sample the next gap is not a loss: the
		 * hardware delivered something there. */
		if (t0 && t1 == t0) {
			c->empty++;
			d->have_gap_ref = 0;
			continue;
		}
		if (!t0 || t1 < t0 || t1 > (uint64_t)INT64_MAX ||
		    (d->have_last && t0 < d->last_t0)) {
			c->bad++;
			d->have_gap_ref = 0;
			continue;
		}
		if (d->have_gap_ref && t0 > d->gap_t1) {
			/* The interval in ns under the time trigger; under the
			 * SYS-clock one (whose ns length varies with the clock)
			 * the previous sample's own length. */
			uint64_t len = d->time_trigger ? e->o.interval_ns : d->gap_t1 - d->gap_t0;
			if (!len)
				len = e->o.interval_ns ? e->o.interval_ns : 1;
			c->missing += (t0 - d->gap_t1) / len;
		}
		d->have_gap_ref = 1;
		d->gap_t0 = t0;
		d->gap_t1 = t1;
		d->have_last = 1;
		d->last_t0 = t0;
		if (d->skip_first) {
			d->skip_first = 0;
			c->skipped++;
			continue;
		}
		if (it) {
			it->u.s.t0[n] = t0;
			it->u.s.t1[n] = t1;
			double *row = it->u.s.values + (size_t)n * m;
			memcpy(row, b->values + (size_t)i * m, m * sizeof *row);
			/* A non-finite value is absent, never a number. */
			for (size_t k = 0; k < m; k++)
				if (!isfinite(row[k]))
					row[k] = NAN;
		}
		n++;
	}
	return n;
}

/* Control thread: checks a batch and queues its good samples, or counts
 * them dropped when the queue has no room. */
static void queue_samples(cs_engine *e, dev *d, const cs_pm_batch *b)
{
	size_t m = e->o.nmetrics;
	size_t bytes = sizeof(item) + (size_t)b->n * (2 * sizeof(uint64_t) + m * sizeof(double));
	item *it = NULL;
	pthread_mutex_lock(&e->mu);
	int room = e->queued_bytes + bytes <= e->o.queue_bytes;
	pthread_mutex_unlock(&e->mu);
	if (room && (it = malloc(bytes))) {
		it->type = ITEM_SAMPLES;
		it->bytes = bytes;
		it->u.s.device = d->device;
		it->u.s.t0 = (uint64_t *)(it + 1);
		it->u.s.t1 = it->u.s.t0 + b->n;
		it->u.s.values = (double *)(void *)((char *)(it + 1) +
						    2 * (size_t)b->n * sizeof(uint64_t));
	}
	batch_check c = {0};
	uint32_t n = check_batch(e, d, b, it, &c);
	pthread_mutex_lock(&e->mu);
	e->st.empty += c.empty;
	e->st.bad_records += c.bad;
	e->st.first_skipped += c.skipped;
	e->st.gaps += c.missing;
	e->st.overflows += c.missing;
	if (it && n) {
		it->u.s.n = n;
		if (enqueue_locked(e, it, 1) < 0) {
			e->st.dropped += n;
			free(it);
		}
	} else {
		if (!it)
			e->st.dropped += n;
		free(it);
	}
	pthread_mutex_unlock(&e->mu);
}

/* A device row for the sink, from d's setup (copied). NULL when out of
 * memory: the samples still get a bare device row. */
static item *device_item(const dev *d)
{
	const cs_pm_setup *s = &d->setup;
	size_t extra = str_size(s->device_name) + str_size(s->chip) + str_size(s->uuid);
	item *it = malloc(sizeof *it + extra);
	if (!it)
		return NULL;
	it->type = ITEM_DEVICE;
	it->bytes = 0;
	it->next = NULL;
	memset(&it->u.d, 0, sizeof it->u.d);
	char *cur = (char *)(it + 1);
	it->u.d.index = d->device;
	it->u.d.name = copy_str(&cur, s->device_name);
	it->u.d.chip = copy_str(&cur, s->chip);
	it->u.d.uuid = copy_str(&cur, s->uuid);
	it->u.d.sm_count = s->sm_count;
	it->u.d.clock_hz = s->clock_hz;
	it->u.d.mem_clock_hz = s->mem_clock_hz;
	return it;
}

static void queue_device(cs_engine *e, const dev *d)
{
	item *it = device_item(d);
	if (!it)
		return;
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

/* The time between decodes that loses nothing: what the hardware buffer
 * holds at the device's interval (its bytes over the estimated bytes a
 * sample), or, without an estimate, what one counter-data image holds. */
static uint64_t held_span_ns(const cs_engine *e, const dev *d)
{
	uint64_t iv = e->o.interval_ns ? e->o.interval_ns : 1;
	size_t buf = d->setup.buffer_bytes ? d->setup.buffer_bytes : e->o.buffer_bytes;
	if (d->setup.bytes_per_sample && buf)
		return (uint64_t)(buf / d->setup.bytes_per_sample) * iv;
	uint64_t slots = e->o.max_samples ? e->o.max_samples : 4096;
	return slots * iv;
}

/* Decodes d while the source says records remain (its stop reason), at
 * most max_passes times. Returns 1 when the last pass took samples and
 * said more remain (the caller loops again at once); a source that keeps
 * saying "more" without samples is decoded again after the usual sleep,
 * never spun on. */
static int decode_dev(cs_engine *e, dev *d, unsigned max_passes)
{
	char err[512];
	uint64_t now = mono_ns();
	if (d->last_decode && now - d->last_decode > held_span_ns(e, d)) {
		/* Samples recorded since the last pass beyond what the buffer
		 * holds may be lost (or zero-stamped). */
		pthread_mutex_lock(&e->mu);
		uint64_t nth = ++e->st.overruns;
		pthread_mutex_unlock(&e->mu);
		if (nth == 1 || nth % 1000 == 0)
			cs_log(CS_LOG_WARN, "collector: device %u: decode pass %.1f ms after the "
			       "last, longer than the %.1f ms the sampler's buffer holds (%llu so "
			       "far); samples may be lost",
			       d->device, (double)(now - d->last_decode) / 1e6,
			       (double)held_span_ns(e, d) / 1e6, (unsigned long long)nth);
	}
	d->last_decode = now;
	for (unsigned pass = 0; pass < max_passes && !gone(e); pass++) {
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
		if (pass + 1 == max_passes)
			return b.n > 0;
	}
	return 0;
}

static void start_dev(cs_engine *e, dev *d)
{
	char err[512] = "";
	if (d->failed || d->started || !d->configured || d->parked || gone(e))
		return;
	int rc = d->src->ops->start(d->src, err, sizeof err);
	if (rc < 0) {
		cs_log(CS_LOG_ERROR, "collector: device %u: cannot start PM sampling: %s",
		       d->device, err[0] ? err : strerror(-rc));
		d->failed = 1;
		return;
	}
	d->started = 1;
	d->skip_first = 1;
	d->have_gap_ref = 0; /* the stop-to-start gap is not a loss */
	d->last_decode = mono_ns();
}

/* Stops d and drains what it recorded before the stop. */
static void stop_dev(cs_engine *e, dev *d)
{
	char err[512] = "";
	if (!d->started || gone(e))
		return;
	int rc = d->src->ops->stop(d->src, err, sizeof err);
	d->started = 0;
	if (rc < 0)
		cs_log(CS_LOG_WARN, "collector: device %u: stopping PM sampling: %s",
		       d->device, err[0] ? err : strerror(-rc));
	if (!d->failed)
		decode_dev(e, d, DRAIN_MAX_PASSES);
}

static int samplers_wanted(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	int want = e->o.mode == CS_ENGINE_CONTINUOUS || e->depth > 0;
	pthread_mutex_unlock(&e->mu);
	return want;
}

static dev *find_dev(cs_engine *e, uint32_t device)
{
	for (dev *d = e->devs; d; d = d->next)
		if (d->device == device)
			return d;
	return NULL;
}

/* A source handed in is settled (configured, refused or dropped): the
 * sender may begin the run once none is pending. */
static void config_done(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->pending_config--;
	pthread_cond_broadcast(&e->send_cv);
	pthread_mutex_unlock(&e->mu);
}

static void configure_dev(cs_engine *e, cs_pm_source *src)
{
	dev *d = calloc(1, sizeof *d);
	char err[1024] = "";
	if (!d) {
		src->ops->destroy(src);
		config_done(e);
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
	int rc = gone(e) ? -ECANCELED
			 : src->ops->configure(src, &cfg, &d->setup, err, sizeof err);
	/* The setup's strings belong to the source, which goes away first. */
	d->setup.trigger = dup_or_null(d->setup.trigger);
	d->setup.device_name = dup_or_null(d->setup.device_name);
	d->setup.chip = dup_or_null(d->setup.chip);
	d->setup.uuid = dup_or_null(d->setup.uuid);
	d->setup.availability = dup_or_null(d->setup.availability);
	d->time_trigger = !d->setup.trigger || !strstr(d->setup.trigger, "sysclk");
	if (rc < 0) {
		cs_log(CS_LOG_ERROR, "collector: device %u: PM sampling disabled: %s",
		       src->device, err[0] ? err : strerror(-rc));
		d->failed = 1;
		/* Release what it holds now (the device's counters, for other
		 * profilers), not at exit. */
		src->ops->destroy(src);
		d->src = NULL;
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
	pthread_mutex_unlock(&e->mu);
	if (samplers_wanted(e))
		start_dev(e, d);
	config_done(e);
}

/* One request from an application thread, on the control thread. */
static void handle_req(cs_engine *e, const req *r, int abandoned)
{
	if (r->op == REQ_ADD) {
		dev *old = find_dev(e, r->src->device);
		if (abandoned || old) {
			/* A second source for a device is never configured (one
			 * PM-sampling object per device); an abandoned engine
			 * makes no CUPTI calls, not even a destroy. */
			if (old && !abandoned) {
				cs_log(CS_LOG_WARN, "collector: device %u added twice; the second "
				       "sampler is ignored", r->src->device);
				r->src->ops->destroy(r->src);
			}
			config_done(e);
			return;
		}
		configure_dev(e, r->src);
		return;
	}
	dev *d = find_dev(e, r->device);
	if (!d || abandoned)
		return;
	if (r->op == REQ_PARK) {
		stop_dev(e, d);
		d->parked = 1;
	} else {
		d->parked = 0;
		if (samplers_wanted(e))
			start_dev(e, d);
	}
}

static void set_samplers(cs_engine *e, int on)
{
	for (dev *d = e->devs; d; d = d->next) {
		if (on)
			start_dev(e, d);
		else
			stop_dev(e, d);
	}
}

static void reply(cs_engine *e, const cs_engine_cmd *c, int ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply(cs_engine *e, const cs_engine_cmd *c, int ok, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!ok)
		cs_log(CS_LOG_WARN, "collector: command %u refused: %s", c->id, msg);
	if (e->o.on_reply)
		e->o.on_reply(e->o.reply_ctx, c->id, ok, msg);
}

/* A new interval for every configured sampler: only between windows
 * (never while sampling), within the limits. */
static void set_interval(cs_engine *e, const cs_engine_cmd *c, int running)
{
	if (e->o.mode == CS_ENGINE_CONTINUOUS || running) {
		reply(e, c, 0, "the interval changes only between windows (%s)",
		      e->o.mode == CS_ENGINE_CONTINUOUS ? "this collector samples continuously"
							: "a window is open");
		return;
	}
	if (c->value < e->o.min_interval_ns || c->value > e->o.max_interval_ns) {
		reply(e, c, 0, "interval %llu ns is outside this collector's limits [%llu, %llu] ns",
		      (unsigned long long)c->value, (unsigned long long)e->o.min_interval_ns,
		      (unsigned long long)e->o.max_interval_ns);
		return;
	}
	for (dev *d = e->devs; d; d = d->next) {
		if (!d->configured || d->failed || gone(e))
			continue;
		char err[512] = "";
		uint64_t native = 0;
		int rc = d->src->ops->set_interval
			? d->src->ops->set_interval(d->src, c->value, &native, err, sizeof err)
			: -ENOTSUP;
		if (rc < 0) {
			/* all or none: the devices changed so far go back */
			for (dev *b = e->devs; b != d; b = b->next) {
				char e2[256];
				if (b->configured && !b->failed && b->src->ops->set_interval)
					b->src->ops->set_interval(b->src, e->o.interval_ns,
								  &b->setup.interval, e2, sizeof e2);
			}
			reply(e, c, 0, "device %u: %s", d->device,
			      err[0] ? err : "its sampler cannot change the interval");
			return;
		}
		d->setup.interval = native;
	}
	pthread_mutex_lock(&e->mu);
	e->o.interval_ns = c->value;
	pthread_mutex_unlock(&e->mu);
	reply(e, c, 1, "interval %llu ns", (unsigned long long)c->value);
}

/* One command, on the control thread. running: the samplers are on. */
static void handle_cmd(cs_engine *e, const cs_engine_cmd *c, int running)
{
	uint64_t now = wall_ns();
	switch (c->op) {
	case CS_WIRE_OP_OPEN: {
		const char *name = c->name[0] ? c->name : "trigger";
		if (c->value > MAX_WINDOW_NS) {
			reply(e, c, 0, "a window of %llu ns is longer than a week",
			      (unsigned long long)c->value);
			return;
		}
		cs_range r;
		cs_range_init(&r, "trigger", name, now, now + c->value);
		cs_engine_range(e, &r);
		uint64_t until = c->value ? mono_ns() + c->value : 0;
		if (e->cmd_open) {
			e->cmd_deadline = !c->value || !e->cmd_deadline ? 0
					  : until > e->cmd_deadline ? until : e->cmd_deadline;
			reply(e, c, 1, "window extended");
			return;
		}
		e->cmd_open = 1;
		e->cmd_deadline = until;
		cs_engine_window_open(e, name, now);
		reply(e, c, 1, "window open");
		return;
	}
	case CS_WIRE_OP_CLOSE:
		if (!e->cmd_open) {
			reply(e, c, 0, "no window opened by a command is open");
			return;
		}
		e->cmd_open = 0;
		cs_engine_window_close(e, now);
		reply(e, c, 1, "window closed");
		return;
	case CS_WIRE_OP_INTERVAL:
		set_interval(e, c, running);
		return;
	case CS_WIRE_OP_FLUSH:
		for (dev *d = e->devs; d; d = d->next)
			if (d->started && !d->failed)
				decode_dev(e, d, 64);
		pthread_mutex_lock(&e->mu);
		e->flush_req = 1;
		pthread_cond_signal(&e->send_cv);
		pthread_mutex_unlock(&e->mu);
		reply(e, c, 1, "flushed");
		return;
	default:
		reply(e, c, 0, "unknown command %d", c->op);
		return;
	}
}

int cs_engine_command(cs_engine *e, const cs_engine_cmd *c)
{
	if (!e || !c)
		return -EINVAL;
	pthread_mutex_lock(&e->mu);
	int rc = e->stopping || gone(e) || e->ncmds >= MAX_CMDS ? -EBUSY : 0;
	if (!rc) {
		e->cmds[e->ncmds] = *c;
		e->cmds[e->ncmds].name[sizeof c->name - 1] = '\0';
		e->ncmds++;
		pthread_cond_signal(&e->ctl_cv);
	}
	pthread_mutex_unlock(&e->mu);
	return rc;
}

void cs_engine_sink_reset(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->sink_reset = 1;
	pthread_cond_signal(&e->send_cv);
	pthread_mutex_unlock(&e->mu);
}

int cs_engine_ranges_wanted(cs_engine *e)
{
	return !e->o.ranges_in_windows || atomic_load(&e->win_open);
}

int cs_engine_state(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	int st = gone(e) || (e->st.devices == 0 && e->nknown && !e->pending_config)
		 ? CS_ENGINE_OFF
		 : e->running ? CS_ENGINE_SAMPLING : CS_ENGINE_IDLE;
	pthread_mutex_unlock(&e->mu);
	return st;
}

uint64_t cs_engine_interval(cs_engine *e)
{
	pthread_mutex_lock(&e->mu);
	uint64_t v = e->o.interval_ns;
	pthread_mutex_unlock(&e->mu);
	return v;
}

static void *control_main(void *arg)
{
	cs_engine *e = arg;
	int window = e->o.mode != CS_ENGINE_CONTINUOUS;
	int running = !window; /* samplers wanted on */
	uint64_t seen_gen = 0;
	char wname[sizeof e->window_name] = "";
	uint64_t wt0 = 0;
	int abandoned = 0;
	for (;;) {
		pthread_mutex_lock(&e->mu);
		req in[MAX_REQS];
		unsigned nin = e->nreqs;
		memcpy(in, e->reqs, nin * sizeof *in);
		e->nreqs = 0;
		uint64_t ticket = e->req_issued;
		int stopping = e->stopping;
		abandoned = gone(e);
		int depth = e->depth;
		uint64_t gen = e->window_gen;
		char name[sizeof e->window_name];
		memcpy(name, e->window_name, sizeof name);
		uint64_t t0 = e->window_t0, t1 = e->window_t1;
		cs_engine_cmd cmds[MAX_CMDS];
		unsigned ncmds = e->ncmds;
		memcpy(cmds, e->cmds, ncmds * sizeof *cmds);
		e->ncmds = 0;
		e->running = running;
		pthread_mutex_unlock(&e->mu);

		for (unsigned i = 0; i < nin; i++)
			handle_req(e, &in[i], abandoned);
		for (unsigned i = 0; i < ncmds && !stopping && !abandoned; i++)
			handle_cmd(e, &cmds[i], running);
		if (e->cmd_open && e->cmd_deadline && mono_ns() >= e->cmd_deadline) {
			e->cmd_open = 0;
			cs_engine_window_close(e, wall_ns());
		}
		if (ncmds || e->cmd_open) {
			/* what the commands changed, seen at once */
			pthread_mutex_lock(&e->mu);
			depth = e->depth;
			gen = e->window_gen;
			memcpy(name, e->window_name, sizeof name);
			t0 = e->window_t0;
			t1 = e->window_t1;
			pthread_mutex_unlock(&e->mu);
		}
		pthread_mutex_lock(&e->mu);
		e->req_done = ticket;
		pthread_cond_broadcast(&e->req_cv);
		pthread_mutex_unlock(&e->mu);
		if (stopping || abandoned)
			break;
		if (window) {
			/* A window that opened (and perhaps already closed) since
			 * the last look starts the samplers; back at depth 0 they
			 * stop, so even a short synchronous call gets its window. */
			if (gen != seen_gen && !running) {
				if (e->o.on_sampling && !gone(e))
					e->o.on_sampling(e->o.sampling_ctx, 1);
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
				if (e->o.on_sampling && !gone(e))
					e->o.on_sampling(e->o.sampling_ctx, 0);
			}
			pthread_mutex_lock(&e->mu);
			e->running = running;
			pthread_mutex_unlock(&e->mu);
		}
		int more = 0;
		for (dev *d = e->devs; d; d = d->next)
			if (d->started && !d->failed)
				more |= decode_dev(e, d, 64);
		if (more)
			continue;
		struct timespec ts;
		unsigned wait_ms = e->o.decode_ms;
		if (e->cmd_open && e->cmd_deadline) {
			uint64_t now = mono_ns();
			uint64_t left = e->cmd_deadline > now ? (e->cmd_deadline - now) / 1000000u : 0;
			if (left < wait_ms)
				wait_ms = (unsigned)left;
		}
		deadline_in(&ts, wait_ms);
		pthread_mutex_lock(&e->mu);
		if (!e->stopping && !gone(e) && !e->nreqs && !e->ncmds &&
		    (!window || (e->window_gen == seen_gen && (e->depth > 0) == running)))
			pthread_cond_timedwait(&e->ctl_cv, &e->mu, &ts);
		pthread_mutex_unlock(&e->mu);
	}
	if (abandoned) {
		/* CUPTI is gone: wait for close without touching a source;
		 * requests are still answered so no caller waits in vain. */
		pthread_mutex_lock(&e->mu);
		e->abandon_seen = 1;
		pthread_cond_broadcast(&e->done_cv);
		while (!e->stopping) {
			for (unsigned i = 0; i < e->ncmds; i++)
				if (e->o.on_reply) /* the link's reply only queues */
					e->o.on_reply(e->o.reply_ctx, e->cmds[i].id, 0,
						      "CUPTI ended itself (a fatal error): nothing can "
						      "be sampled");
			e->ncmds = 0;
			for (unsigned i = 0; i < e->nreqs; i++)
				if (e->reqs[i].op == REQ_ADD)
					e->pending_config--;
			e->nreqs = 0;
			e->req_done = e->req_issued;
			pthread_cond_broadcast(&e->req_cv);
			pthread_cond_broadcast(&e->send_cv);
			pthread_cond_wait(&e->ctl_cv, &e->mu);
		}
		pthread_mutex_unlock(&e->mu);
	} else {
		/* Final: stop every sampler and drain what it recorded. */
		set_samplers(e, 0);
	}
	if (window && running)
		queue_window(e, wname, wt0, wall_ns());
	else if (!window && e->cmd_open)
		cs_engine_window_close(e, wall_ns());
	pthread_mutex_lock(&e->mu);
	for (dev *d = e->devs; d; d = d->next) {
		if (!gone(e) && !e->o.keep_sources && d->src)
			d->src->ops->destroy(d->src);
		d->src = NULL;
	}
	e->ctl_done = 1;
	pthread_cond_broadcast(&e->send_cv);
	pthread_cond_broadcast(&e->done_cv);
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

/* Waits until the control thread has handled ticket, at most wait_ms. */
static int wait_ticket(cs_engine *e, uint64_t ticket, unsigned wait_ms)
{
	if (!wait_ms)
		return 0;
	struct timespec ts;
	deadline_in(&ts, wait_ms);
	int rc = 0;
	pthread_mutex_lock(&e->mu);
	while (e->req_done < ticket && !e->ctl_done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&e->req_cv, &e->mu, &ts);
	int done = e->req_done >= ticket || e->ctl_done;
	pthread_mutex_unlock(&e->mu);
	return done ? 0 : -ETIMEDOUT;
}

/* Whether device was ever handed in. Under mu. */
static int known_locked(const cs_engine *e, uint32_t device)
{
	for (unsigned i = 0; i < e->nknown; i++)
		if (e->known[i] == device)
			return 1;
	return 0;
}

/* Queues a request; 0 when the engine is closing or full. Under mu. */
static uint64_t submit_locked(cs_engine *e, int op, uint32_t device, cs_pm_source *src)
{
	if (e->stopping || e->nreqs >= MAX_REQS)
		return 0;
	e->reqs[e->nreqs++] = (req){op, device, src};
	pthread_cond_signal(&e->ctl_cv);
	return ++e->req_issued;
}

int cs_engine_add_source(cs_engine *e, cs_pm_source *src, unsigned wait_ms)
{
	if (!e || !src)
		return -EINVAL;
	pthread_mutex_lock(&e->mu);
	uint64_t ticket = submit_locked(e, REQ_ADD, src->device, src);
	if (ticket) {
		e->pending_config++;
		if (!known_locked(e, src->device) && e->nknown < MAX_REQS)
			e->known[e->nknown++] = src->device;
	}
	pthread_mutex_unlock(&e->mu);
	if (!ticket) {
		cs_log(CS_LOG_WARN, "collector: device %u not sampled (collector closing or "
		       "too many devices at once)", src->device);
		src->ops->destroy(src);
		return -EBUSY;
	}
	int rc = wait_ticket(e, ticket, wait_ms);
	if (rc == -ETIMEDOUT)
		cs_log(CS_LOG_WARN, "collector: device %u: PM sampling not set up within %u ms; "
		       "the application goes on and sampling starts when it is",
		       src->device, wait_ms);
	return rc;
}

static int device_req(cs_engine *e, int op, uint32_t device, unsigned wait_ms)
{
	if (!e)
		return -EINVAL;
	pthread_mutex_lock(&e->mu);
	int known = known_locked(e, device);
	uint64_t ticket = known ? submit_locked(e, op, device, NULL) : 0;
	pthread_mutex_unlock(&e->mu);
	if (!known)
		return -ENOENT;
	if (!ticket)
		return -EBUSY;
	int rc = wait_ticket(e, ticket, wait_ms);
	if (rc == -ETIMEDOUT)
		cs_log(CS_LOG_WARN, "collector: device %u: sampler not %s within %u ms; "
		       "going on", device, op == REQ_PARK ? "stopped" : "restarted", wait_ms);
	return rc;
}

int cs_engine_sync(cs_engine *e, unsigned wait_ms)
{
	if (!e)
		return -EINVAL;
	pthread_mutex_lock(&e->mu);
	uint64_t ticket = e->req_issued;
	pthread_mutex_unlock(&e->mu);
	return wait_ticket(e, ticket, wait_ms);
}

int cs_engine_park_device(cs_engine *e, uint32_t device, unsigned wait_ms)
{
	return device_req(e, REQ_PARK, device, wait_ms);
}

int cs_engine_resume_device(cs_engine *e, uint32_t device, unsigned wait_ms)
{
	return device_req(e, REQ_RESUME, device, wait_ms);
}

void cs_engine_abandon_sources(cs_engine *e)
{
	if (!e)
		return;
	atomic_store(&e->abandoned, 1);
	pthread_mutex_lock(&e->mu);
	pthread_cond_signal(&e->ctl_cv);
	/* Wait (bounded) until the control thread is out of any source call,
	 * so CUPTI finalises under nobody; not when called from within one
	 * (a fatal error raised on the control thread itself). */
	if (!pthread_equal(pthread_self(), e->ctl)) {
		struct timespec ts;
		deadline_in(&ts, 1000);
		while (!e->abandon_seen && !e->ctl_done &&
		       pthread_cond_timedwait(&e->done_cv, &e->mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&e->mu);
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
		/* for ranges_in_windows: a window that opens within 10 ms of
		 * the last one's end extends it (device records come 100 ms
		 * late, and windows of synchronous calls come thick) */
		unsigned last = (e->win_next + MAX_WINDOWS - 1) % MAX_WINDOWS;
		if (e->nwin && e->win[last].t1 != UINT64_MAX &&
		    t_ns <= e->win[last].t1 + WINDOW_MERGE_NS) {
			e->win[last].t1 = UINT64_MAX;
		} else {
			e->win[e->win_next].t0 = t_ns;
			e->win[e->win_next].t1 = UINT64_MAX;
			e->win_next = (e->win_next + 1) % MAX_WINDOWS;
			if (e->nwin < MAX_WINDOWS)
				e->nwin++;
		}
		atomic_store(&e->win_any, 1);
		atomic_store(&e->win_open, 1);
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
		e->win[(e->win_next + MAX_WINDOWS - 1) % MAX_WINDOWS].t1 = t_ns;
		atomic_store(&e->win_open, 0);
		pthread_cond_signal(&e->ctl_cv);
	}
	pthread_mutex_unlock(&e->mu);
	/* In window and armed modes the control thread records the window
	 * after it has stopped and drained the samplers; otherwise it is
	 * just a range. */
	if (closed && e->o.mode == CS_ENGINE_CONTINUOUS)
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


/* The run's metadata: the engine's settings, each configured device's
 * sampler setup, then the caller's members. */
static char *build_meta(cs_engine *e)
{
	cs_buf b = {0};
	char num[64];
	cs_json_raw(&b, "{\"mode\":");
	cs_json_str(&b, e->o.mode == CS_ENGINE_WINDOW  ? "window"
			: e->o.mode == CS_ENGINE_ARMED ? "armed"
						       : "continuous");
	if (e->o.ranges_in_windows)
		cs_json_raw(&b, ",\"ranges\":\"in-windows\"");
	snprintf(num, sizeof num, ",\"interval_ns\":%llu,\"buffer_bytes\":%llu",
		 (unsigned long long)e->o.interval_ns, (unsigned long long)e->o.buffer_bytes);
	cs_json_raw(&b, num);
	cs_json_raw(&b, ",\"metrics\":[");
	for (size_t i = 0; i < e->o.nmetrics; i++) {
		if (i)
			cs_json_raw(&b, ",");
		cs_json_str(&b, e->metric_names[i]);
	}
	cs_json_raw(&b, "],\"pm_sampling\":[");
	int first = 1;
	pthread_mutex_lock(&e->mu);
	for (const dev *d = e->devs; d; d = d->next) {
		if (!first)
			cs_json_raw(&b, ",");
		first = 0;
		snprintf(num, sizeof num, "{\"device\":%u,\"sampled\":%s", d->device,
			 d->configured ? "true" : "false");
		cs_json_raw(&b, num);
		if (d->configured) {
			cs_json_raw(&b, ",\"trigger\":");
			cs_json_str(&b, d->setup.trigger ? d->setup.trigger : "");
			snprintf(num, sizeof num, ",\"interval\":%llu,\"bytes_per_sample\":%llu",
				 (unsigned long long)d->setup.interval,
				 (unsigned long long)d->setup.bytes_per_sample);
			cs_json_raw(&b, num);
			if (d->setup.availability) {
				cs_json_raw(&b, ",\"availability\":");
				cs_json_str(&b, d->setup.availability);
			}
			if (d->setup.sysclk_hz > 0) {
				snprintf(num, sizeof num, ",\"sysclk_hz\":%.0f", d->setup.sysclk_hz);
				cs_json_raw(&b, num);
			}
			if (d->setup.buffer_bytes) {
				snprintf(num, sizeof num, ",\"buffer_bytes\":%zu", d->setup.buffer_bytes);
				cs_json_raw(&b, num);
			}
		}
		cs_json_raw(&b, "}");
	}
	pthread_mutex_unlock(&e->mu);
	cs_json_raw(&b, "]");
	if (e->meta_kv)
		cs_json_raw(&b, e->meta_kv);
	if (e->meta_extra) {
		/* "{...}" -> ",..." */
		const char *s = e->meta_extra;
		while (*s == ' ' || *s == '\n' || *s == '\t')
			s++;
		size_t n = strlen(s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
			n--;
		if (n > 2 && s[0] == '{' && s[n - 1] == '}') {
			cs_json_raw(&b, ",");
			cs_buf_append(&b, s + 1, n - 2);
		}
	}
	cs_json_raw(&b, "}");
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

/* A record the output refused as invalid (-EINVAL) is dropped alone and
 * counted; any other failure means the output itself is gone. */
static void record_refused(cs_engine *e, const char *what, int rc, uint64_t n)
{
	if (rc != -EINVAL) {
		sink_failed(e, what, rc);
		return;
	}
	pthread_mutex_lock(&e->mu);
	uint64_t bad = e->st.bad_records += n;
	pthread_mutex_unlock(&e->mu);
	if (bad == n) {
		const char *msg = e->sink->errmsg ? e->sink->errmsg(e->sink_ctx) : NULL;
		cs_log(CS_LOG_WARN, "collector: the output refused a %s (%s); it is dropped and "
		       "counted in the run's bad_records", what, msg && *msg ? msg : "invalid");
	}
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
		if (rc < 0 && rc != -EINVAL)
			e->st.ranges_dropped++;
		else if (rc == 0)
			e->st.ranges++;
		pthread_mutex_unlock(&e->mu);
		if (rc < 0)
			record_refused(e, "range", rc, 1);
		break;
	case ITEM_SAMPLES: {
		pthread_mutex_lock(&e->mu);
		dev *d = find_dev(e, it->u.s.device);
		uint64_t seq0 = d ? d->seq : 0;
		pthread_mutex_unlock(&e->mu);
		cs_batch b = {
			.device = it->u.s.device,
			.seq0 = seq0,
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
		if (e->sink_failed || !d || (rc < 0 && rc != -EINVAL)) {
			e->st.dropped += b.n;
		} else if (rc == 0) {
			e->st.samples += b.n;
			d->seq += b.n;
		}
		pthread_mutex_unlock(&e->mu);
		if (rc < 0)
			record_refused(e, "sample batch", rc, b.n);
		break;
	}
	}
}

/* Starts the run at the sink: metadata, then the metric rows. */
static void begin_run(cs_engine *e, uint32_t *ids)
{
	char *meta = build_meta(e);
	int rc = meta ? e->sink->begin(e->sink_ctx, meta) : -ENOMEM;
	free(meta);
	for (size_t i = 0; rc == 0 && i < e->o.nmetrics; i++)
		rc = e->sink->add_metric(e->sink_ctx, &e->metrics[i], &ids[i]);
	if (rc < 0)
		sink_failed(e, "run begin", rc);
	pthread_mutex_lock(&e->mu);
	e->st.run_begun = 1;
	pthread_mutex_unlock(&e->mu);
}

static void free_list(item *it)
{
	while (it) {
		item *next = it->next;
		free(it);
		it = next;
	}
}

static void *sender_main(void *arg)
{
	cs_engine *e = arg;
	uint32_t *ids = calloc(e->o.nmetrics ? e->o.nmetrics : 1, sizeof *ids);
	int begun = 0;
	/* Device rows wait for the run: it begins at the first sample or
	 * range, so a process that creates a context and does no GPU work
	 * leaves no run behind. */
	item *held = NULL, **held_tail = &held;
	if (!ids)
		e->sink_failed = 1;
	for (;;) {
		struct timespec ts;
		deadline_in(&ts, e->o.flush_ms);
		pthread_mutex_lock(&e->mu);
		while (!e->head && !e->ctl_done && !e->ctl_left && !e->flush_req &&
		       pthread_cond_timedwait(&e->send_cv, &e->mu, &ts) != ETIMEDOUT)
			;
		e->flush_req = 0;
		/* Begin only once the sources handed in so far are configured. */
		while (!begun && e->pending_config && !e->ctl_done && !e->ctl_left)
			pthread_cond_wait(&e->send_cv, &e->mu);
		item *list = e->head;
		e->head = e->tail = NULL;
		e->queued_bytes = 0;
		int last = e->ctl_done || e->ctl_left;
		if (e->sink_reset && !begun)
			e->sink_reset = 0; /* nothing began: nothing to redo */
		if (e->sink_reset) {
			/* a new connection: a new run, its devices declared
			 * again, samples numbered from 0 */
			e->sink_reset = 0;
			begun = 0;
			e->sink_failed = !ids; /* no id table: still no output */
			for (dev *d = e->devs; d; d = d->next) {
				d->seq = 0;
				item *it = device_item(d);
				if (it) {
					*held_tail = it;
					held_tail = &it->next;
				}
			}
		}
		pthread_mutex_unlock(&e->mu);

		while (list) {
			item *next = list->next;
			if (!begun && list->type == ITEM_DEVICE) {
				list->next = NULL;
				*held_tail = list;
				held_tail = &list->next;
				list = next;
				continue;
			}
			if (!begun) {
				begun = 1;
				begin_run(e, ids);
				for (item *h = held; h; h = h->next)
					send_item(e, h, ids);
				free_list(held);
				held = NULL;
				held_tail = &held;
			}
			send_item(e, list, ids);
			free(list);
			list = next;
		}
		if (begun && !e->sink_failed) {
			int rc = e->sink->flush(e->sink_ctx);
			if (rc < 0)
				sink_failed(e, "flush", rc);
		}
		if (last) {
			/* The last look: what comes after is refused and counted. */
			pthread_mutex_lock(&e->mu);
			int empty = !e->head;
			if (empty)
				e->sink_closing = 1;
			pthread_mutex_unlock(&e->mu);
			if (empty)
				break;
		}
	}
	free_list(held);
	cs_run_counters c;
	pthread_mutex_lock(&e->mu);
	c.dropped = e->st.dropped;
	c.overflows = e->st.overflows;
	c.bad_records = e->st.bad_records;
	c.empty_samples = e->st.empty;
	const char *status = e->status;
	pthread_mutex_unlock(&e->mu);
	int rc = 0;
	if (begun && !e->sink_failed)
		rc = e->sink->end(e->sink_ctx, status, &c);
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
		free((char *)d->setup.availability);
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
	free(e->meta_kv);
	e->meta_kv = NULL;
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
	if (!e->o.min_interval_ns)
		e->o.min_interval_ns = e->o.interval_ns;
	if (!e->o.max_interval_ns)
		e->o.max_interval_ns = e->o.interval_ns * 100;
	e->sink = ops;
	e->sink_ctx = ctx;
	e->status = "complete";
	pthread_mutex_init(&e->mu, NULL);
	cond_init_mono(&e->ctl_cv);
	cond_init_mono(&e->send_cv);
	cond_init_mono(&e->done_cv);
	cond_init_mono(&e->req_cv);
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
	if (o->meta_kv) {
		cs_buf kv = {0};
		for (size_t i = 0; o->meta_kv[i] && o->meta_kv[i + 1]; i += 2) {
			cs_json_raw(&kv, ",");
			cs_json_str(&kv, o->meta_kv[i]);
			cs_json_raw(&kv, ":");
			cs_json_str(&kv, o->meta_kv[i + 1]);
		}
		cs_buf_put_u8(&kv, 0);
		if (!(e->meta_kv = (char *)kv.data))
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
	e->ctl_done = 1;
	cs_engine_free(e);
	return NULL;
}

void cs_engine_stats_get(cs_engine *e, cs_engine_stats *st)
{
	pthread_mutex_lock(&e->mu);
	*st = e->st;
	st->windows_opened = e->window_gen;
	pthread_mutex_unlock(&e->mu);
}

/* Waits until *flag is set or the deadline passes; under mu. */
static int wait_flag_locked(cs_engine *e, const int *flag, const struct timespec *ts)
{
	while (!*flag && pthread_cond_timedwait(&e->done_cv, &e->mu, ts) != ETIMEDOUT)
		;
	return *flag;
}

int cs_engine_close(cs_engine *e, const char *status, cs_engine_stats *st)
{
	if (!e)
		return 0;
	struct timespec ts;
	deadline_in(&ts, e->o.close_ms);
	pthread_mutex_lock(&e->mu);
	e->status = status ? status : "complete";
	e->stopping = 1;
	pthread_cond_signal(&e->ctl_cv);
	/* A sampler that hangs in stop or decode must not hold the
	 * application's exit: the control thread gets close_ms. */
	int ctl_ok = wait_flag_locked(e, &e->ctl_done, &ts);
	if (!ctl_ok) {
		e->ctl_left = 1;
		e->status = "incomplete";
	}
	pthread_mutex_unlock(&e->mu);
	if (ctl_ok) {
		pthread_join(e->ctl, NULL);
	} else {
		/* What was decoded before is still written: the sender ends the
		 * run as incomplete; what the stuck thread queues later is
		 * refused and counted. */
		cs_log(CS_LOG_ERROR, "collector: the samplers did not stop within %u ms; "
		       "leaving them; what was decoded is written and the run is marked "
		       "incomplete", e->o.close_ms);
		pthread_detach(e->ctl);
	}

	deadline_in(&ts, e->o.close_ms);
	pthread_mutex_lock(&e->mu);
	pthread_cond_broadcast(&e->send_cv);
	int done = wait_flag_locked(e, &e->sender_done, &ts);
	cs_engine_stats s = e->st;
	int rc = e->sink_end_rc;
	pthread_mutex_unlock(&e->mu);
	if (st)
		*st = s;
	int clean = s.dropped == 0 && s.overflows == 0 && s.ranges_dropped == 0 &&
		    s.bad_records == 0;
	cs_log(clean ? CS_LOG_INFO : CS_LOG_WARN,
	       "collector: %llu samples from %u device(s), %llu dropped, %llu overflows "
	       "(%llu from gaps), %llu empty, %llu bad records, %llu first-after-start "
	       "skipped; %llu ranges, %llu dropped; %llu windows%s",
	       (unsigned long long)s.samples, s.devices, (unsigned long long)s.dropped,
	       (unsigned long long)s.overflows, (unsigned long long)s.gaps,
	       (unsigned long long)s.empty, (unsigned long long)s.bad_records,
	       (unsigned long long)s.first_skipped,
	       (unsigned long long)s.ranges, (unsigned long long)s.ranges_dropped,
	       (unsigned long long)s.windows, s.run_begun ? "" : "; no run recorded");
	if (!done) {
		/* The output is stuck (a daemon that stopped reading): leave the
		 * sender behind rather than hold the application's exit. */
		cs_log(CS_LOG_ERROR, "collector: output did not finish within %u ms; "
		       "the run stays incomplete", e->o.close_ms);
		pthread_detach(e->snd);
		return -ETIMEDOUT;
	}
	pthread_join(e->snd, NULL);
	if (!ctl_ok)
		return -EBUSY; /* the sink is done; the control thread still uses e */
	engine_release(e);
	return rc;
}

void cs_engine_free(cs_engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	int done = e->sender_done && e->ctl_done;
	pthread_mutex_unlock(&e->mu);
	if (!done)
		return; /* a detached thread still uses it */
	engine_release(e); /* after a timed-out close, nothing was released */
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->ctl_cv);
	pthread_cond_destroy(&e->send_cv);
	pthread_cond_destroy(&e->done_cv);
	pthread_cond_destroy(&e->req_cv);
	free(e);
}
