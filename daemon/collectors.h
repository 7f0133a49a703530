/*
 * collectors.h - the daemon's registry of live collectors (cs_collectors_*):
 * every ingest connection that sent REGISTER (docs/protocol.md) is a
 * collector the daemon can command. The ingest readers fill it (REGISTER,
 * STATUS, REPLY, the connection's end), the writer says which run each
 * one writes, and HTTP handlers list them and send commands.
 *
 * A command is sent on the collector's connection and waited for (its
 * REPLY) at most wait_ms. Commands are rate-limited per collector (a
 * bucket of CS_COLLECTORS_BURST, refilled at CS_COLLECTORS_RATE per
 * second), so a storm of requests changes nothing beyond that.
 *
 * Threads: every function takes the registry's lock; any thread.
 */
#ifndef CS_COLLECTORS_H
#define CS_COLLECTORS_H

#include <pthread.h>
#include <stdint.h>

#include "buf.h"
#include "wire.h"

#define CS_COLLECTORS_BURST 5
#define CS_COLLECTORS_RATE 2.0

typedef struct cs_collectors cs_collectors;

cs_collectors *cs_collectors_new(void);
void cs_collectors_free(cs_collectors *r);

/* An ingest connection registered: fd (and the lock its other writers
 * take, fd_mu) stay valid until cs_collectors_gone(id). pid, host and
 * cmdline come from its HELLO. A second REGISTER updates the entry. */
void cs_collectors_register(cs_collectors *r, uint64_t id, int fd, pthread_mutex_t *fd_mu,
			    int64_t pid, const char *host, const char *cmdline,
			    const cs_wire_register *g);
void cs_collectors_status(cs_collectors *r, uint64_t id, const cs_wire_report *s);
void cs_collectors_reply(cs_collectors *r, uint64_t id, const cs_wire_reply *y);
/* The connection ended (reader thread, before its fd closes). */
void cs_collectors_gone(cs_collectors *r, uint64_t id);
/* The writer began run (its uuid) on connection id. */
void cs_collectors_set_run(cs_collectors *r, uint64_t id, int64_t run, const char *uuid);

/* The live collectors, oldest first (docs/http-api.md): a JSON array, or
 * (text) an aligned table for a terminal, or (csv) CSV with a header. */
enum cs_collectors_format { CS_COLLECTORS_JSON, CS_COLLECTORS_TEXT, CS_COLLECTORS_CSV };
void cs_collectors_list(cs_collectors *r, int format, cs_buf *out);

/* Prometheus lines: live collectors (by state), commands sent, refused
 * and rate-limited. */
void cs_collectors_metrics_text(cs_collectors *r, cs_buf *out);

/* The ids of the live collectors of pid (>= 0) or job (non-empty), or of
 * all of them (pid < 0, job NULL or ""); at most max, oldest first.
 * Returns how many. */
size_t cs_collectors_select(cs_collectors *r, int64_t pid, const char *job, uint64_t *ids,
			    size_t max);

/* What one collector made of a command. */
typedef struct cs_collector_result {
	uint64_t id;
	/* 0 done, -EPERM refused (msg says why), -ENOENT no such live
	 * collector (or it went away), -EAGAIN rate-limited (msg says when
	 * to retry), -ETIMEDOUT no answer in time, -EPIPE its connection
	 * did not take the frame */
	int rc;
	char msg[256];
} cs_collector_result;

/* Sends op (cs_wire_op) with value and name to each of ids[0..n) at
 * once, then waits up to wait_ms in all for their answers; res[i] is
 * ids[i]'s. 0, or -ENOMEM (every res says so). */
int cs_collectors_command(cs_collectors *r, const uint64_t *ids, size_t n, int op,
			  uint64_t value, const char *name, unsigned wait_ms,
			  cs_collector_result *res);

#endif
