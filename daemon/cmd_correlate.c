/*
 * cmd_correlate.c - `cyclescope correlate`: a hardware run against a
 * simulator run, binned on one cycle axis (correlate.h, corr_job.h), or
 * kernel by kernel. docs/correlation.md has the method.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmds.h"
#include "corr_out.h"
#include "report.h"
#include "metric_map.h"

static int run_correlate(int argc, char **argv);

const cs_cmd cs_cmd_correlate = {
	"correlate", run_correlate, "correlate a hardware run with a simulator run",
	"usage: cyclescope correlate --hw RUN --sim RUN [--db F]\n"
	"                            [--hw-metric EXPR --sim-metric EXPR | --map F]\n"
	"                            [--hw-window W] [--sim-window W] [--bin-cycles N]\n"
	"                            [--max-lag N] [--hw-clock-mhz MHZ] [--sim-clock C]\n"
	"                            [--kernels] [--json | --csv]\n\n"
	"Puts the two series on one cycle axis (hardware ns through the run's own\n"
	"cycles-elapsed counter, e.g. gpc__cycles_elapsed.max, else its clock;\n"
	"simulator core cycles), integrates them into equal bins from each window's\n"
	"start, searches a lag of up to --max-lag bins, and prints Pearson r,\n"
	"Spearman rho, MAPE and NRMSE of the bins, the total error (sum sim - sum hw)\n"
	"/ sum hw, the duration error and the lag; also the same with both windows\n"
	"stretched to one length.\n"
	"--csv prints the aligned bins instead. With --kernels: per-kernel totals of\n"
	"the pair over every kernel matched between the runs (by uid, name, demangled\n"
	"name, then position, saying which), and r, MAPE and the aggregate error\n"
	"across them; kernels that ran beside others are 'shared' and left out.\n"
	"Warnings say when the statistics mean little (under 8 bins, ...).\n\n"
	"  EXPR      metric names, numbers, + - * /, ( ), sum(\"GLOB\"), sum_sm(\"NAME\"),\n"
	"            rate(E) (per cycle; then on both sides), delta(E) (cumulative ->\n"
	"            per sample), e.g. 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum'\n"
	"  --sim-clock C  the simulator's clock, MHz or a domain of its run (core, l2,\n"
	"            icnt, dram): its cycles are rescaled onto the hardware's clock\n"
	"  W         T0:T1 (run units), KIND:GLOB#N (kernel:*gemm*#2, nvtx:overlap),\n"
	"            #N (the N-th kernel); default the whole run\n"
	"  --map F   correlate every pair of the map: the NCU name on the hardware\n"
	"            side, the same name (imported with --map) on the simulator side\n"
	"  --bin-cycles N  default: the longer of the two median sample lengths\n"
	"  --hw-clock-mhz MHZ  the hardware's clock, over its counter and its run\n"
	"            clock (docs/correlation.md)\n",
};

/* What correlate and report share: the options and the request. */
typedef struct corr_cli {
	const char *db, *out;
	int json; /* report: what was written as JSON */
	cs_corr_request rq;
	cs_mmap *map;
} corr_cli;

static int corr_args(const cs_cmd *cmd, int argc, char **argv, int report, corr_cli *c)
{
	const char *hw = NULL, *sim = NULL, *hm = NULL, *sm = NULL, *map = NULL, *hwin = NULL,
		   *swin = NULL, *bin = NULL, *lag = NULL, *mhz = NULL, *sclock = NULL;
	int json = 0, csv = 0, kernels = 0;
	memset(c, 0, sizeof *c);
	const cs_opt all[] = {
		{"db", &c->db, NULL},		{"hw", &hw, NULL},
		{"sim", &sim, NULL},		{"hw-metric", &hm, NULL},
		{"sim-metric", &sm, NULL},	{"map", &map, NULL},
		{"hw-window", &hwin, NULL},	{"sim-window", &swin, NULL},
		{"bin-cycles", &bin, NULL},	{"max-lag", &lag, NULL},
		{"hw-clock-mhz", &mhz, NULL},	{"sim-clock", &sclock, NULL},
		{"json", NULL, &json},
		{report ? "output" : "csv", report ? &c->out : NULL, report ? NULL : &csv},
		{report ? NULL : "kernels", NULL, &kernels},
		{NULL, NULL, NULL},
	};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, all, pos, 0, &npos);
	if (rc)
		return rc; /* CS_CLI_HELP too: the caller must stop, not go on */
	if (!hw || !sim)
		return cs_cli_usage_error(cmd, "--hw RUN and --sim RUN are required");
	if (!map && (!hm || !sm))
		return cs_cli_usage_error(cmd, "give --hw-metric and --sim-metric, or --map");
	if (json && csv)
		return cs_cli_usage_error(cmd, "--json and --csv exclude each other");
	if (report && !c->out)
		return cs_cli_usage_error(cmd, "-o FILE is required");
	c->json = report && json;
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
	if (map) {
		char err[1024];
		cs_cli_input in;
		if (cs_cli_read_file(map, &in, err, sizeof err))
			return cs_cli_fail(cmd, "--map %s", err);
		c->map = cs_mmap_parse(in.data ? in.data : "", in.len, map, err, sizeof err);
		cs_cli_free_file(&in);
		if (!c->map)
			return cs_cli_fail(cmd, "%s", err);
	}
	c->rq = (cs_corr_request){
		.hw = hw, .sim = sim, .hw_metric = hm, .sim_metric = sm, .map = c->map,
		.hw_window = hwin, .sim_window = swin, .hw_clock_hz = clock_hz,
		.sim_clock = sclock, .bin_cycles = (double)b, .max_lag = (int)l, .kernels = kernels,
		.format = json ? CS_CORR_JSON : csv ? CS_CORR_CSV : CS_CORR_TEXT,
	};
	return 0;
}

static int run_correlate(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_correlate;
	corr_cli c;
	int rc = corr_args(cmd, argc, argv, 0, &c);
	if (rc)
		return CS_CLI_EXIT(rc);
	char err[1024];
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(c.db), CS_CLI_READ);
	if (!s) {
		cs_mmap_free(c.map);
		return CS_EXIT_FAIL;
	}
	cs_buf out = {0};
	rc = cs_corr_out(s, &c.rq, &out, err, sizeof err);
	if (rc == 0)
		fwrite(out.data, 1, out.len, stdout);
	cs_buf_free(&out);
	cs_store_close(s);
	cs_mmap_free(c.map);
	return rc == 0 ? CS_EXIT_OK : cs_cli_fail(cmd, "%s", err);
}

static int run_report(int argc, char **argv);

const cs_cmd cs_cmd_report = {
	"report", run_report, "write the side-by-side HTML report of a correlation",
	"usage: cyclescope report --hw RUN --sim RUN -o report.html [--db F]\n"
	"                         [--hw-metric EXPR --sim-metric EXPR | --map F]\n"
	"                         [--hw-window W] [--sim-window W] [--bin-cycles N]\n"
	"                         [--max-lag N] [--hw-clock-mhz MHZ] [--sim-clock C]\n"
	"                         [--json]\n\n"
	"The options of 'cyclescope correlate'. Writes one self-contained HTML page\n"
	"(it opens offline from disk): per metric pair the two series overlaid on one\n"
	"cycle axis with their difference and the simulator's kernels shaded, the\n"
	"statistics table, and, when both runs have kernels, the kernel-level\n"
	"scatter (log axes, y = x) with r and MAPE. Needs uPlot in the build tree\n"
	"(make web-assets, part of make when npm is there). 'wrote FILE (N bytes)' goes\n"
	"to standard error; with --json, {\"file\":...,\"bytes\":N} to standard output.\n",
};

static int run_report(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_report;
	corr_cli c;
	int rc = corr_args(cmd, argc, argv, 1, &c);
	if (rc)
		return CS_CLI_EXIT(rc);
	char err[1024];
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(c.db), CS_CLI_READ);
	cs_buf out = {0};
	rc = s ? cs_report_html(s, &c.rq, &out, err, sizeof err) : -EIO;
	if (s && rc < 0)
		rc = cs_cli_fail(cmd, "%s", err);
	else if (!s)
		rc = CS_EXIT_FAIL;
	else {
		FILE *f = fopen(c.out, "wb");
		if (!f || fwrite(out.data, 1, out.len, f) != out.len) {
			rc = cs_cli_fail(cmd, "%s: %s", c.out, strerror(errno));
		} else {
			cs_cli_wrote(c.out, out.len, NULL, -1, c.json);
			rc = CS_EXIT_OK;
		}
		if (f && fclose(f) != 0 && rc == CS_EXIT_OK)
			rc = cs_cli_fail(cmd, "%s: %s", c.out, strerror(errno));
	}
	cs_buf_free(&out);
	cs_store_close(s);
	cs_mmap_free(c.map);
	return rc;
}
