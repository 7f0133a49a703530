/*
 * jobphases_out.c - a job's overlap analysis (sim-bridge/jobphases.h)
 * written as text, JSON or CSV (phases.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobphases.h"
#include "json.h"
#include "phases.h"

static int64_t ns_of(double v)
{
	return (int64_t)llround(v);
}

static double overlap_fraction(const cs_overlap *o)
{
	double a = o->duration[CS_OV_A] + o->duration[CS_OV_AB];
	return a > 0 ? o->duration[CS_OV_AB] / a : (double)NAN;
}

/* The ranks most often last, at most three, as indexes into ranks[]. */
static size_t most_last(const cs_jobphases *j, size_t top[3])
{
	size_t n = 0;
	for (; n < 3; n++) {
		size_t best = SIZE_MAX;
		for (size_t r = 0; r < j->nranks; r++) {
			int taken = 0;
			for (size_t i = 0; i < n; i++)
				taken |= top[i] == r;
			if (!taken && j->ranks[r].last &&
			    (best == SIZE_MAX || j->ranks[r].last > j->ranks[best].last))
				best = r;
		}
		if (best == SIZE_MAX)
			break;
		top[n] = best;
	}
	return n;
}

/* v[0..n) plus base (a time's origin, 0 for durations) as integers. */
static void json_array(cs_buf *b, const double *v, size_t n, int64_t base)
{
	cs_json_raw(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			cs_json_raw(b, ",");
		cs_json_i64(b, base + ns_of(v[i]));
	}
	cs_json_raw(b, "]");
}

static void write_json(cs_buf *b, const cs_jobphases_request *rq, const cs_jobphases *j)
{
	int first = 1;
	cs_json_raw(b, "{");
	cs_json_key(b, &first, "job");
	cs_json_str(b, j->job);
	cs_json_key(b, &first, "a");
	cs_json_str(b, rq->a);
	cs_json_key(b, &first, "b");
	cs_json_str(b, rq->b);
	cs_json_key(b, &first, "unit");
	cs_json_str(b, j->ns ? "ns" : "cycle");
	cs_json_key(b, &first, "align");
	cs_json_str(b, j->aligned ? "collectives" : "none");
	cs_json_key(b, &first, "ranks");
	cs_json_raw(b, "[");
	for (size_t r = 0; r < j->nranks; r++) {
		const cs_job_rankres *x = &j->ranks[r];
		int f = 1;
		cs_json_raw(b, r ? ",{" : "{");
		cs_json_key(b, &f, "rank");
		cs_json_i64(b, x->rank);
		cs_json_key(b, &f, "run");
		cs_json_i64(b, x->run);
		cs_json_key(b, &f, "name");
		cs_json_str(b, x->name);
		cs_json_key(b, &f, "host");
		cs_json_str(b, x->host);
		cs_json_key(b, &f, "device");
		cs_json_i64(b, x->device);
		cs_json_key(b, &f, "offset_ns");
		cs_json_i64(b, x->offset_ns);
		cs_json_key(b, &f, "a_ranges");
		cs_json_i64(b, (int64_t)x->ncoll);
		cs_json_key(b, &f, "phases");
		cs_json_raw(b, "{");
		for (int p = 0; p < CS_OV_NBUCKET; p++) {
			cs_json_raw(b, p ? "," : "");
			cs_json_str(b, cs_overlap_names[p]);
			cs_json_raw(b, ":");
			cs_json_i64(b, ns_of(x->ov.duration[p]));
		}
		cs_json_raw(b, "}");
		cs_json_key(b, &f, "exposed_ns");
		cs_json_i64(b, ns_of(x->exposed));
		cs_json_key(b, &f, "wait_ns");
		cs_json_i64(b, ns_of(x->wait));
		cs_json_key(b, &f, "times_last");
		cs_json_i64(b, (int64_t)x->last);
		cs_json_key(b, &f, "overlap_fraction");
		cs_json_f64(b, overlap_fraction(&x->ov));
		cs_json_key(b, &f, "metrics");
		cs_json_raw(b, "{");
		for (size_t m = 0; m < x->ov.nm; m++) {
			const cs_overlap_metric *mt = &x->ov.m[m];
			cs_json_raw(b, m ? "," : "");
			cs_json_str(b, mt->name);
			cs_json_raw(b, ":{");
			for (int p = 0; p < CS_OV_NBUCKET; p++) {
				double d = x->ov.duration[p];
				cs_json_raw(b, p ? "," : "");
				cs_json_str(b, cs_overlap_names[p]);
				cs_json_raw(b, ":{\"sum\":");
				cs_json_f64(b, mt->sum[p]);
				cs_json_raw(b, ",\"mean_rate\":");
				cs_json_f64(b, d > 0 ? mt->sum[p] / d * (j->ns ? 1e9 : 1) : (double)NAN);
				cs_json_raw(b, "}");
			}
			cs_json_raw(b, "}");
		}
		cs_json_raw(b, "}}");
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &first, "collectives");
	cs_json_raw(b, "[");
	double skew_sum = 0, skew_max = 0;
	for (size_t c = 0; c < j->ncoll; c++) {
		const cs_job_coll *x = &j->coll[c];
		skew_sum += x->start_skew;
		if (x->start_skew > skew_max)
			skew_max = x->start_skew;
		int f = 1;
		cs_json_raw(b, c ? ",{" : "{");
		cs_json_key(b, &f, "collective");
		cs_json_str(b, x->name);
		cs_json_key(b, &f, "index");
		cs_json_i64(b, (int64_t)x->index);
		cs_json_key(b, &f, "start_ns");
		json_array(b, x->start, j->nranks, j->origin);
		cs_json_key(b, &f, "end_ns");
		json_array(b, x->end, j->nranks, j->origin);
		cs_json_key(b, &f, "start_skew_ns");
		cs_json_i64(b, ns_of(x->start_skew));
		cs_json_key(b, &f, "end_skew_ns");
		cs_json_i64(b, ns_of(x->end_skew));
		cs_json_key(b, &f, "straggler_rank");
		cs_json_i64(b, j->ranks[x->straggler].rank);
		cs_json_key(b, &f, "wait_ns");
		json_array(b, x->wait, j->nranks, 0);
		cs_json_key(b, &f, "exposed_ns");
		json_array(b, x->exposed, j->nranks, 0);
		cs_json_raw(b, "}");
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &first, "summary");
	int f = 1;
	cs_json_raw(b, "{");
	cs_json_key(b, &f, "instances");
	cs_json_i64(b, (int64_t)j->ncoll);
	cs_json_key(b, &f, "mean_start_skew_ns");
	cs_json_f64(b, j->ncoll ? skew_sum / (double)j->ncoll : (double)NAN);
	cs_json_key(b, &f, "max_start_skew_ns");
	cs_json_i64(b, ns_of(skew_max));
	cs_json_key(b, &f, "exposed_ns");
	cs_json_raw(b, "[");
	for (size_t r = 0; r < j->nranks; r++) {
		cs_json_raw(b, r ? "," : "");
		cs_json_i64(b, ns_of(j->ranks[r].exposed));
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "overlap_fraction");
	cs_json_raw(b, "[");
	for (size_t r = 0; r < j->nranks; r++) {
		cs_json_raw(b, r ? "," : "");
		cs_json_f64(b, overlap_fraction(&j->ranks[r].ov));
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "most_often_last");
	cs_json_raw(b, "[");
	size_t top[3];
	size_t nt = most_last(j, top);
	for (size_t i = 0; i < nt; i++) {
		cs_json_raw(b, i ? ",{\"rank\":" : "{\"rank\":");
		cs_json_i64(b, j->ranks[top[i]].rank);
		cs_json_raw(b, ",\"times\":");
		cs_json_i64(b, (int64_t)j->ranks[top[i]].last);
		cs_json_raw(b, "}");
	}
	cs_json_raw(b, "]}");
	cs_json_key(b, &first, "warnings");
	cs_json_raw(b, "[");
	for (const char *w = j->warnings; w && *w;) {
		size_t n = strcspn(w, "\n");
		cs_json_raw(b, w == j->warnings ? "" : ",");
		cs_json_strn(b, w, n);
		w += n + (w[n] == '\n');
	}
	cs_json_raw(b, "]}\n");
}

static void write_csv(cs_buf *b, const cs_jobphases *j)
{
	cs_buf_printf(b, "collective,index,rank,start_ns,end_ns,start_skew_ns,straggler_rank,"
			 "wait_ns,exposed_ns\n");
	for (size_t c = 0; c < j->ncoll; c++) {
		const cs_job_coll *x = &j->coll[c];
		for (size_t r = 0; r < j->nranks; r++) {
			cs_buf_printf(b, "%s,%zu,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", x->name, x->index,
				      (long long)j->ranks[r].rank, (long long)(j->origin + ns_of(x->start[r])),
				      (long long)(j->origin + ns_of(x->end[r])), (long long)ns_of(x->start_skew),
				      (long long)j->ranks[x->straggler].rank,
				      (long long)ns_of(x->wait[r]), (long long)ns_of(x->exposed[r]));
		}
	}
}

static int cmp_skew(const void *x, const void *y)
{
	const cs_job_coll *a = *(const cs_job_coll *const *)x, *b = *(const cs_job_coll *const *)y;
	return (a->start_skew < b->start_skew) - (a->start_skew > b->start_skew);
}

static void write_text(cs_buf *b, const cs_jobphases_request *rq, const cs_jobphases *j)
{
	char d1[64], d2[64], d3[64], d4[64];
	int ns = j->ns;
	cs_buf_printf(b, "job '%s': %zu rank(s), A = %s, B = %s, %zu collective instance(s); "
		      "clocks %s\n", j->job, j->nranks, rq->a, rq->b, j->ncoll,
		      j->aligned ? "aligned on the collectives' ends (offsets below)"
				 : "as stored (wall clock; --align collectives aligns them)");
	cs_buf_printf(b, "  %4s %6s  %-12s %12s %12s %8s %12s %5s %12s\n", "rank", "run", "host",
		      "A time", "exposed", "overlap", "waited", "last", "offset");
	for (size_t r = 0; r < j->nranks; r++) {
		const cs_job_rankres *x = &j->ranks[r];
		double a = x->ov.duration[CS_OV_A] + x->ov.duration[CS_OV_AB];
		double of = overlap_fraction(&x->ov);
		cs_buf_printf(b, "  %4lld %6lld  %-12.12s %12s %12s %7.1f%% %12s %5zu %9lld ns\n",
			      (long long)x->rank, (long long)x->run, x->host[0] ? x->host : "-",
			      cs_phases_dur(a, ns, d1, sizeof d1),
			      cs_phases_dur(x->exposed, ns, d2, sizeof d2), isnan(of) ? 0 : of * 100,
			      cs_phases_dur(x->wait, ns, d3, sizeof d3), x->last,
			      (long long)x->offset_ns);
	}
	if (j->ncoll) {
		double sum = 0;
		const cs_job_coll **by = malloc(j->ncoll * sizeof *by);
		for (size_t c = 0; c < j->ncoll; c++) {
			sum += j->coll[c].start_skew;
			if (by)
				by[c] = &j->coll[c];
		}
		cs_buf_printf(b, "  start skew: mean %s over %zu instances\n",
			      cs_phases_dur(sum / (double)j->ncoll, ns, d1, sizeof d1), j->ncoll);
		size_t top[3], nt = most_last(j, top);
		cs_buf_printf(b, "  most often last:");
		for (size_t i = 0; i < nt; i++)
			cs_buf_printf(b, "%s rank %lld (%zu of %zu)", i ? "," : "",
				      (long long)j->ranks[top[i]].rank, j->ranks[top[i]].last, j->ncoll);
		cs_buf_printf(b, "\n");
		if (by) {
			qsort(by, j->ncoll, sizeof *by, cmp_skew);
			size_t show = j->ncoll < 5 ? j->ncoll : 5;
			cs_buf_printf(b, "  largest start skews:\n");
			for (size_t i = 0; i < show; i++) {
				const cs_job_coll *x = by[i];
				double w = 0;
				for (size_t r = 0; r < j->nranks; r++)
					w += x->wait[r];
				cs_buf_printf(b, "    %-16s #%-6zu skew %12s  straggler rank %lld  "
					      "others waited %s in all, exposed on rank %lld: %s\n",
					      x->name, x->index, cs_phases_dur(x->start_skew, ns, d1, sizeof d1),
					      (long long)j->ranks[x->straggler].rank,
					      cs_phases_dur(w, ns, d4, sizeof d4),
					      (long long)j->ranks[x->straggler].rank,
					      cs_phases_dur(x->exposed[x->straggler], ns, d2, sizeof d2));
			}
			free(by);
		}
	}
	for (const char *w = j->warnings; w && *w;) {
		size_t n = strcspn(w, "\n");
		cs_buf_printf(b, "  warning: %.*s\n", (int)n, w);
		w += n + (w[n] == '\n');
	}
}

int cs_jobphases_out(cs_store *s, const cs_jobphases_request *rq, cs_buf *out, char *err,
		     size_t errlen)
{
	cs_jobphases j;
	int rc = cs_jobphases_compute(s, rq->job, rq->a, rq->b, rq->metrics, rq->align, &j, err,
				      errlen);
	if (rc)
		return rc;
	if (rq->format == CS_PHASES_JSON)
		write_json(out, rq, &j);
	else if (rq->format == CS_PHASES_CSV)
		write_csv(out, &j);
	else
		write_text(out, rq, &j);
	cs_jobphases_free(&j);
	return 0;
}
