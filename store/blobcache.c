/*
 * blobcache.c - decompressed chunk payloads kept between reads
 * (blobcache.h): a chained hash table over a least-recently-used list,
 * under one mutex held only to find, link or unlink an entry and copy a
 * payload out.
 */
#include "blobcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define NBUCKETS 4096u

typedef struct entry {
	cs_blobkey key;
	struct entry *chain;       /* the next in its bucket */
	struct entry *prev, *next; /* the list, most recent first */
	uint8_t data[];
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *table[NBUCKETS];
static entry *head, *tail;
static size_t used;
static _Atomic size_t limit;
static _Atomic uint64_t hits, misses;

static size_t cost(const entry *e) { return sizeof *e + e->key.len; }

static int same(const cs_blobkey *a, const cs_blobkey *b)
{
	return a->lo == b->lo && a->hi == b->hi && a->len == b->len;
}

static entry **slot(const cs_blobkey *k)
{
	entry **p = &table[k->lo % NBUCKETS];
	while (*p && !same(&(*p)->key, k))
		p = &(*p)->chain;
	return p;
}

static void list_unlink(entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		tail = e->prev;
}

static void list_push(entry *e)
{
	e->prev = NULL;
	e->next = head;
	if (head)
		head->prev = e;
	head = e;
	if (!tail)
		tail = e;
}

/* Unlinks the least recently used entries until used <= keep; returns
 * them chained by next, to be freed outside the lock. */
static entry *evict(size_t keep)
{
	entry *out = NULL;
	while (tail && used > keep) {
		entry *e = tail;
		list_unlink(e);
		*slot(&e->key) = e->chain;
		used -= cost(e);
		e->next = out;
		out = e;
	}
	return out;
}

static void free_list(entry *e)
{
	while (e) {
		entry *next = e->next;
		free(e);
		e = next;
	}
}

void cs_blobcache_set_limit(size_t bytes)
{
	pthread_mutex_lock(&mu);
	atomic_store(&limit, bytes);
	entry *gone = evict(bytes);
	pthread_mutex_unlock(&mu);
	free_list(gone);
}

int cs_blobcache_get(const void *packed, size_t plen, uint32_t raw_len, void *dst,
		     cs_blobkey *key)
{
	key->lo = key->hi = 0;
	key->len = raw_len;
	if (!atomic_load(&limit))
		return 0;
	XXH128_hash_t h = XXH3_128bits_withSeed(packed, plen, raw_len);
	key->lo = h.low64;
	key->hi = h.high64;
	pthread_mutex_lock(&mu);
	entry *e = *slot(key);
	if (e) {
		list_unlink(e);
		list_push(e);
		memcpy(dst, e->data, raw_len);
	}
	pthread_mutex_unlock(&mu);
	atomic_fetch_add(e ? &hits : &misses, 1);
	return e != NULL;
}

void cs_blobcache_put(const cs_blobkey *key, const void *raw)
{
	size_t lim = atomic_load(&limit);
	/* none of a payload that would take more than an eighth of it */
	if (!lim || (key->lo == 0 && key->hi == 0) || sizeof(entry) + key->len > lim / 8)
		return;
	entry *e = malloc(sizeof *e + key->len);
	if (!e)
		return;
	e->key = *key;
	memcpy(e->data, raw, key->len);
	pthread_mutex_lock(&mu);
	entry **p = slot(key);
	entry *gone = NULL;
	if (*p) { /* another thread kept it first */
		e->next = NULL;
		gone = e;
	} else {
		e->chain = NULL;
		*p = e;
		list_push(e);
		used += cost(e);
		gone = evict(atomic_load(&limit));
	}
	pthread_mutex_unlock(&mu);
	free_list(gone);
}

void cs_blobcache_stats(uint64_t *h, uint64_t *m, size_t *bytes)
{
	*h = atomic_load(&hits);
	*m = atomic_load(&misses);
	pthread_mutex_lock(&mu);
	*bytes = used;
	pthread_mutex_unlock(&mu);
}
