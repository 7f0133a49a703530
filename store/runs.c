/*
 * runs.c - the runs table read for listings and JSON (runs.h).
 */
#include "runs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"
#include "store_int.h"

#define fail_sql(s, src, what) cs_nonzero_(cs_store_fail_sql_(s, src, what))

/* A run's labels as a JSON object: meta.labels, over the job and rank
 * that collectors of earlier versions put at meta's top level. */
#define LABELS_SQL                                                                             \
	"json_patch(json_patch('{}', json_object('job', json_extract(r.meta, '$.job'),"        \
	" 'rank', json_extract(r.meta, '$.rank'))),"                                            \
	" coalesce(json_extract(r.meta, '$.labels'), '{}'))"
#define JOB_SQL                                                                                \
	"coalesce(json_extract(r.meta, '$.labels.job'), json_extract(r.meta, '$.job'))"
#define RANK_SQL                                                                               \
	"coalesce(json_extract(r.meta, '$.labels.rank'), json_extract(r.meta, '$.rank'))"

/* The origin (see cs_runs_origin) of the run r aliases. */
#define ORIGIN_SQL                                                                             \
	"coalesce(r.t_min, (SELECT t0 FROM ranges g WHERE g.run = r.id ORDER BY t0 LIMIT 1), 0)"

/* The JSON object of a run, over the runs table aliased r. */
#define RUN_JSON_FIELDS                                                                        \
	"'id', r.id, 'uuid', r.uuid, 'kind', r.kind, 'source', r.source, 'name', r.name,"       \
	" 'status', r.status, 'time_unit', r.time_unit, 'clock_hz', r.clock_hz,"                \
	" 'host', r.host, 'pid', r.pid, 'cmdline', r.cmdline, 'start_ns', r.start_ns,"          \
	" 'end_ns', r.end_ns, 'origin', " ORIGIN_SQL ","                                        \
	" 't_min', r.t_min, 't_max', r.t_max, 'samples', r.samples,"                            \
	" 'dropped', r.dropped, 'overflows', r.overflows,"                                      \
	" 'devices', (SELECT count(*) FROM devices d WHERE d.run = r.id),"                      \
	" 'metrics', (SELECT count(*) FROM metrics m WHERE m.run = r.id),"                      \
	" 'ranges', (SELECT count(*) FROM ranges g WHERE g.run = r.id),"                         \
	" 'labels', json(" LABELS_SQL "), 'meta', json(r.meta)"

/* ?1 kind, ?2 name or glob, ?3 since, ?4 job: NULL = any. (SQLite
 * refuses GLOB patterns over 50000 bytes; callers bound names well below
 * that.) Over the runs table aliased r. */
#define RUNS_WHERE                                                                             \
	" WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR name = ?2 OR name GLOB ?2)"       \
	" AND (?3 IS NULL OR start_ns >= ?3) AND (?4 IS NULL OR " JOB_SQL " = ?4)"

static int prepare(cs_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, st, NULL);
	return rc == SQLITE_OK ? 0 : fail_sql(s, rc, "preparing a runs query");
}

static void bind_filter(sqlite3_stmt *st, const cs_runs_filter *f)
{
	if (f && f->kind)
		sqlite3_bind_text(st, 1, f->kind, -1, SQLITE_STATIC);
	if (f && f->name)
		sqlite3_bind_text(st, 2, f->name, -1, SQLITE_STATIC);
	if (f && f->have_since)
		sqlite3_bind_int64(st, 3, f->since_ns > INT64_MAX ? INT64_MAX : (int64_t)f->since_ns);
	if (f && f->job)
		sqlite3_bind_text(st, 4, f->job, -1, SQLITE_STATIC);
}

static void text(char *out, size_t len, sqlite3_stmt *st, int col)
{
	const char *v = (const char *)sqlite3_column_text(st, col);
	snprintf(out, len, "%s", v ? v : "");
}

int cs_runs_list(cs_store *s, const cs_runs_filter *f, cs_run_row **rows, size_t *n)
{
	sqlite3_stmt *st = NULL;
	*rows = NULL;
	*n = 0;
	int rc = prepare(s,
			 "SELECT r.id, r.kind, r.status, r.source, r.time_unit,"
			 " (SELECT count(*) FROM devices d WHERE d.run = r.id),"
			 " (SELECT count(*) FROM metrics m WHERE m.run = r.id),"
			 " r.samples, r.t_min, r.t_max, r.name, " JOB_SQL ", " RANK_SQL
			 " FROM runs r" RUNS_WHERE " ORDER BY r.id",
			 &st);
	if (rc)
		return rc;
	bind_filter(st, f);
	size_t cap = 0;
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			cs_run_row *r = realloc(*rows, nc * sizeof *r);
			if (!r) {
				rc = cs_store_fail_(s, -ENOMEM, "out of memory listing runs");
				goto out;
			}
			*rows = r;
			cap = nc;
		}
		cs_run_row *r = &(*rows)[(*n)++];
		memset(r, 0, sizeof *r);
		r->id = sqlite3_column_int64(st, 0);
		text(r->kind, sizeof r->kind, st, 1);
		text(r->status, sizeof r->status, st, 2);
		text(r->source, sizeof r->source, st, 3);
		text(r->time_unit, sizeof r->time_unit, st, 4);
		r->devices = sqlite3_column_int64(st, 5);
		r->metrics = sqlite3_column_int64(st, 6);
		r->samples = sqlite3_column_int64(st, 7);
		r->have_span = sqlite3_column_type(st, 8) != SQLITE_NULL;
		r->t_min = sqlite3_column_int64(st, 8);
		r->t_max = sqlite3_column_int64(st, 9);
		text(r->name, sizeof r->name, st, 10);
		text(r->job, sizeof r->job, st, 11);
		text(r->rank, sizeof r->rank, st, 12);
	}
	if (src != SQLITE_DONE)
		rc = fail_sql(s, src, "listing runs");
out:
	sqlite3_finalize(st);
	if (rc) {
		free(*rows);
		*rows = NULL;
		*n = 0;
	}
	return rc;
}

/* Steps st once and appends its one JSON text cell (an aggregate: always
 * one row). */
static int one_json(cs_store *s, sqlite3_stmt *st, cs_buf *out)
{
	int src = sqlite3_step(st);
	if (src != SQLITE_ROW)
		return fail_sql(s, src, "reading runs as JSON");
	cs_json_sql(out, (const char *)sqlite3_column_text(st, 0));
	return 0;
}

int cs_runs_json(cs_store *s, const cs_runs_filter *f, cs_buf *out)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s,
			 "SELECT json_group_array(json_object(" RUN_JSON_FIELDS "))"
			 " FROM (SELECT * FROM runs r" RUNS_WHERE " ORDER BY id) r",
			 &st);
	if (rc)
		return rc;
	bind_filter(st, f);
	rc = one_json(s, st, out);
	sqlite3_finalize(st);
	return rc;
}

/* Steps a statement that selects one run's row: 0 with the row, -ENOENT
 * without one, or the error. */
static int one_run(cs_store *s, sqlite3_stmt *st, const char *what)
{
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		return 0;
	if (src == SQLITE_DONE)
		return cs_store_fail_(s, -ENOENT, "no such run");
	return fail_sql(s, src, what);
}

int cs_runs_summary(cs_store *s, int64_t run, cs_run_summary *out)
{
	sqlite3_stmt *st = NULL;
	memset(out, 0, sizeof *out);
	int rc = prepare(s,
			 "SELECT uuid, name, samples, (SELECT count(*) FROM metrics WHERE run = ?1),"
			 " (SELECT count(*) FROM devices WHERE run = ?1), time_unit,"
			 " coalesce(t_max, 0), coalesce(clock_hz, 0), status, kind, source"
			 " FROM runs WHERE id = ?1",
			 &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	if ((rc = one_run(s, st, "reading a run's summary")) == 0) {
		text(out->uuid, sizeof out->uuid, st, 0);
		text(out->name, sizeof out->name, st, 1);
		out->samples = sqlite3_column_int64(st, 2);
		out->metrics = sqlite3_column_int64(st, 3);
		out->devices = sqlite3_column_int64(st, 4);
		text(out->time_unit, sizeof out->time_unit, st, 5);
		out->t_max = sqlite3_column_int64(st, 6);
		out->clock_hz = sqlite3_column_double(st, 7);
		text(out->status, sizeof out->status, st, 8);
		text(out->kind, sizeof out->kind, st, 9);
		text(out->source, sizeof out->source, st, 10);
	}
	sqlite3_finalize(st);
	return rc;
}

int cs_runs_run_json(cs_store *s, int64_t run, const char *default_metrics, cs_buf *out)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(
		s,
		"SELECT json_object(" RUN_JSON_FIELDS ","
		" 'default_metrics', json(?2),"
		" 'device_list', (SELECT json_group_array(json_object('index', idx, 'name', name,"
		"   'chip', chip, 'uuid', uuid, 'sm_count', sm_count, 'clock_hz', clock_hz,"
		"   'mem_clock_hz', mem_clock_hz)) FROM devices WHERE run = r.id),"
		" 'metric_list', (SELECT json_group_array(json_object('id', id, 'name', name,"
		"   'unit', unit, 'kind', kind)) FROM (SELECT * FROM metrics WHERE run = r.id"
		"   ORDER BY id)),"
		" 'range_summary', (SELECT json_group_array(json_object('kind', kind, 'count', n,"
		"   't0', t0, 't1', t1, 'names', names)) FROM (SELECT kind, count(*) AS n,"
		"   min(t0) AS t0, max(t1) AS t1, count(DISTINCT name) AS names FROM ranges"
		"   WHERE run = r.id GROUP BY kind)))"
		" FROM runs r WHERE r.id = ?1",
		&st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, default_metrics ? default_metrics : "[]", -1, SQLITE_STATIC);
	if ((rc = one_run(s, st, "reading a run as JSON")) == 0)
		cs_json_sql(out, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc;
}

int cs_runs_metrics_json(cs_store *s, int64_t run, cs_buf *out)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s,
			 "SELECT json_group_array(json_object('id', id, 'name', name, 'unit', unit,"
			 " 'kind', kind, 'cumulative', json(CASE cumulative WHEN 1 THEN 'true'"
			 " ELSE 'false' END))) FROM (SELECT * FROM metrics WHERE run = ?1 ORDER BY id)",
			 &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	rc = one_json(s, st, out);
	sqlite3_finalize(st);
	return rc;
}

double cs_runs_clock(cs_store *s, int64_t run, const char *domain)
{
	sqlite3_stmt *st = NULL;
	double hz = 0;
	if (prepare(s,
		    "SELECT coalesce(NULLIF(json_extract(r.meta, '$.clock_domains_hz.' || ?2), 0),"
		    " CASE WHEN ?2 IS NULL OR ?2 = 'core' THEN coalesce(NULLIF(r.clock_hz, 0),"
		    " (SELECT clock_hz FROM devices d WHERE d.run = r.id AND d.idx = 0)) END)"
		    " FROM runs r WHERE r.id = ?1",
		    &st))
		return 0;
	sqlite3_bind_int64(st, 1, run);
	if (domain)
		sqlite3_bind_text(st, 2, domain, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		hz = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return hz;
}

int cs_runs_time(cs_store *s, int64_t run, const char *spec, uint64_t *out, char *err,
		 size_t errlen)
{
	cs_time_spec t;
	if (cs_time_parse(spec, &t, err, errlen))
		return -EINVAL;
	/* the run's unit and origin, in one look (an address's from and to
	 * each come here, on every zoom) */
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT r.time_unit = 'cycle', " ORIGIN_SQL " FROM runs r WHERE r.id = ?1",
			 &st);
	int cycles = 0;
	uint64_t origin = 0;
	if (rc == 0) {
		sqlite3_bind_int64(st, 1, run);
		if ((rc = one_run(s, st, "reading a run's unit and origin")) == 0) {
			cycles = sqlite3_column_int(st, 0);
			origin = t.absolute ? 0 : (uint64_t)sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
	}
	if (rc) {
		snprintf(err, errlen, "%s", cs_store_errmsg(s));
		return rc;
	}
	double v = t.value;
	int converted = (t.unit == CS_TIME_NS && cycles) || (t.unit == CS_TIME_CYCLE && !cycles);
	if (converted) {
		double hz = cs_runs_clock(s, run, NULL);
		if (!(hz > 0)) {
			snprintf(err, errlen,
				 "'%s': this run counts in %s and records no clock to convert %s: "
				 "give the time in %s",
				 spec, cycles ? "cycles" : "ns", cycles ? "time" : "cycles",
				 cycles ? "cycles (30000cyc, or a bare number)" : "ns, us, ms or s");
			return -EINVAL;
		}
		v = cycles ? v * hz / 1e9 : v / hz * 1e9;
	}
	/* whole numbers stay exact beyond 2^53 (absolute epoch times) */
	uint64_t rel = t.exact && !converted ? t.whole
		       : nearbyint(v) < 9223372036854775807.0 ? (uint64_t)nearbyint(v)
							    : UINT64_MAX;
	if (rel > (uint64_t)INT64_MAX - origin) {
		snprintf(err, errlen, "'%s': past the end of the run's time", spec);
		return -EINVAL;
	}
	*out = origin + rel;
	return 0;
}

int cs_runs_meta_is(cs_store *s, int64_t run, const char *path, const char *value)
{
	sqlite3_stmt *st = NULL;
	int yes = 0;
	if (prepare(s, "SELECT json_extract(meta, ?2) = ?3 FROM runs WHERE id = ?1", &st))
		return 0;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		yes = sqlite3_column_int(st, 0) == 1;
	sqlite3_finalize(st);
	return yes;
}

/* out from the one text cell sql answers for run (?1); NULL: unchanged. */
static int run_text(cs_store *s, const char *sql, int64_t run, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, sql, &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW && sqlite3_column_text(st, 0))
		text(out, outlen, st, 0);
	rc = src == SQLITE_ROW || src == SQLITE_DONE ? 0 : fail_sql(s, src, "reading a run");
	sqlite3_finalize(st);
	return rc;
}

int cs_runs_default_metrics(cs_store *s, int64_t run, char *out, size_t outlen)
{
	out[0] = '\0';
	/* a recorded metric set: the first two of it */
	int rc = run_text(s,
			  "SELECT group_concat(value, ',') FROM (SELECT j.value FROM runs,"
			  " json_each(runs.meta, '$.metrics') j WHERE runs.id = ?1 AND"
			  " json_valid(runs.meta) AND j.value IN (SELECT name FROM metrics"
			  " WHERE run = ?1) LIMIT 2)",
			  run, out, outlen);
	if (rc || out[0])
		return rc;
	/* else the two that vary most for their size (a clock that only
	 * counts time is left for last), SM activity first where the run
	 * counts it (what overlap is judged by) */
	return run_text(s,
			"WITH v AS (SELECT m.name,"
			"  (m.name GLOB 'sm__inst_executed*' OR m.name GLOB 'smsp__inst_executed*' OR"
			"   m.name GLOB 'sm__throughput*' OR m.name GLOB 'sm__warps_active*') AS sm,"
			"  row_number() OVER (ORDER BY (m.name LIKE '%cycle%'),"
			"   (c.hi - c.lo) / max(abs(c.hi), abs(c.lo)) DESC, c.hi DESC, m.name) AS rk"
			"  FROM (SELECT metric, min(vmin) lo, max(vmax) hi FROM chunks WHERE run = ?1"
			"  GROUP BY metric) c JOIN metrics m ON m.run = ?1 AND m.id = c.metric"
			"  WHERE c.hi > c.lo),"
			" first AS (SELECT name, rk FROM v WHERE sm ORDER BY rk LIMIT 1),"
			" pick AS (SELECT name, 0 AS o, rk FROM first UNION ALL"
			"  SELECT name, 1, rk FROM (SELECT name, rk FROM v WHERE name NOT IN"
			"  (SELECT name FROM first) ORDER BY rk LIMIT 2 - (SELECT count(*) FROM first)))"
			"SELECT group_concat(name, ',') FROM (SELECT name FROM pick ORDER BY o, rk)",
			run, out, outlen);
}

int cs_runs_metric_unit(cs_store *s, int64_t run, const char *name, char *unit, size_t ulen,
			char *kind, size_t klen)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, "SELECT coalesce(unit, ''), kind FROM metrics WHERE run = ?1 AND name = ?2",
			 &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		text(unit, ulen, st, 0);
		text(kind, klen, st, 1);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? -ENOENT : fail_sql(s, rc, "reading a metric");
	}
	sqlite3_finalize(st);
	return rc;
}

int cs_runs_jobs_json(cs_store *s, cs_buf *out)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s,
			 "SELECT json_group_array(json_object('job', job, 'runs', n, 'ranks', json(ranks)))"
			 " FROM (SELECT job, count(*) AS n, json_group_array(json_object('run', id,"
			 " 'name', name, 'rank', rank, 'labels', json(labels))) AS ranks FROM"
			 " (SELECT r.id, r.name, " JOB_SQL " AS job, " RANK_SQL " AS rank, " LABELS_SQL
			 " AS labels FROM runs r WHERE " JOB_SQL " IS NOT NULL"
			 " ORDER BY job, CAST(rank AS INTEGER), r.id) GROUP BY job ORDER BY job)",
			 &st);
	if (rc)
		return rc;
	rc = one_json(s, st, out);
	sqlite3_finalize(st);
	return rc;
}

int cs_runs_job(cs_store *s, const char *job, cs_job_rank **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	*out = NULL;
	*n = 0;
	int rc = prepare(s,
			 "SELECT r.id, r.name, " RANK_SQL ", coalesce(json_extract(r.meta,"
			 " '$.labels.host'), CASE WHEN r.source = 'collector' THEN r.host END),"
			 " json_extract(r.meta, '$.labels.world_size'), r.time_unit, r.start_ns"
			 " FROM runs r WHERE " JOB_SQL " = ?1 ORDER BY r.id", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
	size_t cap = 0;
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			cs_job_rank *g = realloc(*out, nc * sizeof *g);
			if (!g) {
				rc = cs_store_fail_(s, -ENOMEM, "out of memory reading a job");
				break;
			}
			*out = g;
			cap = nc;
		}
		cs_job_rank *r = &(*out)[(*n)++];
		memset(r, 0, sizeof *r);
		r->run = sqlite3_column_int64(st, 0);
		text(r->name, sizeof r->name, st, 1);
		const char *rank = (const char *)sqlite3_column_text(st, 2);
		char *end = NULL;
		long long v = rank ? strtoll(rank, &end, 10) : -1;
		r->rank = rank && *rank && end && !*end && v >= 0 && v <= INT32_MAX ? v : -1;
		text(r->host, sizeof r->host, st, 3);
		r->world_size = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 4);
		text(r->time_unit, sizeof r->time_unit, st, 5);
		r->start_ns = sqlite3_column_int64(st, 6);
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = fail_sql(s, src, "reading a job's runs");
	sqlite3_finalize(st);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int cs_meta_with_labels(const char *meta, const char *labels, char **out)
{
	*out = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -ENOMEM;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
	    SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT json_patch(coalesce(?1, '{}'),"
			       " json_object('labels', json(?2)))", -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, meta, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, labels, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
		rc = -EINVAL;
		goto out;
	}
	*out = strdup((const char *)sqlite3_column_text(st, 0));
	rc = *out ? 0 : -ENOMEM;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}
