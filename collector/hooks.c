/*
 * hooks.c - callback-name resolution (hooks.h, collector.h's
 * cs_hooks_list). cuptiGetCallbackName works without a driver, so the
 * same table serves `cyclescope run --list-apis` offline and the
 * injected collector.
 */
#include "hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "collector.h"

static const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
						CUPTI_CB_DOMAIN_DRIVER_API};
static const size_t domain_size[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE,
				      CUPTI_DRIVER_TRACE_CBID_SIZE};

void cs_hooks_free(cs_hook_table *t)
{
	if (!t)
		return;
	for (int d = 0; d < 2; d++) {
		for (size_t i = 0; t->base[d] && i < t->n[d]; i++)
			free(t->base[d][i]);
		free(t->base[d]);
		free(t->on[d]);
		free(t->cls[d]);
	}
	memset(t, 0, sizeof *t);
}

int cs_hooks_build(const cs_pat *p, cs_hook_table *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	for (int d = 0; d < 2; d++) {
		size_t n = domain_size[d];
		t->n[d] = n;
		t->on[d] = calloc(n, 1);
		t->cls[d] = calloc(n, 1);
		t->base[d] = calloc(n, sizeof *t->base[d]);
		if (!t->on[d] || !t->cls[d] || !t->base[d])
			goto nomem;
		for (size_t id = 1; id < n; id++) {
			const char *name = NULL;
			if (cuptiGetCallbackName(domains[d], (uint32_t)id, &name) != CUPTI_SUCCESS ||
			    !name)
				continue;
			char base[256];
			cs_pat_base_name(name, base, sizeof base);
			if (!(t->base[d][id] = strdup(base)))
				goto nomem;
			t->cls[d][id] = (uint8_t)cs_pat_api_class(base);
			t->on[d][id] = cs_pat_match_callback(p, name) >= 0;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	cs_hooks_free(t);
	return -ENOMEM;
}

size_t cs_hooks_count(const cs_hook_table *t)
{
	size_t c = 0;
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < t->n[d]; i++)
			c += t->on[d][i];
	return c;
}

int cs_hooks_list(const char *patterns, cs_hook_fn fn, void *ctx, char *err, size_t errlen)
{
	cs_pat *p = cs_pat_parse(patterns, err, errlen);
	if (!p)
		return -EINVAL;
	int count = 0, rc = 0;
	for (int d = 0; d < 2 && rc == 0; d++) {
		for (size_t id = 1; id < domain_size[d] && rc == 0; id++) {
			const char *name = NULL;
			if (cuptiGetCallbackName(domains[d], (uint32_t)id, &name) != CUPTI_SUCCESS ||
			    !name)
				continue;
			int k = cs_pat_match_callback(p, name);
			if (k < 0)
				continue;
			count++;
			rc = fn(ctx, d ? "driver" : "runtime", (unsigned)id, name, cs_pat_item(p, (size_t)k));
		}
	}
	cs_pat_free(p);
	return rc ? rc : count;
}
