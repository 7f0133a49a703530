/*
 * collector_lib.h - finding and loading libcyclescope_collector.so from
 * the CLI (cs_colllib_*), so that `cyclescope` itself links no CUDA: the
 * `metrics` and `run` commands reach the CUPTI host API through it, and
 * `run` points CUDA_INJECTION64_PATH at it. Also where metric lists and
 * the shipped metric sets (configs/metric-sets/) are read.
 */
#ifndef CS_COLLECTOR_LIB_H
#define CS_COLLECTOR_LIB_H

#include <stddef.h>

#include "collector.h"

typedef struct cs_colllib {
	char path[4096];  /* absolute path of the library */
	void *handle;
	int (*list)(const char *, int, cs_cat_fn, void *, char *, size_t);
	int (*check)(const char *, const char *const *, size_t, cs_cat_check *, char *, size_t);
	int (*hooks)(const char *, cs_hook_fn, void *, char *, size_t);
	int (*describe)(const char *, const char *, cs_cat_metric *);
} cs_colllib;

/* Finds the library: $CYCLESCOPE_COLLECTOR, else next to the cyclescope
 * executable, else ../lib/cyclescope/ beside it. 0, or -ENOENT with the
 * places tried (and why a found one would not load) in err. */
int cs_colllib_open(cs_colllib *lib, char *err, size_t errlen);
void cs_colllib_close(cs_colllib *lib);

/* The unit of an NCU-named metric ("lts__t_sectors.sum" -> "l2_sector",
 * "gpc__cycles_elapsed.max" -> "gpc_cycle") from CUPTI's catalog for
 * GH100 (names and units agree across chips), or NULL: not NCU-shaped (no
 * "__"), not in the catalog, no collector library, or a sanitizer build
 * (CUPTI's RTLD_DEEPBIND aborts those). The library is
 * loaded at the first NCU-shaped name and kept. A cs_unit_fn for
 * cs_producer_unit_source; not thread-safe (the CLI's import thread). */
const char *cs_colllib_unit(const char *name);

/* The path of the libcupti the library loaded (for NVTX_INJECTION64_PATH),
 * or NULL. Static storage. */
const char *cs_colllib_cupti_path(void);

/* A metric list: "a,b,c", or "@FILE" where FILE is a path or the name of
 * a shipped set ("@hopper-l2" -> configs/metric-sets/hopper-l2.txt);
 * files hold one or more names per line, '#' starts a comment. On 0,
 * *names (n entries) is owned by the caller: cs_colllib_free_list(). */
int cs_colllib_read_metrics(const char *spec, char ***names, size_t *n, char *err,
			    size_t errlen);
void cs_colllib_free_list(char **names, size_t n);

/* The names joined with commas, malloc'd; NULL when out of memory. */
char *cs_colllib_join(char *const *names, size_t n);

#endif
