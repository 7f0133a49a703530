/*
 * corr_out.h - a correlation request answered as text, JSON or CSV
 * (cs_corr_out): loads both sides (corr_job.h), compares them
 * (correlate.h) and formats the result. Shared by `cyclescope correlate`
 * and GET /api/v1/correlate, so both say exactly the same.
 */
#ifndef CS_CORR_OUT_H
#define CS_CORR_OUT_H

#include <stddef.h>

#include "buf.h"
#include "metric_map.h"
#include "store.h"

enum cs_corr_format { CS_CORR_TEXT = 0, CS_CORR_JSON, CS_CORR_CSV, CS_CORR_SVG };

typedef struct cs_corr_request {
	const char *hw, *sim;              /* runs */
	const char *hw_metric, *sim_metric; /* one pair, or */
	const cs_mmap *map;                /* every pair of a map (NCU name both sides) */
	const char *hw_window, *sim_window;
	double hw_clock_hz;                /* 0 = the run's */
	const char *sim_clock;             /* NULL, or MHz or a clock domain of
					      the sim run (core, l2, icnt, dram):
					      its cycles rescaled onto the
					      hardware's clock */
	double bin_cycles;                 /* 0 = the longer median sample */
	int max_lag;
	int kernels;                       /* kernel-level mode */
	int format;                        /* cs_corr_format */
	int with_bins;                     /* JSON: add the aligned bins and the
					      simulator's kernel ranges (report) */
	int svg_pair;                      /* SVG: the figure of this pair (from 0,
					      among those in both runs; -1 = every
					      figure, one document after another):
					      the two binned series with the
					      simulator's kernels shaded and their
					      difference below, or the per-kernel
					      scatter (figure.h) */
	uint64_t max_bins, max_work;       /* a server's bounds (0 = none): see
					      cs_corr_opts */
	uint64_t deadline_ms;              /* CLOCK_MONOTONIC ms, 0 = none */
	int (*cancelled)(void *ctx);       /* the client went away: stop (NULL = never) */
	void *cancel_ctx;
} cs_corr_request;

/* Appends the answer to out. 0, or a negative errno with the reason in
 * err (-ENOENT: a run, metric or window that is not there; -EINVAL: a
 * malformed expression or window; -E2BIG: over the request's bounds, the
 * message giving the figures; -ETIMEDOUT: past its deadline). Notes about
 * skipped map pairs go to the log. */
int cs_corr_out(cs_store *s, const cs_corr_request *rq, cs_buf *out, char *err, size_t errlen);

#endif
