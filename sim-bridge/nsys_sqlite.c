/*
 * nsys_sqlite.c - Nsight Systems SQLite exports (nsys_sqlite.h).
 *
 * Tables are created lazily by nsys, so each is optional; columns are
 * found with PRAGMA table_info and the queries built from what is there.
 * Names come from StringIds. A GPU_METRICS row is (timestamp, typeId,
 * metricId, value); typeId's low byte is the GPU (as other readers of
 * these exports take it), the metric's name is TARGET_INFO_GPU_METRICS's
 * for that (typeId, metricId); the rows of one GPU and timestamp are one
 * sample, covering the time since that GPU's previous sample (the first
 * as long as the second).
 */
#include "nsys_sqlite.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "simrun.h"

#define MAX_GPUS 256
#define BATCH 1024

typedef struct gmet {
	int64_t type, id; /* (typeId, metricId) */
	int col;          /* metric column */
} gmet;

typedef struct gpu_rows {
	int64_t last_ts;  /* the timestamp being gathered, INT64_MIN: none */
	int64_t prev_ts;  /* the one before: the sample's start */
	double *cur;      /* its values */
	int pending_first; /* the first sample waits for the second's time */
	uint64_t seq, n;
	uint64_t t0[BATCH], t1[BATCH];
	double *vals;     /* BATCH x m */
	int present;
} gpu_rows;

typedef struct nsys {
	sqlite3 *db;
	const cs_import_opts *o;
	size_t size; /* the file's bytes (page_count x page_size), for progress */
	cs_producer *p;
	const char *label;
	char *err;
	size_t errlen;
	uint64_t ranges;
	/* GPU metrics */
	gmet *gm;
	size_t ngm;
	uint32_t m;
	uint32_t *ids;
	gpu_rows *g[MAX_GPUS];
} nsys;

static int nfail(nsys *x, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int nfail(nsys *x, int rc, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s: %s", x->label, msg);
	return rc;
}

static int has_table(sqlite3 *db, const char *t)
{
	sqlite3_stmt *st = NULL;
	int yes = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
			       "AND name = ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return yes;
}

static int has_col(sqlite3 *db, const char *t, const char *c)
{
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", t);
	sqlite3_stmt *st = NULL;
	int yes = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, c, -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return yes;
}

/* The first of the candidate columns table t has, or NULL. */
static const char *first_col(sqlite3 *db, const char *t, const char *const *cands)
{
	for (; *cands; cands++)
		if (has_col(db, t, *cands))
			return *cands;
	return NULL;
}

static const char *const activity[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
				       "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
				       "NVTX_EVENTS", "GPU_METRICS", NULL};

int cs_nsys_sqlite_sniff(const char *path)
{
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	int any = 0;
	for (const char *const *t = activity; *t && !any; t++)
		any = has_table(db, *t);
	int yes = any && has_table(db, "StringIds");
	sqlite3_close(db);
	return yes;
}

/* A query's failure, naming the table. */
static int sql_fail(nsys *x, const char *table)
{
	return nfail(x, -EINVAL, "reading %s: %s", table, sqlite3_errmsg(x->db));
}

static int add_range(nsys *x, const cs_range *r)
{
	int rc = cs_producer_add_range(x->p, r);
	if (rc < 0)
		return nfail(x, rc, "%s", cs_producer_errmsg(x->p));
	x->ranges++;
	return 0;
}

/* One activity table as ranges. sql selects start, end, name, device,
 * stream, correlation, bytes, globalTid (NULLs where the table has no such
 * column). */
static int ranges_from(nsys *x, const char *table, const char *kind, const char *sql,
		       uint64_t *count)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(x, table);
	int rc = 0, src;
	uint64_t row = 0;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		row++;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			rc = nfail(x, -EINVAL, "%s row %" PRIu64 ": no start time", table, row);
			break;
		}
		int64_t t0 = sqlite3_column_int64(st, 0);
		int64_t t1 = sqlite3_column_type(st, 1) == SQLITE_NULL ? t0 : sqlite3_column_int64(st, 1);
		if (t0 < 0 || t1 < t0) { /* before the session or a range ending before it starts */
			rc = nfail(x, -EINVAL, "%s row %" PRIu64 ": start %" PRId64 " and end %" PRId64
				   " are not a range in the session", table, row, t0, t1);
			break;
		}
		const char *name = (const char *)sqlite3_column_text(st, 2);
		char nm[64];
		if (!name) {
			snprintf(nm, sizeof nm, "(unnamed %s)", kind);
			name = nm;
		}
		cs_range r;
		cs_range_init(&r, kind, name, (uint64_t)t0, (uint64_t)t1);
		if (sqlite3_column_type(st, 3) != SQLITE_NULL)
			r.device = sqlite3_column_int64(st, 3);
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			r.stream = sqlite3_column_int64(st, 4);
		if (sqlite3_column_type(st, 5) != SQLITE_NULL)
			r.correlation_id = sqlite3_column_int64(st, 5);
		if (sqlite3_column_type(st, 6) != SQLITE_NULL)
			r.bytes = sqlite3_column_int64(st, 6);
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			int64_t g = sqlite3_column_int64(st, 7);
			r.tid = g % 0x1000000;
			r.pid = (g / 0x1000000) % 0x1000000;
		}
		if ((rc = add_range(x, &r)) < 0)
			break;
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = sql_fail(x, table);
	sqlite3_finalize(st);
	*count = row;
	return rc;
}

/* "c" when table t has column c, else "NULL", into out. */
static const char *col_or_null(sqlite3 *db, const char *t, const char *prefix, const char *c,
			       char *out, size_t len)
{
	if (has_col(db, t, c))
		snprintf(out, len, "%s%s", prefix, c);
	else
		snprintf(out, len, "NULL");
	return out;
}

/* Kernels, copies, memsets, runtime calls, graph launches, NVTX. */
static int all_ranges(nsys *x, uint64_t *kernels)
{
	sqlite3 *db = x->db;
	char sql[1400], c1[64], c2[64], c3[64], c4[64], c5[64];
	uint64_t n;
	int rc = 0;
	*kernels = 0;
	if (has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL")) {
		static const char *const names[] = {"demangledName", "shortName", "mangledName", "name",
						    NULL};
		const char *nc = first_col(db, "CUPTI_ACTIVITY_KIND_KERNEL", names);
		if (!nc)
			return nfail(x, -EINVAL, "CUPTI_ACTIVITY_KIND_KERNEL has no name column "
				     "(demangledName, shortName, mangledName)");
		snprintf(sql, sizeof sql,
			 "SELECT k.start, k.end, s.value, %s, %s, %s, NULL, NULL FROM "
			 "CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.%s ORDER BY k.start",
			 col_or_null(db, "CUPTI_ACTIVITY_KIND_KERNEL", "k.", "deviceId", c1, sizeof c1),
			 col_or_null(db, "CUPTI_ACTIVITY_KIND_KERNEL", "k.", "streamId", c2, sizeof c2),
			 col_or_null(db, "CUPTI_ACTIVITY_KIND_KERNEL", "k.", "correlationId", c3, sizeof c3),
			 nc);
		if ((rc = ranges_from(x, "CUPTI_ACTIVITY_KIND_KERNEL", "kernel", sql, kernels)) < 0)
			return rc;
	}
	static const char *const copies[][2] = {{"CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"},
						{"CUPTI_ACTIVITY_KIND_MEMSET", "memset"}};
	for (size_t i = 0; i < 2; i++) {
		const char *t = copies[i][0];
		if (!has_table(db, t))
			continue;
		/* memcpy HtoD etc. from the copy kind's enum when it is there */
		char nameexpr[300];
		if (i == 0 && has_col(db, t, "copyKind") && has_table(db, "ENUM_CUDA_MEMCPY_OPER"))
			snprintf(nameexpr, sizeof nameexpr, "'memcpy ' || coalesce((SELECT label FROM "
				 "ENUM_CUDA_MEMCPY_OPER e WHERE e.id = c.copyKind), c.copyKind)");
		else if (i == 0 && has_col(db, t, "copyKind"))
			snprintf(nameexpr, sizeof nameexpr, "'memcpy kind ' || c.copyKind");
		else
			snprintf(nameexpr, sizeof nameexpr, "'%s'", copies[i][1]);
		snprintf(sql, sizeof sql, "SELECT c.start, c.end, %s, %s, %s, %s, %s, NULL FROM %s c "
			 "ORDER BY c.start", nameexpr,
			 col_or_null(db, t, "c.", "deviceId", c1, sizeof c1),
			 col_or_null(db, t, "c.", "streamId", c2, sizeof c2),
			 col_or_null(db, t, "c.", "correlationId", c3, sizeof c3),
			 col_or_null(db, t, "c.", "bytes", c4, sizeof c4), t);
		if ((rc = ranges_from(x, t, copies[i][1], sql, &n)) < 0)
			return rc;
	}
	if (has_table(db, "CUPTI_ACTIVITY_KIND_RUNTIME")) {
		const char *t = "CUPTI_ACTIVITY_KIND_RUNTIME";
		if (!has_col(db, t, "nameId"))
			return nfail(x, -EINVAL, "%s has no nameId column", t);
		snprintf(sql, sizeof sql, "SELECT r.start, r.end, s.value, NULL, NULL, %s, NULL, %s FROM "
			 "%s r LEFT JOIN StringIds s ON s.id = r.nameId ORDER BY r.start",
			 col_or_null(db, t, "r.", "correlationId", c3, sizeof c3),
			 col_or_null(db, t, "r.", "globalTid", c5, sizeof c5), t);
		if ((rc = ranges_from(x, t, "api", sql, &n)) < 0)
			return rc;
	}
	if (has_table(db, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")) {
		const char *t = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
		snprintf(sql, sizeof sql, "SELECT g.start, g.end, 'graph ' || %s, %s, %s, %s, NULL, NULL "
			 "FROM %s g ORDER BY g.start",
			 col_or_null(db, t, "g.", "graphId", c4, sizeof c4),
			 col_or_null(db, t, "g.", "deviceId", c1, sizeof c1),
			 col_or_null(db, t, "g.", "streamId", c2, sizeof c2),
			 col_or_null(db, t, "g.", "correlationId", c3, sizeof c3), t);
		if ((rc = ranges_from(x, t, "graph", sql, &n)) < 0)
			return rc;
	}
	if (has_table(db, "NVTX_EVENTS")) {
		const char *t = "NVTX_EVENTS";
		/* push/pop (59), start/end (60), their NVTXT forms (70, 71), marks (34) */
		char text[200];
		if (has_col(db, t, "textId"))
			snprintf(text, sizeof text, "coalesce(e.text, (SELECT value FROM StringIds s WHERE "
				 "s.id = e.textId))");
		else
			snprintf(text, sizeof text, "e.text");
		snprintf(sql, sizeof sql, "SELECT e.start, CASE WHEN e.eventType = 34 THEN e.start ELSE "
			 "e.end END, %s, NULL, NULL, NULL, NULL, %s FROM %s e WHERE e.eventType IN "
			 "(34, 59, 60, 70, 71) AND (e.end IS NOT NULL OR e.eventType = 34) ORDER BY "
			 "e.start", text, col_or_null(db, t, "e.", "globalTid", c5, sizeof c5), t);
		if ((rc = ranges_from(x, t, "nvtx", sql, &n)) < 0)
			return rc;
	}
	return 0;
}

static int flush_gpu(nsys *x, uint32_t dev)
{
	gpu_rows *g = x->g[dev];
	if (!g || !g->n)
		return 0;
	cs_batch b = {dev, g->seq, (uint32_t)g->n, x->m, x->ids, g->t0, g->t1, g->vals};
	int rc = cs_producer_append(x->p, &b);
	if (rc < 0)
		return nfail(x, rc, "%s", cs_producer_errmsg(x->p));
	g->seq += g->n;
	g->n = 0;
	return 0;
}

/* The sample gathered for timestamp g->last_ts, over [t0, t1). */
static int push_sample(nsys *x, uint32_t dev, int64_t t0, int64_t t1)
{
	gpu_rows *g = x->g[dev];
	if (t0 < 0)
		t0 = 0;
	g->t0[g->n] = (uint64_t)t0;
	g->t1[g->n] = (uint64_t)(t1 > t0 ? t1 : t0 + 1);
	memcpy(g->vals + g->n * x->m, g->cur, x->m * sizeof(double));
	for (uint32_t k = 0; k < x->m; k++)
		g->cur[k] = NAN;
	if (++g->n == BATCH)
		return flush_gpu(x, dev);
	return 0;
}

/* A GPU's samples at a new timestamp ts: the one gathered so far ends. */
static int next_ts(nsys *x, uint32_t dev, int64_t ts)
{
	gpu_rows *g = x->g[dev];
	int rc = 0;
	if (g->last_ts != INT64_MIN) {
		if (g->pending_first) {
			/* the first sample: as long as the second's interval */
			int64_t d = ts - g->last_ts;
			rc = push_sample(x, dev, g->last_ts - d, g->last_ts);
			g->pending_first = 0;
		} else {
			rc = push_sample(x, dev, g->prev_ts, g->last_ts);
		}
		g->prev_ts = g->last_ts;
	}
	g->last_ts = ts;
	return rc;
}

static int cmp_gmet(const void *a, const void *b)
{
	const gmet *p = a, *q = b;
	if (p->type != q->type)
		return p->type < q->type ? -1 : 1;
	return (p->id > q->id) - (p->id < q->id);
}

/* GPU_METRICS as the run's time series. */
static int gpu_metrics(nsys *x, uint64_t *rows)
{
	sqlite3 *db = x->db;
	*rows = 0;
	if (!has_table(db, "GPU_METRICS"))
		return 0;
	if (!has_table(db, "TARGET_INFO_GPU_METRICS"))
		return nfail(x, -EINVAL, "GPU_METRICS is there but TARGET_INFO_GPU_METRICS, which "
			     "names its metrics, is not");
	static const char *const ts_c[] = {"timestamp", "start", NULL};
	static const char *const id_c[] = {"metricId", "id", NULL};
	static const char *const nm_c[] = {"metricName", "name", NULL};
	const char *ts = first_col(db, "GPU_METRICS", ts_c), *mid = first_col(db, "GPU_METRICS", id_c);
	const char *tid = first_col(db, "TARGET_INFO_GPU_METRICS", id_c),
		   *tnm = first_col(db, "TARGET_INFO_GPU_METRICS", nm_c);
	const char *miss = !ts ? "GPU_METRICS.timestamp" : !mid ? "GPU_METRICS.metricId"
			   : !has_col(db, "GPU_METRICS", "typeId") ? "GPU_METRICS.typeId"
			   : !has_col(db, "GPU_METRICS", "value") ? "GPU_METRICS.value"
			   : !tid ? "TARGET_INFO_GPU_METRICS.metricId"
			   : !tnm ? "TARGET_INFO_GPU_METRICS.metricName"
			   : !has_col(db, "TARGET_INFO_GPU_METRICS", "typeId") ? "TARGET_INFO_GPU_METRICS.typeId"
			   : NULL;
	if (miss)
		return nfail(x, -EINVAL, "no column %s (the GPU metrics tables of nsys 2023.x to "
			     "2026.x have it)", miss);
	/* The metrics: one column per distinct name. */
	char sql[600];
	snprintf(sql, sizeof sql, "SELECT typeId, %s, %s FROM TARGET_INFO_GPU_METRICS ORDER BY %s, typeId",
		 tid, tnm, tid);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(x, "TARGET_INFO_GPU_METRICS");
	int rc = 0;
	char **names = NULL;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 2);
		char unnamed[64];
		if (!name) { /* a metric without a name keeps its id */
			snprintf(unnamed, sizeof unnamed, "metric %lld", (long long)sqlite3_column_int64(st, 1));
			name = unnamed;
		}
		gmet *g = realloc(x->gm, (x->ngm + 1) * sizeof *g);
		if (!g) {
			rc = -ENOMEM;
			break;
		}
		x->gm = g;
		gmet *e = &x->gm[x->ngm++];
		e->type = sqlite3_column_int64(st, 0);
		e->id = sqlite3_column_int64(st, 1);
		e->col = -1;
		for (uint32_t k = 0; names && k < x->m; k++)
			if (!strcmp(names[k], name))
				e->col = (int)k;
		if (e->col < 0) {
			char **gn = realloc(names, (x->m + 1) * sizeof *gn);
			uint32_t *gi = realloc(x->ids, (x->m + 1) * sizeof *gi);
			if (gn) {
				names = gn;
				names[x->m] = NULL;
			}
			if (gi)
				x->ids = gi;
			if (!gn || !gi || !(names[x->m] = strdup(name))) {
				rc = -ENOMEM;
				break;
			}
			/* nsys names carry their unit: "GPC Clock Frequency [MHz]",
			 * "SMs Active [Throughput %]" (a percentage) */
			char unit[32] = "";
			const char *lb = strrchr(name, '['), *rb = lb ? strchr(lb, ']') : NULL;
			if (lb && rb && rb > lb + 1 && !rb[1])
				snprintf(unit, sizeof unit, "%.*s", (int)(rb - lb - 1), lb + 1);
			if (strchr(unit, '%'))
				snprintf(unit, sizeof unit, "%%");
			cs_metric_info mi = {.name = name, .kind = "gauge", .unit = unit[0] ? unit : NULL};
			int r2 = cs_producer_add_metric(x->p, &mi, &x->ids[x->m]);
			e->col = (int)x->m++; /* counted, so its name is freed */
			if (r2 < 0) {
				rc = nfail(x, r2, "%s", cs_producer_errmsg(x->p));
				break;
			}
		}
	}
	sqlite3_finalize(st);
	for (uint32_t k = 0; names && k < x->m; k++)
		free(names[k]);
	free(names);
	if (rc)
		return rc == -ENOMEM ? nfail(x, rc, "out of memory") : rc;
	qsort(x->gm, x->ngm, sizeof *x->gm, cmp_gmet);
	/* The samples, GPU by GPU, in time order. */
	snprintf(sql, sizeof sql, "SELECT %s, typeId, %s, value FROM GPU_METRICS WHERE %s IS NOT NULL "
		 "AND %s >= 0 ORDER BY typeId & 255, %s", ts, mid, ts, ts, ts);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(x, "GPU_METRICS");
	/* progress: GPU_METRICS is nearly all of a large export */
	int64_t total = 0;
	sqlite3_stmt *cnt = NULL;
	if (x->o->progress && sqlite3_prepare_v2(db, "SELECT count(*) FROM GPU_METRICS", -1, &cnt,
						 NULL) == SQLITE_OK && sqlite3_step(cnt) == SQLITE_ROW)
		total = sqlite3_column_int64(cnt, 0);
	sqlite3_finalize(cnt);
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		(*rows)++;
		if (sqlite3_column_type(st, 1) == SQLITE_NULL || sqlite3_column_type(st, 2) == SQLITE_NULL ||
		    sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue; /* no metric or no value: nothing to store */
		if (total > 0 && !(*rows & 65535)) /* rows read as a share of the file */
			x->o->progress(x->o->progress_ctx,
				       (size_t)((double)*rows / (double)total * (double)x->size), x->size);
		int64_t t = sqlite3_column_int64(st, 0), type = sqlite3_column_int64(st, 1),
			id = sqlite3_column_int64(st, 2);
		gmet key = {type, id, 0};
		gmet *e = bsearch(&key, x->gm, x->ngm, sizeof *x->gm, cmp_gmet);
		if (!e) {
			rc = nfail(x, -EINVAL, "GPU_METRICS row %" PRIu64 ": metricId %" PRId64 " of typeId "
				   "%" PRId64 " is not in TARGET_INFO_GPU_METRICS", *rows, id, type);
			break;
		}
		uint32_t dev = (uint32_t)(type & 0xFF);
		gpu_rows *g = x->g[dev];
		if (!g && !(g = x->g[dev] = calloc(1, sizeof *g))) {
			rc = nfail(x, -ENOMEM, "out of memory");
			break;
		}
		if (!g->cur) {
			if (!(g->cur = malloc((x->m ? x->m : 1) * sizeof *g->cur)) ||
			    !(g->vals = malloc((size_t)BATCH * (x->m ? x->m : 1) * sizeof *g->vals))) {
				rc = nfail(x, -ENOMEM, "out of memory");
				break;
			}
			for (uint32_t k = 0; k < x->m; k++)
				g->cur[k] = NAN;
			g->last_ts = INT64_MIN;
			g->pending_first = 1;
			cs_device_info di = {.index = dev};
			if (!g->present && (rc = cs_producer_add_device(x->p, &di)) < 0) {
				rc = nfail(x, rc, "%s", cs_producer_errmsg(x->p));
				break;
			}
			g->present = 1;
		}
		if (t != g->last_ts && (rc = next_ts(x, dev, t)) < 0)
			break;
		g->cur[e->col] = sqlite3_column_double(st, 3);
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = sql_fail(x, "GPU_METRICS");
	sqlite3_finalize(st);
	/* each GPU's last sample: as long as the one before it */
	for (uint32_t d = 0; rc == 0 && d < MAX_GPUS; d++) {
		gpu_rows *g = x->g[d];
		if (!g || !g->cur || g->last_ts == INT64_MIN)
			continue;
		rc = g->pending_first ? push_sample(x, d, g->last_ts - 1, g->last_ts)
				      : push_sample(x, d, g->prev_ts, g->last_ts);
		if (rc == 0)
			rc = flush_gpu(x, d);
	}
	return rc;
}

/* The GPUs of TARGET_INFO_GPU (or the older TARGET_INFO_CUDA_GPU). */
static int devices(nsys *x, char *chip, size_t chiplen, double *clock)
{
	sqlite3 *db = x->db;
	const char *t = has_table(db, "TARGET_INFO_GPU") ? "TARGET_INFO_GPU"
			: has_table(db, "TARGET_INFO_CUDA_GPU") ? "TARGET_INFO_CUDA_GPU" : NULL;
	if (!t)
		return 0;
	static const char *const idc[] = {"id", "deviceId", NULL};
	static const char *const smc[] = {"smCount", "numMultiprocessors", NULL};
	static const char *const clc[] = {"clockRate", "coreClockRate", NULL};
	const char *id = first_col(db, t, idc), *sm = first_col(db, t, smc), *cl = first_col(db, t, clc);
	if (!id)
		return 0;
	char sql[400], c1[64], c2[64], c3[64];
	snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s, %s FROM %s ORDER BY %s", id,
		 col_or_null(db, t, "", "name", c1, sizeof c1),
		 col_or_null(db, t, "", "chipName", c2, sizeof c2), sm ? sm : "NULL", cl ? cl : "NULL",
		 col_or_null(db, t, "", "uuid", c3, sizeof c3), t, id);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(x, t);
	int rc = 0;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		int64_t idx = sqlite3_column_int64(st, 0);
		if (idx < 0 || idx >= MAX_GPUS || (x->g[idx] && x->g[idx]->present))
			continue; /* out of range, or listed twice (one row per VM) */
		double hz = sqlite3_column_double(st, 4);
		/* TARGET_INFO_GPU says Hz; the older table kHz */
		if (!strcmp(t, "TARGET_INFO_CUDA_GPU"))
			hz *= 1e3;
		cs_device_info di = {.index = (uint32_t)idx,
				     .name = (const char *)sqlite3_column_text(st, 1),
				     .chip = (const char *)sqlite3_column_text(st, 2),
				     .sm_count = (uint32_t)sqlite3_column_int64(st, 3),
				     .clock_hz = hz,
				     .uuid = (const char *)sqlite3_column_text(st, 5)};
		if ((rc = cs_producer_add_device(x->p, &di)) < 0)
			rc = nfail(x, rc, "%s", cs_producer_errmsg(x->p));
		if (!x->g[idx] && !(x->g[idx] = calloc(1, sizeof *x->g[idx])))
			rc = nfail(x, -ENOMEM, "out of memory");
		else
			x->g[idx]->present = 1;
		if (!chip[0] && di.chip)
			snprintf(chip, chiplen, "%s", di.chip);
		if (!(*clock > 0) && hz > 0)
			*clock = hz;
	}
	sqlite3_finalize(st);
	return rc;
}

int cs_import_nsys_sqlite(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
			  size_t errlen)
{
	nsys *x = calloc(1, sizeof *x);
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->p = p;
	x->o = o;
	x->label = o->label ? o->label : path;
	x->err = err;
	x->errlen = errlen;
	err[0] = '\0';
	int rc = 0;
	if (sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = nfail(x, -EIO, "cannot open it read-only: %s", sqlite3_errmsg(x->db));
	if (rc == 0) {
		int any = 0;
		for (const char *const *t = activity; *t; t++)
			any |= has_table(x->db, *t);
		if (!has_table(x->db, "StringIds") || !any)
			rc = nfail(x, -EINVAL, "not an Nsight Systems SQLite export: %s%s%s",
				   has_table(x->db, "StringIds") ? "" : "no StringIds table",
				   !has_table(x->db, "StringIds") && !any ? "; " : "",
				   any ? "" : "none of its tables (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, "
					      "_MEMSET, _RUNTIME, NVTX_EVENTS, GPU_METRICS) is there");
	}
	if (rc == 0) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(x->db, "SELECT page_count * page_size FROM pragma_page_count, "
				       "pragma_page_size", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			x->size = (size_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	/* the session: its wall-clock start and the export's schema version */
	int64_t start_utc = 0;
	char ver[64] = "";
	if (rc == 0 && has_table(x->db, "TARGET_INFO_SESSION_START_TIME") &&
	    has_col(x->db, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(x->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
				       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			start_utc = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (rc == 0 && has_table(x->db, "META_DATA_EXPORT")) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(x->db, "SELECT value FROM META_DATA_EXPORT WHERE name = "
				       "'EXPORT_SCHEMA_VERSION'", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(ver, sizeof ver, "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	int begun = 0;
	uint64_t kernels = 0, mrows = 0;
	char chip[64] = "";
	double clock = 0;
	if (rc == 0) {
		cs_buf extra = CS_BUF_INIT, meta = CS_BUF_INIT;
		cs_buf_printf(&extra, "\"session_start_utc_ns\":%" PRId64 ",\"export_schema_version\":",
			      start_utc);
		cs_json_str(&extra, ver);
		if (cs_buf_put_u8(&extra, 0) ||
		    cs_simrun_meta(&meta, x->label, "nsys-sqlite", (const char *)extra.data))
			rc = nfail(x, -ENOMEM, "out of memory");
		cs_buf_free(&extra);
		cs_run_info info = {
			.kind = o->kind ? o->kind : "hw",
			.source = "nsys-sqlite",
			.name = o->name ? o->name : cs_simrun_base_name(x->label),
			.time_unit = "ns",
			.meta = (const char *)meta.data,
			.start_ns = start_utc > 0 ? (uint64_t)start_utc : 0,
			.clock_hz = o->clock_hz,
		};
		if (rc == 0 && (rc = cs_producer_begin(p, &info)) < 0)
			rc = nfail(x, rc, "%s", cs_producer_errmsg(p));
		else if (rc == 0)
			begun = 1;
		cs_buf_free(&meta);
	}
	if (rc == 0)
		rc = devices(x, chip, sizeof chip, &clock);
	if (rc == 0)
		rc = gpu_metrics(x, &mrows);
	if (rc == 0)
		rc = all_ranges(x, &kernels);
	if (rc == 0 && o->progress)
		o->progress(o->progress_ctx, x->size, x->size);
	if (rc == 0 && !x->ranges && !mrows)
		rc = nfail(x, -ENODATA, "nothing to import: no kernels, copies, API calls, NVTX ranges "
			   "or GPU metrics in any table");
	if (rc == 0) {
		if (!kernels)
			cs_log(CS_LOG_WARN, "%s: no kernels (CUPTI_ACTIVITY_KIND_KERNEL is %s)", x->label,
			       has_table(x->db, "CUPTI_ACTIVITY_KIND_KERNEL") ? "empty" : "not there");
		cs_log(CS_LOG_INFO, "%s: nsys export (schema %s): %" PRIu64 " ranges (%" PRIu64
		       " kernels), %" PRIu64 " GPU metric values over %u metrics", x->label,
		       ver[0] ? ver : "unknown", x->ranges, kernels, mrows, x->m);
		if ((rc = cs_producer_end(p, "complete", NULL)) < 0)
			rc = nfail(x, rc, "%s", cs_producer_errmsg(p));
	} else if (begun) {
		cs_producer_discard(p);
	}
	for (size_t d = 0; d < MAX_GPUS; d++) {
		if (x->g[d]) {
			free(x->g[d]->cur);
			free(x->g[d]->vals);
		}
		free(x->g[d]);
	}
	free(x->gm);
	free(x->ids);
	sqlite3_close(x->db);
	free(x);
	return rc;
}
