/*
 * ranges.c - the ranges cursor (ranges.h).
 */
#include "ranges.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "store_int.h"

#define fail_sql(s, src, what) cs_nonzero_(cs_store_fail_sql_(s, src, what))

struct cs_ranges_cursor {
	cs_store *s;
	sqlite3_stmt *st;
	int lean, arg;
};

/* The statement is put together from the conditions the query has, so
 * that SQLite can use the (run, t0) index. ?1 run, ?2
 * from, ?3 to, ?4 kinds, ?5 limit, ?6 name, ?7 device. */
#define RANGE_COLUMNS "id, kind, name, t0, t1, device, stream, correlation_id, pid, tid, bytes, "
#define LEAN_COLUMNS "id, kind, name, t0, t1, device "

/* args is NULL in files older than schema v5 read where they lie. */
static void build_sql(const cs_ranges_query *q, int has_args, char *sql, size_t len)
{
	/* (args that are not JSON read as no value, not as an error) */
	const char *args = q->lean ? "" : !has_args ? "NULL"
			   : q->arg ? "args, CASE WHEN json_valid(args) THEN json_extract(args, ?9) END"
				    : "args";
	const char *cols = q->lean ? LEAN_COLUMNS : RANGE_COLUMNS;
	if (q->by_id) {
		snprintf(sql, len, "SELECT %s%s FROM ranges WHERE run = ?1 AND id >= ?8"
			 " ORDER BY id LIMIT %s", cols, args, q->limit ? "?5" : "-1");
		return;
	}
	char where[400];
	snprintf(where, sizeof where, "run = ?1 AND %s%s%s%s",
		 q->window == CS_RANGES_TOUCHING ? "t1 >= ?2 AND t0 < ?3"
		 : q->window == CS_RANGES_STRICT ? "t1 > ?2 AND t0 < ?3"
						 : "t0 < ?3 AND (t1 > ?2 OR (t1 = t0 AND t0 >= ?2))",
		 q->kinds && *q->kinds ? " AND instr(',' || ?4 || ',', ',' || kind || ',') > 0" : "",
		 !q->name ? "" : q->name_glob ? (q->name_not ? " AND name NOT GLOB ?6" : " AND name GLOB ?6")
			  : " AND name = ?6",
		 q->have_device ? " AND (device IS NULL OR device < 0 OR device = ?7)" : "");
	/* The N longest need a subquery; all of them are read in order
	 * straight from the (run, t0) index, nothing copied aside. */
	if (!q->limit)
		snprintf(sql, len, "SELECT %s%s FROM ranges WHERE %s ORDER BY %s", cols, args,
			 where, q->longest_first ? "t0 - t1, id" : "t0, id");
	else
		snprintf(sql, len,
			 "SELECT %s%s FROM (SELECT * FROM ranges WHERE %s"
			 " ORDER BY t0 - t1 LIMIT ?5) ORDER BY %s", cols, args, where,
			 q->longest_first ? "t0 - t1, id" : "t0, id");
}

static int prepare(cs_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, st, NULL);
	return rc == SQLITE_OK ? 0 : fail_sql(s, rc, "preparing a ranges query");
}

static sqlite3_int64 clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

cs_ranges_cursor *cs_ranges_open(cs_store *s, const cs_ranges_query *q)
{
	cs_ranges_cursor *c = calloc(1, sizeof *c);
	if (!c) {
		cs_store_fail_(s, -ENOMEM, "out of memory reading ranges");
		return NULL;
	}
	c->s = s;
	c->lean = q->lean;
	c->arg = q->arg && !q->lean && cs_store_version(s) >= 5;
	char sql[768];
	build_sql(q, cs_store_version(s) >= 5, sql, sizeof sql);
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, &c->st, NULL);
	if (rc != SQLITE_OK) {
		fail_sql(s, rc, "preparing a ranges query");
		cs_ranges_close(c);
		return NULL;
	}
	sqlite3_bind_int64(c->st, 1, q->run);
	if (q->by_id)
		sqlite3_bind_int64(c->st, 8, q->since_id);
	sqlite3_bind_int64(c->st, 2, clamp(q->from));
	sqlite3_bind_int64(c->st, 3, clamp(q->to));
	if (q->kinds && *q->kinds)
		sqlite3_bind_text(c->st, 4, q->kinds, -1, SQLITE_STATIC);
	if (q->limit)
		sqlite3_bind_int64(c->st, 5, clamp(q->limit));
	if (q->name)
		sqlite3_bind_text(c->st, 6, q->name, -1, SQLITE_STATIC);
	if (q->have_device)
		sqlite3_bind_int64(c->st, 7, q->device);
	if (c->arg)
		sqlite3_bind_text(c->st, 9, q->arg, -1, SQLITE_STATIC);
	return c;
}

int cs_ranges_next(cs_ranges_cursor *c, cs_range_row *r)
{
	int src = sqlite3_step(c->st);
	if (src == SQLITE_DONE)
		return 0;
	if (src != SQLITE_ROW)
		return fail_sql(c->s, src, "reading ranges");
	sqlite3_stmt *st = c->st;
	r->id = sqlite3_column_int64(st, 0);
	r->kind = (const char *)sqlite3_column_text(st, 1);
	r->name = (const char *)sqlite3_column_text(st, 2);
	r->t0 = sqlite3_column_int64(st, 3);
	r->t1 = sqlite3_column_int64(st, 4);
	if (c->lean) {
		r->device = sqlite3_column_int64(st, 5);
		r->has = sqlite3_column_type(st, 5) != SQLITE_NULL ? CS_RANGE_HAS_DEVICE : 0;
		r->stream = r->correlation_id = r->pid = r->tid = r->bytes = 0;
		r->args = r->arg = NULL;
		return 1;
	}
	int64_t *opt[6] = {&r->device, &r->stream, &r->correlation_id, &r->pid, &r->tid, &r->bytes};
	r->has = 0;
	for (int k = 0; k < 6; k++) {
		*opt[k] = sqlite3_column_int64(st, 5 + k);
		if (sqlite3_column_type(st, 5 + k) != SQLITE_NULL)
			r->has |= 1u << k;
	}
	r->args = (const char *)sqlite3_column_text(st, 11);
	r->arg = c->arg ? (const char *)sqlite3_column_text(st, 12) : NULL;
	return 1;
}

void cs_ranges_close(cs_ranges_cursor *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->st);
	free(c);
}

int cs_ranges_extent(cs_store *s, int64_t run, uint64_t *t0, uint64_t *t1)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT min(t0), max(t1) FROM ranges WHERE run = ?1", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		rc = fail_sql(s, rc, "reading the ranges' extent");
	} else if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
		rc = -ENODATA;
	} else {
		*t0 = (uint64_t)sqlite3_column_int64(st, 0);
		*t1 = (uint64_t)sqlite3_column_int64(st, 1);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int cs_ranges_density(cs_store *s, int64_t run, uint64_t from, uint64_t to, uint32_t bins,
		      cs_ranges_bin **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	int rc = prepare(s, "SELECT kind, stream, b, count(*),"
			    " sum(max(0, min(t1, ?2 + CAST((b + 1) * 1.0 * (?3 - ?2) / ?4 AS INTEGER)) - max(t0, ?2)))"
			    " FROM (SELECT kind, stream, t0, t1,"
			    "  min(?4 - 1, CAST((max(t0, ?2) - ?2) * 1.0 * ?4 / (?3 - ?2) AS INTEGER)) AS b"
			    "  FROM ranges WHERE run = ?1 AND t0 < ?3 AND t1 >= ?2)"
			    " GROUP BY kind, stream, b ORDER BY kind, stream, b", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, (int64_t)from);
	sqlite3_bind_int64(st, 3, (int64_t)to);
	sqlite3_bind_int64(st, 4, bins);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			cs_ranges_bin *m = realloc(*out, cap * sizeof *m);
			if (!m) {
				rc = SQLITE_NOMEM;
				break;
			}
			*out = m;
		}
		cs_ranges_bin *b = &(*out)[(*n)++];
		const unsigned char *k = sqlite3_column_text(st, 0);
		snprintf(b->kind, sizeof b->kind, "%s", k ? (const char *)k : "");
		b->has_stream = sqlite3_column_type(st, 1) != SQLITE_NULL;
		b->stream = sqlite3_column_int64(st, 1);
		int64_t bin = sqlite3_column_int64(st, 2);
		b->bin = (uint32_t)(bin < 0 ? 0 : bin >= bins ? bins - 1 : bin); /* (never outside) */
		b->count = sqlite3_column_int64(st, 3);
		b->busy = sqlite3_column_int64(st, 4);
	}
	if (rc != SQLITE_DONE) {
		rc = fail_sql(s, rc, "reading the ranges' density");
		free(*out);
		*out = NULL;
		*n = 0;
	} else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int cs_ranges_kinds(cs_store *s, int64_t run, cs_ranges_kind **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	*out = NULL;
	*n = 0;
	int rc = prepare(s, "SELECT kind, count(*), count(DISTINCT stream), (SELECT group_concat(name, ', ') FROM"
				    " (SELECT DISTINCT name FROM ranges r2 WHERE r2.run = ?1 AND"
				    " r2.kind = r.kind ORDER BY name LIMIT 3)) FROM ranges r WHERE run = ?1"
				    " GROUP BY kind ORDER BY kind", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			cs_ranges_kind *k = realloc(*out, nc * sizeof *k);
			if (!k) {
				rc = SQLITE_NOMEM;
				break;
			}
			*out = k;
			cap = nc;
		}
		cs_ranges_kind *k = &(*out)[(*n)++];
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		const char *names = (const char *)sqlite3_column_text(st, 3);
		snprintf(k->kind, sizeof k->kind, "%s", kind ? kind : "");
		k->count = sqlite3_column_int64(st, 1);
		k->streams = sqlite3_column_int64(st, 2);
		snprintf(k->names, sizeof k->names, "%s", names ? names : "");
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	free(*out);
	*out = NULL;
	*n = 0;
	return rc == SQLITE_NOMEM ? cs_store_fail_(s, -ENOMEM, "out of memory listing range kinds")
				  : fail_sql(s, rc, "listing range kinds");
}

int cs_ranges_first_id(cs_store *s, int64_t run, uint64_t t, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT coalesce((SELECT min(id) FROM ranges WHERE run = ?1 AND"
				    " t1 >= ?2), (SELECT coalesce(max(id), 0) + 1 FROM ranges WHERE"
				    " run = ?1))", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, clamp(t));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = fail_sql(s, rc, "finding where a follower starts");
	}
	sqlite3_finalize(st);
	return rc;
}
