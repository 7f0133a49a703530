/*
 * import_csv.h - the generic wide CSV importer (cs_import_csv).
 *
 * Format (docs/import-formats.md): a header row naming t0, t1, optionally
 * device, and one column per metric, in any order; then one row per sample.
 * t0/t1 are non-negative integers in the run's time unit, t0 strictly
 * increasing per device; values are numbers, and an empty field (or nan)
 * means absent. This is exactly what `cyclescope export` writes, so the two
 * round-trip. A metric column may carry its unit as a trailing bracket,
 * "dram__bytes_read.sum [byte]" or "power[W]": the bracket is a unit when
 * it is the name's only one and holds a lowercase letter, '%' or '/'
 * (so Accel-Sim's "stat[GLOBAL_ACC_R][TOTAL_ACCESS]" and "x[0]" stay
 * names).
 *
 * The importer streams into a cs_producer; on any error the half-written run
 * is deleted and err names the file, line, column and what was expected.
 */
#ifndef CS_IMPORT_CSV_H
#define CS_IMPORT_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "metric_map.h"
#include "producer.h"
#include "store.h"
#include "textin.h"

/* What every importer takes (cmd_import.c fills it). */
typedef struct cs_import_opts {
	const char *label;     /* the file name used in messages and metadata */
	const char *name;      /* run name; NULL = the file's base name */
	const char *time_unit; /* "ns" or "cycle"; NULL = the format's own */
	const char *kind;      /* "hw" or "sim"; NULL = the format's own */
	double clock_hz;       /* 0 = unknown / from the file */
	const cs_mmap *map;    /* metric map applied at import; may be NULL */
	int per_bank;          /* aerialvision: keep per-bank DRAM series */
	const char *cumulative; /* comma-separated counters printed as running
				   totals: stored as per-sample deltas */
	int per_window;        /* no running-total check: values as printed */
	uint64_t sample_cycles; /* accelwattch: cycles per row; 0 = 500 */
	/* the long CSV form: which columns hold the time, the metric name
	 * (comma-separated: joined with '.'), the value and the kernel; NULL =
	 * found by their common names */
	const char *col_time, *col_metric, *col_value, *col_kernel;
	const char *tz;         /* nvidia-smi logs: the zone of their local
				   timestamps (TZ syntax); NULL = this machine's */
	cs_progress_fn progress; /* bytes consumed; may be NULL */
	void *progress_ctx;
} cs_import_opts;

/* Imports buf[0..len) (borrowed for the call) as one new run through p
 * (the database directly, or the daemon). Returns 0, or a negative errno
 * with the reason in err; the run is then discarded. */
int cs_import_csv(cs_producer *p, const char *buf, size_t len,
		  const cs_import_opts *opts, char *err, size_t errlen);

/* The same parser without a store: validates the file and calls back per
 * header and row. Used by the importer and the fuzz target. */
typedef struct cs_csv_sink {
	void *ctx;
	/* names[0..m) of the metric columns and their units (NULL entries:
	 * none given), borrowed for the call */
	int (*header)(void *ctx, uint32_t m, const char *const *names,
		      const char *const *units);
	/* values[0..m), NaN = absent; borrowed for the call */
	int (*row)(void *ctx, uint32_t device, uint64_t t0, uint64_t t1,
		   const double *values);
} cs_csv_sink;

int cs_csv_parse(const char *buf, size_t len, const char *label,
		 const cs_csv_sink *sink, char *err, size_t errlen);

/* A wide run, rows batched per device: what cs_import_csv writes its
 * parser's rows through, for the formats that come in the same shape
 * (nvidia-smi logs). Opened with the format's name, time unit and kind
 * (the options' name, clock and running totals apply) and extra meta
 * members (JSON text, or NULL); NULL with err set. cs_wide_header and
 * cs_wide_row are a cs_csv_sink's callbacks (ctx: the cs_wide; devices
 * up to CS_MAX_DEVICE_INDEX). cs_wide_close ends the run complete when rc
 * is 0, else discards it; frees w and returns the final rc. */
typedef struct cs_wide cs_wide;
cs_wide *cs_wide_open(cs_producer *p, const cs_import_opts *o, const char *format,
		      const char *unit, const char *kind, const char *extra, char *err,
		      size_t errlen);
int cs_wide_header(void *ctx, uint32_t m, const char *const *names, const char *const *units);
int cs_wide_row(void *ctx, uint32_t device, uint64_t t0, uint64_t t1, const double *values);
int cs_wide_close(cs_wide *w, int rc);

#endif
