/*
 * phases.c - the overlap analysis (phases.h).
 *
 * The ranges matching A and those matching B are each merged into
 * disjoint intervals; their boundaries cut the run's span into segments,
 * each in one phase. A sample's value is spread evenly over its span, so
 * each segment gets the part of it that lies inside (the phases' sums add
 * up to the run's total); a sample's rate (value per unit of time) counts
 * for a phase's peak when more than half of the sample lies in it.
 */
#include "phases.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ranges.h"
#include "runs.h"
#include "reader.h"

enum { P_NEITHER, P_A, P_AB, P_B, NPHASE, P_TAIL = NPHASE, P_BREST, NBUCKET };
static const char *const phase_names[NBUCKET] = {"neither", "only A", "A and B", "only B",
						 "tail", "only B outside the tail"};

typedef struct ival {
	double t0, t1;
} ival;

typedef struct seg {
	double t0, t1;
	int phase;
	int tail;
} seg;

typedef struct mstat {
	char name[256];
	char unit[32];
	double sum[NBUCKET];
	double peak[NBUCKET];
	double total;
} mstat;

typedef struct job {
	seg *seg;
	size_t nseg;
	mstat *m;
	size_t nm;
	double span0, span1;
	int err;
} job;

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

/* The ranges of run matching "[KIND:]GLOB", merged into disjoint
 * intervals (ascending). *n = 0 when none matches. */
static int union_of(cs_store *s, int64_t run, uint32_t device, const char *spec, ival **out,
		    size_t *n, size_t *nranges)
{
	char kind[64] = "";
	const char *glob = spec;
	const char *colon = strchr(spec, ':');
	if (colon && (size_t)(colon - spec) < sizeof kind && !memchr(spec, '*', (size_t)(colon - spec))) {
		snprintf(kind, sizeof kind, "%.*s", (int)(colon - spec), spec);
		glob = colon + 1;
	}
	cs_ranges_query q = {.run = run, .to = UINT64_MAX, .window = CS_RANGES_TOUCHING, .kinds = kind,
			     .name = glob, .name_glob = 1, .have_device = 1, .device = device};
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
		v[cnt].t0 = (double)r.t0;
		v[cnt].t1 = (double)r.t1;
		cnt++;
	}
	cs_ranges_close(cur);
	*nranges = cnt;
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
	*out = v;
	*n = m;
	return rc;
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
		int ph = inA && inB ? P_AB : inA ? P_A : inB ? P_B : P_NEITHER;
		if (m && sg[m - 1].phase == ph && sg[m - 1].t1 == x0)
			sg[m - 1].t1 = x1;
		else
			sg[m++] = (seg){x0, x1, ph, 0};
	}
	/* B's tail: the only-B stretch right after the last overlap. */
	for (size_t i = m; i-- > 0;)
		if (sg[i].phase == P_AB) {
			if (i + 1 < m && sg[i + 1].phase == P_B)
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
	double s0 = (double)t0, s1 = (double)t1, len = s1 - s0;
	/* the first segment ending after the sample's start */
	size_t lo = 0, hi = j->nseg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->seg[mid].t1 <= s0)
			lo = mid + 1;
		else
			hi = mid;
	}
	double part[NBUCKET] = {0};
	if (!(len > 0) && lo < j->nseg && j->seg[lo].t0 <= s0) { /* an instant: where it is */
		part[j->seg[lo].phase] = 1;
		if (j->seg[lo].phase == P_B)
			part[j->seg[lo].tail ? P_TAIL : P_BREST] = 1;
	}
	for (size_t i = lo; len > 0 && i < j->nseg && j->seg[i].t0 < s1; i++) {
		double a = s0 > j->seg[i].t0 ? s0 : j->seg[i].t0, b = s1 < j->seg[i].t1 ? s1 : j->seg[i].t1;
		if (b > a) {
			double f = (b - a) / len;
			part[j->seg[i].phase] += f;
			if (j->seg[i].phase == P_B)
				part[j->seg[i].tail ? P_TAIL : P_BREST] += f;
		}
	}
	for (size_t k = 0; k < j->nm; k++) {
		double v = values[k];
		if (isnan(v))
			continue;
		mstat *m = &j->m[k];
		m->total += v;
		double rate = len > 0 ? v / len : (double)NAN;
		for (int p = 0; p < NBUCKET; p++) {
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
		int keep = !want || !*want;
		for (const char *p = want; p && *p && !keep;) {
			size_t l = strcspn(p, ",");
			char one[256];
			snprintf(one, sizeof one, "%.*s", (int)l, p);
			keep = !strcmp(one, m->name) || !fnmatch(one, m->name, 0); /* "x[A][B]" is a name too */
			p += l + (p[l] == ',');
		}
		if (!keep)
			continue;
		for (int p = 0; p < NBUCKET; p++)
			m->peak[p] = NAN;
		(*ids)[j->nm++] = all[i];
	}
	free(all);
	if (!j->nm) {
		snprintf(err, errlen, "run %lld has no metric matching '%s'", (long long)run,
			 want ? want : "");
		return -ENOENT;
	}
	return 0;
}

/* A duration in the run's unit as words: "3.500 ms" or "12000 cycles". */
static const char *dur(double d, int ns, char *buf, size_t len)
{
	if (!ns)
		snprintf(buf, len, "%.0f cycles", d);
	else if (d >= 1e9)
		snprintf(buf, len, "%.3f s", d / 1e9);
	else if (d >= 1e6)
		snprintf(buf, len, "%.3f ms", d / 1e6);
	else if (d >= 1e3)
		snprintf(buf, len, "%.3f us", d / 1e3);
	else
		snprintf(buf, len, "%.0f ns", d);
	return buf;
}

static void write_out(cs_buf *b, const cs_phases_request *rq, int64_t run, const char *run_name,
		      int ns, const job *j, size_t ra, size_t rb)
{
	double dphase[NBUCKET] = {0}, total = j->span1 - j->span0;
	double tail0 = NAN, tail1 = NAN;
	for (size_t i = 0; i < j->nseg; i++) {
		double d = j->seg[i].t1 - j->seg[i].t0;
		dphase[j->seg[i].phase] += d;
		if (j->seg[i].phase == P_B)
			dphase[j->seg[i].tail ? P_TAIL : P_BREST] += d;
		if (j->seg[i].tail)
			tail0 = j->seg[i].t0, tail1 = j->seg[i].t1;
	}
	/* rates per second of an ns run, per cycle of a cycle run */
	double per = ns ? 1e9 : 1;
	const char *rate_unit = ns ? "per second" : "per cycle";
	char d1[64];
	if (rq->format == CS_PHASES_JSON) {
		int first = 1;
		cs_json_raw(b, "{");
		cs_json_key(b, &first, "run");
		cs_json_i64(b, run);
		cs_json_key(b, &first, "run_name");
		cs_json_str(b, run_name);
		cs_json_key(b, &first, "unit");
		cs_json_str(b, ns ? "ns" : "cycle");
		cs_json_key(b, &first, "rate_unit");
		cs_json_str(b, rate_unit);
		cs_json_key(b, &first, "a");
		cs_json_str(b, rq->a);
		cs_json_key(b, &first, "b");
		cs_json_str(b, rq->b);
		cs_json_key(b, &first, "a_ranges");
		cs_json_i64(b, (int64_t)ra);
		cs_json_key(b, &first, "b_ranges");
		cs_json_i64(b, (int64_t)rb);
		cs_json_key(b, &first, "span");
		cs_json_raw(b, "[");
		cs_json_f64(b, j->span0);
		cs_json_raw(b, ",");
		cs_json_f64(b, j->span1);
		cs_json_raw(b, "]");
		cs_json_key(b, &first, "phases");
		cs_json_raw(b, "[");
		for (int p = 0; p < NBUCKET; p++) {
			int f = 1;
			if (p >= NPHASE && isnan(tail0))
				break;
			cs_json_raw(b, p ? ",{" : "{");
			cs_json_key(b, &f, "phase");
			cs_json_str(b, phase_names[p]);
			cs_json_key(b, &f, "duration");
			cs_json_f64(b, dphase[p]);
			cs_json_key(b, &f, "share");
			cs_json_f64(b, total > 0 ? dphase[p] / total : (double)NAN);
			cs_json_key(b, &f, "metrics");
			cs_json_raw(b, "{");
			int fm = 1;
			for (size_t k = 0; k < j->nm; k++) {
				int g = 1;
				cs_json_key(b, &fm, j->m[k].name);
				cs_json_raw(b, "{");
				cs_json_key(b, &g, "sum");
				cs_json_f64(b, j->m[k].sum[p]);
				cs_json_key(b, &g, "mean_rate");
				cs_json_f64(b, dphase[p] > 0 ? j->m[k].sum[p] / dphase[p] * per : (double)NAN);
				cs_json_key(b, &g, "peak_rate");
				cs_json_f64(b, j->m[k].peak[p] * per);
				cs_json_raw(b, "}");
			}
			cs_json_raw(b, "}}");
		}
		cs_json_raw(b, "]");
		cs_json_key(b, &first, "tail");
		if (isnan(tail0)) {
			cs_json_raw(b, "null");
		} else {
			int f = 1;
			cs_json_raw(b, "{");
			cs_json_key(b, &f, "start");
			cs_json_f64(b, tail0);
			cs_json_key(b, &f, "end");
			cs_json_f64(b, tail1);
			cs_json_key(b, &f, "duration");
			cs_json_f64(b, tail1 - tail0);
			cs_json_raw(b, "}");
		}
		cs_json_key(b, &first, "totals");
		cs_json_raw(b, "{");
		int ft = 1;
		for (size_t k = 0; k < j->nm; k++) {
			cs_json_key(b, &ft, j->m[k].name);
			cs_json_f64(b, j->m[k].total);
		}
		cs_json_raw(b, "}");
		cs_json_key(b, &first, "segments");
		cs_json_raw(b, "[");
		for (size_t i = 0; i < j->nseg; i++) {
			cs_json_raw(b, i ? ",[" : "[");
			cs_json_f64(b, j->seg[i].t0);
			cs_json_raw(b, ",");
			cs_json_f64(b, j->seg[i].t1);
			cs_json_raw(b, ",");
			cs_json_str(b, j->seg[i].tail ? "tail" : phase_names[j->seg[i].phase]);
			cs_json_raw(b, "]");
		}
		cs_json_raw(b, "]}\n");
		return;
	}
	if (rq->format == CS_PHASES_CSV) {
		cs_buf_printf(b, "phase,metric,duration,share,sum,mean_rate,peak_rate\r\n");
		for (int p = 0; p < NBUCKET; p++) {
			if (p >= NPHASE && isnan(tail0))
				break;
			for (size_t k = 0; k < j->nm; k++) {
				cs_buf_printf(b, "%s,\"", phase_names[p]);
				for (const char *c = j->m[k].name; *c; c++)
					cs_buf_printf(b, *c == '"' ? "\"\"" : "%c", *c);
				cs_buf_printf(b, "\",%.17g,%.17g,%.17g,%.17g,%.17g\r\n", dphase[p],
					total > 0 ? dphase[p] / total : (double)NAN, j->m[k].sum[p],
					dphase[p] > 0 ? j->m[k].sum[p] / dphase[p] * per : (double)NAN,
					j->m[k].peak[p] * per);
			}
		}
		return;
	}
	cs_buf_printf(b, "run %lld '%s': A = %s (%zu ranges), B = %s (%zu ranges), over %s\n",
		(long long)run, run_name, rq->a, ra, rq->b, rb, dur(total, ns, d1, sizeof d1));
	cs_buf_printf(b, "  %-26s %14s %8s\n", "phase", "duration", "share");
	for (int p = 0; p < NBUCKET; p++) {
		if (p >= NPHASE && isnan(tail0))
			break;
		cs_buf_printf(b, "  %-26s %14s %7.2f%%\n", phase_names[p], dur(dphase[p], ns, d1, sizeof d1),
			total > 0 ? 100 * dphase[p] / total : (double)NAN);
	}
	if (isnan(tail0))
		cs_buf_printf(b, "  no tail: %s\n", dphase[P_AB] > 0 ? "B does not run on after its last overlap with A"
							      : "A and B never overlap");
	else
		cs_buf_printf(b, "  tail: B runs on alone for %s after its last overlap with A (%.0f to %.0f)\n",
			dur(tail1 - tail0, ns, d1, sizeof d1), tail0, tail1);
	cs_buf_printf(b, "\n  %-34s %-24s %14s %14s %14s\n", "metric", "phase", "sum", "mean rate", "peak rate");
	for (size_t k = 0; k < j->nm; k++) {
		for (int p = 0; p < NBUCKET; p++) {
			if (p >= NPHASE && isnan(tail0))
				break;
			cs_buf_printf(b, "  %-34.34s %-24s %14.6g %14.6g %14.6g\n", p ? "" : j->m[k].name,
				phase_names[p], j->m[k].sum[p],
				dphase[p] > 0 ? j->m[k].sum[p] / dphase[p] * per : (double)NAN,
				j->m[k].peak[p] * per);
		}
		if (!isnan(tail0) && dphase[P_BREST] > 0 && j->m[k].sum[P_BREST] != 0)
			cs_buf_printf(b, "  %-34s tail / B alone: %.3fx the mean rate\n", "",
				(j->m[k].sum[P_TAIL] / dphase[P_TAIL]) / (j->m[k].sum[P_BREST] / dphase[P_BREST]));
		cs_buf_printf(b, "  %-34s total %.6g (rates %s)\n", "", j->m[k].total, rate_unit);
	}
}

int cs_phases_out(cs_store *s, const cs_phases_request *rq, cs_buf *out, char *err,
		  size_t errlen)
{
	err[0] = '\0';
	if (!rq->a || !*rq->a || !rq->b || !*rq->b) {
		snprintf(err, errlen, "give both A and B: [KIND:]GLOB over range names (e.g. "
			 "'kernel:nccl*' and '*gemm*')");
		return -EINVAL;
	}
	int64_t run;
	if (cs_read_find_run(s, rq->run, &run) < 0) {
		snprintf(err, errlen, "no run '%s' in the database", rq->run);
		return -ENOENT;
	}
	char run_name[256] = "", unit[16] = "ns";
	cs_run_summary sum;
	if (cs_runs_summary(s, run, &sum) == 0) {
		snprintf(run_name, sizeof run_name, "%.255s", sum.name);
		snprintf(unit, sizeof unit, "%.15s", sum.time_unit);
	}
	ival *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, ra = 0, rb = 0;
	uint32_t *ids = NULL;
	job j = {0};
	int rc = union_of(s, run, rq->device, rq->a, &a, &na, &ra);
	if (rc == 0)
		rc = union_of(s, run, rq->device, rq->b, &b, &nb, &rb);
	if (rc == 0 && (!na || !nb)) {
		no_match(s, run, rq->device, !na ? "a" : "b", !na ? rq->a : rq->b, !na ? ra : rb, err, errlen);
		rc = -ENOENT;
	}
	if (rc == 0)
		rc = pick_metrics(s, run, rq->metrics, &ids, &j, err, errlen);
	/* The span: the samples' and the ranges'. */
	uint64_t lo = 0, end = 0;
	if (rc == 0) {
		j.span0 = a[0].t0 < b[0].t0 ? a[0].t0 : b[0].t0;
		j.span1 = a[na - 1].t1 > b[nb - 1].t1 ? a[na - 1].t1 : b[nb - 1].t1;
		if (cs_read_run_extent(s, run, &lo, &end) == 0) {
			if ((double)lo < j.span0)
				j.span0 = (double)lo;
			if ((double)end > j.span1)
				j.span1 = (double)end;
		}
		rc = segments(a, na, b, nb, j.span0, j.span1, &j.seg, &j.nseg);
	}
	if (rc == 0) {
		cs_scan q = {.run = run, .device = rq->device, .m = (uint32_t)j.nm, .metrics = ids,
			     .from = 0, .to = UINT64_MAX};
		if ((rc = cs_read_raw(s, &q, on_row, &j)) < 0)
			snprintf(err, errlen, "reading run %s: %s", run_name, cs_store_errmsg(s));
	}
	if (rc == 0)
		write_out(out, rq, run, run_name, !strcmp(unit, "ns"), &j, ra, rb);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	free(a);
	free(b);
	free(ids);
	free(j.seg);
	free(j.m);
	return rc;
}
