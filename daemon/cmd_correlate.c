/*
 * cmd_correlate.c - `cyclescope correlate`: a hardware run against a
 * simulator run, binned on one cycle axis (correlate.h, corr_job.h), or
 * kernel by kernel. docs/correlation.md has the method.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmds.h"
#include "corr_job.h"
#include "correlate.h"
#include "json.h"
#include "metric_map.h"

static int run_correlate(int argc, char **argv);

const cs_cmd cs_cmd_correlate = {
	"correlate", run_correlate, "correlate a hardware run with a simulator run",
	"usage: cyclescope correlate --hw RUN --sim RUN [--db F]\n"
	"                            [--hw-metric EXPR --sim-metric EXPR | --map F]\n"
	"                            [--hw-window W] [--sim-window W] [--bin-cycles N]\n"
	"                            [--max-lag N] [--hw-clock-mhz MHZ] [--kernels]\n"
	"                            [--json | --csv]\n\n"
	"Puts the two series on one cycle axis (hardware ns x clock, simulator core\n"
	"cycles), integrates them into equal bins from each window's start, searches\n"
	"a lag of up to --max-lag bins, and prints Pearson r, Spearman rho, MAPE and\n"
	"NRMSE of the bins, the total error (sum sim - sum hw) / sum hw, the duration\n"
	"error and the lag; also the same with both windows stretched to one length.\n"
	"--csv prints the aligned bins instead. With --kernels: per-kernel totals of\n"
	"the pair over every kernel matched between the runs (by name, in order), and\n"
	"r, MAPE and the aggregate error across them.\n\n"
	"  EXPR      metric names, numbers, + - * /, ( ), sum(\"GLOB\"), sum_sm(\"NAME\"),\n"
	"            e.g. 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum'\n"
	"  W         T0:T1 (run units), KIND:GLOB#N (kernel:*gemm*#2, nvtx:overlap),\n"
	"            #N (the N-th kernel); default the whole run\n"
	"  --map F   correlate every pair of the map: the NCU name on the hardware\n"
	"            side, the same name (imported with --map) on the simulator side\n"
	"  --bin-cycles N  default: the longer of the two median sample lengths\n",
};

typedef struct pair {
	const char *hw, *sim;
} pair;

static void json_num(cs_buf *b, int *first, const char *k, double v)
{
	cs_json_key(b, first, k);
	cs_json_f64(b, v);
}

static int one_pair(const cs_cmd *cmd, cs_store *s, const pair *pr, const char *hw_run,
		    const char *sim_run, const char *hw_win, const char *sim_win, double clock_hz,
		    double bin, int max_lag, int kernels, int json, int csv, int first_pair)
{
	char err[1024] = "";
	cs_cjob_spec hs = {.run = hw_run, .expr = pr->hw, .window = kernels ? NULL : hw_win,
			   .clock_hz = clock_hz};
	cs_cjob_spec ss = {.run = sim_run, .expr = pr->sim, .window = kernels ? NULL : sim_win};
	cs_cjob_side h, m;
	if (cs_cjob_load(s, &hs, &h, err, sizeof err) < 0)
		return cs_cli_fail(cmd, "hardware side: %s", err);
	if (cs_cjob_load(s, &ss, &m, err, sizeof err) < 0) {
		cs_cjob_side_free(&h);
		return cs_cli_fail(cmd, "simulator side: %s", err);
	}
	int rc = CS_EXIT_OK;
	cs_buf b = {0};
	int first = 1;
	if (kernels) {
		cs_cjob_kernels kh, ks;
		if (cs_cjob_kernel_totals(s, &h, &kh, err, sizeof err) < 0 ||
		    cs_cjob_kernel_totals(s, &m, &ks, err, sizeof err) < 0) {
			rc = cs_cli_fail(cmd, "%s", err);
			goto out;
		}
		size_t cap = kh.n < ks.n ? kh.n : ks.n;
		double *xh = calloc(cap + 1, sizeof *xh), *xs = calloc(cap + 1, sizeof *xs);
		size_t *idx = calloc(cap + 1, sizeof *idx);
		size_t n = xh && xs && idx ? cs_cjob_match(&kh, &ks, xh, xs, idx) : 0;
		cs_corr_kernels k;
		cs_corr_kernel_stats(xh, xs, n, &k);
		if (json) {
			cs_json_raw(&b, first_pair ? "" : ",\n");
			cs_json_raw(&b, "{");
			cs_json_key(&b, &first, "hw_metric");
			cs_json_str(&b, pr->hw);
			cs_json_key(&b, &first, "sim_metric");
			cs_json_str(&b, pr->sim);
			cs_json_key(&b, &first, "kernels");
			cs_json_i64(&b, (int64_t)n);
			json_num(&b, &first, "pearson", k.pearson);
			json_num(&b, &first, "mape_pct", k.mape);
			json_num(&b, &first, "aggregate_error_pct", k.agg_err);
			cs_json_key(&b, &first, "per_kernel");
			cs_json_raw(&b, "[");
			for (size_t i = 0; i < n; i++) {
				int f2 = 1;
				cs_json_raw(&b, i ? ",{" : "{");
				cs_json_key(&b, &f2, "name");
				cs_json_str(&b, ks.names[idx[i]]);
				json_num(&b, &f2, "hw", xh[i]);
				json_num(&b, &f2, "sim", xs[i]);
				cs_json_raw(&b, "}");
			}
			cs_json_raw(&b, "]}");
		} else if (csv) {
			if (first_pair)
				printf("hw_metric,sim_metric,kernel,hw,sim\r\n");
			for (size_t i = 0; i < n; i++)
				printf("\"%s\",\"%s\",\"%s\",%.17g,%.17g\r\n", pr->hw, pr->sim, ks.names[idx[i]],
				       xh[i], xs[i]);
		} else {
			printf("%s  vs  %s: %zu kernels matched (of %zu hw, %zu sim)\n", pr->hw, pr->sim, n,
			       kh.n, ks.n);
			for (size_t i = 0; i < n; i++)
				printf("  %-40.40s hw %-14.6g sim %-14.6g err %+.1f%%\n", ks.names[idx[i]], xh[i],
				       xs[i], xh[i] != 0 ? 100 * (xs[i] - xh[i]) / xh[i] : (double)NAN);
			printf("  pearson r %.4f  MAPE %.2f%% (%zu kernels)  aggregate error %.2f%%\n\n",
			       k.pearson, k.mape, k.mape_n, k.agg_err);
		}
		free(xh), free(xs), free(idx);
		cs_cjob_kernels_free(&kh);
		cs_cjob_kernels_free(&ks);
		goto out;
	}
	double use_bin = bin > 0 ? bin : (h.median_sample > m.median_sample ? h.median_sample
									    : m.median_sample);
	if (!(use_bin > 0))
		use_bin = 1;
	cs_corr_opts o = {.bin = use_bin, .max_lag = max_lag};
	cs_corr_series sh = cs_cjob_series(&h), sm = cs_cjob_series(&m);
	cs_corr_result r;
	if (cs_corr_compare(&sh, h.cycles, &sm, m.cycles, &o, &r) < 0) {
		rc = cs_cli_fail(cmd, "nothing to compare (empty windows?)");
		goto out;
	}
	if (csv) {
		if (first_pair)
			printf("hw_metric,sim_metric,bin,cycle,hw,sim\r\n");
		for (size_t i = 0; i < r.bins; i++)
			printf("\"%s\",\"%s\",%zu,%.17g,%.17g,%.17g\r\n", pr->hw, pr->sim, i,
			       (double)i * use_bin, r.hw_bins[i], r.sim_bins[i]);
	} else if (json) {
		cs_json_raw(&b, first_pair ? "" : ",\n");
		cs_json_raw(&b, "{");
		cs_json_key(&b, &first, "hw_metric");
		cs_json_str(&b, pr->hw);
		cs_json_key(&b, &first, "sim_metric");
		cs_json_str(&b, pr->sim);
		cs_json_key(&b, &first, "hw_window");
		cs_json_str(&b, h.window);
		cs_json_key(&b, &first, "sim_window");
		cs_json_str(&b, m.window);
		json_num(&b, &first, "hw_clock_hz", h.clock_hz);
		json_num(&b, &first, "bin_cycles", use_bin);
		cs_json_key(&b, &first, "bins");
		cs_json_i64(&b, (int64_t)r.bins);
		cs_json_key(&b, &first, "lag_bins");
		cs_json_i64(&b, r.lag);
		json_num(&b, &first, "pearson", r.pearson);
		json_num(&b, &first, "spearman", r.spearman);
		json_num(&b, &first, "mape_pct", r.mape);
		cs_json_key(&b, &first, "mape_bins");
		cs_json_i64(&b, (int64_t)r.mape_bins);
		json_num(&b, &first, "nrmse", r.nrmse);
		json_num(&b, &first, "hw_total", r.hw_total);
		json_num(&b, &first, "sim_total", r.sim_total);
		json_num(&b, &first, "total_error", r.total_err);
		json_num(&b, &first, "hw_cycles", r.hw_cycles);
		json_num(&b, &first, "sim_cycles", r.sim_cycles);
		json_num(&b, &first, "duration_error", r.duration_err);
		json_num(&b, &first, "normalized_pearson", r.norm_pearson);
		json_num(&b, &first, "normalized_mape_pct", r.norm_mape);
		json_num(&b, &first, "normalized_nrmse", r.norm_nrmse);
		cs_json_raw(&b, "}");
	} else {
		printf("hardware  %s: %s over %s (%.0f cycles at %.1f MHz, %zu samples)\n", h.run_name,
		       pr->hw, h.window, h.cycles, h.clock_hz / 1e6, h.n);
		printf("simulator %s: %s over %s (%.0f cycles, %zu samples)\n", m.run_name, pr->sim,
		       m.window, m.cycles, m.n);
		printf("bins: %zu of %.0f cycles, lag %d bins (negative: the simulator is later)\n",
		       r.bins, use_bin, r.lag);
		printf("  pearson r      %8.4f     spearman rho %8.4f\n", r.pearson, r.spearman);
		printf("  MAPE           %8.2f%%    (%zu bins where hardware is not 0)\n", r.mape,
		       r.mape_bins);
		printf("  NRMSE          %8.4f\n", r.nrmse);
		printf("  total error    %+8.2f%%    (sim %.6g vs hw %.6g)\n", 100 * r.total_err,
		       r.sim_total, r.hw_total);
		printf("  duration error %+8.2f%%\n", 100 * r.duration_err);
		printf("  time-normalised (%zu bins): pearson r %.4f, MAPE %.2f%%, NRMSE %.4f\n\n",
		       r.norm_bins, r.norm_pearson, r.norm_mape, r.norm_nrmse);
	}
	cs_corr_result_free(&r);
out:
	if (b.len)
		fwrite(b.data, 1, b.len, stdout);
	cs_buf_free(&b);
	cs_cjob_side_free(&h);
	cs_cjob_side_free(&m);
	return rc;
}

static int run_correlate(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_correlate;
	const char *db = NULL, *hw = NULL, *sim = NULL, *hm = NULL, *sm = NULL, *map = NULL,
		   *hwin = NULL, *swin = NULL, *bin = NULL, *lag = NULL, *mhz = NULL;
	int json = 0, csv = 0, kernels = 0;
	const cs_opt opts[] = {
		{"db", &db, NULL},		{"hw", &hw, NULL},
		{"sim", &sim, NULL},		{"hw-metric", &hm, NULL},
		{"sim-metric", &sm, NULL},	{"map", &map, NULL},
		{"hw-window", &hwin, NULL},	{"sim-window", &swin, NULL},
		{"bin-cycles", &bin, NULL},	{"max-lag", &lag, NULL},
		{"hw-clock-mhz", &mhz, NULL},	{"json", NULL, &json},
		{"csv", NULL, &csv},		{"kernels", NULL, &kernels},
		{NULL, NULL, NULL},
	};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (!hw || !sim)
		return cs_cli_usage_error(cmd, "--hw RUN and --sim RUN are required");
	if (!map && (!hm || !sm))
		return cs_cli_usage_error(cmd, "give --hw-metric and --sim-metric, or --map");
	if (json && csv)
		return cs_cli_usage_error(cmd, "--json and --csv exclude each other");
	uint64_t b = 0, l = 0;
	if (bin && (cs_cli_u64(cmd, "bin-cycles", bin, &b) < 0 || !b))
		return cs_cli_usage_error(cmd, "--bin-cycles must be a positive integer");
	if (lag && cs_cli_u64(cmd, "max-lag", lag, &l) < 0)
		return CS_EXIT_USAGE;
	double clock_hz = 0;
	if (mhz) {
		char *end;
		clock_hz = strtod(mhz, &end) * 1e6;
		if (*end || !(clock_hz > 0))
			return cs_cli_usage_error(cmd, "--hw-clock-mhz: expected a positive number");
	}
	pair single = {hm, sm};
	pair *pairs = &single;
	size_t npairs = 1;
	cs_mmap *mm = NULL;
	char err[1024];
	if (map) {
		cs_cli_input in;
		if (cs_cli_read_file(map, &in, err, sizeof err))
			return cs_cli_fail(cmd, "--map %s", err);
		mm = cs_mmap_parse(in.data ? in.data : "", in.len, map, err, sizeof err);
		cs_cli_free_file(&in);
		if (!mm)
			return cs_cli_fail(cmd, "%s", err);
		npairs = cs_mmap_count(mm);
		pairs = calloc(npairs + 1, sizeof *pairs);
		if (!pairs) {
			cs_mmap_free(mm);
			return cs_cli_fail(cmd, "out of memory");
		}
		for (size_t i = 0; i < npairs; i++)
			pairs[i] = (pair){cs_mmap_target(mm, i), cs_mmap_target(mm, i)};
	}
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s) {
		if (mm)
			free(pairs);
		cs_mmap_free(mm);
		return CS_EXIT_FAIL;
	}
	if (json)
		printf("[");
	int done = 0;
	rc = CS_EXIT_OK;
	for (size_t i = 0; i < npairs; i++) {
		/* With a map, pairs missing on either side are skipped. */
		if (mm) {
			char e1[512];
			cs_cjob_spec t1 = {.run = hw, .expr = pairs[i].hw, .clock_hz = clock_hz};
			cs_cjob_spec t2 = {.run = sim, .expr = pairs[i].sim};
			cs_cjob_side x, y;
			int ok1 = cs_cjob_load(s, &t1, &x, e1, sizeof e1) == 0;
			cs_cjob_side_free(&x);
			int ok2 = ok1 && cs_cjob_load(s, &t2, &y, e1, sizeof e1) == 0;
			if (ok1)
				cs_cjob_side_free(&y);
			if (!ok1 || !ok2) {
				fprintf(stderr, "cyclescope correlate: %s skipped: %s\n", pairs[i].hw, e1);
				continue;
			}
		}
		int r1 = one_pair(cmd, s, &pairs[i], hw, sim, hwin, swin, clock_hz, (double)b, (int)l,
				  kernels, json, csv, !done);
		if (r1 != CS_EXIT_OK)
			rc = r1;
		else
			done++;
		if (r1 != CS_EXIT_OK && !mm)
			break;
	}
	if (json)
		printf("]\n");
	if (mm && !done && rc == CS_EXIT_OK)
		rc = cs_cli_fail(cmd, "no pair of the map is in both runs");
	cs_store_close(s);
	if (mm)
		free(pairs);
	cs_mmap_free(mm);
	return rc;
}
