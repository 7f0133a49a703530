/*
 * overlap.h - the overlap analysis (cs_overlap_*): a run's timeline split
 * by the ranges matching A (an NCCL collective, an NVTX range) and those
 * matching B (a GEMM) into phases - only A, A and B overlapped, only B,
 * neither - with each phase's duration and per-metric sum and peak rate;
 * and B's tail, the time B keeps running after its last overlap with A.
 * web/phases.c writes it as text, JSON or CSV (docs/phases.md).
 */
#ifndef CS_OVERLAP_H
#define CS_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The phases, then the two parts of "only B": its tail and the rest. */
enum {
	CS_OV_NEITHER,
	CS_OV_A,
	CS_OV_AB,
	CS_OV_B,
	CS_OV_NPHASE,
	CS_OV_TAIL = CS_OV_NPHASE,
	CS_OV_BREST,
	CS_OV_NBUCKET
};
extern const char *const cs_overlap_names[CS_OV_NBUCKET];

typedef struct cs_overlap_seg {
	double t0, t1;
	int phase;
	int tail; /* the only-B stretch right after the last overlap */
} cs_overlap_seg;

typedef struct cs_overlap_metric {
	char name[256];
	double sum[CS_OV_NBUCKET];  /* of the values, spread over time */
	double peak[CS_OV_NBUCKET]; /* the highest rate (per unit of time), NaN: none */
	double total;
} cs_overlap_metric;

typedef struct cs_overlap {
	int64_t run;
	char run_name[256];
	int ns;                   /* the run's time is ns (else cycles) */
	size_t a_ranges, b_ranges; /* ranges matched */
	int64_t origin;           /* the doubles below count from this time */
	double span0, span1;      /* the samples' and the ranges' span */
	cs_overlap_seg *seg;
	size_t nseg;
	cs_overlap_metric *m;
	size_t nm;
	double duration[CS_OV_NBUCKET];
	double tail0, tail1;      /* NaN when there is no tail */
} cs_overlap;

/* a and b are "[KIND:]GLOB" over range names ("kernel:nccl*", "*gemm*");
 * metrics names or globs, comma-separated (NULL: every metric). 0, or
 * -ENOENT (no run, a glob matching no range: the message lists the run's
 * range kinds and a few names, no metric matching), -EINVAL, -ENOMEM,
 * with the reason in err. */
int cs_overlap_compute(cs_store *s, const char *run, const char *a, const char *b,
		       const char *metrics, uint32_t device, cs_overlap *o, char *err,
		       size_t errlen);
void cs_overlap_free(cs_overlap *o);

/* A's and B's ranges given ([t0, t1] in the run's time, borrowed) instead
 * of read by their globs (still named in messages). */
typedef struct cs_overlap_given {
	const int64_t (*a)[2];
	size_t na;
	const int64_t (*b)[2];
	size_t nb;
} cs_overlap_given;

/* cs_overlap_compute with the ranges given. */
int cs_overlap_compute_given(cs_store *s, const char *spec, const char *a_glob,
			     const char *b_glob, const char *metrics, uint32_t device,
			     const cs_overlap_given *given, cs_overlap *j, char *err,
			     size_t errlen);

/* "[KIND:]GLOB": the kind into kind ("" when none), the glob returned. */
const char *cs_overlap_spec(const char *spec, char *kind, size_t klen);

/* The time of [t0, t1) (from o->origin) that lies in phase (CS_OV_*) by
 * o's segments. */
double cs_overlap_time_in(const cs_overlap *o, double t0, double t1, int phase);

#endif
