/*
 * strmap.h - names to indexes (cs_strmap_*): an open-addressing hash over
 * strings the map copies, for the importers that meet the same names
 * over and over (kernels, report rows).
 */
#ifndef CS_STRMAP_H
#define CS_STRMAP_H

#include <stddef.h>

typedef struct cs_strmap {
	char **keys;   /* slot -> key (NULL: empty) */
	size_t *vals;  /* slot -> value */
	size_t cap, n;
} cs_strmap;

/* The value of key, or SIZE_MAX. */
size_t cs_strmap_get(const cs_strmap *m, const char *key);

/* Sets key's value (a copy of key is kept). 0 or -ENOMEM. */
int cs_strmap_put(cs_strmap *m, const char *key, size_t val);

void cs_strmap_free(cs_strmap *m);

#endif
