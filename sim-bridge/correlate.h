/*
 * correlate.h - the correlation engine (cs_corr_*): a hardware series and
 * a simulator series on one cycle axis, integrated into equal bins, and
 * the statistics of how well they agree; and kernel-level correlation
 * over many kernels, as Accel-Sim's correlator reports it. Pure
 * computation: no store, no I/O (docs/correlation.md has the method).
 */
#ifndef CS_CORRELATE_H
#define CS_CORRELATE_H

#include <stddef.h>
#include <stdint.h>

/* One side: n samples [t0[i], t1[i]) in cycles from the window start,
 * each holding value v[i] (a count over the sample; NaN = absent). */
typedef struct cs_corr_series {
	size_t n;
	const double *t0, *t1, *v;
} cs_corr_series;

/* Integrates s into nbins bins of width bin starting at 0: a sample adds
 * its value to each bin in proportion to how much of the sample lies in
 * it, so the bins' total equals the total of what lies inside
 * [0, nbins*bin). Absent samples add nothing. out has nbins entries. */
void cs_corr_bin(const cs_corr_series *s, double bin, size_t nbins, double *out);

/* Statistics of two equally long binned series (x = hardware). */
double cs_corr_pearson(const double *x, const double *y, size_t n);
double cs_corr_spearman(const double *x, const double *y, size_t n);
/* Mean of |y - x| / |x| in percent over the bins where x != 0 and
 * |x| >= floor_abs; *used (may be NULL) says how many bins that was.
 * cs_corr_compare uses 1% of the largest hardware bin as the floor, the
 * kernel level 0 (every kernel with a non-zero hardware value). */
double cs_corr_mape(const double *x, const double *y, size_t n, double floor_abs, size_t *used);
/* sqrt(mean((y - x)^2)) / mean(x). */
double cs_corr_nrmse(const double *x, const double *y, size_t n);

typedef struct cs_corr_opts {
	double bin;      /* bin width in cycles (> 0) */
	int max_lag;     /* search lags in [-max_lag, max_lag] bins */
	/* Bounds for a server (0 = none): bins on either side, lag steps x
	 * bins of the search, and a CLOCK_MONOTONIC deadline in ms. */
	uint64_t max_bins, max_work, deadline_ms;
	/* Asked now and then during the search: non-zero stops it with
	 * -ECANCELED (a server's client went away). NULL = never. */
	int (*cancelled)(void *ctx);
	void *cancel_ctx;
} cs_corr_opts;

typedef struct cs_corr_result {
	size_t bins;            /* compared bins (after the lag shift) */
	double pearson, spearman, mape, nrmse;
	size_t mape_bins;
	double hw_total, sim_total, total_err;     /* (sim - hw) / hw */
	double hw_cycles, sim_cycles, duration_err; /* window lengths */
	int lag;                /* bins the simulator series was shifted by */
	/* Both windows stretched to the same number of bins. */
	double norm_pearson, norm_mape, norm_nrmse;
	size_t norm_bins;
	/* The aligned binned series (lag applied), malloc'd, bins long:
	 * free with cs_corr_result_free(). */
	double *hw_bins, *sim_bins;
} cs_corr_result;

/* Compares hw and sim (durations hw_cycles and sim_cycles). 0, or
 * -EINVAL (no bins), -ENOMEM, -E2BIG (over max_bins or max_work: see
 * cs_corr_cost), -ETIMEDOUT (past the deadline) or -ECANCELED. */
int cs_corr_compare(const cs_corr_series *hw, double hw_cycles, const cs_corr_series *sim,
		    double sim_cycles, const cs_corr_opts *o, cs_corr_result *r);

/* What a comparison would cost: bins on the longer side and lag steps x
 * bins of the search, for the -E2BIG message. */
void cs_corr_cost(double hw_cycles, double sim_cycles, const cs_corr_opts *o, uint64_t *bins,
		  uint64_t *work);
void cs_corr_result_free(cs_corr_result *r);

/* Kernel level: per-kernel totals of one metric pair over n matched
 * kernels: Pearson r over the kernels, MAPE% over kernels with hw != 0,
 * and the aggregate error sum|sim-hw| / sum hw in percent. */
typedef struct cs_corr_kernels {
	size_t n, mape_n;
	double pearson, mape, agg_err;
} cs_corr_kernels;
void cs_corr_kernel_stats(const double *hw, const double *sim, size_t n, cs_corr_kernels *k);

#endif
