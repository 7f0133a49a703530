/*
 * series.c - the `series` virtual table; see series.h.
 *
 * Compiled twice: into cyclescope itself and, with CS_SQLITE_EXT defined,
 * into the loadable extension, where every sqlite3_* call goes through the
 * API table the shell hands over.
 */
#ifdef CS_SQLITE_EXT
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include "series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"

enum { COL_RUN, COL_DEVICE, COL_METRIC, COL_SEQ, COL_T0, COL_T1, COL_VALUE };

#define MAX_ARGS 16

typedef struct series_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	cs_series_stats *stats;
} series_vtab;

typedef struct series_cursor {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *st;
	cs_codec *codec;
	int eof;
	int64_t rowid;
	/* bounds, inclusive */
	int64_t t_lo, t_hi, s_lo, s_hi;
	/* the decoded chunk */
	int64_t run, device, seq0;
	uint32_t n, i;
	uint64_t *t0, *t1;
	double *v;
} series_cursor;

static int series_connect(sqlite3 *db, void *aux, int argc,
			  const char *const *argv, sqlite3_vtab **out,
			  char **errmsg)
{
	(void)argc;
	(void)argv;
	(void)errmsg;
	int rc = sqlite3_declare_vtab(
		db, "CREATE TABLE x(run INTEGER, device INTEGER, metric TEXT,"
		    " seq INTEGER, t0 INTEGER, t1 INTEGER, value REAL)");
	if (rc != SQLITE_OK)
		return rc;
	series_vtab *vt = sqlite3_malloc(sizeof *vt);
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof *vt);
	vt->db = db;
	vt->stats = aux;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	*out = &vt->base;
	return SQLITE_OK;
}

static int series_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* idxStr holds one letter per filter argument: r run=, d device=, m
 * metric=, a t0>=, A t0>, b t0<=, B t0<, e t0=, and s S t T q the same
 * for seq. */
static char op_code(int col, unsigned char op)
{
	static const char t0_codes[] = "aAbBe", seq_codes[] = "sStTq";
	int slot;
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_GE: slot = 0; break;
	case SQLITE_INDEX_CONSTRAINT_GT: slot = 1; break;
	case SQLITE_INDEX_CONSTRAINT_LE: slot = 2; break;
	case SQLITE_INDEX_CONSTRAINT_LT: slot = 3; break;
	case SQLITE_INDEX_CONSTRAINT_EQ: slot = 4; break;
	default: return 0;
	}
	if (col == COL_T0)
		return t0_codes[slot];
	if (col == COL_SEQ)
		return seq_codes[slot];
	if (slot != 4)
		return 0;
	return col == COL_RUN ? 'r' : col == COL_DEVICE ? 'd' : col == COL_METRIC ? 'm' : 0;
}

static int series_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	char codes[MAX_ARGS + 1];
	int nargs = 0;
	int have_r = 0, have_d = 0, have_m = 0, have_t = 0, have_s = 0;
	for (int i = 0; i < info->nConstraint && nargs < MAX_ARGS; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		if (!c->usable)
			continue;
		char code = op_code(c->iColumn, c->op);
		if (!code)
			continue;
		if ((code == 'r' && have_r++) || (code == 'd' && have_d++) ||
		    (code == 'm' && have_m++))
			continue;
		have_t |= strchr("aAbBe", code) != NULL;
		have_s |= strchr("sStTq", code) != NULL;
		codes[nargs++] = code;
		info->aConstraintUsage[i].argvIndex = nargs;
		/* SQLite checks every constraint again: ours are exact for
		 * integers but conservative for other types. */
		info->aConstraintUsage[i].omit = 0;
	}
	codes[nargs] = 0;
	double cost = 1e9;
	if (have_r)
		cost /= 20;
	if (have_m)
		cost /= 50;
	if (have_d)
		cost /= 2;
	if (have_t || have_s)
		cost /= 10;
	info->estimatedCost = cost;
	info->estimatedRows = (sqlite3_int64)(cost / 10) + 1;
	info->idxNum = nargs;
	info->idxStr = sqlite3_mprintf("%s", codes);
	info->needToFreeIdxStr = 1;
	if (!info->idxStr)
		return SQLITE_NOMEM;
	return SQLITE_OK;
}

static int series_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	(void)vt;
	series_cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->codec = cs_codec_new();
	c->t0 = sqlite3_malloc64(CS_CHUNK_MAX * sizeof *c->t0);
	c->t1 = sqlite3_malloc64(CS_CHUNK_MAX * sizeof *c->t1);
	c->v = sqlite3_malloc64(CS_CHUNK_MAX * sizeof *c->v);
	if (!c->codec || !c->t0 || !c->t1 || !c->v) {
		cs_codec_free(c->codec);
		sqlite3_free(c->t0);
		sqlite3_free(c->t1);
		sqlite3_free(c->v);
		sqlite3_free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

static int series_close(sqlite3_vtab_cursor *cur)
{
	series_cursor *c = (series_cursor *)cur;
	sqlite3_finalize(c->st);
	cs_codec_free(c->codec);
	sqlite3_free(c->t0);
	sqlite3_free(c->t1);
	sqlite3_free(c->v);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int set_error(sqlite3_vtab_cursor *cur, const char *fmt, const char *what)
{
	sqlite3_free(cur->pVtab->zErrMsg);
	cur->pVtab->zErrMsg = sqlite3_mprintf(fmt, what);
	return SQLITE_CORRUPT;
}

/* Decodes the chunk under the statement. */
static int load_chunk(series_cursor *c)
{
	char err[128];
	series_vtab *vt = (series_vtab *)c->base.pVtab;
	c->run = sqlite3_column_int64(c->st, 0);
	c->device = sqlite3_column_int64(c->st, 1);
	c->seq0 = sqlite3_column_int64(c->st, 3);
	int64_t n = sqlite3_column_int64(c->st, 4);
	if (n <= 0 || n > (int64_t)CS_CHUNK_MAX)
		return set_error(&c->base, "series: corrupt chunk (%s)", "sample count");
	c->n = (uint32_t)n;
	cs_values_view view;
	int rc = cs_values_open(c->codec, &view, sqlite3_column_blob(c->st, 5),
				(size_t)sqlite3_column_bytes(c->st, 5), err, sizeof err);
	if (!rc && view.n != c->n)
		rc = -1, snprintf(err, sizeof err, "sample count mismatch");
	if (!rc) {
		cs_values_decode(&view, c->v);
		rc = cs_timeline_decode(c->codec, sqlite3_column_blob(c->st, 6),
					(size_t)sqlite3_column_bytes(c->st, 6), c->n,
					c->t0, c->t1, err, sizeof err);
	}
	if (rc)
		return set_error(&c->base, "series: corrupt chunk: %s", err);
	if (vt->stats)
		vt->stats->chunks_decoded++;
	c->i = 0;
	return SQLITE_OK;
}

static int row_ok(const series_cursor *c)
{
	uint32_t i = c->i;
	int64_t seq = c->seq0 + i;
	return !isnan(c->v[i]) && (int64_t)c->t0[i] >= c->t_lo &&
	       (int64_t)c->t0[i] <= c->t_hi && seq >= c->s_lo && seq <= c->s_hi;
}

/* Moves to the next acceptable row, loading chunks as needed. */
static int advance(series_cursor *c, int first)
{
	if (!first)
		c->i++;
	for (;;) {
		while (c->n && c->i < c->n) {
			if ((int64_t)c->t0[c->i] > c->t_hi)
				break; /* t0 is sorted: the rest is past the end */
			if (row_ok(c))
				return SQLITE_OK;
			c->i++;
		}
		int rc = sqlite3_step(c->st);
		if (rc == SQLITE_DONE) {
			c->eof = 1;
			return SQLITE_OK;
		}
		if (rc != SQLITE_ROW)
			return rc;
		rc = load_chunk(c);
		if (rc != SQLITE_OK)
			return rc;
		/* Skip to the first t0 in bounds. */
		uint32_t lo = 0, hi = c->n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if ((int64_t)c->t0[mid] < c->t_lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		c->i = lo;
	}
}

/* Conservative integer bounds from a constraint value; returns 0 when the
 * value cannot bound an integer column (SQLite re-checks anyway). */
static int int_bound(sqlite3_value *v, int upper, int strict, int64_t *out)
{
	int type = sqlite3_value_numeric_type(v);
	if (type == SQLITE_INTEGER) {
		int64_t x = sqlite3_value_int64(v);
		if (strict && upper && x > INT64_MIN)
			x--;
		else if (strict && !upper && x < INT64_MAX)
			x++;
		*out = x;
		return 1;
	}
	if (type == SQLITE_FLOAT) {
		double d = sqlite3_value_double(v);
		if (isnan(d))
			return 0;
		d = upper ? ceil(d) : floor(d);
		if (d >= 9.2e18)
			*out = INT64_MAX;
		else if (d <= -9.2e18)
			*out = INT64_MIN;
		else
			*out = (int64_t)d;
		return 1;
	}
	return 0;
}

static void tighten(int64_t *lo, int64_t *hi, char code, sqlite3_value *v)
{
	int64_t x;
	switch (code) {
	case 'a': case 's':
		if (int_bound(v, 0, 0, &x) && x > *lo) *lo = x;
		break;
	case 'A': case 'S':
		if (int_bound(v, 0, 1, &x) && x > *lo) *lo = x;
		break;
	case 'b': case 't':
		if (int_bound(v, 1, 0, &x) && x < *hi) *hi = x;
		break;
	case 'B': case 'T':
		if (int_bound(v, 1, 1, &x) && x < *hi) *hi = x;
		break;
	case 'e': case 'q':
		if (int_bound(v, 0, 0, &x) && x > *lo) *lo = x;
		if (int_bound(v, 1, 0, &x) && x < *hi) *hi = x;
		break;
	default:
		break;
	}
}

static int series_filter(sqlite3_vtab_cursor *cur, int idxnum,
			 const char *idxstr, int argc, sqlite3_value **argv)
{
	series_cursor *c = (series_cursor *)cur;
	series_vtab *vt = (series_vtab *)cur->pVtab;
	(void)idxnum;
	sqlite3_finalize(c->st);
	c->st = NULL;
	c->eof = 0;
	c->n = c->i = 0;
	c->rowid = 0;
	c->t_lo = c->s_lo = INT64_MIN;
	c->t_hi = c->s_hi = INT64_MAX;
	sqlite3_value *run = NULL, *dev = NULL, *met = NULL;
	for (int i = 0; i < argc && idxstr && idxstr[i]; i++) {
		char code = idxstr[i];
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
			c->eof = 1; /* "= NULL", "< NULL" ... match nothing */
			return SQLITE_OK;
		}
		if (code == 'r')
			run = argv[i];
		else if (code == 'd')
			dev = argv[i];
		else if (code == 'm')
			met = argv[i];
		else if (strchr("aAbBe", code))
			tighten(&c->t_lo, &c->t_hi, code, argv[i]);
		else
			tighten(&c->s_lo, &c->s_hi, code, argv[i]);
	}
	if (c->t_lo > c->t_hi || c->s_lo > c->s_hi) {
		c->eof = 1;
		return SQLITE_OK;
	}
	char *sql = sqlite3_mprintf(
		"SELECT c.run, c.device, m.name, c.seq0, c.n, c.data, t.data"
		" FROM chunks c JOIN metrics m ON m.run = c.run AND m.id = c.metric"
		" JOIN timelines t ON t.run = c.run AND t.device = c.device"
		"  AND t.seq0 = c.seq0"
		" WHERE c.t0_last >= ?4 AND c.t0_first <= ?5"
		"  AND c.seq0 + c.n > ?6 AND c.seq0 <= ?7%s%s%s"
		" ORDER BY c.run, c.metric, c.device, c.seq0",
		run ? " AND c.run = ?1" : "", met ? " AND m.name = ?2" : "",
		dev ? " AND c.device = ?3" : "");
	if (!sql)
		return SQLITE_NOMEM;
	int rc = sqlite3_prepare_v2(vt->db, sql, -1, &c->st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("series: %s", sqlite3_errmsg(vt->db));
		return rc;
	}
	if (run)
		sqlite3_bind_value(c->st, 1, run);
	if (met)
		sqlite3_bind_value(c->st, 2, met);
	if (dev)
		sqlite3_bind_value(c->st, 3, dev);
	sqlite3_bind_int64(c->st, 4, c->t_lo);
	sqlite3_bind_int64(c->st, 5, c->t_hi);
	sqlite3_bind_int64(c->st, 6, c->s_lo);
	sqlite3_bind_int64(c->st, 7, c->s_hi);
	return advance(c, 1);
}

static int series_next(sqlite3_vtab_cursor *cur)
{
	series_cursor *c = (series_cursor *)cur;
	series_vtab *vt = (series_vtab *)cur->pVtab;
	c->rowid++;
	if (vt->stats)
		vt->stats->rows++;
	return advance(c, 0);
}

static int series_eof(sqlite3_vtab_cursor *cur)
{
	return ((series_cursor *)cur)->eof;
}

static int series_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	series_cursor *c = (series_cursor *)cur;
	uint32_t i = c->i;
	switch (col) {
	case COL_RUN: sqlite3_result_int64(ctx, c->run); break;
	case COL_DEVICE: sqlite3_result_int64(ctx, c->device); break;
	case COL_METRIC: sqlite3_result_value(ctx, sqlite3_column_value(c->st, 2)); break;
	case COL_SEQ: sqlite3_result_int64(ctx, c->seq0 + i); break;
	case COL_T0: sqlite3_result_int64(ctx, (int64_t)c->t0[i]); break;
	case COL_T1: sqlite3_result_int64(ctx, (int64_t)c->t1[i]); break;
	case COL_VALUE: sqlite3_result_double(ctx, c->v[i]); break;
	default: break;
	}
	return SQLITE_OK;
}

static int series_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((series_cursor *)cur)->rowid;
	return SQLITE_OK;
}

static const sqlite3_module series_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous-only: no CREATE VIRTUAL TABLE */
	.xConnect = series_connect,
	.xBestIndex = series_best_index,
	.xDisconnect = series_disconnect,
	.xDestroy = series_disconnect,
	.xOpen = series_open,
	.xClose = series_close,
	.xFilter = series_filter,
	.xNext = series_next,
	.xEof = series_eof,
	.xColumn = series_column,
	.xRowid = series_rowid,
};

int cs_series_register(sqlite3 *db, cs_series_stats *stats)
{
	return sqlite3_create_module(db, "series", &series_module, stats);
}
