/*
 * apply.h - a producer's frames applied to the store (cs_apply_*): the one
 * place that maps wire messages (wire.h, docs/protocol.md) onto the batch
 * writer (store.h). The daemon's ingest feeds it each connection's frames
 * on its writer thread; the store's fuzzer feeds it decoded input.
 *
 * One cs_apply is one producer connection: the run it has open, its map
 * from the producer's metric ids to the store's, the devices it named, and
 * whether the run has failed (its later frames are dropped until RUN_END
 * or the next RUN_BEGIN). What the caller does about a frame (close the
 * connection, count, answer the producer) it learns through hooks; any
 * hook may be NULL.
 */
#ifndef CS_APPLY_H
#define CS_APPLY_H

#include <stdint.h>

#include "store.h"
#include "wire.h"

/* Devices per run: each costs the writer buffers, so a producer cannot
 * declare without bound (20000 device indices held 880 MB). Metrics: the
 * protocol's limit per run (CS_WIRE_MAX_METRICS). */
#define CS_APPLY_MAX_DEVICES 256u

typedef struct cs_apply cs_apply;

typedef struct cs_apply_hooks {
	/* The frame is refused (why): the open run fails from here. Called
	 * before the run is marked failed (cs_apply_failed() says whether it
	 * already was). */
	void (*refused)(void *ctx, const char *frame, const char *why);
	/* A store call under frame failed with rc (cs_store_errmsg). 1: the
	 * caller took the store down (cs_store_abort) and cut every open
	 * run's connection (cs_apply_cut); 0: only this run fails (refused
	 * with the store's message). A run that could not begin is refused
	 * either way. */
	int (*store_failed)(void *ctx, const char *frame, int rc);
	/* NULL, or why no run may begin now (written into buf). */
	const char *(*refuse_begin)(void *ctx, char *buf, size_t len);
	void (*begun)(void *ctx, int64_t run);
	/* Before the run's writer ends or is discarded. */
	void (*ending)(void *ctx, int64_t run);
	/* After cs_writer_end(): rc is its result, complete what was asked. */
	void (*ended)(void *ctx, int64_t run, int complete, int rc);
	void (*discarded)(void *ctx, int64_t run);
	/* The answer to RUN_END (an ACK frame's fields). */
	void (*ack)(void *ctx, uint8_t status, uint64_t samples, const char *message);
	/* What was dropped and what was written, for counters and checks. */
	void (*dropped)(void *ctx, uint64_t samples);
	void (*appended)(void *ctx, const cs_batch *b); /* ids are the store's */
	void (*device_added)(void *ctx, uint32_t index);
	void (*metric_added)(void *ctx, uint32_t id);
	void (*range_added)(void *ctx, const cs_range *r);
} cs_apply_hooks;

/* NULL when out of memory. hooks must outlive it. */
cs_apply *cs_apply_new(cs_store *s, const cs_apply_hooks *hooks, void *ctx);

/* Applies one decoded frame. HELLO's strings are taken from m. */
void cs_apply_frame(cs_apply *a, cs_wire_msg *m);

/* The connection closed: an open run ends incomplete. 1 when one was. */
int cs_apply_abandon(cs_apply *a);

/* After cs_store_abort() freed every writer: the open run is forgotten
 * (the caller marks it incomplete) and has failed. */
void cs_apply_cut(cs_apply *a);

/* Frees a; its open run, if any, must have been ended or cut. */
void cs_apply_free(cs_apply *a);

int64_t cs_apply_run(const cs_apply *a);         /* the open run, or 0 */
uint64_t cs_apply_samples(const cs_apply *a);    /* written to it so far */
int cs_apply_failed(const cs_apply *a);
int64_t cs_apply_pid(const cs_apply *a);         /* from HELLO */
const char *cs_apply_host(const cs_apply *a);    /* from HELLO, or NULL */
const char *cs_apply_uuid(const cs_apply *a);    /* the open or last run's */

#endif
