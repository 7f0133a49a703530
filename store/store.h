/*
 * store.h - the cyclescope database: schema, migrations and the batch writer
 * (cs_store_*, cs_writer_*).
 *
 * The store is the only code that speaks SQL to the database file. A file
 * holds runs, their devices, metrics and ranges, per-(run, device) sample
 * timelines and per-(run, device, metric) value chunks (docs/schema.md).
 *
 * Errors: functions return 0 or a negative errno; SQLite result codes are
 * mapped in one place (cs_store_rc). The last error message of a store is
 * kept in the store (cs_store_errmsg); constructors fill err/errlen.
 *
 * Threads: a cs_store and its writers are used by one thread at a time
 * (the daemon's single writer thread). Readers open their own cs_store.
 */
#ifndef CS_STORE_H
#define CS_STORE_H

#include <stddef.h>
#include <stdint.h>


#define CS_SCHEMA_VERSION 7
/* PRAGMA application_id of a cyclescope database: "CSCP". */
#define CS_APPLICATION_ID 0x50435343
/* The largest device index a run may hold (a GPU's index on its host, or a
 * simulator's device: CSV exports round-trip through the importer's table
 * of this many). */
#define CS_MAX_DEVICE_INDEX 1023u
/* Samples per chunk the writer produces: CS_CHUNK_SAMPLES_LONGEST for a
 * run of at most CS_CHUNK_LONGEST_METRICS metrics, CS_CHUNK_SAMPLES_LONG
 * for one of at most CS_CHUNK_LONG_METRICS (the writer buffers at most 8
 * MiB of values for either), CS_CHUNK_SAMPLES for wider runs (at most 4096
 * samples of each metric). A longer row fills more pages whole: what a row
 * leaves empty is under a page (its local part's share of a leaf page, or
 * its last overflow page), whatever its length. */
#define CS_CHUNK_SAMPLES 4096u
#define CS_CHUNK_SAMPLES_LONG 16384u
#define CS_CHUNK_LONG_METRICS 64u
#define CS_CHUNK_SAMPLES_LONGEST 32768u
#define CS_CHUNK_LONGEST_METRICS 32u

typedef struct cs_store cs_store;
typedef struct cs_writer cs_writer;

enum cs_open_flags {
	CS_OPEN_READONLY = 0x1, /* no writes, no migration, no sweep */
	CS_OPEN_CREATE = 0x2,   /* create the file and schema when missing */
	/* the store and everything read through it are used by one thread
	 * at a time: SQLite's lock around each call is left out */
	CS_OPEN_ONE_THREAD = 0x4,
};

/* Opens (and with CS_OPEN_CREATE creates or migrates) the database at path.
 * A read-write open also marks runs whose writer process died as
 * 'incomplete'. Returns a store the caller frees with cs_store_close(), or
 * NULL with the reason in err: a file that is not SQLite, a SQLite file
 * that is not a cyclescope database, or one written by a newer version. */
cs_store *cs_store_open(const char *path, int flags, char *err, size_t errlen);

/* Closes the store; writers still open are ended as 'incomplete' first.
 * Accepts NULL. */
void cs_store_close(cs_store *s);

/* The message of the last failed call on s or its writers; never NULL. */
const char *cs_store_errmsg(const cs_store *s);

/* The negative errno of the last failed call on s (with errmsg). */
int cs_store_last_rc(const cs_store *s);

/* Maps a SQLite result code to 0 or a negative errno. */
int cs_store_rc(int sqlite_rc);

/* Writes every open writer's buffered samples (partial chunks included) and
 * commits the open transaction. Partial chunks are rewritten when they
 * fill up. Returns 0 or a negative errno. */
int cs_store_commit(cs_store *s);

/* Like cs_store_commit, but with partial == 0 only whole chunks written so
 * far are committed and partial ones stay buffered: for frequent commits
 * under continuous ingest (the daemon writes partial chunks less often). */
int cs_store_commit_ex(cs_store *s, int partial);

/* Values appended since the last commit. */
uint64_t cs_store_pending(const cs_store *s);

/* Writers commit by themselves every this many buffered values (default
 * 4M); 0 means only on cs_store_commit() and cs_writer_end(). */
void cs_store_set_commit_values(cs_store *s, uint64_t values);

/* Fixes the samples per chunk of the chunks writers start from now on
 * (1..CS_CHUNK_MAX); 0, the default, chooses by the run's metrics
 * (CS_CHUNK_SAMPLES above). */
void cs_store_set_chunk_samples(cs_store *s, uint32_t samples);

/* Writes a random (v4) UUID, 36 characters and a NUL, into out. */
void cs_store_uuid(char out[37]);

/* The database file's path ("" for an in-memory store); owned by s. */
const char *cs_store_path(cs_store *s);

/* Caps the memory of every store in the process together: SQLite's page
 * caches give memory back past soft_mb MiB, so many connections at once
 * (the writer's and every request's) do not add up to many full caches,
 * and no allocation past hard_mb MiB succeeds (SQLITE_NOMEM: a request
 * fails, the process lives). */
void cs_store_set_process_heap_mb(unsigned soft_mb, unsigned hard_mb);

/* Folds the write-ahead log into the database file and truncates it (at
 * a writer's clean stop). 0 or an error (cs_store_errmsg). */
int cs_store_checkpoint(cs_store *s);

/* After a failure that may have lost written data (SQLITE_FULL, an I/O
 * error): rolls back what is uncommitted and frees every open writer
 * without writing (their runs stay 'running' in the file until marked).
 * cs_store_tx_lost() says whether a failure already rolled a transaction
 * back, so that the writers' state no longer matches the file. */
void cs_store_abort(cs_store *s);
int cs_store_tx_lost(const cs_store *s);

/* The file's schema version (CS_SCHEMA_VERSION once migrated; older only
 * for an old file opened read-only). */
int cs_store_version(const cs_store *s);

/* Marks a run whose writer is gone 'incomplete' (when still 'running'),
 * committed. 0 or the error (the store stays usable). */
int cs_store_mark_incomplete(cs_store *s, int64_t run);

/* Deletes a run and everything that belongs to it, in one transaction. */
int cs_store_delete_run(cs_store *s, int64_t run);

/* Renames a run (name may be any text but empty). 0, -ENOENT, -EINVAL. */
int cs_store_rename_run(cs_store *s, int64_t run, const char *name);

/* 1 when a live writer still has the run open (status running after the
 * read-write open's sweep of dead writers), with "pid P on HOST" in
 * who; 0 when not; a negative errno on failure. */
int cs_store_run_busy(cs_store *s, int64_t run, char *who, size_t wholen);

/* Run metadata for cs_writer_begin. Strings are borrowed for the call. */
typedef struct cs_run_info {
	const char *kind;      /* "hw" or "sim" */
	const char *source;    /* collector, csv, aerialvision, ... */
	const char *name;      /* free text; NULL = source */
	const char *time_unit; /* "ns" or "cycle" */
	const char *uuid;      /* NULL = generate one */
	const char *host;      /* NULL = this host */
	const char *cmdline;   /* may be NULL */
	const char *meta;      /* JSON object text; NULL = "{}" */
	int64_t pid;           /* producer's pid, 0 = unknown */
	uint64_t start_ns;     /* wall clock at start (ns since epoch), 0 = now */
	double clock_hz;       /* 0 = unknown */
} cs_run_info;

typedef struct cs_device_info {
	uint32_t index;
	const char *name; /* may be NULL */
	const char *chip; /* may be NULL */
	const char *uuid; /* may be NULL */
	uint32_t sm_count;
	double clock_hz;
	double mem_clock_hz;
} cs_device_info;

typedef struct cs_metric_info {
	const char *name; /* as NCU/CUPTI or the simulator spells it */
	const char *unit; /* may be NULL */
	const char *kind; /* counter|ratio|throughput|gauge; NULL = counter */
	int cumulative;   /* values are running totals, not per-interval */
} cs_metric_info;

/* A batch of n samples of one device: t0[i], t1[i] and values[i*m + k] for
 * metric metrics[k]. NaN = absent. All arrays borrowed for the call. */
typedef struct cs_batch {
	uint32_t device;
	uint64_t seq0;
	uint32_t n;
	uint32_t m;
	const uint32_t *metrics;
	const uint64_t *t0;
	const uint64_t *t1;
	const double *values;
} cs_batch;

typedef struct cs_range {
	const char *kind; /* api|kernel|memcpy|memset|graph|nvtx|window|... */
	const char *name;
	uint64_t t0;
	uint64_t t1;
	int64_t device;         /* -1 = none */
	int64_t stream;         /* -1 = none */
	int64_t correlation_id; /* -1 = none */
	int64_t pid;            /* -1 = none */
	int64_t tid;            /* -1 = none */
	int64_t bytes;          /* -1 = unknown */
	const char *args;       /* JSON object text (grid, block, ...); NULL = none */
} cs_range;

/* Initialises r with every optional field "none". */
void cs_range_init(cs_range *r, const char *kind, const char *name,
		   uint64_t t0, uint64_t t1);

/* Counters a producer reports at the end of a run. */
typedef struct cs_run_counters {
	uint64_t dropped;
	uint64_t overflows;
	uint64_t bad_records;   /* records refused as invalid at the source */
	uint64_t empty_samples; /* zero-length samples (not losses) */
} cs_run_counters;

/* Starts a run (status 'running', committed at once so it is visible).
 * Returns a writer the caller finishes with cs_writer_end() or
 * cs_writer_discard(), or NULL with the reason in err. */
cs_writer *cs_writer_begin(cs_store *s, const cs_run_info *info, char *err,
			   size_t errlen);

/* The run's id in this database. */
int64_t cs_writer_run(const cs_writer *w);

/* Samples appended to the run so far (every device). */
uint64_t cs_writer_samples(const cs_writer *w);

/* Records a device. Samples for an index never described get a bare
 * device row. Returns 0 or a negative errno (-EEXIST when repeated). */
int cs_writer_add_device(cs_writer *w, const cs_device_info *d);

/* Declares a metric and returns its id (0, 1, ... in order) in *id.
 * Returns 0, -EEXIST for a name already declared, or -EINVAL. */
int cs_writer_add_metric(cs_writer *w, const cs_metric_info *m, uint32_t *id);

/* Appends a batch. seq0 must continue the device's sequence (the first
 * batch of a device may start anywhere), t0 must not decrease, t1 >= t0,
 * and every metric id must be declared and appear once. Batches of any
 * size are buffered into chunks (CS_CHUNK_SAMPLES above). Returns 0, -EINVAL
 * (message in cs_store_errmsg) or a store error. */
int cs_writer_append(cs_writer *w, const cs_batch *b);

/* Records a range (t1 >= t0). */
int cs_writer_add_range(cs_writer *w, const cs_range *r);

/* Flushes, records status ("complete" or "incomplete") and counters
 * (counters may be NULL), commits and frees the writer, whatever the
 * result. Returns 0 or a negative errno. */
int cs_writer_end(cs_writer *w, const char *status,
		  const cs_run_counters *counters);

/* Deletes the run and everything written for it, then frees the writer.
 * For an import that failed validation. Accepts NULL. */
void cs_writer_discard(cs_writer *w);

#endif
