/* cmds.h - the subcommands behind main.c's command table. */
#ifndef CS_CMDS_H
#define CS_CMDS_H

#include "cli.h"

extern const cs_cmd cs_cmd_import;
extern const cs_cmd cs_cmd_runs;
extern const cs_cmd cs_cmd_export;
extern const cs_cmd cs_cmd_plot;
extern const cs_cmd cs_cmd_query;
extern const cs_cmd cs_cmd_serve;
extern const cs_cmd cs_cmd_run;
extern const cs_cmd cs_cmd_metrics;
extern const cs_cmd cs_cmd_correlate;
extern const cs_cmd cs_cmd_report;
extern const cs_cmd cs_cmd_correlations;
extern const cs_cmd cs_cmd_phases;
extern const cs_cmd cs_cmd_ship;
extern const cs_cmd cs_cmd_check;
extern const cs_cmd cs_cmd_collectors;
extern const cs_cmd cs_cmd_trigger;

/* correlate --suite, report --suite and plot --suite (cmd_correlate.c):
 * the suite's answer on standard output, its page or figure in -o FILE
 * (by extension), its figure in -o FILE or on standard output. */
enum { CS_SUITE_CMD_CORRELATE, CS_SUITE_CMD_REPORT, CS_SUITE_CMD_PLOT };
int cs_cmd_suite(const cs_cmd *cmd, int argc, char **argv, int mode);

/* `plot --compare --hw RUN --sim RUN` (correlate's options, -o FILE,
 * --kernels): the compare figure, both runs on one axis, as SVG. */
int cs_cmd_compare_plot(const cs_cmd *cmd, int argc, char **argv);

#endif
