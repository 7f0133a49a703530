/*
 * simrun.h - building one imported run from sample rows (cs_simrun_*):
 * the part every simulator importer shares. Metrics are declared the first
 * time a value is set (so a format's metric set may grow as the file is
 * read); rows are buffered and sent as batches, absent values as NaN;
 * ranges pass straight through; metric maps (metric_map.h) add their
 * derived metrics to every row. Running totals: the import's
 * --cumulative names (and those cs_simrun_cumulative marks) are stored as
 * per-sample deltas; at the end, counters that never went down while
 * others did are named in a warning (unless --per-window). On any error the caller discards the run,
 * so a failed import leaves nothing behind.
 *
 * Threads: one thread per builder.
 */
#ifndef CS_SIMRUN_H
#define CS_SIMRUN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "import_csv.h"
#include "metric_map.h"
#include "producer.h"
#include "store.h"
#include "totals.h"

typedef struct cs_simrun cs_simrun;

/* Begins the run described by info through p (both borrowed until
 * cs_simrun_end/discard). map may be NULL. NULL with the reason in err. */
cs_simrun *cs_simrun_begin(cs_producer *p, const cs_run_info *info, const cs_mmap *map,
			   char *err, size_t errlen);

/* The index of a metric, declared on first use (unit and kind may be
 * NULL: counter). Returns the index or a negative errno. */
int cs_simrun_metric(cs_simrun *r, const char *name, const char *unit, const char *kind);

/* The name of metric idx into out: 0, or -ENOENT. */
int cs_simrun_metric_name(const cs_simrun *r, int idx, char *out, size_t outlen);

/* Metric idx is a running total: its values from the next row written on
 * are stored as per-sample deltas (as for the import's --cumulative
 * names). */
void cs_simrun_cumulative(cs_simrun *r, int idx);

/* How many times a running total may go down (restart) before the end
 * warns that it may not be one (default: no warning). */
void cs_simrun_restarts(cs_simrun *r, uint64_t n);

/* Starts a new sample row [t0, t1) and finishes the previous one. t0 must
 * not decrease. 0 or a negative errno. */
int cs_simrun_row(cs_simrun *r, uint64_t t0, uint64_t t1);

/* Sets metric idx in the current row; NaN = absent. */
void cs_simrun_set(cs_simrun *r, int idx, double v);

/* Adds v to metric idx in the current row (an absent value counts as 0). */
void cs_simrun_add(cs_simrun *r, int idx, double v);

int cs_simrun_range(cs_simrun *r, const cs_range *range);

/* Rows so far (including the open one). */
uint64_t cs_simrun_rows(const cs_simrun *r);

/* Flushes and ends the run "complete"; frees r. 0 or a negative errno
 * (then the caller discards). */
int cs_simrun_end(cs_simrun *r, char *err, size_t errlen);

/* Frees r without ending the run (the caller discards it). Accepts NULL. */
void cs_simrun_free(cs_simrun *r);

const char *cs_simrun_errmsg(const cs_simrun *r);

/* Begins an imported run from the import options: the format's source
 * name, default kind and time unit (the options override them), the run
 * name (the file's base name unless given), the clock (the options', else
 * clock_hz) and metadata {"file", "format", then extra_members (JSON
 * object members without braces, or NULL)}. NULL with err set. */
cs_simrun *cs_simrun_open(cs_producer *p, const cs_import_opts *o, const char *source,
			  const char *kind, const char *unit, double clock_hz,
			  const char *extra_members, char *err, size_t errlen);

/* What every importer's parser state starts with: its options, the file
 * name for messages, the caller's error buffer and the current line. */
typedef struct cs_imp {
	const cs_import_opts *o;
	const char *label;
	char *err;
	size_t errlen;
	uint64_t line;
} cs_imp;

/* Fills im (err is emptied). */
void cs_imp_init(cs_imp *im, const cs_import_opts *o, char *err, size_t errlen);

/* "LABEL:LINE: message" into im->err; returns -EINVAL. */
int cs_imp_fail(cs_imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats "LABEL:LINE: message" into err (LINE 0: "LABEL: message");
 * returns -EINVAL, so an importer can `return cs_simrun_verrf(...)`. The
 * arguments may include err itself (a reader's message put in place). */
int cs_simrun_verrf(char *err, size_t errlen, const char *label, uint64_t line,
		    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Ends an import. With rc == 0 the run is ended complete (r freed);
 * with an error, or when ending fails, r is freed and the run discarded,
 * so nothing of a failed import stays. err gets a message when it has
 * none. Returns the final rc. r may be NULL (begin failed). */
int cs_simrun_finish(cs_simrun *r, cs_producer *p, int rc, const char *label, char *err,
		     size_t errlen);

/* Helpers for importers' run metadata and names. */
/* The GPU a tool's Device field names by its trailing ordinal, as nvprof
 * and nsys print it ("Tesla K20c (0)": 0); -1 when it names none. */
int64_t cs_simrun_device_of(const char *device);

/* The last path component of path (borrowed). */
const char *cs_simrun_base_name(const char *path);
/* An imported run's meta into meta, NUL-terminated: {"file":LABEL,
 * "format":FORMAT[,EXTRA]} where extra is further members as JSON text
 * (or NULL). 0, or -ENOMEM (meta freed). */
int cs_simrun_meta(cs_buf *meta, const char *label, const char *format, const char *extra);

#endif
