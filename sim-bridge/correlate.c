/*
 * correlate.c - binning and agreement statistics (correlate.h).
 */
#include "correlate.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

void cs_corr_bin(const cs_corr_series *s, double bin, size_t nbins, double *out)
{
	memset(out, 0, nbins * sizeof *out);
	double end = bin * (double)nbins;
	for (size_t i = 0; i < s->n; i++) {
		double a = s->t0[i], b = s->t1[i], v = s->v[i];
		if (isnan(v) || b <= a || b <= 0 || a >= end)
			continue;
		double len = b - a;
		double lo = a < 0 ? 0 : a, hi = b > end ? end : b;
		size_t k0 = (size_t)(lo / bin), k1 = (size_t)(hi / bin);
		if (k1 >= nbins)
			k1 = nbins - 1;
		for (size_t k = k0; k <= k1; k++) {
			double bl = (double)k * bin, bh = bl + bin;
			double ol = lo > bl ? lo : bl, oh = hi < bh ? hi : bh;
			if (oh > ol)
				out[k] += v * (oh - ol) / len;
		}
	}
}

double cs_corr_pearson(const double *x, const double *y, size_t n)
{
	if (n < 2)
		return NAN;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	double sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double dx = x[i] - mx, dy = y[i] - my;
		sxy += dx * dy;
		sxx += dx * dx;
		syy += dy * dy;
	}
	return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : (double)NAN;
}

typedef struct ranked {
	double v;
	size_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
	return x < y ? -1 : x > y;
}

/* Ranks with ties given their average rank. */
static int ranks(const double *v, size_t n, double *out)
{
	ranked *r = malloc(n * sizeof *r);
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked){v[i], i};
	qsort(r, n, sizeof *r, cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double avg = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			out[r[k].i] = avg;
		i = j + 1;
	}
	free(r);
	return 0;
}

double cs_corr_spearman(const double *x, const double *y, size_t n)
{
	if (n < 2)
		return NAN;
	double *rx = malloc(n * sizeof *rx), *ry = malloc(n * sizeof *ry);
	double r = NAN;
	if (rx && ry && ranks(x, n, rx) == 0 && ranks(y, n, ry) == 0)
		r = cs_corr_pearson(rx, ry, n);
	free(rx);
	free(ry);
	return r;
}

double cs_corr_mape(const double *x, const double *y, size_t n, double floor_abs, size_t *used)
{
	double s = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (x[i] == 0 || fabs(x[i]) < floor_abs)
			continue;
		s += fabs(y[i] - x[i]) / fabs(x[i]);
		k++;
	}
	if (used)
		*used = k;
	return k ? 100 * s / (double)k : (double)NAN;
}

double cs_corr_nrmse(const double *x, const double *y, size_t n)
{
	if (!n)
		return NAN;
	double se = 0, mx = 0;
	for (size_t i = 0; i < n; i++) {
		se += (y[i] - x[i]) * (y[i] - x[i]);
		mx += x[i];
	}
	mx /= (double)n;
	return mx != 0 ? sqrt(se / (double)n) / fabs(mx) : (double)NAN;
}

/* Binned MAPE leaves out bins whose hardware value is below this share of
 * the largest bin: a bin that caught a sliver of a sample (or one that is
 * almost idle) would otherwise weigh as much as a busy one. */
#define MAPE_FLOOR 0.01

static double max_abs(const double *v, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(v[i]) > m)
			m = fabs(v[i]);
	return m;
}

static double total(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

void cs_corr_cost(double hw_cycles, double sim_cycles, const cs_corr_opts *o, uint64_t *bins,
		  uint64_t *work)
{
	double nh = ceil(hw_cycles / o->bin), ns = ceil(sim_cycles / o->bin);
	double nb = nh > ns ? nh : ns, nn = nh < ns ? nh : ns;
	double lags = 2.0 * (o->max_lag < 0 ? 0 : o->max_lag) + 1;
	*bins = nb < 1.8e19 ? (uint64_t)nb : UINT64_MAX;
	*work = lags * nn < 1.8e19 ? (uint64_t)(lags * nn) : UINT64_MAX;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int cs_corr_compare(const cs_corr_series *hw, double hw_cycles, const cs_corr_series *sim,
		    double sim_cycles, const cs_corr_opts *o, cs_corr_result *r)
{
	memset(r, 0, sizeof *r);
	if (!(o->bin > 0) || !(hw_cycles > 0) || !(sim_cycles > 0))
		return -EINVAL;
	uint64_t cost_bins, cost_work;
	cs_corr_cost(hw_cycles, sim_cycles, o, &cost_bins, &cost_work);
	if ((o->max_bins && cost_bins > o->max_bins) || (o->max_work && cost_work > o->max_work))
		return -E2BIG;
	size_t nh = (size_t)ceil(hw_cycles / o->bin), ns = (size_t)ceil(sim_cycles / o->bin);
	if (!nh || !ns)
		return -EINVAL;
	double *h = calloc(nh, sizeof *h), *s = calloc(ns, sizeof *s);
	size_t nn = nh < ns ? nh : ns;
	double *hn = calloc(nn, sizeof *hn), *sn = calloc(nn, sizeof *sn);
	if (!h || !s || !hn || !sn) {
		free(h), free(s), free(hn), free(sn);
		return -ENOMEM;
	}
	cs_corr_bin(hw, o->bin, nh, h);
	cs_corr_bin(sim, o->bin, ns, s);
	r->hw_total = total(h, nh);
	r->sim_total = total(s, ns);
	r->total_err = r->hw_total != 0 ? (r->sim_total - r->hw_total) / r->hw_total : (double)NAN;
	r->hw_cycles = hw_cycles;
	r->sim_cycles = sim_cycles;
	r->duration_err = (sim_cycles - hw_cycles) / hw_cycles;
	/* Lag: the simulator series shifted by L bins against the hardware;
	 * the overlap must keep at least half of the shorter series. */
	int best = 0;
	double best_r = -2;
	int max_lag = o->max_lag < 0 ? 0 : o->max_lag;
	for (int lag = -max_lag; lag <= max_lag; lag++) {
		if ((lag & 63) == 0 && ((o->deadline_ms && mono_ms() > o->deadline_ms) ||
					(o->cancelled && o->cancelled(o->cancel_ctx)))) {
			free(h), free(s), free(hn), free(sn);
			return o->deadline_ms && mono_ms() > o->deadline_ms ? -ETIMEDOUT : -ECANCELED;
		}
		size_t hoff = lag > 0 ? (size_t)lag : 0, soff = lag < 0 ? (size_t)-lag : 0;
		if (hoff >= nh || soff >= ns)
			continue;
		size_t n = nh - hoff < ns - soff ? nh - hoff : ns - soff;
		if (n < 2 || n * 2 < nn)
			continue;
		double pr = cs_corr_pearson(h + hoff, s + soff, n);
		if (!isnan(pr) && pr > best_r + 1e-12) {
			best_r = pr;
			best = lag;
		}
	}
	size_t hoff = best > 0 ? (size_t)best : 0, soff = best < 0 ? (size_t)-best : 0;
	size_t n = nh - hoff < ns - soff ? nh - hoff : ns - soff;
	r->lag = best;
	r->bins = n;
	r->pearson = cs_corr_pearson(h + hoff, s + soff, n);
	r->spearman = cs_corr_spearman(h + hoff, s + soff, n);
	r->mape = cs_corr_mape(h + hoff, s + soff, n, MAPE_FLOOR * max_abs(h + hoff, n), &r->mape_bins);
	r->nrmse = cs_corr_nrmse(h + hoff, s + soff, n);
	r->hw_bins = malloc((n ? n : 1) * sizeof *r->hw_bins);
	r->sim_bins = malloc((n ? n : 1) * sizeof *r->sim_bins);
	if (!r->hw_bins || !r->sim_bins) {
		free(h), free(s), free(hn), free(sn);
		cs_corr_result_free(r);
		return -ENOMEM;
	}
	memcpy(r->hw_bins, h + hoff, n * sizeof *h);
	memcpy(r->sim_bins, s + soff, n * sizeof *s);
	/* Time-normalised: each window stretched onto nn bins. */
	cs_corr_series hs = *hw, ss = *sim;
	double *ht0 = malloc(hw->n * 2 * sizeof(double)), *st0 = malloc(sim->n * 2 * sizeof(double));
	if (ht0 && st0) {
		double fh = (double)nn * o->bin / hw_cycles, fs = (double)nn * o->bin / sim_cycles;
		for (size_t i = 0; i < hw->n; i++) {
			ht0[i] = hw->t0[i] * fh;
			ht0[hw->n + i] = hw->t1[i] * fh;
		}
		for (size_t i = 0; i < sim->n; i++) {
			st0[i] = sim->t0[i] * fs;
			st0[sim->n + i] = sim->t1[i] * fs;
		}
		hs.t0 = ht0;
		hs.t1 = ht0 + hw->n;
		ss.t0 = st0;
		ss.t1 = st0 + sim->n;
		cs_corr_bin(&hs, o->bin, nn, hn);
		cs_corr_bin(&ss, o->bin, nn, sn);
		r->norm_bins = nn;
		r->norm_pearson = cs_corr_pearson(hn, sn, nn);
		r->norm_mape = cs_corr_mape(hn, sn, nn, MAPE_FLOOR * max_abs(hn, nn), NULL);
		r->norm_nrmse = cs_corr_nrmse(hn, sn, nn);
	}
	free(ht0), free(st0);
	free(h), free(s), free(hn), free(sn);
	return 0;
}

void cs_corr_result_free(cs_corr_result *r)
{
	if (!r)
		return;
	free(r->hw_bins);
	free(r->sim_bins);
	r->hw_bins = r->sim_bins = NULL;
}

void cs_corr_kernel_stats(const double *hw, const double *sim, size_t n, cs_corr_kernels *k)
{
	memset(k, 0, sizeof *k);
	k->n = n;
	k->pearson = cs_corr_pearson(hw, sim, n);
	k->mape = cs_corr_mape(hw, sim, n, 0, &k->mape_n);
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		num += fabs(sim[i] - hw[i]);
		den += hw[i];
	}
	k->agg_err = den != 0 ? 100 * num / den : (double)NAN;
}
