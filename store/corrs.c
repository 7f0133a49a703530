/*
 * corrs.c - saved suite correlations (corrs.h).
 */
#include "corrs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "store_int.h"

#define fail_sql(s, src, what) cs_nonzero_(cs_store_fail_sql_(s, src, what))

/* The short form of an answer: one object per statistic and
 * configuration, over its JSON text ?1. */
#define SUMMARY_SQL                                                                            \
	"(SELECT json_group_array(json_object('statistic', json_extract(st.value, '$.statistic'),"  \
	" 'configuration', json_extract(c.value, '$.configuration'),"                         \
	" 'pairs', json_extract(c.value, '$.pairs'), 'pearson', json_extract(c.value, '$.pearson')," \
	" 'spearman', json_extract(c.value, '$.spearman'),"                                   \
	" 'mape_pct', json_extract(c.value, '$.mape_pct'),"                                    \
	" 'mean_error_pct', json_extract(c.value, '$.mean_error_pct'),"                        \
	" 'within_10pct', json_extract(c.value, '$.within_10pct'),"                            \
	" 'aggregate_error_pct', json_extract(c.value, '$.aggregate_error_pct')))"             \
	" FROM json_each(?1, '$.statistics') st, json_each(st.value, '$.configurations') c)"

static int prepare(cs_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, st, NULL);
	return rc == SQLITE_OK ? 0 : fail_sql(s, rc, "preparing a correlations query");
}

/* Files before v7 have no correlations table (read where they lie). */
static int have_table(cs_store *s)
{
	return cs_store_version(s) >= 7;
}

int cs_corrs_save(cs_store *s, const char *label, const char *command, const char *result,
		  int64_t *id)
{
	if (!have_table(s))
		return cs_store_fail_(s, -EROFS, "this database (schema v%d) has no correlations "
				      "table: open it read-write once", cs_store_version(s));
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT json_valid(?1) AND json_type(?1, '$.statistics') = 'array'", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, result, -1, SQLITE_STATIC);
	int ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
	sqlite3_finalize(st);
	if (!ok)
		return cs_store_fail_(s, -EINVAL, "not a suite correlation's answer");
	rc = prepare(s, "INSERT INTO correlations(created_ns, label, command, summary, result)"
			" VALUES(?2, ?3, ?4, " SUMMARY_SQL ", ?1)", &st);
	if (rc)
		return rc;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	sqlite3_bind_text(st, 1, result, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	sqlite3_bind_text(st, 3, label ? label : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, command ? command : "", -1, SQLITE_STATIC);
	int src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return fail_sql(s, src, "saving a correlation");
	*id = sqlite3_last_insert_rowid(cs_store_db(s));
	return 0;
}

int cs_corrs_json(cs_store *s, cs_buf *out)
{
	if (!have_table(s)) {
		cs_json_raw(out, "[]");
		return 0;
	}
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT coalesce(json_group_array(json_object('id', id, 'created_ns',"
			    " created_ns, 'label', label, 'command', command, 'summary', json(summary))),"
			    " '[]') FROM (SELECT * FROM correlations ORDER BY id)", &st);
	if (rc)
		return rc;
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		cs_json_sql(out, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return src == SQLITE_ROW ? 0 : fail_sql(s, src, "listing correlations");
}

int cs_corrs_result(cs_store *s, int64_t id, cs_buf *out)
{
	if (!have_table(s))
		return -ENOENT;
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT result FROM correlations WHERE id = ?1", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		cs_json_sql(out, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return src == SQLITE_ROW ? 0 : src == SQLITE_DONE ? -ENOENT
					     : fail_sql(s, src, "reading a correlation");
}

int cs_corrs_delete(cs_store *s, int64_t id)
{
	if (!have_table(s))
		return -ENOENT;
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "DELETE FROM correlations WHERE id = ?1", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	int src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return fail_sql(s, src, "deleting a correlation");
	return sqlite3_changes(cs_store_db(s)) ? 0 : -ENOENT;
}

static void text(char *out, size_t len, sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	snprintf(out, len, "%s", t ? t : "");
}

static double real_or_nan(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? (double)NAN : sqlite3_column_double(st, col);
}

int cs_corrs_points(cs_store *s, cs_corr_point **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!have_table(s))
		return 0;
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT c.id, c.created_ns, c.label, json_extract(p.value, '$.statistic'),"
			    " json_extract(p.value, '$.configuration'), json_extract(p.value, '$.pairs'),"
			    " json_extract(p.value, '$.within_10pct'), json_extract(p.value, '$.pearson'),"
			    " json_extract(p.value, '$.mape_pct'), json_extract(p.value, '$.mean_error_pct'),"
			    " json_extract(p.value, '$.aggregate_error_pct')"
			    " FROM correlations c, json_each(c.summary) p ORDER BY c.id, p.key", &st);
	if (rc)
		return rc;
	size_t cap = 0;
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cs_corr_point *g = realloc(*out, (cap = cap ? cap * 2 : 32) * sizeof *g);
			if (!g) {
				sqlite3_finalize(st);
				free(*out);
				*out = NULL;
				*n = 0;
				return cs_store_fail_(s, -ENOMEM, "out of memory listing correlations");
			}
			*out = g;
		}
		cs_corr_point *p = &(*out)[(*n)++];
		p->id = sqlite3_column_int64(st, 0);
		p->created_ns = sqlite3_column_int64(st, 1);
		text(p->label, sizeof p->label, st, 2);
		text(p->statistic, sizeof p->statistic, st, 3);
		text(p->configuration, sizeof p->configuration, st, 4);
		p->pairs = sqlite3_column_int64(st, 5);
		p->within_10pct = sqlite3_column_int64(st, 6);
		p->pearson = real_or_nan(st, 7);
		p->mape_pct = real_or_nan(st, 8);
		p->mean_error_pct = real_or_nan(st, 9);
		p->aggregate_error_pct = real_or_nan(st, 10);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return fail_sql(s, src, "listing correlations");
	}
	return 0;
}
