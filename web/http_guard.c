/*
 * http_guard.c - the guard against slow clients (libmicrohttpd's
 * connection notifications and a watchdog thread).
 */
#define _GNU_SOURCE
#include "http_int.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the slow-client guard ----
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client sending
 * a byte a second holds its connection (and, one thread per connection, a
 * thread) for ever, and 64 of them locked everyone out, token or not (the
 * token is read with the headers). So:
 *  - a request (its headers and its body) must arrive within
 *    header_timeout_s of the connection's start (or of the previous
 *    request's end, keep-alive); a watchdog closes connections past it;
 *  - connections still waiting for their request may hold all but a reserve of
 *    the connection slots, and one address may hold at most per_ip: a new
 *    connection past either closes the longest-waiting such connection
 *    that has waited at least GUARD_MIN_AGE_MS (a client that sends its
 *    request at once has sent it by then), else it is admitted into the
 *    headroom above the slots (libmicrohttpd's limit is twice them);
 * so a client whose headers come at once always finds a slot. */

static uint64_t guard_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return 0;
}

/* Closes ci's socket (libmicrohttpd then ends the connection). gmu held. */
static void guard_cut(cs_http *h, conn_info *ci)
{
	shutdown(ci->fd, SHUT_RDWR);
	ci->waiting = 0;
	atomic_fetch_add(&h->slow_closed, 1);
}

/* The connection slots, and the reserve of them the guard keeps from
 * connections waiting for their request (and from follow streams): an
 * eighth, at least 4. */
static unsigned guard_slots(const cs_http *h)
{
	return h->o.connections ? h->o.connections : 64;
}

static unsigned guard_reserve(unsigned slots)
{
	return slots / 8 < 4 ? 4 : slots / 8;
}

/* A connection younger than this is never closed to make room: a client
 * that sends its request at once has sent it by then (right after a burst
 * of slow connections, the oldest waiting one could be a quick client's). */
#define GUARD_MIN_AGE_MS 250

/* The connection waiting longest for its request, at least
 * GUARD_MIN_AGE_MS, from addr's host when addr is given. gmu held. */
static conn_info *guard_oldest(cs_http *h, const struct sockaddr_storage *addr, uint64_t now)
{
	conn_info *best = NULL;
	for (conn_info *ci = h->conns; ci; ci = ci->next)
		if (ci->waiting && now - ci->since_ms >= GUARD_MIN_AGE_MS &&
		    (!addr || same_host(&ci->addr, addr)) && (!best || ci->since_ms < best->since_ms))
			best = ci;
	return best;
}

void cs_http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode code)
{
	cs_http *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		conn_info *ci = *socket_context;
		if (!ci)
			return;
		pthread_mutex_lock(&h->gmu);
		if (ci->prev)
			ci->prev->next = ci->next;
		else
			h->conns = ci->next;
		if (ci->next)
			ci->next->prev = ci->prev;
		h->nconns--;
		pthread_mutex_unlock(&h->gmu);
		free(ci);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fdi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	conn_info *ci = calloc(1, sizeof *ci);
	if (!ci || !fdi) {
		free(ci);
		if (fdi)
			shutdown(fdi->connect_fd, SHUT_RDWR); /* no memory: refuse it */
		return;
	}
	ci->fd = fdi->connect_fd;
	ci->since_ms = guard_now();
	ci->waiting = 1;
	if (ai && ai->client_addr)
		memcpy(&ci->addr, ai->client_addr,
		       ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							  : sizeof(struct sockaddr_in));
	pthread_mutex_lock(&h->gmu);
	unsigned waiting = 0, same = 0;
	for (conn_info *o = h->conns; o; o = o->next) {
		waiting += (unsigned)o->waiting;
		same += (unsigned)same_host(&o->addr, &ci->addr);
	}
	unsigned slots = guard_slots(h);
	unsigned reserve = guard_reserve(slots);
	unsigned per_ip = h->o.per_ip ? h->o.per_ip : slots;
	int over_ip = same + 1 > per_ip;
	/* The guard admits; libmicrohttpd's own limit is set higher
	 * (MHD_HEADROOM) so that connections still being torn down after a
	 * cut never make it refuse a new one before the guard sees it. */
	if (over_ip || waiting + 1 + reserve > slots || h->nconns + 1 > slots) {
		conn_info *victim = guard_oldest(h, over_ip ? &ci->addr : NULL, ci->since_ms);
		if (victim)
			guard_cut(h, victim);
		else if (h->nconns + 1 >= slots * MHD_HEADROOM)
			guard_cut(h, ci); /* refused: nobody to make room, no headroom left */
		/* else admitted into the headroom: the young ones waiting now
		 * are closed when they have waited GUARD_MIN_AGE_MS */
	}
	ci->next = h->conns;
	if (h->conns)
		h->conns->prev = ci;
	h->conns = ci;
	h->nconns++;
	pthread_mutex_unlock(&h->gmu);
	*socket_context = ci;
}

static conn_info *guard_info(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* waiting 0: c's request headers are in; 1: a request ended and the next
 * one's headers are timed from now (keep-alive). */
void cs_http_guard_waiting(cs_http *h, struct MHD_Connection *c, int waiting)
{
	conn_info *ci = guard_info(c);
	if (!ci)
		return;
	pthread_mutex_lock(&h->gmu);
	ci->waiting = waiting;
	ci->streaming = 0; /* a request begins or ends: no stream of the last one */
	if (waiting)
		ci->since_ms = guard_now();
	pthread_mutex_unlock(&h->gmu);
}

/* A follow stream holds its connection for as long as its run lasts, so
 * streams may take only a share of the connections: one address at most
 * per_ip less a reserve (28 of 32), all addresses together the slots less
 * the guard's reserve (56 of 64), so that health, the UI and every other
 * request always find a connection (127 streams from one address locked
 * everyone out). 0 when c may stream; else why it may not, for a 429. */
int cs_http_guard_stream(cs_http *h, struct MHD_Connection *c, char *why, size_t len)
{
	conn_info *ci = guard_info(c);
	if (!ci)
		return 0;
	unsigned slots = guard_slots(h);
	unsigned per_ip = h->o.per_ip && h->o.per_ip < slots ? h->o.per_ip : slots;
	unsigned ip_res = per_ip / 8 < 4 ? per_ip / 8 : 4;
	unsigned all_res = guard_reserve(slots);
	/* at least one stream, however few the connections */
	unsigned ip_cap = per_ip > ip_res ? per_ip - ip_res : 1;
	unsigned all_cap = slots > all_res ? slots - all_res : 1;
	unsigned mine = 0, all = 0;
	pthread_mutex_lock(&h->gmu);
	for (conn_info *o = h->conns; o; o = o->next)
		if (o->streaming && o != ci) {
			all++;
			mine += (unsigned)same_host(&o->addr, &ci->addr);
		}
	int ok = mine < ip_cap && all < all_cap;
	if (ok)
		ci->streaming = 1;
	pthread_mutex_unlock(&h->gmu);
	if (!ok)
		snprintf(why, len, "too many follow streams: %u open from this address (at most %u), "
			 "%u in all (at most %u); close one, or follow fewer runs at once",
			 mine, ip_cap, all, all_cap);
	return ok ? 0 : -1;
}

void *cs_http_guard_main(void *arg)
{
	cs_http *h = arg;
	uint64_t limit = (uint64_t)(h->o.header_timeout_s ? h->o.header_timeout_s : 10) * 1000;
	pthread_mutex_lock(&h->gmu);
	while (!h->gstop) {
		uint64_t now = guard_now();
		for (conn_info *ci = h->conns; ci; ci = ci->next)
			if (ci->waiting && now - ci->since_ms >= limit)
				guard_cut(h, ci);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&h->gcv, &h->gmu, &ts);
	}
	pthread_mutex_unlock(&h->gmu);
	return NULL;
}
