/*
 * corr_job.h - a correlation request against the store (cs_cjob_*): each
 * side is a run, a metric expression over its stats (metric_map.h's
 * grammar: names, numbers, + - * /, parentheses, sum("GLOB"),
 * sum_sm("NAME"), rate(E), delta(E)) and a window; this loads the samples of the window,
 * evaluates the expression per sample and puts them on a cycle axis from
 * the window start (hardware ns times the clock; simulator cycles as they
 * are), ready for correlate.h. Also per-kernel totals for kernel-level
 * correlation. Used by `cyclescope correlate` (and the HTTP API).
 *
 * Windows: "" (the whole run), "T0:T1" (run time units), "KIND:GLOB#N"
 * (the N-th, from 0, range of that kind whose name matches: "kernel:*gemm*#2",
 * "api:cudaMemcpy#0", "nvtx:overlap"), "#N" (the N-th kernel: sim-kernel
 * ranges for simulator runs, kernel ranges for hardware runs).
 */
#ifndef CS_CORR_JOB_H
#define CS_CORR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "correlate.h"
#include "store.h"

typedef struct cs_cjob_spec {
	const char *run;    /* id, name or uuid */
	const char *expr;   /* metric expression */
	const char *window; /* NULL = whole run */
	uint32_t device;
	double clock_hz;    /* hardware clock; 0 = the run's, else device 0's */
	double cycle_scale; /* cycles are multiplied by this (0 = 1): a
			       simulator's core cycles put on another clock */
} cs_cjob_spec;

typedef struct cs_cjob_side {
	int64_t run;
	char run_name[256];
	char unit[16];        /* "ns" or "cycle" */
	double clock_hz;      /* used for ns -> cycles (0 for cycle runs) */
	uint64_t w0, w1;      /* window in run units */
	char window[320];     /* what the window resolved to, in words */
	size_t n;
	double *t0, *t1, *v;  /* cycles from w0; v = the expression */
	double cycles;        /* window length in cycles */
	double median_sample; /* cycles */
	double cycle_scale;   /* the spec's, 1 when not given */
	double cycles_per_unit; /* run time unit -> cycles (clock and scale) */
	int is_rate;          /* the expression uses rate(): v holds rate x
				 sample length, bins are divided by their
				 width, kernel totals by the kernel's */
} cs_cjob_side;

/* Loads one side. 0, or a negative errno with a message naming the run,
 * the metric or the window and what was expected. */
int cs_cjob_load(cs_store *s, const cs_cjob_spec *spec, cs_cjob_side *out, char *err,
		 size_t errlen);
void cs_cjob_side_free(cs_cjob_side *side);

/* A clock in Hz from "MHZ" (a number) or a clock domain of run ("core",
 * "l2", "icnt", "dram": the run's meta.clock_domains_hz, core falling back
 * to its clock_hz). 0, -EINVAL for malformed text, -ENOENT when the run
 * or its clock is not there; the reason in err. */
int cs_cjob_clock(cs_store *s, const char *run, const char *what, double *hz, char *err,
		  size_t errlen);

/* The series view of a loaded side (borrowed). */
cs_corr_series cs_cjob_series(const cs_cjob_side *side);

/* Kernel level: the side's expression summed over each kernel range
 * (kind "kernel" for hardware, "sim-kernel" for simulator runs) of its
 * run, in order. names[i] and totals[i] are malloc'd (free with
 * cs_cjob_kernels_free). The side must have been loaded with the whole
 * run as its window. */
typedef struct cs_cjob_kernels {
	size_t n;
	char **names;
	double *totals;
	double *t0, *t1; /* cycles from the window start (kernel_spans only) */
} cs_cjob_kernels;

/* The kernel ranges that overlap the side's window, as cycles from its
 * start plus shift (for drawing). Free with cs_cjob_kernels_free. */
int cs_cjob_kernel_spans(cs_store *s, const cs_cjob_side *side, double shift,
			 cs_cjob_kernels *k, char *err, size_t errlen);
int cs_cjob_kernel_totals(cs_store *s, const cs_cjob_side *side, cs_cjob_kernels *k,
			  char *err, size_t errlen);
void cs_cjob_kernels_free(cs_cjob_kernels *k);

/* Pairs hw and sim kernels by name in order (each sim kernel takes the
 * next unused hw kernel of the same name); when no name matches at all,
 * by position. Fills hw_out/sim_out (n pairs, caller's arrays of
 * min(hw->n, sim->n)) and returns n; idx_out[i] = sim kernel index. */
size_t cs_cjob_match(const cs_cjob_kernels *hw, const cs_cjob_kernels *sim, double *hw_out,
		     double *sim_out, size_t *idx_out);

#endif
