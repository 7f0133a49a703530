/*
 * blobcache.h - decompressed chunk payloads kept between reads
 * (cs_blobcache_*): a daemon answering the same runs again and again
 * decompresses each zstd payload once, not once a request. Entries are
 * found by what was compressed (a 128-bit hash of the stored bytes and
 * the payload's length), so a chunk rewritten or a run deleted never
 * finds a stale one. One cache per process, shared by its threads; off
 * (limit 0) until cs_blobcache_set_limit.
 */
#ifndef CS_BLOBCACHE_H
#define CS_BLOBCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_blobkey {
	uint64_t lo, hi;
	uint32_t len;
} cs_blobkey;

/* Keeps at most bytes of payloads (least recently used ones go first);
 * 0 turns the cache off and empties it. */
void cs_blobcache_set_limit(size_t bytes);

/* The payload that packed[0..plen) decompresses to (raw_len bytes) into
 * dst: 1 when it was kept, else 0 with *key set for cs_blobcache_put. */
int cs_blobcache_get(const void *packed, size_t plen, uint32_t raw_len, void *dst,
		     cs_blobkey *key);

/* Keeps raw[0..key->len) under key (a copy), when the cache is on and it
 * fits. */
void cs_blobcache_put(const cs_blobkey *key, const void *raw);

/* Hits and misses since the start (for tests and metrics). */
void cs_blobcache_stats(uint64_t *hits, uint64_t *misses, size_t *bytes);

#endif
