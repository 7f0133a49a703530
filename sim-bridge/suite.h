/*
 * suite.h - correlation over a whole suite (cs_suite_*): every kernel of
 * every application, the hardware side one or more repeats of the suite,
 * the simulator side one or more configurations, each a set of runs. The
 * kernels' values are corr_job.h's per-kernel totals; applications pair by
 * a normalised name (or a map), kernels by name and launch order within an
 * application; then per statistic and configuration Pearson and Spearman
 * r, MAPE, signed mean error, RPD, the counts within 1% and 10%, the worst
 * kernels and per-application aggregates (docs/correlation.md, "Suites").
 */
#ifndef CS_SUITE_H
#define CS_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* One side's set of runs: comma-separated ids, names or GLOBs, or the runs
 * labelled with a job; config names the metrics PREFIX:NAME of runs that
 * hold several configurations (get_stats.py -C A,B). */
typedef struct cs_suite_group {
	const char *label;  /* what figures and tables call it; NULL = derived */
	const char *runs;   /* NULL when job is given */
	const char *job;
	const char *config;
} cs_suite_group;

/* A group as written, "[LABEL=]RUNS" or "[LABEL=]job:JOB", under
 * configuration cfg (NULL = none) into *g; its strings point into text
 * and cfg, the label (with cfg after it) is written into label. */
void cs_suite_group_parse(const char *text, const char *cfg, cs_suite_group *g, char *label,
			  size_t lablen);

typedef struct cs_suite_stat {
	const char *hw_expr, *sim_expr; /* corr_job.h's expressions */
} cs_suite_stat;

typedef struct cs_suite_spec {
	const cs_suite_group *hw;  /* repeats of the hardware suite */
	size_t nhw;
	const cs_suite_group *sim; /* simulator configurations */
	size_t nsim;
	const cs_suite_stat *stats;
	size_t nstats;
	const char *app_map;       /* "HW_APP,SIM_APP" lines (# comments); NULL */
	size_t app_map_len;
	const char *app_map_label; /* its file name for messages */
	double hw_clock_hz;        /* converts ns to cycles where ns meets
				      cycles; 0 = each run's own clock */
} cs_suite_spec;

/* One kernel both sides have. */
typedef struct cs_suite_pair {
	size_t app;            /* index into the result's apps */
	char *kernel;          /* the pairing name (demangled, no parameters) */
	uint32_t launch;       /* its launches in the application before it */
	double hw, sim;        /* hw: the mean over the repeats that have it */
	double hw_min, hw_max, hw_sd; /* over the repeats (sd 0 for one) */
	size_t hw_n;           /* repeats that have it */
	int64_t hw_run, sim_run; /* the first repeat's run, the simulator's */
} cs_suite_pair;

/* Statistics over a set of pairs (a configuration's, or an application's). */
typedef struct cs_suite_stats {
	size_t pairs;          /* pairs with both values */
	double pearson, spearman;
	double mape_pct;       /* mean |sim - hw| / |hw|, hw != 0 */
	double mean_error_pct; /* mean (sim - hw) / |hw|, hw != 0 */
	double rpd_pct;        /* mean |sim - hw| / ((|sim| + |hw|) / 2) */
	size_t error_n;        /* pairs with hw != 0 */
	size_t within_1pct, within_10pct;
	double hw_total, sim_total, aggregate_error_pct; /* (sum sim - sum hw) / sum hw */
	double abs_aggregate_error_pct; /* sum |sim - hw| / sum |hw| (Accel-Sim's Agg_Err) */
	double nrmse;          /* sqrt(mean((sim - hw)^2)) / mean(hw) */
} cs_suite_stats;

typedef struct cs_suite_appstat {
	size_t app;
	cs_suite_stats st;
} cs_suite_appstat;

#define CS_SUITE_WORST 10

/* One statistic under one configuration. */
typedef struct cs_suite_cell {
	cs_suite_pair *pairs;  /* in application, then launch order */
	size_t n;
	cs_suite_stats st;
	size_t worst[CS_SUITE_WORST], nworst; /* pairs by |error| descending */
	cs_suite_appstat *apps;
	size_t napps;
	cs_suite_stats by_app; /* over the applications' totals, one point each */
	char hw_unit[32], sim_unit[32]; /* "" when not known */
	double hw_scale;       /* what hardware values were multiplied by (ns ->
				  cycles at a clock), 1 when nothing */
	size_t skipped_runs;   /* runs without the statistic's metrics */
} cs_suite_cell;

/* A kernel only one side has. */
typedef struct cs_suite_unpaired {
	int sim;               /* 1: a configuration's, 0: the hardware's */
	size_t group;          /* the repeat or configuration */
	char *app, *kernel;
	uint32_t launch;
	int64_t run;
} cs_suite_unpaired;

typedef struct cs_suite_result {
	size_t nstats, nconfigs, nrepeats;
	char **config_label, **repeat_label;
	cs_suite_cell *cell;   /* [stat * nconfigs + config] */
	char **app_hw, **app_sim; /* paired applications as the runs name them */
	char **app_how;        /* "map", "name", "application" (args dropped) */
	size_t napps;
	cs_suite_unpaired *unpaired; /* kernels (apps with kernel NULL) */
	size_t nunpaired;
	size_t runs_hw, runs_sim, kernels_hw, kernels_sim;
	char **warn;
	size_t nwarn;
} cs_suite_result;

/* Loads every run of the spec, pairs and computes. 0, or a negative errno
 * with the reason (naming the group, run or metric) in err. */
int cs_suite_run(cs_store *s, const cs_suite_spec *spec, cs_suite_result *r, char *err,
		 size_t errlen);
void cs_suite_free(cs_suite_result *r);

/* The statistics of n (hw, sim) pairs: 0 or -ENOMEM. */
int cs_suite_stats_of(const double *hw, const double *sim, size_t n, cs_suite_stats *st);

/* An application's pairing key: each '/'-separated part lower-cased,
 * every run of characters outside [a-z0-9.] one '_', no '_' at either
 * end: "Rodinia-3.1/BackProp/65536" -> "rodinia_3.1/backprop/65536". */
void cs_suite_app_key(const char *name, char *out, size_t outlen);

/* A kernel's pairing name: demangled, cut before its parameters, a
 * get_stats.py "--N" launch suffix and a leading "void " dropped,
 * no whitespace: "_Z6vecAddPfS_S_i--3" -> "vecAdd". */
void cs_suite_kernel_key(const char *name, char *out, size_t outlen);

#endif
