/*
 * cmd_phases.c - `cyclescope phases RUN --a GLOB --b GLOB`: the overlap
 * analysis of sim-bridge/overlap.c, written by web/phases.c (docs/phases.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmds.h"
#include "collector_lib.h"
#include "jobphases.h"
#include "phases.h"

static int run_phases(int argc, char **argv);

const cs_cmd cs_cmd_phases = {
	"phases", run_phases, "split a run by two sets of ranges: only A, A and B, only B, neither",
	"usage: cyclescope phases RUN --a [KIND:]GLOB --b [KIND:]GLOB [--db F]\n"
	"                         [--metric LIST|@SET] [--device N] [--json | --csv]\n"
	"       cyclescope phases --job J --a [KIND:]GLOB --b [KIND:]GLOB\n"
	"                         [--align collectives] [--metric ...] [--json | --csv]\n\n"
	"Splits RUN's timeline by the ranges whose names match A (e.g. an NCCL\n"
	"collective: 'kernel:nccl*', or an NVTX range) and those matching B (e.g.\n"
	"'*gemm*') into phases: only A, A and B overlapped, only B, neither. For each\n"
	"phase: its duration and share of the run, and per metric its sum, mean rate\n"
	"and peak rate (per second of an ns run, per cycle of a simulator run); then\n"
	"B's tail: the time B runs on alone after its last overlap with A, with each\n"
	"metric's mean rate there against B's isolated time outside the tail.\n"
	"A sample counts in each phase in proportion to how much of it lies there,\n"
	"so the phases' sums add up to the run's total. docs/phases.md.\n\n"
	"With --job, the runs labelled with job J, one per rank: each rank's phases,\n"
	"and the A ranges matched across ranks as collective instances (the n-th of\n"
	"each collective on every rank): each instance's start skew, its straggler\n"
	"(the rank that started last), every rank's wait for it and its exposed\n"
	"(only A) time; per rank the totals. --align collectives aligns the ranks'\n"
	"clocks on the collectives' ends (hosts' clocks differ); else the stored\n"
	"times are used as they are. --csv: one row per instance and rank.\n\n"
	"  KIND      a range kind (kernel, sim-kernel, nvtx, api, ...); any without\n"
	"  --metric  names or globs, comma-separated, or @SET (configs/metric-sets/);\n"
	"            default every metric of the run\n",
};

static int run_phases(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_phases;
	const char *db = NULL, *a = NULL, *b = NULL, *metric = NULL, *device = NULL;
	const char *job = NULL, *align = NULL;
	int json = 0, csv = 0;
	const cs_opt opts[] = {
		{"db", &db, NULL},	   {"a", &a, NULL},	    {"b", &b, NULL},
		{"metric", &metric, NULL}, {"device", &device, NULL}, {"json", NULL, &json},
		{"csv", NULL, &csv},	   {"job", &job, NULL},	    {"align", &align, NULL},
		{NULL, NULL, NULL},
	};
	const char *pos[1] = {NULL};
	int npos = 0;
	int rc;
	if ((rc = cs_cli_parse(cmd, argc, argv, opts, pos, 1, &npos)) != 0)
		return CS_CLI_EXIT(rc);
	if (!job && npos != 1)
		return cs_cli_usage_error(cmd, "expected one RUN (or --job J)");
	if (job && npos)
		return cs_cli_usage_error(cmd, "give RUN or --job J, not both");
	if (align && strcmp(align, "collectives") && strcmp(align, "none"))
		return cs_cli_usage_error(cmd, "--align: expected collectives or none");
	if (align && !job)
		return cs_cli_usage_error(cmd, "--align goes with --job");
	if (!a || !b)
		return cs_cli_usage_error(cmd, "--a GLOB and --b GLOB are required");
	if (json && csv)
		return cs_cli_usage_error(cmd, "--json and --csv exclude each other");
	uint64_t dev = 0;
	if (device && cs_cli_u64(cmd, "device", device, &dev) < 0)
		return CS_EXIT_USAGE;
	if (dev > UINT32_MAX)
		return cs_cli_usage_error(cmd, "--device: expected a device index");
	char err[1200];
	/* @SET: the set's names, comma-joined. */
	cs_buf list = CS_BUF_INIT;
	if (metric && metric[0] == '@') {
		char **names;
		size_t n;
		if (cs_colllib_read_metrics(metric, &names, &n, err, sizeof err) < 0)
			return cs_cli_fail(cmd, "--metric %s", err);
		for (size_t i = 0; i < n; i++) {
			if (i)
				cs_buf_append(&list, ",", 1);
			cs_buf_append(&list, names[i], strlen(names[i]));
		}
		cs_buf_append(&list, "", 1);
		cs_colllib_free_list(names, n);
		metric = (const char *)list.data;
	}
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s) {
		cs_buf_free(&list);
		return CS_EXIT_FAIL;
	}
	int format = json ? CS_PHASES_JSON : csv ? CS_PHASES_CSV : CS_PHASES_TEXT;
	cs_phases_request rq = {.run = pos[0], .a = a, .b = b, .metrics = metric,
				.device = (uint32_t)dev, .format = format};
	cs_jobphases_request jq = {.job = job, .a = a, .b = b, .metrics = metric, .format = format,
				   .align = align && !strcmp(align, "collectives")
						    ? CS_JOB_ALIGN_COLLECTIVES : CS_JOB_ALIGN_NONE};
	cs_buf out = CS_BUF_INIT;
	rc = job ? cs_jobphases_out(s, &jq, &out, err, sizeof err)
		 : cs_phases_out(s, &rq, &out, err, sizeof err);
	if (rc == 0)
		fwrite(out.data, 1, out.len, stdout);
	cs_buf_free(&out);
	cs_buf_free(&list);
	cs_store_close(s);
	return rc == 0 ? CS_EXIT_OK : cs_cli_fail(cmd, "%s", err);
}
