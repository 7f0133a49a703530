/*
 * patterns.h - name patterns for hooks (cs_pat_*): the comma-separated
 * glob lists users write for --apis and --kernels ("cudaMemcpy*",
 * "nccl*AllGather*"), and the suffix rule that lets "cudaMemcpy" match
 * every versioned callback name (cudaMemcpy_v3020, cudaMemcpy_ptds_v7000).
 *
 * No CUPTI here: the callback-name table is walked in hooks.c; this part
 * is plain string work and unit-tested on any machine.
 *
 * Threads: a cs_pat list is immutable after cs_pat_parse(); any thread may
 * match against it.
 */
#ifndef CS_PATTERNS_H
#define CS_PATTERNS_H

#include <stddef.h>

typedef struct cs_pat cs_pat;

/* Parses "a*,b,c?" (whitespace around items ignored, empty items
 * skipped). Returns a list the caller frees with cs_pat_free(), or NULL
 * with the reason in err (an item over 255 bytes, an unclosed '['). An
 * empty text gives an empty list (matches nothing). */
cs_pat *cs_pat_parse(const char *text, char *err, size_t errlen);
void cs_pat_free(cs_pat *p);

size_t cs_pat_count(const cs_pat *p);
/* Item i as written; borrowed until cs_pat_free(). */
const char *cs_pat_item(const cs_pat *p, size_t i);

/* The index of the first item matching name, or -1. Glob syntax is
 * fnmatch(3)'s: '*', '?', '[...]'. */
int cs_pat_match(const cs_pat *p, const char *name);

/* The callback name without its leading underscores and its version and
 * stream suffixes, repeatedly stripped from the end: "_v<digits>",
 * "_ptsz", "_ptds" ("cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync",
 * CUDA 13's "__cudaLaunchKernel_ptsz_v13000" -> "cudaLaunchKernel", so
 * the default cudaLaunchKernel* hooks <<<>>> launches). Writes at most
 * outlen bytes including the NUL; returns out. */
char *cs_pat_base_name(const char *name, char *out, size_t outlen);

/* Matches a callback name: the item is tried against the base name and
 * against the full name, so both "cudaMemcpy" and "cudaMemcpy_v3020"
 * work. Returns the item index or -1. */
int cs_pat_match_callback(const cs_pat *p, const char *name);

/* How a CUDA API's device work relates to its return, from its base
 * name: CS_API_SYNC_POINT waits for earlier device work
 * (cudaDeviceSynchronize, cuStreamSynchronize, cudaEventSynchronize, and
 * synchronous copies, which also do their own work); CS_API_ASYNC returns
 * before its device work ends (launches, graph launches, *Async, memset);
 * CS_API_SYNC is done when it returns. Window mode closes an async
 * call's window at the next sync point. */
enum cs_api_class { CS_API_SYNC = 0, CS_API_ASYNC, CS_API_SYNC_POINT };

/* Splits a metric list ("a,b c\td", as CYCLESCOPE_METRICS or a set file
 * line holds it) on commas and whitespace into its non-empty words.
 * Returns a NULL-terminated array in one allocation (the caller frees it
 * with one free()) and the count in *n; NULL when out of memory. */
char **cs_words(const char *text, size_t *n);
enum cs_api_class cs_pat_api_class(const char *base);

#endif
