/*
 * runs.h - the runs table as the upper floors read it (cs_runs_*): the
 * listing `cyclescope runs` prints, and the JSON GET /api/v1/runs,
 * /runs/{run} and /runs/{run}/metrics answer (docs/http-api.md), so the
 * CLI and the HTTP API give the same fields from the same statements.
 */
#ifndef CS_RUNS_H
#define CS_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

/* Which runs: kind "hw" or "sim" (NULL = any), name exact or a GLOB
 * (NULL = any), and with have_since those that started at since_ns or
 * later. Strings borrowed for the call. */
typedef struct cs_runs_filter {
	const char *kind;
	const char *name;
	const char *job; /* the job label (NULL = any) */
	uint64_t since_ns;
	int have_since;
} cs_runs_filter;

/* One run of the listing. */
typedef struct cs_run_row {
	int64_t id;
	char kind[8], status[16], source[64], time_unit[8];
	char name[1024];       /* cut at 1023 bytes */
	int64_t devices, metrics, samples;
	int have_span;         /* t_min and t_max are set */
	int64_t t_min, t_max;
	char job[128], rank[32]; /* labels; "" when none */
} cs_run_row;

/* The runs f selects, by id, into *rows (caller frees with free()), their
 * number in *n. 0 or an error (the store's message). */
int cs_runs_list(cs_store *s, const cs_runs_filter *f, cs_run_row **rows, size_t *n);

/* The same runs as a JSON array of run objects, appended to out. */
int cs_runs_json(cs_store *s, const cs_runs_filter *f, cs_buf *out);

/* One run's object with its device and metric lists and a summary of its
 * ranges per kind; default_metrics (a JSON array's text, borrowed) goes
 * in as "default_metrics". -ENOENT when there is no such run. */
int cs_runs_run_json(cs_store *s, int64_t run, const char *default_metrics, cs_buf *out);

/* What a run's row and its children count: the summary `import` prints
 * and the uuid DELETE names the run by to the writer. */
typedef struct cs_run_summary {
	char uuid[64];
	char name[1024];       /* cut at 1023 bytes */
	char time_unit[8];     /* "ns" or "cycle" */
	char kind[8];          /* "hw" or "sim" */
	char source[64];
	char status[16];       /* "running", "complete", "incomplete" */
	double clock_hz;       /* the run's own clock; 0 = none recorded */
	int64_t t_max;         /* the last sample's end; 0 when none */
	int64_t samples;
	int64_t metrics, devices;
} cs_run_summary;

/* Fills *out for run. 0, -ENOENT for no such run, or an error. */
int cs_runs_summary(cs_store *s, int64_t run, cs_run_summary *out);

/* A time given for run (cs_time_parse's grammar) as a stored time: from
 * the run's origin (where its times count from, its axes included: its
 * first sample, else its first range, else 0; the run JSON's "origin")
 * unless '@', converted to the run's unit at its clock.
 * 0, or -EINVAL with the reason in err (an input the run cannot convert:
 * a unit that needs the clock it lacks, past the end of time). */
int cs_runs_time(cs_store *s, int64_t run, const char *spec, uint64_t *out, char *err,
		 size_t errlen);

/* The run's clock in Hz for a clock domain of its metadata
 * (meta.clock_domains_hz.DOMAIN), or for the core (domain NULL or
 * "core"): the run's clock, else device 0's. 0 when none is known. */
double cs_runs_clock(cs_store *s, int64_t run, const char *domain);

/* The metrics a run's page and figure open on, ","-separated into out:
 * the first two of the metric set the run recorded, else the two that
 * vary most for their size (a counter named like a cycle count last), an
 * SM activity counter (sm__inst_executed*, sm__throughput*, ...) first
 * where one varies.
 * "" when none. 0 or an error. */
int cs_runs_default_metrics(cs_store *s, int64_t run, char *out, size_t outlen);

/* The unit ("" when none) and kind of the run's metric called name: 0,
 * -ENOENT, or an error. */
int cs_runs_metric_unit(cs_store *s, int64_t run, const char *name, char *unit, size_t ulen,
			char *kind, size_t klen);

/* Whether the run's metadata holds value at the JSON path ("$.a.b"). */
int cs_runs_meta_is(cs_store *s, int64_t run, const char *path, const char *value);

/* The run's metrics as a JSON array (id, name, unit, kind, cumulative). */
int cs_runs_metrics_json(cs_store *s, int64_t run, cs_buf *out);

/* The jobs (runs labelled with a job) as a JSON array of {job, runs,
 * ranks: [{run, name, rank, labels}]}, by job then rank. */
int cs_runs_jobs_json(cs_store *s, cs_buf *out);

/* The runs of one job, by id: rank -1 when a run has none (or not a
 * non-negative integer). *out is freed by the caller. 0 or an error. */
typedef struct cs_job_rank {
	int64_t run;
	char name[256];
	int64_t rank;
	int64_t world_size;  /* its world_size label, 0 when none */
	char host[128];      /* its host label, else a collector's host; "" */
	char time_unit[8];
	int64_t start_ns;
} cs_job_rank;
int cs_runs_job(cs_store *s, const char *job, cs_job_rank **out, size_t *n);

/* meta (a JSON object's text; NULL = {}) with labels (a JSON object of
 * strings) merged into its "labels" member, the given ones winning:
 * a malloc'd text in *out. 0, -EINVAL (not JSON) or -ENOMEM. */
int cs_meta_with_labels(const char *meta, const char *labels, char **out);

#endif
