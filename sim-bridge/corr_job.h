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
	int same_unit;      /* an ns run compared with another ns run: its ns are
			       the axis (clock_hz 1e9), no clock needed */
	const char *clock_option; /* the option that gives this side's clock, for
				     the message when none is found (NULL:
				     --hw-clock-mhz) */
	const char *metric_prefix; /* NULL, or only the run's metrics named
				      PREFIX:NAME are seen, as NAME (one
				      configuration of a run that holds several) */
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
	char axis[160];       /* the axis in words: "cycles from
				 gpc__cycles_elapsed.max", "1755.0 MHz (the
				 run's clock)", "cycles (the run's unit)" */
	char axis_metric[64]; /* the counter, "" when a clock is the axis */
	const char *axis_unit; /* what the axis counts: "cycles", or "ns" when
				  two ns runs are compared on their own unit */
	/* A counter axis: run time -> cycles from w0, piecewise linear
	 * through these knots (ascending time). */
	size_t nknots;
	double *kt, *kc;
	int per_kernel_samples; /* the run's samples are each one kernel's
				   own (meta.kernel_accounting "per-kernel") */
} cs_cjob_side;

/* Run time t (run units) -> cycles from the side's window start. */
double cs_cjob_cycles(const cs_cjob_side *side, double t);

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

/* Kernel level: the side's expression per kernel range (kind "kernel"
 * for hardware, "sim-kernel" for simulator runs) of its run, in order of
 * start. A sample's time is credited to the kernel running in it when
 * exactly one runs; time in which several kernels run is credited to
 * none: those kernels are marked shared (with each other) and their
 * totals are NaN, so nothing is counted twice and nothing is apportioned
 * by guess. Where the run's samples are each one kernel's own
 * (per_kernel_samples), a sample spanning exactly one kernel's range is
 * that kernel's value. kernels_total + shared_total + outside_total is
 * the side's total. The side must have been loaded with the whole run as
 * its window. */
typedef struct cs_cjob_kernels {
	size_t n;
	char **names;
	char **apps;      /* the range's args.app (an application of a suite), NULL */
	double *totals;
	double *t0, *t1;  /* cycles from the window start */
	int64_t *uid;     /* correlation id (the simulator's launch uid), -1 */
	int64_t *stream;  /* -1 = none */
	int sim;          /* sim-kernel ranges: uid is the launch uid */
	/* kernel_totals only: */
	unsigned char *shared;
	size_t **shared_with; /* the first 8 indices, ended by SIZE_MAX; NULL
				 when alone */
	size_t *shared_n;     /* how many it ran beside */
	double *overlap;      /* cycles of the kernel that ran beside others */
	double kernels_total, shared_total, outside_total;
} cs_cjob_kernels;

/* The kernel ranges that overlap the side's window, as cycles from its
 * start plus shift (for drawing). Free with cs_cjob_kernels_free. */
int cs_cjob_kernel_spans(cs_store *s, const cs_cjob_side *side, double shift,
			 cs_cjob_kernels *k, char *err, size_t errlen);
int cs_cjob_kernel_totals(cs_store *s, const cs_cjob_side *side, cs_cjob_kernels *k,
			  char *err, size_t errlen);
void cs_cjob_kernels_free(cs_cjob_kernels *k);

/* How a pair of kernels was matched. */
enum cs_cjob_how { CS_MATCH_UID = 0, CS_MATCH_NAME, CS_MATCH_DEMANGLED, CS_MATCH_POSITION };
const char *cs_cjob_how_name(int how);

typedef struct cs_cjob_pair {
	size_t hw, sim; /* kernel indices */
	int how;        /* cs_cjob_how */
} cs_cjob_pair;

/* Pairs hw and sim kernels: by uid where both are simulator runs and the
 * names (demangled, without parameters) agree; then by name in order (each sim
 * kernel takes the next unused hw kernel of the same name), then by
 * demangled name in order; when nothing matched so far, by position.
 * out has room for min(hw->n, sim->n) pairs; returns the count, in sim
 * order. */
size_t cs_cjob_match(const cs_cjob_kernels *hw, const cs_cjob_kernels *sim, cs_cjob_pair *out);

/* A kernel name demangled (Itanium C++ ABI): "_Z5saxpyifPfS_" ->
 * "saxpy(int, float, float*, float*)"; a name that is not mangled as it
 * is. Into out; returns out. */
char *cs_cjob_demangle(const char *name, char *out, size_t outlen);

/* A kernel name demangled (Itanium C++ ABI) and cut before its
 * parameter list: "_Z5saxpyifPfS_" -> "saxpy", "void gemm<float>(...)"
 * -> "void gemm<float>". Into out; returns out. */
char *cs_cjob_base_name(const char *name, char *out, size_t outlen);

/* Both sides of one comparison: the hardware run's expression and the
 * simulator run's, loaded the same way for the binned and the kernel
 * level (kernel level takes no windows). */
typedef struct cs_cjob_both_spec {
	const char *hw, *sim;           /* runs */
	const char *hw_expr, *sim_expr;
	const char *hw_window, *sim_window;
	double hw_clock_hz;             /* 0 = the run's */
	const char *sim_clock;          /* NULL, or MHz or a clock domain of the
					   simulator run: its cycles rescaled onto
					   the hardware's clock */
} cs_cjob_both_spec;

typedef struct cs_cjob_both {
	cs_cjob_side h, m;
	double hw_hz, sim_hz; /* sim_hz > 0 when sim_clock rescaled it */
} cs_cjob_both;

/* 0, or a negative errno with the reason (naming the side) in err. */
int cs_cjob_both_load(cs_store *s, const cs_cjob_both_spec *spec, cs_cjob_both *p, char *err,
		      size_t errlen);
void cs_cjob_both_free(cs_cjob_both *p);

/* The binned comparison of a loaded pair in bins of bin cycles (a rate's
 * bins are its means over the bin); warn gets up to 4 warnings, *nwarn
 * their number. 0, or a negative errno with the reason in err. */
int cs_cjob_compare(const cs_cjob_both *p, double bin, const cs_corr_opts *o, cs_corr_result *r,
		    char warn[4][256], size_t *nwarn, char *err, size_t errlen);

#endif
