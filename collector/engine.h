/*
 * engine.h - the collector's pipeline above the PM-sampling sources
 * (cs_engine_*): a control thread that owns every source call (configure,
 * start/stop for windows, the decode loop and the final drain), a sender
 * thread that does all output, and a bounded queue between them and the
 * application's threads.
 *
 * Application threads (CUPTI callbacks) only call cs_engine_range() and
 * cs_engine_window_*(): each copies a few bytes under a short mutex and
 * returns; nothing they call waits for I/O. When the queue is full the
 * item is dropped and counted (samples in RUN_END's dropped counter,
 * ranges in the closing log line), never waited for.
 *
 * No CUPTI here: sources come in through source.h, output goes out
 * through a cs_sink (output.h's, over a producer), so the whole pipeline is
 * tested with a replay source and a real database or daemon.
 */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"
#include "store.h"

/* Where the engine's output goes. Called only from the sender thread. */
typedef struct cs_sink_ops {
	/* Starts the run; meta is a JSON object text (borrowed). */
	int (*begin)(void *ctx, const char *meta);
	int (*add_device)(void *ctx, const cs_device_info *d);
	int (*add_metric)(void *ctx, const cs_metric_info *m, uint32_t *id);
	int (*append)(void *ctx, const cs_batch *b);
	int (*add_range)(void *ctx, const cs_range *r);
	int (*flush)(void *ctx);
	int (*end)(void *ctx, const char *status, const cs_run_counters *c);
	const char *(*errmsg)(void *ctx);
} cs_sink_ops;

/* continuous: sampling from the first context to the end; window:
 * sampling inside windows opened by matched API calls (and commands);
 * armed: configured at the first context, sampling only inside windows a
 * daemon's command opens. */
enum cs_engine_mode { CS_ENGINE_CONTINUOUS = 0, CS_ENGINE_WINDOW = 1, CS_ENGINE_ARMED = 2 };

/* What cs_engine_state() says (the wire's cs_wire_state values). */
enum cs_engine_state { CS_ENGINE_IDLE = 1, CS_ENGINE_SAMPLING = 2, CS_ENGINE_OFF = 3 };

/* The outcome of a command, from the control thread; must not block. */
typedef void (*cs_engine_reply_fn)(void *ctx, uint32_t id, int ok, const char *message);

typedef struct cs_engine_opts {
	const cs_metric_info *metrics; /* copied */
	size_t nmetrics;
	uint64_t interval_ns;
	size_t buffer_bytes;   /* hardware buffer per device */
	uint32_t max_samples;  /* counter-data slots per decode pass */
	int mode;              /* cs_engine_mode */
	size_t queue_bytes;    /* host-side bound; 0 = 64 MiB */
	unsigned decode_ms;    /* control-thread sleep once drained; 0 = 10 */
	unsigned flush_ms;     /* sender flush period; 0 = 100 */
	unsigned close_ms;     /* how long close waits for the samplers' drain
				  and for output; 0 = 10000 */
	int keep_sources;      /* at close, stop and drain the sources but
				  never destroy them (process exit: CUPTI's
				  Disable/deinit may double-free inside
				  libnvperf_host then; the memory goes with
				  the process) */
	const char *meta;      /* JSON object text merged into the run's
				  metadata (copied); NULL = none */
	const char *const *meta_kv; /* more string members: key, value, ...,
				  NULL; escaped here (borrowed for the call
				  to cs_engine_new, copied) */
	int ranges_in_windows; /* keep only ranges that overlap a window
				  (window and trigger ranges always) */
	uint64_t min_interval_ns, max_interval_ns; /* what a command may set;
				  0 = interval_ns (the counter-data image is
				  sized for it) and 100 x interval_ns */
	cs_engine_reply_fn on_reply; /* command outcomes; NULL = none */
	void *reply_ctx;
	/* window and armed modes: the samplers start (on = 1) or stopped
	 * (0), on the control thread, before the start and after the stop;
	 * NULL = none */
	void (*on_sampling)(void *ctx, int on);
	void *sampling_ctx;
} cs_engine_opts;

/* Counter-data slots for one decode pass: the samples that accumulate in
 * decode_ms plus a worst control-thread stall of stall_ms (configuring
 * another device, a window), with a quarter more for jitter; at least
 * 256, at most 65536. */
uint32_t cs_engine_slots(uint64_t interval_ns, unsigned decode_ms, unsigned stall_ms);

typedef struct cs_engine cs_engine;

/* Starts the threads. The sink (ops, ctx) is borrowed until
 * cs_engine_close() returns. NULL with the reason in err. */
cs_engine *cs_engine_new(const cs_engine_opts *o, const cs_sink_ops *ops,
			 void *ctx, char *err, size_t errlen);

/* Hands a device's source to the control thread (takes ownership): it is
 * configured there and, in continuous mode, started. Waits up to wait_ms
 * for that to be done, so that work the caller launches next is sampled
 * (the injected collector calls this from the context-created callback,
 * before the application's first kernel); 0 = do not wait. A source that
 * fails to configure is logged once and destroyed; its device is still
 * recorded, unsampled. Returns 0 when the control thread has handled it,
 * -ETIMEDOUT when wait_ms passed first (it carries on), -EBUSY when the
 * engine is closing or too many requests are pending (src destroyed).
 * Any thread. */
int cs_engine_add_source(cs_engine *e, cs_pm_source *src, unsigned wait_ms);

/* Waits up to wait_ms until every request made so far (add, park,
 * resume) is handled: callers that must keep their requests in order
 * make them with wait_ms 0 under their own lock and wait here after.
 * 0 or -ETIMEDOUT. */
int cs_engine_sync(cs_engine *e, unsigned wait_ms);

/* A context of device is going away: its sampler is stopped, what it
 * recorded drained, and the device parked (kept, not destroyed) until
 * cs_engine_resume_device(). Other devices go on. Waits up to wait_ms;
 * 0, -ETIMEDOUT, -EBUSY as above, -ENOENT for a device never added. */
int cs_engine_park_device(cs_engine *e, uint32_t device, unsigned wait_ms);

/* A new context on a parked device: sampling starts again (in window
 * mode, with the next window). Returns as cs_engine_park_device(). */
int cs_engine_resume_device(cs_engine *e, uint32_t device, unsigned wait_ms);

/* CUPTI has finalised itself (a fatal error): no source is called again,
 * not even to stop or destroy it. Waits (at most 1 s) until the control
 * thread is out of any source call, unless called on it. Tracing ranges
 * still flow. Any thread. */
void cs_engine_abandon_sources(cs_engine *e);

/* Queues a range (copied). Any thread; never blocks on I/O. Returns 0 or
 * -ENOBUFS when the queue was full and the range was dropped. */
int cs_engine_range(cs_engine *e, const cs_range *r);

/* Window mode: the first open window starts every device's sampler, the
 * last close stops it and records a "window" range named after the
 * first opener from t_ns at open to t_ns at close. Nested opens count.
 * In continuous mode these only record the window range. Any thread. */
void cs_engine_window_open(cs_engine *e, const char *name, uint64_t t_ns);
void cs_engine_window_close(cs_engine *e, uint64_t t_ns);
int cs_engine_window_depth(cs_engine *e);

/* A daemon's command (docs/protocol.md, COMMAND): op is a cs_wire_op;
 * value the window's length in ns (0 = until closed) or the interval. */
typedef struct cs_engine_cmd {
	uint32_t id;
	int op;
	uint64_t value;
	char name[128];
} cs_engine_cmd;

/* Hands a command to the control thread, which applies it and answers
 * through opts.on_reply (done, or refused with the reason):
 *   OPEN      opens a window now (a "trigger" range records the request:
 *             [now, now + value]); while one is open, extends it;
 *   CLOSE     closes the window a command opened;
 *   INTERVAL  only between windows, within [min, max]_interval_ns;
 *   FLUSH     decodes now and has the sender send what it holds.
 * Any thread; never blocks. 0, or -EBUSY when too many are pending or
 * the engine is closing. */
int cs_engine_command(cs_engine *e, const cs_engine_cmd *c);

/* 0 when ranges are kept only in windows and none is open (armed and
 * idle): an API hook then takes no timestamp and makes no range (one
 * atomic load), unless the call began inside a window. Ranges that come
 * late (device records) are still kept by their times. Any thread. */
int cs_engine_ranges_wanted(cs_engine *e);

/* The sink's connection was replaced under a run (the daemon restarted):
 * the sender begins a new run at the next item, declares the devices
 * again and numbers samples from 0; what failed in between stays counted
 * as dropped. Any thread. */
void cs_engine_sink_reset(cs_engine *e);

/* idle / sampling / off (no device could be sampled); any thread. */
int cs_engine_state(cs_engine *e);
uint64_t cs_engine_interval(cs_engine *e);

typedef struct cs_engine_stats {
	uint64_t samples;        /* delivered to the sink */
	uint64_t dropped;        /* samples lost anywhere: queue full, sink
				    failure, discarded by the source */
	uint64_t overflows;      /* hardware-buffer overflow events plus the
				    samples missing from timestamp gaps */
	uint64_t gaps;           /* of those, samples missing from gaps */
	uint64_t empty;          /* zero-length samples (after a stop): not
				    losses, not stored */
	uint64_t bad_records;    /* samples and ranges refused as invalid
				    (end before start, zero or backward
				    timestamps); only they are dropped */
	uint64_t first_skipped;  /* the first sample after each start, not
				    stored (CUPTI: outlier values) */
	uint64_t overruns;       /* decode passes that came later than the
				    counter-data image could cover */
	uint64_t ranges;         /* delivered to the sink */
	uint64_t ranges_dropped;
	uint64_t decodes;
	uint64_t windows;        /* windows recorded (closed) */
	uint64_t windows_opened; /* windows opened (from no window open) */
	unsigned devices;        /* sampled devices */
	int run_begun;           /* a run was started at the sink: only once
				    a sample or a range arrives, so a process
				    that did no GPU work records nothing */
} cs_engine_stats;

/* A snapshot of the counters; any thread. */
void cs_engine_stats_get(cs_engine *e, cs_engine_stats *st);

/* Stops sampling, drains every source once more, sends what is queued,
 * ends the run with status ("complete"/"incomplete") and the counters,
 * copies the final counters to *st (may be NULL) and logs one summary
 * line. Waits at most close_ms for the samplers and again for output.
 * A sampler stuck past that is left behind (its thread detached) and
 * what was decoded before is still written, the run ended "incomplete":
 * -EBUSY, the sink is done with, but the left thread may still use the
 * engine and the reply callback. Output stuck past its bound is left
 * too and the run left to the daemon's disconnect handling (-ETIMEDOUT):
 * the sink may then still be in use, so the caller must never free it
 * (an injected collector leaks it). Returns 0 or a negative errno.
 * Accepts NULL.
 * Afterwards e holds nothing but stays valid: late cs_engine_range()
 * calls from application threads are refused and counted, so an
 * injected collector may simply never free it. */
int cs_engine_close(cs_engine *e, const char *status, cs_engine_stats *st);

/* Frees a closed engine (a no-op while an abandoned sender still runs).
 * Accepts NULL. */
void cs_engine_free(cs_engine *e);

#endif
