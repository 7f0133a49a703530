/*
 * collector.h - what libcyclescope_collector.so exports besides
 * InitializeInjection: the offline metric catalog and hook resolution
 * (cs_catalog_*, cs_hooks_*), which the cyclescope binary reaches through
 * dlopen (daemon/collector_lib.c) so that it builds and runs without CUDA.
 *
 * Everything here works without a GPU or driver: it uses the CUPTI host
 * API (metric catalog, config images, pass counts for a named chip) and
 * cuptiGetCallbackName. No CUPTI types cross this header.
 *
 * Threads: not thread safe; one call at a time.
 */
#ifndef CS_COLLECTOR_H
#define CS_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever a declaration below changes; the CLI refuses a library
 * built with another value. */
#define CS_COLLECTOR_ABI 1

/* The API patterns hooked when none are given (`cyclescope run --apis`,
 * CYCLESCOPE_APIS). */
#define CS_COLLECTOR_DEFAULT_APIS                                                \
	"cudaMemcpy*,cudaMemset*,cudaLaunchKernel*,cudaGraphLaunch,cuMemcpy*,"    \
	"cuLaunchKernel*,cuGraphLaunch"

/* One metric as the catalog describes it. Strings borrowed for the
 * callback. */
typedef struct cs_cat_metric {
	const char *name;        /* with rollup: "lts__t_sectors.sum" */
	const char *kind;        /* counter | ratio | throughput */
	const char *unit;        /* dimension: byte, l2_sector, percent, ... */
	const char *hw_unit;     /* lts, dram, sm, ... */
	const char *description;
	int passes;              /* PM-sampling passes alone; 1 = sampleable */
} cs_cat_metric;

typedef int (*cs_cat_fn)(void *ctx, const cs_cat_metric *m);

/* Calls fn for every base metric of chip with its default rollup (.sum
 * for counters, .ratio, .avg.pct_of_peak_sustained_elapsed for
 * throughputs) that PM sampling accepts in one pass; with all, also for
 * those needing more passes (passes > 1) or refused (passes 0). A
 * nonzero return from fn stops the walk and is returned. 0, a negative
 * errno with the reason in err (an unknown chip lists the known ones). */
int cs_catalog_list(const char *chip, int all, cs_cat_fn fn, void *ctx,
		    char *err, size_t errlen);

/* The verdict on a metric set. */
typedef struct cs_cat_check {
	int passes;                /* passes the whole set needs; 0 = refused */
	long bad;                  /* index of the metric that breaks it, -1 */
	char reason[1024];         /* one line naming it and the fix */
	uint64_t bytes_per_sample; /* hardware-buffer estimate, 0 = unknown */
} cs_cat_check;

/* Checks that names[0..n) can be PM-sampled together on chip: each name
 * must be known to PM sampling and the set must fit one pass. Returns 0
 * with the verdict in *out (passes == 1 means usable), or a negative
 * errno with the reason in err when the check itself could not run. */
int cs_catalog_check(const char *chip, const char *const *names, size_t n,
		     cs_cat_check *out, char *err, size_t errlen);

/* Describes one metric (kind, unit) for the run's metric rows; fills *m
 * with strings valid until the next catalog call. 0 or -ENOENT. */
int cs_catalog_describe(const char *chip, const char *name, cs_cat_metric *m);

/* Calls fn for every runtime and driver callback whose name matches one
 * of the comma-separated patterns (see patterns.h): domain "runtime" or
 * "driver", its id, its full name and the pattern that took it. Returns
 * the number of matches, or a negative errno with the reason in err. */
typedef int (*cs_hook_fn)(void *ctx, const char *domain, unsigned cbid,
			  const char *name, const char *pattern);
int cs_hooks_list(const char *patterns, cs_hook_fn fn, void *ctx, char *err,
		  size_t errlen);

/* CS_COLLECTOR_ABI of the library. */
int cs_collector_abi(void);

#endif
