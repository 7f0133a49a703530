/*
 * schema.sql.h - the cyclescope database's schema (v1, and what each later
 * version adds), as SQL text.
 * docs/schema.md describes every column; keep the two in step.
 */
#ifndef CS_SCHEMA_SQL_H
#define CS_SCHEMA_SQL_H

static const char cs_schema_v1[] =
	"CREATE TABLE runs("
	" id INTEGER PRIMARY KEY,"
	" uuid TEXT NOT NULL UNIQUE,"
	" kind TEXT NOT NULL CHECK(kind IN ('hw','sim')),"
	" source TEXT NOT NULL,"
	" name TEXT NOT NULL,"
	" host TEXT,"
	" pid INTEGER,"
	" cmdline TEXT,"
	" start_ns INTEGER,"
	" end_ns INTEGER,"
	" status TEXT NOT NULL"
	"  CHECK(status IN ('running','complete','incomplete')),"
	" time_unit TEXT NOT NULL CHECK(time_unit IN ('ns','cycle')),"
	" clock_hz REAL,"
	" t_min INTEGER,"
	" t_max INTEGER,"
	" samples INTEGER NOT NULL DEFAULT 0,"
	" dropped INTEGER NOT NULL DEFAULT 0,"
	" overflows INTEGER NOT NULL DEFAULT 0,"
	" meta TEXT NOT NULL DEFAULT '{}' CHECK(json_valid(meta)),"
	" writer_host TEXT,"
	" writer_pid INTEGER,"
	" writer_start INTEGER);"
	"CREATE TABLE devices("
	" run INTEGER NOT NULL,"
	" idx INTEGER NOT NULL,"
	" name TEXT, chip TEXT, uuid TEXT,"
	" sm_count INTEGER, clock_hz REAL, mem_clock_hz REAL,"
	" PRIMARY KEY(run, idx)) WITHOUT ROWID;"
	"CREATE TABLE metrics("
	" run INTEGER NOT NULL,"
	" id INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" unit TEXT,"
	" kind TEXT NOT NULL DEFAULT 'counter'"
	"  CHECK(kind IN ('counter','ratio','throughput','gauge')),"
	" cumulative INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY(run, id), UNIQUE(run, name)) WITHOUT ROWID;"
	"CREATE INDEX metrics_name ON metrics(name);"
	"CREATE TABLE ranges("
	" id INTEGER PRIMARY KEY,"
	" run INTEGER NOT NULL,"
	" kind TEXT NOT NULL,"
	" name TEXT NOT NULL,"
	" t0 INTEGER NOT NULL,"
	" t1 INTEGER NOT NULL CHECK(t1 >= t0),"
	" device INTEGER, stream INTEGER, correlation_id INTEGER,"
	" pid INTEGER, tid INTEGER, bytes INTEGER);"
	"CREATE INDEX ranges_run_t0 ON ranges(run, t0);"
	"CREATE TABLE timelines("
	" run INTEGER NOT NULL,"
	" device INTEGER NOT NULL,"
	" seq0 INTEGER NOT NULL,"
	" n INTEGER NOT NULL,"
	" t0_first INTEGER NOT NULL,"
	" t0_last INTEGER NOT NULL,"
	" t1_last INTEGER NOT NULL,"
	" data BLOB NOT NULL,"
	" PRIMARY KEY(run, device, seq0));"
	"CREATE TABLE chunks("
	" id INTEGER PRIMARY KEY,"
	" run INTEGER NOT NULL,"
	" device INTEGER NOT NULL,"
	" metric INTEGER NOT NULL,"
	" seq0 INTEGER NOT NULL,"
	" n INTEGER NOT NULL,"
	" t0_first INTEGER NOT NULL,"
	" t0_last INTEGER NOT NULL,"
	" count INTEGER NOT NULL,"
	" vmin REAL, vmax REAL, vsum REAL,"
	" data BLOB NOT NULL,"
	" UNIQUE(run, metric, device, seq0));";

/* v2: fleet shipping marks (outbox.h), keyed by the run's uuid so a run id
 * reused after a deletion never inherits another run's marks. */
static const char cs_schema_v2[] =
	"CREATE TABLE ship_marks("
	" target TEXT NOT NULL,"
	" run_uuid TEXT NOT NULL,"
	" what TEXT NOT NULL,"
	" device INTEGER NOT NULL,"
	" mark INTEGER NOT NULL,"
	" PRIMARY KEY(target, run_uuid, what, device)) WITHOUT ROWID;";

/* v3: a collector's counts of records it refused as invalid and of
 * zero-length samples, beside dropped and overflows. */
static const char cs_schema_v3[] =
	"ALTER TABLE runs ADD COLUMN bad_records INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE runs ADD COLUMN empty_samples INTEGER NOT NULL DEFAULT 0;";

/* v4: timelines by time, so a window finds its first timeline with one
 * index seek however long the run (the primary key orders them by sample
 * number, and finding a time through it read every timeline before). */
static const char cs_schema_v4[] =
	"CREATE INDEX timelines_t0 ON timelines(run, device, t0_first, seq0);";

/* v5: a range's free attributes as a JSON object (a kernel's grid and
 * block, an NCCL collective's sequence number), NULL when it has none. */
static const char cs_schema_v5[] =
	"ALTER TABLE ranges ADD COLUMN args TEXT;";

/* v6: no (run, name) index on ranges. Every range written paid for it (a
 * kernel's whole name a second time, and an insert among the others in
 * name order); the few readers that look a name up scan the run's ranges
 * by time instead. v1 to v5 files made it, created files no longer do. */
static const char cs_schema_v6[] =
	"DROP INDEX IF EXISTS ranges_run_name;";

/* v7: saved suite correlations (correlate --suite --save): the answer
 * whole, its statistics per configuration in short for listings and the
 * trend figure, what made it, when and under which label. */
static const char cs_schema_v7[] =
	"CREATE TABLE correlations("
	" id INTEGER PRIMARY KEY,"
	" created_ns INTEGER NOT NULL,"
	" label TEXT NOT NULL DEFAULT '',"
	" command TEXT NOT NULL DEFAULT '',"
	" summary TEXT NOT NULL CHECK(json_valid(summary)),"
	" result TEXT NOT NULL CHECK(json_valid(result)));";

#endif
