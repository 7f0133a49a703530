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

static int run_completion(int argc, char **argv);

/* `cyclescope completion bash`: built from this table and each command's
 * --help text, so it names exactly the commands and options there are. */
static const cs_cmd cmd_completion = {
	"completion", run_completion, "print the bash completion script",
	"usage: cyclescope completion bash\n\n"
	"Prints a bash completion script for cyclescope: commands, each command's\n"
	"options (from its --help), import formats, file names. Load it with\n"
	"  source <(cyclescope completion bash)\n"
	"or install it as share/bash-completion/completions/cyclescope (make install\n"
	"does).\n",
};

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
	&cs_cmd_check,
	&cmd_completion,
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The distinct "--option" words of a help text, space-separated, into out. */
static void help_options(const char *help, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	/* every option of the usage lines (up to the first blank line) */
	const char *synopsis_end = strstr(help, "\n\n");
	if (!synopsis_end)
		synopsis_end = help + strlen(help);
	for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--")) {
		size_t l = 2;
		while ((p[l] >= 'a' && p[l] <= 'z') || (p[l] >= '0' && p[l] <= '9') || p[l] == '-')
			l++;
		/* an option of the synopsis or of an option list (a line
		 * starting with it), not one quoted in prose */
		const char *ls = p;
		while (ls > help && ls[-1] == ' ')
			ls--;
		int listed = ls == help || ls[-1] == '\n' || ls[-1] == '[' || ls[-1] == '|';
		if (l == 2 || (!listed && p > synopsis_end))
			continue;
		char word[64];
		snprintf(word, sizeof word, "%.*s", (int)(l < 63 ? l : 63), p);
		char padded[80];
		snprintf(padded, sizeof padded, " %s ", word);
		char have[4200];
		snprintf(have, sizeof have, " %s ", out);
		if (strstr(have, padded) || n + l + 2 >= len)
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", word);
	}
}

static int run_completion(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(cmd_completion.usage, stdout);
		return CS_EXIT_OK;
	}
	if (argc != 2 || strcmp(argv[1], "bash")) {
		fprintf(stderr, "cyclescope completion: expected 'bash'\n\n%s", cmd_completion.usage);
		return CS_EXIT_USAGE;
	}
	printf("# bash completion for cyclescope (cyclescope completion bash)\n"
	       "_cyclescope() {\n"
	       "\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd=\"${COMP_WORDS[1]}\" opts=\n"
	       "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"");
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("%s ", commands[i]->name);
	printf("help --help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase \"$cmd\" in\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char opts[4096];
		help_options(commands[i]->usage, opts, sizeof opts);
		printf("\t%s) opts=\"%s%s--help\" ;;\n", commands[i]->name, opts, opts[0] ? " " : "");
	}
	printf("\tesac\n"
	       "\tif [[ $cur == -* ]]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	       "\telif [ \"$cmd\" = import ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"csv aerialvision accelsim-log accelsim-perf "
	       "accelwattch pm-cupti-csv kernbench ncu-csv nsys-sqlite accelsim-stats accelwattch-hw\" -- "
	       "\"$cur\") $(compgen -f -- \"$cur\"))\n"
	       "\telse\n"
	       "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	       "\tfi\n"
	       "}\n"
	       "complete -o filenames -F _cyclescope cyclescope\n");
	return CS_EXIT_OK;
}

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
