/*
 * cmd_runs.c - `cyclescope runs`: the runs in the database, as a table or
 * JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "json.h"
#include "reader.h"
#include "runs.h"
#include "store.h"
#include "text.h"

static int run_runs(int argc, char **argv);

const cs_cmd cs_cmd_runs = {
	"runs", run_runs, "list the runs in the database",
	"usage: cyclescope runs [--db F] [--json] [--kind hw|sim] [--name GLOB] [--since NS]\n"
	"                       [--job J]\n"
	"       cyclescope runs delete RUN... [--db F]\n"
	"       cyclescope runs rename RUN NAME [--db F]\n\n"
	"Lists every run: id, kind (hw or sim), status (running, complete or\n"
	"incomplete: a run whose writer died), source, time unit, devices, metrics,\n"
	"samples, time span and name. --json prints every column of the runs table\n"
	"(docs/schema.md) with device, metric and range counts, and meta as an object.\n"
	"The filters are those of GET /api/v1/runs: --kind hw|sim, --name NAME (exact,\n"
	"or a glob like 'gemm*'), --since NS (runs whose start_ns is at least NS),\n"
	"--job J (the runs labelled with job J, with a RANK column; the labels are\n"
	"in --json's \"labels\": job, rank, world_size, host, ...).\n\n"
	"delete removes runs and everything recorded for them (samples, ranges,\n"
	"devices, metrics, shipping marks); rename gives a run a new name. A run a\n"
	"live producer is still writing is refused; stop the producer first.\n"

};

/* "12.5 ms" for ns spans, "1234567 cyc" for cycles. */
static void format_span(char *out, size_t len, const char *unit, int have,
			long long t0, long long t1)
{
	if (!have) {
		snprintf(out, len, "-");
		return;
	}
	double d = (double)(t1 - t0);
	if (strcmp(unit, "ns"))
		snprintf(out, len, "%lld cyc", t1 - t0);
	else if (d >= 1e9)
		snprintf(out, len, "%.3g s", d / 1e9);
	else if (d >= 1e6)
		snprintf(out, len, "%.3g ms", d / 1e6);
	else if (d >= 1e3)
		snprintf(out, len, "%.3g us", d / 1e3);
	else
		snprintf(out, len, "%lld ns", t1 - t0);
}

/* runs delete RUN... / runs rename RUN NAME: every RUN is resolved and
 * checked before anything changes. */
static int change_runs(const cs_cmd *cmd, const char *db, const char **pos, int npos)
{
	int del = !strcmp(pos[0], "delete");
	if (del && npos < 2)
		return cs_cli_usage_error(cmd, "delete: expected RUN...");
	if (!del && npos != 3)
		return cs_cli_usage_error(cmd, "rename: expected RUN NAME");
	/* read-write where the file allows it (a read-only one refuses the
	 * change with SQLite's reason) */
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	int rc = CS_EXIT_OK;
	int n = del ? npos - 1 : 1;
	int64_t ids[64];
	if (n > 64) {
		cs_store_close(s);
		return cs_cli_usage_error(cmd, "delete: at most 64 runs at a time");
	}
	for (int i = 0; i < n && rc == CS_EXIT_OK; i++) {
		char who[300];
		if (cs_read_find_run(s, pos[1 + i], &ids[i]))
			rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
		else if (cs_store_run_busy(s, ids[i], who, sizeof who) > 0)
			rc = cs_cli_fail(cmd, "run %lld ('%s') is still being written (%s); stop that "
					 "producer first", (long long)ids[i], pos[1 + i], who);
	}
	for (int i = 0; i < n && rc == CS_EXIT_OK; i++) {
		if (del ? cs_store_delete_run(s, ids[i]) : cs_store_rename_run(s, ids[i], pos[2]))
			rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
		else if (del)
			fprintf(stderr, "cyclescope runs: deleted run %lld ('%s')\n",
				(long long)ids[i], pos[1 + i]);
		else
			fprintf(stderr, "cyclescope runs: run %lld is now named '%s'\n",
				(long long)ids[i], pos[2]);
	}
	cs_store_close(s);
	return rc;
}

static int run_runs(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_runs;
	const char *db = NULL, *kind = NULL, *name = NULL, *since = NULL, *job = NULL;
	int json = 0;
	const cs_opt opts[] = {{"db", &db, NULL},     {"json", NULL, &json}, {"kind", &kind, NULL},
			       {"name", &name, NULL}, {"since", &since, NULL}, {"job", &job, NULL},
			       {NULL, NULL, NULL}};
	const char *pos[66];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 66, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (npos && (!strcmp(pos[0], "delete") || !strcmp(pos[0], "rename")))
		return change_runs(cmd, db, pos, npos);
	if (npos)
		return cs_cli_usage_error(cmd, "unexpected argument '%s' (delete or rename?)",
					  pos[0]);
	uint64_t since_ns = 0;
	if (kind && strcmp(kind, "hw") && strcmp(kind, "sim"))
		return cs_cli_usage_error(cmd, "--kind must be hw or sim, not '%s'", kind);
	if (since && cs_cli_u64(cmd, "since", since, &since_ns) < 0)
		return CS_EXIT_USAGE;
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	cs_runs_filter f = {.kind = kind, .name = name, .job = job, .since_ns = since_ns,
			    .have_since = !!since};
	rc = CS_EXIT_OK;
	if (json) {
		cs_buf b = CS_BUF_INIT;
		if (cs_runs_json(s, &f, &b) == 0) {
			cs_json_raw(&b, "\n");
			fwrite(b.data, 1, b.len, stdout);
		} else {
			rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
		}
		cs_buf_free(&b);
		cs_store_close(s);
		return rc;
	}
	cs_run_row *rows;
	size_t n;
	if (cs_runs_list(s, &f, &rows, &n)) {
		rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
		cs_store_close(s);
		return rc;
	}
	/* The SOURCE column as wide as its longest value (accelsim-perf is
	 * 13 characters and pushed the rest out of line). */
	int sw = 12;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(rows[i].source) > sw)
			sw = (int)strlen(rows[i].source);
	if (job && !n)
		fprintf(stderr, "cyclescope runs: no run is labelled with job '%s'\n", job);
	printf("%4s  %-4s  %-10s  %-*s  %-5s  %3s  %7s  %10s  %-12s  %s%s\n", "ID", "KIND",
	       "STATUS", sw, "SOURCE", "UNIT", "DEV", "METRICS", "SAMPLES", "SPAN",
	       job ? "RANK  " : "", "NAME");
	for (size_t i = 0; i < n; i++) {
		cs_run_row *r = &rows[i];
		char span[32];
		/* a name of a terminal's escapes or line breaks prints as '?'s */
		cs_text_printable(r->name);
		cs_text_printable(r->source);
		format_span(span, sizeof span, r->time_unit, r->have_span, r->t_min, r->t_max);
		char rank[40] = "";
		if (job) {
			cs_text_printable(r->rank);
			snprintf(rank, sizeof rank, "%-4s  ", r->rank[0] ? r->rank : "-");
		}
		printf("%4lld  %-4s  %-10s  %-*s  %-5s  %3lld  %7lld  %10lld  %-12s  %s%s\n",
		       (long long)r->id, r->kind, r->status, sw, r->source, r->time_unit,
		       (long long)r->devices, (long long)r->metrics, (long long)r->samples, span,
		       rank, r->name);
	}
	free(rows);
	cs_store_close(s);
	return rc;
}
