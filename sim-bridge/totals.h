/*
 * totals.h - running totals among per-window counters (cs_totals_*), for
 * every importer: the import's --cumulative names (and those an importer
 * marks) are stored as per-sample deltas; what every metric's values do
 * from sample to sample is kept, so that at the end counters that never
 * went down while others did are named in one warning with how to store
 * them as deltas (unless --per-window).
 *
 * Threads: one thread per instance.
 */
#ifndef CS_TOTALS_H
#define CS_TOTALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_total {
	char *name;
	int cum;      /* stored as deltas */
	double last;  /* the previous raw value */
	uint64_t n, ups, downs;
} cs_total;

typedef struct cs_totals {
	cs_total *m;
	size_t n, cap;
	const char *cumulative; /* comma-separated names, borrowed */
	const char *label;      /* for the warning, borrowed; NULL = no warning */
	int per_window;
	uint64_t restarts;      /* a running total going down more often than
				   this is said at the end (UINT64_MAX: never) */
} cs_totals;

void cs_totals_init(cs_totals *t, const char *cumulative, int per_window, const char *label);
/* Declares the next metric (index t->n). 0 or -ENOMEM. */
int cs_totals_add(cs_totals *t, const char *name);
/* Rows of values (row i's metric k at v[i * stride + k], k < t->n): seen,
 * running totals turned into deltas in place (a value below the last is
 * a restart, counted from 0). */
void cs_totals_rows(cs_totals *t, double *v, size_t rows, size_t stride);
void cs_totals_mark(cs_totals *t, size_t idx);
/* The warnings, if any: running totals stored as deltas that went down
 * more than t->restarts times; counters that look like running totals
 * (what is a counter: not an average, rate, ratio, utilisation,
 * occupancy, latency or percentage by its name). */
void cs_totals_report(const cs_totals *t, const char *where);
void cs_totals_free(cs_totals *t);

#endif
