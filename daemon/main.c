/*
 * main.c - the cyclescope binary: a table of subcommands, one file each
 * (cmd_*.c), perf/git style.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cmds.h"
#include "collector_lib.h"
#include "log.h"
#include "report.h"
#include "strdist.h"

static int run_completion(int argc, char **argv);
static void usage(FILE *f);

/* `cyclescope completion bash`: built from this table and each command's
 * --help text, so it names exactly the commands and options there are. */
static const cs_cmd cmd_completion = {
	"completion", run_completion, "print the bash completion script",
	"usage: cyclescope completion bash\n\n"
	"Prints a bash completion script for cyclescope: commands, each command's\n"
	"options (from its --help), import formats, file names, and run and metric\n"
	"names from the database (the one given with --db on the line, else the\n"
	"default) after --hw, --sim, --run, --metric and for export, phases and\n"
	"runs delete/rename. Load it with\n"
	"  source <(cyclescope completion bash)\n"
	"or install it as share/bash-completion/completions/cyclescope (make install\n"
	"does).\n",
};

static const cs_cmd *const commands[] = {
	&cs_cmd_serve,
	&cs_cmd_run,
	&cs_cmd_collectors,
	&cs_cmd_trigger,
	&cs_cmd_metrics,
	&cs_cmd_correlate,
	&cs_cmd_report,
	&cs_cmd_correlations,
	&cs_cmd_phases,
	&cs_cmd_import,
	&cs_cmd_runs,
	&cs_cmd_export,
	&cs_cmd_plot,
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
	       "_cyclescope_names() { # SQL: names from the database on the line\n"
	       "\tcyclescope query $db \"$1\" 2>/dev/null | tail -n +2 | tr -d '\\r'\n"
	       "}\n"
	       "_cyclescope() {\n"
	       "\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
	       "\tlocal cmd= db= opts= i npos=0\n"
	       "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tcase \"${COMP_WORDS[i]}\" in\n"
	       "\t\t--db) db=\"--db ${COMP_WORDS[i+1]}\"; i=$((i + 1)) ;;\n"
	       "\t\t-*) ;;\n"
	       "\t\t*) if [ -z \"$cmd\" ]; then cmd=\"${COMP_WORDS[i]}\"; else npos=$((npos + 1)); fi ;;\n"
	       "\t\tesac\n"
	       "\tdone\n"
	       "\tif [ -z \"$cmd\" ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"");
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("%s ", commands[i]->name);
	printf("help --help --version --db --quiet --verbose --json\" -- \"$cur\"))\n"
	       "\t\treturn\n\tfi\n"
	       "\tcase \"$prev\" in\n"
	       "\t--hw|--sim|--run)\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$(_cyclescope_names 'SELECT name FROM runs')\" -- \"$cur\"))\n"
	       "\t\treturn ;;\n"
	       "\t--metric|-m|--hw-metric|--sim-metric)\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$(_cyclescope_names 'SELECT DISTINCT name FROM metrics')\" -- \"$cur\"))\n"
	       "\t\treturn ;;\n"
	       "\tesac\n"
	       "\tcase \"$cmd\" in\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char opts[4096];
		help_options(commands[i]->usage, opts, sizeof opts);
		printf("\t%s) opts=\"%s%s--help --quiet --verbose --output\" ;;\n", commands[i]->name,
		       opts, opts[0] ? " " : "");
	}
	printf("\tesac\n"
	       "\tif [[ $cur == -* ]]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	       "\telif [ \"$cmd\" = import ] && [ \"$npos\" -eq 0 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"csv aerialvision accelsim-log accelsim-perf "
	       "accelwattch pm-cupti-csv kernbench ncu-csv nsys-sqlite accelsim-stats accelwattch-hw\" -- "
	       "\"$cur\") $(compgen -f -- \"$cur\"))\n"
	       "\telif [[ $cmd == @(export|phases) ]] && [ \"$npos\" -eq 0 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$(_cyclescope_names 'SELECT name FROM runs')\" -- \"$cur\"))\n"
	       "\telif [ \"$cmd\" = runs ] && [ \"$npos\" -eq 0 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"delete rename\" -- \"$cur\"))\n"
	       "\telif [ \"$cmd\" = runs ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$(_cyclescope_names 'SELECT name FROM runs')\" -- \"$cur\"))\n"
	       "\telse\n"
	       "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	       "\tfi\n"
	       "}\n"
	       "complete -o filenames -F _cyclescope cyclescope\n");
	return CS_EXIT_OK;
}

/* Text as roff that prints as is: backslashes, dashes and line-leading
 * dots and quotes escaped. */
static void roff_text(const char *t)
{
	int bol = 1;
	for (; *t; t++) {
		if (bol && (*t == '.' || *t == '\''))
			fputs("\\&", stdout);
		if (*t == '\\')
			fputs("\\e", stdout);
		else if (*t == '-')
			fputs("\\-", stdout);
		else
			fputc(*t, stdout);
		bol = *t == '\n';
	}
	if (!bol)
		fputc('\n', stdout);
}

/* `cyclescope help --man [COMMAND]`: the man page, made from the same text
 * as --help (the page's body is that text, verbatim), so they cannot
 * drift; `make man` writes them, `make install` installs them. */
static int man_page(const cs_cmd *cmd)
{
	char upper[64] = "CYCLESCOPE";
	if (cmd) {
		snprintf(upper, sizeof upper, "CYCLESCOPE-%s", cmd->name);
		for (char *c = upper; *c; c++)
			*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
	}
	printf(".TH %s 1 \"\" \"cyclescope %s\" \"cyclescope manual\"\n.SH NAME\n", upper,
	       CS_VERSION);
	if (cmd)
		printf("cyclescope\\-%s \\- ", cmd->name);
	else
		printf("cyclescope \\- ");
	roff_text(cmd ? cmd->summary : "GPU counter time series and simulator statistics in one store");
	printf(".SH DESCRIPTION\n.nf\n");
	if (cmd) {
		roff_text(cmd->usage);
	} else {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (!f)
			return CS_EXIT_FAIL;
		usage(f);
		fclose(f);
		roff_text(text);
		free(text);
	}
	printf(".fi\n.SH SEE ALSO\n");
	if (cmd) {
		printf(".BR cyclescope (1)\n");
	} else {
		for (size_t i = 0; i < NCOMMANDS; i++)
			printf(".BR cyclescope\\-%s (1)%s\n", commands[i]->name,
			       i + 1 < NCOMMANDS ? "," : "");
	}
	printf("and the documentation in docs/ (share/doc/cyclescope when installed).%s\n",
	       cmd ? " The options every command takes (\\-q, \\-v, \\-j, \\-o FILE, "
		     "\\-\\-db F) are in cyclescope(1)." : "");
	return CS_EXIT_OK;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cyclescope [--db F] [-q] [-v] [-j] COMMAND [ARGS...]\n\n"
		   "cyclescope records GPU counter time series and simulator statistics in\n"
		   "one SQLite store (default ./cyclescope.db, or $CYCLESCOPE_DB, or --db).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nBefore the command, or among its options:\n"
		   "  --db F         the database (every command's --db)\n"
		   "  -q, --quiet    no summaries on stderr, only warnings and errors\n"
		   "  -v, --verbose  what the command does, on stderr (-vv: more)\n"
		   "  -j, --json     the command's JSON output (commands that have one)\n"
		   "Every command also takes -o FILE (--output FILE): its output to FILE.\n"
		   "Data results go to standard output, summaries and errors to standard error.\n"
		   "\n'cyclescope COMMAND --help' describes a command; --version --verbose says\n"
		   "where the parts were found. Docs: docs/.\n");
}

/* --version --verbose: what this binary finds, and where. */
static void version_verbose(void)
{
	char exe[4096] = "?", err[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 1] = '\0';
	printf("executable: %s\n", exe);
	cs_colllib lib;
	if (cs_colllib_open(&lib, err, sizeof err) == 0) {
		printf("collector library: %s\n", lib.path);
		cs_colllib_close(&lib);
	} else {
		printf("collector library: not found (%s)\n", err);
	}
	char *js = NULL, *css = NULL;
	if (cs_report_assets(&js, &css, err, sizeof err) == 0)
		printf("web assets (uPlot): %s\n", err);
	else
		printf("web assets (uPlot): not found (%s)\n", err);
	free(js);
	free(css);
	char **names = NULL;
	size_t nn = 0;
	if (cs_colllib_read_metrics("@general", &names, &nn, err, sizeof err) == 0) {
		printf("metric sets: found (@general: %zu metrics)\n", nn);
		cs_colllib_free_list(names, nn);
	} else {
		printf("metric sets: not found (%s)\n", err);
	}
	printf("database: %s\n", cs_cli_db_path(NULL));
}

int main(int argc, char **argv)
{
	const char *level = getenv("CYCLESCOPE_LOG");
	if (level && !strcmp(level, "debug"))
		cs_log_set_level(CS_LOG_DEBUG);
	else if (level && !strcmp(level, "info"))
		cs_log_set_level(CS_LOG_INFO);
	int first = cs_cli_parse_globals(argc, argv);
	if (first < 0)
		return CS_EXIT_USAGE;
	if (first >= argc) {
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	argc -= first - 1;
	argv += first - 1;
	const char *name = argv[1];
	if (!strcmp(name, "help") && argc > 2 && !strcmp(argv[2], "--man")) {
		for (size_t i = 0; argc > 3 && i < NCOMMANDS; i++)
			if (!strcmp(commands[i]->name, argv[3]))
				return man_page(commands[i]);
		if (argc > 3) {
			fprintf(stderr, "cyclescope help: no command '%s'\n", argv[3]);
			return CS_EXIT_USAGE;
		}
		return man_page(NULL);
	}
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
		int verbose = cs_cli_g.verbose;
		for (int i = 2; i < argc; i++)
			verbose |= !strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v");
		if (verbose)
			version_verbose();
		return CS_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name)) {
			int rc = commands[i]->run(argc - 1, argv + 1);
			/* output that could not be written (a full disk, -o
			 * /dev/full, a closed pipe) is a failure, never exit 0 */
			if (fflush(stdout) != 0 || ferror(stdout)) {
				fprintf(stderr, "cyclescope %s: writing the output: %s\n", name,
					strerror(errno));
				if (rc == CS_EXIT_OK)
					rc = CS_EXIT_FAIL;
			}
			return rc;
		}
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
