/*
 * cmd_plot.c - `cyclescope plot RUN`: a run's figure as an SVG file,
 * drawn by web/plot.c without a browser, the same drawing the UI's SVG
 * button saves and GET /api/v1/runs/{run}/plot.svg serves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "jobfig.h"
#include "jobphases.h"
#include "plot.h"
#include "text.h"

static int run_plot(int argc, char **argv);

const cs_cmd cs_cmd_plot = {
	"plot", run_plot, "draw a run's metrics and ranges as an SVG figure",
	"usage: cyclescope plot RUN [--db F] [--metric LIST] [--expr E] [--from T]\n"
	"                       [--to T] [--device N] [--rate sample|second|cycle]\n"
	"                       [--ranges KINDS|all|none] [--buckets N] [--width PX]\n"
	"                       [--a [KIND:]GLOB --b [KIND:]GLOB] [-o FILE]\n"
	"       cyclescope plot --job J --a [KIND:]GLOB --b [KIND:]GLOB\n"
	"                       [--align collectives] [--instances N] [--from T --to T]\n"
	"       cyclescope plot --suite --hw RUNS --sim RUNS ... [-o FILE]\n"
	"       cyclescope plot --compare --hw RUN --sim RUN --hw-metric E --sim-metric E\n"
	"                       [correlate's options] [--kernels] [-o FILE]\n\n"
	"Draws RUN (an id, name or uuid) as a standalone SVG figure for a paper: one\n"
	"panel per metric or expression on a shared time axis (relative to the run\n"
	"start, with its unit), bucket means held over their buckets with the\n"
	"min-max band, or every sample over its own interval when few are in view\n"
	"(whole kernels stay whole), the run's ranges in lanes underneath (kernels\n"
	"one lane per stream, coloured by name), a legend and a caption saying what\n"
	"it shows. The same figure as the UI's SVG button (docs/ui.md).\n\n"
	"Options:\n"
	"  --metric LIST  comma-separated metric names (default: the run's metric\n"
	"                 set, else the two that vary most)\n"
	"  --expr E       metric expressions, ';'-separated (export's --expr)\n"
	"  --from, --to   the window, from the run's start, in its unit or with one\n"
	"                 (4ms, 200us, 30000cyc); @T a stored time (default: the\n"
	"                 whole run)\n"
	"  --device N     the device whose samples are drawn (default: the run's\n"
	"                 first)\n"
	"  --rate R       counters per sample as stored (default), per second or per\n"
	"                 cycle of each sample's own length\n"
	"  --ranges K     the range kinds drawn, comma-separated (kernel,nvtx), 'all'\n"
	"                 (default) or 'none'\n"
	"  --buckets N    buckets across the window (2..10000, default 1000)\n"
	"  --width PX     figure width (320..4000, default 960)\n"
	"  --a G --b G    shade the overlap phases of A and B ([KIND:]GLOB, as\n"
	"                 'phases') behind every panel\n"
	"  -o FILE        write FILE instead of standard output\n\n"
	"With --job: the job's ranks stacked on one time axis (docs/phases.md):\n"
	"B grey, A hidden behind B blue, A exposed orange, each instance's straggler\n"
	"red, the start skew of every instance above; the first --instances N\n"
	"collectives (default 20), or --from/--to from the job's start (ns, or with\n"
	"a unit: 1.5ms; @T an absolute time).\n\n"
	"With --suite (the options of 'correlate --suite'): the suite's scatter of\n"
	"simulated against measured values, one panel per statistic (docs/correlation.md).\n\n"
	"With --compare: the hardware and the simulator run on one cycle axis as\n"
	"'correlate' aligns them (clock, scale, lag): both binned series, their\n"
	"difference, and both runs' kernels in lanes with each matched pair linked,\n"
	"coloured by its error; with --kernels the per-kernel scatter instead. The\n"
	"figure the report and the UI's compare page show.\n",
};

/* Writes out (freed) to outfile or standard output. */
static int write_svg(const cs_cmd *cmd, const char *outfile, cs_buf *out)
{
	int rc = cs_cli_write(cmd, outfile, out->data, out->len, 0, 0);
	cs_buf_free(out);
	return rc;
}

/* A job's --from/--to (cs_time_ns): 0, or -1 having said what is wrong. */
static int cli_ns(const cs_cmd *cmd, const char *opt, const char *text, uint64_t *ns, int *abs)
{
	char err[600];
	if (cs_time_ns(text, ns, abs, err, sizeof err) == 0)
		return 0;
	cs_cli_usage_error(cmd, "--%s: %s", opt, err);
	return -1;
}

static int plot_job(const cs_cmd *cmd, const char *db, const char *job, const char *a,
		    const char *b, const char *align, const char *instances, const char *from,
		    const char *to, const char *outfile)
{
	if (!a || !b)
		return cs_cli_usage_error(cmd, "--job needs --a GLOB and --b GLOB");
	if (align && strcmp(align, "collectives") && strcmp(align, "none"))
		return cs_cli_usage_error(cmd, "--align: expected collectives or none");
	if (!from != !to)
		return cs_cli_usage_error(cmd, "--from and --to go together");
	cs_jobfig_request rq = {.job = job, .a = a, .b = b, .have_window = from != NULL,
				.align = align && !strcmp(align, "collectives")
						 ? CS_JOB_ALIGN_COLLECTIVES : CS_JOB_ALIGN_NONE};
	uint64_t n = 0;
	if ((instances && cs_cli_u64(cmd, "instances", instances, &n)) ||
	    (from && cli_ns(cmd, "from", from, &rq.from, &rq.from_abs)) ||
	    (to && cli_ns(cmd, "to", to, &rq.to, &rq.to_abs)))
		return CS_EXIT_USAGE;
	if (instances && (n < 1 || n > 100000))
		return cs_cli_usage_error(cmd, "--instances must be 1..100000");
	if (from && rq.from_abs == rq.to_abs && rq.to <= rq.from)
		return cs_cli_usage_error(cmd, "--to must be after --from");
	rq.max_instances = (size_t)n;
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	cs_buf out = CS_BUF_INIT;
	char err[1200] = "";
	int rc = cs_jobfig_svg(s, &rq, &out, err, sizeof err);
	cs_store_close(s);
	if (rc < 0) {
		cs_buf_free(&out);
		return cs_cli_fail(cmd, "%s", err);
	}
	return write_svg(cmd, outfile, &out);
}

static int run_plot(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_plot;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--suite"))
			return cs_cmd_suite(cmd, argc, argv, CS_SUITE_CMD_PLOT);
		else if (!strcmp(argv[i], "--compare"))
			return cs_cmd_compare_plot(cmd, argc, argv);
	const char *db = NULL, *metric = NULL, *expr = NULL, *from = NULL, *to = NULL,
		   *device = NULL, *rate = NULL, *ranges = NULL, *buckets = NULL, *width = NULL,
		   *outfile = NULL, *job = NULL, *a = NULL, *b = NULL, *align = NULL,
		   *instances = NULL;
	const cs_opt opts[] = {
		{"db", &db, NULL},	     {"metric", &metric, NULL},   {"expr", &expr, NULL},
		{"from", &from, NULL},	     {"to", &to, NULL},		  {"device", &device, NULL},
		{"rate", &rate, NULL},	     {"ranges", &ranges, NULL},	  {"buckets", &buckets, NULL},
		{"width", &width, NULL},     {"output", &outfile, NULL},  {"job", &job, NULL},
		{"a", &a, NULL},	     {"b", &b, NULL},		  {"align", &align, NULL},
		{"instances", &instances, NULL}, {NULL, NULL, NULL},
	};
	const char *pos[1] = {NULL};
	int npos = 0;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 1, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (job)
		return npos ? cs_cli_usage_error(cmd, "give RUN or --job J, not both")
			    : plot_job(cmd, db, job, a, b, align, instances, from, to, outfile);
	if (npos != 1)
		return cs_cli_usage_error(cmd, "expected a RUN (id, name or uuid), or --job J");
	cs_plot_req rq = {.run = pos[0], .metrics = metric, .exprs = expr, .rate = rate,
			  .ranges = ranges, .a = a, .b = b};
	if (!a != !b)
		return cs_cli_usage_error(cmd, "--a and --b go together (the overlap phases shaded)");
	uint64_t dev = 0, nb = 0, w = 0;
	if ((device && cs_cli_u64(cmd, "device", device, &dev)) ||
	    (buckets && cs_cli_u64(cmd, "buckets", buckets, &nb)) ||
	    (width && cs_cli_u64(cmd, "width", width, &w)))
		return CS_EXIT_USAGE;
	if (buckets && (nb < 2 || nb > 10000))
		return cs_cli_usage_error(cmd, "--buckets must be 2..10000");
	if (width && (w < 320 || w > 4000))
		return cs_cli_usage_error(cmd, "--width must be 320..4000");
	if (dev > UINT32_MAX)
		return cs_cli_usage_error(cmd, "--device is out of range");
	rq.have_device = device != NULL;
	rq.device = (uint32_t)dev;
	rq.have_from = from != NULL;
	rq.have_to = to != NULL;
	rq.buckets = (uint32_t)nb;
	rq.width = (double)w;
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	if (cs_cli_window(cmd, s, rq.run, from, to, &rq.from, &rq.to)) {
		cs_store_close(s);
		return CS_EXIT_USAGE;
	}
	cs_buf out = CS_BUF_INIT;
	char err[1200];
	int status = 0;
	rc = cs_plot_svg(s, &rq, &out, &status, err, sizeof err);
	cs_store_close(s);
	if (rc < 0) {
		cs_buf_free(&out);
		return cs_cli_fail(cmd, "%s", err); /* as export: 1, naming what is wrong */
	}
	return write_svg(cmd, outfile, &out);
}
