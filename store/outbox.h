/*
 * outbox.h - what a fleet shipper reads from the store and how far it got
 * (cs_outbox_*). The local file is the buffer: nothing is copied out of it
 * until it is shipped, and the marks saying what a target has confirmed
 * live in the same file (table ship_marks, docs/schema.md), keyed by
 * (target, run uuid, what, device).
 *
 * Rows of runs, devices, metrics and ranges come as arrays of typed cells
 * in the column order documented at each function, so the shipper encodes
 * them without speaking SQL. Samples come through the reader (reader.h,
 * a scan by sample number).
 *
 * Errors: 0 or a negative errno, the message in cs_store_errmsg().
 * Threads: as the cs_store used.
 */
#ifndef CS_OUTBOX_H
#define CS_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum cs_cell_type { CS_CELL_NULL, CS_CELL_INT, CS_CELL_REAL, CS_CELL_TEXT };

typedef struct cs_cell {
	int type; /* cs_cell_type */
	int64_t i;
	double d;
	const char *s; /* TEXT: borrowed for the callback, len bytes */
	size_t len;
} cs_cell;

/* Called once per row; 0 goes on, anything else stops and is returned. */
typedef int (*cs_cell_fn)(void *ctx, const cs_cell *cells, int n);

/* Where a run stands: its uuid, status and a fingerprint of everything a
 * shipper sends (status, counts, end, devices, metrics, last range id,
 * committed samples per device): while it equals the "done" mark, the run
 * has nothing new. */
typedef struct cs_outbox_run {
	int64_t id;
	char uuid[40];
	int running;
	int64_t fingerprint;
	int64_t meta_fingerprint; /* runs/devices/metrics rows only */
	int64_t last_range;       /* highest range id (0 = none) */
} cs_outbox_run;

/* The runs (all, or only the one with id only_run when > 0) whose
 * fingerprint differs from target's "done" mark, in id order. *runs is
 * malloc'd (caller frees); *n may be 0. */
int cs_outbox_pending(cs_store *s, const char *target, int64_t only_run, cs_outbox_run **runs,
		      size_t *n);

/* The run's row: id, uuid, kind, source, name, host, pid, cmdline,
 * start_ns, end_ns, status, time_unit, clock_hz, t_min, t_max, samples,
 * dropped, overflows, meta. */
int cs_outbox_run_row(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx);
#define CS_OUTBOX_RUN_COLS 19

/* The run's devices: idx, name, chip, uuid, sm_count, clock_hz,
 * mem_clock_hz. */
int cs_outbox_devices(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx);
#define CS_OUTBOX_DEVICE_COLS 7

/* The run's metrics: id, name, unit, kind, cumulative. */
int cs_outbox_metrics(cs_store *s, int64_t run, cs_cell_fn fn, void *ctx);
#define CS_OUTBOX_METRIC_COLS 5

/* Ranges with id > after_id, at most limit, in id order: id, kind, name,
 * t0, t1, device, stream, correlation_id, pid, tid, bytes. */
int cs_outbox_ranges(cs_store *s, int64_t run, int64_t after_id, uint32_t limit,
		     cs_cell_fn fn, void *ctx);
#define CS_OUTBOX_RANGE_COLS 11

/* Committed samples per device of the run: devs[i] has counts[i] samples
 * (numbered 0..counts[i]-1). Both arrays malloc'd (caller frees). */
int cs_outbox_device_samples(cs_store *s, int64_t run, uint32_t **devs, uint64_t **counts,
			     uint32_t *n);

/* A mark of target for (run uuid, what, device); 0 when none was set. */
int cs_outbox_mark(cs_store *s, const char *target, const char *run_uuid, const char *what,
		   uint32_t device, int64_t *mark);

/* Records a mark (in its own transaction; s must be read-write). */
int cs_outbox_set_mark(cs_store *s, const char *target, const char *run_uuid,
		       const char *what, uint32_t device, int64_t mark);

#endif
