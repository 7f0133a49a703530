/*
 * overlap.c - the overlap analysis (overlap.h).
 *
 * The ranges matching A and those matching B are each merged into
 * disjoint intervals; their boundaries cut the run's span into segments,
 * each in one phase. A sample's value is spread evenly over its span, so
 * each segment gets the part of it that lies inside (the phases' sums add
 * up to the run's total); a sample's rate (value per unit of time) counts
 * for a phase's peak when more than half of the sample lies in it.
 */
#include "overlap.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"
#include "runs.h"
#include "reader.h"
#include "text.h"

const char *const cs_overlap_names[CS_OV_NBUCKET] = {"neither", "only A", "A and B", "only B",
						    "tail", "only B outside the tail"};

typedef struct ival {
	double t0, t1;
} ival;

typedef cs_overlap job; /* what the scan fills */
typedef cs_overlap_seg seg;
typedef cs_overlap_metric mstat;

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int cmp_ival(const void *x, const void *y)
{
	const ival *a = x, *b = y;
	return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

const char *cs_overlap_spec(const char *spec, char *kind, size_t klen)
{
	const char *colon = strchr(spec, ':');
	kind[0] = '\0';
	if (colon && (size_t)(colon - spec) < klen && !memchr(spec, '*', (size_t)(colon - spec))) {
		snprintf(kind, klen, "%.*s", (int)(colon - spec), spec);
		return colon + 1;
	}
	return spec;
}

static void merge(ival *v, size_t cnt, size_t *n);

/* The ranges of run matching "[KIND:]GLOB", merged into disjoint
 * intervals (ascending). *n = 0 when none matches. */
static int union_of(cs_store *s, int64_t run, uint32_t device, const char *spec, int64_t origin,
		    ival **out, size_t *n, size_t *nranges)
{
	char kind[64];
	const char *glob = cs_overlap_spec(spec, kind, sizeof kind);
	int not = glob[0] == '!'; /* "!GLOB": the names it does not match */
	cs_ranges_query q = {.run = run, .to = UINT64_MAX, .window = CS_RANGES_TOUCHING, .kinds = kind,
			     .name = glob + not, .name_glob = 1, .name_not = not, .have_device = 1,
			     .device = device};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	ival *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = cur ? 0 : -EIO, more;
	cs_range_row r;
	while (cur && (more = cs_ranges_next(cur, &r)) != 0) {
		if (more < 0) {
			rc = more;
			break;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			ival *g = realloc(v, cap * sizeof *g);
			if (!g) {
				rc = -ENOMEM;
				break;
			}
			v = g;
		}
		v[cnt].t0 = (double)(r.t0 - origin);
		v[cnt].t1 = (double)(r.t1 - origin);
		cnt++;
	}
	cs_ranges_close(cur);
	*nranges = cnt;
	*out = v;
	merge(v, cnt, n);
	return rc;
}

/* Given ranges, from origin, merged as union_of merges them. */
static int given_union(const int64_t (*v)[2], size_t cnt, int64_t origin, ival **out, size_t *n)
{
	ival *g = malloc((cnt ? cnt : 1) * sizeof *g);
	*out = g;
	*n = 0;
	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++)
		g[i] = (ival){(double)(v[i][0] - origin), (double)(v[i][1] - origin)};
	merge(g, cnt, n);
	return 0;
}

/* Sorts v[0..cnt) and merges it into disjoint intervals, *n of them. */
static void merge(ival *v, size_t cnt, size_t *n)
{
	if (cnt)
		qsort(v, cnt, sizeof *v, cmp_ival);
	size_t m = 0;
	for (size_t i = 0; i < cnt; i++) {
		if (!(v[i].t1 > v[i].t0))
			continue;
		if (m && v[i].t0 <= v[m - 1].t1) {
			if (v[i].t1 > v[m - 1].t1)
				v[m - 1].t1 = v[i].t1;
		} else {
			v[m++] = v[i];
		}
	}
	*n = m;
}

/* What a glob that matched nothing (or only empty ranges) could have
 * matched. */
static void no_match(cs_store *s, int64_t run, uint32_t device, const char *which,
		     const char *spec, size_t matched, char *err, size_t errlen)
{
	size_t n = matched ? (size_t)snprintf(err, errlen, "--%s '%s' matches %zu range(s) of run %lld, "
					      "all of no length; its ranges:", which, spec, matched,
					      (long long)run)
			   : (size_t)snprintf(err, errlen, "--%s '%s' matches no range of run %lld "
					      "on device %u (KIND:GLOB or GLOB over range names); its "
					      "ranges:", which, spec, (long long)run, device);
	cs_ranges_kind *kinds = NULL;
	size_t nk = 0;
	int any = 0;
	if (cs_ranges_kinds(s, run, &kinds, &nk) == 0)
		for (size_t i = 0; i < nk && n < errlen; i++) {
			n += (size_t)snprintf(err + n, errlen - n, "%s %s x%lld (%.120s...)",
					      any ? ";" : "", kinds[i].kind,
					      (long long)kinds[i].count, kinds[i].names);
			any = 1;
		}
	free(kinds);
	if (!any && n < errlen)
		snprintf(err + n, errlen - n, " none");
}

/* The segments of [t0, t1) cut by both unions, each with its phase. */
static int segments(const ival *a, size_t na, const ival *b, size_t nb, double t0, double t1,
		    seg **out, size_t *n)
{
	size_t cap = 2 * (na + nb) + 2, nc = 0;
	double *cut = malloc(cap * sizeof *cut);
	seg *sg = malloc(cap * sizeof *sg);
	if (!cut || !sg) {
		free(cut);
		free(sg);
		return -ENOMEM;
	}
	cut[nc++] = t0;
	for (size_t i = 0; i < na; i++) {
		cut[nc++] = a[i].t0;
		cut[nc++] = a[i].t1;
	}
	for (size_t i = 0; i < nb; i++) {
		cut[nc++] = b[i].t0;
		cut[nc++] = b[i].t1;
	}
	cut[nc++] = t1;
	qsort(cut, nc, sizeof *cut, cmp_double);
	size_t m = 0, ia = 0, ib = 0;
	for (size_t i = 0; i + 1 < nc; i++) {
		double x0 = cut[i], x1 = cut[i + 1];
		if (!(x1 > x0) || x0 < t0 || x1 > t1)
			continue;
		while (ia < na && a[ia].t1 <= x0)
			ia++;
		while (ib < nb && b[ib].t1 <= x0)
			ib++;
		int inA = ia < na && a[ia].t0 <= x0, inB = ib < nb && b[ib].t0 <= x0;
		int ph = inA && inB ? CS_OV_AB : inA ? CS_OV_A : inB ? CS_OV_B : CS_OV_NEITHER;
		if (m && sg[m - 1].phase == ph && sg[m - 1].t1 == x0)
			sg[m - 1].t1 = x1;
		else
			sg[m++] = (seg){x0, x1, ph, 0};
	}
	/* B's tail: the only-B stretch right after the last overlap. */
	for (size_t i = m; i-- > 0;)
		if (sg[i].phase == CS_OV_AB) {
			if (i + 1 < m && sg[i + 1].phase == CS_OV_B)
				sg[i + 1].tail = 1;
			break;
		}
	free(cut);
	*out = sg;
	*n = m;
	return 0;
}

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	job *j = ctx;
	(void)seq;
	double s0 = (double)((int64_t)t0 - j->origin), s1 = (double)((int64_t)t1 - j->origin);
	double len = s1 - s0;
	/* the first segment ending after the sample's start */
	size_t lo = 0, hi = j->nseg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->seg[mid].t1 <= s0)
			lo = mid + 1;
		else
			hi = mid;
	}
	double part[CS_OV_NBUCKET] = {0};
	if (!(len > 0) && lo < j->nseg && j->seg[lo].t0 <= s0) { /* an instant: where it is */
		part[j->seg[lo].phase] = 1;
		if (j->seg[lo].phase == CS_OV_B)
			part[j->seg[lo].tail ? CS_OV_TAIL : CS_OV_BREST] = 1;
	}
	for (size_t i = lo; len > 0 && i < j->nseg && j->seg[i].t0 < s1; i++) {
		double a = s0 > j->seg[i].t0 ? s0 : j->seg[i].t0, b = s1 < j->seg[i].t1 ? s1 : j->seg[i].t1;
		if (b > a) {
			double f = (b - a) / len;
			part[j->seg[i].phase] += f;
			if (j->seg[i].phase == CS_OV_B)
				part[j->seg[i].tail ? CS_OV_TAIL : CS_OV_BREST] += f;
		}
	}
	for (size_t k = 0; k < j->nm; k++) {
		double v = values[k];
		if (isnan(v))
			continue;
		mstat *m = &j->m[k];
		m->total += v;
		double rate = len > 0 ? v / len : (double)NAN;
		for (int p = 0; p < CS_OV_NBUCKET; p++) {
			m->sum[p] += v * part[p];
			if (part[p] > 0.5 && !isnan(rate) && (isnan(m->peak[p]) || rate > m->peak[p]))
				m->peak[p] = rate;
		}
	}
	return 0;
}

/* The run's metric ids to report: those matching the comma-separated
 * names or globs (every one when NULL). */
static int pick_metrics(cs_store *s, int64_t run, const char *want, uint32_t **ids, job *j,
			char *err, size_t errlen)
{
	uint32_t *all = NULL, nall = 0;
	int rc = cs_read_metric_ids(s, run, &all, &nall);
	if (rc < 0) {
		snprintf(err, errlen, "%s", cs_store_errmsg(s));
		return rc;
	}
	*ids = calloc(nall + 1, sizeof **ids);
	j->m = calloc(nall + 1, sizeof *j->m);
	if (!*ids || !j->m) {
		free(all);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nall; i++) {
		mstat *m = &j->m[j->nm];
		if (cs_read_metric_name(s, run, all[i], m->name, sizeof m->name) < 0)
			continue;
		if (want && *want && !cs_list_match(want, m->name))
			continue;
		for (int p = 0; p < CS_OV_NBUCKET; p++)
			m->peak[p] = NAN;
		(*ids)[j->nm++] = all[i];
	}
	free(all);
	/* A run of ranges only (a trace) has phases but no rates. */
	if (!j->nm && want && *want) {
		snprintf(err, errlen, "run %lld has no metric matching '%s'", (long long)run,
			 want ? want : "");
		return -ENOENT;
	}
	return 0;
}

int cs_overlap_compute(cs_store *s, const char *spec, const char *a_glob, const char *b_glob,
		       const char *metrics, uint32_t device, cs_overlap *j, char *err,
		       size_t errlen)
{
	return cs_overlap_compute_given(s, spec, a_glob, b_glob, metrics, device, NULL, j, err,
					errlen);
}

int cs_overlap_compute_given(cs_store *s, const char *spec, const char *a_glob,
			     const char *b_glob, const char *metrics, uint32_t device,
			     const cs_overlap_given *given, cs_overlap *j, char *err,
			     size_t errlen)
{
	memset(j, 0, sizeof *j);
	j->tail0 = j->tail1 = NAN;
	err[0] = '\0';
	if (!a_glob || !*a_glob || !b_glob || !*b_glob) {
		snprintf(err, errlen, "give both A and B: [KIND:]GLOB over range names (e.g. "
			 "'kernel:nccl*' and '*gemm*')");
		return -EINVAL;
	}
	int64_t run;
	if (cs_read_find_run(s, spec, &run) < 0) {
		snprintf(err, errlen, "no run '%s' in the database", spec);
		return -ENOENT;
	}
	j->run = run;
	j->ns = 1;
	cs_run_summary sum;
	if (cs_runs_summary(s, run, &sum) == 0) {
		snprintf(j->run_name, sizeof j->run_name, "%.255s", sum.name);
		j->ns = !strcmp(sum.time_unit, "ns");
	}
	ival *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	uint32_t *ids = NULL;
	/* Times count from the run's first range or sample, so that epoch
	 * nanoseconds keep every digit as doubles. */
	uint64_t r0 = 0, r1 = 0, lo = 0, end = 0;
	int have_ranges = cs_ranges_extent(s, run, &r0, &r1) == 0 && r1 >= r0 && r1 > 0;
	int have_samples = cs_read_run_extent(s, run, &lo, &end) == 0 && end > 0;
	j->origin = have_ranges ? (int64_t)r0 : 0;
	if (have_samples && (!have_ranges || lo < r0))
		j->origin = (int64_t)lo;
	int rc = 0;
	if (given) {
		rc = given_union(given->a, given->na, j->origin, &a, &na);
		if (rc == 0)
			rc = given_union(given->b, given->nb, j->origin, &b, &nb);
		j->a_ranges = given->na;
		j->b_ranges = given->nb;
	} else {
		rc = union_of(s, run, device, a_glob, j->origin, &a, &na, &j->a_ranges);
		if (rc == 0)
			rc = union_of(s, run, device, b_glob, j->origin, &b, &nb, &j->b_ranges);
	}
	if (rc == 0 && (!na || !nb)) {
		no_match(s, run, device, !na ? "a" : "b", !na ? a_glob : b_glob,
			 !na ? j->a_ranges : j->b_ranges, err, errlen);
		rc = -ENOENT;
	}
	if (rc == 0)
		rc = pick_metrics(s, run, metrics, &ids, j, err, errlen);
	/* The span: the samples' and the ranges'. */
	if (rc == 0) {
		j->span0 = a[0].t0 < b[0].t0 ? a[0].t0 : b[0].t0;
		j->span1 = a[na - 1].t1 > b[nb - 1].t1 ? a[na - 1].t1 : b[nb - 1].t1;
		if (have_samples) {
			double l = (double)((int64_t)lo - j->origin), e = (double)((int64_t)end - j->origin);
			if (l < j->span0)
				j->span0 = l;
			if (e > j->span1)
				j->span1 = e;
		}
		rc = segments(a, na, b, nb, j->span0, j->span1, &j->seg, &j->nseg);
	}
	if (rc == 0) {
		cs_scan q = {.run = run, .device = device, .m = (uint32_t)j->nm, .metrics = ids,
			     .from = 0, .to = UINT64_MAX};
		if ((rc = cs_read_raw(s, &q, on_row, j)) < 0)
			snprintf(err, errlen, "reading run %s: %s", j->run_name, cs_store_errmsg(s));
	}
	for (size_t i = 0; rc == 0 && i < j->nseg; i++) {
		double d = j->seg[i].t1 - j->seg[i].t0;
		j->duration[j->seg[i].phase] += d;
		if (j->seg[i].phase == CS_OV_B)
			j->duration[j->seg[i].tail ? CS_OV_TAIL : CS_OV_BREST] += d;
		if (j->seg[i].tail)
			j->tail0 = j->seg[i].t0, j->tail1 = j->seg[i].t1;
	}
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	free(a);
	free(b);
	free(ids);
	if (rc)
		cs_overlap_free(j);
	return rc;
}

double cs_overlap_time_in(const cs_overlap *o, double t0, double t1, int phase)
{
	/* the first segment ending after t0 */
	size_t lo = 0, hi = o->nseg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->seg[mid].t1 <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	double sum = 0;
	for (size_t i = lo; i < o->nseg && o->seg[i].t0 < t1; i++) {
		if (o->seg[i].phase != phase)
			continue;
		double a = o->seg[i].t0 > t0 ? o->seg[i].t0 : t0;
		double b = o->seg[i].t1 < t1 ? o->seg[i].t1 : t1;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

void cs_overlap_free(cs_overlap *o)
{
	free(o->seg);
	free(o->m);
	o->seg = NULL;
	o->m = NULL;
	o->nseg = o->nm = 0;
}
