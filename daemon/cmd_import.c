/*
 * cmd_import.c - `cyclescope import FORMAT FILE`: turns a file into a run.
 * The formats themselves live in sim-bridge/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "buf.h"
#include "accelsim_log.h"
#include "aerialvision.h"
#include "import_csv.h"
#include "producer.h"

static int run_import(int argc, char **argv);

const cs_cmd cs_cmd_import = {
	"import", run_import, "import simulator or CSV statistics as a run",
	"usage: cyclescope import FORMAT FILE [--db F | --socket PATH] [--name NAME]\n"
	"                         [--time-unit ns|cycle] [--kind hw|sim] [--clock-mhz MHZ]\n\n"
	"Imports FILE ('-' for standard input) as one new run.\n\n"
	"Formats:\n"
	"  csv   wide CSV: header t0,t1[,device],<metric>,...; one row per sample\n"
	"        (what 'cyclescope export' writes; see docs/import-formats.md)\n\n"
	"Options:\n"
	"  --db F          write this database file directly\n"
	"  --socket PATH   send the run to the daemon listening at PATH\n"
	"                  (default: a daemon on the default socket if one runs,\n"
	"                  else $CYCLESCOPE_DB or ./cyclescope.db directly)\n"
	"  --name NAME     run name (default: the file's name)\n"
	"  --time-unit U   unit of t0/t1: ns (default) or cycle\n"
	"  --kind K        hw or sim (default: hw for ns, sim for cycle)\n"
	"  --clock-mhz MHZ clock of the time axis, recorded with the run\n\n"
	"A file with an error is not imported at all: the message names the file,\n"
	"line and column.\n",
};

typedef int (*import_fn)(cs_producer *p, const char *buf, size_t len,
			 const cs_import_opts *opts, char *err, size_t errlen);

static const struct {
	const char *name;
	import_fn fn;
} formats[] = {
	{"csv", cs_import_csv},
	{"aerialvision", cs_import_aerialvision},
	{"accelsim-log", cs_import_accelsim_log},
};

static int run_import(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_import;
	const char *db = NULL, *name = NULL, *unit = NULL, *kind = NULL, *mhz = NULL;
	const char *socket_path = NULL;
	const cs_opt opts[] = {
		{"db", &db, NULL},	   {"name", &name, NULL}, {"time-unit", &unit, NULL},
		{"kind", &kind, NULL},	   {"clock-mhz", &mhz, NULL}, {"socket", &socket_path, NULL},
		{NULL, NULL, NULL},
	};
	const char *pos[2];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 2, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (npos != 2)
		return cs_cli_usage_error(cmd, "expected FORMAT and FILE");
	import_fn fn = NULL;
	for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
		if (!strcmp(formats[i].name, pos[0]))
			fn = formats[i].fn;
	if (!fn)
		return cs_cli_usage_error(cmd, "unknown format '%s' (known: csv)", pos[0]);
	if (unit && strcmp(unit, "ns") && strcmp(unit, "cycle"))
		return cs_cli_usage_error(cmd, "--time-unit must be ns or cycle, not '%s'", unit);
	if (kind && strcmp(kind, "hw") && strcmp(kind, "sim"))
		return cs_cli_usage_error(cmd, "--kind must be hw or sim, not '%s'", kind);
	double clock_hz = 0;
	if (mhz) {
		char *end;
		clock_hz = strtod(mhz, &end) * 1e6;
		if (*end || !(clock_hz > 0 && clock_hz < 1e12))
			return cs_cli_usage_error(cmd, "--clock-mhz: expected a positive "
						       "number, got '%s'", mhz);
	}
	char err[1024];
	cs_cli_input in;
	if (cs_cli_read_file(pos[1], &in, err, sizeof err))
		return cs_cli_fail(cmd, "%s", err);
	/* A daemon that is running owns the database: send it the run. With
	 * --db, or when no daemon listens, write the file directly. */
	char sock[512];
	cs_producer *p = NULL;
	cs_store *s = NULL;
	const char *path = cs_cli_db_path(db);
	if (socket_path) {
		p = cs_producer_socket(socket_path, err, sizeof err);
		if (!p) {
			cs_cli_free_file(&in);
			return cs_cli_fail(cmd, "%s", err);
		}
	} else if (!db) {
		cs_producer_default_socket(sock, sizeof sock);
		if (access(sock, F_OK) == 0 && (p = cs_producer_socket(sock, err, sizeof err)))
			socket_path = sock;
	}
	if (!p) {
		s = cs_cli_open(cmd, path, CS_CLI_WRITE);
		p = s ? cs_producer_direct(s) : NULL;
		if (!p) {
			cs_store_close(s);
			cs_cli_free_file(&in);
			return CS_EXIT_FAIL;
		}
	}
	cs_import_opts io = {
		.label = strcmp(pos[1], "-") ? pos[1] : "stdin",
		.name = name,
		.time_unit = unit,
		.kind = kind,
		.clock_hz = clock_hz,
	};
	rc = fn(p, in.data, in.len, &io, err, sizeof err);
	int64_t run = cs_producer_run(p);
	if (rc) {
		rc = cs_cli_fail(cmd, "%s (nothing was imported)", err);
	} else if (!s) {
		printf("sent %s '%s' to the daemon at %s\n", cs_producer_run_label(p),
		       name ? name : io.label, socket_path);
		rc = CS_EXIT_OK;
	} else {
		sqlite3_stmt *st = NULL;
		sqlite3_prepare_v2(cs_store_db(s),
				   "SELECT name, samples, (SELECT count(*) FROM metrics"
				   " WHERE run = ?1), (SELECT count(*) FROM devices"
				   " WHERE run = ?1) FROM runs WHERE id = ?1",
				   -1, &st, NULL);
		sqlite3_bind_int64(st, 1, run);
		if (sqlite3_step(st) == SQLITE_ROW)
			printf("imported run %lld '%s': %lld samples x %lld metrics on %lld "
			       "device(s) into %s\n",
			       (long long)run, (const char *)sqlite3_column_text(st, 0),
			       (long long)sqlite3_column_int64(st, 1),
			       (long long)sqlite3_column_int64(st, 2),
			       (long long)sqlite3_column_int64(st, 3), path);
		sqlite3_finalize(st);
		rc = CS_EXIT_OK;
	}
	cs_producer_free(p);
	cs_store_close(s);
	cs_cli_free_file(&in);
	return rc;
}
