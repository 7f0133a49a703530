/*
 * cmd_query.c - `cyclescope query SQL`: one read-only statement over the
 * store, the `series` virtual table included, as CSV or JSON on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "query.h"

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
	int rc = cs_cli_parse_one(cmd, argc, argv, opts, "one SQL statement", pos);
	if (rc)
		return CS_CLI_EXIT(rc);
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READONLY);
	if (!s)
		return CS_EXIT_FAIL;
	/* The asker owns the file: no authorizer and no limits, but one
	 * read-only statement still. */
	const cs_query_opts o = {.json = json, .trusted = 1};
	cs_query_fail f;
	char why[300];
	cs_query *q = cs_query_open(s, pos[0], &o, &f, why, sizeof why);
	if (!q) {
		rc = f == CS_QUERY_USAGE ? cs_cli_usage_error(cmd, "%s", why)
					 : cs_cli_fail(cmd, "%s", why);
		cs_store_close(s);
		return rc;
	}
	cs_buf b = CS_BUF_INIT;
	int wrote = 0;
	do {
		b.len = 0;
		rc = cs_query_next(q, &b, 64u << 10);
		if (b.len && cs_cli_stdout_sink(NULL, b.data, b.len)) {
			wrote = -EIO;
			break;
		}
	} while (rc == 1);
	if (wrote)
		rc = cs_cli_fail(cmd, "writing the answer to standard output failed");
	else if (rc < 0 && cs_query_failure(q, why, sizeof why) != CS_QUERY_OK)
		rc = cs_cli_fail(cmd, "%s", why);
	else
		rc = CS_EXIT_OK;
	cs_buf_free(&b);
	cs_query_close(q);
	cs_store_close(s);
	return rc;
}
