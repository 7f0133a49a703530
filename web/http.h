/*
 * http.h - the HTTP API on libmicrohttpd (cs_http_*); docs/http-api.md is
 * the contract. Every request reads the database through its own read-only
 * connection, so readers never wait for the ingest writer (WAL) and never
 * write. Series and ranges are streamed from the store with
 * MHD_create_response_from_callback, never built whole in memory.
 *
 * Threads: MHD runs one thread per connection; cs_http_start/stop are
 * called from one thread.
 */
#ifndef CS_HTTP_H
#define CS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct cs_http_opts {
	const char *db_path;
	const char *listen; /* "127.0.0.1:7070", "[::1]:7070", port 0 = any free port */
	const char *token;  /* "" or NULL = no token required */
	unsigned connections;
	unsigned busy; /* requests doing database work at once (0 = 2); the rest wait */
	unsigned timeout_s;
	unsigned header_timeout_s; /* a request's headers must arrive within (0 = 10) */
	unsigned per_ip;           /* connections one address may hold (0 = any) */
	uint64_t query_timeout_ms;
	uint64_t query_max_rows;
	uint64_t query_max_bytes;
	/* appends the daemon's own Prometheus lines to GET /metrics */
	void (*metrics)(void *ctx, cs_buf *out);
	void *metrics_ctx;
	/* NULL while ingest works, else why not ("disk full"): health says
	 * degraded (same ctx) */
	const char *(*degraded)(void *ctx);
	/* DELETE /api/v1/runs/{run}: deletes the run of that uuid through the
	 * daemon's writer (same ctx), its id in *run; NULL = 405. 0, -ENOENT,
	 * -EBUSY, -EROFS or an error, why in err. */
	int (*delete_run)(void *ctx, const char *uuid, int64_t *run, char *err, size_t errlen);
	/* GET /api/v1/collectors: appends the live collectors (same ctx) as
	 * JSON (format 0), an aligned table (1) or CSV (2); NULL = none */
	void (*collectors)(void *ctx, int format, cs_buf *out);
	/* the ids of pid's (>= 0), job's (non-empty) or all live collectors,
	 * at most max; NULL = none */
	size_t (*select)(void *ctx, int64_t pid, const char *job, uint64_t *ids, size_t max);
	/* POST /api/v1/collectors/...: sends the command (a cs_wire_op) to
	 * each of ids[0..n) at once and waits for their answers: rc[i] is
	 * 0, -EPERM (refused), -ENOENT, -EAGAIN (rate-limited), -ETIMEDOUT
	 * or -EPIPE, with the message at msgs + i * msglen. 0 or -ENOMEM.
	 * NULL = 405 */
	int (*command)(void *ctx, const uint64_t *ids, size_t n, int op, uint64_t value,
		       const char *name, int *rc, char *msgs, size_t msglen);
	/* a follower of a run started (+1) or ended (-1); NULL = none */
	void (*follow)(void *ctx, int delta);
	int read_only; /* refuse commands and deletions (403) */
	/* Names the daemon may be reached by besides IP addresses, localhost
	 * and this machine's host name (comma-separated; a reverse proxy's):
	 * a request whose Host is none of these is refused (DNS rebinding). */
	const char *hosts;
} cs_http_opts;

typedef struct cs_http cs_http;

/* Starts serving. The strings in o are copied. NULL with the reason in err
 * (address in use, bad listen address, ...). */
cs_http *cs_http_start(const cs_http_opts *o, char *err, size_t errlen);

/* Checks listen ("HOST:PORT", "[IPv6]:PORT", "localhost:PORT") and that
 * the address can be bound now, without serving: a daemon says "address
 * in use" before it creates anything. 0, or -EINVAL (bad syntax) or
 * -errno of bind(2) with the reason in err. */
int cs_http_check_listen(const char *listen, char *err, size_t errlen);

/* The port actually bound (useful with port 0). */
unsigned cs_http_port(const cs_http *h);

/* Stops accepting, finishes or cuts open requests, frees. Accepts NULL. */
void cs_http_stop(cs_http *h);

#endif
