/*
 * control.h - the collector's control link (cs_link_*): over the
 * connection its run goes to, the collector registers with the daemon
 * (REGISTER), reports its state and counters every second (STATUS), takes
 * the daemon's commands (COMMAND: open or close a window, change the
 * interval, flush) and answers each (REPLY). docs/protocol.md has the
 * frames.
 *
 * One thread, the link's: it reads the connection, hands commands to the
 * engine (whose control thread applies them) and sends the answers the
 * engine gives back through cs_link_reply_fn, which only queues. When the
 * daemon goes away (a restart), the link reconnects with a bounded
 * back-off (100 ms doubling to 5 s) and registers again; the collector
 * keeps its state (armed, its interval, an open window). A run that had
 * begun on the lost connection stays as the daemon left it, incomplete;
 * what is sampled next goes to a new run (cs_engine_sink_reset), and
 * what failed in between is counted as dropped.
 *
 * No CUPTI here: tests drive it through the injected library's test
 * source and a real daemon.
 */
#ifndef CS_CONTROL_H
#define CS_CONTROL_H

#include <stdint.h>

#include "engine.h"
#include "output.h"

typedef struct cs_link_opts {
	uint8_t mode;        /* cs_wire_mode */
	const char *job;     /* job id or NULL (copied) */
	const char *devices; /* "0,1" or "all" (copied) */
	const char *metrics; /* comma-separated (copied) */
	uint64_t min_interval_ns, max_interval_ns;
	unsigned status_ms;  /* STATUS period; 0 = 1000 */
} cs_link_opts;

typedef struct cs_link cs_link;

/* Connects through out (cs_out_connect) and registers. NULL, with the
 * reason in err, when there is no daemon to talk to: the collector then
 * runs as it would without one. The engine is set later. */
cs_link *cs_link_start(const cs_link_opts *o, cs_out *out, char *err, size_t errlen);

/* The engine that takes the commands; until set, commands are refused. */
void cs_link_set_engine(cs_link *l, cs_engine *e);

/* cs_engine_opts.on_reply, with reply_ctx = the link. */
void cs_link_reply_fn(void *ctx, uint32_t id, int ok, const char *message);

/* Stops the thread and hands unread bytes back to the producer. Bounded
 * by what the thread may be in: a frame's send (the send timeout, 10 s
 * in the collector) or a reconnection (a connect that never waits, and
 * the old run's end, whose ACK wait is bounded the same way). Replies
 * queued afterwards are dropped. Accepts NULL. */
void cs_link_stop(cs_link *l);

/* Frees a stopped link. Accepts NULL. */
void cs_link_free(cs_link *l);

#endif
