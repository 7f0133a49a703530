/*
 * test_correlate.c - the correlation engine on constructed ground truth:
 * binning conserves totals (partial overlaps split), a simulator series
 * that is the hardware series shifted by a known lag, on another clock,
 * with noise, gives the lag back within one bin and r > 0.99; kernel-level
 * statistics equal hand-computed values.
 */
#include "testutil.h"

#include "corr_job.h"
#include "correlate.h"
#include "suite.h"

static void test_bin_conserves(void **state)
{
	/* Irregular samples straddling bin edges. */
	double t0[] = {0, 130, 260, 390, 1000, 1700};
	double t1[] = {130, 260, 390, 1000, 1700, 1950};
	double v[] = {13, 26, NAN, 122, 140, 25};
	cs_corr_series s = {6, t0, t1, v};
	double out[20];
	cs_corr_bin(&s, 100, 20, out);
	double sum = 0;
	for (int i = 0; i < 20; i++)
		sum += out[i];
	assert_true(fabs(sum - (13 + 26 + 122 + 140 + 25)) < 1e-9);
	/* bin 1 = [100,200): 30/130 of 13 + 70/130 of 26 */
	assert_true(fabs(out[1] - (13.0 * 30 / 130 + 26.0 * 70 / 130)) < 1e-12);
	/* the absent sample adds nothing to [260,390) */
	assert_true(fabs(out[3] - 122.0 * 10 / 610) < 1e-12);
	/* only what lies inside the bins counts: the last sample is cut at 1900 */
	cs_corr_bin(&s, 100, 19, out);
	sum = 0;
	for (int i = 0; i < 19; i++)
		sum += out[i];
	assert_true(fabs(sum - (13 + 26 + 122 + 140 + 25.0 * 200 / 250)) < 1e-9);
}

static double signal(double cyc)
{
	/* a burst train with a slow swell: shape worth correlating */
	double x = 1000 + 600 * sin(cyc / 9000.0) + ((long)(cyc / 4000) % 3 == 0 ? 900 : 0);
	return x > 0 ? x : 0;
}

static uint64_t rng = 88172645463325252ull;
static double noise(void)
{
	return ((double)(tu_rand(&rng) % 20001) / 10000.0 - 1.0); /* [-1, 1] */
}

static void test_recovers_lag_and_scale(void **state)
{
	/* Hardware: samples every 10 us at 1.5 GHz -> 15000 cycles, values
	 * are per-sample counts (rate x length). Simulator: samples every
	 * 500 cycles of the same signal, running 6300 cycles late, +-1% noise. */
	const double clock_ghz = 1.5, hw_ns = 1000, lag_cycles = 6300;
	size_t nh = 600, ns = 1800 * 1;
	double *h0 = malloc(nh * sizeof *h0), *h1 = malloc(nh * sizeof *h1), *hv = malloc(nh * sizeof *hv);
	for (size_t i = 0; i < nh; i++) {
		double a = (double)i * hw_ns * clock_ghz, b = a + hw_ns * clock_ghz;
		h0[i] = a;
		h1[i] = b;
		hv[i] = signal((a + b) / 2) * (b - a) / 100;
	}
	double hw_cycles = (double)nh * hw_ns * clock_ghz;
	double sim_cycles = hw_cycles;
	ns = (size_t)(sim_cycles / 500);
	double *s0 = malloc(ns * sizeof *s0), *s1 = malloc(ns * sizeof *s1), *sv = malloc(ns * sizeof *sv);
	for (size_t i = 0; i < ns; i++) {
		double a = (double)i * 500, b = a + 500;
		s0[i] = a;
		s1[i] = b;
		double c = (a + b) / 2 - lag_cycles;
		sv[i] = (c < 0 ? 0 : signal(c)) * 5 * (1 + 0.01 * noise());
	}
	cs_corr_series hw = {nh, h0, h1, hv}, sim = {ns, s0, s1, sv};
	cs_corr_opts o = {.bin = 3000, .max_lag = 10};
	cs_corr_result r;
	assert_int_equal(cs_corr_compare(&hw, hw_cycles, &sim, sim_cycles, &o, &r), 0);
	/* the simulator is 6300 cycles (2.1 bins) late: found within a bin */
	if (!(abs(r.lag + 2) <= 1 && r.pearson > 0.99))
		fail_msg("lag %d, r %.5f", r.lag, r.pearson);
	assert_true(fabs(r.total_err) < 0.05);
	assert_true(r.duration_err == 0);
	assert_true(r.hw_bins && r.sim_bins && r.bins > 250);
	/* totals conserved: the bins hold every hardware count */
	double sum = 0;
	for (size_t i = 0; i < nh; i++)
		sum += hv[i];
	assert_true(fabs(r.hw_total - sum) / sum < 1e-12);
	cs_corr_result_free(&r);

	/* With no lag search the shift costs correlation. */
	o.max_lag = 0;
	assert_int_equal(cs_corr_compare(&hw, hw_cycles, &sim, sim_cycles, &o, &r), 0);
	assert_int_equal(r.lag, 0);
	double unshifted = r.pearson;
	cs_corr_result_free(&r);
	assert_true(unshifted < 0.99);

	/* A simulator 10% slow (stretched): the time-normalised comparison
	 * still sees the shape. */
	for (size_t i = 0; i < ns; i++) {
		s0[i] = (double)i * 550;
		s1[i] = s0[i] + 550;
		double c = (double)i * 500 + 250;
		sv[i] = signal(c) * 5;
	}
	o.max_lag = 0;
	assert_int_equal(cs_corr_compare(&hw, hw_cycles, &sim, sim_cycles * 1.1, &o, &r), 0);
	assert_true(fabs(r.duration_err - 0.1) < 1e-9);
	assert_true(r.norm_pearson > 0.99);
	cs_corr_result_free(&r);
	free(h0), free(h1), free(hv), free(s0), free(s1), free(sv);
}

/* Says "gone" the second time it is asked. */
static int gone_after_one(void *ctx)
{
	return ++*(int *)ctx > 1;
}

/* A server's bounds: a search past max_work or max_bins is refused before
 * any work (max_lag=100000 on a 1e8-cycle run took 9 min 36 s), a
 * deadline already past stops it. Costs computed by hand. */
static void test_bounds(void **state)
{
	double t0[2] = {0, 50}, t1[2] = {50, 100}, v[2] = {1, 2};
	cs_corr_series a = {2, t0, t1, v};
	cs_corr_result r;
	uint64_t bins, work;
	/* 1e8 cycles in bins of 1: 1e8 bins; 200001 lags x 1e8 bins */
	cs_corr_opts o = {.bin = 1, .max_lag = 100000};
	cs_corr_cost(1e8, 1e8, &o, &bins, &work);
	assert_int_equal(bins, 100000000);
	assert_true(work == 200001ull * 100000000ull);
	o.max_work = 200000000;
	assert_int_equal(cs_corr_compare(&a, 1e8, &a, 1e8, &o, &r), -E2BIG);
	o = (cs_corr_opts){.bin = 1, .max_lag = 0, .max_bins = 1000};
	assert_int_equal(cs_corr_compare(&a, 1e8, &a, 1e8, &o, &r), -E2BIG);
	/* 100 cycles in bins of 1, 64 lags each way: inside the bounds, but
	 * the deadline (1 ms after boot) has passed */
	o = (cs_corr_opts){.bin = 1, .max_lag = 64, .max_bins = 1000, .max_work = 100000,
			   .deadline_ms = 1};
	assert_int_equal(cs_corr_compare(&a, 100, &a, 100, &o, &r), -ETIMEDOUT);
	o.deadline_ms = 0;
	/* a client that went away stops the search */
	o.cancelled = gone_after_one;
	int asked = 0;
	o.cancel_ctx = &asked;
	assert_int_equal(cs_corr_compare(&a, 100, &a, 100, &o, &r), -ECANCELED);
	assert_int_equal(asked, 2);
	o.cancelled = NULL;
	assert_int_equal(cs_corr_compare(&a, 100, &a, 100, &o, &r), 0);
	cs_corr_result_free(&r);
}

static void test_statistics(void **state)
{
	double h[] = {100, 200, 300, 400}, s[] = {110, 190, 330, 400};
	cs_corr_kernels k;
	cs_corr_kernel_stats(h, s, 4, &k);
	assert_true(fabs(k.pearson - 0.9915790012211082) < 1e-12);
	assert_true(fabs(k.mape - 6.25) < 1e-12);
	assert_true(fabs(k.agg_err - 5.0) < 1e-12);
	assert_int_equal(k.mape_n, 4);
	/* zero hardware bins are left out of MAPE */
	double hz[] = {0, 10, 20}, sz[] = {5, 11, 18};
	size_t used;
	assert_true(fabs(cs_corr_mape(hz, sz, 3, 0, &used) - 10.0) < 1e-12);
	assert_int_equal(used, 2);
	/* with a floor of 15 only the 20 counts */
	assert_true(fabs(cs_corr_mape(hz, sz, 3, 15, &used) - 10.0) < 1e-12);
	assert_int_equal(used, 1);
	/* Spearman: monotone but not linear is 1; ties get average ranks */
	double a[] = {1, 2, 3, 4, 5}, b[] = {1, 4, 9, 16, 25};
	assert_true(fabs(cs_corr_spearman(a, b, 5) - 1) < 1e-12);
	double c[] = {1, 2, 2, 3}, d[] = {10, 20, 20, 30};
	assert_true(fabs(cs_corr_spearman(c, d, 4) - 1) < 1e-12);
	/* NRMSE: rmse / mean(hw) */
	double x[] = {10, 10}, y[] = {12, 8};
	assert_true(fabs(cs_corr_nrmse(x, y, 2) - 0.2) < 1e-12);
	/* constant series have no correlation */
	assert_true(isnan(cs_corr_pearson(x, x, 2)));
	cs_corr_opts o = {.bin = 0};
	cs_corr_result r;
	double t[] = {0}, v[] = {1};
	cs_corr_series one = {1, t, t, v};
	assert_int_equal(cs_corr_compare(&one, 10, &one, 10, &o, &r), -EINVAL);
}

/* Names as the simulator and CUPTI print them reduce to one base name. */
static void test_base_name(void **state)
{
	(void)state;
	char b[256];
	assert_string_equal(cs_cjob_base_name("_Z5saxpyifPfS_", b, sizeof b), "saxpy");
	assert_string_equal(cs_cjob_base_name("saxpy(int, float, float*, float*)", b, sizeof b), "saxpy");
	assert_string_equal(cs_cjob_base_name("_Z4gemmILi128EEvPKfS1_Pfi", b, sizeof b),
			    "void gemm<128>");
	assert_string_equal(cs_cjob_base_name("kernel 1", b, sizeof b), "kernel 1");
	assert_string_equal(cs_cjob_base_name("_Znot_valid", b, sizeof b), "_Znot_valid");
	assert_string_equal(cs_cjob_base_name("", b, sizeof b), "");
}

/* uid first (when the names agree), then name in order, then demangled
 * name, and by position only when nothing matched. */
static void test_match(void **state)
{
	(void)state;
	char *hn[] = {"saxpy(int, float, float*, float*)", "_Z5scaleifPf", "_Z5scaleifPf", "other"};
	int64_t hu[] = {7, 2, 3, 9};
	char *sn[] = {"_Z5scaleifPf", "_Z5saxpyifPfS_", "_Z5scaleifPf", "_Z6unseenv"};
	int64_t su[] = {3, 1, 2, 4};
	cs_cjob_kernels hw = {.n = 4, .names = hn, .uid = hu, .sim = 1},
			sim = {.n = 4, .names = sn, .uid = su, .sim = 1};
	cs_cjob_pair p[4];
	size_t n = cs_cjob_match(&hw, &sim, p);
	assert_int_equal(n, 3);
	/* sim 0 (uid 3) is hw 2 by uid; sim 1 is saxpy by demangled name (uid
	 * 1 is not on the hardware side); sim 2 (uid 2) is hw 1 by uid */
	assert_int_equal(p[0].sim, 0);
	assert_int_equal(p[0].hw, 2);
	assert_int_equal(p[0].how, CS_MATCH_UID);
	assert_int_equal(p[1].sim, 1);
	assert_int_equal(p[1].hw, 0);
	assert_int_equal(p[1].how, CS_MATCH_DEMANGLED);
	assert_int_equal(p[2].sim, 2);
	assert_int_equal(p[2].hw, 1);
	assert_int_equal(p[2].how, CS_MATCH_UID);
	/* a uid that matches with another kernel's name is not a match */
	int64_t hu2[] = {3, 1, 2, 4};
	char *hn2[] = {"_Z6unseenv", "x", "y", "z"};
	cs_cjob_kernels hw2 = {.n = 4, .names = hn2, .uid = hu2, .sim = 1};
	n = cs_cjob_match(&hw2, &sim, p);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].sim, 3);
	assert_int_equal(p[0].hw, 0);
	assert_int_equal(p[0].how, CS_MATCH_NAME);
	/* nothing in common: by position */
	char *hn3[] = {"a", "b"};
	int64_t hu3[] = {-1, -1};
	cs_cjob_kernels hw3 = {.n = 2, .names = hn3, .uid = hu3};
	n = cs_cjob_match(&hw3, &sim, p);
	assert_int_equal(n, 2);
	assert_int_equal(p[1].hw, 1);
	assert_int_equal(p[1].how, CS_MATCH_POSITION);
	assert_string_equal(cs_cjob_how_name(CS_MATCH_DEMANGLED), "demangled name");
	/* a hardware side's correlation ids are another numbering: names only */
	hw.sim = 0;
	n = cs_cjob_match(&hw, &sim, p);
	assert_int_equal(n, 3);
	assert_int_equal(p[0].hw, 1); /* sim 0 takes the first scale by name */
	assert_int_equal(p[0].how, CS_MATCH_NAME);
	assert_int_equal(p[2].hw, 2);
	assert_int_equal(p[2].how, CS_MATCH_NAME);
}

/* Suite pairing names and statistics, against values worked by hand. */
static void test_suite_names_and_stats(void **state)
{
	(void)state;
	char k[256];
	cs_suite_app_key("Rodinia-3.1/BackProp/65536", k, sizeof k);
	assert_string_equal(k, "rodinia_3.1/backprop/65536");
	cs_suite_app_key("  sgemm (cutlass) / 4096__4096 ", k, sizeof k);
	assert_string_equal(k, "sgemm_cutlass/4096_4096");
	cs_suite_kernel_key("_Z6vecAddPfS_S_i--3", k, sizeof k);
	assert_string_equal(k, "vecAdd");
	cs_suite_kernel_key("vecAdd(float *, float *, float *, int)", k, sizeof k);
	assert_string_equal(k, "vecAdd");
	cs_suite_kernel_key("_Z5tiledILi4EEvPf", k, sizeof k);
	assert_string_equal(k, "tiled<4>");
	cs_suite_kernel_key("void tiled<4>(float *)", k, sizeof k);
	assert_string_equal(k, "tiled<4>");
	cs_suite_kernel_key("gemm--tail", k, sizeof k); /* not a launch number: kept */
	assert_string_equal(k, "gemm--tail");

	/* hw 100 200 400 0, sim 110 180 400 0, and a NaN pair left out:
	 * e = +10%, -10%, 0 (hw 0 has none); |e| mean 6.667%, e mean 0;
	 * RPD: 10/105, 20/190, 0, 0 -> mean 4.8872%; sums 700 and 690. */
	double hw[] = {100, 200, 400, 0, NAN}, sim[] = {110, 180, 400, 0, 5};
	cs_suite_stats st;
	cs_suite_stats_of(hw, sim, 5, &st);
	assert_int_equal(st.pairs, 4);
	assert_int_equal(st.error_n, 3);
	assert_true(fabs(st.mape_pct - 20.0 / 3) < 1e-9);
	assert_true(fabs(st.mean_error_pct) < 1e-9);
	assert_true(fabs(st.rpd_pct - 100 * (10.0 / 105 + 20.0 / 190) / 4) < 1e-9);
	assert_int_equal(st.within_1pct, 2);  /* 400/400 and 0/0 */
	assert_int_equal(st.within_10pct, 4);
	assert_true(fabs(st.aggregate_error_pct - 100 * (690.0 - 700) / 700) < 1e-9);
	assert_true(fabs(st.abs_aggregate_error_pct - 100 * 30.0 / 700) < 1e-9);
	assert_true(fabs(st.nrmse - sqrt((100.0 + 400) / 4) / (700.0 / 4)) < 1e-9);
	/* Spearman of 4 pairs in the same order: 1 (0 < 100 < 200 < 400 both) */
	assert_true(fabs(st.spearman - 1) < 1e-12);
	/* one pair: no correlation */
	cs_suite_stats_of(hw, sim, 1, &st);
	assert_true(isnan(st.pearson) && st.pairs == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bin_conserves),
		cmocka_unit_test(test_recovers_lag_and_scale),
		cmocka_unit_test(test_statistics),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_base_name),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_suite_names_and_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
