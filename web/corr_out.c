/*
 * corr_out.c - correlation answers as text, JSON or CSV (corr_out.h).
 */
#include "corr_out.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr_job.h"
#include "correlate.h"
#include "json.h"
#include "log.h"

static void bprintf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(cs_buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		cs_buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* One quoted CSV field and its comma (RFC 4180: quotes doubled). */
static void csv_field(cs_buf *b, const char *s)
{
	cs_buf_put_u8(b, '"');
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			cs_buf_put_u8(b, '"');
		cs_buf_put_u8(b, (uint8_t)*c);
	}
	cs_json_raw(b, "\",");
}

static void json_array(cs_buf *b, const double *v, size_t n)
{
	cs_json_raw(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			cs_json_raw(b, ",");
		cs_json_f64(b, v[i]);
	}
	cs_json_raw(b, "]");
}

typedef struct pair {
	const char *hw, *sim;
} pair;

/* Opens a pair's JSON object (after a comma unless it is the first). */
static void json_pair_head(cs_buf *b, const pair *pr, int first_pair, int *first)
{
	cs_json_raw(b, first_pair ? "" : ",\n");
	cs_json_raw(b, "{");
	cs_json_key(b, first, "hw_metric");
	cs_json_str(b, pr->hw);
	cs_json_key(b, first, "sim_metric");
	cs_json_str(b, pr->sim);
}

static void json_num(cs_buf *b, int *first, const char *k, double v)
{
	cs_json_key(b, first, k);
	cs_json_f64(b, v);
}

static int one_pair(cs_store *s, const pair *pr, const cs_corr_request *rq, int first_pair,
		    cs_buf *b, char *err, size_t errlen)
{
	char why[1024] = "";
	int json = rq->format == CS_CORR_JSON, csv = rq->format == CS_CORR_CSV;
	int kernels = rq->kernels;
	cs_cjob_spec hs = {.run = rq->hw, .expr = pr->hw, .window = kernels ? NULL : rq->hw_window,
			   .clock_hz = rq->hw_clock_hz};
	cs_cjob_spec ss = {.run = rq->sim, .expr = pr->sim, .window = kernels ? NULL : rq->sim_window};
	cs_cjob_side h, m;
	int rc = cs_cjob_load(s, &hs, &h, why, sizeof why);
	if (rc < 0) {
		snprintf(err, errlen, "hardware side: %.900s", why);
		return rc;
	}
	/* --sim-clock: the simulator's cycles counted on the hardware's
	 * clock, so both axes measure the same time. */
	double sim_hz = 0, hw_hz = h.clock_hz;
	if (rq->sim_clock && *rq->sim_clock) {
		if ((rc = cs_cjob_clock(s, rq->sim, rq->sim_clock, &sim_hz, why, sizeof why)) < 0) {
			cs_cjob_side_free(&h);
			snprintf(err, errlen, "simulator side: %.900s", why);
			return rc;
		}
		if (!(hw_hz > 0) && cs_cjob_clock(s, rq->hw, "core", &hw_hz, why, sizeof why) < 0) {
			cs_cjob_side_free(&h);
			snprintf(err, errlen, "hardware side: --sim-clock rescales onto the hardware's "
				 "clock, and run %s has none (give --hw-clock-mhz)", h.run_name);
			return -EINVAL;
		}
		ss.cycle_scale = hw_hz / sim_hz;
	}
	if ((rc = cs_cjob_load(s, &ss, &m, why, sizeof why)) < 0) {
		cs_cjob_side_free(&h);
		snprintf(err, errlen, "simulator side: %.900s", why);
		return rc;
	}
	if (h.is_rate != m.is_rate) {
		snprintf(err, errlen, "the %s expression is a rate (it uses rate()) and the %s one is "
			 "a count: use rate() on both sides or on neither",
			 h.is_rate ? "hardware" : "simulator", h.is_rate ? "simulator" : "hardware");
		rc = -EINVAL;
		goto out;
	}
	int first = 1;
	if (kernels) {
		cs_cjob_kernels kh, ks;
		if ((rc = cs_cjob_kernel_totals(s, &h, &kh, err, errlen)) < 0 ||
		    (rc = cs_cjob_kernel_totals(s, &m, &ks, err, errlen)) < 0)
			goto out;
		size_t cap = kh.n < ks.n ? kh.n : ks.n;
		double *xh = calloc(cap + 1, sizeof *xh), *xs = calloc(cap + 1, sizeof *xs);
		size_t *idx = calloc(cap + 1, sizeof *idx);
		size_t n = xh && xs && idx ? cs_cjob_match(&kh, &ks, xh, xs, idx) : 0;
		cs_corr_kernels k;
		cs_corr_kernel_stats(xh, xs, n, &k);
		if (json) {
			json_pair_head(b, pr, first_pair, &first);
			cs_json_key(b, &first, "kernels");
			cs_json_i64(b, (int64_t)n);
			json_num(b, &first, "pearson", k.pearson);
			json_num(b, &first, "mape_pct", k.mape);
			json_num(b, &first, "aggregate_error_pct", k.agg_err);
			cs_json_key(b, &first, "per_kernel");
			cs_json_raw(b, "[");
			for (size_t i = 0; i < n; i++) {
				int f2 = 1;
				cs_json_raw(b, i ? ",{" : "{");
				cs_json_key(b, &f2, "name");
				cs_json_str(b, ks.names[idx[i]]);
				json_num(b, &f2, "hw", xh[i]);
				json_num(b, &f2, "sim", xs[i]);
				cs_json_raw(b, "}");
			}
			cs_json_raw(b, "]}");
		} else if (csv) {
			if (first_pair)
				bprintf(b, "hw_metric,sim_metric,kernel,hw,sim\r\n");
			for (size_t i = 0; i < n; i++)
			{
				csv_field(b, pr->hw);
				csv_field(b, pr->sim);
				csv_field(b, ks.names[idx[i]]);
				bprintf(b, "%.17g,%.17g\r\n", xh[i], xs[i]);
			}
		} else {
			bprintf(b, "%s  vs  %s: %zu kernels matched (of %zu hw, %zu sim)\n", pr->hw, pr->sim, n,
			       kh.n, ks.n);
			for (size_t i = 0; i < n; i++)
				bprintf(b, "  %-40.40s hw %-14.6g sim %-14.6g err %+.1f%%\n", ks.names[idx[i]], xh[i],
				       xs[i], xh[i] != 0 ? 100 * (xs[i] - xh[i]) / xh[i] : (double)NAN);
			bprintf(b, "  pearson r %.4f  MAPE %.2f%% (%zu kernels)  aggregate error %.2f%%\n\n",
			       k.pearson, k.mape, k.mape_n, k.agg_err);
		}
		free(xh), free(xs), free(idx);
		cs_cjob_kernels_free(&kh);
		cs_cjob_kernels_free(&ks);
		goto out;
	}
	double use_bin = rq->bin_cycles > 0 ? rq->bin_cycles : (h.median_sample > m.median_sample ? h.median_sample
									    : m.median_sample);
	if (!(use_bin > 0))
		use_bin = 1;
	cs_corr_opts o = {.bin = use_bin, .max_lag = rq->max_lag, .max_bins = rq->max_bins,
			  .max_work = rq->max_work, .deadline_ms = rq->deadline_ms};
	cs_corr_series sh = cs_cjob_series(&h), sm = cs_cjob_series(&m);
	cs_corr_result r;
	if ((rc = cs_corr_compare(&sh, h.cycles, &sm, m.cycles, &o, &r)) < 0) {
		uint64_t bins, work;
		cs_corr_cost(h.cycles, m.cycles, &o, &bins, &work);
		if (rc == -E2BIG)
			snprintf(err, errlen, "max_lag: %llu bins and %d lags each way take %llu steps, "
				 "over the limit of %llu bins and %llu steps: lower max_lag or raise "
				 "bin_cycles", (unsigned long long)bins, rq->max_lag,
				 (unsigned long long)work, (unsigned long long)rq->max_bins,
				 (unsigned long long)rq->max_work);
		else if (rc == -ETIMEDOUT)
			snprintf(err, errlen, "the comparison ran past its time limit: lower max_lag "
				 "or raise bin_cycles");
		else
			snprintf(err, errlen, "nothing to compare (empty windows?)");
		goto out;
	}
	/* Rates: each bin holds what the rate added up to; its mean is that
	 * over the bin's width. */
	for (size_t i = 0; h.is_rate && i < r.bins; i++) {
		r.hw_bins[i] /= use_bin;
		r.sim_bins[i] /= use_bin;
	}
	if (csv) {
		if (first_pair)
			bprintf(b, "hw_metric,sim_metric,bin,cycle,hw,sim\r\n");
		for (size_t i = 0; i < r.bins; i++)
		{
			csv_field(b, pr->hw);
			csv_field(b, pr->sim);
			bprintf(b, "%zu,%.17g,%.17g,%.17g\r\n", i, (double)i * use_bin, r.hw_bins[i],
				r.sim_bins[i]);
		}
	} else if (json) {
		json_pair_head(b, pr, first_pair, &first);
		cs_json_key(b, &first, "hw_window");
		cs_json_str(b, h.window);
		cs_json_key(b, &first, "sim_window");
		cs_json_str(b, m.window);
		json_num(b, &first, "hw_clock_hz", h.clock_hz);
		if (sim_hz > 0) {
			json_num(b, &first, "sim_clock_hz", sim_hz);
			json_num(b, &first, "sim_cycle_scale", m.cycle_scale);
		}
		cs_json_key(b, &first, "rate");
		cs_json_raw(b, h.is_rate ? "true" : "false");
		json_num(b, &first, "bin_cycles", use_bin);
		cs_json_key(b, &first, "bins");
		cs_json_i64(b, (int64_t)r.bins);
		cs_json_key(b, &first, "lag_bins");
		cs_json_i64(b, r.lag);
		json_num(b, &first, "pearson", r.pearson);
		json_num(b, &first, "spearman", r.spearman);
		json_num(b, &first, "mape_pct", r.mape);
		cs_json_key(b, &first, "mape_bins");
		cs_json_i64(b, (int64_t)r.mape_bins);
		json_num(b, &first, "nrmse", r.nrmse);
		json_num(b, &first, "hw_total", r.hw_total);
		json_num(b, &first, "sim_total", r.sim_total);
		json_num(b, &first, "total_error", r.total_err);
		json_num(b, &first, "hw_cycles", r.hw_cycles);
		json_num(b, &first, "sim_cycles", r.sim_cycles);
		json_num(b, &first, "duration_error", r.duration_err);
		json_num(b, &first, "normalized_pearson", r.norm_pearson);
		json_num(b, &first, "normalized_mape_pct", r.norm_mape);
		json_num(b, &first, "normalized_nrmse", r.norm_nrmse);
		if (rq->with_bins) {
			cs_json_key(b, &first, "hw_bins");
			json_array(b, r.hw_bins, r.bins);
			cs_json_key(b, &first, "sim_bins");
			json_array(b, r.sim_bins, r.bins);
			/* The simulator's kernels inside its window, in bins'
			 * cycles (the lag shift applied), for shading. */
			cs_cjob_kernels ks;
			char kerr[256];
			cs_json_key(b, &first, "sim_kernels");
			cs_json_raw(b, "[");
			if (cs_cjob_kernel_spans(s, &m, (double)(r.lag < 0 ? r.lag : 0) * use_bin, &ks, kerr,
						 sizeof kerr) == 0) {
				for (size_t i = 0; i < ks.n; i++) {
					cs_json_raw(b, i ? ",[" : "[");
					cs_json_f64(b, ks.t0[i]);
					cs_json_raw(b, ",");
					cs_json_f64(b, ks.t1[i]);
					cs_json_raw(b, ",");
					cs_json_str(b, ks.names[i]);
					cs_json_raw(b, "]");
				}
				cs_cjob_kernels_free(&ks);
			}
			cs_json_raw(b, "]");
		}
		cs_json_raw(b, "}");
	} else {
		bprintf(b, "hardware  %s: %s over %s (%.0f cycles at %.1f MHz, %zu samples)\n", h.run_name,
		       pr->hw, h.window, h.cycles, h.clock_hz / 1e6, h.n);
		bprintf(b, "simulator %s: %s over %s (%.0f cycles, %zu samples)\n", m.run_name, pr->sim,
		       m.window, m.cycles, m.n);
		if (sim_hz > 0)
			bprintf(b, "simulator cycles at %.1f MHz rescaled x%.6g onto the hardware's %.1f MHz\n",
				sim_hz / 1e6, m.cycle_scale, hw_hz / 1e6);
		if (h.is_rate)
			bprintf(b, "both sides are rates: bins are per-cycle means, totals what they add up to\n");
		bprintf(b, "bins: %zu of %.0f cycles, lag %d bins (negative: the simulator is later)\n",
		       r.bins, use_bin, r.lag);
		bprintf(b, "  pearson r      %8.4f     spearman rho %8.4f\n", r.pearson, r.spearman);
		bprintf(b, "  MAPE           %8.2f%%    (%zu bins with hardware >= 1%% of its peak)\n", r.mape,
		       r.mape_bins);
		bprintf(b, "  NRMSE          %8.4f\n", r.nrmse);
		bprintf(b, "  total error    %+8.2f%%    (sim %.6g vs hw %.6g)\n", 100 * r.total_err,
		       r.sim_total, r.hw_total);
		bprintf(b, "  duration error %+8.2f%%\n", 100 * r.duration_err);
		bprintf(b, "  time-normalised (%zu bins): pearson r %.4f, MAPE %.2f%%, NRMSE %.4f\n\n",
		       r.norm_bins, r.norm_pearson, r.norm_mape, r.norm_nrmse);
	}
	cs_corr_result_free(&r);
out:
	cs_cjob_side_free(&h);
	cs_cjob_side_free(&m);
	return rc;
}

int cs_corr_out(cs_store *s, const cs_corr_request *rq, cs_buf *out, char *err, size_t errlen)
{
	pair single = {rq->hw_metric, rq->sim_metric};
	const pair *pairs = &single;
	pair *owned = NULL;
	size_t npairs = 1;
	err[0] = '\0';
	if (rq->map) {
		npairs = cs_mmap_count(rq->map);
		owned = calloc(npairs + 1, sizeof *owned);
		if (!owned) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (size_t i = 0; i < npairs; i++)
			owned[i] = (pair){cs_mmap_target(rq->map, i), cs_mmap_target(rq->map, i)};
		pairs = owned;
	} else if (!rq->hw_metric || !rq->sim_metric) {
		snprintf(err, errlen, "give a hardware and a simulator metric expression, or a map");
		return -EINVAL;
	}
	if (rq->format == CS_CORR_JSON)
		cs_json_raw(out, "[");
	int rc = 0, done = 0;
	for (size_t i = 0; i < npairs; i++) {
		char why[1024];
		int r1 = one_pair(s, &pairs[i], rq, !done, out, why, sizeof why);
		if (r1 < 0 && rq->map && (r1 == -ENOENT || r1 == -ENODATA)) {
			/* a map pair missing on either side is skipped */
			cs_log(CS_LOG_WARN, "correlate: %s skipped: %s", pairs[i].hw, why);
			continue;
		}
		if (r1 < 0) {
			snprintf(err, errlen, "%s", why);
			rc = r1;
			break;
		}
		done++;
	}
	if (rc == 0 && rq->map && !done) {
		snprintf(err, errlen, "no pair of the map is in both runs");
		rc = -ENOENT;
	}
	if (rq->format == CS_CORR_JSON)
		cs_json_raw(out, "]\n");
	free(owned);
	return rc;
}
