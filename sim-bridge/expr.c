/* expr.c - metric expressions bound to a run's metrics; see expr.h. */
#include "expr.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_map.h"

struct cs_expr {
	char *text;
	cs_mmap *m;
	size_t nnames;
	size_t **cols; /* per name: the value columns summed into it */
	size_t *ncols;
	double *nv;    /* per name: this sample's value */
	double *state; /* delta()'s previous values */
};

cs_expr *cs_expr_parse(const char *text, char *err, size_t errlen)
{
	/* metric_map parses "target = expression" lines: the expression is
	 * given a target, and the column of an error counts from it. */
	size_t n = strlen(text);
	char *line = malloc(n + 5);
	cs_expr *e = calloc(1, sizeof *e);
	if (!line || !e || !(e->text = strdup(text))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(line, n + 5, "x = %s", text);
	char perr[512];
	e->m = cs_mmap_parse(line, n + 4, "expr", perr, sizeof perr);
	if (!e->m) {
		int col = 0;
		const char *msg = perr;
		if (sscanf(perr, "expr:1:%d:", &col) == 1 && (msg = strchr(perr + 7, ':')))
			msg += 2;
		/* a long expression is quoted by its start: the reason must fit */
		snprintf(err, errlen, "expression '%.80s%s', column %d: %s", text, n > 80 ? "..." : "",
			 col > 4 ? col - 4 : 1, msg ? msg : perr);
		goto fail;
	}
	e->nnames = cs_mmap_names(e->m);
	e->cols = calloc(e->nnames + 1, sizeof *e->cols);
	e->ncols = calloc(e->nnames + 1, sizeof *e->ncols);
	e->nv = calloc(e->nnames + 1, sizeof *e->nv);
	e->state = calloc(cs_mmap_state_len(e->m) + 1, sizeof *e->state);
	if (!e->cols || !e->ncols || !e->nv || !e->state) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	cs_mmap_state_init(e->m, e->state);
	free(line);
	return e;
fail:
	free(line);
	cs_expr_free(e);
	return NULL;
}

void cs_expr_free(cs_expr *e)
{
	if (!e)
		return;
	for (size_t k = 0; e->cols && k < e->nnames; k++)
		free(e->cols[k]);
	free(e->cols);
	free(e->ncols);
	free(e->nv);
	free(e->state);
	cs_mmap_free(e->m);
	free(e->text);
	free(e);
}

const char *cs_expr_text(const cs_expr *e)
{
	return e->text;
}

int cs_expr_is_rate(const cs_expr *e)
{
	return cs_mmap_is_rate(e->m, 0);
}

void cs_expr_reset(cs_expr *e)
{
	cs_mmap_state_init(e->m, e->state);
}

size_t cs_expr_column(uint32_t *used, size_t *nused, uint32_t id)
{
	for (size_t u = 0; u < *nused; u++)
		if (used[u] == id)
			return u;
	used[*nused] = id;
	return (*nused)++;
}

int cs_expr_bind(cs_expr *e, const char *run_name, int64_t run, char (*names)[256],
		 const uint32_t *ids, uint32_t nids, uint32_t *used, size_t *nused, char *err,
		 size_t errlen)
{
	for (size_t k = 0; k < e->nnames; k++) {
		int glob;
		const char *want = cs_mmap_name(e->m, k, &glob);
		free(e->cols[k]);
		e->ncols[k] = 0;
		e->cols[k] = calloc(nids + 1, sizeof **e->cols);
		if (!e->cols[k]) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < nids; i++) {
			if (!names[i][0] ||
			    (glob ? fnmatch(want, names[i], 0) != 0 : strcmp(want, names[i]) != 0))
				continue;
			e->cols[k][e->ncols[k]++] = cs_expr_column(used, nused, ids[i]);
		}
		if (!e->ncols[k]) {
			snprintf(err, errlen, "run %s has no metric %s'%s' (its metrics: cyclescope "
				 "query \"SELECT name FROM metrics WHERE run = %lld\")", run_name,
				 glob ? "matching " : "", want, (long long)run);
			return -ENOENT;
		}
	}
	return 0;
}

double cs_expr_eval(cs_expr *e, const double *values, double len)
{
	for (size_t k = 0; k < e->nnames; k++) {
		double v = NAN;
		for (size_t j = 0; j < e->ncols[k]; j++) {
			double x = values[e->cols[k][j]];
			if (!isnan(x))
				v = isnan(v) ? x : v + x;
		}
		e->nv[k] = v;
	}
	return cs_mmap_eval_sample(e->m, 0, e->nv, len, e->state);
}

int cs_expr_looks(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == '+' || c == '*' || c == '/' || c == '(' || c == ')' || c == '"')
			return 1;
		if (c == '-' && ((i && text[i - 1] == ' ') || (i + 1 < len && text[i + 1] == ' ')))
			return 1;
	}
	return 0;
}
