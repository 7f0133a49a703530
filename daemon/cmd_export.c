/*
 * cmd_export.c - `cyclescope export RUN`: a run's series as wide CSV on
 * stdout, raw or bucketed. The raw form is what `import csv` reads, so
 * export -> import round-trips exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "series_csv.h"
#include "trace.h"

static int run_export(int argc, char **argv);

const cs_cmd cs_cmd_export = {
	"export", run_export, "write a run's series as CSV (raw or bucketed)",
	"usage: cyclescope export RUN [--db F] [--metric LIST] [--expr E] [--device N]\n"
	"                         [--from T] [--to T] [--buckets N] [--range NAME]\n"
	"                         [--format csv|perfetto] [-o FILE] [--raw] [--json]\n\n"
	"Writes RUN (an id, name or uuid) to standard output as RFC 4180 CSV:\n"
	"  t0,t1,<metric>,...          one row per sample, metrics as columns;\n"
	"                              an empty field is an absent value\n"
	"A device column comes first when any exported device is not device 0.\n\n"
	"Options:\n"
	"  --metric LIST  comma-separated metric names (default: all, in id order)\n"
	"  --expr E       metric expressions as more columns, named as written,\n"
	"                 several separated by ';': 'lts__t_sectors.sum -\n"
	"                 lts__t_sectors_srcunit_tex.sum; rate(sm__inst_executed.sum)'\n"
	"                 (the grammar of correlate; rate() is per second on ns runs,\n"
	"                 per cycle on cycle runs). Only these columns unless --metric\n"
	"  --device N     only device N (default: every device, one after another)\n"
	"  --from T       first t0 to include: from the run's start, in its unit or\n"
	"                 with one (4ms, 200us, 1.5s, 30000cyc); @T a stored time\n"
	"  --to T         first t0 to leave out (as --from)\n"
	"  --buckets N    N equal buckets over [from, to): columns\n"
	"                 t0,t1,<m>:min,<m>:max,<m>:mean,<m>:sum,<m>:count per metric\n"
	"                 (1..1000000, and buckets x metrics at most 4194304, as over HTTP)\n"
	"  --range NAME   only samples whose t0 lies in a range of that name (a glob:\n"
	"                 '*AllGather*'); not with --buckets\n"
	"  --format perfetto  a Trace Event JSON file for ui.perfetto.dev and\n"
	"                 chrome://tracing: ranges as tracks (kernels and copies per\n"
	"                 stream, API calls and NVTX per thread), metrics as counter\n"
	"                 tracks, the mean of each of --buckets buckets (default 2000)\n"
	"                 or, with --raw, every sample\n"
	"  -o FILE        write FILE instead of standard output\n"
	"  --json         with -o: print what was written as JSON on standard output,\n"
	"                 {\"file\":...,\"bytes\":...,\"rows\":...,\"format\":...}\n",
};

static int run_export(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_export;
	const char *db = NULL, *metric = NULL, *device = NULL, *from = NULL, *to = NULL,
		   *buckets = NULL, *format = NULL, *outfile = NULL, *range = NULL, *expr = NULL;
	int raw = 0, json = 0;
	const cs_opt opts[] = {
		{"db", &db, NULL},	   {"metric", &metric, NULL}, {"device", &device, NULL},
		{"from", &from, NULL},	   {"to", &to, NULL},	      {"buckets", &buckets, NULL},
		{"format", &format, NULL}, {"output", &outfile, NULL}, {"raw", NULL, &raw},
		{"range", &range, NULL},   {"json", NULL, &json},     {"expr", &expr, NULL},
		{NULL, NULL, NULL},
	};
	const char *pos[1];
	int rc = cs_cli_parse_one(cmd, argc, argv, opts, "a RUN (id, name or uuid)", pos);
	if (rc)
		return CS_CLI_EXIT(rc);
	cs_series_req req = {.run = pos[0], .metrics = metric, .exprs = expr, .to = UINT64_MAX,
			  .range = range};
	uint64_t dev = 0, nb = 0;
	if ((device && cs_cli_u64(cmd, "device", device, &dev)) ||
	    (buckets && cs_cli_u64(cmd, "buckets", buckets, &nb)))
		return CS_EXIT_USAGE;
	/* The HTTP API's limits: 1..1000000 buckets, and buckets x metrics
	 * within CS_SERIES_MAX_CELLS (checked when the metrics are known). */
	if (buckets && (nb == 0 || nb > 1000000))
		return cs_cli_usage_error(cmd, "--buckets must be 1..1000000");
	if (dev > UINT32_MAX)
		return cs_cli_usage_error(cmd, "--device is out of range");
	req.have_device = device != NULL;
	req.device = (uint32_t)dev;
	req.have_from = from != NULL;
	req.have_to = to != NULL;
	req.buckets = (uint32_t)nb;
	if (format && strcmp(format, "csv") && strcmp(format, "perfetto"))
		return cs_cli_usage_error(cmd, "--format must be csv or perfetto, not '%s'", format);
	int perfetto = format && !strcmp(format, "perfetto");
	if (!perfetto && raw)
		return cs_cli_usage_error(cmd, "--raw goes with --format perfetto");
	if (json && !outfile)
		return cs_cli_usage_error(cmd, "--json needs -o FILE (without it the data is on "
					  "standard output)");
	if (perfetto && range)
		return cs_cli_usage_error(cmd, "--range goes with CSV");
	if (perfetto && device)
		return cs_cli_usage_error(cmd, "--format perfetto writes every device");
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	if (cs_cli_window(cmd, s, req.run, from, to, &req.from, &req.to) ||
	    (req.to <= req.from && cs_cli_usage_error(cmd, "--to must be after --from"))) {
		cs_store_close(s);
		return CS_EXIT_USAGE;
	}
	if (perfetto) {
		char err[1200];
		cs_trace_req tq = {.run = pos[0], .metrics = metric, .from = req.from,
				   .to = req.to == UINT64_MAX ? 0 : req.to, .buckets = (uint32_t)nb,
				   .raw = raw};
		cs_buf tb = CS_BUF_INIT;
		rc = cs_trace_json(s, &tq, &tb, err, sizeof err);
		cs_store_close(s);
		if (rc < 0) {
			cs_buf_free(&tb);
			return cs_cli_fail(cmd, "%s", err);
		}
		FILE *f = outfile ? fopen(outfile, "wb") : stdout;
		size_t len = tb.len;
		int bad = !f || fwrite(tb.data, 1, len, f) != len;
		if (f && (f == stdout ? fflush(stdout) : fclose(f)))
			bad = 1;
		cs_buf_free(&tb);
		if (bad)
			return cs_cli_fail(cmd, "%s: %s", outfile ? outfile : "standard output",
					   strerror(errno));
		if (outfile)
			cs_cli_wrote(outfile, len, "perfetto", -1, json);
		return CS_EXIT_OK;
	}
	int status; /* the HTTP status; the CLI only needs the message */
	char err[600];
	cs_series_csv *x = cs_series_csv_open(s, &req, &status, err, sizeof err);
	if (!x) {
		rc = cs_cli_fail(cmd, "%s", err);
		cs_store_close(s);
		return rc;
	}
	cs_buf out = CS_BUF_INIT;
	FILE *f = outfile ? fopen(outfile, "wb") : stdout;
	uint64_t bytes = 0, rows = 0;
	while (f && (rc = cs_series_csv_next(x, &out)) >= 0) {
		if (out.len && fwrite(out.data, 1, out.len, f) != out.len) {
			rc = -EIO;
			break;
		}
		bytes += out.len;
		for (const uint8_t *p = out.data; (p = memchr(p, '\n', out.len - (size_t)(p - out.data)));
		     p++)
			rows++;
		out.len = 0;
		if (rc == 0)
			break;
	}
	if (!f || (f == stdout ? fflush(stdout) : fclose(f)))
		rc = -EIO;
	if (rc)
		rc = cs_cli_fail(cmd, "%s", rc == -EIO ? (outfile ? outfile : "cannot write to standard output")
						       : cs_store_errmsg(s));
	else if (outfile)
		cs_cli_wrote(outfile, bytes, "csv", rows ? (int64_t)rows - 1 : 0, json);
	cs_buf_free(&out);
	cs_series_csv_close(x);
	cs_store_close(s);
	return rc ? CS_EXIT_FAIL : CS_EXIT_OK;
}
