/*
 * main.c - the cyclescope binary: a table of subcommands, one file each
 * (cmd_*.c), perf/git style.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "strdist.h"
#include "log.h"

static const cs_cmd *const commands[] = {
	&cs_cmd_serve,
	&cs_cmd_run,
	&cs_cmd_metrics,
	&cs_cmd_correlate,
	&cs_cmd_report,
	&cs_cmd_phases,
	&cs_cmd_import,
	&cs_cmd_runs,
	&cs_cmd_export,
	&cs_cmd_query,
	&cs_cmd_ship,
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f)
{
	fprintf(f, "usage: cyclescope COMMAND [ARGS...]\n\n"
		   "cyclescope records GPU counter time series and simulator statistics in\n"
		   "one SQLite store (default ./cyclescope.db, or $CYCLESCOPE_DB, or --db).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n'cyclescope COMMAND --help' describes a command. Docs: docs/.\n");
}

int main(int argc, char **argv)
{
	const char *level = getenv("CYCLESCOPE_LOG");
	if (level && !strcmp(level, "debug"))
		cs_log_set_level(CS_LOG_DEBUG);
	else if (level && !strcmp(level, "info"))
		cs_log_set_level(CS_LOG_INFO);
	if (argc < 2) {
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		if (argc > 2) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(commands[i]->name, argv[2])) {
					fputs(commands[i]->usage, stdout);
					return CS_EXIT_OK;
				}
		}
		usage(stdout);
		return CS_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("cyclescope %s\n", CS_VERSION);
		return CS_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i]->run(argc - 1, argv + 1);
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i]->name;
	const char *near = cs_nearest(name, names, NCOMMANDS, 2);
	if (near)
		fprintf(stderr, "cyclescope: unknown command '%s' (did you mean '%s'?)\n\n", name,
			near);
	else
		fprintf(stderr, "cyclescope: unknown command '%s'\n\n", name);
	usage(stderr);
	return CS_EXIT_USAGE;
}
