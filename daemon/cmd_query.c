/*
 * cmd_query.c - `cyclescope query SQL`: one read-only statement over the
 * store, the `series` virtual table included, as CSV or JSON on stdout.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "sqlout.h"

static int run_query(int argc, char **argv);

const cs_cmd cs_cmd_query = {
	"query", run_query, "run one read-only SQL statement (CSV or JSON out)",
	"usage: cyclescope query SQL [--db F] [--json]\n\n"
	"Runs one read-only SQL statement against the database and prints the rows\n"
	"as CSV (header first) or, with --json, as an array of objects. Besides the\n"
	"plain tables (runs, devices, metrics, ranges; docs/schema.md) the virtual\n"
	"table series(run, device, metric, seq, t0, t1, value) shows every stored\n"
	"value as a row, e.g.\n\n"
	"  cyclescope query \"SELECT t0, value FROM series\n"
	"                    WHERE run = 1 AND metric = 'lts__t_sectors.sum'\n"
	"                    AND t0 BETWEEN 0 AND 1000000\"\n",
};

static int run_query(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_query;
	const char *db = NULL;
	int json = 0;
	const cs_opt opts[] = {{"db", &db, NULL}, {"json", NULL, &json}, {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 1, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (npos != 1)
		return cs_cli_usage_error(cmd, "expected one SQL statement");
	const char *path = cs_cli_db_path(db);
	char err[600];
	cs_store *s = cs_store_open(path, CS_OPEN_READONLY, err, sizeof err);
	if (!s)
		return cs_cli_fail(cmd, "%s", err);
	sqlite3 *dbh = cs_store_db(s);
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	rc = CS_EXIT_OK;
	if (sqlite3_prepare_v2(dbh, pos[0], -1, &st, &tail) != SQLITE_OK) {
		rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
	} else if (!st) {
		rc = cs_cli_usage_error(cmd, "the SQL text holds no statement");
	} else if (tail && tail[strspn(tail, " \t\r\n;")]) {
		rc = cs_cli_usage_error(cmd, "one statement at a time (extra text: '%.40s')",
					tail + strspn(tail, " \t\r\n;"));
	} else if (!sqlite3_stmt_readonly(st)) {
		rc = cs_cli_fail(cmd, "only read-only statements are allowed");
	} else {
		int64_t n = json ? cs_sqlout_json(st, cs_cli_stdout_sink, NULL, 0, 0, NULL)
				 : cs_sqlout_csv(st, cs_cli_stdout_sink, NULL, 0, 0, NULL);
		if (n < 0)
			rc = cs_cli_fail(cmd, "%s", sqlite3_errmsg(dbh));
	}
	sqlite3_finalize(st);
	cs_store_close(s);
	return rc;
}
