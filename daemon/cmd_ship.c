/*
 * cmd_ship.c - `cyclescope ship`: one-off shipping of a database file to
 * ClickHouse (ship.h), e.g. from a laptop after an offline run. What was
 * shipped before is not sent again (the marks in the file); what a crash
 * left half-sent is sent again and collapses there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "reader.h"
#include "ship.h"

static int run_ship(int argc, char **argv);

const cs_cmd cs_cmd_ship = {
	"ship", run_ship, "ship a database's runs to ClickHouse (once)",
	"usage: cyclescope ship --to URL [--db F] [--run RUN] [--database D]\n"
	"                       [--prefix P] [--host NAME] [--cluster C] [--batch N]\n"
	"                       [--user U] [--password-env VAR] [--json]\n\n"
	"Sends every run of the database (or one) to ClickHouse's HTTP interface:\n"
	"runs, devices, metrics, ranges and samples, into tables it creates when\n"
	"absent (docs/fleet.md). Marks in the file record what ClickHouse\n"
	"confirmed, so a second ship sends only what is new, and one stopped half\n"
	"way resumes where it stopped.\n\n"
	"  --to URL          http://HOST:8123 (also user:password@HOST)\n"
	"  --database D      ClickHouse database (default cyclescope)\n"
	"  --prefix P        table name prefix (default none)\n"
	"  --host NAME       the node name its rows carry (default this hostname)\n"
	"  --cluster C       also create *_all Distributed tables over cluster C and\n"
	"                    insert through them\n"
	"  --batch N         sample rows per insert (default 1000000)\n"
	"  --password-env V  read the password from environment variable V\n"
	"  --json            the summary as JSON on standard output:\n"
	"                    {\"shipped\":true,\"runs\":N,\"rows\":N,\"ranges\":N,\"inserts\":N,\"bytes\":N}\n"
	"                    (otherwise one line on standard error)\n",
};

static int run_ship(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_ship;
	const char *db = NULL, *to = NULL, *run = NULL, *database = NULL, *prefix = NULL,
		   *host = NULL, *cluster = NULL, *batch = NULL, *user = NULL, *pwenv = NULL;
	int json = 0;
	const cs_opt opts[] = {{"db", &db, NULL},	  {"to", &to, NULL},
			       {"run", &run, NULL},	  {"database", &database, NULL},
			       {"prefix", &prefix, NULL}, {"host", &host, NULL},
			       {"cluster", &cluster, NULL}, {"batch", &batch, NULL},
			       {"user", &user, NULL},	  {"password-env", &pwenv, NULL},
			       {"json", NULL, &json},	  {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (!to)
		return cs_cli_usage_error(cmd, "--to URL is required (ClickHouse's HTTP interface)");
	uint64_t nb = 0;
	if (batch && (cs_cli_u64(cmd, "batch", batch, &nb) < 0 || !nb))
		return cs_cli_usage_error(cmd, "--batch must be a positive integer");
	const char *password = NULL;
	if (pwenv && !(password = getenv(pwenv)))
		return cs_cli_usage_error(cmd, "--password-env: $%s is not set", pwenv);
	const char *path = cs_cli_db_path(db);
	int64_t only = 0;
	if (run) {
		cs_store *s = cs_cli_open(cmd, path, CS_CLI_READ);
		if (!s)
			return CS_EXIT_FAIL;
		rc = cs_read_find_run(s, run, &only);
		cs_store_close(s);
		if (rc)
			return cs_cli_fail(cmd, "no run '%s' in %s", run, path);
	}
	cs_ship_opts o = {.db_path = path, .url = to, .database = database, .prefix = prefix,
			  .host = host, .cluster = cluster, .user = user, .password = password,
			  .batch_rows = nb, .only_run = only};
	cs_ship_stats st = {0};
	char err[1200];
	rc = cs_ship_once(&o, &st, err, sizeof err);
	if (json)
		printf("{\"shipped\":%s,\"runs\":%llu,\"rows\":%llu,\"ranges\":%llu,\"inserts\":%llu,"
		       "\"bytes\":%llu}\n", rc ? "false" : "true", (unsigned long long)st.runs,
		       (unsigned long long)st.rows, (unsigned long long)st.ranges,
		       (unsigned long long)st.batches, (unsigned long long)st.bytes);
	else
		cs_cli_say("%s: %llu runs brought up to date, %llu sample rows and %llu ranges in "
			   "%llu inserts (%.1f MB)", rc ? "stopped" : "shipped",
			   (unsigned long long)st.runs, (unsigned long long)st.rows,
			   (unsigned long long)st.ranges, (unsigned long long)st.batches,
			   (double)st.bytes / 1e6);
	if (rc)
		return cs_cli_fail(cmd, "%s (what was confirmed is recorded; run it again to resume)",
				   err);
	return CS_EXIT_OK;
}
