/*
 * cmd_runs.c - `cyclescope runs`: the runs in the database, as a table or
 * JSON.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "json.h"
#include "reader.h"
#include "runs_json.h"
#include "store.h"

static int run_runs(int argc, char **argv);

const cs_cmd cs_cmd_runs = {
	"runs", run_runs, "list the runs in the database",
	"usage: cyclescope runs [--db F] [--json] [--kind hw|sim] [--name GLOB] [--since NS]\n"
	"       cyclescope runs delete RUN... [--db F]\n"
	"       cyclescope runs rename RUN NAME [--db F]\n\n"
	"Lists every run: id, kind (hw or sim), status (running, complete or\n"
	"incomplete: a run whose writer died), source, time unit, devices, metrics,\n"
	"samples, time span and name. --json prints every column of the runs table\n"
	"(docs/schema.md) with device, metric and range counts, and meta as an object.\n"
	"The filters are those of GET /api/v1/runs: --kind hw|sim, --name NAME (exact,\n"
	"or a glob like 'gemm*'), --since NS (runs whose start_ns is at least NS).\n\n"
	"delete removes runs and everything recorded for them (samples, ranges,\n"
	"devices, metrics, shipping marks); rename gives a run a new name. A run a\n"
	"live producer is still writing is refused; stop the producer first.\n"

};

/* ?1 kind, ?2 name glob, ?3 since: NULL = any */
#define RUNS_WHERE \
	" WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR name GLOB ?2)" \
	" AND (?3 IS NULL OR start_ns >= ?3)"

static const char runs_sql[] =
	"SELECT r.id, r.kind, r.status, r.source, r.time_unit,"
	" (SELECT count(*) FROM devices d WHERE d.run = r.id),"
	" (SELECT count(*) FROM metrics m WHERE m.run = r.id),"
	" r.samples, r.t_min, r.t_max, r.name"
	" FROM runs r" RUNS_WHERE " ORDER BY r.id";

static const char runs_json_sql[] =
	"SELECT json_group_array(json_object(" CS_RUN_JSON_FIELDS "))"
	" FROM (SELECT * FROM runs" RUNS_WHERE " ORDER BY id) r";

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
	const char *db = NULL, *kind = NULL, *name = NULL, *since = NULL;
	int json = 0;
	const cs_opt opts[] = {{"db", &db, NULL},     {"json", NULL, &json}, {"kind", &kind, NULL},
			       {"name", &name, NULL}, {"since", &since, NULL}, {NULL, NULL, NULL}};
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
	sqlite3 *dbh = cs_store_db(s);
	sqlite3_stmt *st = NULL;
	rc = CS_EXIT_OK;
	if (sqlite3_prepare_v2(dbh, json ? runs_json_sql : runs_sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
		goto out;
	}
	if (kind)
		sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	if (name)
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (since)
		sqlite3_bind_int64(st, 3, since_ns > INT64_MAX ? INT64_MAX : (int64_t)since_ns);
	if (json) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			cs_buf b = CS_BUF_INIT;
			cs_json_sql(&b, (const char *)sqlite3_column_text(st, 0));
			cs_json_raw(&b, "\n");
			fwrite(b.data, 1, b.len, stdout);
			cs_buf_free(&b);
		} else
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
