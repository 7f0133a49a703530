/*
 * cmd_runs.c - `cyclescope runs`: the runs in the database, as a table or
 * JSON.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "runs_json.h"

static int run_runs(int argc, char **argv);

const cs_cmd cs_cmd_runs = {
	"runs", run_runs, "list the runs in the database",
	"usage: cyclescope runs [--db F] [--json]\n\n"
	"Lists every run: id, kind (hw or sim), status (running, complete or\n"
	"incomplete: a run whose writer died), source, time unit, devices, metrics,\n"
	"samples, time span and name. --json prints every column of the runs table\n"
	"(docs/schema.md) with device, metric and range counts, and meta as an object.\n",
};

static const char runs_sql[] =
	"SELECT r.id, r.kind, r.status, r.source, r.time_unit,"
	" (SELECT count(*) FROM devices d WHERE d.run = r.id),"
	" (SELECT count(*) FROM metrics m WHERE m.run = r.id),"
	" r.samples, r.t_min, r.t_max, r.name"
	" FROM runs r ORDER BY r.id";

static const char runs_json_sql[] =
	"SELECT json_group_array(json_object(" CS_RUN_JSON_FIELDS "))"
	" FROM (SELECT * FROM runs ORDER BY id) r";

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

static int run_runs(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_runs;
	const char *db = NULL;
	int json = 0;
	const cs_opt opts[] = {{"db", &db, NULL}, {"json", NULL, &json}, {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	sqlite3 *dbh = cs_store_db(s);
	sqlite3_stmt *st = NULL;
	rc = CS_EXIT_OK;
	if (sqlite3_prepare_v2(dbh, json ? runs_json_sql : runs_sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
		goto out;
	}
	if (json) {
		if (sqlite3_step(st) == SQLITE_ROW)
			printf("%s\n", (const char *)sqlite3_column_text(st, 0));
		else
			rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
		goto out;
	}
	/* The SOURCE column as wide as its longest value (accelsim-perf is
	 * 13 characters and pushed the rest out of line). */
	int sw = 12;
	sqlite3_stmt *wst = NULL;
	if (sqlite3_prepare_v2(dbh, "SELECT max(length(source)) FROM runs", -1, &wst, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(wst) == SQLITE_ROW && sqlite3_column_int(wst, 0) > sw)
		sw = sqlite3_column_int(wst, 0) < 64 ? sqlite3_column_int(wst, 0) : 64;
	sqlite3_finalize(wst);
	printf("%4s  %-4s  %-10s  %-*s  %-5s  %3s  %7s  %10s  %-12s  %s\n", "ID", "KIND",
	       "STATUS", sw, "SOURCE", "UNIT", "DEV", "METRICS", "SAMPLES", "SPAN", "NAME");
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		char span[32];
		const char *unit = (const char *)sqlite3_column_text(st, 4);
		format_span(span, sizeof span, unit, sqlite3_column_type(st, 8) != SQLITE_NULL,
			    sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 9));
		printf("%4lld  %-4s  %-10s  %-*s  %-5s  %3lld  %7lld  %10lld  %-12s  %s\n",
		       (long long)sqlite3_column_int64(st, 0),
		       (const char *)sqlite3_column_text(st, 1),
		       (const char *)sqlite3_column_text(st, 2), sw,
		       (const char *)sqlite3_column_text(st, 3), unit,
		       (long long)sqlite3_column_int64(st, 5),
		       (long long)sqlite3_column_int64(st, 6),
		       (long long)sqlite3_column_int64(st, 7), span,
		       (const char *)sqlite3_column_text(st, 10));
	}
	if (src != SQLITE_DONE)
		rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
out:
	sqlite3_finalize(st);
	cs_store_close(s);
	return rc;
}
