/*
 * expr.h - a metric expression over one run's stored metrics (cs_expr_*):
 * metric_map.h's grammar (names, numbers, + - * /, parentheses,
 * sum("GLOB"), sum_sm("NAME"), rate(E), delta(E)) parsed once, bound to the
 * run's metric ids, then evaluated sample by sample in time order. The
 * correlation (corr_job.h) and the series CSV's expr= columns
 * (series_csv.h) both evaluate through it, so an expression means the same
 * in both.
 */
#ifndef CS_EXPR_H
#define CS_EXPR_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_expr cs_expr;

/* Parses text. NULL with "expression 'TEXT', column N: why" in err. */
cs_expr *cs_expr_parse(const char *text, char *err, size_t errlen);

/* Whether text[0..len) reads as an expression rather than a metric name
 * (an operator, a parenthesis or a quote in it; a '-' only with a space
 * beside it, as names hold dashes): where a metric is named and no metric
 * has that name, an expression is taken instead (one grammar for
 * --metric and --expr). */
int cs_expr_looks(const char *text, size_t len);
void cs_expr_free(cs_expr *e);

/* The text as given. */
const char *cs_expr_text(const cs_expr *e);

/* 1 when the expression uses rate(): its values are per unit of the
 * sample length given to cs_expr_eval. */
int cs_expr_is_rate(const cs_expr *e);

/* Binds the expression's names to a run's metrics: names[i] is the name of
 * metric ids[i] (nids of them). Every metric it reads is added to
 * used[0..*nused) once (used has room for nids entries; ids already there
 * are shared), and evaluation reads values in that order. 0, or -ENOENT
 * naming run_name and the missing metric, -ENOMEM. */
int cs_expr_bind(cs_expr *e, const char *run_name, int64_t run, char (*names)[256],
		 const uint32_t *ids, uint32_t nids, uint32_t *used, size_t *nused, char *err,
		 size_t errlen);

/* Forgets the previous sample (delta()'s): the next one is a first one,
 * as at a new device's or a new window's start. */
void cs_expr_reset(cs_expr *e);

/* The column of metric id in used[0..*nused), appended when not there yet
 * (used has room for it): how several readers share one scan. */
size_t cs_expr_column(uint32_t *used, size_t *nused, uint32_t id);

/* The expression for the next sample, values[k] being metric used[k]'s
 * (NaN = absent) and len the sample's length for rate(). Samples must come
 * in time order: delta() keeps the previous one. NaN when absent. */
double cs_expr_eval(cs_expr *e, const double *values, double len);

#endif
