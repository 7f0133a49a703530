/*
 * strdist.h - edit distance and the nearest of a few names (cs_edit_*,
 * cs_nearest), for "did you mean" in every message that refuses a name:
 * commands, options, metrics.
 */
#ifndef CS_STRDIST_H
#define CS_STRDIST_H

#include <stddef.h>

/* Levenshtein distance of a and b; 1000 when either is over 200 bytes. */
size_t cs_edit_distance(const char *a, const char *b);

/* The entry of cands[0..n) closest to name, when it is within max_dist
 * edits (and closer than the name is long, so that "x" suggests
 * nothing); NULL otherwise. NULL entries are skipped. Borrowed from
 * cands. */
const char *cs_nearest(const char *name, const char *const *cands, size_t n, size_t max_dist);

#endif
