/*
 * producer.h - one API for everything that produces runs (cs_producer_*):
 * importers and the collector call it, and it either writes the database
 * directly (the embedded default, no daemon) or sends wire frames to the
 * daemon's ingest socket. The socket side is the project's one client.
 *
 * Errors: 0 or a negative errno; the message in cs_producer_errmsg().
 * Threads: one thread at a time per producer, except for a control
 * link's cs_producer_send_frame/_fd/_unread (below).
 */
#ifndef CS_PRODUCER_H
#define CS_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct cs_producer cs_producer;

/* Writes into s, borrowed until cs_producer_free(). */
cs_producer *cs_producer_direct(cs_store *s);

/* Connects to the daemon's socket at path and says HELLO. NULL with the
 * reason in err when nothing listens there. */
cs_producer *cs_producer_socket(const char *path, char *err, size_t errlen);

/* The default ingest socket: $CYCLESCOPE_SOCKET, else
 * $XDG_RUNTIME_DIR/cyclescope.sock, else /run/cyclescope/ingest.sock.
 * Copied into out. */
void cs_producer_default_socket(char *out, size_t outlen);

/* Ends an open run as incomplete, closes, frees. Accepts NULL. */
void cs_producer_free(cs_producer *p);

int cs_producer_begin(cs_producer *p, const cs_run_info *info);
/* Labels (a JSON object of strings: {"job":"J","rank":"3"}, borrowed
 * while runs begin) merged into the meta.labels of every run begun from
 * now on, over the labels the source gave itself. NULL = none. */
void cs_producer_labels(cs_producer *p, const char *labels);
int cs_producer_add_device(cs_producer *p, const cs_device_info *d);
int cs_producer_add_metric(cs_producer *p, const cs_metric_info *m, uint32_t *id);

/* Where a metric declared with no unit gets one: fn returns the unit of
 * name (borrowed until its next call) or NULL. A start-up registry: the
 * CLI sets it once, before any producer adds a metric (imports take NCU
 * names' units from CUPTI's catalog); NULL (the default) = none. */
typedef const char *(*cs_unit_fn)(const char *name);
void cs_producer_unit_source(cs_unit_fn fn);
int cs_producer_append(cs_producer *p, const cs_batch *b);
int cs_producer_add_range(cs_producer *p, const cs_range *r);
/* Over a socket, ending a run (not discarding it) waits for the daemon's
 * acknowledgement that it committed the run (the ACK frame,
 * docs/protocol.md), at most the ack timeout: no acknowledgement in time,
 * a closed connection or a daemon that could not store the run is an
 * error (-ETIMEDOUT, -ECONNRESET, -EIO) saying the run may be missing. */
int cs_producer_end(cs_producer *p, const char *status, const cs_run_counters *c);
/* Ranges (borrowed until the run ends) added to the open run just before
 * it ends complete: ranges a user gives beside an imported file. */
void cs_producer_extra_ranges(cs_producer *p, const cs_range *r, size_t n);

/* Socket: a send that makes no progress for ms fails with -ETIMEDOUT
 * (SO_SNDTIMEO) instead of blocking while the daemon stops reading; 0 =
 * block (the default). A no-op for direct writes. 0 or -errno. */
int cs_producer_set_send_timeout(cs_producer *p, unsigned ms);

/* How long cs_producer_end waits for the daemon's acknowledgement
 * (CS_PRODUCER_ACK_MS by default); 0 = do not wait. */
#define CS_PRODUCER_ACK_MS 30000u
void cs_producer_set_ack_timeout(cs_producer *p, unsigned ms);

/* Samples the daemon said the last acknowledged run holds (socket). */
uint64_t cs_producer_acked_samples(const cs_producer *p);

/* Sends whatever is buffered now (socket); a no-op for direct writes. */
int cs_producer_flush(cs_producer *p);

/* A control link (collector/control.c) on a socket producer, from its own
 * thread: sends one frame whole, never inside the producer's own frames
 * (0, -ENOTCONN for direct, or -errno); reads frames from the fd while
 * the producer's thread does not (a run's end, which waits for its ACK,
 * comes only after the link stopped), and hands back the bytes of a
 * frame it had begun to read when it stopped. */
struct cs_wire_msg;
int cs_producer_send_frame(cs_producer *p, const struct cs_wire_msg *m);
int cs_producer_fd(const cs_producer *p);
void cs_producer_unread(cs_producer *p, const void *data, size_t len);

/* Abandons the open run: the store deletes it. */
void cs_producer_discard(cs_producer *p);

/* "run 12" (direct) or "run <uuid>" (socket): how to name the last run. */
const char *cs_producer_run_label(const cs_producer *p);

/* The run id in the database (direct only; 0 over a socket). */
int64_t cs_producer_run(const cs_producer *p);

const char *cs_producer_errmsg(const cs_producer *p);

#endif
