/*
 * hooks.h - which runtime and driver callbacks to enable (cs_hooks_*):
 * user patterns resolved against every callback name CUPTI knows
 * (cuptiGetCallbackName over all ids; patterns.h's suffix rule), kept as
 * one flag byte per callback id so a callback looks itself up in O(1).
 */
#ifndef CS_HOOKS_H
#define CS_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "patterns.h"

enum { CS_HOOK_RUNTIME = 0, CS_HOOK_DRIVER = 1 };

/* Per callback id: its base name (owned) and whether a pattern took it. */
typedef struct cs_hook_table {
	size_t n[2];
	uint8_t *on[2];
	char **base[2];
	uint8_t *cls[2]; /* enum cs_api_class of each id */
} cs_hook_table;

/* Fills t for patterns p (borrowed for the call). 0, or a negative errno
 * with the reason in err. Free with cs_hooks_free(). */
int cs_hooks_build(const cs_pat *p, cs_hook_table *t, char *err, size_t errlen);
void cs_hooks_free(cs_hook_table *t);

/* The number of ids enabled. */
size_t cs_hooks_count(const cs_hook_table *t);

#endif
