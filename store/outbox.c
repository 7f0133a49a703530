/*
 * outbox.c - what a fleet shipper reads and its marks (outbox.h).
 */
#include "outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

static int prepare(cs_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, st, NULL);
	return rc == SQLITE_OK ? 0 : cs_store_fail_sql_(s, rc, "reading the outbox");
}

/* FNV-1a over text, kept positive so it fits an INTEGER mark as is. */
static int64_t hash_text(int64_t h, const char *text)
{
	uint64_t x = h ? (uint64_t)h : 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++)
		x = (x ^ *p) * 1099511628211ull;
	x = (x ^ '|') * 1099511628211ull;
	return (int64_t)(x >> 1);
}

/* Binds a mark's key as ?1..?4. */
static void bind_key(sqlite3_stmt *st, const char *target, const char *run_uuid,
		     const char *what, uint32_t device)
{
	sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, run_uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, what, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, device);
}

int cs_outbox_mark(cs_store *s, const char *target, const char *run_uuid, const char *what,
		   uint32_t device, int64_t *mark)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT mark FROM ship_marks WHERE target = ?1 AND run_uuid = ?2"
			    " AND what = ?3 AND device = ?4", &st);
	if (rc)
		return rc;
	bind_key(st, target, run_uuid, what, device);
	int step = sqlite3_step(st);
	*mark = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = cs_store_fail_sql_(s, step, "reading a ship mark");
	sqlite3_finalize(st);
	return rc;
}

int cs_outbox_set_mark(cs_store *s, const char *target, const char *run_uuid,
		       const char *what, uint32_t device, int64_t mark)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "INSERT INTO ship_marks(target, run_uuid, what, device, mark)"
			    " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(target, run_uuid, what, device)"
			    " DO UPDATE SET mark = excluded.mark", &st);
	if (rc)
		return rc;
	bind_key(st, target, run_uuid, what, device);
	sqlite3_bind_int64(st, 5, mark);
	int step = sqlite3_step(st);
	if (step != SQLITE_DONE)
		rc = cs_store_fail_sql_(s, step, "recording a ship mark");
	sqlite3_finalize(st);
	return rc;
}

int cs_outbox_pending(cs_store *s, const char *target, int64_t only_run, cs_outbox_run **runs,
		      size_t *n)
{
	*runs = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = prepare(
		s,
		"SELECT r.id, r.uuid, r.status = 'running',"
		" r.status || '|' || r.samples || '|' || r.dropped || '|' || r.overflows || '|' ||"
		" coalesce(r.end_ns, '') || '|' || coalesce(r.t_min, '') || '|' || coalesce(r.t_max, '') ||"
		" '|' || r.name || '|' || r.meta || '|' ||"
		" (SELECT count(*) FROM devices d WHERE d.run = r.id) || '|' ||"
		" (SELECT count(*) FROM metrics m WHERE m.run = r.id),"
		" coalesce((SELECT max(id) FROM ranges g WHERE g.run = r.id), 0),"
		" (SELECT group_concat(device || ':' || k, ',') FROM (SELECT device, sum(n) AS k"
		"  FROM timelines t WHERE t.run = r.id GROUP BY device ORDER BY device)),"
		" (SELECT mark FROM ship_marks WHERE target = ?1 AND run_uuid = r.uuid"
		"  AND what = 'done' AND device = 0)"
		" FROM runs r WHERE ?2 <= 0 OR r.id = ?2 ORDER BY r.id",
		&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, only_run);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		cs_outbox_run r = {.id = sqlite3_column_int64(st, 0)};
		snprintf(r.uuid, sizeof r.uuid, "%s", (const char *)sqlite3_column_text(st, 1));
		r.running = sqlite3_column_int(st, 2);
		r.meta_fingerprint = hash_text(0, (const char *)sqlite3_column_text(st, 3));
		r.last_range = sqlite3_column_int64(st, 4);
		r.fingerprint = hash_text(hash_text(r.meta_fingerprint, (const char *)sqlite3_column_text(st, 4)),
					  (const char *)sqlite3_column_text(st, 5));
		if (sqlite3_column_type(st, 6) != SQLITE_NULL && sqlite3_column_int64(st, 6) == r.fingerprint)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			cs_outbox_run *g = realloc(*runs, cap * sizeof *g);
			if (!g) {
				rc = cs_store_fail_(s, -ENOMEM, "out of memory");
				break;
			}
			*runs = g;
		}
		(*runs)[(*n)++] = r;
	}
	if (!rc && step != SQLITE_DONE)
		rc = cs_store_fail_sql_(s, step, "listing runs to ship");
	sqlite3_finalize(st);
	if (rc) {
		free(*runs);
		*runs = NULL;
		*n = 0;
	}
	return rc;
}

/* Steps st (bound by the caller), handing each row to fn as cells. */
static int cells(cs_store *s, sqlite3_stmt *st, cs_cell_fn fn, void *ctx)
{
	int ncol = sqlite3_column_count(st), rc = 0, step;
	cs_cell c[CS_OUTBOX_RUN_COLS];
	if (ncol > CS_OUTBOX_RUN_COLS)
		ncol = CS_OUTBOX_RUN_COLS;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			int t = sqlite3_column_type(st, i);
			c[i] = (cs_cell){CS_CELL_NULL, 0, 0, NULL, 0};
			if (t == SQLITE_INTEGER) {
				c[i].type = CS_CELL_INT;
				c[i].i = sqlite3_column_int64(st, i);
				c[i].d = (double)c[i].i;
			} else if (t == SQLITE_FLOAT) {
				c[i].type = CS_CELL_REAL;
				c[i].d = sqlite3_column_double(st, i);
				c[i].i = (int64_t)c[i].d;
			} else if (t != SQLITE_NULL) {
				c[i].type = CS_CELL_TEXT;
				c[i].s = (const char *)sqlite3_column_text(st, i);
				c[i].len = (size_t)sqlite3_column_bytes(st, i);
			}
		}
		rc = fn(ctx, c, ncol);
	}
	if (!rc && step != SQLITE_DONE)
		rc = cs_store_fail_sql_(s, step, "reading rows to ship");
	sqlite3_finalize(st);
	return rc;
}

static int by_run(cs_store *s, const char *sql, int64_t run, cs_cell_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, sql, &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	return cells(s, st, fn, ctx);
}

int cs_outbox_run_row(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx)
{
	return by_run(s,
		      "SELECT id, uuid, kind, source, name, host, pid, cmdline, start_ns, end_ns,"
		      " status, time_unit, clock_hz, t_min, t_max, samples, dropped, overflows, meta"
		      " FROM runs WHERE id = ?1",
		      run, fn, ctx);
}

int cs_outbox_devices(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx)
{
	return by_run(s,
		      "SELECT idx, name, chip, uuid, sm_count, clock_hz, mem_clock_hz FROM devices"
		      " WHERE run = ?1 ORDER BY idx",
		      run, fn, ctx);
}

int cs_outbox_metrics(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx)
{
	return by_run(s,
		      "SELECT id, name, unit, kind, cumulative FROM metrics WHERE run = ?1 ORDER BY id",
		      run, fn, ctx);
}

int cs_outbox_ranges(cs_store *s, int64_t run, int64_t after_id, uint32_t limit,
		     cs_cell_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s,
			 "SELECT id, kind, name, t0, t1, device, stream, correlation_id, pid, tid,"
			 " bytes FROM ranges WHERE run = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
			 &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int64(st, 3, limit);
	return cells(s, st, fn, ctx);
}

int cs_outbox_device_samples(cs_store *s, int64_t run, uint32_t **devs, uint64_t **counts,
			     uint32_t *n)
{
	*devs = NULL;
	*counts = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = prepare(s,
			 "SELECT device, sum(n) FROM timelines WHERE run = ?1 GROUP BY device"
			 " ORDER BY device",
			 &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	uint32_t cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			uint32_t *gd = realloc(*devs, cap * sizeof *gd);
			if (gd)
				*devs = gd;
			uint64_t *gc = realloc(*counts, cap * sizeof *gc);
			if (gc)
				*counts = gc;
			if (!gd || !gc) {
				rc = cs_store_fail_(s, -ENOMEM, "out of memory");
				break;
			}
		}
		(*devs)[*n] = (uint32_t)sqlite3_column_int64(st, 0);
		(*counts)[*n] = (uint64_t)sqlite3_column_int64(st, 1);
		(*n)++;
	}
	if (!rc && step != SQLITE_DONE)
		rc = cs_store_fail_sql_(s, step, "counting samples to ship");
	sqlite3_finalize(st);
	if (rc) {
		free(*devs);
		free(*counts);
		*devs = NULL;
		*counts = NULL;
		*n = 0;
	}
	return rc;
}
