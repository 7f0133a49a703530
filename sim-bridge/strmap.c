/*
 * strmap.c - names to indexes (strmap.h).
 */
#include "strmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

size_t cs_strmap_get(const cs_strmap *m, const char *key)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t i = hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	return SIZE_MAX;
}

static void place(char **keys, size_t *vals, size_t cap, char *key, size_t val)
{
	size_t i = hash(key) & (cap - 1);
	while (keys[i])
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

int cs_strmap_put(cs_strmap *m, const char *key, size_t val)
{
	if (m->cap) /* a key already there: its value changes */
		for (size_t i = hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
			if (!strcmp(m->keys[i], key)) {
				m->vals[i] = val;
				return 0;
			}
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		char **k = calloc(cap, sizeof *k);
		size_t *v = calloc(cap, sizeof *v);
		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				place(k, v, cap, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = k;
		m->vals = v;
		m->cap = cap;
	}
	char *copy = strdup(key);
	if (!copy)
		return -ENOMEM;
	place(m->keys, m->vals, m->cap, copy, val);
	m->n++;
	return 0;
}

void cs_strmap_free(cs_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}
