/*
 * check.h - verifying a whole database file (cs_store_check), for
 * `cyclescope check`.
 */
#ifndef CS_CHECK_H
#define CS_CHECK_H

#include <stdint.h>

#include "store.h"

typedef struct cs_check_stats {
	int64_t timelines, chunks;
	int64_t unchecked_timelines, unchecked_chunks; /* format 1: no checksums */
	int64_t problems;
} cs_check_stats;

/* Called once per problem with a line naming where it is (run, metric,
 * device, seq) and what is wrong. */
typedef void (*cs_check_fn)(void *arg, const char *problem);

/* Runs PRAGMA integrity_check (quick_check when quick), then decodes every
 * timeline and value chunk with its checksums and holds it against its row
 * and its timeline. Problems go to fn and are counted in st->problems; a
 * file that cannot be read at all is a problem too. Returns 0, or -ENOMEM. */
int cs_store_check(cs_store *s, int quick, cs_check_fn fn, void *arg, cs_check_stats *st);

#endif
