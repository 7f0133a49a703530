/* replay_source.c - replays recorded PM batches; see replay_source.h. */
#include "replay_source.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rbatch {
	size_t first, n; /* samples [first, first+n) */
	uint64_t overflows, lost;
	unsigned seg;    /* the segment ("start" line) it belongs to */
} rbatch;

typedef struct replay {
	cs_replay_opts o;
	size_t m;            /* metrics in the recording */
	uint64_t *t0, *t1;
	double *v;
	size_t nsamples, cap;
	rbatch *b;
	size_t nb, bcap;
	size_t next;         /* next batch */
	unsigned nseg;       /* "start" lines seen (0 = one segment) */
	unsigned seg;        /* the segment the last start exposed */
	unsigned nstarts;
	int started;
	int armed;           /* started at least once: records exist */
	int64_t shift;       /* added to times when rebasing */
	uint64_t *out0, *out1;
} replay;

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int grow(replay *r)
{
	if (r->nsamples < r->cap)
		return 0;
	size_t cap = r->cap ? r->cap * 2 : 256;
	uint64_t *a = realloc(r->t0, cap * sizeof *a);
	if (!a)
		return -ENOMEM;
	r->t0 = a;
	uint64_t *b = realloc(r->t1, cap * sizeof *b);
	if (!b)
		return -ENOMEM;
	r->t1 = b;
	double *v = realloc(r->v, cap * (r->m ? r->m : 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->cap = cap;
	return 0;
}

static int parse(replay *r, const char *text, size_t len, char *err, size_t errlen)
{
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	int rc = 0;
	unsigned line = 0;
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l || *l == '#')
			continue;
		if (!strncmp(l, "metrics ", 8)) {
			r->m = 1;
			for (const char *c = l + 8; *c; c++)
				r->m += *c == ',';
			continue;
		}
		if (!strcmp(l, "start")) {
			r->nseg++;
			continue;
		}
		if (!strncmp(l, "batch", 5)) {
			if (r->nb == r->bcap) {
				size_t cap = r->bcap ? r->bcap * 2 : 16;
				rbatch *nb = realloc(r->b, cap * sizeof *nb);
				if (!nb) {
					rc = -ENOMEM;
					break;
				}
				r->b = nb;
				r->bcap = cap;
			}
			rbatch *b = &r->b[r->nb++];
			memset(b, 0, sizeof *b);
			b->first = r->nsamples;
			b->seg = r->nseg ? r->nseg - 1 : 0;
			const char *o = strstr(l, "overflows=");
			if (o)
				b->overflows = strtoull(o + 10, NULL, 10);
			const char *lo = strstr(l, "lost=");
			if (lo)
				b->lost = strtoull(lo + 5, NULL, 10);
			continue;
		}
		if (!r->m || !r->nb) {
			snprintf(err, errlen, "line %u: a sample before 'metrics' and 'batch'", line);
			rc = -EINVAL;
			break;
		}
		if ((rc = grow(r)) < 0)
			break;
		char *end;
		r->t0[r->nsamples] = strtoull(l, &end, 10);
		r->t1[r->nsamples] = strtoull(end, &end, 10);
		for (size_t k = 0; k < r->m; k++) {
			char *after;
			double v = strtod(end, &after);
			if (after == end) {
				snprintf(err, errlen, "line %u: expected %zu values", line, r->m);
				rc = -EINVAL;
				goto out;
			}
			r->v[r->nsamples * r->m + k] = v;
			end = after;
		}
		r->nsamples++;
		r->b[r->nb - 1].n++;
	}
out:
	free(copy);
	return rc;
}

static int rp_configure(cs_pm_source *s, const cs_pm_config *cfg, cs_pm_setup *setup,
			char *err, size_t errlen)
{
	replay *r = s->impl;
	if (r->o.configure_delay_ms) {
		struct timespec ts = {(time_t)(r->o.configure_delay_ms / 1000),
				      (long)(r->o.configure_delay_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (r->o.fail_configure) {
		snprintf(err, errlen, "%s", r->o.fail_configure);
		return -EPERM;
	}
	if (cfg->nmetrics != r->m) {
		snprintf(err, errlen, "the recording has %zu metrics, the run asks for %zu",
			 r->m, cfg->nmetrics);
		return -EINVAL;
	}
	setup->trigger = r->o.trigger ? r->o.trigger : "gpu_time_interval";
	setup->interval = cfg->interval_ns;
	setup->device_name = "replay";
	setup->chip = "GH100";
	setup->sm_count = 132;
	setup->clock_hz = 1.755e9;
	return 0;
}

static int rp_start(cs_pm_source *s, char *err, size_t errlen)
{
	replay *r = s->impl;
	unsigned last = r->nseg ? r->nseg - 1 : 0;
	r->seg = r->nstarts < last ? r->nstarts : last;
	r->nstarts++;
	if (r->o.starts)
		(*r->o.starts)++;
	/* A segment starts at its first batch. */
	while (r->next < r->nb && r->b[r->next].seg < r->seg)
		r->next++;
	r->started = 1;
	r->armed = 1;
	if (r->o.rebase && r->next < r->nb && r->b[r->next].n)
		r->shift = (int64_t)(wall_ns() - r->t0[r->b[r->next].first]);
	return 0;
}

static int rp_stop(cs_pm_source *s, char *err, size_t errlen)
{
	replay *r = s->impl;
	if (r->o.stop_delay_ms) {
		struct timespec ts = {(time_t)(r->o.stop_delay_ms / 1000),
				      (long)(r->o.stop_delay_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	r->started = 0;
	return 0;
}

static int rp_decode(cs_pm_source *s, cs_pm_batch *out, char *err, size_t errlen)
{
	replay *r = s->impl;
	memset(out, 0, sizeof *out);
	if (r->o.decode_delay_us) {
		struct timespec ts = {0, (long)r->o.decode_delay_us * 1000L};
		nanosleep(&ts, NULL);
	}
	if (r->o.endless) {
		out->more = 1;
		return 0;
	}
	if (!r->armed || r->next >= r->nb || r->b[r->next].seg != r->seg)
		return 0;
	const rbatch *b = &r->b[r->next++];
	for (size_t i = 0; i < b->n; i++) {
		r->out0[i] = r->t0[b->first + i] + (uint64_t)r->shift;
		r->out1[i] = r->t1[b->first + i] + (uint64_t)r->shift;
	}
	out->n = (uint32_t)b->n;
	out->t0 = r->out0;
	out->t1 = r->out1;
	out->values = r->v + b->first * r->m;
	out->overflows = b->overflows;
	out->lost = b->lost;
	out->more = r->next < r->nb && r->b[r->next].seg == r->seg;
	return 0;
}

static void rp_destroy(cs_pm_source *s)
{
	if (!s)
		return;
	replay *r = s->impl;
	if (r) {
		if (r->o.destroyed)
			*r->o.destroyed = 1;
		free(r->t0);
		free(r->t1);
		free(r->v);
		free(r->b);
		free(r->out0);
		free(r->out1);
		free(r);
	}
	free(s);
}

static const cs_pm_source_ops replay_ops = {
	.configure = rp_configure,
	.start = rp_start,
	.stop = rp_stop,
	.decode = rp_decode,
	.destroy = rp_destroy,
};

cs_pm_source *cs_replay_source_new(const cs_replay_opts *o, const char *text,
				   size_t len, char *err, size_t errlen)
{
	cs_pm_source *s = calloc(1, sizeof *s);
	replay *r = calloc(1, sizeof *r);
	if (!s || !r) {
		free(s);
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->o = *o;
	s->ops = &replay_ops;
	s->device = o->device;
	s->impl = r;
	int rc = parse(r, text, len, err, errlen);
	size_t maxn = 1;
	for (size_t i = 0; i < r->nb; i++)
		if (r->b[i].n > maxn)
			maxn = r->b[i].n;
	if (rc == 0) {
		r->out0 = malloc(maxn * sizeof *r->out0);
		r->out1 = malloc(maxn * sizeof *r->out1);
		if (!r->out0 || !r->out1)
			rc = -ENOMEM;
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		rp_destroy(s);
		return NULL;
	}
	return s;
}
