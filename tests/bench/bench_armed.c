/*
 * bench_armed.c - what an armed, idle collector costs an application:
 * the collector's part of a hooked API call (a timestamp at ENTER and at
 * EXIT, the range made and handed to the engine, which drops it at once
 * while no window was ever opened: --ranges in-windows) against the same
 * application loop with no collector at all. The application's "API
 * call" is WORK_NS of busy work, a cudaLaunchKernel's host cost. Also
 * the same path when ranges are kept (continuous mode), for scale.
 *
 *   bench_armed [CALLS]
 * Prints "name best median unit goal" lines (tests/bench/figures.py).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine.h"

#define WORK_NS 2000
#define REPS 5

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What inject.c's api_callback does for a hooked call (the call itself
 * in between costs nothing here). */
static void hooked_call(cs_engine *e)
{
	if (!cs_engine_ranges_wanted(e))
		return; /* armed and idle: ENTER and EXIT both stop here */
	uint64_t t0 = now_ns();
	uint64_t t1 = now_ns();
	cs_range r;
	cs_range_init(&r, "api", "cudaLaunchKernel", t0, t1);
	r.correlation_id = 1;
	r.pid = 1;
	r.tid = 1;
	cs_engine_range(e, &r);
}

static int s_begin(void *c, const char *m) { (void)c; (void)m; return 0; }
static int s_dev(void *c, const cs_device_info *d) { (void)c; (void)d; return 0; }
static int s_metric(void *c, const cs_metric_info *m, uint32_t *id)
{
	(void)c;
	(void)m;
	*id = 0;
	return 0;
}
static int s_append(void *c, const cs_batch *b) { (void)c; (void)b; return 0; }
static int s_range(void *c, const cs_range *r) { (void)c; (void)r; return 0; }
static int s_flush(void *c) { (void)c; return 0; }
static int s_end(void *c, const char *s, const cs_run_counters *k)
{
	(void)c;
	(void)s;
	(void)k;
	return 0;
}
static const char *s_err(void *c) { (void)c; return ""; }
static const cs_sink_ops null_sink = {s_begin, s_dev, s_metric, s_append, s_range,
				      s_flush, s_end, s_err};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ns per hooked call with e. */
static double loop(cs_engine *e, long calls)
{
	uint64_t t = mono_ns();
	for (long i = 0; i < calls; i++)
		hooked_call(e);
	return (double)(mono_ns() - t) / (double)calls;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000000;
	cs_metric_info m = {.name = "lts__t_sectors.sum", .kind = "counter"};
	char err[256];
	cs_engine_opts armed = {.metrics = &m, .nmetrics = 1, .interval_ns = 100000,
				.mode = CS_ENGINE_ARMED, .ranges_in_windows = 1};
	cs_engine_opts cont = armed;
	cont.mode = CS_ENGINE_CONTINUOUS;
	cont.ranges_in_windows = 0;
	cs_engine *ea = cs_engine_new(&armed, &null_sink, NULL, err, sizeof err);
	cs_engine *ec = cs_engine_new(&cont, &null_sink, NULL, err, sizeof err);
	if (!ea || !ec) {
		fprintf(stderr, "bench_armed: %s\n", err);
		return 1;
	}
	double arm[REPS], kept[REPS], slow[REPS];
	for (int r = 0; r < REPS; r++) {
		arm[r] = loop(ea, calls);
		kept[r] = loop(ec, calls / 10);
		slow[r] = (WORK_NS + arm[r]) / WORK_NS;
	}
	qsort(arm, REPS, sizeof *arm, cmp);
	qsort(kept, REPS, sizeof *kept, cmp);
	qsort(slow, REPS, sizeof *slow, cmp);
	printf("collector.armed_idle_hook_ns %.1f %.1f ns <=10\n", arm[0], arm[REPS / 2]);
	printf("collector.armed_idle_cost_over_2us_call %.4f %.4f x <=1.01\n", slow[0],
	       slow[REPS / 2]);
	printf("collector.kept_range_hook_ns %.1f %.1f ns -\n", kept[0], kept[REPS / 2]);
	cs_engine_close(ea, "complete", NULL);
	cs_engine_close(ec, "complete", NULL);
	cs_engine_free(ea);
	cs_engine_free(ec);
	return 0;
}
