/*
 * output.h - where an injected collector's run goes (cs_out_*): the
 * engine's sink over a producer that is opened only when the run begins
 * (the daemon's socket, else the database file), and the process's one
 * status line for `cyclescope run`.
 *
 * No CUPTI here, so the whole path, including the exit-time rules, is
 * exercised by tests/tools/replay_run.c on machines without a GPU:
 *  - nothing is created until the engine begins a run, which it does at
 *    the first sample or range: a process that initialises CUDA and does
 *    no GPU work leaves neither a run nor a file (a control link,
 *    control.h, connects to the daemon at start, which stores nothing);
 *  - socket sends time out (send_timeout_ms), so a daemon that stops
 *    reading costs data, never a hung thread;
 *  - after a close that timed out, the producer and store are leaked,
 *    never freed under a sender that may still use them.
 *
 * Threads: the sink callbacks come from the engine's sender thread only;
 * cs_out_new/cs_out_finish from the thread that owns the engine.
 */
#ifndef CS_OUTPUT_H
#define CS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "producer.h"
#include "store.h"

typedef struct cs_out_opts {
	int db_only;              /* 1: the file only; 0: the daemon first */
	const char *socket;       /* NULL = cs_producer_default_socket() */
	const char *db;           /* NULL = "cyclescope.db" */
	unsigned send_timeout_ms; /* 0 = block */
	const char *status_path;  /* append the status line here; NULL = no */
	cs_producer *producer;    /* an open producer to write through
				     (borrowed, never freed here); NULL =
				     open one when the run begins */
	cs_run_info info;         /* the run; strings borrowed for the life */
} cs_out_opts;

typedef struct cs_out cs_out;

/* Opens nothing yet. NULL when out of memory. */
cs_out *cs_out_new(const cs_out_opts *o);

/* A control link's connection (collector/control.h): connects to the
 * daemon now rather than at the run's start, so that the collector can
 * register while it samples nothing. The socket producer, or NULL (no
 * daemon, or db_only) with the reason in err; the run then goes where it
 * would have gone. Owned by the output. */
cs_producer *cs_out_connect(cs_out *o, char *err, size_t errlen);

/* The daemon's connection was lost: a new one, on which first (the
 * link's REGISTER; may be NULL) is sent before anything else can be;
 * the old producer is freed (a run open on it stays as the daemon left
 * it, incomplete). NULL with the reason in err (the daemon is still away,
 * or the output is a file). *had_run says whether a run had begun on a
 * lost connection: calls then fail (-ECONNRESET) until the engine begins
 * the next run (cs_engine_sink_reset). Once a link connected, a run
 * never falls back to the file: while the daemon is away it fails the
 * same way. */
struct cs_wire_msg;
cs_producer *cs_out_reconnect(cs_out *o, const struct cs_wire_msg *first, int *had_run,
			      char *err, size_t errlen);

/* In a child forked without exec: closes the inherited connection (not
 * a word is sent on it), so the parent's registration ends with the
 * parent. */
void cs_out_child(cs_out *o);

/* The engine's sink: ctx is the cs_out. */
extern const cs_sink_ops cs_out_sink_ops;

/* After cs_engine_close() returned close_rc with the final counters st:
 * writes the process's status line (the run recorded, or why none was)
 * and frees the output; after -ETIMEDOUT it leaks it instead (the
 * sender thread was left running). why_none names the reason when no
 * run began (NULL: "no GPU work was recorded"). Accepts NULL o. */
void cs_out_finish(cs_out *o, int close_rc, const cs_engine_stats *st, const char *why_none);

/* Frees an output that never took part in a run (no status line).
 * Accepts NULL. */
void cs_out_free(cs_out *o);

/* Appends "pid=N<TAB>status=none<TAB>reason=TEXT" to path (NULL: nothing): for a
 * process whose collector never got as far as an engine. */
void cs_out_status_none(const char *path, const char *reason);

#endif
