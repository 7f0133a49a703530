/*
 * check.c - cs_store_check: SQLite's own integrity check, then every
 * timeline and value chunk decoded with its checksums verified and held
 * against its row (counts, extents, aggregates) and its timeline.
 */
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "store_int.h"

static void report(cs_check_stats *st, cs_check_fn fn, void *arg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(cs_check_stats *st, cs_check_fn fn, void *arg, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	st->problems++;
	fn(arg, msg);
}

static int sqlite_check(cs_store *s, int quick, cs_check_stats *st, cs_check_fn fn, void *arg)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(cs_store_db(s),
				    quick ? "PRAGMA quick_check(1000)" : "PRAGMA integrity_check(1000)",
				    -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(q, 0);
		if (line && strcmp(line, "ok"))
			report(st, fn, arg, "sqlite: %s", line);
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		report(st, fn, arg, "sqlite: %s check stopped: %s", quick ? "quick" : "integrity",
		       sqlite3_errmsg(cs_store_db(s)));
	sqlite3_finalize(q);
	return 0;
}

/* Every timeline: its blob decodes, checksum included, and agrees with its
 * row; no two of one device overlap. */
static int check_timelines(cs_store *s, cs_check_stats *st, cs_check_fn fn, void *arg,
			   uint64_t *t0, uint64_t *t1)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(cs_store_db(s),
				    "SELECT run, device, seq0, n, t0_first, t0_last, t1_last, data"
				    " FROM timelines ORDER BY run, device, seq0",
				    -1, &q, NULL);
	int64_t prun = -1, pdev = -1, pend = 0;
	char err[128];
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t run = sqlite3_column_int64(q, 0), dev = sqlite3_column_int64(q, 1);
		int64_t seq0 = sqlite3_column_int64(q, 2), n = sqlite3_column_int64(q, 3);
		const uint8_t *blob = sqlite3_column_blob(q, 7);
		size_t len = (size_t)sqlite3_column_bytes(q, 7);
		rc = SQLITE_OK;
		st->timelines++;
		if (len && blob[0] == 1)
			st->unchecked_timelines++;
		if (run == prun && dev == pdev && seq0 < pend)
			report(st, fn, arg, "run %lld device %lld seq %lld: timeline overlaps the one before (it ends at seq %lld)",
			       (long long)run, (long long)dev, (long long)seq0, (long long)pend);
		prun = run, pdev = dev, pend = seq0 + n;
		if (n <= 0 || n > (int64_t)CS_CHUNK_MAX) {
			report(st, fn, arg, "run %lld device %lld seq %lld: timeline row says %lld samples",
			       (long long)run, (long long)dev, (long long)seq0, (long long)n);
			continue;
		}
		if (cs_timeline_decode(cs_store_codec_(s), blob, len, (uint32_t)n, t0, t1, err,
				       sizeof err)) {
			report(st, fn, arg, "run %lld device %lld seq %lld: corrupt timeline: %s",
			       (long long)run, (long long)dev, (long long)seq0, err);
			continue;
		}
		if ((int64_t)t0[0] != sqlite3_column_int64(q, 4) ||
		    (int64_t)t0[n - 1] != sqlite3_column_int64(q, 5) ||
		    (int64_t)t1[n - 1] != sqlite3_column_int64(q, 6))
			report(st, fn, arg, "run %lld device %lld seq %lld: timeline row's t0_first/t0_last/t1_last differ from its data",
			       (long long)run, (long long)dev, (long long)seq0);
	}
	if (rc != SQLITE_DONE)
		report(st, fn, arg, "reading timelines: %s", sqlite3_errmsg(cs_store_db(s)));
	sqlite3_finalize(q);
	return 0;
}

static int same_double(sqlite3_stmt *q, int col, double v)
{
	return sqlite3_column_type(q, col) != SQLITE_NULL && sqlite3_column_double(q, col) == v;
}

/* Every value chunk: its blob decodes, every block's checksum included;
 * its row's n and aggregates are the blob's; a timeline of the same
 * samples exists. */
static int check_chunks(cs_store *s, cs_check_stats *st, cs_check_fn fn, void *arg)
{
	sqlite3_stmt *q = NULL, *tl = NULL;
	int rc = sqlite3_prepare_v2(cs_store_db(s),
				    "SELECT c.run, c.device, c.metric, m.name, c.seq0, c.n, c.count,"
				    " c.vmin, c.vmax, c.vsum, c.data, c.t0_first, c.t0_last FROM chunks c"
				    " LEFT JOIN metrics m ON m.run = c.run AND m.id = c.metric"
				    " ORDER BY c.run, c.metric, c.device, c.seq0",
				    -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(cs_store_db(s),
					"SELECT n, t0_first, t0_last FROM timelines"
					" WHERE run = ? AND device = ? AND seq0 = ?",
					-1, &tl, NULL);
	char err[128];
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t run = sqlite3_column_int64(q, 0), dev = sqlite3_column_int64(q, 1);
		int64_t seq0 = sqlite3_column_int64(q, 4), n = sqlite3_column_int64(q, 5);
		const char *name = (const char *)sqlite3_column_text(q, 3);
		char where[600];
		snprintf(where, sizeof where, "run %lld metric %lld (%s) device %lld seq %lld",
			 (long long)run, (long long)sqlite3_column_int64(q, 2),
			 name ? name : "not declared", (long long)dev, (long long)seq0);
		const uint8_t *blob = sqlite3_column_blob(q, 10);
		size_t len = (size_t)sqlite3_column_bytes(q, 10);
		rc = SQLITE_OK;
		st->chunks++;
		if (len && blob[0] == 1)
			st->unchecked_chunks++;
		if (!name)
			report(st, fn, arg, "%s: no such metric in the run", where);
		cs_values_view view;
		if (cs_values_open(cs_store_codec_(s), &view, blob, len, err, sizeof err)) {
			report(st, fn, arg, "%s: corrupt chunk: %s", where, err);
			continue;
		}
		if ((int64_t)view.n != n)
			report(st, fn, arg, "%s: the row says %lld samples, the chunk holds %u", where,
			       (long long)n, view.n);
		cs_agg agg = {0, 0, 0, 0};
		for (uint32_t b = 0; b < view.nblocks; b++) {
			cs_agg a;
			cs_values_block_agg(&view, b, &a);
			cs_agg_merge(&agg, &a);
		}
		int agg_ok = sqlite3_column_int64(q, 6) == (int64_t)agg.count;
		if (agg_ok && agg.count)
			agg_ok = same_double(q, 7, agg.min) && same_double(q, 8, agg.max) &&
				 (same_double(q, 9, agg.sum) || (isnan(agg.sum) && sqlite3_column_type(q, 9) == SQLITE_NULL));
		if (!agg_ok)
			report(st, fn, arg, "%s: the row's count/min/max/sum differ from the chunk's", where);
		sqlite3_reset(tl);
		sqlite3_bind_int64(tl, 1, run);
		sqlite3_bind_int64(tl, 2, dev);
		sqlite3_bind_int64(tl, 3, seq0);
		int trc = sqlite3_step(tl);
		if (trc != SQLITE_ROW)
			report(st, fn, arg, "%s: no timeline starts at this sample", where);
		else if (sqlite3_column_int64(tl, 0) != n)
			report(st, fn, arg, "%s: its timeline holds %lld samples, the chunk %lld", where,
			       (long long)sqlite3_column_int64(tl, 0), (long long)n);
		else if (sqlite3_column_int64(tl, 1) != sqlite3_column_int64(q, 11) ||
			 sqlite3_column_int64(tl, 2) != sqlite3_column_int64(q, 12))
			report(st, fn, arg, "%s: the row's t0_first/t0_last differ from its timeline's", where);
	}
	if (rc != SQLITE_DONE)
		report(st, fn, arg, "reading chunks: %s", sqlite3_errmsg(cs_store_db(s)));
	sqlite3_finalize(q);
	sqlite3_finalize(tl);
	return 0;
}

/* Every run row counts the samples its timelines hold: the row and its
 * data are written in one transaction, so a difference means the file
 * was changed behind the store's back or written by an older version. */
static int check_run_counts(cs_store *s, cs_check_stats *st, cs_check_fn fn, void *arg)
{
	sqlite3_stmt *q = NULL;
	int rc = sqlite3_prepare_v2(cs_store_db(s),
				    "SELECT r.id, r.name, r.samples, coalesce(sum(t.n), 0) FROM runs r"
				    " LEFT JOIN timelines t ON t.run = r.id GROUP BY r.id ORDER BY r.id",
				    -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t said = sqlite3_column_int64(q, 2), held = sqlite3_column_int64(q, 3);
		rc = SQLITE_OK;
		if (said != held)
			report(st, fn, arg, "run %lld (%s): the row says %lld samples, its timelines hold %lld",
			       (long long)sqlite3_column_int64(q, 0),
			       sqlite3_column_text(q, 1) ? (const char *)sqlite3_column_text(q, 1) : "",
			       (long long)said, (long long)held);
	}
	if (rc != SQLITE_DONE)
		report(st, fn, arg, "reading runs: %s", sqlite3_errmsg(cs_store_db(s)));
	sqlite3_finalize(q);
	return 0;
}

int cs_store_check(cs_store *s, int quick, cs_check_fn fn, void *arg, cs_check_stats *st)
{
	memset(st, 0, sizeof *st);
	uint64_t *t = malloc(2 * (size_t)CS_CHUNK_MAX * sizeof *t);
	if (!t)
		return -ENOMEM;
	sqlite_check(s, quick, st, fn, arg);
	check_timelines(s, st, fn, arg, t, t + CS_CHUNK_MAX);
	check_chunks(s, st, fn, arg);
	check_run_counts(s, st, fn, arg);
	free(t);
	return 0;
}
