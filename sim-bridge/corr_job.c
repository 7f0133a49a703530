/*
 * corr_job.c - loading correlation inputs from the store (corr_job.h).
 */
#include "corr_job.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "ranges.h"
#include "runs.h"
#include "reader.h"

typedef struct acc {
	cs_cjob_side *side;
	cs_expr *e;
	size_t cap;
	int err;
	/* a counter axis: its value column, the cycles so far at the last
	 * knot, the last row's end and its cycles per run unit */
	int axis_col;
	double cum, last_t1, ratio;
	size_t kcap;
} acc;

/* Adds a knot (time, cycles) of a counter axis, times ascending. */
static int knot(acc *a, double t, double c)
{
	cs_cjob_side *s = a->side;
	if (s->nknots && t <= s->kt[s->nknots - 1])
		return 0;
	if (s->nknots == a->kcap) {
		size_t n = a->kcap ? a->kcap * 2 : 4096;
		double *gt = realloc(s->kt, n * sizeof *gt);
		if (gt)
			s->kt = gt;
		double *gc = realloc(s->kc, n * sizeof *gc);
		if (gc)
			s->kc = gc;
		if (!gt || !gc)
			return -ENOMEM;
		a->kcap = n;
	}
	s->kt[s->nknots] = t;
	s->kc[s->nknots++] = c;
	return 0;
}

/* A row's cycles on a counter axis: its counter value, the knots at its
 * start and end (a gap before it at the previous row's clock). NaN when
 * neither its counter nor a previous row gives one. */
static double axis_row(acc *a, double t0, double t1, const double *values)
{
	double c = values[a->axis_col];
	if (!(c >= 0) || !isfinite(c))
		c = a->ratio > 0 ? (t1 - t0) * a->ratio : (double)NAN;
	if (isnan(c))
		return c;
	if (a->ratio > 0 && t0 > a->last_t1 && a->side->nknots)
		a->cum += (t0 - a->last_t1) * a->ratio;
	if (knot(a, t0, a->cum) < 0 || knot(a, t1, a->cum + c) < 0) {
		a->err = -ENOMEM;
		return NAN;
	}
	a->cum += c;
	a->last_t1 = t1;
	if (t1 > t0 && c > 0)
		a->ratio = c / (t1 - t0);
	return c;
}

/* Every scanned row is evaluated, also those before the window, so that
 * delta() has the sample before the window's first. */
static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	acc *a = ctx;
	cs_cjob_side *s = a->side;
	(void)seq;
	double f = s->cycles_per_unit;
	double len = ((double)t1 - (double)t0) * f;
	if (a->axis_col >= 0) {
		len = axis_row(a, (double)t0, (double)t1, values) * s->cycle_scale;
		if (a->err)
			return a->err;
	}
	double v = cs_expr_eval(a->e, values, len);
	if (t1 <= s->w0 || t0 >= s->w1)
		return 0;
	if (s->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 4096;
		double *g0 = realloc(s->t0, c * sizeof *g0);
		if (g0)
			s->t0 = g0;
		double *g1 = realloc(s->t1, c * sizeof *g1);
		if (g1)
			s->t1 = g1;
		double *gv = realloc(s->v, c * sizeof *gv);
		if (gv)
			s->v = gv;
		if (!g0 || !g1 || !gv)
			return -ENOMEM;
		a->cap = c;
	}
	/* On a counter axis the run times are kept and put on the axis
	 * once every knot is known. */
	s->t0[s->n] = a->axis_col >= 0 ? (double)t0 : ((double)t0 - (double)s->w0) * f;
	s->t1[s->n] = a->axis_col >= 0 ? (double)t1 : ((double)t1 - (double)s->w0) * f;
	/* A rate is binned as what it adds up to over the sample. */
	s->v[s->n] = s->is_rate ? v * len : v;
	s->n++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Resolves the window spec into [w0, w1). */
static int window(cs_store *s, cs_cjob_side *side, const char *spec, char *err, size_t errlen)
{
	uint64_t lo, run_end;
	int rc = cs_read_run_extent(s, side->run, &lo, &run_end);
	if (rc < 0) {
		snprintf(err, errlen, "run %s has no samples", side->run_name);
		return rc;
	}
	if (!spec || !*spec) {
		/* From the first sample's start to the last one's end. */
		side->w0 = lo;
		side->w1 = run_end;
		snprintf(side->window, sizeof side->window, "the whole run");
		return 0;
	}
	unsigned long long a, b;
	char tail;
	if (sscanf(spec, "%llu:%llu%c", &a, &b, &tail) == 2) {
		if (b <= a) {
			snprintf(err, errlen, "window '%s': the end must come after the start", spec);
			return -EINVAL;
		}
		side->w0 = a;
		side->w1 = b;
		snprintf(side->window, sizeof side->window, "[%llu, %llu)", a, b);
		return 0;
	}
	char kind[32] = "", glob[256] = "*";
	long occ = 0;
	const char *hash = strrchr(spec, '#');
	const char *colon = strchr(spec, ':');
	if (hash) {
		char *end;
		occ = strtol(hash + 1, &end, 10);
		if (end == hash + 1 || *end || occ < 0) {
			snprintf(err, errlen, "window '%s': expected '#N' with N a kernel index from 0", spec);
			return -EINVAL;
		}
	}
	size_t body = hash ? (size_t)(hash - spec) : strlen(spec);
	if (colon && (size_t)(colon - spec) < body) {
		snprintf(kind, sizeof kind, "%.*s", (int)(colon - spec), spec);
		snprintf(glob, sizeof glob, "%.*s", (int)(body - (size_t)(colon - spec) - 1), colon + 1);
		if (!glob[0])
			snprintf(glob, sizeof glob, "*");
	} else if (body == 0) {
		snprintf(kind, sizeof kind, "%s", !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel");
	} else {
		snprintf(err, errlen, "window '%s': expected T0:T1, KIND:GLOB#N (kernel:*gemm*#2) or #N",
			 spec);
		return -EINVAL;
	}
	/* the occ-th (from 0) of the kind's ranges the glob matches, by start */
	cs_ranges_query q = {.run = side->run, .to = UINT64_MAX, .window = CS_RANGES_TOUCHING,
			     .kinds = kind, .name = glob, .name_glob = 1};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	cs_range_row r;
	int more = cur ? 1 : -EIO;
	for (long i = 0; i <= occ && more == 1; i++)
		more = cs_ranges_next(cur, &r);
	if (more == 1) {
		side->w0 = (uint64_t)r.t0;
		side->w1 = (uint64_t)r.t1;
		if (side->w1 <= side->w0)
			side->w1 = side->w0 + 1;
		snprintf(side->window, sizeof side->window, "%s '%.200s' #%ld [%llu, %llu)", kind,
			 r.name ? r.name : "", occ, (unsigned long long)side->w0,
			 (unsigned long long)side->w1);
		rc = 0;
	} else if (more == 0) {
		snprintf(err, errlen, "window '%s': run %s has no %s range #%ld matching '%s'", spec,
			 side->run_name, kind, occ, glob);
		rc = -ENOENT;
	} else {
		snprintf(err, errlen, "window '%s': reading ranges: %s", spec, cs_store_errmsg(s));
		rc = -EIO;
	}
	cs_ranges_close(cur);
	return rc;
}

/* The run's clock: runs.clock_hz, else device 0's; with a domain
 * ("core", "l2", "icnt", "dram"), that entry of the run's
 * meta.clock_domains_hz (core falls back to the run's clock). */
static double run_clock(cs_store *s, int64_t run, const char *domain)
{
	return cs_runs_clock(s, run, domain);
}

int cs_cjob_clock(cs_store *s, const char *run, const char *what, double *hz, char *err,
		  size_t errlen)
{
	char *end;
	double mhz = strtod(what, &end);
	if (end != what && !*end) {
		if (!(mhz > 0) || !isfinite(mhz)) {
			snprintf(err, errlen, "clock '%s': expected a positive number of MHz", what);
			return -EINVAL;
		}
		*hz = mhz * 1e6;
		return 0;
	}
	static const char *const domains[] = {"core", "l2", "icnt", "dram"};
	int known = 0;
	for (size_t i = 0; i < sizeof domains / sizeof *domains; i++)
		known |= !strcmp(what, domains[i]);
	if (!known) {
		snprintf(err, errlen, "clock '%s': expected MHz or a clock domain (core, l2, icnt, dram)",
			 what);
		return -EINVAL;
	}
	int64_t id;
	if (cs_read_find_run(s, run, &id) < 0) {
		snprintf(err, errlen, "no run '%s' in the database", run);
		return -ENOENT;
	}
	if (!((*hz = run_clock(s, id, what)) > 0)) {
		snprintf(err, errlen, "run %s records no %s clock (an Accel-Sim stdout import records "
			 "all four domains): give MHz instead", run, what);
		return -ENOENT;
	}
	return 0;
}

/* Whether json_extract(meta, path) of the run is value. */
static int run_meta_is(cs_store *s, int64_t run, const char *path, const char *value)
{
	return cs_runs_meta_is(s, run, path, value);
}

/* Per-sample cycle counters, the preferred first: the SM clock domain's
 * (what a simulator's core cycles count), then the system's. */
static const char *const axis_counters[] = {
	"gpc__cycles_elapsed.max", "gr__cycles_elapsed.max", "sm__cycles_elapsed.avg",
	"sm__cycles_elapsed.max",  "sys__cycles_elapsed.avg", "sys__cycles_elapsed.max",
};

/* The axis of an ns side with no clock given: a cycle counter of the
 * run (its column added to the scan), else the run's clock, else device
 * 0's. */
static int choose_axis(cs_store *s, cs_cjob_side *out, char (*names)[256], const uint32_t *ids,
		       uint32_t nids, uint32_t *used, size_t *nused, int *axis_col,
		       const char *option, char *err, size_t errlen)
{
	for (size_t c = 0; c < sizeof axis_counters / sizeof *axis_counters; c++)
		for (uint32_t i = 0; i < nids; i++) {
			if (strcmp(names[i], axis_counters[c]))
				continue;
			*axis_col = (int)cs_expr_column(used, nused, ids[i]);
			snprintf(out->axis_metric, sizeof out->axis_metric, "%s", names[i]);
			snprintf(out->axis, sizeof out->axis, "cycles from %s", names[i]);
			return 0;
		}
	cs_run_summary sum;
	double run_hz = cs_runs_summary(s, out->run, &sum) == 0 ? sum.clock_hz : 0;
	out->clock_hz = run_clock(s, out->run, NULL);
	if (!(out->clock_hz > 0)) {
		snprintf(err, errlen, "run %s is in ns and has no clock and no per-sample cycle counter "
			 "(%s, ...), and the other side is in cycles: give its clock (%s MHZ)",
			 out->run_name, axis_counters[0], option);
		return -EINVAL;
	}
	snprintf(out->axis, sizeof out->axis, "%.1f MHz (%s clock)", out->clock_hz / 1e6,
		 run_hz > 0 ? "the run's" : "device 0's");
	out->cycles_per_unit = out->clock_hz / 1e9 * out->cycle_scale;
	return 0;
}

/* After the scan of a counter axis: knots as cycles from w0 (scaled),
 * samples put on them, the mean clock for the record. */
static int axis_finish(cs_cjob_side *out)
{
	if (out->nknots < 2)
		return -ENODATA;
	double span_t = out->kt[out->nknots - 1] - out->kt[0];
	double span_c = out->kc[out->nknots - 1] - out->kc[0];
	out->cycles_per_unit = span_t > 0 && span_c > 0 ? span_c / span_t : 1;
	double c0 = cs_cjob_cycles(out, (double)out->w0);
	for (size_t i = 0; i < out->nknots; i++)
		out->kc[i] = (out->kc[i] - c0) * out->cycle_scale;
	out->cycles_per_unit *= out->cycle_scale;
	for (size_t i = 0; i < out->n; i++) {
		out->t0[i] = cs_cjob_cycles(out, out->t0[i]);
		out->t1[i] = cs_cjob_cycles(out, out->t1[i]);
	}
	out->clock_hz = out->cycles_per_unit / out->cycle_scale * 1e9;
	return 0;
}

int cs_cjob_load(cs_store *s, const cs_cjob_spec *spec, cs_cjob_side *out, char *err,
		 size_t errlen)
{
	memset(out, 0, sizeof *out);
	int rc = cs_read_find_run(s, spec->run, &out->run);
	if (rc < 0) {
		snprintf(err, errlen, "no run '%s' in the database", spec->run);
		return rc;
	}
	snprintf(out->run_name, sizeof out->run_name, "%s", spec->run);
	cs_run_summary sum;
	if (cs_runs_summary(s, out->run, &sum) == 0) {
		snprintf(out->unit, sizeof out->unit, "%s", sum.time_unit);
		snprintf(out->run_name, sizeof out->run_name, "%.*s", (int)sizeof out->run_name - 1, sum.name);
	}
	out->cycle_scale = spec->cycle_scale > 0 ? spec->cycle_scale : 1;
	int ns = !strcmp(out->unit, "ns");
	out->axis_unit = ns && spec->same_unit ? "ns" : "cycles";
	if (!ns) {
		out->clock_hz = run_clock(s, out->run, NULL); /* for the record only */
		snprintf(out->axis, sizeof out->axis, "cycles (the run's unit)");
	} else if (spec->same_unit) {
		out->clock_hz = 1e9;
		snprintf(out->axis, sizeof out->axis, "ns (both runs' unit: no clock needed)");
	} else if (spec->clock_hz > 0) {
		out->clock_hz = spec->clock_hz;
		snprintf(out->axis, sizeof out->axis, "%.1f MHz (given)", spec->clock_hz / 1e6);
	}
	out->cycles_per_unit = (ns ? out->clock_hz / 1e9 : 1) * out->cycle_scale;
	out->per_kernel_samples = run_meta_is(s, out->run, "$.kernel_accounting", "per-kernel");
	cs_expr *e = cs_expr_parse(spec->expr ? spec->expr : "", err, errlen);
	if (!e)
		return -EINVAL;
	if ((rc = window(s, out, spec->window, err, errlen)) < 0) {
		cs_expr_free(e);
		return rc;
	}
	out->is_rate = cs_expr_is_rate(e);
	/* The expression's names -> metric columns of the run. */
	uint32_t *ids = NULL, nids = 0;
	acc a = {.side = out, .e = e};
	uint32_t *used = NULL;
	size_t nused = 0;
	rc = cs_read_metric_ids(s, out->run, &ids, &nids);
	if (rc == 0 && !(used = calloc(nids + 1, sizeof *used)))
		rc = -ENOMEM;
	/* The run's metric names, read once (each expression name is matched
	 * against all of them). */
	char (*names)[256] = rc == 0 ? calloc(nids + 1, sizeof *names) : NULL;
	if (rc == 0 && !names)
		rc = -ENOMEM;
	size_t plen = spec->metric_prefix ? strlen(spec->metric_prefix) : 0;
	for (uint32_t i = 0; rc == 0 && i < nids; i++) {
		if (cs_read_metric_name(s, out->run, ids[i], names[i], sizeof names[i]) < 0)
			names[i][0] = '\0';
		else if (plen && (strncmp(names[i], spec->metric_prefix, plen) || names[i][plen] != ':'))
			names[i][0] = '\0';
		else if (plen)
			memmove(names[i], names[i] + plen + 1, strlen(names[i] + plen + 1) + 1);
	}
	a.axis_col = -1;
	if (rc == 0 && ns && !(out->clock_hz > 0))
		rc = choose_axis(s, out, names, ids, nids, used, &nused, &a.axis_col,
				 spec->clock_option ? spec->clock_option : "--hw-clock-mhz", err, errlen);
	if (rc == 0)
		rc = cs_expr_bind(e, out->run_name, out->run, names, ids, nids, used, &nused, err,
				  errlen);
	if (rc == 0) {
		uint64_t span = out->w1 - out->w0;
		cs_scan q = {.run = out->run, .device = spec->device, .m = (uint32_t)nused,
			     .metrics = used, .from = out->w0 > span ? out->w0 - span : 0, .to = out->w1};
		rc = cs_read_raw(s, &q, on_row, &a);
		if (rc < 0)
			snprintf(err, errlen, "reading run %s: %s", out->run_name, cs_store_errmsg(s));
	}
	if (rc == 0 && !out->n) {
		snprintf(err, errlen, "run %s has no samples in %s", out->run_name, out->window);
		rc = -ENODATA;
	}
	if (rc == 0 && a.axis_col >= 0 && (rc = axis_finish(out)) < 0)
		snprintf(err, errlen, "run %s: no sample has a usable %s, the cycle axis", out->run_name,
			 out->axis_metric);
	if (rc == 0) {
		out->cycles = cs_cjob_cycles(out, (double)out->w1);
		double *len = malloc(out->n * sizeof *len);
		if (len) {
			for (size_t i = 0; i < out->n; i++)
				len[i] = out->t1[i] - out->t0[i];
			qsort(len, out->n, sizeof *len, cmp_double);
			out->median_sample = len[out->n / 2];
			free(len);
		}
	}
	free(names);
	free(used);
	free(ids);
	cs_expr_free(e);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		cs_cjob_side_free(out);
	return rc;
}

void cs_cjob_side_free(cs_cjob_side *side)
{
	if (!side)
		return;
	free(side->t0);
	free(side->t1);
	free(side->v);
	free(side->kt);
	free(side->kc);
	side->t0 = side->t1 = side->v = side->kt = side->kc = NULL;
	side->nknots = 0;
}

double cs_cjob_cycles(const cs_cjob_side *side, double t)
{
	size_t n = side->nknots;
	if (!n)
		return (t - (double)side->w0) * side->cycles_per_unit;
	const double *kt = side->kt, *kc = side->kc;
	if (n == 1)
		return kc[0] + (t - kt[0]) * side->cycles_per_unit;
	size_t lo = 0, hi = n - 1;
	if (t <= kt[0])
		hi = 1;
	else if (t >= kt[n - 1])
		lo = n - 2;
	else
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (kt[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
	double slope = (kc[hi] - kc[lo]) / (kt[hi] - kt[lo]);
	if ((t < kt[0] || t > kt[n - 1]) && !(slope > 0))
		slope = side->cycles_per_unit; /* the mean clock past the ends */
	return kc[lo] + (t - kt[lo]) * slope;
}

cs_corr_series cs_cjob_series(const cs_cjob_side *side)
{
	cs_corr_series s = {side->n, side->t0, side->t1, side->v};
	return s;
}

/* Grows the per-kernel arrays of k to cap entries. */
static int kernels_grow(cs_cjob_kernels *k, size_t cap)
{
	char **gn = realloc(k->names, cap * sizeof *gn);
	if (gn)
		k->names = gn;
	char **ga = realloc(k->apps, cap * sizeof *ga);
	if (ga)
		k->apps = ga;
	double *g0 = realloc(k->t0, cap * sizeof *g0);
	if (g0)
		k->t0 = g0;
	double *g1 = realloc(k->t1, cap * sizeof *g1);
	if (g1)
		k->t1 = g1;
	int64_t *gu = realloc(k->uid, cap * sizeof *gu);
	if (gu)
		k->uid = gu;
	int64_t *gs = realloc(k->stream, cap * sizeof *gs);
	if (gs)
		k->stream = gs;
	return gn && ga && g0 && g1 && gu && gs ? 0 : -ENOMEM;
}

int cs_cjob_kernel_spans(cs_store *s, const cs_cjob_side *side, double shift,
			 cs_cjob_kernels *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof *k);
	const char *kind = !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel";
	cs_ranges_query q = {.run = side->run, .from = side->w0, .to = side->w1,
			     .window = CS_RANGES_STRICT, .kinds = kind, .arg = "$.app"};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	if (!cur) {
		snprintf(err, errlen, "reading kernel ranges: %s", cs_store_errmsg(s));
		return -EIO;
	}
	size_t cap = 0;
	int rc = 0, more;
	cs_range_row r;
	while ((more = cs_ranges_next(cur, &r)) == 1) {
		if (k->n == cap && (rc = kernels_grow(k, cap = cap ? cap * 2 : 64)) < 0)
			break;
		k->apps[k->n] = NULL;
		if (!(k->names[k->n] = strdup(r.name ? r.name : "")) ||
		    (r.arg && !(k->apps[k->n] = strdup(r.arg)))) {
			if (k->names[k->n])
				k->n++; /* freed with the others */
			rc = -ENOMEM;
			break;
		}
		k->t0[k->n] = cs_cjob_cycles(side, (double)r.t0) + shift;
		k->t1[k->n] = cs_cjob_cycles(side, (double)r.t1) + shift;
		k->uid[k->n] = r.has & CS_RANGE_HAS_CORRELATION ? r.correlation_id : -1;
		k->sim = !strcmp(kind, "sim-kernel");
		k->stream[k->n] = r.has & CS_RANGE_HAS_STREAM ? r.stream : -1;
		k->n++;
	}
	cs_ranges_close(cur);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (more < 0 && !rc) {
		snprintf(err, errlen, "reading kernel ranges: %s", cs_store_errmsg(s));
		rc = -EIO;
	}
	return rc;
}

/* Notes that kernels a and b ran side by side (each pair is seen once):
 * the first few by index for the note, all of them counted. */
#define SHARE_LIST 8
static int share(cs_cjob_kernels *k, size_t a, size_t b)
{
	size_t n = k->shared_n[a]++;
	if (n >= SHARE_LIST)
		return 0;
	size_t *g = realloc(k->shared_with[a], (n + 2) * sizeof *g);
	if (!g)
		return -ENOMEM;
	g[n] = b;
	g[n + 1] = SIZE_MAX;
	k->shared_with[a] = g;
	return 0;
}

/* The kernel whose range is exactly [t0, t1), or SIZE_MAX (none, or more
 * than one). Kernels are in order of start. */
static size_t exact_kernel(const cs_cjob_kernels *k, double t0, double t1)
{
	double tol = 1e-9 * (t1 - t0 > 1 ? t1 - t0 : 1);
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->t0[mid] < t0 - tol)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t found = SIZE_MAX;
	for (size_t j = lo; j < k->n && k->t0[j] <= t0 + tol; j++)
		if (fabs(k->t1[j] - t1) <= tol) {
			if (found != SIZE_MAX)
				return SIZE_MAX;
			found = j;
		}
	return found;
}

/* Credits v over [t0, t1) to the kernels among act[0..na) that ran in
 * it, in proportion to the time each ran there alone; time in which
 * several ran goes to the shared total, as does a shared kernel's part.
 * Time no kernel ran in follows the kernels' parts (what a counter counts
 * while kernels run is their work, idle edges included); a sample no
 * kernel ran in goes to the outside total. A sample of no length goes to
 * the kernel running at its time. */
static void credit(cs_cjob_kernels *k, const size_t *act, size_t na, double t0, double t1,
		   double v, double *cuts)
{
	if (!(t1 > t0)) {
		size_t who = SIZE_MAX, cover = 0;
		for (size_t i = 0; i < na; i++)
			if (k->t0[act[i]] <= t0 && k->t1[act[i]] > t0)
				cover++, who = act[i];
		if (cover == 1 && !k->shared[who])
			k->totals[who] += v;
		else if (cover)
			k->shared_total += v;
		else
			k->outside_total += v;
		return;
	}
	size_t nc = 0;
	cuts[nc++] = t0;
	cuts[nc++] = t1;
	for (size_t i = 0; i < na; i++) {
		if (k->t0[act[i]] > t0 && k->t0[act[i]] < t1)
			cuts[nc++] = k->t0[act[i]];
		if (k->t1[act[i]] > t0 && k->t1[act[i]] < t1)
			cuts[nc++] = k->t1[act[i]];
	}
	qsort(cuts, nc, sizeof *cuts, cmp_double);
	/* Twice over the stretches: the time kernels ran, then the parts. */
	double covered = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t c = 0; c + 1 < nc; c++) {
			double a = cuts[c], b = cuts[c + 1];
			if (!(b > a))
				continue;
			size_t who = SIZE_MAX, cover = 0;
			for (size_t i = 0; i < na; i++)
				if (k->t0[act[i]] <= a && k->t1[act[i]] >= b)
					cover++, who = act[i];
			if (!cover)
				continue;
			if (pass == 0) {
				covered += b - a;
				continue;
			}
			double part = v * ((b - a) / covered); /* exact when one kernel covers all */
			if (cover == 1 && !k->shared[who])
				k->totals[who] += part;
			else
				k->shared_total += part;
		}
	if (!(covered > 0))
		k->outside_total += v;
}

int cs_cjob_kernel_totals(cs_store *s, const cs_cjob_side *side, cs_cjob_kernels *k, char *err,
			  size_t errlen)
{
	int rc = cs_cjob_kernel_spans(s, side, 0, k, err, errlen);
	if (rc < 0) {
		cs_cjob_kernels_free(k);
		return rc;
	}
	if (!k->n) {
		snprintf(err, errlen, "run %s has no %s ranges", side->run_name,
			 !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel");
		cs_cjob_kernels_free(k);
		return -ENOENT;
	}
	size_t n = k->n;
	k->totals = calloc(n, sizeof *k->totals);
	k->shared = calloc(n, 1);
	k->shared_with = calloc(n, sizeof *k->shared_with);
	k->shared_n = calloc(n, sizeof *k->shared_n);
	k->overlap = calloc(n, sizeof *k->overlap);
	size_t *act = calloc(n, sizeof *act);
	double *cuts = calloc(2 * n + 2, sizeof *cuts);
	unsigned char *own = calloc(n, 1);
	size_t *mine = calloc(side->n + 1, sizeof *mine);
	if (!k->totals || !k->shared || !k->shared_with || !k->shared_n || !k->overlap || !act ||
	    !cuts || !own || !mine)
		rc = -ENOMEM;
	/* Which kernels ran beside which (ranges in order of start). */
	size_t na = 0;
	for (size_t j = 0; rc == 0 && j < n; j++) {
		size_t keep = 0;
		for (size_t i = 0; i < na; i++)
			if (k->t1[act[i]] > k->t0[j])
				act[keep++] = act[i];
		na = keep;
		for (size_t i = 0; rc == 0 && i < na; i++) {
			size_t o = act[i];
			double ov = (k->t1[o] < k->t1[j] ? k->t1[o] : k->t1[j]) - k->t0[j];
			if (!(ov > 0))
				continue;
			k->overlap[o] += ov;
			k->overlap[j] += ov;
			if ((rc = share(k, o, j)) == 0)
				rc = share(k, j, o);
		}
		act[na++] = j;
	}
	/* A run whose samples are each one kernel's own: such a sample is
	 * its kernel's value, overlap or not. */
	for (size_t i = 0; rc == 0 && i < side->n; i++) {
		mine[i] = side->per_kernel_samples ? exact_kernel(k, side->t0[i], side->t1[i])
						   : SIZE_MAX;
		if (mine[i] != SIZE_MAX)
			own[mine[i]] = 1;
	}
	for (size_t j = 0; rc == 0 && j < n; j++) {
		k->shared[j] = k->shared_with[j] && !own[j];
		if (k->overlap[j] > k->t1[j] - k->t0[j])
			k->overlap[j] = k->t1[j] - k->t0[j];
	}
	/* Samples, in order of start, against the kernels running then. */
	size_t next = 0;
	na = 0;
	for (size_t i = 0; rc == 0 && i < side->n; i++) {
		double v = side->v[i], t0 = side->t0[i], t1 = side->t1[i];
		if (isnan(v))
			continue;
		if (mine[i] != SIZE_MAX) {
			k->totals[mine[i]] += v;
			continue;
		}
		while (next < n && k->t0[next] < t1)
			act[na++] = next++;
		size_t keep = 0;
		for (size_t a = 0; a < na; a++)
			if (k->t1[act[a]] > t0)
				act[keep++] = act[a];
		na = keep;
		credit(k, act, na, t0, t1, v, cuts);
	}
	for (size_t j = 0; rc == 0 && j < n; j++) {
		if (k->shared[j]) {
			k->totals[j] = NAN;
			continue;
		}
		k->kernels_total += k->totals[j];
		/* A rate's kernel value is its mean over the kernel. */
		if (side->is_rate)
			k->totals[j] = k->t1[j] > k->t0[j] ? k->totals[j] / (k->t1[j] - k->t0[j])
							   : (double)NAN;
	}
	free(act);
	free(cuts);
	free(own);
	free(mine);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		cs_cjob_kernels_free(k);
	}
	return rc;
}

void cs_cjob_kernels_free(cs_cjob_kernels *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++) {
		free(k->names[i]);
		free(k->apps[i]);
		if (k->shared_with)
			free(k->shared_with[i]);
	}
	free(k->names);
	free(k->apps);
	free(k->totals);
	free(k->t0);
	free(k->t1);
	free(k->uid);
	free(k->stream);
	free(k->shared);
	free(k->shared_with);
	free(k->shared_n);
	free(k->overlap);
	memset(k, 0, sizeof *k);
}

/* The C++ runtime's demangler (libstdc++, Itanium ABI). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cs_cjob_demangle(const char *name, char *out, size_t outlen)
{
	char *d = NULL;
	int status = -1;
	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	snprintf(out, outlen, "%s", d && status == 0 ? d : name);
	free(d);
	return out;
}

char *cs_cjob_base_name(const char *name, char *out, size_t outlen)
{
	char *d = NULL;
	int status = -1;
	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	const char *src = d && status == 0 ? d : name;
	/* Cut at the parameter list's '(' (the first at template depth 0). */
	size_t cut = strlen(src);
	int depth = 0;
	for (size_t i = 0; src[i]; i++) {
		if (src[i] == '<')
			depth++;
		else if (src[i] == '>' && depth > 0)
			depth--;
		else if (src[i] == '(' && depth == 0 && i > 0) {
			cut = i;
			break;
		}
	}
	snprintf(out, outlen, "%.*s", (int)cut, src);
	free(d);
	return out;
}

const char *cs_cjob_how_name(int how)
{
	static const char *const names[] = {"uid", "name", "demangled name", "position"};
	return how >= 0 && how <= CS_MATCH_POSITION ? names[how] : "?";
}

/* Kernel indices in order of a key, then of index: a side's kernels
 * grouped by name, demangled name or uid. */
typedef struct keyed {
	const char *name; /* NULL: by uid */
	int64_t uid;
	size_t i;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	int c = a->name ? strcmp(a->name, b->name) : (a->uid > b->uid) - (a->uid < b->uid);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* One matching pass: each unmatched sim kernel in order takes the next
 * untaken hw kernel with the same key. hk is sorted; cur[g] is where the
 * search in the group starting at g goes on. */
static void match_pass(keyed *hk, size_t nh, const keyed *sk, size_t ns, size_t *cur,
		       char *taken, size_t *pick, int *how, int pass, const char (*hb)[256],
		       const char (*sb)[256])
{
	for (size_t g = 0; g < nh; g++)
		cur[g] = g;
	for (size_t x = 0; x < ns; x++) {
		size_t i = sk[x].i;
		if (pick[i] != SIZE_MAX)
			continue;
		keyed want = sk[x];
		want.i = 0;
		size_t lo = 0, hi = nh;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cmp_keyed(&hk[mid], &want) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t g = lo; /* the group's first entry */
		for (size_t j = cur[g]; j < nh; j++) {
			keyed same = hk[j];
			same.i = 0;
			if (cmp_keyed(&same, &want))
				break;
			/* a uid names the same kernel only if the names agree too */
			if (taken[hk[j].i] || (pass == CS_MATCH_UID && strcmp(hb[hk[j].i], sb[i])))
				continue;
			taken[hk[j].i] = 1;
			pick[i] = hk[j].i;
			how[i] = pass;
			cur[g] = j + 1;
			break;
		}
	}
}

size_t cs_cjob_match(const cs_cjob_kernels *hw, const cs_cjob_kernels *sim, cs_cjob_pair *out)
{
	size_t n = 0, nh = hw->n, ns = sim->n;
	char *taken = calloc(nh + 1, 1);
	size_t *pick = calloc(ns + 1, sizeof *pick), *cur = calloc(nh + 1, sizeof *cur);
	int *how = calloc(ns + 1, sizeof *how);
	keyed *hk = calloc(nh + 1, sizeof *hk), *sk = calloc(ns + 1, sizeof *sk);
	char (*hb)[256] = calloc(nh + 1, sizeof *hb), (*sb)[256] = calloc(ns + 1, sizeof *sb);
	if (!taken || !pick || !cur || !how || !hk || !sk || !hb || !sb)
		goto out;
	for (size_t j = 0; j < nh; j++)
		cs_cjob_base_name(hw->names[j], hb[j], sizeof hb[j]);
	for (size_t i = 0; i < ns; i++) {
		cs_cjob_base_name(sim->names[i], sb[i], sizeof sb[i]);
		pick[i] = SIZE_MAX;
	}
	/* 1. the same launch uid (simulator runs number their launches the
	 * same way; a CUPTI correlation id is another numbering) and the
	 * same kernel; 2. the name; 3. the demangled name; each in order */
	for (int pass = hw->sim && sim->sim ? CS_MATCH_UID : CS_MATCH_NAME; pass <= CS_MATCH_DEMANGLED;
	     pass++) {
		size_t nk = 0;
		for (size_t j = 0; j < nh; j++)
			if (pass != CS_MATCH_UID || hw->uid[j] >= 0)
				hk[nk++] = (keyed){pass == CS_MATCH_UID ? NULL
						   : pass == CS_MATCH_NAME ? hw->names[j] : hb[j],
						   hw->uid[j], j};
		qsort(hk, nk, sizeof *hk, cmp_keyed);
		size_t nsk = 0;
		for (size_t i = 0; i < ns; i++)
			if (pass != CS_MATCH_UID || sim->uid[i] >= 0)
				sk[nsk++] = (keyed){pass == CS_MATCH_UID ? NULL
						    : pass == CS_MATCH_NAME ? sim->names[i] : sb[i],
						    sim->uid[i], i};
		match_pass(hk, nk, sk, nsk, cur, taken, pick, how, pass, (const char (*)[256])hb,
			   (const char (*)[256])sb);
	}
	/* 4. nothing in common: by position */
	int any = 0;
	for (size_t i = 0; i < ns; i++)
		any |= pick[i] != SIZE_MAX;
	for (size_t i = 0; !any && i < ns && i < nh; i++)
		pick[i] = i, how[i] = CS_MATCH_POSITION;
	for (size_t i = 0; i < ns; i++)
		if (pick[i] != SIZE_MAX)
			out[n++] = (cs_cjob_pair){pick[i], i, how[i]};
out:
	free(taken);
	free(pick);
	free(cur);
	free(how);
	free(hk);
	free(sk);
	free(hb);
	free(sb);
	return n;
}

/* What makes the statistics of a comparison mean little, each with
 * what to change. */
static size_t warnings(const cs_corr_result *r, size_t hw_samples, size_t sim_samples,
		       char w[4][256])
{
	size_t n = 0;
	if (r->bins < 8)
		snprintf(w[n++], sizeof w[0], "only %zu bins: r, rho and MAPE over fewer than 8 bins "
			 "mean little; lower --bin-cycles (or use a longer window)", r->bins);
	double lo = r->hw_cycles < r->sim_cycles ? r->hw_cycles : r->sim_cycles;
	double hi = r->hw_cycles < r->sim_cycles ? r->sim_cycles : r->hw_cycles;
	if (lo > 0 && hi > 2 * lo)
		snprintf(w[n++], sizeof w[0], "the windows' lengths differ by more than 2x (hw %.0f, "
			 "sim %.0f cycles): check the windows, the hardware clock or --sim-clock",
			 r->hw_cycles, r->sim_cycles);
	int hz = 1, sz = 1;
	for (size_t i = 0; i < r->bins; i++) {
		hz &= r->hw_bins[i] == 0;
		sz &= r->sim_bins[i] == 0;
	}
	if (hz || sz)
		snprintf(w[n++], sizeof w[0], "the %s side is all zero over the compared bins (%zu "
			 "samples): check its metric and window", hz ? "hardware" : "simulator",
			 hz ? hw_samples : sim_samples);
	return n;
}

/* Whether run (as written) is in ns; 0 when it is not there (its load
 * says so). */
static int run_in_ns(cs_store *s, const char *run)
{
	int64_t id;
	cs_run_summary sum;
	return cs_read_find_run(s, run, &id) == 0 && cs_runs_summary(s, id, &sum) == 0 &&
	       !strcmp(sum.time_unit, "ns");
}

int cs_cjob_both_load(cs_store *s, const cs_cjob_both_spec *sp, cs_cjob_both *p, char *err,
		      size_t errlen)
{
	char why[1024] = "";
	memset(p, 0, sizeof *p);
	cs_cjob_spec hs = {.run = sp->hw, .expr = sp->hw_expr, .window = sp->hw_window,
			   .clock_hz = sp->hw_clock_hz};
	cs_cjob_spec ss = {.run = sp->sim, .expr = sp->sim_expr, .window = sp->sim_window,
			   .clock_option = "--sim-clock"};
	/* Two runs in ns (two GPUs, before and after) compare on their own
	 * unit unless a clock is given; an ns run given as the simulator side
	 * takes --sim-clock as its clock. */
	int hns = run_in_ns(s, sp->hw), sns = run_in_ns(s, sp->sim);
	int have_sim_clock = sp->sim_clock && *sp->sim_clock;
	if (hns && sns && !(sp->hw_clock_hz > 0) && !have_sim_clock)
		hs.same_unit = ss.same_unit = 1;
	if (sns && have_sim_clock) {
		if (cs_cjob_clock(s, sp->sim, sp->sim_clock, &ss.clock_hz, why, sizeof why) < 0) {
			snprintf(err, errlen, "simulator side: %.900s", why);
			return -EINVAL;
		}
		have_sim_clock = 0; /* its clock, not a rescaling */
	}
	int rc = cs_cjob_load(s, &hs, &p->h, why, sizeof why);
	if (rc < 0) {
		snprintf(err, errlen, "hardware side: %.900s", why);
		return rc;
	}
	/* sim_clock: the simulator's cycles counted on the hardware's
	 * clock, so both axes measure the same time. */
	p->hw_hz = p->h.clock_hz;
	if (have_sim_clock) {
		if ((rc = cs_cjob_clock(s, sp->sim, sp->sim_clock, &p->sim_hz, why, sizeof why)) < 0) {
			cs_cjob_side_free(&p->h);
			snprintf(err, errlen, "simulator side: %.900s", why);
			return rc;
		}
		if (!(p->hw_hz > 0) && cs_cjob_clock(s, sp->hw, "core", &p->hw_hz, why, sizeof why) < 0) {
			snprintf(err, errlen, "hardware side: --sim-clock rescales onto the hardware's "
				 "clock, and run %s has none (give --hw-clock-mhz)", p->h.run_name);
			cs_cjob_side_free(&p->h);
			return -EINVAL;
		}
		ss.cycle_scale = p->hw_hz / p->sim_hz;
	}
	if ((rc = cs_cjob_load(s, &ss, &p->m, why, sizeof why)) < 0) {
		cs_cjob_side_free(&p->h);
		snprintf(err, errlen, "simulator side: %.900s", why);
		return rc;
	}
	if (p->h.is_rate != p->m.is_rate) {
		snprintf(err, errlen, "the %s expression is a rate (it uses rate()) and the %s one is "
			 "a count: use rate() on both sides or on neither",
			 p->h.is_rate ? "hardware" : "simulator", p->h.is_rate ? "simulator" : "hardware");
		cs_cjob_both_free(p);
		return -EINVAL;
	}
	return 0;
}

void cs_cjob_both_free(cs_cjob_both *p)
{
	cs_cjob_side_free(&p->h);
	cs_cjob_side_free(&p->m);
}

int cs_cjob_compare(const cs_cjob_both *p, double bin, const cs_corr_opts *o, cs_corr_result *r,
		    char warn[4][256], size_t *nwarn, char *err, size_t errlen)
{
	const cs_cjob_side *h = &p->h, *m = &p->m;
	cs_corr_series sh = cs_cjob_series(h), sm = cs_cjob_series(m);
	int rc = cs_corr_compare(&sh, h->cycles, &sm, m->cycles, o, r);
	if (rc < 0) {
		uint64_t bins, work;
		cs_corr_cost(h->cycles, m->cycles, o, &bins, &work);
		if (rc == -E2BIG)
			snprintf(err, errlen, "max_lag: %llu bins and %d lags each way take %llu steps, "
				 "over the limit of %llu bins and %llu steps: lower max_lag or raise "
				 "bin_cycles", (unsigned long long)bins, o->max_lag,
				 (unsigned long long)work, (unsigned long long)o->max_bins,
				 (unsigned long long)o->max_work);
		else if (rc == -ETIMEDOUT)
			snprintf(err, errlen, "the comparison ran past its time limit: lower max_lag "
				 "or raise bin_cycles");
		else if (rc == -ECANCELED)
			snprintf(err, errlen, "cancelled: the client went away");
		else
			snprintf(err, errlen, "nothing to compare (empty windows?)");
		return rc;
	}
	*nwarn = warnings(r, h->n, m->n, warn);
	/* Rates: each bin holds what the rate added up to; its mean is that
	 * over the bin's width. */
	for (size_t i = 0; h->is_rate && i < r->bins; i++) {
		r->hw_bins[i] /= bin;
		r->sim_bins[i] /= bin;
	}
	return 0;
}
