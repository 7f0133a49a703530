/*
 * cmd_check.c - `cyclescope check`: verifies a whole database file,
 * SQLite's structure and every stored chunk's checksum, and names what is
 * bad.
 */
#include <stdio.h>

#include "check.h"
#include "cmds.h"
#include "store.h"

static int run_check(int argc, char **argv);

const cs_cmd cs_cmd_check = {
	"check", run_check, "verify a database file: structure and checksums",
	"usage: cyclescope check [--db F] [--quick]\n\n"
	"Verifies the whole file without changing it: SQLite's PRAGMA integrity_check\n"
	"(quick_check with --quick: no index cross-check), then every timeline and\n"
	"value chunk is decoded with its checksums verified and held against its\n"
	"row (sample count, time extent, count/min/max/sum) and its timeline.\n"
	"Each problem is printed on a line naming the run, metric, device and sample\n"
	"(seq) where it is; the last line sums up. Chunks written before checksums\n"
	"existed (format 1) are decoded and validated but cannot be verified: the\n"
	"summary counts them. Exit status 0 when nothing is wrong, 1 otherwise.\n",
};

static void print_problem(void *arg, const char *problem)
{
	(void)arg;
	printf("%s\n", problem);
}

static int run_check(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_check;
	const char *db = NULL;
	int quick = 0;
	const cs_opt opts[] = {{"db", &db, NULL}, {"quick", NULL, &quick}, {NULL, NULL, NULL}};
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, NULL, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	const char *path = cs_cli_db_path(db);
	cs_store *s = cs_cli_open(cmd, path, CS_CLI_READONLY);
	if (!s)
		return CS_EXIT_FAIL;
	cs_check_stats st;
	if (cs_store_check(s, quick, print_problem, NULL, &st)) {
		cs_store_close(s);
		return cs_cli_fail(cmd, "out of memory");
	}
	cs_store_close(s);
	printf("%s: %s; %lld timelines and %lld chunks, %lld problem%s",
	       path, quick ? "quick_check" : "integrity_check", (long long)st.timelines,
	       (long long)st.chunks, (long long)st.problems, st.problems == 1 ? "" : "s");
	if (st.unchecked_timelines || st.unchecked_chunks)
		printf("; %lld timelines and %lld chunks were written before checksums and are"
		       " validated, not verified",
		       (long long)st.unchecked_timelines, (long long)st.unchecked_chunks);
	printf("\n");
	fflush(stdout);
	return st.problems ? CS_EXIT_FAIL : CS_EXIT_OK;
}
