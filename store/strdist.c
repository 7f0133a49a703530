/* strdist.c - edit distance; see strdist.h. */
#include "strdist.h"

#include <string.h>

size_t cs_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 200 || lb > 200)
		return 1000;
	size_t row[201];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *cs_nearest(const char *name, const char *const *cands, size_t n, size_t max_dist)
{
	const char *best = NULL;
	size_t best_d = max_dist + 1, len = strlen(name);
	for (size_t i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		size_t d = cs_edit_distance(name, cands[i]);
		if (d < best_d && d < len) {
			best_d = d;
			best = cands[i];
		}
	}
	return best;
}
