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
#include "corrs.h"
#include "suite_out.h"

static int run_correlate(int argc, char **argv);

#define SUITE_USAGE                                                                              \
	"\nA whole suite (docs/correlation.md, Suites):\n"                                        \
	"  cyclescope correlate --suite --hw RUNS [--hw RUNS ...] --sim RUNS [--sim RUNS ...]\n"   \
	"        [--sim-config CFG ...] (--metric E | --hw-metric E --sim-metric E) ...\n"        \
	"        [--app-map F] [--hw-clock-mhz MHZ] [--json | --csv | --svg]\n"                  \
	"        [--save [--label TEXT]]\n"                                                       \
	"  RUNS      [LABEL=]ids, names or GLOBs, comma-separated, or job:LABEL (the runs\n"    \
	"            of a job, also --hw-job LABEL, --sim-job LABEL); each --hw is one\n"    \
	"            repeat of the hardware suite (repeats\n"                                \
	"            give error bars), each --sim one simulator configuration\n"             \
	"  --sim-config CFG  a configuration inside the simulator runs (get_stats.py -C\n"   \
	"            A,B imports CFG:stat metrics): each --sim once per CFG\n"              \
	"  --metric E  the same expression on both sides; pairs of --hw-metric and\n"      \
	"            --sim-metric in order; --map F: every pair of a metric map\n"         \
	"  --app-map F  lines HW_APP,SIM_APP pairing applications by hand\n"               \
	"  --save    keep the answer in the database (--label: e.g. the simulator's\n"     \
	"            commit); 'cyclescope correlations' lists them and draws the trend\n"  \
	"Applications pair by name (the run's, or the imported application), kernels by\n"  \
	"name and launch order within an application; unpaired ones are listed.\n"

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
	"            clock (docs/correlation.md)\n"
	SUITE_USAGE,
};

/* What correlate and report share: the options and the request. */
typedef struct corr_cli {
	const char *db, *out;
	int json; /* report: what was written as JSON */
	cs_corr_request rq;
	cs_mmap *map;
} corr_cli;

/* report: 1 for `report` (-o FILE, --json), 2 for `plot --compare` (-o
 * FILE, --kernels), 0 for `correlate`. */
static int corr_args(const cs_cmd *cmd, int argc, char **argv, int report, corr_cli *c)
{
	const char *hw = NULL, *sim = NULL, *hm = NULL, *sm = NULL, *map = NULL, *hwin = NULL,
		   *swin = NULL, *bin = NULL, *lag = NULL, *mhz = NULL, *sclock = NULL;
	int json = 0, csv = 0, kernels = 0, compare = 0;
	memset(c, 0, sizeof *c);
	/* the last three by command: correlate --json, --csv, --kernels;
	 * report --json, -o; plot --compare, -o, --kernels */
	const cs_opt all[] = {
		{"db", &c->db, NULL},		{"hw", &hw, NULL},
		{"sim", &sim, NULL},		{"hw-metric", &hm, NULL},
		{"sim-metric", &sm, NULL},	{"map", &map, NULL},
		{"hw-window", &hwin, NULL},	{"sim-window", &swin, NULL},
		{"bin-cycles", &bin, NULL},	{"max-lag", &lag, NULL},
		{"hw-clock-mhz", &mhz, NULL},	{"sim-clock", &sclock, NULL},
		{report == 2 ? "compare" : "json", NULL, report == 2 ? &compare : &json},
		{report ? "output" : "csv", report ? &c->out : NULL, report ? NULL : &csv},
		{report == 1 ? NULL : "kernels", NULL, &kernels},
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
	if (report == 1 && !c->out)
		return cs_cli_usage_error(cmd, "-o FILE is required");
	c->json = report == 1 && json;
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
		.format = report == 2 ? CS_CORR_SVG : json ? CS_CORR_JSON : csv ? CS_CORR_CSV : CS_CORR_TEXT,
	};
	return 0;
}

/* report (mode 1: the HTML page) and plot --compare (mode 2: the SVG
 * figure): correlate's options, one file written. */
static int corr_to_file(const cs_cmd *cmd, int argc, char **argv, int mode)
{
	corr_cli c;
	int rc = corr_args(cmd, argc, argv, mode, &c);
	if (rc)
		return CS_CLI_EXIT(rc);
	char err[1024];
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(c.db), CS_CLI_READ);
	cs_buf out = {0};
	rc = !s ? -EIO
	     : mode == 1 ? cs_report_html(s, &c.rq, &out, err, sizeof err)
			 : cs_corr_out(s, &c.rq, &out, err, sizeof err);
	if (s && rc < 0)
		rc = cs_cli_fail(cmd, "%s", err);
	else if (!s)
		rc = CS_EXIT_FAIL;
	else
		rc = cs_cli_write(cmd, c.out, out.data, out.len, 1, c.json);
	cs_buf_free(&out);
	cs_store_close(s);
	cs_mmap_free(c.map);
	return rc;
}

int cs_cmd_compare_plot(const cs_cmd *cmd, int argc, char **argv)
{
	return corr_to_file(cmd, argc, argv, 2);
}

static int run_correlate(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_correlate;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--suite"))
			return cs_cmd_suite(cmd, argc, argv, CS_SUITE_CMD_CORRELATE);
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
	"to standard error; with --json, {\"file\":...,\"bytes\":N} to standard output.\n"
	"With --suite (the options of 'correlate --suite'): the suite's scatter figure,\n"
	"statistics, worst kernels and unpaired ones as one HTML page, or the figure\n"
	"alone when FILE ends in .svg.\n",
};

static int run_report(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_report;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--suite"))
			return cs_cmd_suite(cmd, argc, argv, CS_SUITE_CMD_REPORT);
	return corr_to_file(cmd, argc, argv, 1);
}

/* ---- suites ---- */

#define SUITE_MAX 64 /* groups, configurations, statistics */

typedef struct suite_cli {
	const char *hw[SUITE_MAX], *sim[SUITE_MAX], *cfg[SUITE_MAX];
	const char *hm[SUITE_MAX], *sm[SUITE_MAX], *both[SUITE_MAX];
	const char *hjob[SUITE_MAX], *sjob[SUITE_MAX];
	size_t nhw, nsim, ncfg, nhm, nsm, nboth, nhjob, nsjob;
	char jobtext[2 * SUITE_MAX][160]; /* --hw-job L as "job:L" */
	const char *db, *map, *app_map, *mhz, *out, *label;
	int json, csv, svg, save;
} suite_cli;

static int suite_parse(const cs_cmd *cmd, int argc, char **argv, int mode, suite_cli *c)
{
	int report = mode != CS_SUITE_CMD_CORRELATE; /* -o FILE, not --csv/--svg */
	struct { const char *name; const char **one; const char **many; size_t *n; int *flag; } o[] = {
		{"db", &c->db, NULL, NULL, NULL},
		{"hw", NULL, c->hw, &c->nhw, NULL},
		{"sim", NULL, c->sim, &c->nsim, NULL},
		{"sim-config", NULL, c->cfg, &c->ncfg, NULL},
		{"hw-job", NULL, c->hjob, &c->nhjob, NULL},
		{"sim-job", NULL, c->sjob, &c->nsjob, NULL},
		{"hw-metric", NULL, c->hm, &c->nhm, NULL},
		{"sim-metric", NULL, c->sm, &c->nsm, NULL},
		{"metric", NULL, c->both, &c->nboth, NULL},
		{"map", &c->map, NULL, NULL, NULL},
		{"app-map", &c->app_map, NULL, NULL, NULL},
		{"hw-clock-mhz", &c->mhz, NULL, NULL, NULL},
		{"save", NULL, NULL, NULL, &c->save},
		{"label", &c->label, NULL, NULL, NULL},
		{"json", NULL, NULL, NULL, &c->json},
		{report ? "output" : "csv", report ? &c->out : NULL, NULL, NULL, report ? NULL : &c->csv},
		{report ? "-" : "svg", NULL, NULL, NULL, &c->svg},
		{"suite", NULL, NULL, NULL, NULL},
	};
	memset(c, 0, sizeof *c);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(cmd->usage, stdout);
			return CS_CLI_HELP;
		}
		if (!strcmp(a, "-o"))
			a = "--output";
		if (strncmp(a, "--", 2))
			return cs_cli_usage_error(cmd, "unexpected argument '%s'", a);
		a += 2;
		size_t len = strcspn(a, "=");
		if (a[len] == '=')
			val = a + len + 1;
		size_t k = 0;
		while (k < sizeof o / sizeof *o && (strlen(o[k].name) != len || strncmp(o[k].name, a, len)))
			k++;
		if (k == sizeof o / sizeof *o)
			return cs_cli_usage_error(cmd, "unknown option --%.*s", (int)len, a);
		if (!o[k].one && !o[k].many) {
			if (val)
				return cs_cli_usage_error(cmd, "--%s takes no value", o[k].name);
			if (o[k].flag)
				*o[k].flag = 1;
			continue;
		}
		if (!val && i + 1 >= argc)
			return cs_cli_usage_error(cmd, "--%s needs a value", o[k].name);
		if (!val)
			val = argv[++i];
		if (o[k].one) {
			*o[k].one = val;
		} else {
			if (*o[k].n == SUITE_MAX)
				return cs_cli_usage_error(cmd, "--%s: at most %d", o[k].name, SUITE_MAX);
			o[k].many[(*o[k].n)++] = val;
		}
	}
	/* --hw-job L and --sim-job L: the sides job:L, after the others */
	for (size_t i = 0; i < c->nhjob + c->nsjob; i++) {
		int hw = i < c->nhjob;
		const char *l = hw ? c->hjob[i] : c->sjob[i - c->nhjob];
		size_t *n = hw ? &c->nhw : &c->nsim;
		if (*n == SUITE_MAX)
			return cs_cli_usage_error(cmd, "--%s: at most %d", hw ? "hw" : "sim", SUITE_MAX);
		snprintf(c->jobtext[i], sizeof c->jobtext[i], "job:%s", l);
		(hw ? c->hw : c->sim)[(*n)++] = c->jobtext[i];
	}
	if (!c->nhw || !c->nsim)
		return cs_cli_usage_error(cmd, "--suite needs --hw RUNS (or --hw-job L) and --sim RUNS "
					  "(or --sim-job L)");
	if (c->nhm != c->nsm)
		return cs_cli_usage_error(cmd, "give --hw-metric and --sim-metric in pairs (%zu and %zu "
					  "given)", c->nhm, c->nsm);
	if (!c->nhm && !c->nboth && !c->map)
		return cs_cli_usage_error(cmd, "give --metric E, --hw-metric E --sim-metric E, or --map F");
	if (c->json + c->csv + c->svg > 1)
		return cs_cli_usage_error(cmd, "--json, --csv and --svg exclude each other");
	if (c->label && !c->save)
		return cs_cli_usage_error(cmd, "--label names what --save keeps: give --save too");
	if (mode == CS_SUITE_CMD_REPORT && !c->out)
		return cs_cli_usage_error(cmd, "-o FILE is required");
	if (c->nsim * (c->ncfg ? c->ncfg : 1) > SUITE_MAX)
		return cs_cli_usage_error(cmd, "at most %d configurations", SUITE_MAX);
	return 0;
}

/* --save: the JSON answer into the correlations table, with the command
 * line (each argument shell-quoted where it needs it) and the label;
 * "saved correlation N" on stderr. */
static int save(const cs_cmd *cmd, cs_store *s, const char *label, int argc, char **argv,
		cs_buf *json, char *err, size_t errlen)
{
	cs_buf line = {0};
	cs_buf_printf(&line, "cyclescope %s", cmd->name);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!*a || a[strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,@%+-")]) {
			cs_buf_printf(&line, " '");
			for (const char *q = a; *q; q++)
				cs_buf_printf(&line, *q == '\'' ? "'\\''" : "%c", *q);
			cs_buf_printf(&line, "'");
		} else {
			cs_buf_printf(&line, " %s", a);
		}
	}
	int64_t id = 0;
	int rc = cs_buf_append(&line, "", 1) < 0 || cs_buf_append(json, "", 1) < 0 ? -ENOMEM : 0;
	if (rc == 0)
		rc = cs_corrs_save(s, label, (const char *)line.data, (const char *)json->data, &id);
	if (rc < 0)
		snprintf(err, errlen, "saving: %s", rc == -ENOMEM ? "out of memory" : cs_store_errmsg(s));
	else
		fprintf(stderr, "saved correlation %lld%s%s\n", (long long)id, label ? ": " : "",
			label ? label : "");
	cs_buf_free(&line);
	return rc;
}

int cs_cmd_suite(const cs_cmd *cmd, int argc, char **argv, int mode)
{
	suite_cli c;
	int rc = suite_parse(cmd, argc, argv, mode, &c);
	int report = mode != CS_SUITE_CMD_CORRELATE;
	if (rc)
		return CS_CLI_EXIT(rc);
	cs_suite_group hw[SUITE_MAX], sim[SUITE_MAX];
	cs_suite_stat stats[SUITE_MAX * 2];
	char hl[SUITE_MAX][256], sl[SUITE_MAX][256];
	size_t nsim = 0, nst = 0;
	for (size_t g = 0; g < c.nhw; g++)
		cs_suite_group_parse(c.hw[g], NULL, &hw[g], hl[g], sizeof hl[g]);
	for (size_t g = 0; g < c.nsim; g++)
		for (size_t k = 0; k < (c.ncfg ? c.ncfg : 1); k++, nsim++)
			cs_suite_group_parse(c.sim[g], c.ncfg ? c.cfg[k] : NULL, &sim[nsim], sl[nsim], sizeof sl[nsim]);
	for (size_t i = 0; i < c.nboth; i++)
		stats[nst++] = (cs_suite_stat){c.both[i], c.both[i]};
	for (size_t i = 0; i < c.nhm; i++)
		stats[nst++] = (cs_suite_stat){c.hm[i], c.sm[i]};
	char err[1024];
	cs_mmap *map = NULL;
	cs_cli_input amap = {0};
	double hz = 0;
	if (c.mhz) {
		char *end;
		hz = strtod(c.mhz, &end) * 1e6;
		if (*end || !(hz > 0))
			return cs_cli_usage_error(cmd, "--hw-clock-mhz: expected a positive number");
	}
	if (c.map) {
		cs_cli_input in;
		if (cs_cli_read_file(c.map, &in, err, sizeof err))
			return cs_cli_fail(cmd, "--map %s", err);
		map = cs_mmap_parse(in.data ? in.data : "", in.len, c.map, err, sizeof err);
		cs_cli_free_file(&in);
		if (!map)
			return cs_cli_fail(cmd, "%s", err);
		size_t pairs = cs_mmap_count(map);
		if (nst + pairs > sizeof stats / sizeof *stats) {
			cs_mmap_free(map);
			return cs_cli_usage_error(cmd, "--map %s: %zu pairs, with the others over %zu statistics",
						  c.map, pairs, sizeof stats / sizeof *stats);
		}
		for (size_t i = 0; i < cs_mmap_count(map); i++)
			stats[nst++] = (cs_suite_stat){cs_mmap_target(map, i), cs_mmap_target(map, i)};
	}
	if (c.app_map && cs_cli_read_file(c.app_map, &amap, err, sizeof err)) {
		cs_mmap_free(map);
		return cs_cli_fail(cmd, "--app-map %s", err);
	}
	cs_suite_spec sp = {.hw = hw, .nhw = c.nhw, .sim = sim, .nsim = nsim, .stats = stats,
			    .nstats = nst, .app_map = amap.data, .app_map_len = amap.len,
			    .app_map_label = c.app_map, .hw_clock_hz = hz};
	int format = mode == CS_SUITE_CMD_PLOT ? CS_SUITE_SVG
		   : report ? (strlen(c.out) > 4 && !strcmp(c.out + strlen(c.out) - 4, ".svg")
				       ? CS_SUITE_SVG : CS_SUITE_HTML)
		   : c.json ? CS_SUITE_JSON : c.csv ? CS_SUITE_CSV : c.svg ? CS_SUITE_SVG
		   : CS_SUITE_TEXT;
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(c.db), c.save ? CS_CLI_WRITE : CS_CLI_READ);
	cs_buf out = {0}, notes = {0}, saved = {0};
	rc = s ? cs_suite_out(s, &sp, format, &out, &notes, c.save ? &saved : NULL, err, sizeof err)
	       : -EIO;
	if (rc == 0 && c.save)
		rc = save(cmd, s, c.label, argc, argv, &saved, err, sizeof err);
	for (size_t at = 0; at < notes.len;) { /* a line each, named */
		const char *l = (const char *)notes.data + at;
		size_t n = strcspn(l, "\n");
		fprintf(stderr, "cyclescope %s: %.*s\n", cmd->name, (int)n, l);
		at += n + 1;
	}
	if (!s) {
		rc = CS_EXIT_FAIL;
	} else if (rc < 0) {
		rc = cs_cli_fail(cmd, "%s", err);
	} else {
		/* report says what it wrote; plot, like plot, does not */
		rc = cs_cli_write(cmd, report ? c.out : NULL, out.data, out.len,
				  mode == CS_SUITE_CMD_REPORT, c.json);
	}
	cs_buf_free(&out);
	cs_buf_free(&notes);
	cs_buf_free(&saved);
	cs_store_close(s);
	cs_cli_free_file(&amap);
	cs_mmap_free(map);
	return rc;
}
