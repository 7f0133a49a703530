/*
 * jobphases.h - the overlap analysis of a job (cs_jobphases_*): the runs
 * labelled with one job, one per rank, each split into phases as
 * overlap.h does; their A ranges (collectives) matched across ranks as
 * instances - the n-th of each collective on every rank - with each
 * instance's start skew, its straggler (the rank that started last), how
 * long every other rank waited for it and each rank's exposed (only-A)
 * time; per rank the totals. Clocks of ranks on different hosts may be
 * aligned on the collectives' ends. web/jobphases_out.c writes it as text,
 * JSON or CSV (docs/phases.md).
 */
#ifndef CS_JOBPHASES_H
#define CS_JOBPHASES_H

#include <stddef.h>
#include <stdint.h>

#include "overlap.h"
#include "store.h"

typedef struct cs_job_rankres {
	int64_t rank, run;
	char name[256];
	char host[128];
	uint32_t device;     /* the device its A ranges run on */
	int64_t offset_ns;   /* subtracted from its times (alignment) */
	cs_overlap ov;       /* its phases */
	size_t ncoll;        /* A ranges (collectives) */
	double exposed;      /* only-A time within its matched instances */
	double wait;         /* time it waited for the stragglers */
	size_t last;         /* instances it started last */
} cs_job_rankres;

/* One collective instance: the index-th of name on every rank. Arrays
 * [nranks], in the order of ranks[]; times aligned, from the job's
 * origin. */
typedef struct cs_job_coll {
	char name[64];
	size_t index;
	double *start, *end, *wait, *exposed;
	double start_skew, end_skew;
	size_t straggler;    /* index into ranks[] */
} cs_job_coll;

typedef struct cs_jobphases {
	char job[128];
	int ns;
	cs_job_rankres *ranks;
	size_t nranks;
	cs_job_coll *coll;
	size_t ncoll;
	double *cells;       /* the instances' arrays, in one block */
	int aligned;         /* 1: offsets estimated from the collectives */
	int64_t origin;      /* instance times count from this time */
	char *warnings;      /* "\n"-separated: missing ranks, count mismatches */
	size_t nwarn;
} cs_jobphases;

enum { CS_JOB_ALIGN_NONE, CS_JOB_ALIGN_COLLECTIVES };

/* job's runs by rank; a and b as cs_overlap_compute's; metrics likewise
 * (NULL: every metric). 0, or -ENOENT (no such job, a rank without A or
 * B), -EINVAL (two runs with one rank, a run without a rank), -ENOMEM,
 * with the reason in err. */
int cs_jobphases_compute(cs_store *s, const char *job, const char *a, const char *b,
			 const char *metrics, int align, cs_jobphases *j, char *err,
			 size_t errlen);
void cs_jobphases_free(cs_jobphases *j);

/* The collective an NCCL kernel's name names ("ncclDevKernel_AllReduce_
 * Sum_f32_RING_LL(...)" and "ncclKernel_AllReduce_RING_LL_Sum_float(...)"
 * are both "AllReduce"); any other name is its own key. Into out. */
void cs_jobphases_key(const char *name, char *out, size_t outlen);

#endif
