/*
 * corrs.h - saved suite correlations (cs_corrs_*): the correlations table
 * (schema v7): `correlate --suite --save` keeps an answer with its label
 * and command; `cyclescope correlations` and GET /api/v1/correlations
 * list them, and the trend figure reads each statistic's figures per
 * configuration across them. Files older than v7, opened read-only, have
 * none saved.
 */
#ifndef CS_CORRS_H
#define CS_CORRS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"

/* Saves result (a suite correlation's JSON answer: suite_out.h) under
 * label and command (either may be ""), now; its id in *id. 0, -EINVAL
 * (result is not that JSON) or a store error. */
int cs_corrs_save(cs_store *s, const char *label, const char *command, const char *result,
		  int64_t *id);

/* The saved ones, oldest first, as a JSON array of {id, created_ns,
 * label, command, summary: [{statistic, configuration, pairs, pearson,
 * spearman, mape_pct, mean_error_pct, within_10pct,
 * aggregate_error_pct}]}, appended to out. */
int cs_corrs_json(cs_store *s, cs_buf *out);

/* One saved correlation's answer (its JSON) appended to out: 0, -ENOENT. */
int cs_corrs_result(cs_store *s, int64_t id, cs_buf *out);

/* Removes saved correlation id: 0, -ENOENT. */
int cs_corrs_delete(cs_store *s, int64_t id);

/* A statistic under a configuration in one saved correlation. */
typedef struct cs_corr_point {
	int64_t id, created_ns;
	char label[128];
	char statistic[320];
	char configuration[256];
	int64_t pairs, within_10pct;
	double pearson, mape_pct, mean_error_pct, aggregate_error_pct;
} cs_corr_point;

/* Every saved correlation's points, by id, then as saved: *out (freed by
 * the caller), *n. 0 or a store error. */
int cs_corrs_points(cs_store *s, cs_corr_point **out, size_t *n);

#endif
