/*
 * totals.c - running totals among per-window counters (totals.h).
 */
#include "totals.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

void cs_totals_init(cs_totals *t, const char *cumulative, int per_window, const char *label)
{
	memset(t, 0, sizeof *t);
	t->cumulative = cumulative;
	t->per_window = per_window;
	t->label = label;
	t->restarts = UINT64_MAX;
}

int cs_totals_add(cs_totals *t, const char *name)
{
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 64;
		cs_total *g = realloc(t->m, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		t->m = g;
		t->cap = c;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	t->m[t->n++] = (cs_total){.name = copy, .cum = cs_list_has(t->cumulative, name),
				  .last = NAN};
	return 0;
}

void cs_totals_rows(cs_totals *t, double *v, size_t rows, size_t stride)
{
	/* Row by row: the values in memory order, the state of every metric
	 * hot in cache. */
	size_t n = t->n;
	cs_total *m = t->m;
	for (size_t i = 0; i < rows; i++) {
		double *row = v + i * stride;
		for (size_t k = 0; k < n; k++) {
			double x = row[k];
			if (x != x) /* NaN: absent */
				continue;
			cs_total *c = &m[k];
			double last = c->last;
			c->ups += x > last;
			c->downs += x < last; /* false against the first NaN */
			if (c->cum)
				row[k] = c->n && x >= last ? x - last : x;
			c->last = x;
			c->n++;
		}
	}
}

void cs_totals_mark(cs_totals *t, size_t idx)
{
	if (idx < t->n)
		t->m[idx].cum = 1;
}

void cs_totals_report(const cs_totals *t, const char *where)
{
	static const char *const not_counters[] = {"avg", "average", "rate", "ratio", "util",
						   "occupancy", "latency", "percent", "pct"};
	if (!t->label)
		return;
	for (size_t k = 0; k < t->n; k++)
		if (t->m[k].cum && t->m[k].downs > t->restarts)
			cs_log(CS_LOG_WARN, "%s%s: %s, stored as deltas of a running total, went down %llu "
			       "times (more than its %llu restarts): if it is per-window, re-import with "
			       "--per-window", t->label, where ? where : "", t->m[k].name,
			       (unsigned long long)t->m[k].downs, (unsigned long long)t->restarts);
	int others_drop = 0;
	for (size_t k = 0; k < t->n; k++)
		others_drop |= t->m[k].downs > 0;
	if (!others_drop || t->per_window)
		return;
	char names[600] = "";
	size_t found = 0, len = 0;
	for (size_t k = 0; k < t->n; k++) {
		const cs_total *m = &t->m[k];
		if (m->cum || m->n < 8 || m->downs || m->ups < 3)
			continue;
		int skip = 0;
		for (size_t i = 0; i < sizeof not_counters / sizeof *not_counters; i++)
			skip |= strstr(m->name, not_counters[i]) != NULL;
		if (skip)
			continue;
		if (found < 8 && len < sizeof names - 1)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", found ? "," : "",
						m->name);
		found++;
	}
	if (found)
		cs_log(CS_LOG_WARN, "%s%s: %s%s never decrease%s over the run while other counters do: "
		       "running totals? Stored as given; re-import with --cumulative %s to store "
		       "per-sample deltas, or use delta(NAME) in correlate", t->label, where ? where : "",
		       names, found > 8 ? ",..." : "", found == 1 ? "s" : "", names);
}

void cs_totals_free(cs_totals *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->m[k].name);
	free(t->m);
	memset(t, 0, sizeof *t);
}
