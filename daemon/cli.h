/*
 * cli.h - what every subcommand shares (cs_cli_*): the option parser, the
 * database path rule, opening the store, number parsing and stdout as a
 * CSV sink. Each subcommand lives in its own cmd_*.c behind the command
 * table in main.c.
 *
 * Exit codes: 0 success, 1 the command failed, 2 the command line is wrong.
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#include "store.h"

#define CS_VERSION "0.1.0"

enum { CS_EXIT_OK = 0, CS_EXIT_FAIL = 1, CS_EXIT_USAGE = 2 };

/* cs_cli_parse printed --help: the command ends with CS_EXIT_OK. */
#define CS_CLI_HELP (-1)
#define CS_CLI_EXIT(rc) ((rc) == CS_CLI_HELP ? CS_EXIT_OK : (rc))

/* One option: --name VALUE (or --name=VALUE) stores VALUE in *str;
 * a flag (str == NULL) sets *flag to 1. A few long names have a short
 * form on every command that has them (-o output, -j json, -n name,
 * -m metric; -h help): -oFILE, -o FILE and bundled flags (-jq) work. */
typedef struct cs_opt {
	const char *name;
	const char **str;
	int *flag;
} cs_opt;

/* A subcommand. */
typedef struct cs_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full --help text */
} cs_cmd;

/* Options given before the command: cyclescope [--db F] [-q] [-v] [-j]
 * COMMAND ... (git's habit). */
typedef struct cs_cli_globals {
	const char *db; /* --db: what every command's --db defaults to */
	int quiet;      /* -q: no summaries, warnings and errors only */
	int verbose;    /* -v: info log lines (-vv: debug) */
	int json;       /* -j: the command's --json */
} cs_cli_globals;
extern cs_cli_globals cs_cli_g;

/* Parses the global options of argv[1..argc); returns the index of the
 * command word (argc when none), or -1 after printing a usage error. */
int cs_cli_parse_globals(int argc, char **argv);

/* Parses argv[1..argc) (argv[0] is the command name) against opts,
 * collecting up to maxpos positional arguments in pos. "--" ends options.
 * Every command also takes -q/--quiet, -v/--verbose and, unless it has
 * its own --output, -o/--output FILE (standard output goes to FILE).
 * Returns 0 to go on; otherwise the command returns CS_CLI_EXIT(rc):
 * CS_CLI_HELP after printing --help, CS_EXIT_USAGE after a usage error. */
int cs_cli_parse(const cs_cmd *cmd, int argc, char **argv, const cs_opt *opts,
		 const char **pos, int maxpos, int *npos);

/* cs_cli_parse for the commands that take exactly one positional argument
 * (what says what it is: "a RUN (id, name or uuid)"), into *arg. Returns
 * as cs_cli_parse: 0 to go on, else the command returns CS_CLI_EXIT(rc). */
int cs_cli_parse_one(const cs_cmd *cmd, int argc, char **argv, const cs_opt *opts,
		     const char *what, const char **arg);

/* Prints "cyclescope CMD: message" and a hint to stderr; returns
 * CS_EXIT_USAGE. */
int cs_cli_usage_error(const cs_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A summary for people ("imported run 3 ...", "wrote F"): to stderr,
 * unless --quiet. Data results go to stdout. */
void cs_cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What a command wrote to FILE: "wrote FILE (N bytes)" via cs_cli_say,
 * or with json {"file":...,[ "format":...,]"bytes":N[,"rows":N]} on
 * stdout (format NULL and rows < 0 are left out). */
void cs_cli_wrote(const char *file, uint64_t bytes, const char *format, int64_t rows, int json);

/* Writes len bytes of data to path (NULL: standard output, flushed);
 * with say and a path, then "wrote FILE (N bytes)" (cs_cli_wrote, json as
 * there). CS_EXIT_OK, or CS_EXIT_FAIL after saying why. */
int cs_cli_write(const cs_cmd *cmd, const char *path, const void *data, size_t len, int say,
		 int json);

/* Prints "cyclescope CMD: message" to stderr; returns CS_EXIT_FAIL. */
int cs_cli_fail(const cs_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --db, else $CYCLESCOPE_DB, else ./cyclescope.db. Borrowed. */
const char *cs_cli_db_path(const char *opt);

enum cs_cli_access { CS_CLI_READ, CS_CLI_WRITE, CS_CLI_READONLY };

/* Opens the store: CS_CLI_WRITE creates it when missing; CS_CLI_READ opens
 * an existing file read-write when it may (so runs of dead writers are
 * marked incomplete), read-only otherwise; CS_CLI_READONLY never writes
 * (check, query). NULL after printing why. */
cs_store *cs_cli_open(const cs_cmd *cmd, const char *path,
		      enum cs_cli_access mode);

/* Parses a non-negative integer option; on error prints and returns -1. */
/* --from and --to (either NULL when not given) as stored times of the run
 * spec names (cs_runs_time: from its start unless '@', with units); a
 * spec that names no run is left for the command to report. 0, or -1
 * having printed what is wrong (a usage error). */
int cs_cli_window(const cs_cmd *cmd, cs_store *s, const char *run, const char *from,
		  const char *to, uint64_t *f, uint64_t *t);

/* --job, --rank and --label k=v,... (any may be NULL) as a JSON object of
 * strings into out (NUL-terminated): 0, or the exit code of a usage
 * error it printed. */
int cs_cli_labels(const cs_cmd *cmd, const char *job, const char *rank, const char *more,
		  cs_buf *out);

int cs_cli_u64(const cs_cmd *cmd, const char *opt, const char *text,
	       uint64_t *out);

/* A file's bytes: mapped for regular files, read whole for pipes and "-"
 * (standard input). Free with cs_cli_free_file. */
typedef struct cs_cli_input {
	char *data; /* NULL for an empty file */
	size_t len;
	int mapped;
} cs_cli_input;

/* Returns 0, or a negative errno with "PATH: reason" in err. */
int cs_cli_read_file(const char *path, cs_cli_input *in, char *err, size_t errlen);
void cs_cli_free_file(cs_cli_input *in);

/* A cs_csv sink writing to stdout. */
int cs_cli_stdout_sink(void *ctx, const void *p, size_t n);

#endif
