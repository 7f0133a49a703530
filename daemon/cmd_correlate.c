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
#include "corr_out.h"
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
	char err[1024];
	cs_mmap *mm = NULL;
	if (map) {
		cs_cli_input in;
		if (cs_cli_read_file(map, &in, err, sizeof err))
			return cs_cli_fail(cmd, "--map %s", err);
		mm = cs_mmap_parse(in.data ? in.data : "", in.len, map, err, sizeof err);
		cs_cli_free_file(&in);
		if (!mm)
			return cs_cli_fail(cmd, "%s", err);
	}
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s) {
		cs_mmap_free(mm);
		return CS_EXIT_FAIL;
	}
	cs_corr_request rq = {
		.hw = hw, .sim = sim, .hw_metric = hm, .sim_metric = sm, .map = mm,
		.hw_window = hwin, .sim_window = swin, .hw_clock_hz = clock_hz,
		.bin_cycles = (double)b, .max_lag = (int)l, .kernels = kernels,
		.format = json ? CS_CORR_JSON : csv ? CS_CORR_CSV : CS_CORR_TEXT,
	};
	cs_buf out = {0};
	rc = cs_corr_out(s, &rq, &out, err, sizeof err);
	if (rc == 0)
		fwrite(out.data, 1, out.len, stdout);
	cs_buf_free(&out);
	cs_store_close(s);
	cs_mmap_free(mm);
	return rc == 0 ? CS_EXIT_OK : cs_cli_fail(cmd, "%s", err);
}
