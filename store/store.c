/*
 * store.c - opening, schema, migrations and the batch writer; see store.h.
 */
#define _GNU_SOURCE
#include "store.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk.h"
#include "log.h"
#include "schema.sql.h"
#include "store_int.h"
#include "wire.h"
#include "series.h"
#include "pack.h"
#include "vfs.h"

#define DEFAULT_COMMIT_VALUES (4u << 20)
#define RANGE_VALUES 100u
#define PAGE_SIZE_BYTES 4096
/* Metrics transposed together in cs_writer_append. */
#define CS_WIRE_TRANSPOSE_MAX 64

enum {
	ST_INS_TIMELINE,
	ST_INS_CHUNK,
	ST_INS_RANGE,
	ST_INS_METRIC,
	ST_INS_DEVICE,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_INS_TIMELINE] = "INSERT OR REPLACE INTO timelines(run, device, seq0, n,"
			    " t0_first, t0_last, t1_last, data)"
			    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_INS_CHUNK] = "INSERT OR REPLACE INTO chunks(run, device, metric, seq0,"
			 " n, t0_first, t0_last, count, vmin, vmax, vsum, data)"
			 " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[ST_INS_RANGE] = "INSERT INTO ranges(run, kind, name, t0, t1, device,"
			 " stream, correlation_id, pid, tid, bytes, args)"
			 " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[ST_INS_METRIC] = "INSERT INTO metrics(run, id, name, unit, kind, cumulative)"
			  " VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_INS_DEVICE] = "INSERT INTO devices(run, idx, name, chip, uuid, sm_count,"
			  " clock_hz, mem_clock_hz) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
};

/* Metric k's buffer starts 64 (k % 16) bytes into its allocation: arrays
 * of a power-of-two size (16384 doubles: 128 KiB, which malloc maps page
 * aligned) would otherwise all map to the same cache sets, and the
 * writer's transpose stores to 20 of them at once. */
#define VALS_PAD(k) ((size_t)((k) % 16) * 8)

/* The open chunk of one device. */
typedef struct dev_buf {
	uint32_t index;
	int have_seq;
	uint64_t next_seq;
	uint64_t seq0; /* seq of t0[0] */
	uint32_t n;    /* buffered samples */
	int dirty;     /* samples added since the last write of this chunk */
	uint64_t done;  /* samples in this device's full chunks, all written */
	uint32_t n_put; /* samples of the open chunk as last written */
	uint64_t put_t0, put_t1; /* first t0 and largest t1 written */
	int have_put;
	uint32_t cap;     /* samples of a chunk: the length of t0, t1, vals[k] */
	uint64_t last_t0; /* of the last sample appended (have_seq) */
	uint64_t *t0, *t1;
	double **vals; /* [nvals] arrays of cap, each VALS_PAD(k) doubles into
			* its allocation; NULL = untouched */
	uint32_t nvals;
} dev_buf;

struct cs_writer {
	cs_store *s;
	int64_t run;
	cs_writer *next;
	dev_buf **devs;
	uint32_t ndevs;
	uint32_t nmetrics;
	uint8_t *seen; /* scratch for duplicate detection, nmetrics bytes */
	uint64_t samples; /* received, buffered ones included */
};

/* A chunk row encoded and waiting for flush_chunks (in s->batch). */
typedef struct pending_chunk {
	int64_t run;
	uint32_t device, metric, n, len;
	uint64_t seq0, t0_first, t0_last;
	size_t off;
	cs_agg agg;
} pending_chunk;

/* Encoded chunk rows are held back until a commit, or until this many
 * bytes wait, so that each flush orders many rows into pages (pack.h). */
#define PENDING_BYTES (8u << 20)

struct cs_store {
	sqlite3 *db;
	int readonly;
	int version; /* the file's schema version, after any migration */
	int open_extra; /* SQLITE_OPEN_NOMUTEX for a one-thread store, else 0 */
	int in_tx;
	int tx_lost; /* a failure rolled back a transaction (cs_store_abort) */
	int last_rc; /* of the last failure, with errmsg */
	uint64_t pending_values;
	uint64_t commit_values;
	uint32_t chunk_samples; /* 0: by the run's metrics */
	sqlite3_stmt *st[ST_COUNT];
	cs_writer *writers;
	cs_codec *codec;
	cs_buf blob;
	/* chunk rows encoded, waiting to be written in pack order */
	cs_buf batch;
	struct pending_chunk *pend;
	uint32_t *pend_cost, *pend_order, npend, pend_cap;
	cs_pack pack;
	/* for the page model, looked up at the first flush (readers never
	 * need them): 0 and < 0 = not known yet */
	int64_t page_size, chunk_rowid;
	char host[256];
	char errmsg[512];
};

/* Forgets the chunk rows held back for flush_chunks (their transaction
 * was rolled back), and what the page model knew. */
static void drop_pending(cs_store *s)
{
	s->npend = 0;
	cs_buf_reset(&s->batch);
	s->chunk_rowid = -1;
	s->pack.free = 0;
}

int cs_store_rc(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EPERM;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_INTERRUPT:
		return -EINTR;
	case SQLITE_TOOBIG:
	case SQLITE_RANGE:
	case SQLITE_MISMATCH:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* The wrappers make "an error path returns non-zero" visible to static
 * analysis, which cannot see into cs_store_fail_(). */
#define fail(s, rc, ...) (cs_store_fail_(s, rc, __VA_ARGS__), cs_nonzero_(rc))
#define fail_sql(s, src, what) cs_nonzero_(cs_store_fail_sql_(s, src, what))

int cs_store_fail_(cs_store *s, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
	va_end(ap);
	s->last_rc = rc;
	return rc;
}

int cs_store_last_rc(const cs_store *s) { return s->last_rc; }

/* Records SQLite's message for a failed call and returns the errno. */
int cs_store_fail_sql_(cs_store *s, int sqlite_rc, const char *what)
{
	/* SQLITE_FULL, IOERR and NOMEM may roll the whole transaction back:
	 * then there is none to commit, and what it held is lost. */
	if (s->in_tx && sqlite3_get_autocommit(s->db)) {
		s->in_tx = 0;
		s->tx_lost = 1;
		drop_pending(s); /* their transaction is gone with them */
	}
	return fail(s, cs_store_rc(sqlite_rc) ? cs_store_rc(sqlite_rc) : -EIO,
		    "%s: %s", what, sqlite3_errmsg(s->db));
}

const char *cs_store_errmsg(const cs_store *s) { return s->errmsg; }
cs_codec *cs_store_codec_(cs_store *s) { return s->codec; }
sqlite3 *cs_store_db(cs_store *s) { return s->db; }

uint64_t cs_store_pending(const cs_store *s) { return s->pending_values; }

void cs_store_set_commit_values(cs_store *s, uint64_t values)
{
	s->commit_values = values;
}

void cs_store_set_chunk_samples(cs_store *s, uint32_t samples)
{
	s->chunk_samples = samples <= CS_CHUNK_MAX ? samples : CS_CHUNK_MAX;
}

static int exec(cs_store *s, const char *sql)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : fail_sql(s, rc, sql);
}

static int pragma_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*out = sqlite3_column_int64(st, 0);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* Process start time (clock ticks since boot), to tell a live writer from
 * a recycled pid. Returns 0 when the process does not exist. */
static int64_t proc_start_time(int64_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After the command: " S ..." — p + 1 is the space before field 3
	 * (state); starttime is field 22, 19 spaces further (field 23 is
	 * vsize, which changes as the process allocates). */
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoll(p + 1, NULL, 10) : 0;
}

/* Marks as incomplete the runs whose writer on this host is gone. */
static int sweep_dead_writers(cs_store *s)
{
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int rc = sqlite3_prepare_v2(
		s->db,
		"SELECT id, writer_pid, writer_start FROM runs"
		" WHERE status = 'running' AND writer_host = ?1",
		-1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db,
					"UPDATE runs SET status = 'incomplete'"
					" WHERE id = ?1 AND status = 'running'",
					-1, &upd, NULL);
	if (rc != SQLITE_OK) {
		rc = fail_sql(s, rc, "sweeping dead writers");
		goto out;
	}
	sqlite3_bind_text(sel, 1, s->host, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);
		int64_t pid = sqlite3_column_int64(sel, 1);
		int64_t start = sqlite3_column_int64(sel, 2);
		if (pid > 0 && proc_start_time(pid) == start)
			continue;
		sqlite3_bind_int64(upd, 1, id);
		if (sqlite3_step(upd) != SQLITE_DONE) {
			rc = fail_sql(s, sqlite3_errcode(s->db), "marking run");
			goto out;
		}
		sqlite3_reset(upd);
		cs_log(CS_LOG_INFO, "run %lld: writer %lld is gone, marked incomplete",
		       (long long)id, (long long)pid);
	}
	rc = rc == SQLITE_DONE ? 0 : fail_sql(s, rc, "sweeping dead writers");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

/* Migrations: migrate[v] takes a file from version v to v + 1. */
static int migrate_0_to_1(cs_store *s)
{
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA page_size = %d", PAGE_SIZE_BYTES);
	int rc = exec(s, sql);
	if (!rc)
		rc = exec(s, "BEGIN IMMEDIATE");
	if (!rc)
		rc = exec(s, cs_schema_v1);
	if (!rc) {
		snprintf(sql, sizeof sql, "PRAGMA application_id = %d",
			 CS_APPLICATION_ID);
		rc = exec(s, sql);
	}
	if (!rc)
		rc = exec(s, "PRAGMA user_version = 1");
	if (!rc)
		rc = exec(s, "COMMIT");
	else
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* One schema step after v1: sql, then user_version = to, in one
 * transaction. */
static int migrate_step(cs_store *s, const char *sql, int to)
{
	char ver[40];
	snprintf(ver, sizeof ver, "PRAGMA user_version = %d", to);
	int rc = exec(s, "BEGIN IMMEDIATE");
	if (!rc)
		rc = exec(s, sql);
	if (!rc)
		rc = exec(s, ver);
	if (!rc)
		rc = exec(s, "COMMIT");
	else
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* v2: how far each run has been shipped to each fleet target (outbox.h). */
static int migrate_1_to_2(cs_store *s)
{
	return migrate_step(s, cs_schema_v2, 2);
}

/* v3: runs.bad_records and runs.empty_samples. */
static int migrate_2_to_3(cs_store *s)
{
	return migrate_step(s, cs_schema_v3, 3);
}

/* v4: the timelines_t0 index. */
static int migrate_3_to_4(cs_store *s)
{
	return migrate_step(s, cs_schema_v4, 4);
}

/* v5: ranges.args. */
static int migrate_4_to_5(cs_store *s)
{
	return migrate_step(s, cs_schema_v5, 5);
}

/* v6: no ranges_run_name index. */
static int migrate_5_to_6(cs_store *s)
{
	return migrate_step(s, cs_schema_v6, 6);
}

/* v7: the correlations table. */
static int migrate_6_to_7(cs_store *s)
{
	return migrate_step(s, cs_schema_v7, 7);
}

static int (*const migrate[CS_SCHEMA_VERSION])(cs_store *) = {
	migrate_0_to_1,
	migrate_1_to_2,
	migrate_2_to_3,
	migrate_3_to_4,
	migrate_4_to_5,
	migrate_5_to_6,
	migrate_6_to_7,
};

static int check_and_migrate(cs_store *s, const char *path, int flags)
{
	int64_t app_id = 0, version = 0, objects = 0;
	int rc = pragma_int(s->db, "PRAGMA application_id", &app_id);
	if (rc == SQLITE_OK)
		rc = pragma_int(s->db, "PRAGMA user_version", &version);
	if (rc == SQLITE_OK)
		rc = pragma_int(s->db, "SELECT count(*) FROM sqlite_master",
				&objects);
	if (rc == SQLITE_NOTADB)
		return fail(s, -EBADMSG, "%s: not a SQLite database", path);
	if (rc != SQLITE_OK)
		return fail(s, cs_store_rc(rc), "%s: %s", path,
			    sqlite3_errmsg(s->db));
	int fresh = app_id == 0 && version == 0 && objects == 0;
	if (fresh && !(flags & CS_OPEN_CREATE))
		return fail(s, -ENOENT,
			    "%s: empty file, not a cyclescope database yet "
			    "(import or record a run into it first)",
			    path);
	if (!fresh && app_id != CS_APPLICATION_ID)
		return fail(s, -EBADMSG,
			    "%s: a SQLite database but not a cyclescope one "
			    "(application_id 0x%llx, expected 0x%x)",
			    path, (unsigned long long)app_id, CS_APPLICATION_ID);
	if (version > CS_SCHEMA_VERSION)
		return fail(s, -EPROTONOSUPPORT,
			    "%s: schema version %lld is newer than this cyclescope "
			    "understands (%d): upgrade cyclescope to read it",
			    path, (long long)version, CS_SCHEMA_VERSION);
	/* v3 only added runs columns that readers do not need, v4 an index
	 * they use when it is there, v5 ranges.args, which readers take as
	 * NULL when it is missing (cs_store_version), v6 dropped an index, v7
	 * added saved correlations (none, in an older file): a v2 to v6 file
	 * on read-only media still reads (a window then finds its start by a
	 * scan). */
	s->version = (int)version;
	if (version < CS_SCHEMA_VERSION && s->readonly && version >= 2)
		return 0;
	if (version < CS_SCHEMA_VERSION && s->readonly)
		return fail(s, -EROFS,
			    "%s: schema version %lld needs migrating to %d; "
			    "open it read-write once",
			    path, (long long)version, CS_SCHEMA_VERSION);
	for (int64_t v = version; v < CS_SCHEMA_VERSION; v++) {
		rc = migrate[v](s);
		if (rc)
			return fail(s, rc, "%s: migrating schema %lld to %lld: %.400s",
				    path, (long long)v, (long long)v + 1,
				    s->errmsg);
		s->version = (int)v + 1;
		if (version > 0) /* an existing file, not one being created */
			cs_log(CS_LOG_INFO, "%s: migrated schema %lld to %lld",
			       path, (long long)v, (long long)v + 1);
	}
	return 0;
}

/* A WAL database on read-only media (the file 0444, or its directory not
 * writable) cannot be opened read-only the usual way: SQLite must create
 * or write its -shm. With no WAL content to read, it is opened as
 * immutable instead (nothing can change it); with WAL content that
 * cannot be reached, the error says how to get at it. 0, or -1 with the
 * reason in s->errmsg. */
static int reopen_immutable(cs_store *s, const char *path)
{
	char dir[4096], wal[4200];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	if (access(path, W_OK) == 0 && access(dir, W_OK) == 0)
		return -1; /* writable: the error was something else */
	snprintf(wal, sizeof wal, "%s-wal", path);
	struct stat st;
	if (stat(wal, &st) == 0 && st.st_size > 0) {
		fail(s, -EROFS, "%s: read-only, and its write-ahead log %s holds changes "
		     "that cannot be read without writing the -shm file: copy the database "
		     "with its -wal file somewhere writable, or open it read-write once where "
		     "it was written", path, wal);
		return -1;
	}
	/* file:PATH?immutable=1, the path percent-encoded where URIs need it */
	char uri[3 * 4096 + 32], *o = uri;
	o += snprintf(o, 8, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c && o < uri + sizeof uri - 24; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f)
			o += snprintf(o, 4, "%%%02X", *c);
		else
			*o++ = (char)*c;
	}
	snprintf(o, 16, "?immutable=1");
	sqlite3_close(s->db);
	s->db = NULL;
	int rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | s->open_extra,
				 cs_vfs_name());
	if (rc != SQLITE_OK) {
		fail(s, -EROFS, "%s: cannot open read-only media: %s", path,
		     s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		return -1;
	}
	sqlite3_extended_result_codes(s->db, 0);
	cs_log(CS_LOG_INFO, "%s: read-only file, opened as immutable", path);
	return 0;
}

cs_store *cs_store_open(const char *path, int flags, char *err, size_t errlen)
{
	cs_store *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	s->readonly = !!(flags & CS_OPEN_READONLY);
	s->commit_values = DEFAULT_COMMIT_VALUES;
	s->chunk_rowid = -1;
	if (gethostname(s->host, sizeof s->host - 1))
		snprintf(s->host, sizeof s->host, "localhost");
	int oflags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (!s->readonly && (flags & CS_OPEN_CREATE))
		oflags |= SQLITE_OPEN_CREATE;
	if (flags & CS_OPEN_ONE_THREAD)
		oflags |= SQLITE_OPEN_NOMUTEX;
	s->open_extra = oflags & SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(path, &s->db, oflags, cs_vfs_name());
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 0);
	sqlite3_busy_timeout(s->db, 10000);
	rc = check_and_migrate(s, path, flags);
	if (rc && s->readonly && reopen_immutable(s, path) == 0)
		rc = check_and_migrate(s, path, flags);
	if (rc) {
		snprintf(err, errlen, "%s", s->errmsg);
		goto fail;
	}
	if (!s->readonly && (exec(s, "PRAGMA journal_mode = WAL") ||
			     exec(s, "PRAGMA synchronous = NORMAL"))) {
		snprintf(err, errlen, "%s: %s", path, s->errmsg);
		goto fail;
	}
	sqlite3_exec(s->db,
		     "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -65536;"
		     " PRAGMA temp_store = MEMORY",
		     NULL, NULL, NULL);
	rc = cs_series_register(s->db, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: registering series: %s", path,
			 sqlite3_errmsg(s->db));
		goto fail;
	}
	s->codec = cs_codec_new();
	if (!s->codec) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (!s->readonly) {
		for (int i = 0; i < ST_COUNT; i++) {
			rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1,
						SQLITE_PREPARE_PERSISTENT,
						&s->st[i], NULL);
			if (rc != SQLITE_OK) {
				snprintf(err, errlen, "%s: %s", path,
					 sqlite3_errmsg(s->db));
				goto fail;
			}
		}
		if (sweep_dead_writers(s)) {
			snprintf(err, errlen, "%s: %s", path, s->errmsg);
			goto fail;
		}
	}
	return s;
fail:
	cs_store_close(s);
	return NULL;
}

static int commit_open(cs_store *s);

void cs_store_close(cs_store *s)
{
	if (!s)
		return;
	while (s->writers)
		cs_writer_end(s->writers, "incomplete", NULL);
	if (s->in_tx && commit_open(s))
		cs_log(CS_LOG_ERROR, "closing the store: the last commit failed: %s", s->errmsg);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	cs_codec_free(s->codec);
	cs_buf_free(&s->blob);
	cs_buf_free(&s->batch);
	free(s->pend);
	free(s->pend_cost);
	free(s->pend_order);
	free(s);
}

static int begin_tx(cs_store *s)
{
	if (s->in_tx)
		return 0;
	int rc = exec(s, "BEGIN IMMEDIATE");
	if (!rc)
		s->in_tx = 1;
	return rc;
}

/* Runs a prepared insert whose parameters are bound. */
static int step_reset(cs_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail_sql(s, rc, what);
}

static void bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Orders held-back rows by the chunk they are (run, device, metric,
 * seq0); 0 for the same chunk. */
static int chunk_key_cmp(const pending_chunk *pa, const pending_chunk *pb)
{
	if (pa->run != pb->run)
		return pa->run < pb->run ? -1 : 1;
	if (pa->device != pb->device)
		return pa->device < pb->device ? -1 : 1;
	if (pa->metric != pb->metric)
		return pa->metric < pb->metric ? -1 : 1;
	if (pa->seq0 != pb->seq0)
		return pa->seq0 < pb->seq0 ? -1 : 1;
	return 0;
}

/* qsort_r order of indices into the held-back rows: by chunk, and the
 * same chunk held back twice (a partial one rewritten before a flush) in
 * the order it was held back. */
static int pending_index_cmp(const void *a, const void *b, void *arg)
{
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	int c = chunk_key_cmp((const pending_chunk *)arg + ia, (const pending_chunk *)arg + ib);
	return c ? c : (ia > ib) - (ia < ib);
}

/* Drops every held-back row that a later one of the same chunk replaces;
 * the order of the rest is kept. */
static void dedupe_pending(cs_store *s)
{
	uint32_t *idx = s->pend_order, n = s->npend, kept = 0;
	for (uint32_t j = 0; j < n; j++)
		idx[j] = j;
	qsort_r(idx, n, sizeof *idx, pending_index_cmp, s->pend);
	unsigned char *dead = (unsigned char *)s->pend_cost; /* scratch, n bytes */
	memset(dead, 0, n);
	for (uint32_t j = 0; j + 1 < n; j++)
		if (!chunk_key_cmp(&s->pend[idx[j]], &s->pend[idx[j + 1]]))
			dead[idx[j]] = 1;
	for (uint32_t j = 0; j < n; j++)
		if (!dead[j])
			s->pend[kept++] = s->pend[j];
	s->npend = kept;
}

/* Writes the chunk rows held back, in the order that fills pages. On a
 * failure they stay held back (a retry writes them all again: the insert
 * replaces), unless the transaction went with it (drop_pending). */
static int flush_chunks(cs_store *s)
{
	if (!s->npend)
		return 0;
	dedupe_pending(s);
	if (s->chunk_rowid < 0 &&
	    pragma_int(s->db, "SELECT coalesce(max(id), 0) FROM chunks", &s->chunk_rowid) != SQLITE_OK)
		s->chunk_rowid = 0;
	if (!s->page_size &&
	    (pragma_int(s->db, "PRAGMA page_size", &s->page_size) != SQLITE_OK || s->page_size < 512))
		s->page_size = PAGE_SIZE_BYTES;
	for (uint32_t j = 0; j < s->npend; j++) {
		const pending_chunk *pc = &s->pend[j];
		int64_t ints[] = {pc->run, pc->device, pc->metric, (int64_t)pc->seq0, pc->n,
				  (int64_t)pc->t0_first, (int64_t)pc->t0_last, (int64_t)pc->agg.count};
		double reals[] = {pc->agg.min, pc->agg.max, pc->agg.sum};
		size_t payload = cs_pack_record_len(ints, 8, reals, 3, pc->len);
		s->pend_cost[j] = cs_pack_cost(payload, s->chunk_rowid + 1 + j, (uint32_t)s->page_size);
	}
	cs_pack_order(&s->pack, (uint32_t)s->page_size, s->pend_cost, s->npend, s->pend_order);
	sqlite3_stmt *st = s->st[ST_INS_CHUNK];
	int rc = 0;
	for (uint32_t j = 0; !rc && j < s->npend; j++) {
		const pending_chunk *pc = &s->pend[s->pend_order[j]];
		sqlite3_bind_int64(st, 1, pc->run);
		sqlite3_bind_int64(st, 2, pc->device);
		sqlite3_bind_int64(st, 3, pc->metric);
		sqlite3_bind_int64(st, 4, (int64_t)pc->seq0);
		sqlite3_bind_int64(st, 5, pc->n);
		sqlite3_bind_int64(st, 6, (int64_t)pc->t0_first);
		sqlite3_bind_int64(st, 7, (int64_t)pc->t0_last);
		sqlite3_bind_int64(st, 8, (int64_t)pc->agg.count);
		sqlite3_bind_double(st, 9, pc->agg.min);
		sqlite3_bind_double(st, 10, pc->agg.max);
		sqlite3_bind_double(st, 11, pc->agg.sum);
		sqlite3_bind_blob(st, 12, s->batch.data + pc->off, (int)pc->len, SQLITE_STATIC);
		rc = step_reset(s, st, "writing chunk");
		if (!rc)
			s->chunk_rowid = sqlite3_last_insert_rowid(s->db);
	}
	if (!rc) {
		s->npend = 0;
		cs_buf_reset(&s->batch);
	}
	return rc;
}

/* Writes the device's open chunk: its timeline row, and every touched
 * metric's chunk row into the batch flush_chunks writes. */
static int write_chunk(cs_writer *w, dev_buf *d)
{
	cs_store *s = w->s;
	if (!d->n || !d->dirty)
		return 0;
	int rc = begin_tx(s);
	if (rc)
		return rc;
	cs_buf_reset(&s->blob);
	rc = cs_timeline_encode(s->codec, d->t0, d->t1, d->n, &s->blob);
	if (rc)
		return fail(s, rc, "run %lld device %u: encoding timeline",
			    (long long)w->run, d->index);
	sqlite3_stmt *st = s->st[ST_INS_TIMELINE];
	sqlite3_bind_int64(st, 1, w->run);
	sqlite3_bind_int64(st, 2, d->index);
	sqlite3_bind_int64(st, 3, (int64_t)d->seq0);
	sqlite3_bind_int64(st, 4, d->n);
	sqlite3_bind_int64(st, 5, (int64_t)d->t0[0]);
	sqlite3_bind_int64(st, 6, (int64_t)d->t0[d->n - 1]);
	sqlite3_bind_int64(st, 7, (int64_t)d->t1[d->n - 1]);
	sqlite3_bind_blob(st, 8, s->blob.data, (int)s->blob.len, SQLITE_STATIC);
	rc = step_reset(s, st, "writing timeline");
	if (rc)
		return rc;
	/* what the runs row may claim once this transaction commits */
	if (!d->have_put || d->t0[0] < d->put_t0)
		d->put_t0 = d->t0[0];
	if (!d->have_put)
		d->put_t1 = d->t1[0];
	for (uint32_t i = d->n_put; i < d->n; i++)
		if (d->t1[i] > d->put_t1)
			d->put_t1 = d->t1[i];
	d->have_put = 1;
	d->n_put = d->n;
	/* every touched metric's chunk, encoded, held back for flush_chunks */
	for (uint32_t k = 0; k < d->nvals; k++) {
		if (!d->vals[k])
			continue;
		if (s->npend == s->pend_cap) {
			uint32_t cap = s->pend_cap ? 2 * s->pend_cap : 256;
			pending_chunk *np = realloc(s->pend, cap * sizeof *np);
			if (np)
				s->pend = np;
			uint32_t *nc = realloc(s->pend_cost, cap * sizeof *nc);
			if (nc)
				s->pend_cost = nc;
			uint32_t *no = realloc(s->pend_order, cap * sizeof *no);
			if (no)
				s->pend_order = no;
			if (!np || !nc || !no)
				return fail(s, -ENOMEM, "out of memory for %u chunks", cap);
			s->pend_cap = cap;
		}
		cs_agg agg;
		size_t off = s->batch.len;
		rc = cs_values_encode(s->codec, d->vals[k], d->n, &s->batch, &agg);
		if (rc)
			return fail(s, rc, "run %lld: encoding chunk",
				    (long long)w->run);
		if (!agg.count) {
			s->batch.len = off;
			continue;
		}
		s->pend[s->npend++] = (pending_chunk){w->run, d->index, k, d->n,
						      (uint32_t)(s->batch.len - off), d->seq0,
						      d->t0[0], d->t0[d->n - 1], off, agg};
	}
	d->dirty = 0;
	return s->batch.len >= PENDING_BYTES ? flush_chunks(s) : 0;
}

static void reset_chunk(dev_buf *d)
{
	d->done += d->n_put;
	d->n_put = 0;
	d->seq0 += d->n;
	d->n = 0;
	for (uint32_t k = 0; k < d->nvals; k++) {
		if (!d->vals[k])
			continue;
		for (uint32_t i = 0; i < d->cap; i++)
			d->vals[k][i] = NAN;
	}
}

/* Frees metric k's buffer (from the start of its allocation). */
static void drop_vals(dev_buf *d, uint32_t k)
{
	if (d->vals[k])
		free(d->vals[k] - VALS_PAD(k));
	d->vals[k] = NULL;
}

/* Sizes an empty chunk's buffers for the run's metrics as declared now. */
static int size_chunk(cs_writer *w, dev_buf *d)
{
	uint32_t cap = w->s->chunk_samples;
	if (!cap)
		cap = w->nmetrics <= CS_CHUNK_LONGEST_METRICS ? CS_CHUNK_SAMPLES_LONGEST
		      : w->nmetrics <= CS_CHUNK_LONG_METRICS  ? CS_CHUNK_SAMPLES_LONG
							      : CS_CHUNK_SAMPLES;
	if (cap == d->cap)
		return 0;
	uint64_t *t0 = realloc(d->t0, cap * sizeof *t0);
	if (t0)
		d->t0 = t0;
	uint64_t *t1 = realloc(d->t1, cap * sizeof *t1);
	if (t1)
		d->t1 = t1;
	if (!t0 || !t1)
		return fail(w->s, -ENOMEM, "out of memory");
	for (uint32_t k = 0; k < d->nvals; k++)
		drop_vals(d, k);
	d->cap = cap;
	return 0;
}

/* The runs row counts what this transaction holds: the samples written
 * into chunks, not those still buffered, so a crash before the next
 * commit leaves a row that agrees with its data. */
static int update_run_stats(cs_writer *w)
{
	char sql[256];
	uint64_t n = 0, t_min = 0, t_max = 0;
	int have = 0;
	for (uint32_t i = 0; i < w->ndevs; i++) {
		const dev_buf *d = w->devs[i];
		if (!d->have_put)
			continue;
		n += d->done + d->n_put;
		if (!have || d->put_t0 < t_min)
			t_min = d->put_t0;
		if (!have || d->put_t1 > t_max)
			t_max = d->put_t1;
		have = 1;
	}
	if (!have)
		return 0;
	snprintf(sql, sizeof sql,
		 "UPDATE runs SET samples = %llu, t_min = %llu, t_max = %llu"
		 " WHERE id = %lld",
		 (unsigned long long)n, (unsigned long long)t_min,
		 (unsigned long long)t_max, (long long)w->run);
	return exec(w->s, sql);
}

int cs_store_commit(cs_store *s) { return cs_store_commit_ex(s, 1); }

/* Commits the open transaction (if any) with every open run's counts in
 * it: whatever commits, the runs rows agree with the chunks committed. */
static int commit_open(cs_store *s)
{
	int rc = s->in_tx ? flush_chunks(s) : 0;
	for (cs_writer *w = s->writers; w && !rc && s->in_tx; w = w->next)
		rc = update_run_stats(w);
	if (!rc && s->in_tx) {
		rc = exec(s, "COMMIT");
		if (!rc)
			s->in_tx = 0;
	}
	return rc;
}

int cs_store_commit_ex(cs_store *s, int partial)
{
	int rc = 0;
	for (cs_writer *w = s->writers; w && !rc && partial; w = w->next)
		for (uint32_t i = 0; i < w->ndevs && !rc; i++)
			rc = write_chunk(w, w->devs[i]);
	if (!rc)
		rc = commit_open(s);
	if (!rc)
		s->pending_values = 0;
	return rc;
}

void cs_range_init(cs_range *r, const char *kind, const char *name,
		   uint64_t t0, uint64_t t1)
{
	r->kind = kind;
	r->name = name;
	r->t0 = t0;
	r->t1 = t1;
	r->device = r->stream = r->correlation_id = -1;
	r->pid = r->tid = r->bytes = -1;
	r->args = NULL;
}

int cs_store_version(const cs_store *s)
{
	return s->version;
}

void cs_store_uuid(char out[37])
{
	uint8_t b[16];
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
			     ((uint64_t)getpid() << 12);
		for (int i = 0; i < 16; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			b[i] = (uint8_t)(x >> 56);
		}
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

cs_writer *cs_writer_begin(cs_store *s, const cs_run_info *info, char *err,
			   size_t errlen)
{
	sqlite3_stmt *st = NULL;
	cs_writer *w = NULL;
	char uuid[37];
	s->last_rc = 0; /* a failure below is this call's, not an earlier one's */
	if (s->readonly) {
		snprintf(err, errlen, "database opened read-only");
		return NULL;
	}
	if (!info->kind || (strcmp(info->kind, "hw") && strcmp(info->kind, "sim"))) {
		snprintf(err, errlen, "run kind must be 'hw' or 'sim'");
		return NULL;
	}
	if (!info->time_unit ||
	    (strcmp(info->time_unit, "ns") && strcmp(info->time_unit, "cycle"))) {
		snprintf(err, errlen, "time unit must be 'ns' or 'cycle'");
		return NULL;
	}
	if (!info->source || !*info->source) {
		snprintf(err, errlen, "run source is required");
		return NULL;
	}
	if (info->meta) {
		const char *m = info->meta + strspn(info->meta, " \t\r\n");
		if (*m != '{') {
			snprintf(err, errlen, "run meta must be a JSON object ({...}), not '%.20s'", m);
			return NULL;
		}
	}
	w = calloc(1, sizeof *w);
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->s = s;
	if (!info->uuid)
		cs_store_uuid(uuid);
	int rc = sqlite3_prepare_v2(
		s->db,
		"INSERT INTO runs(uuid, kind, source, name, host, pid, cmdline,"
		" start_ns, status, time_unit, clock_hz, meta, writer_host,"
		" writer_pid, writer_start)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9, ?10, ?11,"
		" ?12, ?13, ?14)",
		-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, info->uuid ? info->uuid : uuid, -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, info->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, info->source, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, info->name ? info->name : info->source,
				  -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, info->host ? info->host : s->host, -1,
				  SQLITE_STATIC);
		bind_opt_int(st, 6, info->pid > 0 ? info->pid : -1);
		bind_opt_text(st, 7, info->cmdline);
		sqlite3_bind_int64(st, 8,
				   (int64_t)(info->start_ns ? info->start_ns
							    : wall_ns()));
		sqlite3_bind_text(st, 9, info->time_unit, -1, SQLITE_STATIC);
		if (info->clock_hz > 0)
			sqlite3_bind_double(st, 10, info->clock_hz);
		sqlite3_bind_text(st, 11, info->meta ? info->meta : "{}", -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(st, 12, s->host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 13, getpid());
		sqlite3_bind_int64(st, 14, proc_start_time(getpid()));
		rc = begin_tx(s);
		if (!rc) {
			int src = sqlite3_step(st);
			rc = src == SQLITE_DONE ? 0 : fail_sql(s, src, "creating run");
		}
	} else {
		rc = fail_sql(s, rc, "creating run");
	}
	sqlite3_finalize(st);
	if (rc) {
		snprintf(err, errlen, "%s", s->errmsg);
		free(w);
		return NULL;
	}
	w->run = sqlite3_last_insert_rowid(s->db);
	w->next = s->writers;
	s->writers = w;
	if (cs_store_commit(s)) {
		snprintf(err, errlen, "%s", s->errmsg);
		cs_writer_discard(w);
		return NULL;
	}
	return w;
}

int64_t cs_writer_run(const cs_writer *w) { return w->run; }

uint64_t cs_writer_samples(const cs_writer *w) { return w->samples; }

static dev_buf *find_dev(cs_writer *w, uint32_t index)
{
	for (uint32_t i = 0; i < w->ndevs; i++)
		if (w->devs[i]->index == index)
			return w->devs[i];
	return NULL;
}

static int insert_device(cs_writer *w, const cs_device_info *d)
{
	cs_store *s = w->s;
	int rc = begin_tx(s);
	if (rc)
		return rc;
	sqlite3_stmt *st = s->st[ST_INS_DEVICE];
	sqlite3_bind_int64(st, 1, w->run);
	sqlite3_bind_int64(st, 2, d->index);
	bind_opt_text(st, 3, d->name);
	bind_opt_text(st, 4, d->chip);
	bind_opt_text(st, 5, d->uuid);
	if (d->sm_count)
		sqlite3_bind_int64(st, 6, d->sm_count);
	if (d->clock_hz > 0)
		sqlite3_bind_double(st, 7, d->clock_hz);
	if (d->mem_clock_hz > 0)
		sqlite3_bind_double(st, 8, d->mem_clock_hz);
	return step_reset(s, st, "writing device");
}

static dev_buf *new_dev(cs_writer *w, uint32_t index)
{
	dev_buf **devs = realloc(w->devs, (w->ndevs + 1) * sizeof *devs);
	if (!devs)
		return NULL;
	w->devs = devs;
	dev_buf *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->index = index;
	w->devs[w->ndevs++] = d;
	return d;
}

/* A device index a run may hold: at most CS_MAX_DEVICE_INDEX. */
static int device_index_ok(cs_writer *w, uint32_t index)
{
	if (index <= CS_MAX_DEVICE_INDEX)
		return 0;
	return fail(w->s, -EINVAL, "run %lld: device index %u is past the limit of %u",
		    (long long)w->run, index, CS_MAX_DEVICE_INDEX);
}

int cs_writer_add_device(cs_writer *w, const cs_device_info *d)
{
	int rc = device_index_ok(w, d->index);
	if (rc)
		return rc;
	if (find_dev(w, d->index))
		return fail(w->s, -EEXIST, "run %lld: device %u declared twice",
			    (long long)w->run, d->index);
	rc = insert_device(w, d);
	if (rc)
		return rc;
	return new_dev(w, d->index) ? 0 : fail(w->s, -ENOMEM, "out of memory");
}

int cs_writer_add_metric(cs_writer *w, const cs_metric_info *m, uint32_t *id)
{
	cs_store *s = w->s;
	const char *kind = m->kind ? m->kind : "counter";
	int known = cs_wire_metric_kind_from_name(kind) >= 0;
	if (!m->name || !*m->name)
		return fail(s, -EINVAL, "metric name is empty");
	if (!known)
		return fail(s, -EINVAL,
			    "metric %s: kind '%s' is not one of counter, ratio, "
			    "throughput, gauge",
			    m->name, kind);
	uint8_t *seen = realloc(w->seen, w->nmetrics + 1);
	if (!seen)
		return fail(s, -ENOMEM, "out of memory");
	w->seen = seen;
	int rc = begin_tx(s);
	if (rc)
		return rc;
	sqlite3_stmt *st = s->st[ST_INS_METRIC];
	sqlite3_bind_int64(st, 1, w->run);
	sqlite3_bind_int64(st, 2, w->nmetrics);
	sqlite3_bind_text(st, 3, m->name, -1, SQLITE_STATIC);
	bind_opt_text(st, 4, m->unit);
	sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, !!m->cumulative);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_CONSTRAINT)
		return fail(s, -EEXIST, "metric %s declared twice", m->name);
	if (rc != SQLITE_DONE)
		return fail_sql(s, rc, "writing metric");
	w->seen[w->nmetrics] = 0;
	*id = w->nmetrics++;
	return 0;
}

static int ensure_vals(cs_store *s, dev_buf *d, uint32_t k)
{
	if (k >= d->nvals) {
		double **v = realloc(d->vals, (k + 1) * sizeof *v);
		if (!v)
			return fail(s, -ENOMEM, "out of memory");
		for (uint32_t i = d->nvals; i <= k; i++)
			v[i] = NULL;
		d->vals = v;
		d->nvals = k + 1;
	}
	if (!d->vals[k]) {
		double *mem = malloc((d->cap + VALS_PAD(k)) * sizeof(double));
		if (!mem)
			return fail(s, -ENOMEM, "out of memory");
		d->vals[k] = mem + VALS_PAD(k);
		for (uint32_t i = 0; i < d->cap; i++)
			d->vals[k][i] = NAN;
	}
	return 0;
}

static int check_batch(cs_writer *w, const cs_batch *b, dev_buf *d)
{
	cs_store *s = w->s;
	long long run = (long long)w->run;
	if (b->m && (!b->metrics || !b->values))
		return fail(s, -EINVAL, "run %lld: batch without metric ids or values", run);
	if (!b->t0 || !b->t1)
		return fail(s, -EINVAL, "run %lld: batch without timestamps", run);
	int rc = device_index_ok(w, b->device);
	if (rc)
		return rc;
	if (d && d->have_seq && b->seq0 != d->next_seq)
		return fail(s, -EINVAL,
			    "run %lld device %u: batch starts at seq %llu, "
			    "expected %llu",
			    run, b->device, (unsigned long long)b->seq0,
			    (unsigned long long)d->next_seq);
	if (b->seq0 > (uint64_t)INT64_MAX - b->n)
		return fail(s, -EINVAL, "run %lld: seq out of range", run);
	if (w->nmetrics) /* no METRICS yet: seen is NULL */
		memset(w->seen, 0, w->nmetrics);
	for (uint32_t k = 0; k < b->m; k++) {
		uint32_t id = b->metrics[k];
		if (id >= w->nmetrics)
			return fail(s, -EINVAL,
				    "run %lld: batch column %u names metric id %u, "
				    "but only %u are declared",
				    run, k, id, w->nmetrics);
		if (w->seen[id]++)
			return fail(s, -EINVAL,
				    "run %lld: metric id %u appears twice in a batch",
				    run, id);
	}
	uint64_t prev = d && d->have_seq ? d->last_t0 : 0;
	for (uint32_t i = 0; i < b->n; i++) {
		uint64_t seq = b->seq0 + i;
		if (b->t0[i] > INT64_MAX || b->t1[i] > INT64_MAX)
			return fail(s, -EINVAL,
				    "run %lld seq %llu: time beyond 2^63-1", run,
				    (unsigned long long)seq);
		if (b->t1[i] < b->t0[i])
			return fail(s, -EINVAL,
				    "run %lld seq %llu: t1 %llu is before t0 %llu",
				    run, (unsigned long long)seq,
				    (unsigned long long)b->t1[i],
				    (unsigned long long)b->t0[i]);
		if ((i || (d && d->have_seq)) && b->t0[i] < prev)
			return fail(s, -EINVAL,
				    "run %lld seq %llu: t0 %llu is before the "
				    "previous sample's t0 %llu",
				    run, (unsigned long long)seq,
				    (unsigned long long)b->t0[i],
				    (unsigned long long)prev);
		prev = b->t0[i];
	}
	return 0;
}

/* Counts values written since the last commit; past commit_values,
 * commits (writing partly filled chunks too when partial). */
static int pend(cs_store *s, uint64_t values, int partial)
{
	s->pending_values += values;
	if (s->commit_values && s->pending_values >= s->commit_values)
		return cs_store_commit_ex(s, partial);
	return 0;
}

int cs_writer_append(cs_writer *w, const cs_batch *b)
{
	cs_store *s = w->s;
	if (!b->n)
		return 0;
	dev_buf *d = find_dev(w, b->device);
	int rc = check_batch(w, b, d);
	if (rc)
		return rc;
	if (!d) {
		cs_device_info info = {.index = b->device};
		rc = insert_device(w, &info);
		if (rc)
			return rc;
		d = new_dev(w, b->device);
		if (!d)
			return fail(s, -ENOMEM, "out of memory");
	}
	if (!d->have_seq) {
		d->have_seq = 1;
		d->seq0 = d->next_seq = b->seq0;
	}
	uint32_t done = 0;
	while (done < b->n) {
		if (!d->n || !done) {
			rc = d->n ? 0 : size_chunk(w, d);
			for (uint32_t k = 0; !rc && k < b->m; k++)
				rc = ensure_vals(s, d, b->metrics[k]);
			if (rc)
				return rc;
		}
		uint32_t take = d->cap - d->n;
		if (take > b->n - done)
			take = b->n - done;
		memcpy(d->t0 + d->n, b->t0 + done, take * sizeof(uint64_t));
		memcpy(d->t1 + d->n, b->t1 + done, take * sizeof(uint64_t));
		/* Reads the batch in order and writes m sequential streams. */
		double *dst[CS_WIRE_TRANSPOSE_MAX];
		const double *src = b->values + (size_t)done * b->m;
		for (uint32_t k0 = 0; k0 < b->m; k0 += CS_WIRE_TRANSPOSE_MAX) {
			uint32_t mk = b->m - k0 < CS_WIRE_TRANSPOSE_MAX ? b->m - k0
								: CS_WIRE_TRANSPOSE_MAX;
			for (uint32_t k = 0; k < mk; k++)
				dst[k] = d->vals[b->metrics[k0 + k]] + d->n; /* NOLINT(clang-analyzer-core.NullDereference): ensure_vals above */
			for (uint32_t i = 0; i < take; i++) {
				const double *row = src + (size_t)i * b->m + k0;
				for (uint32_t k = 0; k < mk; k++)
					dst[k][i] = row[k];
			}
		}
		d->n += take;
		d->dirty = 1;
		done += take;
		if (d->n == d->cap) {
			rc = write_chunk(w, d);
			if (rc)
				return rc;
			reset_chunk(d);
		}
	}
	d->last_t0 = b->t0[b->n - 1];
	d->next_seq += b->n;
	w->samples += b->n;
	return pend(s, (uint64_t)b->n * (b->m ? b->m : 1), 1);
}

int cs_writer_add_range(cs_writer *w, const cs_range *r)
{
	cs_store *s = w->s;
	if (!r->kind || !*r->kind || !r->name)
		return fail(s, -EINVAL, "run %lld: range without kind or name",
			    (long long)w->run);
	if (r->t1 < r->t0 || r->t1 > INT64_MAX)
		return fail(s, -EINVAL,
			    "run %lld: range %s [%llu, %llu] is inverted or out "
			    "of range",
			    (long long)w->run, r->name, (unsigned long long)r->t0,
			    (unsigned long long)r->t1);
	int rc = begin_tx(s);
	if (rc)
		return rc;
	sqlite3_stmt *st = s->st[ST_INS_RANGE];
	sqlite3_bind_int64(st, 1, w->run);
	sqlite3_bind_text(st, 2, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)r->t0);
	sqlite3_bind_int64(st, 5, (int64_t)r->t1);
	bind_opt_int(st, 6, r->device);
	bind_opt_int(st, 7, r->stream);
	bind_opt_int(st, 8, r->correlation_id);
	bind_opt_int(st, 9, r->pid);
	bind_opt_int(st, 10, r->tid);
	bind_opt_int(st, 11, r->bytes);
	if (r->args)
		sqlite3_bind_text(st, 12, r->args, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 12);
	if ((rc = step_reset(s, st, "writing range")) != 0)
		return rc;
	/* a range row weighs about as much as RANGE_VALUES packed values:
	 * a long import of ranges commits as it goes, as one of samples
	 * does, rather than all at its end */
	return pend(s, RANGE_VALUES, 0);
}

static void unlink_writer(cs_writer *w)
{
	for (cs_writer **p = &w->s->writers; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
}

static void writer_free(cs_writer *w)
{
	for (uint32_t i = 0; i < w->ndevs; i++) {
		dev_buf *d = w->devs[i];
		for (uint32_t k = 0; k < d->nvals; k++)
			drop_vals(d, k);
		free(d->vals);
		free(d->t0);
		free(d->t1);
		free(d);
	}
	free(w->devs);
	free(w->seen);
	free(w);
}

int cs_writer_end(cs_writer *w, const char *status,
		  const cs_run_counters *counters)
{
	cs_store *s = w->s;
	sqlite3_stmt *st = NULL;
	int incomplete = !status || strcmp(status, "complete");
	int rc = cs_store_commit(s);
	if (!rc)
		rc = begin_tx(s);
	if (!rc)
		rc = update_run_stats(w); /* even when nothing was left to commit */
	if (!rc) {
		int src = sqlite3_prepare_v2(
			s->db,
			"UPDATE runs SET status = ?2, end_ns = ?3, dropped = ?4,"
			" overflows = ?5, bad_records = ?6, empty_samples = ?7"
			" WHERE id = ?1",
			-1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, w->run);
			sqlite3_bind_text(st, 2, incomplete ? "incomplete" : "complete",
					  -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, (int64_t)wall_ns());
			sqlite3_bind_int64(st, 4, counters ? (int64_t)counters->dropped : 0);
			sqlite3_bind_int64(st, 5,
					   counters ? (int64_t)counters->overflows : 0);
			sqlite3_bind_int64(st, 6,
					   counters ? (int64_t)counters->bad_records : 0);
			sqlite3_bind_int64(st, 7,
					   counters ? (int64_t)counters->empty_samples : 0);
			src = sqlite3_step(st);
		}
		if (src != SQLITE_DONE)
			rc = fail_sql(s, src, "ending run");
		sqlite3_finalize(st);
	}
	unlink_writer(w);
	writer_free(w);
	if (!rc)
		rc = cs_store_commit(s);
	return rc;
}

int cs_store_delete_run(cs_store *s, int64_t run)
{
	static const char *const tables[] = {"chunks", "timelines", "ranges",
					     "metrics", "devices", "runs"};
	/* A savepoint: a failure part way undoes only the deletion, never
	 * what other runs wrote into the same transaction. */
	int rc = begin_tx(s);
	rc = rc ? rc : exec(s, "SAVEPOINT delete_run");
	if (!rc) {
		char sql[128];
		snprintf(sql, sizeof sql, "DELETE FROM ship_marks WHERE run_uuid = "
			 "(SELECT uuid FROM runs WHERE id = %lld)", (long long)run);
		rc = exec(s, sql);
	}
	for (size_t i = 0; !rc && i < sizeof tables / sizeof *tables; i++) {
		char sql[96];
		snprintf(sql, sizeof sql, "DELETE FROM %s WHERE %s = %lld",
			 tables[i], strcmp(tables[i], "runs") ? "run" : "id",
			 (long long)run);
		rc = exec(s, sql);
	}
	if (rc) {
		if (s->in_tx && !sqlite3_get_autocommit(s->db)) {
			sqlite3_exec(s->db, "ROLLBACK TO delete_run", NULL, NULL, NULL);
			sqlite3_exec(s->db, "RELEASE delete_run", NULL, NULL, NULL);
		}
		return rc;
	}
	rc = exec(s, "RELEASE delete_run");
	return rc ? rc : commit_open(s);
}

int cs_store_rename_run(cs_store *s, int64_t run, const char *name)
{
	if (!name || !*name)
		return fail(s, -EINVAL, "a run name cannot be empty");
	sqlite3_stmt *st = NULL;
	int rc = begin_tx(s);
	if (rc)
		return rc;
	int src = sqlite3_prepare_v2(s->db, "UPDATE runs SET name = ?2 WHERE id = ?1", -1, &st,
				     NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	if (src != SQLITE_DONE)
		rc = fail_sql(s, src, "renaming a run");
	else if (!sqlite3_changes(s->db))
		rc = fail(s, -ENOENT, "no run %lld", (long long)run);
	sqlite3_finalize(st);
	int crc = cs_store_commit(s);
	return rc ? rc : crc;
}

int cs_store_run_busy(cs_store *s, int64_t run, char *who, size_t wholen)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(s->db,
				     "SELECT status = 'running', writer_pid, writer_host FROM runs"
				     " WHERE id = ?1", -1, &st, NULL);
	int rc = 0;
	if (src == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		src = sqlite3_step(st);
	}
	if (src == SQLITE_ROW) {
		rc = sqlite3_column_int(st, 0);
		const char *host = (const char *)sqlite3_column_text(st, 2);
		snprintf(who, wholen, "pid %lld on %s", (long long)sqlite3_column_int64(st, 1),
			 host ? host : "?");
	} else if (src == SQLITE_DONE) {
		rc = fail(s, -ENOENT, "no run %lld", (long long)run);
	} else {
		rc = fail_sql(s, src, "reading a run");
	}
	sqlite3_finalize(st);
	return rc;
}

void cs_store_abort(cs_store *s)
{
	if (s->in_tx || !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = 0;
	s->tx_lost = 0;
	s->pending_values = 0;
	drop_pending(s);
	while (s->writers) {
		cs_writer *w = s->writers;
		s->writers = w->next;
		writer_free(w);
	}
}

int cs_store_tx_lost(const cs_store *s) { return s->tx_lost; }

int cs_store_mark_incomplete(cs_store *s, int64_t run)
{
	char sql[160];
	snprintf(sql, sizeof sql,
		 "UPDATE runs SET status = 'incomplete', end_ns = %lld"
		 " WHERE id = %lld AND status = 'running'",
		 (long long)wall_ns(), (long long)run);
	int rc = begin_tx(s);
	rc = rc ? rc : exec(s, sql);
	rc = rc ? rc : commit_open(s);
	if (rc && (s->in_tx || !sqlite3_get_autocommit(s->db))) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		s->in_tx = 0;
		drop_pending(s); /* they were the rolled-back transaction's */
	}
	return rc;
}

void cs_writer_discard(cs_writer *w)
{
	if (!w)
		return;
	cs_store *s = w->s;
	int64_t run = w->run;
	unlink_writer(w);
	writer_free(w);
	uint32_t kept = 0; /* its chunk rows held back go with it */
	for (uint32_t j = 0; j < s->npend; j++)
		if (s->pend[j].run != run)
			s->pend[kept++] = s->pend[j];
	s->npend = kept;
	if (cs_store_delete_run(s, run))
		cs_log(CS_LOG_ERROR, "run %lld: could not delete: %s",
		       (long long)run, s->errmsg);
}

const char *cs_store_path(cs_store *s)
{
	const char *p = sqlite3_db_filename(s->db, "main");
	return p ? p : "";
}

void cs_store_set_process_heap_mb(unsigned soft_mb, unsigned hard_mb)
{
	sqlite3_hard_heap_limit64((sqlite3_int64)hard_mb << 20);
	sqlite3_soft_heap_limit64((sqlite3_int64)soft_mb << 20);
}

int cs_store_checkpoint(cs_store *s)
{
	int rc = sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : cs_nonzero_(cs_store_fail_sql_(s, rc, "WAL checkpoint"));
}
