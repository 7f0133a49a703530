/* test_source.c - samples from the clock; see test_source.h. */
#include "test_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct tick {
	size_t m;
	uint64_t interval;
	uint32_t max;     /* samples per decode */
	int started;
	uint64_t next;    /* next sample index to deliver */
	uint64_t stop_at; /* ns of the stop (0 = running) */
	uint64_t *t0, *t1;
	double *v;
} tick;

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double cs_test_source_value(uint64_t k, uint32_t metric, uint32_t device)
{
	return (double)(k % 997) * (metric + 1) + device;
}

static int t_configure(cs_pm_source *s, const cs_pm_config *cfg, cs_pm_setup *setup,
		       char *err, size_t errlen)
{
	tick *t = s->impl;
	if (!cfg->interval_ns || !cfg->nmetrics) {
		snprintf(err, errlen, "the test source needs an interval and metrics");
		return -EINVAL;
	}
	t->m = cfg->nmetrics;
	t->interval = cfg->interval_ns;
	t->max = cfg->max_samples ? cfg->max_samples : 4096;
	t->t0 = malloc(t->max * sizeof *t->t0);
	t->t1 = malloc(t->max * sizeof *t->t1);
	t->v = malloc((size_t)t->max * t->m * sizeof *t->v);
	if (!t->t0 || !t->t1 || !t->v) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	setup->trigger = "gpu_time_interval";
	setup->interval = t->interval;
	setup->device_name = "test source";
	setup->chip = "GH100";
	setup->sm_count = 132;
	setup->clock_hz = 1.755e9;
	return 0;
}

static int t_set_interval(cs_pm_source *s, uint64_t interval_ns, uint64_t *interval,
			  char *err, size_t errlen)
{
	tick *t = s->impl;
	(void)err;
	(void)errlen;
	t->interval = interval_ns;
	*interval = interval_ns;
	return 0;
}

static int t_start(cs_pm_source *s, char *err, size_t errlen)
{
	tick *t = s->impl;
	(void)err;
	(void)errlen;
	t->next = wall_ns() / t->interval + 1; /* the first whole sample */
	t->stop_at = 0;
	t->started = 1;
	return 0;
}

static int t_stop(cs_pm_source *s, char *err, size_t errlen)
{
	tick *t = s->impl;
	(void)err;
	(void)errlen;
	if (t->started)
		t->stop_at = wall_ns();
	t->started = 0;
	return 0;
}

static int t_decode(cs_pm_source *s, cs_pm_batch *out, char *err, size_t errlen)
{
	tick *t = s->impl;
	(void)err;
	(void)errlen;
	if (!t->interval)
		return 0;
	uint64_t now = t->started ? wall_ns() : t->stop_at;
	uint64_t end = now / t->interval; /* samples below end are complete */
	uint32_t n = 0;
	while (t->next < end && n < t->max) {
		uint64_t k = t->next++;
		t->t0[n] = k * t->interval;
		t->t1[n] = (k + 1) * t->interval;
		for (size_t j = 0; j < t->m; j++)
			t->v[(size_t)n * t->m + j] = cs_test_source_value(k, (uint32_t)j, s->device);
		n++;
	}
	out->n = n;
	out->t0 = t->t0;
	out->t1 = t->t1;
	out->values = t->v;
	out->more = t->next < end;
	return 0;
}

static void t_destroy(cs_pm_source *s)
{
	if (!s)
		return;
	tick *t = s->impl;
	if (t) {
		free(t->t0);
		free(t->t1);
		free(t->v);
		free(t);
	}
	free(s);
}

static const cs_pm_source_ops tick_ops = {
	.configure = t_configure,
	.start = t_start,
	.stop = t_stop,
	.decode = t_decode,
	.set_interval = t_set_interval,
	.destroy = t_destroy,
};

cs_pm_source *cs_test_source_new(uint32_t device)
{
	cs_pm_source *s = calloc(1, sizeof *s);
	tick *t = calloc(1, sizeof *t);
	if (!s || !t) {
		free(s);
		free(t);
		return NULL;
	}
	s->ops = &tick_ops;
	s->device = device;
	s->impl = t;
	return s;
}
