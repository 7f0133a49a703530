/*
 * phases.c - the overlap analysis (sim-bridge/overlap.h) written as text,
 * JSON or CSV (phases.h).
 */
#include "phases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "overlap.h"

const char *cs_phases_dur(double d, int ns, char *buf, size_t len)
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

/* A time of the analysis (from its origin) as the run's own time. */
static int64_t abs_t(const cs_overlap *j, double t)
{
	return j->origin + (int64_t)llround(t);
}

static void write_out(cs_buf *b, const cs_phases_request *rq, const cs_overlap *j)
{
	const double *dphase = j->duration;
	double total = j->span1 - j->span0, tail0 = j->tail0, tail1 = j->tail1;
	int64_t run = j->run;
	const char *run_name = j->run_name;
	int ns = j->ns;
	size_t ra = j->a_ranges, rb = j->b_ranges;
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
		cs_json_i64(b, abs_t(j, j->span0));
		cs_json_raw(b, ",");
		cs_json_i64(b, abs_t(j, j->span1));
		cs_json_raw(b, "]");
		cs_json_key(b, &first, "phases");
		cs_json_raw(b, "[");
		for (int p = 0; p < CS_OV_NBUCKET; p++) {
			int f = 1;
			if (p >= CS_OV_NPHASE && isnan(tail0))
				break;
			cs_json_raw(b, p ? ",{" : "{");
			cs_json_key(b, &f, "phase");
			cs_json_str(b, cs_overlap_names[p]);
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
			cs_json_i64(b, abs_t(j, tail0));
			cs_json_key(b, &f, "end");
			cs_json_i64(b, abs_t(j, tail1));
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
			cs_json_i64(b, abs_t(j, j->seg[i].t0));
			cs_json_raw(b, ",");
			cs_json_i64(b, abs_t(j, j->seg[i].t1));
			cs_json_raw(b, ",");
			cs_json_str(b, j->seg[i].tail ? "tail" : cs_overlap_names[j->seg[i].phase]);
			cs_json_raw(b, "]");
		}
		cs_json_raw(b, "]}\n");
		return;
	}
	if (rq->format == CS_PHASES_CSV) {
		cs_buf_printf(b, "phase,metric,duration,share,sum,mean_rate,peak_rate\r\n");
		for (int p = 0; p < CS_OV_NBUCKET; p++) {
			if (p >= CS_OV_NPHASE && isnan(tail0))
				break;
			for (size_t k = 0; k < j->nm; k++) {
				cs_buf_printf(b, "%s,\"", cs_overlap_names[p]);
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
		(long long)run, run_name, rq->a, ra, rq->b, rb, cs_phases_dur(total, ns, d1, sizeof d1));
	cs_buf_printf(b, "  %-26s %14s %8s\n", "phase", "duration", "share");
	for (int p = 0; p < CS_OV_NBUCKET; p++) {
		if (p >= CS_OV_NPHASE && isnan(tail0))
			break;
		cs_buf_printf(b, "  %-26s %14s %7.2f%%\n", cs_overlap_names[p], cs_phases_dur(dphase[p], ns, d1, sizeof d1),
			total > 0 ? 100 * dphase[p] / total : (double)NAN);
	}
	if (isnan(tail0))
		cs_buf_printf(b, "  no tail: %s\n", dphase[CS_OV_AB] > 0 ? "B does not run on after its last overlap with A"
							      : "A and B never overlap");
	else
		cs_buf_printf(b, "  tail: B runs on alone for %s after its last overlap with A (%lld to %lld)\n",
			cs_phases_dur(tail1 - tail0, ns, d1, sizeof d1), (long long)abs_t(j, tail0),
			(long long)abs_t(j, tail1));
	cs_buf_printf(b, "\n  %-34s %-24s %14s %14s %14s\n", "metric", "phase", "sum", "mean rate", "peak rate");
	for (size_t k = 0; k < j->nm; k++) {
		for (int p = 0; p < CS_OV_NBUCKET; p++) {
			if (p >= CS_OV_NPHASE && isnan(tail0))
				break;
			cs_buf_printf(b, "  %-34.34s %-24s %14.6g %14.6g %14.6g\n", p ? "" : j->m[k].name,
				cs_overlap_names[p], j->m[k].sum[p],
				dphase[p] > 0 ? j->m[k].sum[p] / dphase[p] * per : (double)NAN,
				j->m[k].peak[p] * per);
		}
		if (!isnan(tail0) && dphase[CS_OV_BREST] > 0 && j->m[k].sum[CS_OV_BREST] != 0)
			cs_buf_printf(b, "  %-34s tail / B alone: %.3fx the mean rate\n", "",
				(j->m[k].sum[CS_OV_TAIL] / dphase[CS_OV_TAIL]) / (j->m[k].sum[CS_OV_BREST] / dphase[CS_OV_BREST]));
		cs_buf_printf(b, "  %-34s total %.6g (rates %s)\n", "", j->m[k].total, rate_unit);
	}
}

int cs_phases_out(cs_store *s, const cs_phases_request *rq, cs_buf *out, char *err,
		  size_t errlen)
{
	cs_overlap o;
	int rc = cs_overlap_compute(s, rq->run, rq->a, rq->b, rq->metrics, rq->device, &o, err,
				    errlen);
	if (rc)
		return rc;
	write_out(out, rq, &o);
	cs_overlap_free(&o);
	return 0;
}
